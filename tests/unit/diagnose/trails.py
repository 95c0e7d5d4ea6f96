"""Generated trails for the diagnose rules: emitter records written by the real ``Emitter`` (one per execution
environment, each its own log stream) on a clock the test moves, plus the Lambda runtime's START/REPORT lines.

``CASES`` holds, per rule, a trail where the anti-pattern is found, a look-alike where it is not, and one where it
is not observable; each case names the status the rule must give the function it concerns. The unit tests judge
them with the offline engine, the functional tests also through the fake Logs Insights server.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from emitter import Emitter, StreamSink, TimeoutBudgetExceeded

T0 = 1_767_600_000_000  # 2026-01-05T08:00:00Z
ACCOUNT = "000000000000"


class Trail:
    """Log events of one function (log group ``/aws/lambda/<function>``). ``now`` is the clock (epoch ms) every
    record is written at; :meth:`tick` moves it."""

    def __init__(self, function: str = "orders", operation: str = "ProcessOrders", timeout_ms: int = 10_000) -> None:
        self.function, self.operation, self.timeout_ms = function, operation, timeout_ms
        self.now = T0
        self.events: list[tuple[int, str, str]] = []  # (epoch ms, log stream, message)
        self._envs: dict[str, Emitter] = {}
        self._ids = itertools.count(1)

    @property
    def log_group(self) -> str:
        return f"/aws/lambda/{self.function}"

    def tick(self, ms: int = 1) -> None:
        self.now += ms

    def _env(self, stream: str) -> Emitter:
        em = self._envs.get(stream)
        if em is None:
            sink = StreamSink(lambda line, s=stream: self.events.append((self.now, s, line)))
            em = Emitter(service="shop", sink=sink, clock=lambda: self.now, metrics_disabled=True)
            self._envs[stream] = em
        return em

    @contextmanager
    def invoke(self, event: Any, stream: str = "env-a", request_id: str | None = None,
               timeout: bool = False) -> Iterator[tuple[Emitter, str]]:
        """One invocation in the environment ``stream``: START, the records the block writes through the emitter it
        gets (with the request id), then REPORT (``Status: timeout`` when ``timeout``)."""
        rid = request_id or f"00000000-0000-4000-8000-{next(self._ids):012d}"
        em = self._env(stream)
        self.events.append((self.now, stream, f"START RequestId: {rid} Version: $LATEST"))
        start = self.now
        ctx = {"aws_request_id": rid, "function_name": self.function, "deadline_ms": start + self.timeout_ms}
        with em.invocation(ctx, operation=self.operation, event=event):
            yield em, rid
        if timeout:
            self.now = start + self.timeout_ms
        status = "\tStatus: timeout" if timeout else ""
        report = (f"REPORT RequestId: {rid}\tDuration: {self.now - start:.2f} ms\tBilled Duration: "
                  f"{self.now - start + 1} ms\tMemory Size: 256 MB\tMax Memory Used: 80 MB{status}\t")
        self.events.append((self.now, stream, report))
        self.tick(1)

    def log_events(self) -> list[dict[str, Any]]:
        """filter-log-events dicts in time order (ties in write order)."""
        order = sorted(range(len(self.events)), key=lambda i: (self.events[i][0], i))
        return [{"timestamp": self.events[i][0], "message": self.events[i][2], "logStreamName": self.events[i][1],
                 "eventId": f"{n:010d}"} for n, i in enumerate(order)]


def sqs(message_id: str, attempt: int = 1, body: dict[str, Any] | None = None, sent_ms: int = T0) -> dict[str, Any]:
    """A one-message SQS event (``ApproximateReceiveCount`` = ``attempt``)."""
    return {"Records": [{
        "messageId": message_id, "receiptHandle": f"h-{message_id}-{attempt}", "body": json.dumps(body or {}),
        "attributes": {"ApproximateReceiveCount": str(attempt), "SentTimestamp": str(sent_ms),
                       "ApproximateFirstReceiveTimestamp": str(sent_ms + 10)},
        "messageAttributes": {}, "md5OfBody": "0", "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:orders-queue", "awsRegion": "us-east-1"}]}


def kinesis(sequence_number: str, arrival_ms: int) -> dict[str, Any]:
    """A one-record Kinesis event."""
    import base64

    return {"Records": [{
        "kinesis": {"kinesisSchemaVersion": "1.0", "partitionKey": "p", "sequenceNumber": sequence_number,
                    "data": base64.b64encode(b"{}").decode(), "approximateArrivalTimestamp": arrival_ms / 1000},
        "eventSource": "aws:kinesis", "eventVersion": "1.0", "eventID": f"shardId-000000000000:{sequence_number}",
        "eventName": "aws:kinesis:record", "awsRegion": "us-east-1",
        "eventSourceARN": "arn:aws:kinesis:us-east-1:123456789012:stream/ledger"}]}


def eventbridge(event_id: str) -> dict[str, Any]:
    return {"version": "0", "id": event_id, "detail-type": "PaymentAuthorized", "source": "shop.payments",
            "account": "123456789012", "time": "2026-01-05T08:00:00Z", "region": "us-east-1", "resources": [],
            "detail": {"payment_id": event_id}}


# --------------------------------------------------------------------------- cases
@dataclass(frozen=True)
class Case:
    """A trail (``build()``), the rule judged and the status (audit FindingStatus value) it must give the trail's
    function; ``count``: the violating entities a found case must count."""

    name: str
    rule: str
    status: str
    build: Callable[[], Trail]
    count: int = 0


def _deliver_sqs(t: Trail, mid: str, attempt: int, key: str, stream: str = "env-a", outcome: str = "claimed",
                 done: str | None = "succeeded") -> None:
    with t.invoke(sqs(mid, attempt), stream) as (em, _):
        rec = em.records(sqs(mid, attempt))[0]
        t.tick()
        getattr(em, outcome)(rec, key=key)
        if done:
            t.tick(5)
            getattr(em, done)(rec, key=key)


# IW101 -----------------------------------------------------------------------
def key_from_request_id() -> Trail:
    t = Trail()
    for attempt in (1, 2):  # the first delivery failed; the redelivery claims a new key built from its request id
        with t.invoke(sqs("m-1", attempt), f"env-{attempt}") as (em, rid):
            rec = em.records(sqs("m-1", attempt))[0]
            t.tick()
            em.claimed(rec, key=f"orders#{rid}")
            t.tick(3)
            (em.retryable_failure if attempt == 1 else em.succeeded)(rec, key=f"orders#{rid}")
        t.tick(30_000)
    return t


def key_changes_between_deliveries() -> Trail:
    t = Trail()
    for attempt, key in ((1, "attempt-7f3a"), (2, "attempt-b21c")):  # a random key per delivery
        with t.invoke(sqs("m-1", attempt)) as (em, _):
            rec = em.records(sqs("m-1", attempt))[0]
            t.tick()
            em.claimed(rec, key=key)
            t.tick(3)
            (em.retryable_failure if attempt == 1 else em.succeeded)(rec, key=key)
        t.tick(30_000)
    return t


def stable_keys() -> Trail:
    t = Trail()
    # one event fanning out to two keys, redelivered: both keys again (caught as duplicates)
    with t.invoke(sqs("m-fan", 1)) as (em, _):
        rec = em.records(sqs("m-fan", 1))[0]
        for k in ("order-1#line-1", "order-1#line-2"):
            t.tick()
            em.claimed(rec, key=k)
            t.tick()
            em.succeeded(rec, key=k)
    t.tick(60_000)
    with t.invoke(sqs("m-fan", 2), "env-b") as (em, _):
        rec = em.records(sqs("m-fan", 2))[0]
        for k in ("order-1#line-1", "order-1#line-2"):
            t.tick()
            em.duplicate_completed(rec, key=k)
    # the business command changed: a new message (new event id) with a new key, for the same order
    for mid, key in (("m-v1", "order-9:v1"), ("m-v2", "order-9:v2")):
        t.tick(1_000)
        _deliver_sqs(t, mid, 1, key)
    return t


def single_deliveries() -> Trail:
    t = Trail()
    for i in range(3):
        t.tick(1_000)
        _deliver_sqs(t, f"m-{i}", 1, f"order-{i}")
    return t


# IW102 / IW103 ---------------------------------------------------------------
def _payment(t: Trail, steps: list[tuple[str, int]], key: str = "pay-1", event_id: str = "e-1",
             stream: str = "env-a", timeout: bool = False, remaining_ms: int | None = None) -> None:
    """One payment invocation writing ``steps`` ((outcome, ms before it), ...)."""
    with t.invoke(eventbridge(event_id), stream, timeout=timeout) as (em, _):
        rec = em.record_for(eventbridge(event_id))
        for outcome, dt in steps:
            t.tick(dt)
            if outcome == "side_effect_started" and remaining_ms is not None:
                em.side_effect_started(rec, key=key, remaining_time_ms=remaining_ms)
            else:
                getattr(em, outcome)(rec, key=key)


def side_effect_before_claim() -> Trail:
    t = Trail("payments", "CapturePayment", timeout_ms=15_000)
    _payment(t, [("side_effect_started", 5), ("claimed", 40), ("succeeded", 200)])
    t.tick(1_000)
    _payment(t, [("side_effect_started", 5), ("succeeded", 200)], key="pay-2", event_id="e-2")  # no claim at all
    return t


def claim_then_side_effect() -> Trail:
    t = Trail("payments", "CapturePayment", timeout_ms=15_000)
    _payment(t, [("claimed", 5), ("side_effect_started", 40), ("succeeded", 200)])
    t.tick(1_000)
    # a claim and a side effect in the same millisecond
    _payment(t, [("claimed", 5), ("side_effect_started", 0), ("succeeded", 200)], key="pay-2", event_id="e-2")
    return t


def no_side_effects() -> Trail:
    t = Trail("payments", "CapturePayment")
    _payment(t, [("claimed", 5), ("succeeded", 200)])
    return t


def completed_before_side_effect() -> Trail:
    t = Trail("payments", "CapturePayment", timeout_ms=15_000)
    _payment(t, [("claimed", 5), ("succeeded", 20), ("side_effect_started", 30)])
    return t


def completed_after_side_effect() -> Trail:
    t = Trail("payments", "CapturePayment", timeout_ms=15_000)
    _payment(t, [("claimed", 5), ("side_effect_started", 30), ("succeeded", 20)])
    t.tick(60_000)  # a later invocation of the same key: its side effect comes after the earlier completion
    _payment(t, [("claimed", 5), ("side_effect_started", 30), ("succeeded", 20)], event_id="e-1b")
    return t


# IW104 / IW105 ---------------------------------------------------------------
def in_memory() -> Trail:
    t = Trail()
    _deliver_sqs(t, "m-1", 1, "order-1", "env-a")
    t.tick(2_000)
    _deliver_sqs(t, "m-1", 1, "order-1", "env-a", outcome="duplicate_completed", done=None)  # caught in env-a
    t.tick(3_000)
    _deliver_sqs(t, "m-1", 1, "order-1", "env-b")  # env-b never saw it: processed again
    t.tick(1_000)
    _deliver_sqs(t, "m-2", 1, "order-2", "env-b")
    t.tick(500)
    _deliver_sqs(t, "m-2", 1, "order-2", "env-a")  # and the other way round
    return t


def shared_record() -> Trail:
    t = Trail()
    _deliver_sqs(t, "m-1", 1, "order-1", "env-a")
    t.tick(2_000)
    _deliver_sqs(t, "m-1", 1, "order-1", "env-b", outcome="duplicate_completed", done=None)  # caught elsewhere
    return t


def replay_outlived_record() -> Trail:
    t = Trail()
    _deliver_sqs(t, "m-1", 1, "order-1", "env-a")
    t.tick(5_000)
    _deliver_sqs(t, "m-1", 1, "order-1", "env-b", outcome="duplicate_completed", done=None)  # caught at 5 s
    t.tick(3_600_000)
    _deliver_sqs(t, "m-1", 1, "order-1", "env-a")  # the replay an hour later: processed again, same environment
    return t


def duplicates_caught_late() -> Trail:
    t = Trail()
    _deliver_sqs(t, "m-1", 1, "order-1", "env-a")
    for dt, stream in ((5_000, "env-b"), (1_800_000, "env-a")):
        t.tick(dt)
        _deliver_sqs(t, "m-1", 1, "order-1", stream, outcome="duplicate_completed", done=None)
    # a key released after a failure (DELETED) and processed on the retry: one completion
    with t.invoke(sqs("m-2", 1)) as (em, _):
        rec = em.records(sqs("m-2", 1))[0]
        em.claimed(rec, key="order-2")
        em.retryable_failure(rec, key="order-2", idempotency_status="DELETED")
    t.tick(30_000)
    _deliver_sqs(t, "m-2", 2, "order-2", "env-b")
    return t


def single_stream_reprocessed() -> Trail:
    t = Trail()
    for dt in (0, 4_000):
        t.tick(dt)
        _deliver_sqs(t, "m-1", 1, "order-1", "one-stream")
    return t


# IW106 -----------------------------------------------------------------------
def redelivered_during_processing() -> Trail:
    t = Trail()
    with t.invoke(sqs("m-1", 1), "env-a") as (em, _):
        rec = em.records(sqs("m-1", 1))[0]
        t.tick(2)
        em.claimed(rec, key="order-1")
        saved = t.now
        t.tick(6_000)  # the slow reservation: the visibility timeout (5 s) expires meanwhile
        start_b = saved + 5_000
        now_a, t.now = t.now, start_b
        with t.invoke(sqs("m-1", 2), "env-b") as (em_b, _):
            rec_b = em_b.records(sqs("m-1", 2))[0]
            t.tick(3)
            em_b.duplicate_in_progress(rec_b, key="order-1")
        t.now = now_a
        em.succeeded(rec, key="order-1")
    return t


def concurrent_copy_and_crash() -> Trail:
    t = Trail()
    # SQS's at-least-once copy, 20 ms after the first receive: not a visibility timeout
    with t.invoke(sqs("m-1", 1), "env-a") as (em, _):
        rec = em.records(sqs("m-1", 1))[0]
        t.tick(2)
        em.claimed(rec, key="order-1")
        now_a = t.now
        t.tick(18)
        with t.invoke(sqs("m-1", 2), "env-b") as (em_b, _):
            em_b.duplicate_in_progress(em_b.records(sqs("m-1", 2))[0], key="order-1")
        t.now = now_a + 40
        em.succeeded(rec, key="order-1")
    # a crash after the claim: the redelivery meets the dead invocation's claim; the message is done later
    t.tick(10_000)
    with t.invoke(sqs("m-2", 1), "env-c", timeout=True) as (em, _):
        em.claimed(em.records(sqs("m-2", 1))[0], key="order-2")
    t.tick(60_000)
    _deliver_sqs(t, "m-2", 2, "order-2", "env-a", outcome="duplicate_in_progress", done=None)
    t.tick(60_000)
    _deliver_sqs(t, "m-2", 3, "order-2", "env-a", outcome="stale_claim_takeover")
    return t


def no_redelivery() -> Trail:
    t = Trail()
    _deliver_sqs(t, "m-1", 1, "order-1")
    return t


# IW107 -----------------------------------------------------------------------
def permanent_retried() -> Trail:
    t = Trail()
    for attempt in (1, 2, 3):
        with t.invoke(sqs("m-1", attempt), f"env-{attempt % 2}") as (em, _):
            rec = em.records(sqs("m-1", attempt))[0]
            em.claimed(rec, key="order-1")
            t.tick(2)
            em.permanent_failure(rec, key="order-1", error_code="UnknownSku", idempotency_status="DELETED")
        t.tick(30_000)
    return t


def permanent_final() -> Trail:
    t = Trail()
    for attempt in (1, 1):  # a duplicate delivery of an event whose permanent failure was recorded as final
        with t.invoke(sqs("m-1", attempt)) as (em, _):
            rec = em.records(sqs("m-1", attempt))[0]
            em.claimed(rec, key="order-1")
            t.tick(2)
            em.permanent_failure(rec, key="order-1", error_code="CardDeclined", idempotency_status="COMPLETED")
        t.tick(30_000)
    for attempt in (1, 2):  # a retryable failure retried, then done
        with t.invoke(sqs("m-2", attempt)) as (em, _):
            rec = em.records(sqs("m-2", attempt))[0]
            em.claimed(rec, key="order-2")
            t.tick(2)
            if attempt == 1:
                em.retryable_failure(rec, key="order-2", error_code="Throttled", idempotency_status="DELETED")
            else:
                em.succeeded(rec, key="order-2")
        t.tick(30_000)
    return t


# IW108 -----------------------------------------------------------------------
def _stream_deliveries(t: Trail, seq: str, results: list[str], gap_ms: int = 20_000) -> None:
    arrival = t.now
    for i, result in enumerate(results):
        with t.invoke(kinesis(seq, arrival), f"env-{i % 2}") as (em, _):
            rec = em.records(kinesis(seq, arrival))[0]
            em.claimed(rec, key=f"entry-{seq}")
            t.tick(2)
            if result == "fail":
                em.retryable_failure(rec, key=f"entry-{seq}", error_code="LedgerLocked", idempotency_status="DELETED")
            else:
                em.succeeded(rec, key=f"entry-{seq}")
        t.tick(gap_ms)


def poison_blocks_shard() -> Trail:
    t = Trail("ledger", "ApplyLedgerEntries")
    _stream_deliveries(t, "4959001", ["fail", "fail", "fail", "fail"])
    return t


def transient_stream_failure() -> Trail:
    t = Trail("ledger", "ApplyLedgerEntries")
    _stream_deliveries(t, "4959002", ["fail", "fail", "ok"])
    return t


def stream_without_failures() -> Trail:
    t = Trail("ledger", "ApplyLedgerEntries")
    _stream_deliveries(t, "4959003", ["ok"])
    return t


# IW109 -----------------------------------------------------------------------
def budget_ignored() -> Trail:
    t = Trail("payments", "CapturePayment", timeout_ms=15_000)
    _payment(t, [("claimed", 5), ("side_effect_started", 14_000)], remaining_ms=900, timeout=True)
    return t


def budget_respected() -> Trail:
    t = Trail("payments", "CapturePayment", timeout_ms=15_000)
    with t.invoke(eventbridge("e-0")) as (em, _):  # the handler's budget, stated by its abort record
        rec = em.record_for(eventbridge("e-0"))
        em.claimed(rec, key="pay-0")
        t.tick(13_500)
        with contextlib.suppress(TimeoutBudgetExceeded):  # recorded as timeout_budget_abort (required_time_ms)
            em.check_time_budget(2_000, record=rec, key="pay-0")
    t.tick(1_000)
    # started with 9 s left and timed out: the call hung, the budget was not the problem
    _payment(t, [("claimed", 5), ("side_effect_started", 10)], key="pay-1", event_id="e-1", remaining_ms=9_000,
             timeout=True)
    t.tick(1_000)
    _payment(t, [("claimed", 5), ("side_effect_started", 10), ("succeeded", 200)], key="pay-2", event_id="e-2",
             remaining_ms=800)  # little time left, but it finished
    return t


def no_report_lines() -> Trail:
    t = budget_ignored()
    t.events = [e for e in t.events if not e[2].startswith(("START", "REPORT"))]
    return t


def case_log_group(i: int) -> str:
    """The log group case ``i`` of :data:`CASES` is ingested under (every case its own function)."""
    return f"/aws/lambda/case-{i:02d}"


def all_cases_events() -> dict[str, list[dict[str, Any]]]:
    """Every case's trail under its own log group (:func:`case_log_group`): one body of evidence that one
    diagnosis judges all at once (the queries group by ``@log``, so the cases never mix)."""
    return {case_log_group(i): c.build().log_events() for i, c in enumerate(CASES)}


CASES: tuple[Case, ...] = (
    Case("key holds the request id", "IW101", "fail", key_from_request_id, 1),
    Case("key changes between deliveries", "IW101", "fail", key_changes_between_deliveries, 1),
    Case("fan-out and a changed command keep their keys", "IW101", "pass", stable_keys),
    Case("no event delivered twice", "IW101", "unknown", single_deliveries),
    Case("side effect before the claim, or without one", "IW102", "fail", side_effect_before_claim, 2),
    Case("claim first, or in the same millisecond", "IW102", "pass", claim_then_side_effect),
    Case("no side effect recorded", "IW102", "unknown", no_side_effects),
    Case("completed before the side effect", "IW103", "fail", completed_before_side_effect, 1),
    Case("completed after, also across invocations", "IW103", "pass", completed_after_side_effect),
    Case("no side effect recorded", "IW103", "unknown", no_side_effects),
    Case("caught only where completed, processed again elsewhere", "IW104", "fail", in_memory, 2),
    Case("a duplicate caught in another environment", "IW104", "pass", shared_record),
    Case("one log stream for every environment", "IW104", "unknown", single_stream_reprocessed),
    Case("processed again an hour later", "IW105", "fail", replay_outlived_record, 1),
    Case("duplicates caught up to 30 min later, a released key", "IW105", "pass", duplicates_caught_late),
    Case("no duplicate", "IW105", "unknown", no_redelivery),
    Case("redelivered 5 s after the receive, during processing", "IW106", "fail", redelivered_during_processing, 1),
    Case("an at-least-once copy, a crashed first delivery", "IW106", "pass", concurrent_copy_and_crash),
    Case("no redelivery", "IW106", "unknown", no_redelivery),
    Case("permanent failure on three deliveries", "IW107", "fail", permanent_retried, 1),
    Case("final permanent failure redelivered, a retried transient one", "IW107", "pass", permanent_final),
    Case("no permanent failure", "IW107", "unknown", no_redelivery),
    Case("four failed deliveries while the record ages", "IW108", "fail", poison_blocks_shard, 1),
    Case("two failures, then success", "IW108", "pass", transient_stream_failure),
    Case("no failure", "IW108", "unknown", stream_without_failures),
    Case("side effect with 900 ms left, then timeout", "IW109", "fail", budget_ignored, 1),
    Case("timeout with 9 s left under a 2 s budget; little time but finished", "IW109", "pass", budget_respected),
    Case("no REPORT lines", "IW109", "unknown", no_report_lines),
)
