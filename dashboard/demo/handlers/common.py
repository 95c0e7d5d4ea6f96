"""What the four demo handlers share: their dependencies and the claim step.

``claim`` is the idempotency protocol every handler follows, reporting each branch through
the emitter: CLAIMED -> ``claimed``; TAKEOVER -> ``stale_claim_takeover``; COMPLETED with the
same payload -> ``duplicate_completed``; IN_PROGRESS -> ``duplicate_in_progress``; different
payload -> ``payload_conflict``; store failure -> ``store_error``.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..exceptions import StoreError
from ..faults import AntiPattern, FaultPlan
from ..store import Claim, ClaimState, SqliteIdempotencyStore

__all__ = ["Charge", "Deps", "FakeProvider", "Gate", "claim"]


class Gate:
    """Pins the interleaving of a concurrent duplicate: the first holder of the claim waits in
    its dependency call until the second worker has tried to claim and finished.
    ``claimed_at_ms`` is the holder's simulated time at the claim (epoch ms)."""

    def __init__(self) -> None:
        self.claimed = threading.Event()
        self.release = threading.Event()
        self.claimed_at_ms = 0
        self.resume_at_ms = 0  # when the second worker's invocation ended (epoch ms)
        self.holder: str | None = None


@dataclass
class Charge:
    charge_id: str
    key: str
    amount: int
    status: str  # "succeeded" | "declined"
    replayed: bool = False


class FakeProvider:
    """A payment provider that honours idempotency keys (like Stripe's ``Idempotency-Key``):
    a second capture with the same key returns the first charge instead of charging again."""

    def __init__(self) -> None:
        self.charges: dict[str, Charge] = {}
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def capture(self, key: str, amount: int, decline: bool = False) -> Charge:
        with self._lock:
            existing = self.charges.get(key)
            if existing is not None:
                self.counts["replays"] += 1
                return Charge(existing.charge_id, key, existing.amount, existing.status, replayed=True)
            charge = Charge(f"ch_{len(self.charges) + 1:06d}", key, amount, "declined" if decline else "succeeded")
            self.charges[key] = charge
            self.counts["declines" if decline else "charges"] += 1
            return charge


@dataclass
class Deps:
    """Dependencies shared by all environments of the fleet (thread-safe)."""

    store: SqliteIdempotencyStore
    plan: FaultPlan
    provider: FakeProvider = field(default_factory=FakeProvider)
    lock_ms: dict[str, int] = field(default_factory=dict)  # function -> in-progress expiry (ms)
    backlog: tuple[int, int, float] = (0, 0, 1.0)  # (start ms, end ms, latency factor) of the stream backlog phase
    gates: dict[str, Gate] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)  # stored (hashed) key -> logged key (Powertools layer)
    dlq: Counter[str] = field(default_factory=Counter)
    anti_patterns: frozenset[AntiPattern] = frozenset()  # built into the handlers (``idemwatch demo --inject``)
    api_store: SqliteIdempotencyStore | None = None  # create-case-api's own store (short retention), else ``store``
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def injected(self, anti_pattern: AntiPattern) -> bool:
        """True when ``anti_pattern`` is built into the fleet (never in the default demo)."""
        return anti_pattern in self.anti_patterns

    def quarantine(self, destination: str) -> None:
        with self._lock:
            self.dlq[destination] += 1

    def latency_factor(self, now_ms: int) -> float:
        start, end, factor = self.backlog
        return factor if start <= now_ms < end else 1.0

    def hold_if_gated(self, item: str, ctx: Any) -> None:
        """If ``item`` is a pinned concurrent duplicate and this invocation claimed it first, signal
        and wait (at most 60 s of wall time) until the other worker is done. The wait is spent
        in this invocation's dependency call: its simulated clock resumes after the other
        invocation ended, so the logs read in a consistent order."""
        gate = self.gates.get(item)
        if gate is None or gate.claimed.is_set():
            return
        gate.holder, gate.claimed_at_ms = ctx.aws_request_id, ctx.now_ms
        gate.claimed.set()
        gate.release.wait(timeout=60)
        if gate.resume_at_ms > ctx.now_ms:
            ctx.spend(gate.resume_at_ms - ctx.now_ms)


def claim(em: Any, deps: Deps, function: str, record: Any, key: str, payload_hash: str, ctx: Any) -> Claim | None:
    """Claim ``key`` for this invocation and report the branch through ``em``.

    Returns the Claim, or None when the store failed (``store_error`` written; the caller
    treats the record as a retryable failure)."""
    ctx.spend(ctx.rng.uniform(2.0, 9.0))  # one conditional write to the table
    now = ctx.now_ms
    try:
        c = deps.store.claim(key, payload_hash, ctx.aws_request_id, now, deps.lock_ms[function])
    except StoreError:
        em.store_error(record, key=key, error_code="StoreUnavailable")
        return None
    if c.state is ClaimState.CLAIMED:
        em.claimed(record, key=key, expires_at_ms=c.record.in_progress_expires_at_ms)
    elif c.state is ClaimState.TAKEOVER:
        em.stale_claim_takeover(record, key=key, expires_at_ms=c.record.in_progress_expires_at_ms)
    elif c.state is ClaimState.DUPLICATE_COMPLETED:
        em.duplicate_completed(record, key=key)
    elif c.state is ClaimState.DUPLICATE_IN_PROGRESS:
        em.duplicate_in_progress(record, key=key)
    else:
        em.payload_conflict(record, key=key)
    return c
