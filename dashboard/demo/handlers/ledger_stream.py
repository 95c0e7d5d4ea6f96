"""ledger-stream: Kinesis consumer of ledger entries, in per-shard order.

Records are applied in sequence order. A poison record is quarantined to the on-failure
destination and skipped (it must not block the shard). When an entry is IN_PROGRESS in
another (crashed) invocation, processing stops there and that record is reported as the
checkpoint in ``batchItemFailures``: Lambda retries the shard from it
(https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html),
so the shard waits until the stale claim expires and is taken over -- record age climbs.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from ..constants import LEDGER_STREAM, OPERATIONS
from ..events import payload_hash
from ..exceptions import PoisonRecordError
from ..faults import AntiPattern, Fault
from ..store import ClaimState
from .common import claim

FUNCTION = LEDGER_STREAM
FAILURE_DESTINATION = "ledger-stream-failures"


def make_handler(em: Any, env: Any) -> Callable[[Any, Any], Any]:
    deps = env.deps
    if deps.injected(AntiPattern.IN_MEMORY_DEDUPE):
        return _in_memory_handler(em, env)

    @em.handler(operation=OPERATIONS[FUNCTION])
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        for index, rec in enumerate(em.records(event)):
            try:
                entry = json.loads(base64.b64decode(rec.raw["kinesis"]["data"]))
                entry_id, amount = str(entry["entry_id"]), int(entry["amount_cents"])
            except (ValueError, KeyError, TypeError):
                em.poison_message(rec, error_code=PoisonRecordError.error_code)
                deps.quarantine(FAILURE_DESTINATION)
                continue
            key = f"{FUNCTION}#entry-{entry_id}"
            c = claim(em, deps, FUNCTION, rec, key, payload_hash(entry), context)
            if c is None or c.state is ClaimState.DUPLICATE_IN_PROGRESS:
                return em.batch_item_failures([rec])  # checkpoint: retry the shard from this record
            if c.state in (ClaimState.DUPLICATE_COMPLETED, ClaimState.CONFLICT):
                continue
            factor = deps.latency_factor(context.now_ms)
            context.spend(context.rng.uniform(8.0, 25.0) * factor)  # apply the entry to the ledger table
            # injected on the first record of a batch only, so no completed record is replayed by the
            # retry and every duplicate_completed is an injected duplicate record
            if index == 0 and deps.plan.fire(FUNCTION, entry_id, Fault.STREAM_CRASH_AFTER_CLAIM):
                context.hang()
            deps.store.complete(key, context.aws_request_id, {"applied": amount}, context.now_ms)
            em.succeeded(rec, key=key)
        return em.batch_item_failures([])

    return handler


def _in_memory_handler(em: Any, env: Any) -> Callable[[Any, Any], Any]:
    """The in-memory-dedupe anti-pattern: the same handler, but the keys it has seen live in a dict of this
    execution environment instead of the idempotency table. A copy of an entry that lands in this environment is
    caught; one that lands in another environment (or after this one is recycled) is applied again."""
    deps = env.deps
    seen: dict[str, str] = {}  # key -> IN_PROGRESS | COMPLETED, in this environment's memory only

    @em.handler(operation=OPERATIONS[FUNCTION])
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        for index, rec in enumerate(em.records(event)):
            try:
                entry = json.loads(base64.b64decode(rec.raw["kinesis"]["data"]))
                entry_id = str(entry["entry_id"])
                int(entry["amount_cents"])  # validated as the table handler does
            except (ValueError, KeyError, TypeError):
                em.poison_message(rec, error_code=PoisonRecordError.error_code)
                deps.quarantine(FAILURE_DESTINATION)
                continue
            key = f"{FUNCTION}#entry-{entry_id}"
            context.spend(context.rng.uniform(0.05, 0.2))  # a dict lookup, not a conditional write
            state = seen.get(key)
            if state == "COMPLETED":
                em.duplicate_completed(rec, key=key)
                continue
            if state == "IN_PROGRESS":
                em.duplicate_in_progress(rec, key=key)
                return em.batch_item_failures([rec])
            seen[key] = "IN_PROGRESS"
            em.claimed(rec, key=key, expires_at_ms=context.now_ms + deps.lock_ms[FUNCTION])
            factor = deps.latency_factor(context.now_ms)
            context.spend(context.rng.uniform(8.0, 25.0) * factor)
            if index == 0 and deps.plan.fire(FUNCTION, entry_id, Fault.STREAM_CRASH_AFTER_CLAIM):
                context.hang()
            seen[key] = "COMPLETED"
            em.succeeded(rec, key=key)
        return em.batch_item_failures([])

    return handler
