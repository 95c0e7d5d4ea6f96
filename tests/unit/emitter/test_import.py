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


LAZY = ["Dimension", "Unit", "Metric", "IdempotencyStatus", "ErrorClass", "LogKey", "METRIC_UNITS", "METRIC_DESCRIPTIONS", "OUTCOME_METRIC",
        "METRIC_OUTCOME", "ERROR_CLASS_OUTCOME"]


def test_contract_enums_and_mappings_are_made_on_first_use_once():
    """``import emitter`` and an invocation writing records and EMF build none of the enums and mappings
    emitter.contract makes on first use; the first access (from 8 threads at once) builds each once, the same
    object for every thread, with the members and entries the plain classes define (the member-by-member comparison
    with ``class X(str, Enum)`` is test_contract_enums')."""
    code = (
        "import sys, json, threading; import emitter, emitter.contract as c; from emitter import Emitter, MemorySink\n"
        "em = Emitter(service='s', sink=MemorySink())\n"
        "with em.invocation(None, operation='Op'): em.received(em.adapt({'id': 'e'})[0]); em.succeeded(key='k')\n"
        f"lazy = {LAZY!r}\n"
        "before = [n for n in lazy if n in vars(c)]\n"
        "got = []; ts = [threading.Thread(target=lambda: got.append([getattr(c, n) for n in reversed(lazy)]))"
        " for _ in range(8)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "from emitter import LogKey, Metric\n"
        "print(json.dumps([before, [len({id(g[i]) for g in got}) for i in range(len(lazy))], LogKey is c.LogKey,"
        " Metric is c.Metric, [k.value for k in LogKey] == list(c.LOG_KEYS), c.Metric.RECORD_AGE.unit.value,"
        " c.OUTCOME_METRIC[emitter.Outcome.RECEIVED].value, c.METRIC_OUTCOME[c.Metric.COLD_START].value,"
        " len(c.METRIC_DESCRIPTIONS), [json.loads(x).get('outcome') for x in em.sink.lines]]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [
        [], [1] * len(LAZY), True, True, True, "Milliseconds", "EventsReceived", "cold_start", 17,
        ["cold_start", "received", "succeeded", None]]


def test_unknown_contract_attribute_is_an_attribute_error():
    import pytest

    from emitter import contract

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        contract.Nope  # noqa: B018
    assert not hasattr(contract, "Nope")


def test_dir_lists_the_names_made_on_first_use():
    from emitter import contract

    assert set(LAZY) <= set(dir(contract))
