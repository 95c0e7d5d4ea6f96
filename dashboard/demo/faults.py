"""Fault injection: configurable rates, and the per-item plan the simulated dependencies consult.

The traffic generator decides each source event's fate up front (seeded RNG) and registers
one-shot faults in a :class:`FaultPlan`; a simulated dependency asks ``plan.fire(item, fault)``
when it is called for that item. A fault is counted as *injected* when it fires, so the
ground truth only holds faults that really happened inside the simulated window.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, fields
from enum import Enum

__all__ = ["ANTI_PATTERNS", "INJECTION_FAULTS", "AntiPattern", "Fault", "FaultPlan", "FaultRates", "Injection"]


class Fault(str, Enum):
    """Injected faults (values are the keys of ``injected`` in demo-truth.json)."""

    # orders-consumer (SQS)
    SQS_DUPLICATE_DELIVERY = "sqs_duplicate_delivery"  # at-least-once: a processed message delivered again
    SQS_CONCURRENT_DUPLICATE = "sqs_concurrent_duplicate"  # one message in two batches at once (two environments)
    SQS_POISON = "sqs_poison"  # unparseable body: quarantined to the DLQ
    SQS_THROTTLED = "sqs_throttled"  # inventory call throttled once: batch item failure, redelivered
    SQS_CRASH_AFTER_CLAIM = "sqs_crash_after_claim"  # invocation times out after the claim
    # ledger-stream (Kinesis)
    STREAM_POISON = "stream_poison"
    STREAM_CRASH_AFTER_CLAIM = "stream_crash_after_claim"
    STREAM_DUPLICATE_RECORD = "stream_duplicate_record"  # producer retry: same entry written twice to the stream
    # create-case-api (API Gateway)
    API_CLIENT_RETRY = "api_client_retry"  # response lost, client retries same key + body
    API_KEY_REUSE_CONFLICT = "api_key_reuse_conflict"  # same key, different body
    API_DOUBLE_SUBMIT = "api_double_submit"  # two identical requests at the same time (two environments)
    API_VALIDATION_ERROR = "api_validation_error"  # HTTP 400
    API_DEPENDENCY_FAILURE = "api_dependency_failure"  # HTTP 503, client retries later
    API_CRASH_AFTER_CLAIM = "api_crash_after_claim"  # timeout after the claim, HTTP 502
    # payment-capture (EventBridge, asynchronous invocation)
    PAYMENT_AMBIGUOUS_COMMIT = "payment_ambiguous_commit"  # provider charged, response lost
    PAYMENT_TIMEOUT_BUDGET = "payment_timeout_budget"  # slow fraud check leaves too little time for the capture
    PAYMENT_DECLINED = "payment_declined"  # card declined: permanent
    PAYMENT_DUPLICATE_EVENT = "payment_duplicate_event"  # EventBridge delivers the same event twice
    # only with anti-patterns injected (AntiPattern): the events that show them
    SQS_VISIBILITY_EXPIRED = "sqs_visibility_expired"  # redelivered while the first delivery still processes it
    SQS_UNKNOWN_SKU = "sqs_unknown_sku"  # a permanent error the handler fails as retryable, on every delivery
    API_LATE_REPLAY = "api_late_replay"  # the client replays a lost response minutes later


INJECTION_FAULTS: frozenset[Fault] = frozenset({Fault.SQS_VISIBILITY_EXPIRED, Fault.SQS_UNKNOWN_SKU,
                                                Fault.API_LATE_REPLAY})
"""Faults armed only when anti-patterns are injected (the events that show them); never in the default demo."""


@dataclass(frozen=True)
class FaultRates:
    """Probability of each fault per source event (0..1), or a period (``*_every``: one per N).

    A source event gets at most one fault, so rates must sum to at most 1 per function.
    Defaults give every signal of the dashboard some data on a default-size run.
    """

    sqs_duplicate_delivery: float = 0.015
    sqs_concurrent_duplicate: float = 0.005
    sqs_poison_every: int = 150
    sqs_throttled: float = 0.006
    sqs_crash_after_claim: float = 0.003
    stream_poison_every: int = 400
    stream_crash_after_claim: float = 0.004
    stream_duplicate_record: float = 0.01
    api_client_retry: float = 0.03
    api_key_reuse_conflict: float = 0.015
    api_double_submit: float = 0.01
    api_validation_error: float = 0.04
    api_dependency_failure: float = 0.03
    api_crash_after_claim: float = 0.006
    api_crash_client_gives_up: float = 0.5  # fraction of crashed requests the client never retries
    payment_ambiguous_commit: float = 0.012
    payment_timeout_budget: float = 0.02
    payment_declined: float = 0.03
    payment_duplicate_event: float = 0.02

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name.endswith("_every"):
                if not isinstance(v, int) or v < 1:
                    raise ValueError(f"{f.name} must be an integer >= 1, got {v!r}")
            elif not 0.0 <= float(v) <= 1.0:
                raise ValueError(f"{f.name} must be within 0..1, got {v!r}")
        for prefix in ("sqs_", "stream_", "api_", "payment_"):
            total = sum(
                getattr(self, f.name) for f in fields(self)
                if f.name.startswith(prefix) and not f.name.endswith("_every") and f.name != "api_crash_client_gives_up"
            )
            if total > 1.0:
                raise ValueError(f"{prefix}* fault rates sum to {total:.3f} > 1 (one fault per event at most)")

    def scaled(self, factor: float) -> FaultRates:
        """A copy with every probability multiplied by ``factor`` (capped at 1; periods unchanged)."""
        kw = {}
        for f in fields(self):
            v = getattr(self, f.name)
            kw[f.name] = v if (f.name.endswith("_every") or f.name == "api_crash_client_gives_up") else min(1.0, v * factor)
        return FaultRates(**kw)


class FaultPlan:
    """One-shot faults armed per item (message id, entry id, request key); thread-safe.

    ``arm(item, fault)`` registers a fault; ``fire(item, fault)`` returns True exactly once per
    armed fault and counts it in ``injected`` per function.
    """

    def __init__(self) -> None:
        self._armed: dict[tuple[str, Fault], int] = {}
        self.injected: dict[str, Counter[str]] = {}
        self._lock = threading.Lock()

    def arm(self, item: str, fault: Fault, times: int = 1) -> None:
        with self._lock:
            self._armed[(item, fault)] = self._armed.get((item, fault), 0) + times

    def armed(self, item: str, fault: Fault) -> bool:
        with self._lock:
            return self._armed.get((item, fault), 0) > 0

    def fire(self, function: str, item: str, fault: Fault) -> bool:
        """Consume one armed ``fault`` for ``item``; True (and counted) if one was armed."""
        with self._lock:
            n = self._armed.get((item, fault), 0)
            if n <= 0:
                return False
            self._armed[(item, fault)] = n - 1
            self.injected.setdefault(function, Counter())[fault.value] += 1
            return True

    def take(self, item: str, fault: Fault) -> bool:
        """Consume one armed ``fault`` without counting it (the generator counts it when the
        follow-up it schedules is delivered inside the window)."""
        with self._lock:
            n = self._armed.get((item, fault), 0)
            if n <= 0:
                return False
            self._armed[(item, fault)] = n - 1
            return True

    def count(self, function: str, fault: Fault) -> None:
        """Count a fault injected by the traffic generator itself (e.g. a duplicate delivery)."""
        with self._lock:
            self.injected.setdefault(function, Counter())[fault.value] += 1


class AntiPattern(str, Enum):
    """The idempotency anti-patterns ``idemwatch demo --inject`` builds into one function each (values are the CLI
    names and the keys of ``anti_patterns`` in demo-truth.json)."""

    KEY_FROM_REQUEST_ID = "key-from-request-id"
    SIDE_EFFECT_BEFORE_CLAIM = "side-effect-before-claim"
    IN_MEMORY_DEDUPE = "in-memory-dedupe"
    SHORT_RETENTION = "short-retention"
    SHORT_VISIBILITY_TIMEOUT = "short-visibility-timeout"
    ENDLESS_PERMANENT_RETRIES = "endless-permanent-retries"
    BUDGET_IGNORED = "budget-ignored"


@dataclass(frozen=True)
class Injection:
    """Where one anti-pattern is built in: the ``function``, what changes there (``change``), and the
    ``idemwatch diagnose`` rule that must find it (``rule``, an id of ``alarms.diagnose.rules.RULES``)."""

    function: str
    rule: str
    change: str


ANTI_PATTERNS: dict[AntiPattern, Injection] = {
    AntiPattern.KEY_FROM_REQUEST_ID: Injection(
        "payment-capture", "IW101", "the idempotency key is built from the Lambda request id, not the payment id"),
    AntiPattern.SIDE_EFFECT_BEFORE_CLAIM: Injection(
        "payment-capture", "IW102", "the capture (side effect) runs before the key is claimed"),
    AntiPattern.IN_MEMORY_DEDUPE: Injection(
        "ledger-stream", "IW104", "keys are deduplicated in a dict of the execution environment, not the table; "
                                  "some producers write an entry again minutes later"),
    AntiPattern.SHORT_RETENTION: Injection(
        "create-case-api", "IW105", "idempotency records expire after 20 s; some clients replay a lost response "
                                    "30 s to 5 min later"),
    AntiPattern.SHORT_VISIBILITY_TIMEOUT: Injection(
        "orders-consumer", "IW106", "the queue's visibility timeout is 4 s, shorter than a slow reservation: the "
                                    "message comes back while it is still processed"),
    AntiPattern.ENDLESS_PERMANENT_RETRIES: Injection(
        "orders-consumer", "IW107", "an order for an unknown SKU fails permanently and is returned as a batch item "
                                    "failure, so SQS redelivers it until the DLQ takes it"),
    AntiPattern.BUDGET_IGNORED: Injection(
        "payment-capture", "IW109", "no time-budget check before the capture, which takes up to 3 s at the provider"),
}
"""Each anti-pattern's one function and the diagnose rule that must find it (the demo's ground truth)."""
