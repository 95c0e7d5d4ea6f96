"""orders-consumer: SQS batch consumer of order events with partial batch response.

Per record: parse (unparseable -> ``poison_message``, sent to orders-dlq, not retried), claim
the order's idempotency key, reserve inventory, complete. A throttled inventory call releases
the claim and returns the message in ``batchItemFailures`` so SQS redelivers it after the
visibility timeout (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from emitter.contract import IdempotencyStatus

from ..constants import OPERATIONS, ORDERS_CONSUMER, ORDERS_DLQ
from ..events import payload_hash
from ..exceptions import DemoError, DependencyThrottled, PoisonRecordError
from ..faults import Fault
from ..store import ClaimState
from .common import claim

DELETED = IdempotencyStatus.DELETED.value  # the claim was released so the source can retry
COMPLETED = IdempotencyStatus.COMPLETED.value
FUNCTION = ORDERS_CONSUMER


class UnknownSku(DemoError):
    """A permanent failure: the order can never be reserved (injected with endless-permanent-retries)."""

    error_code = "UnknownSku"


def make_handler(em: Any, env: Any) -> Callable[[Any, Any], Any]:
    """Init phase of one execution environment: returns the handler bound to its emitter."""
    deps = env.deps

    def reserve_inventory(order: dict[str, Any], message_id: str, ctx: Any) -> None:
        ctx.spend(ctx.rng.uniform(15.0, 60.0) * max(1, len(order["items"])) ** 0.5)
        if deps.plan.fire(FUNCTION, message_id, Fault.SQS_CRASH_AFTER_CLAIM):
            ctx.hang()  # the call never returns: the invocation times out holding the claim
        if deps.plan.fire(FUNCTION, message_id, Fault.SQS_THROTTLED):
            raise DependencyThrottled("inventory table throttled the reservation")
        if deps.plan.armed(message_id, Fault.SQS_UNKNOWN_SKU):  # armed only with endless-permanent-retries
            raise UnknownSku("the order names a SKU the inventory does not know")

    @em.handler(operation=OPERATIONS[FUNCTION])
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        failed = []
        for rec in em.records(event):
            try:
                order = json.loads(rec.raw["body"])
                order_id, items = str(order["order_id"]), order["items"]
                if not isinstance(items, list):
                    raise TypeError("items must be a list")
            except (ValueError, KeyError, TypeError):
                em.poison_message(rec, error_code=PoisonRecordError.error_code)
                deps.quarantine(ORDERS_DLQ)  # handled: deleted from the queue, kept in the DLQ
                continue
            key = f"{FUNCTION}#order-{order_id}"
            c = claim(em, deps, FUNCTION, rec, key, payload_hash(order), context)
            if c is None or c.state is ClaimState.DUPLICATE_IN_PROGRESS:
                failed.append(rec)  # another worker holds it: retry after the visibility timeout
                continue
            if c.state in (ClaimState.DUPLICATE_COMPLETED, ClaimState.CONFLICT):
                continue  # already done (or a different order under the same id): delete the copy
            deps.hold_if_gated(rec.event_id, context)
            try:
                reserve_inventory(order, rec.event_id, context)
            except DependencyThrottled as exc:
                deps.store.release(key, context.aws_request_id)
                em.retryable_failure(rec, key=key, error_code=exc.error_code, idempotency_status=DELETED)
                failed.append(rec)
                continue
            except UnknownSku as exc:  # the anti-pattern: a permanent failure handed back for redelivery
                if rec.attempt == 1:
                    deps.plan.count(FUNCTION, Fault.SQS_UNKNOWN_SKU)
                deps.store.release(key, context.aws_request_id)
                em.permanent_failure(rec, key=key, error_code=exc.error_code, idempotency_status=DELETED)
                failed.append(rec)
                continue
            context.spend(context.rng.uniform(2.0, 8.0))
            deps.store.complete(key, context.aws_request_id, {"reserved": len(items)}, context.now_ms)
            em.succeeded(rec, key=key)
        return em.batch_item_failures(failed)

    return handler
