"""collect_local on the demo fleet's logs against the demo's ground truth (an independent
oracle: what the simulator injected and logged, counted by the simulator itself)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from dashboard import demo


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    import pyarrow.parquet as pq

    from collector.collect import collect_local

    out = tmp_path_factory.mktemp("demo")
    demo.run_demo(out, seed=11, events=1500)
    manifest = collect_local([out / "logs"], out)
    truth = json.loads((out / "demo-truth.json").read_text())
    tables = {n: pq.read_table(out / "tables" / f"{n}.parquet").to_pylist() for n in manifest["tables"]}
    return manifest, truth, tables


def test_outcome_counts_per_function_equal_the_truth(collected):
    _, truth, tables = collected
    got: dict[str, Counter] = defaultdict(Counter)
    for r in tables["trail"]:
        got[r["log_group"].rsplit("/", 1)[-1]][r["outcome"]] += 1
    for fn, t in truth["functions"].items():
        assert dict(got[fn]) == t["outcomes"], fn
    assert sum(r["events"] for r in tables["outcomes"]) == len(tables["trail"])


def test_invocations_cold_starts_timeouts_equal_the_truth(collected):
    _, truth, tables = collected
    for fn, t in truth["functions"].items():
        rows = [r for r in tables["invocations"] if r["log_group"].endswith("/" + fn)]
        assert sum(r["invocations"] for r in rows) == t["invocations"], fn
        assert sum(r["cold_starts"] for r in rows) == t["cold_starts"], fn
        assert sum(r["timeouts"] for r in rows) == t["timeouts"], fn


def test_stuck_keys_equal_the_truth(collected):
    _, truth, tables = collected
    expected = sorted(k for t in truth["functions"].values() for k in t.get("stuck_keys", []))
    assert sorted(r["idempotency_key"] for r in tables["stuck_keys"]) == expected
    assert all(r["age_s"] is not None and r["age_s"] >= 0 for r in tables["stuck_keys"])


def test_nothing_skipped_and_counts_in_manifest(collected):
    manifest, _, tables = collected
    assert manifest["ingest"]["skipped"] == 0
    assert {n: len(rows) for n, rows in tables.items()} == {n: i["rows"] for n, i in manifest["tables"].items()}
