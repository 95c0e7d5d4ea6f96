"""create-case-api: synchronous API Gateway handler for ``POST /cases`` with client idempotency keys.

Follows the IETF ``Idempotency-Key`` header draft (draft-ietf-httpapi-idempotency-key-header)
as the issue asks: a repeated key with the same body returns the stored response
(``Idempotent-Replayed: true``); the same key with a different body is 409 (error
``IdempotencyKeyReused``); a request whose key is still being processed is 409 with
``Retry-After``; an invalid body is 400; a failing dependency is 503 (the claim is released,
so the client's retry with the same key runs again).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from emitter.contract import IdempotencyStatus

from ..constants import CREATE_CASE_API, OPERATIONS
from ..events import payload_hash
from ..exceptions import DependencyUnavailable, ValidationError
from ..faults import Fault
from ..store import ClaimState
from .common import claim

DELETED = IdempotencyStatus.DELETED.value  # the claim was released so the source can retry
COMPLETED = IdempotencyStatus.COMPLETED.value
FUNCTION = CREATE_CASE_API


def _response(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
    return {"statusCode": status, "headers": {"Content-Type": "application/json", **(headers or {})},
            "body": json.dumps(body, sort_keys=True)}


def _validate(event: dict[str, Any]) -> dict[str, Any]:
    try:
        body = json.loads(event.get("body") or "")
    except ValueError as exc:
        raise ValidationError("body is not JSON") from exc
    if not isinstance(body, dict):
        raise ValidationError("body must be an object")
    missing = [f for f in ("customer_id", "subject") if not body.get(f)]
    if missing:
        raise ValidationError(f"missing required field(s): {', '.join(missing)}")
    return body


def make_handler(em: Any, env: Any) -> Callable[[Any, Any], Any]:
    deps = env.deps

    @em.handler(operation=OPERATIONS[FUNCTION])
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        rec = em.record_for(event)
        key_header = rec.idempotency_key
        try:
            body = _validate(event)
            if not key_header:
                raise ValidationError("Idempotency-Key header is required")
        except ValidationError as exc:
            em.permanent_failure(rec, key=key_header, error_code=exc.error_code)
            return _response(400, {"error": exc.error_code, "message": str(exc)})
        key = f"{FUNCTION}#{key_header}"
        c = claim(em, deps, FUNCTION, rec, key, payload_hash(body), context)
        if c is None:
            return _response(503, {"error": "StoreUnavailable"}, {"Retry-After": "1"})
        if c.state is ClaimState.DUPLICATE_COMPLETED:
            stored = c.record.response
            return _response(stored["statusCode"], stored["body"], {"Idempotent-Replayed": "true"})
        if c.state is ClaimState.DUPLICATE_IN_PROGRESS:
            wait_s = max(1, -(-(c.record.in_progress_expires_at_ms - context.now_ms) // 1000))
            return _response(409, {"error": "RequestInProgress"}, {"Retry-After": str(wait_s)})
        if c.state is ClaimState.CONFLICT:
            return _response(409, {"error": "IdempotencyKeyReused",
                                   "message": "this Idempotency-Key was used with a different request body"})
        deps.hold_if_gated(key_header, context)
        try:
            context.spend(context.rng.uniform(20.0, 90.0))  # insert the case, notify the CRM
            if deps.plan.fire(FUNCTION, key_header, Fault.API_CRASH_AFTER_CLAIM):
                context.hang()
            if deps.plan.fire(FUNCTION, key_header, Fault.API_DEPENDENCY_FAILURE):
                raise DependencyUnavailable("CRM returned 503")
        except DependencyUnavailable as exc:
            deps.store.release(key, context.aws_request_id)
            em.retryable_failure(rec, key=key, error_code=exc.error_code, idempotency_status=DELETED)
            return _response(503, {"error": exc.error_code}, {"Retry-After": "2"})
        case_id = "case-" + hashlib.sha1(key.encode()).hexdigest()[:12]
        stored = {"statusCode": 201, "body": {"case_id": case_id, "status": "OPEN"}}
        deps.store.complete(key, context.aws_request_id, stored, context.now_ms)
        em.succeeded(rec, key=key)
        return _response(201, stored["body"])

    return handler
