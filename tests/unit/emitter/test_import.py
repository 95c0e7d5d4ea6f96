"""Importing emitter loads no heavy module (checked in a fresh interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("boto3", "botocore", "aiohttp", "pandas", "asyncio", "aws_embedded_metrics", "aws_lambda_powertools",
         "duckdb", "pyarrow", "numpy", "click", "dataclasses", "inspect", "typing", "hashlib", "datetime",
         "logging", "urllib.request", "http.client", "ssl", "socket", "uuid", "decimal")


def test_import_emitter_is_light():
    code = (
        "import sys, json; before = set(sys.modules); import emitter; "
        "from emitter import Emitter, AgentSink, FileSink; Emitter(service='s'); "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    heavy = [m for m in loaded if m in HEAVY or m.split(".")[0] in ("boto3", "botocore", "aiohttp", "pandas",
                                                                     "asyncio", "aws_embedded_metrics")]
    assert heavy == []
    assert "emitter.core" in loaded  # the check really imported the package


def test_import_emitter_powertools_defers_powertools():
    """The integration module itself is light too: Powertools loads when an integration function is first called."""
    code = ("import sys, json; import emitter.powertools; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('aws_lambda_powertools', 'boto')))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
