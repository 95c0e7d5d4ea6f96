"""Conformance: every case in ../shared/conformance/logs-insights/ (read in place) and in this repository's
tests/conformance/logs-insights/ must pass.

Each case's events (filter-log-events format) are ingested with
``EventStore.ingest_events``; the query runs with the case's inclusive time range; columns
are matched by name, numbers compared numerically, ``ordered: false`` rows as a multiset.

Two optional keys of this repository's cases (the shared README's format otherwise): ``moreInputs``, a list of
``{"logGroup", "events"}`` ingested too (log groups a ``join`` or subquery reads), and ``queryLogGroups``, the log
groups the query runs on (StartQuery's ``logGroupNames``; default every ingested group).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from collector.ingest import EventStore
from collector.insights import run_query

ROOT = Path(__file__).resolve().parents[3]
CASES_DIR = ROOT.parent / "shared" / "conformance" / "logs-insights"
OWN_DIR = ROOT / "tests" / "conformance" / "logs-insights"
CASES = sorted(CASES_DIR.glob("*.json")) + sorted(OWN_DIR.glob("*.json"))


def _store(case):
    store = EventStore()
    store.ingest_events(case["input"]["events"], case["logGroup"])
    for more in case.get("moreInputs", ()):
        store.ingest_events(more["events"], more["logGroup"])
    return store


def _norm(v):
    if isinstance(v, bool):
        return ("s", str(v))
    if isinstance(v, (int, float)):
        return ("n", round(float(v), 9))
    if isinstance(v, str):
        try:
            f = float(v)
            if math.isfinite(f):
                return ("n", round(f, 9))
        except ValueError:
            pass
        return ("s", v)
    return ("x", v)


def test_cases_are_present():
    assert len(list(CASES_DIR.glob("*.json"))) >= 30, CASES_DIR
    assert len(list(OWN_DIR.glob("*.json"))) >= 20, OWN_DIR


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path):
    case = json.loads(path.read_text(encoding="utf-8"))
    result = run_query(_store(case), case["query"], start=case["start"], end=case["end"],
                       log_groups=case.get("queryLogGroups"))
    expected = case["expected"]
    assert sorted(result.columns) == sorted(expected["columns"]), case["doc"]
    got = [tuple(_norm(r.get(c)) for c in expected["columns"]) for r in result.to_records_json()]
    want = [tuple(_norm(v) for v in row) for row in expected["rows"]]
    if not expected["ordered"]:
        got, want = sorted(got, key=repr), sorted(want, key=repr)
    assert got == want, f"{case['id']}: {case['doc']}"
