"""Standard queries: columns match collector/tables.py, literals come from emitter.contract,
and each query's table on a small fixed log set equals the table computed by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from collector.insights import query_references, run_query
from collector.parquet import arrow_schema
from collector.postprocess import expand_library_signal_rows, filled_columns, stuck_key_ages
from collector.standard_queries import load_standard_queries, query_added_columns
from collector.tables import TABLES
from emitter.contract import IdempotencyStatus, LogKey, Outcome
from tests.support.insights_events import events_connection

QUERIES = load_standard_queries()
T0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
T0_MS = 1767607200000
LOG_GROUP = "/aws/lambda/orders-pay"


def at(ms: int) -> datetime:
    return T0 + timedelta(milliseconds=ms)


# ----------------------------------------------------------------------------- contract checks
def _references(text: str) -> tuple[tuple[str, ...], tuple, tuple[str, ...]]:
    """(fields read from events, literals, result columns) of a query."""
    refs = query_references(text)
    return refs.fields_read, refs.literals, refs.columns


EXTRA_LITERALS = {"invocations": {"REPORT", "Status: timeout", "timeout"}, "library_signals": {"[ERROR]"}}
EXTRA_FIELDS = {"library_signals": {"_aws.Timestamp"}, "invocations": {"record.status"}}
CONTRACT_VALUES = {o.value for o in Outcome} | {s.value for s in IdempotencyStatus}
LOG_KEYS = {k.value for k in LogKey}


def test_one_query_per_table():
    assert set(QUERIES) == set(TABLES)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_query_columns_are_the_table_columns(name):
    _, _, columns = _references(QUERIES[name])
    added = query_added_columns(QUERIES[name])
    if name == "library_signals":  # selects raw rows; collect_local produces every column
        assert added == TABLES[name].column_names
        return
    # the query's columns in table order; the added ones (filled after the query) anywhere in the table
    table_cols = TABLES[name].column_names
    assert set(added) <= set(table_cols) and tuple(c for c in table_cols if c not in added) == tuple(columns)
    assert added == tuple(c for c in table_cols if c in added)
    assert added == filled_columns(TABLES[name])  # the header and collector.postprocess agree


@pytest.mark.parametrize("name", sorted(TABLES))
def test_query_literals_and_fields_come_from_the_contract(name):
    read, literals, _ = _references(QUERIES[name])
    for lit in literals:
        if isinstance(lit, str):
            assert lit in CONTRACT_VALUES | EXTRA_LITERALS.get(name, set()), f"{name}: literal {lit!r}"
    for f in read:
        assert f.startswith("@") or f in LOG_KEYS | EXTRA_FIELDS.get(name, set()), f"{name}: field {f!r}"


@pytest.mark.parametrize("name", sorted(TABLES))
def test_query_header_documents_its_table(name):
    header = [line for line in QUERIES[name].splitlines() if line.startswith("#")]
    assert header and header[0] == f"# Table: {name} (collector/tables.py)"
    assert any("Columns" in h or "columns" in h for h in header)


# ----------------------------------------------------------------------------- fixed log set
def rec(ms: int, outcome: str, operation: str = "Pay", request: str = "r1", **props) -> dict:
    doc = {"level": "INFO", "message": outcome, "timestamp": at(ms).isoformat().replace("+00:00", "Z"),
           "service": "orders", "cold_start": False, "function_name": "orders-pay",
           "function_request_id": request, "operation": operation, "schema_version": "1",
           "outcome": outcome, "event_source": "sqs"}
    doc.update(props)
    return {"timestamp": T0_MS + ms, "message": json.dumps(doc)}


def platform(ms: int, message: str, **system) -> dict:
    return {"timestamp": T0_MS + ms, "message": message, **system}


FIXED = [
    platform(0, "START RequestId: r1 Version: $LATEST", **{"@type": "START", "@requestId": "r1"}),
    rec(0, "cold_start", remaining_time_ms=5000),
    rec(10, "received", event_id="m1", attempt=1, record_age_ms=100),
    rec(20, "claimed", idempotency_key="k1", idempotency_status="IN_PROGRESS",
        in_progress_expires_at_ms=T0_MS + 60_000, attempt=1),
    rec(30, "succeeded", idempotency_key="k1", idempotency_status="COMPLETED", attempt=1),
    rec(40, "received", event_id="m2", attempt=2, record_age_ms=300),
    rec(50, "claimed", idempotency_key="k2", idempotency_status="IN_PROGRESS",
        in_progress_expires_at_ms=T0_MS + 30_000, attempt=2),
    rec(60, "retryable_failure", idempotency_key="k3", error_code="Throttled", error_class="retryable"),
    rec(70, "payload_conflict", idempotency_key="k4", idempotency_status="COMPLETED"),
    {"timestamp": T0_MS + 80, "message": json.dumps({"level": "INFO", "outcome": "received", "service": "x"})},
    platform(900, "REPORT RequestId: r1\tDuration: 100.00 ms\tBilled Duration: 100 ms\tMemory Size: 128 MB\t"
                  "Max Memory Used: 70 MB\tInit Duration: 200.00 ms\t",
             **{"@type": "REPORT", "@requestId": "r1", "@duration": 100.0, "@initDuration": 200.0,
                "@memorySize": 128e6, "@maxMemoryUsed": 70e6}),
    platform(60_000, "START RequestId: r2 Version: $LATEST", **{"@type": "START", "@requestId": "r2"}),
    rec(60_000, "received", request="r2", event_id="m3", attempt=3, record_age_ms=500),
    rec(60_100, "poison_message", request="r2", idempotency_key="k5", error_code="ValidationError",
        error_class="poison"),
    rec(60_200, "payload_conflict", request="r2", idempotency_key="k4", idempotency_status="COMPLETED"),
    rec(60_300, "claimed", request="r2", idempotency_key="k6", idempotency_status="IN_PROGRESS",
        in_progress_expires_at_ms=T0_MS + 600_000, attempt=1),
    rec(90_000, "received", operation="Ship", request="r2", event_id="m4", attempt=1, record_age_ms=50),
    {"timestamp": T0_MS + 100_000, "@type": "REPORT", "@duration": 20.0, "@maxMemoryUsed": 60e6,
     "message": json.dumps({"time": "2026-01-05T10:01:40.000Z", "type": "platform.report",
                            "record": {"requestId": "r4", "status": "timeout", "metrics": {"durationMs": 20.0}}})},
    platform(63_000, "REPORT RequestId: r2\tDuration: 3000.00 ms\tBilled Duration: 3000 ms\tMemory Size: 128 MB\t"
                     "Max Memory Used: 90 MB\tStatus: timeout",
             **{"@type": "REPORT", "@requestId": "r2", "@duration": 3000.0, "@memorySize": 128e6,
                "@maxMemoryUsed": 90e6}),
    rec(120_000, "retryable_failure", request="r3", idempotency_key="k7", error_code="Throttled",
        error_class="retryable"),
]


@pytest.fixture(scope="module")
def con():
    return events_connection(FIXED, log_group=LOG_GROUP)


def table(con, name):
    res = run_query(con, QUERIES[name], limit_cap=None)
    return [tuple(r) for r in res.rows]


M0, M1, M2 = T0, T0 + timedelta(minutes=1), T0 + timedelta(minutes=2)


def test_outcomes(con):
    assert table(con, "outcomes") == [
        (M0, "orders", "Pay", "sqs", "claimed", 2), (M0, "orders", "Pay", "sqs", "cold_start", 1),
        (M0, "orders", "Pay", "sqs", "payload_conflict", 1), (M0, "orders", "Pay", "sqs", "received", 2),
        (M0, "orders", "Pay", "sqs", "retryable_failure", 1), (M0, "orders", "Pay", "sqs", "succeeded", 1),
        (M1, "orders", "Pay", "sqs", "claimed", 1), (M1, "orders", "Pay", "sqs", "payload_conflict", 1),
        (M1, "orders", "Pay", "sqs", "poison_message", 1), (M1, "orders", "Pay", "sqs", "received", 1),
        (M1, "orders", "Ship", "sqs", "received", 1),
        (M2, "orders", "Pay", "sqs", "retryable_failure", 1),
    ]


def test_record_age(con):
    # nearest-rank percentiles: of [100, 300] p50 = 100 (rank ceil(1) = 1), p95 = 300 (rank ceil(1.9) = 2)
    assert table(con, "record_age") == [
        (M0, "orders", "Pay", "sqs", 2, 100, 300, 300),
        (M1, "orders", "Pay", "sqs", 1, 500, 500, 500),
        (M1, "orders", "Ship", "sqs", 1, 50, 50, 50),
    ]


def test_attempts(con):
    assert table(con, "attempts") == [
        ("orders", "Pay", "sqs", 1, 1), ("orders", "Pay", "sqs", 2, 1), ("orders", "Pay", "sqs", 3, 1),
        ("orders", "Ship", "sqs", 1, 1),
    ]


def test_rates(con):
    assert table(con, "rates") == [
        (M0, "orders", "Pay", 2, 1, 1, 0, 0.5, 0.0),
        (M1, "orders", "Pay", 1, 1, 0, 1, 0.0, 1.0),
        (M1, "orders", "Ship", 1, 0, 0, 0, 0.0, 0.0),
        (M2, "orders", "Pay", 0, 0, 1, 0, None, None),  # no received records: rates are null
    ]


def test_stuck_keys_with_window_end_ages(con):
    res = run_query(con, QUERIES["stuck_keys"], limit_cap=None)
    import pyarrow as pa

    schema = arrow_schema(TABLES["stuck_keys"])
    records = res.to_records()
    data = pa.Table.from_pylist([{c: r.get(c) for c in schema.names} for r in records], schema=schema)
    rows = stuck_key_ages(data, window_end_ms=round(M2.timestamp() * 1000)).to_pylist()
    assert [tuple(r[c] for c in TABLES["stuck_keys"].column_names) for r in rows] == [
        ("k2", "orders", "Pay", "IN_PROGRESS", "claimed", at(50), at(50), at(30_000), 2, "r1", 119.95, True),
        ("k6", "orders", "Pay", "IN_PROGRESS", "claimed", at(60_300), at(60_300), at(600_000), 1, "r2", 59.7, False),
    ]


def test_conflicting_keys(con):
    assert table(con, "conflicting_keys") == [("k4", "orders", "Pay", 2, at(70), at(60_200))]


def test_error_codes(con):
    assert table(con, "error_codes") == [
        (M0, "orders", "Pay", "retryable_failure", "Throttled", "retryable", 1),
        (M1, "orders", "Pay", "poison_message", "ValidationError", "poison", 1),
        (M2, "orders", "Pay", "retryable_failure", "Throttled", "retryable", 1),
    ]


def test_invocations(con):
    assert table(con, "invocations") == [
        (M0, LOG_GROUP, 1, 1, 0, 100.0, 100.0, 100.0, 70.0, 200.0, 200.0, 128.0),
        # a text and a JSON-format timeout; no cold start in the bin (init NULL); the JSON record has no memorySizeMB
        (M1, LOG_GROUP, 2, 0, 2, 1510.0, 3000.0, 3000.0, 90.0, None, None, 128.0),
    ]


def test_trail(con):
    rows = run_query(con, QUERIES["trail"], limit_cap=None).to_records()
    assert len(rows) == 14  # every emitter record; the record without schema_version is not one
    assert [r["outcome"] for r in rows[:3]] == ["cold_start", "received", "claimed"]
    assert rows[1] == {"timestamp": at(10), "log_group": LOG_GROUP, "service": "orders", "operation": "Pay",
                       "event_source": "sqs", "outcome": "received", "idempotency_key": None,
                       "idempotency_status": None, "event_id": "m1", "correlation_id": None,
                       "function_request_id": "r1", "attempt": 1, "error_code": None, "record_age_ms": 100,
                       "remaining_time_ms": None, "message": "received"}


# ----------------------------------------------------------------------------- library signals
def _sample_events(path, base_ms):
    # one CloudWatch event per LF-terminated line; runtime error lines contain bare CRs
    lines = [line for line in path.read_text(encoding="utf-8").split("\n") if line]
    return [{"timestamp": base_ms + i, "message": line} for i, line in enumerate(lines)]


def _signal_totals(shared_dir, name):
    events = _sample_events(shared_dir / "samples" / f"{name}.jsonl", T0_MS)
    con = events_connection(events, log_group="/aws/lambda/x")
    res = run_query(con, QUERIES["library_signals"], limit_cap=None)
    table, dropped = expand_library_signal_rows(((r["@timestamp"] - T0) // timedelta(milliseconds=1) + T0_MS, r["@log"],
                                                 r["@message"]) for r in res.to_records())
    totals: dict[tuple[str, str], float] = {}
    for library, signal, events in zip(*(table.column(c).to_pylist() for c in ("library", "signal", "events"))):
        totals[(library, signal)] = round(totals.get((library, signal), 0) + events, 6)
    return totals, dropped


def test_library_signals_powertools(shared_dir):
    expected = json.loads((shared_dir / "samples" / "powertools-real.expected.json").read_text())
    totals, dropped = _signal_totals(shared_dir, "powertools-real")
    assert dropped == 0
    points = expected["emf_metric_datapoints"]
    sums = expected["emf_metric_totals"]
    assert totals == {
        ("powertools", "cold_start"): sums["ColdStart"],  # contract metric -> Outcome value
        ("powertools", "duplicate_completed"): sums["DuplicateCompleted"],
        ("powertools", "IdempotencyConflict"): sums["IdempotencyConflict"],
        ("powertools", "IdempotencyInProgress"): sums["IdempotencyInProgress"],
        ("powertools", "LineItemProcessed"): sums["LineItemProcessed"],
        ("powertools", "OrderProcessed"): sums["OrderProcessed"],
        ("powertools", "OrderAmount"): points["OrderAmount"],  # Unit None: datapoints, not a sum of amounts
        ("powertools", "duplicate_in_progress"): len(expected["runtime_error_lines"]),
    }


def test_library_signals_aws_embedded_metrics(shared_dir):
    expected = json.loads((shared_dir / "samples" / "emf-library-real.expected.json").read_text())
    totals, dropped = _signal_totals(shared_dir, "emf-library-real")
    assert dropped == 0
    sums, points = expected["emf_metric_totals"], expected["emf_metric_datapoints"]
    lib = "aws-embedded-metrics"
    assert totals == {
        (lib, "RecordsProcessed"): sums["RecordsProcessed"], (lib, "DuplicateRecords"): sums["DuplicateRecords"],
        (lib, "FailedRecords"): sums["FailedRecords"],
        (lib, "RecordLatency"): points["RecordLatency"], (lib, "IteratorAge"): points["IteratorAge"],
    }


def test_library_signals_skip_the_emitters_own_emf():
    doc = {"_aws": {"Timestamp": T0_MS, "CloudWatchMetrics": [{"Namespace": "Idempotency",
           "Dimensions": [["Service"]], "Metrics": [{"Name": "EventsReceived", "Unit": "Count"}]}]},
           "Service": "orders", "schema_version": "1", "EventsReceived": 4}
    con = events_connection([{"timestamp": T0_MS, "message": json.dumps(doc)}])
    assert run_query(con, QUERIES["library_signals"], limit_cap=None).rows == []
