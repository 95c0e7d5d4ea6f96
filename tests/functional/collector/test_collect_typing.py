"""Values outside the emitter's contract keep Logs Insights' dynamic typing through ingest and the standard tables.

AWS, "Boolean, comparison, numeric, datetime, and other functions" (CWL_QuerySyntax-operations-functions):
"Comparison operators accept all data types as arguments and return a Boolean result." So ``attempt > 1`` holds for
the JSON string ``"3"`` as for the number ``3``, and is false for ``"x"`` (not a number); the engine compares a value
that is not a number by its text only with a string.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from collector.collect import collect_local
from collector.ingest import EventStore
from collector.insights import run_query

T = "2026-01-05T10:00:0{}.000Z"
BASE = {"schema_version": "1", "service": "orders", "operation": "Pay", "event_source": "sqs", "outcome": "received"}


def _lines() -> list[str]:
    # attempt as the contract has it (int), as a JSON string of digits, and as a string that is not a number
    # ("x" under its own operation: what arithmetic on it gives in rates is not documented)
    return [json.dumps(dict(BASE, timestamp=T.format(i), attempt=a, idempotency_key=f"k{i}",
                            operation="Pay" if a != "x" else "Other"))
            for i, a in enumerate([1, 3, "3", "x"])]


def test_string_attempt_compares_as_a_number_in_queries():
    store = EventStore()
    store.ingest_events([{"timestamp": 1767607200000 + i, "message": m} for i, m in enumerate(_lines())],
                        "/aws/lambda/orders")
    res = run_query(store, "filter attempt > 1 | fields idempotency_key | sort idempotency_key asc")
    assert [r[0] for r in res.rows] == ["k1", "k2"]  # 3 and "3"; not 1, not "x"
    res = run_query(store, 'filter attempt = 3 | stats count(*) as n')
    assert res.rows == [(2,)]
    res = run_query(store, 'filter attempt = "x" | fields idempotency_key')
    assert [r[0] for r in res.rows] == ["k3"]
    res = run_query(store, "stats max(attempt) as m")
    assert res.rows == [(3,)]


def test_string_attempt_in_the_standard_tables(tmp_path):
    log = tmp_path / "orders.log"
    log.write_text("\n".join(_lines()) + "\n")
    manifest = collect_local([log], tmp_path / "out")
    attempts: dict[int | None, int] = {}
    for r in pq.read_table(tmp_path / "out" / "tables" / "attempts.parquet").to_pylist():
        attempts[r["attempt"]] = attempts.get(r["attempt"], 0) + r["events"]
    # 3 and "3" both become attempt 3 (whether they are one group is not documented: summed here);
    # "x" does not convert to BIGINT: null, and counted
    assert attempts == {1: 1, 3: 2, None: 1}
    assert manifest["tables"]["attempts"]["bad_values"] == {"attempt": 1}
    rates = {r["operation"]: r for r in pq.read_table(tmp_path / "out" / "tables" / "rates.parquet").to_pylist()}
    assert (rates["Pay"]["received"], rates["Pay"]["redeliveries"]) == (3, 2)  # attempt 3 and "3" are redeliveries
    trail = pq.read_table(tmp_path / "out" / "tables" / "trail.parquet").to_pylist()
    assert [r["attempt"] for r in trail] == [1, 3, 3, None]
    assert manifest["tables"]["trail"]["bad_values"] == {"attempt": 1}
