"""Instrumenting a Powertools idempotency persistence layer: every decision Powertools makes becomes an outcome.

Where Powertools decides each case (``aws_lambda_powertools.utilities.idempotency``, 3.x), and what is recorded:

======================================================  ===========================================================
Powertools                                              outcome recorded here
======================================================  ===========================================================
``_put_record`` returns (``save_inprogress``)           ``claimed`` (IN_PROGRESS written), or ``stale_claim_takeover``
                                                        when the item it overwrote was IN_PROGRESS (a claim whose
                                                        ``in_progress_expiration`` had passed)
``_put_record`` raises ``IdempotencyItemAlreadyExists``  decided from the existing record (``old_data_record``, or
then ``_handle_for_status`` on that record              ``get_record`` when the store did not return it):
                                                        COMPLETED -> ``duplicate_completed`` (stored result
                                                        returned); INPROGRESS not expired -> ``duplicate_in_progress``
                                                        (``IdempotencyAlreadyInProgressError`` follows); expired ->
                                                        nothing (Powertools retries: IdempotencyInconsistentStateError)
``IdempotencyValidationError`` (in ``_put_record`` for  ``payload_conflict``
DynamoDB, or in ``get_record``/``_validate_payload``)
``_update_record`` returns (``save_success``)           ``succeeded`` (COMPLETED)
any other exception of ``_put_record``/``_get_record``/  ``store_error`` with the store's error code (Powertools wraps
``_update_record``/``_delete_record``                   it in ``IdempotencyPersistenceLayerError``)
======================================================  ===========================================================

Each exception that carries an outcome is marked (the exception Powertools raises later has it as ``__cause__`` or
``__context__``), so ``em.failure``, the handler wrapper and the batch integration do not record it a second time.

The key logged is Powertools' own (``<function or key_prefix>#<hash of the key expression>``), hashed again when the
emitter has ``hash_idempotency_keys``; claims carry ``in_progress_expires_at_ms`` (Powertools'
``in_progress_expiry_timestamp``, epoch ms, set when the Lambda context is registered).

Stale takeover: DynamoDB's conditional put overwrites an expired IN_PROGRESS item silently, so for a
``DynamoDBPersistenceLayer`` the claim asks DynamoDB for the overwritten item (``ReturnValues=ALL_OLD``, through
botocore's event hooks, only on the layer's own claim calls). Other layers (Redis, cache, your own) are probed with
one ``_get_record`` before the claim (``detect_takeover="read"``, the default for them; ``False`` turns it off).
"""

from __future__ import annotations

import sys
import threading

from emitter.contract import Outcome
from emitter.powertools import constants as PC
from emitter.powertools import scope as _scope
from emitter.powertools.exceptions import IntegrationError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from emitter.core import Emitter

__all__ = ["instrument"]

_MARK = "_idemwatch_recorded"
_INSTRUMENTED = "_idemwatch_emitter"


def _mark(exc: BaseException, outcome: Outcome) -> None:
    try:
        setattr(exc, _MARK, outcome.value)
    except Exception:  # an exception type that refuses attributes: at worst recorded twice
        pass


def _error_code(exc: BaseException) -> str:
    """botocore ClientError -> the service error code; anything else -> its class name (never the message)."""
    resp = getattr(exc, "response", None)
    if isinstance(resp, dict):
        err = resp.get("Error")
        code = err.get("Code") if isinstance(err, dict) else None
        if isinstance(code, str) and code:
            return code
    return type(exc).__name__


def _now_ms() -> int:
    import time

    return time.time_ns() // 1_000_000


class _Instrumentation:
    """The wrapped methods of one layer (kept on the layer as ``_idemwatch_emitter``)."""

    def __init__(self, layer: Any, emitter: Emitter, detect_takeover: Any, log_key: Any) -> None:
        from aws_lambda_powertools.utilities.idempotency.exceptions import (
            IdempotencyItemAlreadyExistsError,
            IdempotencyItemNotFoundError,
            IdempotencyKeyError,
            IdempotencyValidationError,
        )

        self.em = emitter
        self.layer = layer
        self.log_key = log_key
        self._takeover_fn = detect_takeover if callable(detect_takeover) else None
        self._exists = IdempotencyItemAlreadyExistsError
        self._not_found = IdempotencyItemNotFoundError
        self._validation = IdempotencyValidationError
        self._passthrough = (IdempotencyItemAlreadyExistsError, IdempotencyItemNotFoundError, IdempotencyKeyError,
                             IdempotencyValidationError)
        self._local = threading.local()
        self._orig_put = layer._put_record
        self._orig_update = layer._update_record
        self._orig_delete = layer._delete_record
        self._orig_get_record = layer.get_record
        self._orig_get = layer._get_record
        self.mode = self._takeover_mode(detect_takeover)

    # ------------------------------------------------------------------ takeover detection
    def _takeover_mode(self, detect: Any) -> str | None:
        is_dynamo = any(k.__name__ == "DynamoDBPersistenceLayer" for k in type(self.layer).__mro__)
        if detect is False or detect is None:
            return None
        if callable(detect):
            return "callable"
        if detect == "auto":
            detect = "return_values" if is_dynamo else "read"
        if detect == "return_values":
            if not is_dynamo:
                raise IntegrationError("detect_takeover='return_values' needs a DynamoDBPersistenceLayer")
            events = self.layer.client.meta.events
            events.register(PC.DYNAMODB_PUT_ITEM_EVENTS[0], self._ask_old_item)
            events.register(PC.DYNAMODB_PUT_ITEM_EVENTS[1], self._keep_old_item)
            return detect
        if detect == "read":
            return detect
        raise IntegrationError(f"detect_takeover must be 'auto', 'return_values', 'read' or False, not {detect!r}")

    def _ask_old_item(self, params: dict[str, Any], **_: Any) -> None:
        if getattr(self._local, "claiming", False):
            params.setdefault("ReturnValues", "ALL_OLD")

    def _keep_old_item(self, parsed: dict[str, Any] | None = None, **_: Any) -> None:
        if getattr(self._local, "claiming", False) and isinstance(parsed, dict):
            self._local.old_item = parsed.get("Attributes")

    def _was_in_progress(self, old_item: Any) -> bool:
        if not isinstance(old_item, dict):
            return False
        status = old_item.get(getattr(self.layer, "status_attr", "status"))
        return isinstance(status, dict) and status.get("S") == PC.STATUS_INPROGRESS

    # ------------------------------------------------------------------ recording
    def _record(self, outcome: Outcome, key: Any = None, **props: Any) -> None:
        if key is not None and self.log_key is not None:
            try:
                key = self.log_key(key)
            except Exception:  # the user's mapping failed: log Powertools' key
                pass
        sc = _scope.current()
        rec = sc.record if sc is not None else None
        if sc is not None and outcome in (Outcome.SUCCEEDED, Outcome.DUPLICATE_COMPLETED,
                                          Outcome.DUPLICATE_IN_PROGRESS, Outcome.PAYLOAD_CONFLICT):
            sc.terminal = True
        getattr(self.em, outcome.value)(rec, key, **props)  # em.claimed / em.succeeded / ...: the fast paths

    def _payload_conflict(self, exc: BaseException, key: Any) -> None:
        _mark(exc, Outcome.PAYLOAD_CONFLICT)
        self._record(Outcome.PAYLOAD_CONFLICT, key)

    def _store_error(self, exc: BaseException, key: Any) -> None:
        if getattr(exc, _MARK, None) is None:
            _mark(exc, Outcome.STORE_ERROR)
            self._record(Outcome.STORE_ERROR, key, error_code=_error_code(exc))

    def _decide(self, record: Any, ctx: BaseException | None) -> None:
        """The existing record Powertools will act on after a failed claim (``_handle_for_status``)."""
        status = getattr(record, "_status", None)  # DataRecord.status, without its datetime.now() calls:
        exp_s = getattr(record, "expiry_timestamp", None)  # EXPIRED once expiry_timestamp (epoch s) has passed
        if exp_s and _now_ms() > exp_s * 1000:
            status = PC.STATUS_EXPIRED
        key = record.idempotency_key
        if status == PC.STATUS_COMPLETED:
            self._record(Outcome.DUPLICATE_COMPLETED, key)
        elif status == PC.STATUS_INPROGRESS:
            exp = record.in_progress_expiry_timestamp
            if exp is not None and exp < _now_ms():
                return  # Powertools raises IdempotencyInconsistentStateError and retries the claim
            self._record(Outcome.DUPLICATE_IN_PROGRESS, key)
            if ctx is not None:
                _mark(ctx, Outcome.DUPLICATE_IN_PROGRESS)  # the AlreadyInProgressError's __context__

    # ------------------------------------------------------------------ wrapped methods
    def put_record(self, data_record: Any) -> None:
        key = data_record.idempotency_key
        was_in_progress = False
        if self.mode == "read":
            try:
                prior = self._orig_get(key)
                was_in_progress = prior is not None and prior.status == PC.STATUS_INPROGRESS
            except Exception:  # not found, or the store fails: the put below tells
                was_in_progress = False
        loc = self._local
        loc.claiming, loc.old_item = True, None
        try:
            self._orig_put(data_record=data_record)
        except self._exists as exc:
            if exc.old_data_record is not None:
                self._decide(exc.old_data_record, exc)
            raise
        except self._validation as exc:
            self._payload_conflict(exc, key)
            raise
        except self._passthrough:
            raise
        except Exception as exc:
            self._store_error(exc, key)
            raise
        finally:
            loc.claiming = False
        if self.mode == "return_values":
            was_in_progress = self._was_in_progress(loc.old_item)
        elif self._takeover_fn is not None:
            try:
                was_in_progress = bool(self._takeover_fn(self.layer, data_record))
            except Exception:
                was_in_progress = False
        loc.old_item = None
        outcome = Outcome.STALE_CLAIM_TAKEOVER if was_in_progress else Outcome.CLAIMED
        self._record(outcome, key, expires_at_ms=data_record.in_progress_expiry_timestamp)

    def get_record(self, data: Any) -> Any:
        ctx = sys.exc_info()[1]  # Powertools calls this while handling IdempotencyItemAlreadyExistsError
        try:
            record = self._orig_get_record(data=data)
        except self._validation as exc:
            self._payload_conflict(exc, None)
            raise
        except self._passthrough:
            raise
        except Exception as exc:
            self._store_error(exc, None)
            raise
        if record is not None and isinstance(ctx, self._exists) and getattr(ctx, _MARK, None) is None:
            self._decide(record, ctx)
        return record

    def update_record(self, data_record: Any) -> None:
        key = data_record.idempotency_key
        try:
            self._orig_update(data_record=data_record)
        except Exception as exc:
            self._store_error(exc, key)
            raise
        self._record(Outcome.SUCCEEDED, key)

    def delete_record(self, data_record: Any) -> None:
        try:
            self._orig_delete(data_record=data_record)
        except Exception as exc:
            self._store_error(exc, data_record.idempotency_key)
            raise


def instrument(persistence_layer: Any, emitter: Emitter, *, detect_takeover: Any = "auto",
               log_key: Any = None) -> Any:
    """Make a Powertools idempotency persistence layer report every decision through ``emitter``; returns the layer.

    Use it once at init, then hand the layer to ``@idempotent`` / ``@idempotent_function`` as usual::

        persistence = instrument(DynamoDBPersistenceLayer(table_name="idempotency"), em)

    Works for any ``BasePersistenceLayer`` subclass (DynamoDB, Redis, cache, your own): the layer's
    ``_put_record`` / ``_update_record`` / ``_delete_record`` / ``get_record`` are wrapped on the instance (the
    class is not changed). Calling it again with the same emitter returns the layer unchanged.

    Args:
        persistence_layer: a ``BasePersistenceLayer`` instance.
        emitter: the :class:`emitter.Emitter` of this execution environment.
        detect_takeover: how a stale IN_PROGRESS claim is recognised when a claim succeeds: ``"auto"``
            (DynamoDB: ``ReturnValues=ALL_OLD`` on the claim; other layers: ``"read"``), ``"return_values"``,
            ``"read"`` (one ``_get_record`` before each claim), ``False`` (every successful claim is ``claimed``),
            or a callable ``(layer, data_record) -> bool`` asked after each successful claim (a layer of your own
            that knows whether it overwrote an expired IN_PROGRESS record).
        log_key: optional ``(powertools_key) -> str`` naming the key in the log records (e.g. the readable key your
            team searches by); default: Powertools' key. The emitter's key hashing applies after it.

    Raises:
        IntegrationError: ``persistence_layer`` is not a BasePersistenceLayer, is instrumented with another emitter,
            or ``detect_takeover`` is not one of the values above.
    """
    from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer

    if not isinstance(persistence_layer, BasePersistenceLayer):
        raise IntegrationError(f"expected a Powertools BasePersistenceLayer, got {type(persistence_layer).__name__}")
    existing = getattr(persistence_layer, _INSTRUMENTED, None)
    if existing is not None:
        if existing.em is emitter:
            return persistence_layer
        raise IntegrationError("this persistence layer is already instrumented with another Emitter")
    inst = _Instrumentation(persistence_layer, emitter, detect_takeover, log_key)
    persistence_layer._put_record = inst.put_record
    persistence_layer._update_record = inst.update_record
    persistence_layer._delete_record = inst.delete_record
    persistence_layer.get_record = inst.get_record
    setattr(persistence_layer, _INSTRUMENTED, inst)
    return persistence_layer
