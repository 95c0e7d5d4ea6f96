"""Each demo handler's shape, driven through the Lambda runtime simulator with the real emitter."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path

import pytest

from dashboard.demo.events import api_event, eventbridge_event, kinesis_record, sqs_record
from dashboard.demo.faults import Fault, FaultPlan
from dashboard.demo.fleet import FUNCTION_CONFIGS, IN_PROGRESS_LOCK_MS, _run_pinned_pair
from dashboard.demo.handlers import FACTORIES
from dashboard.demo.handlers.common import Deps
from dashboard.demo.logs import FunctionLog, report_line
from dashboard.demo.runtime import FunctionPool
from dashboard.demo.store import SqliteIdempotencyStore
from dashboard.demo.truth import FunctionTruth, Tally

T0 = 1_767_607_200_000  # 2026-01-05T10:00:00.000Z


class Harness:
    def __init__(self, tmp: Path, function: str) -> None:
        self.fn = function
        self.store = SqliteIdempotencyStore(tmp / f"{function}.sqlite3")
        self.deps = Deps(store=self.store, plan=FaultPlan(), lock_ms=dict(IN_PROGRESS_LOCK_MS))
        self.log = FunctionLog(function)
        self.truth = FunctionTruth()
        self.tally = Tally()
        self.pool = FunctionPool(FUNCTION_CONFIGS[function], 1, self.log, self.truth, self.tally,
                                 FACTORIES[function], self.deps)
        self._n = 0

    def invoke(self, event, at_ms: int):
        self._n += 1
        return self.pool.invoke(event, at_ms, f"req-{self._n:04d}")

    def records(self) -> list[dict]:
        return [json.loads(m) for m in self.log.messages() if m.startswith('{"level"')]

    def outcomes(self) -> Counter[str]:
        return Counter(r["outcome"] for r in self.records())


def _order(order_id: str) -> str:
    return json.dumps({"order_id": order_id, "customer_id": "c-1", "items": [{"sku": "SKU-1", "qty": 1}]})


@pytest.fixture()
def orders(tmp_path: Path) -> Harness:
    return Harness(tmp_path, "orders-consumer")


def test_sqs_batch_partial_failure_poison_and_redelivery(orders: Harness) -> None:
    orders.deps.plan.arm("m-3", Fault.SQS_THROTTLED)
    batch = {"Records": [
        sqs_record("m-1", _order("o-1"), T0 - 1_500, 1, T0),
        sqs_record("m-2", '{"order_id": "o-2", "items": [', T0 - 900, 1, T0),  # truncated JSON
        sqs_record("m-3", _order("o-3"), T0 - 400, 1, T0),
    ]}
    inv = orders.invoke(batch, T0)
    assert inv.result == {"batchItemFailures": [{"itemIdentifier": "m-3"}]}
    assert orders.outcomes() == Counter({"cold_start": 1, "received": 3, "poison_message": 1, "claimed": 2,
                                         "retryable_failure": 1, "succeeded": 1, "batch_item_failure": 1})
    failure = next(r for r in orders.records() if r["outcome"] == "retryable_failure")
    assert (failure["error_code"], failure["idempotency_status"]) == ("Throttled", "DELETED")
    assert orders.store.get("orders-consumer#order-o-1").status == "COMPLETED"
    assert orders.store.get("orders-consumer#order-o-3") is None  # released for the redelivery
    assert orders.deps.dlq["orders-dlq"] == 1
    assert dict(orders.deps.plan.injected["orders-consumer"]) == {"sqs_throttled": 1}

    # redelivered after the visibility timeout, ApproximateReceiveCount 2
    again = orders.invoke({"Records": [sqs_record("m-3", _order("o-3"), T0 - 400, 2, T0)]}, T0 + 60_000)
    assert again.result == {"batchItemFailures": []}
    received = [r for r in orders.records() if r["outcome"] == "received"]
    # warm environment, so the records are read at the invoke time: age = (T0 + 60 s) - (T0 - 0.4 s)
    assert (received[-1]["attempt"], received[-1]["record_age_ms"]) == (2, 60_400)
    assert orders.store.get("orders-consumer#order-o-3").status == "COMPLETED"
    # a duplicate copy of a processed message is acknowledged, not processed again
    orders.invoke({"Records": [sqs_record("m-1", _order("o-1"), T0 - 1_500, 2, T0)]}, T0 + 200_000)
    assert orders.outcomes()["duplicate_completed"] == 1


def test_crash_after_claim_times_out_and_is_taken_over_after_expiry(orders: Harness) -> None:
    orders.deps.plan.arm("m-9", Fault.SQS_CRASH_AFTER_CLAIM)
    event = {"Records": [sqs_record("m-9", _order("o-9"), T0, 1, T0)]}
    inv = orders.invoke(event, T0)
    assert inv.timed_out and inv.result is None
    msgs = orders.log.messages()
    start = next(m for m in msgs if m.startswith("START"))
    assert start == "START RequestId: req-0001 Version: $LATEST"
    timeout = next(m for m in msgs if "Task timed out" in m)
    assert timeout.endswith(" req-0001 Task timed out after 10.00 seconds")
    report = next(m for m in msgs if m.startswith("REPORT"))
    fields = dict(p.split(": ", 1) for p in report.rstrip("\t").split("\t")[1:])
    assert fields["Duration"] == "10000.00 ms" and fields["Billed Duration"] == "10000 ms"
    assert fields["Status"] == "timeout" and "Init Duration" in fields
    # the killed runtime never flushed its EMF document: lost, and counted
    assert orders.truth.lines_lost_to_timeouts >= 1
    assert not any('"_aws"' in m for m in msgs)
    rec = orders.store.get("orders-consumer#order-o-9")
    assert rec.status == "IN_PROGRESS" and rec.owner == "req-0001"

    # a retry before the in-progress expiry (30 s) collides; after it, takes over
    claimed_at = rec.claimed_at_ms
    early = orders.invoke({"Records": [sqs_record("m-9", _order("o-9"), T0, 2, T0)]}, claimed_at + 20_000)
    assert early.result == {"batchItemFailures": [{"itemIdentifier": "m-9"}]}
    late = orders.invoke({"Records": [sqs_record("m-9", _order("o-9"), T0, 3, T0)]}, claimed_at + 60_000)
    assert late.result == {"batchItemFailures": []}
    out = orders.outcomes()
    assert (out["duplicate_in_progress"], out["stale_claim_takeover"], out["succeeded"]) == (1, 1, 1)
    assert out["cold_start"] == 2  # the environment was discarded after the timeout
    assert orders.store.get("orders-consumer#order-o-9").owner == "req-0003"


def test_concurrent_duplicate_in_two_environments_has_one_winner(orders: Harness) -> None:
    orders.deps.plan.arm("m-5", Fault.SQS_CONCURRENT_DUPLICATE)
    ev_a = {"Records": [sqs_record("m-5", _order("o-5"), T0, 1, T0)]}
    ev_b = {"Records": [sqs_record("m-5", _order("o-5"), T0, 2, T0)]}
    inv_a, inv_b = _run_pinned_pair(orders.pool, orders.deps, "m-5", T0, (ev_a, "req-a"), (ev_b, "req-b"), 7)
    assert inv_a.result == {"batchItemFailures": []}
    assert inv_b.result == {"batchItemFailures": [{"itemIdentifier": "m-5"}]}
    assert len(orders.pool.envs) == 2  # two execution environments, both cold
    recs = orders.records()
    by = {(r["function_request_id"], r["outcome"]): r for r in recs}
    assert ("req-b", "duplicate_in_progress") in by and ("req-a", "succeeded") in by
    # the logs read in a consistent order: the loser saw IN_PROGRESS before the winner completed
    assert by[("req-b", "duplicate_in_progress")]["timestamp"] <= by[("req-a", "succeeded")]["timestamp"]
    assert orders.store.get("orders-consumer#order-o-5").owner == "req-a"


def test_stream_checkpoints_at_a_claim_held_elsewhere(tmp_path: Path) -> None:
    h = Harness(tmp_path, "ledger-stream")
    entries = [{"entry_id": f"le-{i}", "account": "acct-001", "amount_cents": 100 * i} for i in range(3)]
    recs = [kinesis_record("shardId-000000000000", f"4959{i:052d}", "acct-001", e, T0 - 5_000 + i)
            for i, e in enumerate(entries)]
    from dashboard.demo.events import payload_hash

    h.store.claim("ledger-stream#entry-le-1", payload_hash(entries[1]), "crashed-req", T0 - 10_000, 180_000)
    inv = h.invoke({"Records": recs}, T0)
    assert inv.result == {"batchItemFailures": [{"itemIdentifier": recs[1]["kinesis"]["sequenceNumber"]}]}
    out = h.outcomes()
    assert (out["received"], out["succeeded"], out["duplicate_in_progress"], out["batch_item_failure"]) == (3, 1, 1, 1)
    assert h.store.get("ledger-stream#entry-le-2") is None  # per-shard order: nothing after the checkpoint ran
    first_age = next(r for r in h.records() if r["outcome"] == "received")["record_age_ms"]
    start_after_init = next(r for r in h.records() if r["outcome"] == "received")["timestamp"]
    assert first_age >= 5_000  # arrival 5 s before the invoke (plus the cold start)
    assert start_after_init.startswith("2026-01-05T10:00:00")

    poison = kinesis_record("shardId-000000000000", "4959" + "9" * 52, "acct-001", "\x00garbage", T0)
    h.invoke({"Records": [poison]}, T0 + 1_000)
    assert h.outcomes()["poison_message"] == 1 and h.deps.dlq["ledger-stream-failures"] == 1
    assert base64.b64decode(poison["kinesis"]["data"]) == b"\x00garbage"


def test_api_duplicate_conflict_validation_and_503(tmp_path: Path) -> None:
    h = Harness(tmp_path, "create-case-api")
    body = {"customer_id": "c-1", "subject": "Parcel damaged"}

    def call(key, b, at):
        inv = h.invoke(api_event(f"api-{at}", key, b, at, "corr-1"), at)
        return inv.result["statusCode"], json.loads(inv.result["body"]), inv.result["headers"]

    s1, b1, _ = call("k-1", body, T0)
    assert s1 == 201 and b1["status"] == "OPEN"
    s2, b2, h2 = call("k-1", body, T0 + 2_000)
    assert (s2, b2, h2.get("Idempotent-Replayed")) == (201, b1, "true")  # the stored response, not a new case
    s3, b3, _ = call("k-1", dict(body, subject="Other"), T0 + 4_000)
    assert (s3, b3["error"]) == (409, "IdempotencyKeyReused")
    s4, b4, _ = call("k-2", {"customer_id": "c-2"}, T0 + 6_000)
    assert (s4, b4["error"]) == (400, "ValidationError")
    h.deps.plan.arm("k-3", Fault.API_DEPENDENCY_FAILURE)
    s5, b5, h5 = call("k-3", body, T0 + 8_000)
    assert (s5, b5["error"], h5["Retry-After"]) == (503, "DependencyUnavailable", "2")
    s6, _, _ = call("k-3", body, T0 + 11_000)
    assert s6 == 201
    out = h.outcomes()
    assert out == Counter({"cold_start": 1, "received": 6, "claimed": 3, "succeeded": 2, "duplicate_completed": 1,
                           "payload_conflict": 1, "permanent_failure": 1, "retryable_failure": 1})
    conflict = next(r for r in h.records() if r["outcome"] == "payload_conflict")
    # the key the received record named (the Idempotency-Key header): one key identity for the whole request
    assert conflict["idempotency_key"] == "k-1" and conflict["correlation_id"] == "corr-1"


def test_api_in_progress_is_409_with_retry_after_then_taken_over(tmp_path: Path) -> None:
    h = Harness(tmp_path, "create-case-api")
    body = {"customer_id": "c-1", "subject": "Late"}
    h.deps.plan.arm("k-7", Fault.API_CRASH_AFTER_CLAIM)
    crashed = h.invoke(api_event("api-1", "k-7", body, T0, "corr-2"), T0)
    assert crashed.timed_out  # API Gateway answers 502; the claim stays IN_PROGRESS (Powertools never deleted it)
    claim = next(r for r in h.records() if r["outcome"] == "claimed")
    expires = claim["in_progress_expires_at_ms"]
    inv = h.invoke(api_event("api-2", "k-7", body, T0 + 15_000, "corr-2"), T0 + 15_000)
    assert inv.result["statusCode"] == 409
    assert json.loads(inv.result["body"])["error"] == "RequestInProgress"
    dup = next(r for r in h.records() if r["outcome"] == "duplicate_in_progress")
    # Retry-After = seconds left on the claim, rounded up
    assert int(inv.result["headers"]["Retry-After"]) == -(-(expires - _ms(dup["timestamp"])) // 1000)
    late = h.invoke(api_event("api-3", "k-7", body, expires + 1_000, "corr-2"), expires + 1_000)
    assert late.result["statusCode"] == 201
    assert [r["outcome"] for r in h.records() if r["outcome"] not in ("received", "cold_start")] == [
        "claimed", "duplicate_in_progress", "stale_claim_takeover", "succeeded"]
    assert h.store.count("IN_PROGRESS") == 0


def _ms(iso: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(iso).timestamp() * 1000)


def test_payment_ambiguous_commit_is_replayed_not_charged_twice(tmp_path: Path) -> None:
    h = Harness(tmp_path, "payment-capture")
    detail = {"payment_id": "pay-1", "order_id": "o-1", "amount_cents": 1999, "currency": "EUR"}
    event = eventbridge_event("evt-1", detail, T0)
    h.deps.plan.arm("pay-1", Fault.PAYMENT_AMBIGUOUS_COMMIT)
    first = h.invoke(event, T0)
    assert type(first.error).__name__ == "ProviderTimeout"
    assert any(m.startswith("[ERROR] ProviderTimeout: ") for m in h.log.messages())
    assert h.store.get("payment-capture#pay-1") is None
    retry = h.invoke(event, T0 + 63_000)
    assert retry.error is None and retry.result == {"status": "succeeded", "charge_id": "ch_000001"}
    assert dict(h.deps.provider.counts) == {"charges": 1, "replays": 1}
    out = h.outcomes()
    assert (out["ambiguous_commit"], out["side_effect_started"], out["succeeded"]) == (1, 2, 1)
    started = [r for r in h.records() if r["outcome"] == "side_effect_started"]
    assert all(r["remaining_time_ms"] >= 4_000 for r in started)


def test_payment_timeout_budget_abort_releases_the_claim(tmp_path: Path) -> None:
    h = Harness(tmp_path, "payment-capture")
    detail = {"payment_id": "pay-2", "order_id": "o-2", "amount_cents": 500, "currency": "EUR"}
    h.deps.plan.arm("pay-2", Fault.PAYMENT_TIMEOUT_BUDGET)
    inv = h.invoke(eventbridge_event("evt-2", detail, T0), T0)
    assert type(inv.error).__name__ == "TimeoutBudgetExceeded" and not inv.timed_out
    abort = next(r for r in h.records() if r["outcome"] == "timeout_budget_abort")
    assert abort["remaining_time_ms"] < 4_000 and abort["idempotency_status"] == "DELETED"
    assert h.store.get("payment-capture#pay-2") is None
    assert h.deps.provider.counts == Counter()  # no money moved


def test_report_line_matches_the_lambda_text_format() -> None:
    assert report_line("8f5", 2.04, 128, 69, 150.73) == (
        "REPORT RequestId: 8f5\tDuration: 2.04 ms\tBilled Duration: 3 ms\tMemory Size: 128 MB\t"
        "Max Memory Used: 69 MB\tInit Duration: 150.73 ms\t"
    )
    assert report_line("x", 3000.0, 128, 50, timed_out=True).endswith("Billed Duration: 3000 ms\tMemory Size: 128 MB\t"
                                                                       "Max Memory Used: 50 MB\tStatus: timeout\t")


def test_multi_line_messages_are_refused() -> None:
    log = FunctionLog("f")
    log.write(T0, "one line\n")  # a trailing newline is the line end
    with pytest.raises(ValueError, match="multi-line"):
        log.write(T0, "two\nlines")
    assert log.messages() == ["one line"]
