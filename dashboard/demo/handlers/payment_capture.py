"""payment-capture: captures a payment at a (fake) provider, invoked asynchronously by EventBridge.

The idempotency key goes to the provider too, so a retry after an *ambiguous commit* (the
provider charged but its response was lost) gets the original charge back instead of charging
twice. Before the capture the handler checks its time budget: with less than
``CAPTURE_BUDGET_MS`` left it aborts (``timeout_budget_abort``) rather than risk a timeout in
the middle of the side effect. Failures raise, and Lambda's asynchronous invocation retries
the event (twice, about 1 and 2 minutes later).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emitter import TimeoutBudgetExceeded
from emitter.contract import IdempotencyStatus

from ..constants import OPERATIONS, PAYMENT_CAPTURE
from ..events import payload_hash
from ..exceptions import DemoError, ProviderTimeout
from ..faults import AntiPattern, Fault
from ..store import ClaimState
from .common import claim

DELETED = IdempotencyStatus.DELETED.value  # the claim was released so the source can retry
COMPLETED = IdempotencyStatus.COMPLETED.value
FUNCTION = PAYMENT_CAPTURE
PROVIDER_TIMEOUT_MS = 3_000
CAPTURE_BUDGET_MS = PROVIDER_TIMEOUT_MS + 1_000  # provider timeout plus time to record the result


class PaymentInProgress(DemoError):
    """Another invocation holds the payment's claim: fail so the asynchronous retry comes back later."""

    error_code = "PaymentInProgress"


def make_handler(em: Any, env: Any) -> Callable[[Any, Any], Any]:
    deps = env.deps

    key_from_request = deps.injected(AntiPattern.KEY_FROM_REQUEST_ID)
    effect_first = deps.injected(AntiPattern.SIDE_EFFECT_BEFORE_CLAIM)
    check_budget = not deps.injected(AntiPattern.BUDGET_IGNORED)

    def claim_payment(rec: Any, key: str, detail: dict[str, Any], payment_id: str, context: Any) -> Any:
        """Claim the key; returns what the handler returns early (a stored or rejected result), else None."""
        c = claim(em, deps, FUNCTION, rec, key, payload_hash(detail), context)
        if c is None:
            raise PaymentInProgress("idempotency store unavailable")
        if c.state is ClaimState.DUPLICATE_COMPLETED:
            return c.record.response
        if c.state is ClaimState.DUPLICATE_IN_PROGRESS:
            raise PaymentInProgress(f"payment {payment_id} is being captured by another invocation")
        if c.state is ClaimState.CONFLICT:
            return {"status": "rejected", "reason": "payment id reused with different details"}
        return None

    @em.handler(operation=OPERATIONS[FUNCTION])
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        rec = em.record_for(event)
        detail = event["detail"]
        payment_id = str(detail["payment_id"])
        # key-from-request-id: a key per invocation, so every retry is a new payment
        key = f"{FUNCTION}#{context.aws_request_id}" if key_from_request else f"{FUNCTION}#{payment_id}"
        if not effect_first:
            early = claim_payment(rec, key, detail, payment_id, context)
            if early is not None:
                return early
        # fraud screening before money moves; sometimes it is very slow
        if deps.plan.fire(FUNCTION, payment_id, Fault.PAYMENT_TIMEOUT_BUDGET):
            context.spend(context.get_remaining_time_in_millis() - context.rng.uniform(900.0, 3_500.0))
        else:
            context.spend(context.rng.uniform(40.0, 220.0))
        if check_budget:
            try:
                # the claim is released right after an abort: say so in the abort record
                em.check_time_budget(CAPTURE_BUDGET_MS, record=rec, key=key, idempotency_status=DELETED)
            except TimeoutBudgetExceeded:
                deps.store.release(key, context.aws_request_id)
                raise
        em.side_effect_started(rec, key=key, side_effect_ref=key)
        declined = deps.plan.fire(FUNCTION, payment_id, Fault.PAYMENT_DECLINED)
        charge = deps.provider.capture(key, int(detail["amount_cents"]), decline=declined)
        if not check_budget:  # budget-ignored: the provider round trip can outlast what is left
            context.spend(context.rng.uniform(800.0, 3_000.0))
        if effect_first:  # side-effect-before-claim: the key is claimed only after the capture
            early = claim_payment(rec, key, detail, payment_id, context)
            if early is not None:
                return early
        if deps.plan.fire(FUNCTION, payment_id, Fault.PAYMENT_AMBIGUOUS_COMMIT):
            context.spend(PROVIDER_TIMEOUT_MS)  # the charge happened; the response never arrives
            em.ambiguous_commit(rec, key=key, side_effect_ref=key, idempotency_status=DELETED)
            deps.store.release(key, context.aws_request_id)  # the retry re-sends the same provider key
            raise ProviderTimeout(f"no response from the provider within {PROVIDER_TIMEOUT_MS} ms")
        context.spend(context.rng.uniform(120.0, 450.0))
        result = {"status": charge.status, "charge_id": charge.charge_id}
        deps.store.complete(key, context.aws_request_id, result, context.now_ms)
        if charge.status == "declined":
            em.permanent_failure(rec, key=key, error_code="CardDeclined", side_effect_ref=charge.charge_id,
                                 idempotency_status=COMPLETED)
        else:
            em.succeeded(rec, key=key, side_effect_ref=charge.charge_id)
        return result

    return handler
