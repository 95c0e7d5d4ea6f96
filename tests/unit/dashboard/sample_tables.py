"""A small hand-made data directory (tables per collector/tables.py schemas) for dashboard tests.

Every expected number the tests assert is derived by hand from the rows below and written
out in EXPECTED. Untrusted-looking strings (script tags, javascript: links, img onerror)
are planted in keys, event ids, an operation name and an error code.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import duckdb

from dashboard.data import SCHEMAS
from emitter.contract import ErrorClass, EventSource, IdempotencyStatus, Outcome

XSS_KEY = "<script>alert(1)</script>"
XSS_LINK = "[x](javascript:alert(1))"
XSS_IMG = "<img src=x onerror=alert(1)>"
XSS_OP = "<script>alert('op')</script>"

O = Outcome
SQS, API, GEN = EventSource.SQS.value, EventSource.API_GATEWAY_REST.value, EventSource.GENERIC.value


def t(minute: int, second: int = 0, ms: int = 0) -> datetime:
    return datetime(2026, 1, 5, 10, minute, second, ms * 1000)


def _outcomes() -> list[tuple]:
    rows = []
    spec = {
        ("orders", "ProcessOrders", SQS): {
            5: {O.RECEIVED: 10, O.SUCCEEDED: 8, O.DUPLICATE_COMPLETED: 1, O.RETRYABLE_FAILURE: 1},
            15: {O.RECEIVED: 20, O.SUCCEEDED: 15, O.DUPLICATE_COMPLETED: 2, O.DUPLICATE_IN_PROGRESS: 1,
                 O.RETRYABLE_FAILURE: 2, O.POISON_MESSAGE: 1},
            30: {O.RECEIVED: 30, O.SUCCEEDED: 20, O.DUPLICATE_COMPLETED: 5, O.DUPLICATE_IN_PROGRESS: 2,
                 O.RETRYABLE_FAILURE: 3, O.POISON_MESSAGE: 2},
            39: {O.RECEIVED: 10, O.SUCCEEDED: 10},
        },
        ("payments", "CapturePayment", API): {
            20: {O.RECEIVED: 5, O.SUCCEEDED: 4, O.PAYLOAD_CONFLICT: 1},
            26: {O.RECEIVED: 8, O.SUCCEEDED: 5, O.PAYLOAD_CONFLICT: 2, O.TIMEOUT_BUDGET_ABORT: 1},
        },
        ("evil", XSS_OP, GEN): {
            35: {O.RECEIVED: 4, O.SUCCEEDED: 3, O.POISON_MESSAGE: 1},
        },
    }
    for (svc, op, src), bins in spec.items():
        for minute, counts in bins.items():
            for oc, n in counts.items():
                rows.append((t(minute), svc, op, src, oc.value, n))
    return rows


ACCOUNT = "000000000000"
"""account_id of the rows (the offline default)."""


def _trail() -> list[tuple]:
    r = []

    def add(ts, svc, op, src, oc, key, status, eid, corr, req, attempt, code=None, age=None, msg=""):
        r.append((ts, f"/aws/lambda/{svc}", ACCOUNT, svc, op, src, oc.value, key, status, eid, corr, req, attempt, code, age,
                  None, msg))

    C, P = IdempotencyStatus.COMPLETED.value, IdempotencyStatus.IN_PROGRESS.value
    # order-1: processed at 10:05, then delivered again three times at 10:30 (duplicates)
    add(t(5, 1), "orders", "ProcessOrders", SQS, O.RECEIVED, "order-1", None, "m-1", "corr-9", "r-1", 1, age=120.0)
    add(t(5, 1, 5), "orders", "ProcessOrders", SQS, O.CLAIMED, "order-1", P, "m-1", "corr-9", "r-1", 1)
    add(t(5, 1, 9), "orders", "ProcessOrders", SQS, O.SUCCEEDED, "order-1", C, "m-1", "corr-9", "r-1", 1)
    for i, req in enumerate(("r-2", "r-3", "r-4")):
        add(t(30, i), "orders", "ProcessOrders", SQS, O.RECEIVED, "order-1", None, "m-1", "corr-9", req, i + 2,
            age=65000.0 if i == 0 else 900.0)
        add(t(30, i, 2), "orders", "ProcessOrders", SQS, O.DUPLICATE_COMPLETED, "order-1", C, "m-1", "corr-9", req,
            i + 2)
    # the script-tag key: duplicate twice at 10:31, then stuck (claimed 10:27)
    add(t(27), "orders", "ProcessOrders", SQS, O.CLAIMED, XSS_KEY, P, XSS_LINK, None, "r-5", 1)
    for i in range(2):
        add(t(31, i), "orders", "ProcessOrders", SQS, O.DUPLICATE_COMPLETED, XSS_KEY, C, XSS_LINK, None,
            f"r-6{i}", 2)
    # payments conflict: same key, different body
    add(t(26, 5), "payments", "CapturePayment", API, O.PAYLOAD_CONFLICT, "pay-7", C, "api-1", "corr-p", "r-7", 1)
    add(t(26, 9), "payments", "CapturePayment", API, O.PAYLOAD_CONFLICT, "pay-7", C, "api-2", "corr-p", "r-8", 1)
    add(t(26, 20), "payments", "CapturePayment", API, O.TIMEOUT_BUDGET_ABORT, "pay-8", None, "api-3", None, "r-9", 1,
        code="TimeoutBudget")
    # poison with an untrusted error code
    add(t(35, 1), "evil", XSS_OP, GEN, O.POISON_MESSAGE, XSS_LINK, None, XSS_IMG, None, "r-10", 1, code=XSS_IMG)
    return r


TABLE_ROWS: dict[str, list[tuple]] = {
    "outcomes": _outcomes(),
    "record_age": [
        (t(15), "orders", "ProcessOrders", SQS, 20, 100.0, 900.0, 1500.0),
        (t(30), "orders", "ProcessOrders", SQS, 30, 200.0, 4000.0, 65000.0),
        (t(39), "orders", "ProcessOrders", SQS, 10, 50.0, 60.0, 70.0),
    ],
    "attempts": [
        ("orders", "ProcessOrders", SQS, 1, 63),
        ("orders", "ProcessOrders", SQS, 2, 5),
        ("orders", "ProcessOrders", SQS, 3, 2),
        ("payments", "CapturePayment", API, 1, 13),
    ],
    "rates": [
        (t(5), "orders", "ProcessOrders", 10, 0, 1, 0, 0.1, 0.0),
        (t(15), "orders", "ProcessOrders", 20, 3, 2, 1, 0.1, 0.05),
        (t(30), "orders", "ProcessOrders", 30, 4, 3, 2, 0.1, 2 / 30),
        (t(39), "orders", "ProcessOrders", 10, 0, 0, 0, 0.0, 0.0),
    ],
    "stuck_keys": [
        (XSS_KEY, "orders", "ProcessOrders", IdempotencyStatus.IN_PROGRESS.value, O.CLAIMED.value, t(27), t(27),
         t(32), 1, "r-5", 780.0, True),
        (XSS_LINK, "payments", "CapturePayment", IdempotencyStatus.IN_PROGRESS.value, O.CLAIMED.value, t(12), t(12),
         t(17), 1, "r-11", 1680.0, True),
        ("k-live", "orders", "ProcessOrders", IdempotencyStatus.IN_PROGRESS.value, O.CLAIMED.value, t(38), t(38),
         t(43), 1, "r-12", 120.0, False),
    ],
    "conflicting_keys": [
        ("pay-7", "payments", "CapturePayment", 2, t(26), t(26)),
        ("pay-3", "payments", "CapturePayment", 1, t(20), t(20)),
    ],
    "error_codes": [
        (t(5), "orders", "ProcessOrders", O.RETRYABLE_FAILURE.value, "Throttled", ErrorClass.RETRYABLE.value, 1),
        (t(15), "orders", "ProcessOrders", O.RETRYABLE_FAILURE.value, "Throttled", ErrorClass.RETRYABLE.value, 2),
        (t(30), "orders", "ProcessOrders", O.RETRYABLE_FAILURE.value, "Throttled", ErrorClass.RETRYABLE.value, 2),
        (t(30), "orders", "ProcessOrders", O.RETRYABLE_FAILURE.value, "ServiceUnavailable",
         ErrorClass.RETRYABLE.value, 1),
        (t(30), "orders", "ProcessOrders", O.POISON_MESSAGE.value, "SchemaError", ErrorClass.POISON.value, 2),
        (t(35), "evil", XSS_OP, O.POISON_MESSAGE.value, XSS_IMG, ErrorClass.POISON.value, 1),
        (t(26), "payments", "CapturePayment", O.TIMEOUT_BUDGET_ABORT.value, "TimeoutBudget",
         ErrorClass.RETRYABLE.value, 1),
    ],
    "invocations": [
        # init duration avg/max (the one cold start's), memory size
        (t(5), "/aws/lambda/orders", ACCOUNT, 3, 1, 0, 120.0, 300.0, 310.0, 80.0, 400.0, 400.0, 128.0),
        (t(30), "/aws/lambda/orders", ACCOUNT, 5, 0, 1, 200.0, 900.0, 3000.0, 85.0, None, None, 128.0),
    ],
    # Powertools' own metrics for the orders function: DuplicateCompleted 4 at 10:30 (in the default window),
    # 1 at 10:12 (previous window), ColdStart 1 at 10:05
    "library_signals": [
        (t(30), "/aws/lambda/orders", ACCOUNT, "powertools", O.DUPLICATE_COMPLETED.value, 4.0),
        (t(12), "/aws/lambda/orders", ACCOUNT, "powertools", O.DUPLICATE_COMPLETED.value, 1.0),
        (t(5), "/aws/lambda/orders", ACCOUNT, "powertools", O.COLD_START.value, 1.0),
    ],
    "trail": _trail(),
}

BULK_CORRELATION = "corr-bulk"


def bulk_trail(n: int) -> list[tuple]:
    """``n`` trail records of one correlation id (:data:`BULK_CORRELATION`), each its own key ``bulk-<i>``, event
    ``be-<i>`` and request ``rb-<i>``, 100 ms apart from 10:06 on: record i is the i-th of the trail order."""
    return [(t(6) + timedelta(milliseconds=100 * i), "/aws/lambda/orders", ACCOUNT, "orders", "ProcessOrders", SQS,
             O.RECEIVED.value, f"bulk-{i:05d}", None, f"be-{i}", BULK_CORRELATION, f"rb-{i:05d}", 1, None, 10.0, None,
             "") for i in range(n)]


def with_bulk_trail(n: int) -> dict[str, list[tuple]]:
    """:data:`TABLE_ROWS` with :func:`bulk_trail` records added to the trail (an explorer search of more rows
    than a page)."""
    return {**TABLE_ROWS, "trail": TABLE_ROWS["trail"] + bulk_trail(n)}


# Hand-derived from the rows above. Default window = "Last 15 minutes" = [10:25, 10:40) (the data spans
# 10:05..10:39 -> [10:05, 10:40), 35 min; the largest preset <= half of it is 15 min); previous = [10:10, 10:25).
EXPECTED = {
    "window": (t(25), t(40)),
    "tiles": {  # title -> (value text, delta text)
        "Duplicates": ("5", "+3"),
        "Payload conflicts": ("2", "+1"),
        "In-progress collisions": ("2", "+1"),
        "Retries": ("3", "+1"),
        "Poison rate": ("5.77%", "+1.77 pp"),  # 3/52 = 5.769% vs 1/25 = 4%
        "Timeout-budget aborts": ("1", "+1"),
        "Max iterator age": ("1.1 min", "+1.1 min"),  # 65000 ms vs 1500 ms
        # stuck at the window end 10:40: XSS_KEY (claimed 10:27, expiry 10:32) and XSS_LINK (claimed 10:12 before
        # the window, expiry 10:17); k-live (expiry 10:43) is IN_PROGRESS but not expired. No delta for this tile:
        # stuck_keys is end-of-collection state and cannot say what was stuck at the previous window's end.
        "Stuck keys": ("2", None),
    },
    "all_data_tiles": {
        "Duplicates": "8", "Payload conflicts": "3", "In-progress collisions": "3", "Retries": "6",
        "Poison rate": "4.60%",  # received 10+20+30+10+5+8+4 = 87, poison 1+2+1 = 4 -> 4.598%
        "Timeout-budget aborts": "1", "Max iterator age": "1.1 min", "Stuck keys": "2",
    },
}


def write_data_dir(root: Path, rows: dict[str, list[tuple]] | None = None, *, manifest: bool = True) -> Path:
    """Write ``rows`` (default TABLE_ROWS) as <root>/tables/<name>.parquet with the exact schema types (the
    standard tables' and the optional ``idempotency_table_stuck``'s)."""
    rows = TABLE_ROWS if rows is None else rows
    (root / "tables").mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    counts = {}
    for name, data in rows.items():
        tbl = SCHEMAS[name]
        cols = ", ".join(f'"{c}" {typ}' for c, typ in tbl.columns)
        con.execute(f"CREATE OR REPLACE TABLE t ({cols})")
        if data:
            con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(tbl.columns))})", data)
        out = root / "tables" / f"{name}.parquet"
        con.execute(f"COPY t TO '{out}' (FORMAT parquet)")
        counts[name] = len(data)
    con.close()
    if manifest:
        (root / "manifest.json").write_text(json.dumps({
            "collected_at": "2026-01-05T10:41:00Z", "sources": ["hand-made"], "row_counts": counts,
        }))
    return root
