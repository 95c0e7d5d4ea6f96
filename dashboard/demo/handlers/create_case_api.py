"""create-case-api: synchronous API Gateway handler for ``POST /cases`` with client idempotency keys,
built on the Powertools for AWS Lambda idempotency utility (``@idempotent_function``) over
:class:`~..powertools_layer.SqlitePersistenceLayer`, instrumented with the shipped integration
(``emitter.powertools.instrument``): claimed, succeeded, duplicate, conflict and takeover outcomes are
recorded where Powertools decides them, as for any Powertools user.

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

from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyValidationError,
)

from emitter.contract import IdempotencyStatus
from emitter.powertools import instrument, record_scope

from ..constants import CREATE_CASE_API, OPERATIONS
from ..exceptions import DependencyUnavailable, ValidationError
from ..faults import Fault
from ..powertools_layer import SqlitePersistenceLayer

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
    """Init phase: a Powertools idempotency config and persistence layer per execution environment."""
    deps = env.deps
    store = deps.api_store or deps.store  # its own store with short-retention (records expire after 20 s)
    layer = instrument(SqlitePersistenceLayer(store, env.clock, deps.lock_ms[FUNCTION], deps.aliases), em,
                       log_key=lambda stored: deps.aliases.get(stored, stored),  # the readable key, as before
                       detect_takeover=lambda store_layer, _record: store_layer.last_claim_takeover)
    config = IdempotencyConfig(event_key_jmespath="key", payload_validation_jmespath="body",
                               expires_after_seconds=3600)

    @idempotent_function(data_keyword_argument="request", config=config, persistence_store=layer, key_prefix=FUNCTION)
    def create_case(request: dict[str, Any], context: Any) -> dict[str, Any]:
        """Runs once per Idempotency-Key (Powertools); the returned dict is the stored response."""
        key_header = request["key"]
        deps.hold_if_gated(key_header, context)
        context.spend(context.rng.uniform(20.0, 90.0))  # insert the case, notify the CRM
        if deps.plan.fire(FUNCTION, key_header, Fault.API_CRASH_AFTER_CLAIM):
            context.hang()
        if deps.plan.fire(FUNCTION, key_header, Fault.API_DEPENDENCY_FAILURE):
            raise DependencyUnavailable("CRM returned 503")  # Powertools deletes the IN_PROGRESS record
        case_id = "case-" + hashlib.sha1(f"{FUNCTION}#{key_header}".encode()).hexdigest()[:12]
        return {"statusCode": 201, "body": {"case_id": case_id, "status": "OPEN"}}

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
        # every outcome names the key the received record named (the client's Idempotency-Key, as the API Gateway
        # adapter reads it): one key identity per request; Powertools stores it under its own prefixed hash
        layer.bind(context, key_header)
        config.register_lambda_context(context)
        context.spend(context.rng.uniform(2.0, 9.0))  # the conditional write
        try:
            with record_scope(rec):  # the integration's outcomes carry this request's record
                stored = create_case(request={"key": key_header, "body": body}, context=context)
        except IdempotencyAlreadyInProgressError:
            held = layer.last_existing
            left_ms = (held.in_progress_expires_at_ms - context.now_ms) if held is not None else 1_000
            return _response(409, {"error": "RequestInProgress"}, {"Retry-After": str(max(1, -(-left_ms // 1000)))})
        except IdempotencyValidationError:
            return _response(409, {"error": "IdempotencyKeyReused",
                                   "message": "this Idempotency-Key was used with a different request body"})
        except DependencyUnavailable as exc:
            em.retryable_failure(rec, key=key_header, error_code=exc.error_code, idempotency_status=DELETED)
            return _response(503, {"error": exc.error_code}, {"Retry-After": "2"})
        if layer.replayed:
            return _response(stored["statusCode"], stored["body"], {"Idempotent-Replayed": "true"})
        return _response(201, stored["body"])  # succeeded: recorded by the instrumented layer (COMPLETED saved)

    return handler
