"""benchmarks/collector_bench.py's floors: ``floor_all`` materialises every field the standard queries read, with the
values a hand-written log gives (the issue's fair floor); the 14-column ``floor`` is the stricter proxy beside it."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from collector.insights import query_references
from collector.standard_queries import load_standard_queries

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "collector_bench.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("collector_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(statements, path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for sql, extra in json.loads(json.dumps(statements)):  # as the child process gets them
        con.execute(sql, [str(path), *extra] if "$1" in sql else None)
    return con


def _columns(con, table: str) -> set[str]:
    return {r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()}


def test_floor_all_materialises_every_field_the_standard_queries_read(bench, tmp_path):
    record = {"level": "INFO", "timestamp": "2026-01-05T10:00:00.001Z", "schema_version": "1", "service": "orders",
              "operation": "Pay", "event_source": "sqs", "outcome": "claimed", "idempotency_key": "k1",
              "idempotency_status": "IN_PROGRESS", "attempt": 2, "record_age_ms": 150.5,
              "in_progress_expires_at_ms": 1767607260001, "function_request_id": "r1", "event_id": "m1",
              "error_code": "E", "error_class": "retryable", "correlation_id": "c1", "remaining_time_ms": 900,
              "message": "claimed"}
    emf = {"_aws": {"Timestamp": 1767607200002, "CloudWatchMetrics": []}, "service": "orders"}
    path = tmp_path / "f.jsonl"
    path.write_text("START RequestId: r1 Version: $LATEST\n" + json.dumps(record) + "\n" + json.dumps(emf) + "\n"
                    + "END RequestId: r1\n"
                    + "REPORT RequestId: r1\tDuration: 100.50 ms\tBilled Duration: 101 ms\tMemory Size: 128 MB\t"
                      "Max Memory Used: 70 MB\tInit Duration: 200.25 ms\t\n")
    con = _run(bench.floor_statements("/aws/lambda/f")["floor_all"], path)
    read = {f for q in load_standard_queries().values() for f in query_references(q).fields_read}
    json_fields = {f.split(".")[0] for f in read if not f.startswith("@")}
    assert json_fields <= _columns(con, "j")
    assert {f for f in read if f.startswith("@")} - {"@timestamp"} <= _columns(con, "t")  # @timestamp: j.timestamp
    got = con.execute("SELECT schema_version, attempt, record_age_ms, in_progress_expires_at_ms, remaining_time_ms, "
                      "correlation_id, message, _aws.Timestamp FROM j WHERE schema_version IS NOT NULL OR "
                      "_aws IS NOT NULL ORDER BY schema_version NULLS LAST").fetchall()
    assert got == [("1", 2, 150.5, 1767607260001, 900.0, "c1", "claimed", None),
                   (None, None, None, None, None, None, None, 1767607200002.0)]
    rows = con.execute('SELECT "@message", "@type", "@log", "@duration", "@initDuration", "@memorySize", '
                       '"@maxMemoryUsed" FROM t').fetchall()
    assert [r[1] for r in rows] == ["START", None, None, "END", "REPORT"]
    assert rows[1][0] == json.dumps(record) and {r[2] for r in rows} == {"/aws/lambda/f"}
    assert rows[4][3:] == (100.5, 200.25, 128.0, 70.0)  # the REPORT numbers (MB as written: a floor does not scale)


def test_a_field_without_a_floor_rule_is_named(bench):
    with pytest.raises(ValueError, match="@ingestionTime"):
        bench.floor_statements(queries=["fields @ingestionTime, service"])
    with pytest.raises(ValueError, match="both whole and as"):
        bench.floor_statements(queries=["fields record, record.status"])


def test_floor_is_the_issue_yardstick_of_14_contract_columns(bench, tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps({"service": "orders", "attempt": 3, "outcome": "received"}) + "\nSTART RequestId: x\n")
    con = _run(bench.floor_statements()["floor"], path)
    assert len(_columns(con, "t")) == 14
    assert con.execute("SELECT service, attempt, outcome FROM t WHERE service IS NOT NULL").fetchall() == [
        ("orders", 3, "received")]


def _slots_and_successions(bench, labels, rounds):
    orders = [bench.round_order(labels, r) for r in range(rounds)]
    slots = [sorted(o[i] for o in orders[:len(labels)]) for i in range(len(labels))]
    pairs = Counter((o[i], o[i + 1]) for o in orders for i in range(len(o) - 1))
    return orders, slots, pairs


@pytest.mark.parametrize("labels, rounds", [(["count", "floor", "floor_all", "after"], 4),
                                            (["count", "floor", "floor_all", "after", "before"], 10)])
def test_rounds_balance_slots_and_predecessors(bench, labels, rounds):
    orders, slots, pairs = _slots_and_successions(bench, labels, rounds)
    assert all(sorted(o) == sorted(labels) for o in orders)  # each round runs every variant once
    assert all(s == sorted(labels) for s in slots)  # over n rounds, every variant once in every slot
    every_pair = {(a, b) for a in labels for b in labels if a != b}
    assert set(pairs) == every_pair  # every variant right after every other one...
    assert set(pairs.values()) == {rounds * (len(labels) - 1) // len(every_pair)}  # ...equally often


def test_the_first_round_of_four_is_the_williams_row(bench):
    assert bench.round_order(["a", "b", "c", "d"], 0) == ["a", "b", "d", "c"]
    assert bench.round_order(["a", "b", "c", "d"], 1) == ["b", "c", "a", "d"]


def test_paired_ratios_pair_each_round_and_skip_failed_rounds(bench):
    runs = {"after": [{"seconds": 4.0}, {"seconds": 3.0}, {"error": "x"}, {"seconds": 9.0}],
            "floor": [{"seconds": 1.0}, {"seconds": 1.5}, {"seconds": 1.0}, {"seconds": 3.0}]}
    assert bench.paired_ratios(runs, "after", "floor") == [4.0, 2.0, 3.0]  # round 3 failed: left out
