"""collect_local on the real-format samples of ../shared/samples (real libraries, real Lambda
runtime output) against the counts in their ``*.expected.json``."""

from __future__ import annotations

import json
from collections import Counter

import pyarrow.parquet as pq
import pytest

from collector.collect import collect_local

SAMPLES = ["powertools-real.jsonl", "emf-library-real.jsonl", "lambda-text-format.log", "filter-log-events.json",
           "console-export.csv"]


def _collect(shared_dir, tmp_path, name):
    out = tmp_path / "out"
    manifest = collect_local([shared_dir / "samples" / name], out)
    expected = json.loads((shared_dir / "samples" / (name.rsplit(".", 1)[0] + ".expected.json")).read_text())
    tables = {t: pq.read_table(out / "tables" / f"{t}.parquet").to_pylist() for t in manifest["tables"]}
    return manifest, expected, tables


def _cold_starts(expected):
    for key in ("cold_starts", "cold_starts_with_init_duration"):
        if key in expected:
            return expected[key]
    per = expected.get("per_invocation", [])
    per = per.values() if isinstance(per, dict) else per
    return sum(1 for p in per if "init_duration_ms" in p)


@pytest.mark.parametrize("name", SAMPLES)
def test_invocations_table(shared_dir, tmp_path, name):
    manifest, expected, tables = _collect(shared_dir, tmp_path, name)
    assert manifest["ingest"]["skipped"] == 0
    rows = tables["invocations"]
    assert sum(r["invocations"] for r in rows) == expected["invocations"]
    if name != "filter-log-events.json":  # its expected file does not state cold starts
        assert sum(r["cold_starts"] for r in rows) == _cold_starts(expected)
    assert sum(r["timeouts"] for r in rows) == len(expected.get("timeouts", []))


def test_invocations_durations_and_memory_powertools(shared_dir, tmp_path):
    _, expected, tables = _collect(shared_dir, tmp_path, "powertools-real.jsonl")
    per = expected["per_invocation"]
    (row,) = tables["invocations"]  # all seven invocations fall in one minute
    assert row["max_duration_ms"] == max(p["duration_ms"] for p in per)
    assert row["avg_duration_ms"] == pytest.approx(sum(p["duration_ms"] for p in per) / len(per))
    assert row["max_memory_used_mb"] == max(p["max_memory_used_mb"] for p in per)


def _signals(tables):
    c: Counter = Counter()
    for r in tables["library_signals"]:
        c[(r["library"], r["signal"])] += r["events"]
    return {k: round(v, 6) for k, v in c.items()}


def test_library_signals_through_the_ingest(shared_dir, tmp_path):
    _, expected, tables = _collect(shared_dir, tmp_path, "filter-log-events.json")
    sums = expected["emf_metric_totals"]
    assert _signals(tables) == {
        ("powertools", "batch_item_failure"): sums["BatchItemFailures"],  # contract metric -> Outcome value
        ("powertools", "cold_start"): sums["ColdStart"],
        ("powertools", "duplicate_completed"): sums["DuplicateCompleted"],
        ("powertools", "BatchRecords"): sums["BatchRecords"],
        ("powertools", "PaymentsSettled"): sums["PaymentsSettled"],
        ("powertools", "PoisonMessages"): sums["PoisonMessages"],
    }


def test_library_signals_powertools_runtime_error_through_the_ingest(shared_dir, tmp_path):
    _, expected, tables = _collect(shared_dir, tmp_path, "powertools-real.jsonl")
    signals = _signals(tables)
    assert signals[("powertools", "duplicate_in_progress")] == len(expected["runtime_error_lines"])
    assert signals[("powertools", "duplicate_completed")] == expected["emf_metric_totals"]["DuplicateCompleted"]
    assert sum(v for (lib, _), v in signals.items() if lib != "powertools") == 0
