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
from ..faults import Fault
from ..store import ClaimState
from .common import claim

FUNCTION = LEDGER_STREAM
FAILURE_DESTINATION = "ledger-stream-failures"


def make_handler(em: Any, env: Any) -> Callable[[Any, Any], Any]:
    deps = env.deps

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
