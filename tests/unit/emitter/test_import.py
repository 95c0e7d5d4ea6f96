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


def test_log_key_enum_is_made_on_first_use_once():
    """``import emitter`` (and an Emitter writing a record) does not build the LogKey enum; the first access builds
    it once, the same class for every thread, equal to what ``class LogKey(str, Enum)`` over the same members gives
    (the member-by-member comparison is test_contract_enums')."""
    code = (
        "import sys, json, threading; import emitter, emitter.contract as c; from emitter import Emitter, MemorySink\n"
        "em = Emitter(service='s', sink=MemorySink()); em.succeeded(key='k'); em.flush()\n"
        "before = 'LogKey' in vars(c)\n"
        "got = []; ts = [threading.Thread(target=lambda: got.append(c.LogKey)) for _ in range(8)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "from emitter import LogKey\n"
        "print(json.dumps([before, len({id(x) for x in got}), LogKey is got[0], [k.value for k in LogKey] == "
        "list(c.LOG_KEYS), LogKey.OUTCOME.value, json.loads(em.sink.lines[0])['outcome']]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, 1, True, True, "outcome", "succeeded"]
