"""The demo fleet: traffic, event sources and a discrete-event scheduler over simulated time.

Sources model what AWS does between the producer and the handler:

- :class:`SqsSource` (orders-queue -> orders-consumer): batches of up to 10 visible messages,
  visibility timeout, ``ApproximateReceiveCount``, partial batch response, redrive to the DLQ
  after ``maxReceiveCount`` receives, at-least-once duplicate copies.
- :class:`StreamSource` (ledger-stream, Kinesis): per-shard order, one invocation per shard at a
  time, checkpoint retry from the first failed record, whole-batch retry on a timeout.
- :class:`ApiSource` (create-case-api): synchronous invokes and client behaviour (retry on
  502/503, ``Retry-After`` on 409, lost responses retried with the same key, double submits).
- :class:`AsyncSource` (payment-capture via EventBridge): asynchronous invokes with two retries
  (1 and 2 minutes later), then the on-failure destination.

Everything random comes from RNGs seeded from ``seed``; the only threads are the pinned
concurrent duplicates, whose interleaving is fixed by a :class:`~.handlers.common.Gate`.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import itertools
import json
import math
import random
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .constants import (
    CREATE_CASE_API,
    FUNCTIONS,
    LEDGER_STREAM,
    OPERATIONS,
    ORDERS_CONSUMER,
    ORDERS_DLQ,
    PAYMENT_CAPTURE,
    PAYMENT_DLQ,
    TRAFFIC_SHARE,
)
from .events import (
    api_event,
    eventbridge_event,
    kinesis_event,
    kinesis_record,
    request_id,
    sqs_event,
    sqs_record,
)
from .faults import AntiPattern, Fault, FaultPlan, FaultRates
from .handlers.common import Deps, Gate
from .runtime import FunctionConfig, FunctionPool, Invocation

__all__ = ["Fleet", "FleetConfig", "Scheduler"]


@dataclass(frozen=True)
class FleetConfig:
    """Sizes and AWS settings of the simulated stack. Times in ms unless suffixed ``_s``."""

    seed: int
    events: int
    start_ms: int
    duration_s: int
    rates: FaultRates = field(default_factory=FaultRates)
    # orders-queue event source mapping
    sqs_batch_size: int = 10
    sqs_batching_window_ms: int = 1_000
    sqs_visibility_timeout_s: int = 60  # 6 x the function timeout (AWS guidance)
    sqs_max_receive_count: int = 5
    # ledger-stream event source mapping
    stream_shards: int = 2
    stream_batch_size: int = 10
    stream_retry_delay_ms: int = 15_000
    backlog_phase: tuple[float, float] = (0.55, 0.66)  # fraction of the window with a slow ledger table
    backlog_latency_factor: float = 260.0
    backlog_traffic_share: float = 0.35  # share of ledger records produced during the phase
    # an inventory throttling incident: orders arriving in this fraction of the window are throttled
    # with this probability (on top of the baseline rate), so retries and late records cluster in time
    orders_incident: tuple[float, float, float] = (0.22, 0.27, 0.3)
    # asynchronous invocation retries (Lambda: 2 retries, ~1 and ~2 minutes apart)
    async_retry_delays_ms: tuple[int, ...] = (60_000, 120_000)
    # anti-patterns built into the handlers (idemwatch demo --inject); empty: the default demo, unchanged
    anti_patterns: frozenset[AntiPattern] = frozenset()
    injected_visibility_timeout_s: int = 4  # short-visibility-timeout: shorter than a slow reservation
    injected_record_ttl_ms: int = 20_000  # short-retention: create-case-api's records expire this soon
    injected_rates: tuple[float, float, float] = (0.03, 0.01, 0.04)  # slow reservations, unknown SKUs, late replays

    def __post_init__(self) -> None:
        if self.events < 1:
            raise ValueError(f"events must be >= 1, got {self.events}")
        if self.duration_s < 60:
            raise ValueError(f"duration_s must be >= 60 s, got {self.duration_s}")

    @property
    def end_ms(self) -> int:
        return self.start_ms + self.duration_s * 1000


FUNCTION_CONFIGS: dict[str, FunctionConfig] = {
    ORDERS_CONSUMER: FunctionConfig(ORDERS_CONSUMER, OPERATIONS[ORDERS_CONSUMER], timeout_s=10, memory_mb=256),
    LEDGER_STREAM: FunctionConfig(LEDGER_STREAM, OPERATIONS[LEDGER_STREAM], timeout_s=120, memory_mb=512),
    CREATE_CASE_API: FunctionConfig(CREATE_CASE_API, OPERATIONS[CREATE_CASE_API], timeout_s=10, memory_mb=512),
    PAYMENT_CAPTURE: FunctionConfig(PAYMENT_CAPTURE, OPERATIONS[PAYMENT_CAPTURE], timeout_s=15, memory_mb=256),
}

IN_PROGRESS_LOCK_MS: dict[str, int] = {
    # A fixed in-progress expiry longer than the function timeout: a crashed claim stays stuck
    # until it expires (Powertools derives it from the remaining time instead when the Lambda
    # context is registered).
    ORDERS_CONSUMER: 30_000,  # shorter than the visibility timeout: a redelivered crash takes over
    LEDGER_STREAM: 180_000,
    CREATE_CASE_API: 60_000,
    PAYMENT_CAPTURE: 120_000,
}


class Scheduler:
    """A discrete-event loop: ``at(t_ms, tag, fn)`` runs ``fn(t_ms)`` in time order (ties: insertion order)."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, str, Callable[[int], None]]] = []
        self._seq = itertools.count()

    def at(self, t_ms: int, tag: str, fn: Callable[[int], None]) -> None:
        heapq.heappush(self._heap, (int(t_ms), next(self._seq), tag, fn))

    def run(self, until_ms: int) -> Counter[str]:
        """Run every event scheduled at or before ``until_ms``; returns the tags of those left over."""
        while self._heap and self._heap[0][0] <= until_ms:
            t, _, _, fn = heapq.heappop(self._heap)
            fn(t)
        return Counter(tag for _, _, tag, _ in self._heap)


def _arrivals(rng: random.Random, n: int, start_ms: int, duration_ms: int, phase_shift: float,
              burst: tuple[float, float, float] | None = None) -> list[int]:
    """``n`` arrival times (epoch ms, sorted) with a smooth daily-like wave (rate 0.55x..1.45x) and an
    optional burst ``(from, to, share)``: ``share`` of the arrivals fall in that fraction of the window."""
    out: list[int] = []
    n_burst = round(n * burst[2]) if burst else 0
    while len(out) < n - n_burst:
        x = rng.random()
        rate = 1.0 + 0.45 * math.sin(2 * math.pi * (x * 1.3 + phase_shift))
        if rng.random() * 1.45 <= rate:
            out.append(start_ms + int(x * duration_ms))
    if burst:
        lo, hi, _ = burst
        out.extend(start_ms + int(rng.uniform(lo, hi) * duration_ms) for _ in range(n_burst))
    out.sort()
    return out


def _run_pinned_pair(pool: FunctionPool, deps: Deps, item: str, t_ms: int, first: tuple[Any, str],
                     second: tuple[Any, str], delay_ms: int) -> tuple[Invocation, Invocation]:
    """Two environments process the same event at once: ``first`` runs in a worker thread and claims;
    ``second`` starts ``delay_ms`` after that claim (simulated time) while ``first`` is still in flight."""
    gate = Gate()
    deps.gates[item] = gate
    env_a = pool.acquire(t_ms)
    env_b = pool.acquire(t_ms, exclude=(env_a,))
    box: dict[str, Invocation] = {}
    worker = threading.Thread(target=lambda: box.__setitem__("a", pool.invoke(first[0], t_ms, first[1], env_a)),
                              name=f"env-{pool.config.name}-{env_a.index}")
    worker.start()
    try:
        if not gate.claimed.wait(timeout=60):
            raise RuntimeError(f"pinned duplicate {item!r}: the first worker never claimed it")
        inv_b = pool.invoke(second[0], gate.claimed_at_ms + delay_ms, second[1], env_b)
        gate.resume_at_ms = inv_b.end_ms + 1
    finally:
        gate.release.set()
        worker.join()
        deps.gates.pop(item, None)
    return box["a"], inv_b


# --------------------------------------------------------------------------- SQS
@dataclass
class _Copy:
    message_id: str
    body: str
    sent_ms: int
    receive_count: int = 0
    first_receive_ms: int | None = None
    duplicate: bool = False  # an at-least-once extra copy of a message already processed
    poison: bool = False


class SqsSource:
    def __init__(self, fleet: Fleet) -> None:
        self.f = fleet
        self.cfg = fleet.cfg
        self.rng = random.Random(f"{fleet.cfg.seed}:sqs")
        self.pool = fleet.pools[ORDERS_CONSUMER]
        short = AntiPattern.SHORT_VISIBILITY_TIMEOUT in fleet.cfg.anti_patterns
        self.visibility_ms = 1000 * (fleet.cfg.injected_visibility_timeout_s if short else
                                     fleet.cfg.sqs_visibility_timeout_s)
        self._visible: list[tuple[int, int, _Copy]] = []
        self._seq = itertools.count()
        self._poll_at: int | None = None

    def send(self, t: int, copy: _Copy) -> None:
        heapq.heappush(self._visible, (t, next(self._seq), copy))
        self._schedule_poll(t + self.rng.randint(50, self.cfg.sqs_batching_window_ms))

    def _schedule_poll(self, t: int) -> None:
        if self._poll_at is not None and self._poll_at <= t:
            return
        self._poll_at = t
        self.f.sched.at(t, ORDERS_CONSUMER, self._poll)

    def _poll(self, t: int) -> None:
        if self._poll_at != t:
            return  # superseded by an earlier poll
        self._poll_at = None
        ready: list[_Copy] = []
        while self._visible and self._visible[0][0] <= t:
            ready.append(heapq.heappop(self._visible)[2])
        for i in range(0, len(ready), self.cfg.sqs_batch_size):
            self._invoke(t, ready[i:i + self.cfg.sqs_batch_size])
        if self._visible:
            self._schedule_poll(max(t + 1, self._visible[0][0] + self.rng.randint(50, self.cfg.sqs_batching_window_ms)))

    def _invoke(self, t: int, batch: list[_Copy]) -> None:
        plan, fn = self.f.plan, ORDERS_CONSUMER
        kept = []
        for c in batch:  # SQS redrives a message received more than maxReceiveCount times
            if c.receive_count >= self.cfg.sqs_max_receive_count:
                self.f.deps.quarantine(ORDERS_DLQ)
            else:
                kept.append(c)
        if not kept:
            return
        # a crashing message is put first so nothing completes before the crash in that batch
        kept.sort(key=lambda c: not plan.armed(c.message_id, Fault.SQS_CRASH_AFTER_CLAIM))
        for c in kept:
            c.receive_count += 1
            c.first_receive_ms = c.first_receive_ms or t
        twin = next((c for c in kept if c.receive_count == 1 and plan.armed(c.message_id, Fault.SQS_CONCURRENT_DUPLICATE)), None)
        fault = Fault.SQS_CONCURRENT_DUPLICATE
        if twin is None and self.f.cfg.anti_patterns:  # short-visibility-timeout: a slow reservation comes back
            twin = next((c for c in kept if c.receive_count == 1
                         and plan.armed(c.message_id, Fault.SQS_VISIBILITY_EXPIRED)), None)
            fault = Fault.SQS_VISIBILITY_EXPIRED
        if twin is not None and any(plan.armed(c.message_id, Fault.SQS_CRASH_AFTER_CLAIM) for c in kept):
            twin = None  # keep the pinned pair simple: no crash in the same batch
        event = sqs_event([self._record(c) for c in kept])
        rid = request_id(self.rng)
        if twin is None:
            inv = self.pool.invoke(event, t, rid)
            self._settle(t, kept, inv)
            return
        plan.fire(fn, twin.message_id, fault)
        # an at-least-once copy comes 1-40 ms after the claim; a message whose visibility timeout expired during
        # its slow reservation comes back a visibility timeout later, while the first delivery still holds it
        expired = fault is Fault.SQS_VISIBILITY_EXPIRED
        second = _Copy(twin.message_id, twin.body, twin.sent_ms, receive_count=twin.receive_count + 1,
                       first_receive_ms=t, duplicate=not expired)
        inv_a, inv_b = _run_pinned_pair(self.pool, self.f.deps, twin.message_id, t, (event, rid),
                                        (sqs_event([self._record(second)]), request_id(self.rng)),
                                        delay_ms=self.visibility_ms if expired else self.rng.randint(1, 40))
        self._settle(t, kept, inv_a)
        self._settle(inv_b.start_ms if expired else t, [second], inv_b)  # the redelivery's own receive

    def _record(self, c: _Copy) -> dict[str, Any]:
        return sqs_record(c.message_id, c.body, c.sent_ms, c.receive_count, c.first_receive_ms or c.sent_ms)

    def _settle(self, t: int, batch: list[_Copy], inv: Invocation) -> None:
        if inv.timed_out or inv.error is not None or not isinstance(inv.result, dict):
            failed = {c.message_id for c in batch}  # no partial response: the whole batch comes back
        else:
            failed = {f["itemIdentifier"] for f in inv.result.get("batchItemFailures", [])}
        vis = t + self.visibility_ms
        for c in batch:
            if c.message_id in failed:
                self.send(vis, c)
                continue
            if c.duplicate:
                self.f.plan.count(ORDERS_CONSUMER, Fault.SQS_DUPLICATE_DELIVERY)
            if c.poison:
                self.f.plan.count(ORDERS_CONSUMER, Fault.SQS_POISON)
            if not c.duplicate and self.f.plan.take(c.message_id, Fault.SQS_DUPLICATE_DELIVERY):
                # the delete did not reach every replica: the message is delivered once more later
                again = _Copy(c.message_id, c.body, c.sent_ms, receive_count=c.receive_count,
                              first_receive_ms=c.first_receive_ms, duplicate=True)
                self.send(inv.end_ms + self.rng.randint(1_000, 60_000), again)


# --------------------------------------------------------------------------- Kinesis
@dataclass
class _StreamRecord:
    arrival_ms: int
    sequence_number: str
    partition_key: str
    data: Any
    entry_id: str
    poison: bool = False
    duplicate: bool = False


class _Shard:
    def __init__(self, shard_id: str) -> None:
        self.shard_id = shard_id
        self.records: list[_StreamRecord] = []
        self.position = 0
        self.busy_until = 0
        self.poll_at: int | None = None
        self.retry_delay_ms = 0


class StreamSource:
    def __init__(self, fleet: Fleet) -> None:
        self.f = fleet
        self.cfg = fleet.cfg
        self.rng = random.Random(f"{fleet.cfg.seed}:kinesis")
        self.pool = fleet.pools[LEDGER_STREAM]
        self.shards = [_Shard(f"shardId-{i:012d}") for i in range(self.cfg.stream_shards)]
        self._seq = itertools.count(1)

    def put(self, t: int, entry: Any, partition_key: str, entry_id: str, poison: bool = False,
            duplicate: bool = False) -> None:
        idx = int(hashlib.md5(partition_key.encode()).hexdigest(), 16) % len(self.shards)
        shard = self.shards[idx]
        seq = f"4959{idx:02d}{next(self._seq):050d}"
        shard.records.append(_StreamRecord(t, seq, partition_key, entry, entry_id, poison, duplicate))
        if shard.poll_at is None and shard.busy_until <= t:
            self._schedule(shard, t + self.rng.randint(100, 1_000))  # pollers read each shard about once a second

    def put_at(self, entry: Any, partition_key: str, entry_id: str, poison: bool, duplicate: bool, t: int) -> None:
        """:meth:`put` with the time last (a scheduler callback)."""
        self.put(t, entry, partition_key, entry_id, poison=poison, duplicate=duplicate)

    def _schedule(self, shard: _Shard, t: int) -> None:
        shard.poll_at = t
        self.f.sched.at(t, LEDGER_STREAM, functools.partial(self._poll, shard))

    def _poll(self, shard: _Shard, t: int) -> None:  # (shard, now) so functools.partial can bind the shard
        shard.poll_at = None
        ready = [r for r in shard.records[shard.position:shard.position + self.cfg.stream_batch_size]
                 if r.arrival_ms <= t]
        if not ready:
            return
        event = kinesis_event([kinesis_record(shard.shard_id, r.sequence_number, r.partition_key, r.data,
                                              r.arrival_ms) for r in ready])
        inv = self.pool.invoke(event, t, request_id(self.rng))
        shard.busy_until = inv.end_ms
        if inv.timed_out or inv.error is not None or not isinstance(inv.result, dict):
            consumed = 0
        else:
            failures = [f["itemIdentifier"] for f in inv.result.get("batchItemFailures", [])]
            seqs = [r.sequence_number for r in ready]
            consumed = min((seqs.index(s) for s in failures if s in seqs), default=len(ready))
        for r in ready[:consumed]:
            if r.poison:
                self.f.plan.count(LEDGER_STREAM, Fault.STREAM_POISON)
            if r.duplicate:
                self.f.plan.count(LEDGER_STREAM, Fault.STREAM_DUPLICATE_RECORD)
        shard.position += consumed
        if consumed < len(ready):  # retry from the checkpoint, backing off while a claim blocks the shard
            shard.retry_delay_ms = min(max(self.cfg.stream_retry_delay_ms, shard.retry_delay_ms * 2), 120_000)
            self._schedule(shard, inv.end_ms + shard.retry_delay_ms)
        else:
            shard.retry_delay_ms = 0
            if shard.position < len(shard.records):
                nxt = shard.records[shard.position].arrival_ms
                self._schedule(shard, max(inv.end_ms, nxt) + self.rng.randint(20, 300))


# --------------------------------------------------------------------------- API Gateway
@dataclass
class _ApiRequest:
    key: str
    body: dict[str, Any]
    correlation_id: str
    give_up_after_crash: bool = False
    attempts: int = 0
    kind: str = "original"  # original | retry | conflict | replay


class ApiSource:
    MAX_ATTEMPTS = 4

    def __init__(self, fleet: Fleet) -> None:
        self.f = fleet
        self.rng = random.Random(f"{fleet.cfg.seed}:api")
        self.pool = fleet.pools[CREATE_CASE_API]

    def send(self, t: int, req: _ApiRequest) -> None:
        self.f.sched.at(t, CREATE_CASE_API, lambda now: self._call(now, req))

    def _event(self, req: _ApiRequest, t: int) -> tuple[dict[str, Any], str]:
        rid = request_id(self.rng)
        return api_event(request_id(self.rng), req.key, req.body, t, req.correlation_id), rid

    def _call(self, t: int, req: _ApiRequest) -> None:
        plan = self.f.plan
        req.attempts += 1
        if req.kind == "retry":
            plan.count(CREATE_CASE_API, Fault.API_CLIENT_RETRY)
        elif req.kind == "replay":
            plan.count(CREATE_CASE_API, Fault.API_LATE_REPLAY)
        elif req.kind == "conflict":
            plan.count(CREATE_CASE_API, Fault.API_KEY_REUSE_CONFLICT)
        elif req.attempts == 1 and "subject" not in req.body:
            plan.count(CREATE_CASE_API, Fault.API_VALIDATION_ERROR)
        event, rid = self._event(req, t)
        if req.attempts == 1 and plan.fire(CREATE_CASE_API, req.key, Fault.API_DOUBLE_SUBMIT):
            event2, rid2 = self._event(req, t)
            inv, _ = _run_pinned_pair(self.pool, self.f.deps, req.key, t, (event, rid), (event2, rid2),
                                      delay_ms=self.rng.randint(5, 120))
            # the double-clicked second request got 409 in progress; the UI keeps the first answer
        else:
            inv = self.pool.invoke(event, t, rid)
        self._client(req, inv)

    def _client(self, req: _ApiRequest, inv: Invocation) -> None:
        status = (inv.result or {}).get("statusCode") if isinstance(inv.result, dict) else None
        end = inv.end_ms
        if inv.timed_out:  # API Gateway answered 502/504
            if not req.give_up_after_crash and req.attempts < self.MAX_ATTEMPTS:
                self.send(end + self.rng.randint(1_000, 3_000), req)
            return
        if status in (503, 409) and req.attempts < self.MAX_ATTEMPTS:
            headers = inv.result.get("headers", {})
            if status == 409 and json.loads(inv.result["body"]).get("error") != "RequestInProgress":
                return  # key reused with another body: the client's bug, not retried
            self.send(end + int(headers.get("Retry-After", "2")) * 1000 + self.rng.randint(0, 500), req)
            return
        if status == 201 and req.kind == "original" and req.attempts == 1:
            if self.f.plan.take(req.key, Fault.API_CLIENT_RETRY):
                again = _ApiRequest(req.key, req.body, req.correlation_id, kind="retry")
                self.send(end + self.rng.randint(300, 5_000), again)  # the response was lost on the way back
            elif self.f.cfg.anti_patterns and self.f.plan.take(req.key, Fault.API_LATE_REPLAY):
                # short-retention: a client replays the lost response after the record expired
                again = _ApiRequest(req.key, req.body, req.correlation_id, kind="replay")
                self.send(end + self.f.inject_rng.randint(30_000, 300_000), again)
            elif self.f.plan.take(req.key, Fault.API_KEY_REUSE_CONFLICT):
                other = dict(req.body, subject=req.body["subject"] + " (edited)")
                self.send(end + self.rng.randint(10_000, 1_200_000),
                          _ApiRequest(req.key, other, req.correlation_id, kind="conflict"))


# --------------------------------------------------------------------------- EventBridge -> async invoke
class AsyncSource:
    def __init__(self, fleet: Fleet) -> None:
        self.f = fleet
        self.rng = random.Random(f"{fleet.cfg.seed}:async")
        self.pool = fleet.pools[PAYMENT_CAPTURE]

    def send(self, t: int, event: dict[str, Any], attempt: int = 0, duplicate: bool = False) -> None:
        self.f.sched.at(t + self.rng.randint(20, 400), PAYMENT_CAPTURE,
                        lambda now: self._invoke(now, event, attempt, duplicate))

    def _invoke(self, t: int, event: dict[str, Any], attempt: int, duplicate: bool) -> None:
        if duplicate:
            self.f.plan.count(PAYMENT_CAPTURE, Fault.PAYMENT_DUPLICATE_EVENT)
        inv = self.pool.invoke(event, t, request_id(self.rng))
        if inv.timed_out or inv.error is not None:
            delays = self.f.cfg.async_retry_delays_ms
            if attempt < len(delays):
                self.send(inv.end_ms + delays[attempt], event, attempt + 1)
            else:
                self.f.deps.quarantine(PAYMENT_DLQ)
            return
        pid = str(event["detail"]["payment_id"])
        if not duplicate and self.f.plan.take(pid, Fault.PAYMENT_DUPLICATE_EVENT):
            self.send(inv.end_ms + self.rng.randint(1_000, 60_000), event, duplicate=True)


# --------------------------------------------------------------------------- the fleet
class Fleet:
    """Builds the traffic for ``cfg`` and runs it through the four sources."""

    def __init__(self, cfg: FleetConfig, deps: Deps, pools: dict[str, FunctionPool]) -> None:
        self.cfg, self.deps, self.pools = cfg, deps, pools
        self.plan: FaultPlan = deps.plan
        self.inject_rng = random.Random(f"{cfg.seed}:inject")  # anti-patterns only: the default draws stay as they are
        self.sched = Scheduler()
        self.sqs = SqsSource(self)
        self.stream = StreamSource(self)
        self.api = ApiSource(self)
        self.async_ = AsyncSource(self)

    def _count(self, function: str) -> int:
        return max(1, round(self.cfg.events * TRAFFIC_SHARE[function]))

    def _pick(self, rng: random.Random, choices: list[tuple[Fault | None, float]]) -> Fault | None:
        x, acc = rng.random(), 0.0
        for fault, p in choices:
            acc += p
            if x < acc:
                return fault
        return None

    def generate(self) -> None:
        """Schedule every source event of the run (arrival times and fates from seeded RNGs)."""
        cfg, r = self.cfg, self.cfg.rates
        dur = cfg.duration_s * 1000
        # orders-queue
        rng = random.Random(f"{cfg.seed}:orders")
        for i, t in enumerate(_arrivals(rng, self._count(ORDERS_CONSUMER), cfg.start_ms, dur, 0.0)):
            mid = request_id(rng)
            poison = (i + 1) % r.sqs_poison_every == 0
            if poison:
                body = '{"order_id": "o-' + str(100000 + i) + '", "items": [{"sku": "SKU-1", "qty": 1}'  # truncated
            else:
                items = [{"sku": f"SKU-{rng.randint(1, 400)}", "qty": rng.randint(1, 3)} for _ in range(rng.randint(1, 4))]
                body = json.dumps({"order_id": f"o-{100000 + i}", "customer_id": f"c-{rng.randint(1, 900)}",
                                   "items": items}, sort_keys=True)
                fault = self._pick(rng, [(Fault.SQS_DUPLICATE_DELIVERY, r.sqs_duplicate_delivery),
                                         (Fault.SQS_CONCURRENT_DUPLICATE, r.sqs_concurrent_duplicate),
                                         (Fault.SQS_THROTTLED, r.sqs_throttled),
                                         (Fault.SQS_CRASH_AFTER_CLAIM, r.sqs_crash_after_claim)])
                lo, hi, p_incident = cfg.orders_incident
                in_incident = cfg.start_ms + lo * dur <= t < cfg.start_ms + hi * dur
                if fault is None and in_incident and rng.random() < p_incident:
                    fault = Fault.SQS_THROTTLED
                if fault is not None:
                    self.plan.arm(mid, fault)
                self._inject_order(mid, fault)
            self.sqs.send(t, _Copy(mid, body, t, poison=poison))
        # ledger-stream (with the backlog phase's burst of traffic)
        rng = random.Random(f"{cfg.seed}:ledger")
        lo, hi = cfg.backlog_phase
        self.deps.backlog = (cfg.start_ms + int(lo * dur), cfg.start_ms + int(hi * dur), cfg.backlog_latency_factor)
        arrivals = _arrivals(rng, self._count(LEDGER_STREAM), cfg.start_ms, dur, 0.35,
                             burst=(lo, hi, cfg.backlog_traffic_share))
        for i, t in enumerate(arrivals):
            account = f"acct-{rng.randint(1, 60):03d}"
            entry_id = f"le-{200000 + i}"
            poison = (i + 1) % r.stream_poison_every == 0
            data: Any = "\x00\x17binary-garbage" if poison else {
                "entry_id": entry_id, "account": account, "amount_cents": rng.randint(-50_000, 90_000)}
            if not poison:
                fault = self._pick(rng, [(Fault.STREAM_CRASH_AFTER_CLAIM, r.stream_crash_after_claim),
                                         (Fault.STREAM_DUPLICATE_RECORD, r.stream_duplicate_record)])
                if fault is Fault.STREAM_CRASH_AFTER_CLAIM:
                    self.plan.arm(entry_id, fault)
                elif fault is Fault.STREAM_DUPLICATE_RECORD:  # the producer's retry wrote it twice
                    dt = rng.randint(50, 2_000)
                    self.sched.at(t + dt, LEDGER_STREAM,
                                  functools.partial(self.stream.put_at, data, account, entry_id, False, True))
                elif AntiPattern.IN_MEMORY_DEDUPE in cfg.anti_patterns and self.inject_rng.random() < 0.03:
                    # in-memory-dedupe: producers that retry after their own timeout write the entry again minutes
                    # later, when another execution environment may read the shard
                    dt = self.inject_rng.randint(20_000, 600_000)
                    self.sched.at(t + dt, LEDGER_STREAM,
                                  functools.partial(self.stream.put_at, data, account, entry_id, False, True))
            self.sched.at(t, LEDGER_STREAM, functools.partial(self.stream.put_at, data, account, entry_id, poison, False))
        # create-case-api
        rng = random.Random(f"{cfg.seed}:cases")
        for i, t in enumerate(_arrivals(rng, self._count(CREATE_CASE_API), cfg.start_ms, dur, 0.6)):
            key = request_id(rng)
            case: dict[str, Any] = {"customer_id": f"c-{rng.randint(1, 900)}", "subject": rng.choice(
                ["Parcel damaged", "Refund request", "Wrong size", "Late delivery", "Invoice copy"]),
                "channel": rng.choice(["web", "app", "phone"])}
            fault = self._pick(rng, [(Fault.API_CLIENT_RETRY, r.api_client_retry),
                                     (Fault.API_KEY_REUSE_CONFLICT, r.api_key_reuse_conflict),
                                     (Fault.API_DOUBLE_SUBMIT, r.api_double_submit),
                                     (Fault.API_VALIDATION_ERROR, r.api_validation_error),
                                     (Fault.API_DEPENDENCY_FAILURE, r.api_dependency_failure),
                                     (Fault.API_CRASH_AFTER_CLAIM, r.api_crash_after_claim)])
            give_up = False
            if fault is None and AntiPattern.SHORT_RETENTION in cfg.anti_patterns \
                    and self.inject_rng.random() < cfg.injected_rates[2]:
                self.plan.arm(key, Fault.API_LATE_REPLAY)
            if fault is Fault.API_VALIDATION_ERROR:
                del case["subject"]
            elif fault is not None:
                self.plan.arm(key, fault)
                give_up = fault is Fault.API_CRASH_AFTER_CLAIM and rng.random() < r.api_crash_client_gives_up
            self.api.send(t, _ApiRequest(key, case, f"corr-{request_id(rng)[:13]}", give_up_after_crash=give_up))
        # payment-capture
        rng = random.Random(f"{cfg.seed}:payments")
        for i, t in enumerate(_arrivals(rng, self._count(PAYMENT_CAPTURE), cfg.start_ms, dur, 0.2)):
            pid = f"pay-{300000 + i}"
            detail = {"payment_id": pid, "order_id": f"o-{rng.randint(100000, 999999)}",
                      "amount_cents": rng.randint(500, 250_000), "currency": "EUR"}
            fault = self._pick(rng, [(Fault.PAYMENT_AMBIGUOUS_COMMIT, r.payment_ambiguous_commit),
                                     (Fault.PAYMENT_TIMEOUT_BUDGET, r.payment_timeout_budget),
                                     (Fault.PAYMENT_DECLINED, r.payment_declined),
                                     (Fault.PAYMENT_DUPLICATE_EVENT, r.payment_duplicate_event)])
            if fault is not None:
                self.plan.arm(pid, fault)
            self.async_.send(t, eventbridge_event(request_id(rng), detail, t))

    def _inject_order(self, message_id: str, fault: Fault | None) -> None:
        """Arm the orders that show orders-consumer's injected anti-patterns (none in the default demo): slow
        reservations redelivered during processing, orders for an unknown SKU."""
        ap, (slow, unknown, _) = self.cfg.anti_patterns, self.cfg.injected_rates
        if fault is not None or not ap:
            return
        x = self.inject_rng.random()
        if AntiPattern.SHORT_VISIBILITY_TIMEOUT in ap and x < slow:
            self.plan.arm(message_id, Fault.SQS_VISIBILITY_EXPIRED)
        elif AntiPattern.ENDLESS_PERMANENT_RETRIES in ap and slow <= x < slow + unknown:
            self.plan.arm(message_id, Fault.SQS_UNKNOWN_SKU)

    def run(self) -> Counter[str]:
        """Generate and simulate the window; returns what was still scheduled after its end, by function."""
        self.generate()
        pending = self.sched.run(self.cfg.end_ms)
        return Counter({fn: pending.get(fn, 0) for fn in FUNCTIONS})
