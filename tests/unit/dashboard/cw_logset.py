"""A small hand-counted log set for the dashboard's CloudWatch source tests.

One log group, one function (service ``orders``, operation ``ProcessOrders``, SQS), emitter records placed a few
minutes before "now" (the dashboard collects ``--since`` .. now) plus Lambda START/REPORT lines that are not emitter
records. ``batch(n)`` builds batch number ``n`` (0 or 1) two minutes apart so a second collection adds new bins.

Hand counts of batch 0 (the Overview tiles after collecting it):
  received 10 (record_age_ms 100, 200, ..., 900 and 4500 -> max iterator age 4.5 s)
  duplicate_completed 2, payload_conflict 1, duplicate_in_progress 3, retryable_failure 2, poison_message 1
  (poison rate 1/10 = 10.00%), timeout_budget_abort 1,
  claimed 2: key "k-done" then succeeded/COMPLETED (not stuck), key "k-stuck" never completed, lock expired 5 s after
  the claim (stuck: 1).
Batch 1 adds: received 10 (ages 100..1000, max stays 4.5 s), duplicate_completed 3, poison_message 1.
After both: duplicates 5, poison rate 2/20 = 10.00%, others unchanged.
"""

from __future__ import annotations

import json
import time

from emitter.contract import IdempotencyStatus, LogKey, Outcome

GROUP = "/aws/lambda/orders"

TILES_AFTER_BATCH_0 = {
    "Duplicates": "2", "Payload conflicts": "1", "In-progress collisions": "3", "Retries": "2",
    "Poison rate": "10.00%", "Timeout-budget aborts": "1", "Max iterator age": "4.5 s", "Stuck keys": "1",
}
TILES_AFTER_BATCH_1 = {**TILES_AFTER_BATCH_0, "Duplicates": "5"}
RECORDS_BATCH_0 = 10 + 2 + 1 + 3 + 2 + 1 + 1 + 2 + 1  # emitter records (trail rows): 23


def base_ms(now_s: float | None = None) -> int:
    """Start of batch 0: the minute boundary 6 minutes before now (inside ``--since 1h``, never in the future)."""
    now_s = time.time() if now_s is None else now_s
    return (int(now_s) // 60 - 6) * 60_000


def _iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _rec(t: int, outcome: Outcome, i: int, **extra) -> dict:
    msg = {LogKey.TIMESTAMP.value: _iso(t), LogKey.LEVEL.value: "INFO", LogKey.SERVICE.value: "orders",
           LogKey.OPERATION.value: "ProcessOrders", LogKey.EVENT_SOURCE.value: "sqs",
           LogKey.OUTCOME.value: outcome.value, LogKey.SCHEMA_VERSION.value: "1", LogKey.ATTEMPT.value: 1,
           LogKey.FUNCTION_REQUEST_ID.value: f"req-{i}", **{LogKey[k].value: v for k, v in extra.items()}}
    return {"timestamp": t, "message": json.dumps(msg), "logStreamName": "2026/01/05/[$LATEST]abc"}


def batch(n: int, base: int) -> list[dict]:
    """Events of batch ``n`` (filter-log-events dicts), starting at ``base`` + n * 2 min (epoch ms)."""
    t0 = base + n * 120_000
    evs: list[dict] = [{"timestamp": t0, "message": f"START RequestId: req-{n} Version: $LATEST",
                        "logStreamName": "2026/01/05/[$LATEST]abc"}]
    i = 1000 * n
    ages = [100.0 * (k + 1) for k in range(9)] + [4500.0] if n == 0 else [100.0 * (k + 1) for k in range(10)]
    for age in ages:
        i += 1
        evs.append(_rec(t0 + i % 1000 * 100, Outcome.RECEIVED, i, RECORD_AGE_MS=age))
    counts = ({Outcome.DUPLICATE_COMPLETED: 2, Outcome.PAYLOAD_CONFLICT: 1, Outcome.DUPLICATE_IN_PROGRESS: 3,
               Outcome.RETRYABLE_FAILURE: 2, Outcome.POISON_MESSAGE: 1, Outcome.TIMEOUT_BUDGET_ABORT: 1} if n == 0
              else {Outcome.DUPLICATE_COMPLETED: 3, Outcome.POISON_MESSAGE: 1})
    for outcome, c in counts.items():
        for _ in range(c):
            i += 1
            evs.append(_rec(t0 + 30_000 + i % 1000 * 100, outcome, i))
    if n == 0:
        for key, t in (("k-done", t0 + 40_000), ("k-stuck", t0 + 41_000)):
            i += 1
            evs.append(_rec(t, Outcome.CLAIMED, i, IDEMPOTENCY_KEY=key,
                            IDEMPOTENCY_STATUS=IdempotencyStatus.IN_PROGRESS.value, IN_PROGRESS_EXPIRES_AT_MS=t + 5000))
        i += 1
        evs.append(_rec(t0 + 42_000, Outcome.SUCCEEDED, i, IDEMPOTENCY_KEY="k-done",
                        IDEMPOTENCY_STATUS=IdempotencyStatus.COMPLETED.value))
    evs.append({"timestamp": t0 + 59_000, "message": f"REPORT RequestId: req-{n}\tDuration: 12.00 ms",
                "logStreamName": "2026/01/05/[$LATEST]abc"})
    return evs
