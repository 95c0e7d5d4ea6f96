"""Instrumenting a Powertools idempotency persistence layer: every decision Powertools makes becomes an outcome.

Where Powertools decides each case (``aws_lambda_powertools.utilities.idempotency``, 3.x), and what is recorded:

=========================================================  ========================================================
Powertools                                                 outcome recorded here
=========================================================  ========================================================
``_put_record`` returns (``save_inprogress``)              ``claimed`` (IN_PROGRESS written), or
                                                           ``stale_claim_takeover`` when the item it overwrote was
                                                           IN_PROGRESS (a claim whose holder never finished)
``_put_record`` raises ``IdempotencyItemAlreadyExists``,   decided from the existing record (``old_data_record``, or
then ``_handle_for_status`` on the existing record         ``get_record`` when the store did not return it), by
                                                           Powertools' own rule: COMPLETED -> ``duplicate_completed``;
                                                           INPROGRESS within its in-progress expiry ->
                                                           ``duplicate_in_progress``; EXPIRED, or INPROGRESS past its
                                                           in-progress expiry -> ``store_error`` with error_code
                                                           IdempotencyInconsistentState (Powertools raises
                                                           ``IdempotencyInconsistentStateError`` and claims again, at
                                                           most 3 times); an unknown status -> ``store_error``
                                                           (``IdempotencyInvalidStatusError``)
``get_record`` raises ``IdempotencyItemNotFoundError``     ``store_error``, IdempotencyInconsistentState (the record
after a failed claim                                       went away between the claim and the read)
``IdempotencyValidationError`` (in ``_put_record`` for     ``payload_conflict``
DynamoDB, or in ``get_record``)
``IdempotencyKeyError`` (no key, with                     ``permanent_failure``, error_code IdempotencyKeyMissing,
``raise_on_no_idempotency_key``)                           where the exception surfaces (``@em.handler``, the batch
                                                           integration, ``em.failure``): Powertools raises it before
                                                           any store call
``_update_record`` returns (``save_success``)              ``succeeded`` (COMPLETED)
any other exception of the store                           ``store_error`` with the store's error code (Powertools
                                                           wraps it in ``IdempotencyPersistenceLayerError``)
=========================================================  ========================================================

A key Powertools finds no value for (without ``raise_on_no_idempotency_key``) skips the persistence layer entirely:
nothing is recorded here (the handler's own outcomes still are).

Each exception that carries an outcome is marked (the exception Powertools raises later has it as ``__cause__`` or
``__context__``), so ``em.failure``, the handler wrapper and the batch integration do not record it a second time.

Transparency: the wrapped methods are instance attributes that look the original method up on the instance's class
at every call (as Python would without them), so a ``mock.patch.object(MyLayer, "_put_record", ...)``, a subclass
override or a later patch of the class behaves exactly as on a bare layer. Nothing the layer sends or stores
changes, except ``ReturnValues=ALL_OLD`` on the DynamoDB claim (below).

Stale takeover: DynamoDB's conditional put overwrites an expired IN_PROGRESS item silently, so for a
``DynamoDBPersistenceLayer`` whose client has botocore's event system the claim asks DynamoDB for the overwritten
item (``ReturnValues=ALL_OLD``, only on the layer's own claim calls). Layers that read the existing record during
their claim (Powertools' ``CachePersistenceLayer``: ``SET NX``, then a ``GET`` of the record it may overwrite) are
observed doing so (``"observe"``, no extra request). ``"read"`` adds one ``_get_record`` before each claim.
"""

from __future__ import annotations

import datetime as dt
import functools
import sys
import threading
import warnings

from emitter.constants import WarningCode
from emitter.contract import Outcome
from emitter.powertools import constants as PC
from emitter.powertools import scope as _scope
from emitter.powertools.exceptions import IntegrationError, IntegrationWarning

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from emitter.core import Emitter

__all__ = ["instrument"]

_MARK = "_idemwatch_recorded"
_INSTRUMENTED = "_idemwatch_emitter"
_TAKEOVER_MODES = ("auto", "return_values", "observe", "read")
_TERMINAL = frozenset({Outcome.SUCCEEDED, Outcome.DUPLICATE_COMPLETED, Outcome.DUPLICATE_IN_PROGRESS,
                       Outcome.PAYLOAD_CONFLICT})
"""Outcomes that end the record's story: the batch integration then adds no ``succeeded`` of its own."""


def _resolve(obj: Any, name: str) -> Any:
    """``obj.<name>`` as Python finds it when ``obj`` has no instance attribute of that name: the attribute of the
    first class along the MRO that defines it, bound through its descriptor (a function becomes a bound method; a
    ``mock.patch.object`` MagicMock, which is no descriptor, is returned as it is, as plain attribute lookup does)."""
    cls = type(obj)
    for klass in cls.__mro__:
        attr = klass.__dict__.get(name, _resolve)
        if attr is not _resolve:
            get = getattr(type(attr), "__get__", None)
            return attr if get is None else get(attr, obj, cls)
    raise AttributeError(f"{cls.__name__!r} object has no attribute {name!r}")


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> Any:
    """The first argument, passed by keyword (as Powertools passes it) or by position."""
    return kwargs[name] if name in kwargs else (args[0] if args else None)


def _mark(exc: BaseException, outcome: Outcome) -> None:
    try:
        setattr(exc, _MARK, outcome.value)
    except Exception:  # an exception type that refuses attributes: at worst recorded twice
        pass


def _now_ms() -> int:
    """Epoch ms, read as Powertools reads it in ``IdempotencyHandler._handle_for_status``."""
    return int(dt.datetime.now().timestamp() * 1000)


def _was_in_progress(record: Any) -> bool:
    """The stored status (``DataRecord._status``, not the ``status`` property, which says EXPIRED once the whole
    record expired) was IN_PROGRESS: the record overwritten was a claim whose holder never finished."""
    return getattr(record, "_status", None) == PC.STATUS_INPROGRESS


def _never_raises(method: Callable[..., None]) -> Callable[..., None]:
    """For the bookkeeping around a wrapped call: whatever goes wrong in it (a record shaped unlike Powertools' own,
    a failing ``detect_takeover`` callable) is counted as the emitter's internal error (``strict`` emitters raise
    it), and the call goes on as it would without idemwatch."""

    @functools.wraps(method)
    def guarded(self: _Instrumentation, *args: Any, **kwargs: Any) -> None:
        try:
            method(self, *args, **kwargs)
        except Exception as exc:
            if self.em.strict:  # tests: the emitter's own errors raise
                raise
            self.em._count_warning(WarningCode.INTERNAL_ERROR, 1)
            self.em._stderr(f"idemwatch: could not record a Powertools decision ({type(exc).__name__})")

    return guarded


class _Claim:
    """What the integration learns during one ``_put_record`` call on this thread."""

    __slots__ = ("observed", "old_item")

    def __init__(self) -> None:
        self.old_item: Any = None  # DynamoDB: the ``Attributes`` of the PutItem response (ReturnValues=ALL_OLD)
        self.observed: Any = None  # observe: the record the layer's own ``_get_record`` returned


class _Instrumentation:
    """The wrapped methods of one layer (kept on the layer as ``_idemwatch_emitter``)."""

    def __init__(self, layer: Any, emitter: Emitter, detect_takeover: Any, log_key: Callable[[str], str] | None
                 ) -> None:
        from aws_lambda_powertools.utilities.idempotency import exceptions as E

        self.em = emitter
        self.layer = layer
        self.log_key = log_key
        self._exists = E.IdempotencyItemAlreadyExistsError
        self._not_found = E.IdempotencyItemNotFoundError
        self._validation = E.IdempotencyValidationError
        self._passthrough = (E.IdempotencyItemAlreadyExistsError, E.IdempotencyItemNotFoundError,
                             E.IdempotencyKeyError, E.IdempotencyValidationError)
        # error codes as the emitter's classifier gives them for the exception Powertools raises later (one rule)
        self._inconsistent_code = emitter.classify(E.IdempotencyInconsistentStateError()).error_code
        self._invalid_status_code = emitter.classify(E.IdempotencyInvalidStatusError()).error_code
        self._local = threading.local()  # .claim: the _Claim of the _put_record running on this thread
        self._takeover_fn = detect_takeover if callable(detect_takeover) else None
        self.mode = self._takeover_mode(detect_takeover)

    # ------------------------------------------------------------------ takeover detection
    def _takeover_mode(self, detect: Any) -> str | None:
        if detect is False or detect is None:
            return None
        if callable(detect):
            return "callable"
        if detect not in _TAKEOVER_MODES:
            raise IntegrationError(f"detect_takeover must be one of {', '.join(map(repr, _TAKEOVER_MODES))}, False "
                                   f"or a callable, not {detect!r}")
        is_dynamo = any(k.__name__ == "DynamoDBPersistenceLayer" for k in type(self.layer).__mro__)
        if detect == "auto":
            detect = "return_values" if is_dynamo else "observe"
        if detect != "return_values":
            return str(detect)
        if not is_dynamo:
            raise IntegrationError("detect_takeover='return_values' needs a DynamoDBPersistenceLayer")
        if self._register_hooks():
            return "return_values"
        warnings.warn(f"idemwatch: the DynamoDB client of this persistence layer ({type(self.layer.client).__name__}) "
                      "has no botocore event system, so a claim cannot ask DynamoDB for the item it overwrites: "
                      "stale claim takeovers are recorded as 'claimed'. instrument(..., detect_takeover='read') "
                      "detects them with one GetItem before each claim.", IntegrationWarning, stacklevel=4)
        return None

    def _register_hooks(self) -> bool:
        """Ask for the overwritten item on the layer's claims; False when the client has no botocore event system."""
        try:
            register = self.layer.client.meta.events.register
            if not callable(register):
                return False
            register(PC.DYNAMODB_PUT_ITEM_EVENTS[0], self._ask_old_item)
            register(PC.DYNAMODB_PUT_ITEM_EVENTS[1], self._keep_old_item)
        except Exception:  # any client object (a wrapper, a test double): fall back, never fail set-up
            return False
        return True

    def _ask_old_item(self, params: dict[str, Any], **_: Any) -> None:
        if getattr(self._local, "claim", None) is not None:
            params.setdefault("ReturnValues", "ALL_OLD")

    def _keep_old_item(self, parsed: dict[str, Any] | None = None, **_: Any) -> None:
        claim = getattr(self._local, "claim", None)
        if claim is not None and isinstance(parsed, dict):
            claim.old_item = parsed.get("Attributes")

    def _took_over(self, data_record: Any, claim: _Claim, prior: Any) -> bool:
        """Whether the successful claim overwrote an IN_PROGRESS record (by the layer's takeover mode)."""
        mode = self.mode
        if mode == "return_values":
            status = claim.old_item.get(getattr(self.layer, "status_attr", "status")) if isinstance(
                claim.old_item, dict) else None
            return isinstance(status, dict) and status.get("S") == PC.STATUS_INPROGRESS
        if mode == "observe":
            return _was_in_progress(claim.observed)
        if mode == "read":
            return _was_in_progress(prior)
        if self._takeover_fn is not None:
            return bool(self._takeover_fn(self.layer, data_record))
        return False

    # ------------------------------------------------------------------ recording
    @_never_raises
    def _record(self, outcome: Outcome, key: Any = None, **props: Any) -> None:
        if key is not None and self.log_key is not None:
            try:
                key = self.log_key(key)
            except Exception:  # the user's mapping failed: log Powertools' key
                pass
        sc = _scope.current()
        if sc is not None and outcome in _TERMINAL:
            sc.terminal = True
        getattr(self.em, outcome.value)(sc.record if sc is not None else None, key, **props)

    def _record_marked(self, exc: BaseException, outcome: Outcome, key: Any, **props: Any) -> None:
        """Record ``outcome`` for ``exc``, and mark it so that the paths it reaches later (``em.failure``, the
        handler wrapper) do not record it again. Always recorded here: each call through the layer is a decision of
        its own, even when a store (or a test's ``side_effect``) raises the same exception object again."""
        _mark(exc, outcome)
        self._record(outcome, key, **props)

    @_never_raises
    def _decide(self, record: Any, ctx: BaseException) -> None:
        """What Powertools' ``_handle_for_status`` does with the existing record after a failed claim (``ctx``: the
        IdempotencyItemAlreadyExistsError it handles, which the exception it raises next has as ``__context__``)."""
        key = record.idempotency_key
        try:
            status = record.status  # Powertools' own property: EXPIRED once expiry_timestamp (epoch s) has passed
        except Exception:  # IdempotencyInvalidStatusError: Powertools raises it too
            self._record_marked(ctx, Outcome.STORE_ERROR, key, error_code=self._invalid_status_code)
            return
        if status == PC.STATUS_EXPIRED or (status == PC.STATUS_INPROGRESS
                                           and record.in_progress_expiry_timestamp is not None
                                           and record.in_progress_expiry_timestamp < _now_ms()):
            # Powertools raises IdempotencyInconsistentStateError and claims again
            self._record_marked(ctx, Outcome.STORE_ERROR, key, error_code=self._inconsistent_code)
        elif status == PC.STATUS_INPROGRESS:
            self._record_marked(ctx, Outcome.DUPLICATE_IN_PROGRESS, key)
        else:
            self._record_marked(ctx, Outcome.DUPLICATE_COMPLETED, key)

    @_never_raises
    def _failed(self, exc: BaseException, key: Any) -> None:
        """An exception of the store (or of Powertools' checks inside it), at the layer boundary."""
        if isinstance(exc, self._validation):
            self._record_marked(exc, Outcome.PAYLOAD_CONFLICT, key)
        elif not isinstance(exc, self._passthrough) and isinstance(exc, Exception):
            self._record_marked(exc, Outcome.STORE_ERROR, key, error_code=self.em.classify(exc).error_code)

    # ------------------------------------------------------------------ the wrapped methods
    def _put_record(self, *args: Any, **kwargs: Any) -> Any:
        data_record = _arg(args, kwargs, "data_record")
        key = getattr(data_record, "idempotency_key", None)
        put = _resolve(self.layer, "_put_record")
        prior = self._probe(key) if self.mode == "read" else None
        loc = self._local
        loc.claim_key = key  # the key a NotFound in get_record, next, is about
        outer = getattr(loc, "claim", None)
        claim = loc.claim = _Claim()
        try:
            result = put(*args, **kwargs)
        except BaseException as exc:
            loc.claim = outer
            if isinstance(exc, self._exists):
                if exc.old_data_record is not None:
                    self._decide(exc.old_data_record, exc)
            else:
                self._failed(exc, key)
            raise
        loc.claim = outer
        self._claimed(data_record, key, claim, prior)
        return result

    @_never_raises
    def _claimed(self, data_record: Any, key: Any, claim: _Claim, prior: Any) -> None:
        took_over = self._took_over(data_record, claim, prior)
        self._record(Outcome.STALE_CLAIM_TAKEOVER if took_over else Outcome.CLAIMED, key,
                     expires_at_ms=getattr(data_record, "in_progress_expiry_timestamp", None))

    def _probe(self, key: Any) -> Any:
        """detect_takeover="read": the stored record before the claim (None when absent or unreadable)."""
        try:
            return _resolve(self.layer, "_get_record")(idempotency_key=key)
        except Exception:  # not found, or the store fails: the claim tells
            return None

    def _get_record(self, *args: Any, **kwargs: Any) -> Any:
        """detect_takeover="observe": remember the record the layer reads during its own claim."""
        record = _resolve(self.layer, "_get_record")(*args, **kwargs)
        claim = getattr(self._local, "claim", None)
        if claim is not None:
            claim.observed = record
        return record

    def get_record(self, *args: Any, **kwargs: Any) -> Any:
        # Powertools calls this while handling the failed claim's IdempotencyItemAlreadyExistsError when it carries
        # no existing record (``exc.old_data_record or self._get_idempotency_record()``)
        ctx = sys.exc_info()[1]
        after_claim = isinstance(ctx, self._exists) and getattr(ctx, "old_data_record", None) is None
        try:
            record = _resolve(self.layer, "get_record")(*args, **kwargs)
        except self._not_found as exc:
            if after_claim:  # Powertools raises IdempotencyInconsistentStateError (from this one) and claims again
                self._record_marked(exc, Outcome.STORE_ERROR, getattr(self._local, "claim_key", None),
                                    error_code=self._inconsistent_code)
            raise
        except BaseException as exc:
            self._failed(exc, None)
            raise
        if record is not None and after_claim and ctx is not None:
            self._decide(record, ctx)
        return record

    def _update_record(self, *args: Any, **kwargs: Any) -> Any:
        key = getattr(_arg(args, kwargs, "data_record"), "idempotency_key", None)
        try:
            result = _resolve(self.layer, "_update_record")(*args, **kwargs)
        except BaseException as exc:
            self._failed(exc, key)
            raise
        self._record(Outcome.SUCCEEDED, key)
        return result

    def _delete_record(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return _resolve(self.layer, "_delete_record")(*args, **kwargs)
        except BaseException as exc:
            self._failed(exc, getattr(_arg(args, kwargs, "data_record"), "idempotency_key", None))
            raise


def instrument(persistence_layer: Any, emitter: Emitter, *, detect_takeover: Any = "auto",
               log_key: Callable[[str], str] | None = None) -> Any:
    """Make a Powertools idempotency persistence layer report every decision through ``emitter``; returns the layer.

    Use it once at init, then hand the layer to ``@idempotent`` / ``@idempotent_function`` as usual::

        persistence = instrument(DynamoDBPersistenceLayer(table_name="idempotency"), em)

    Works for any ``BasePersistenceLayer`` (DynamoDB, the cache/Redis layer, your own) with any client object. The
    layer's ``get_record``, ``_put_record``, ``_update_record`` and ``_delete_record`` (and
    ``_get_record`` in ``"observe"`` mode) become instance attributes that call the method the layer's class has
    at that moment: patches of the class, subclass overrides and later monkeypatching act as without idemwatch.
    Calling it again with the same emitter returns the layer unchanged.

    Args:
        persistence_layer: a ``BasePersistenceLayer`` instance.
        emitter: the :class:`emitter.Emitter` of this execution environment.
        detect_takeover: how a claim that overwrote a stale IN_PROGRESS record is recognised: ``"auto"`` (a
            DynamoDB layer: ``"return_values"``; any other layer: ``"observe"``); ``"return_values"``
            (``ReturnValues=ALL_OLD`` on the DynamoDB claim; with a client lacking botocore's event system an
            IntegrationWarning says takeovers go undetected); ``"observe"`` (the record the layer reads itself
            during its claim, as the cache layer does); ``"read"`` (one ``_get_record`` before each claim: an extra
            request); ``False`` (every successful claim is ``claimed``); or a callable
            ``(layer, data_record) -> bool`` asked after each successful claim.
        log_key: optional ``(powertools_key) -> str`` naming the key in the log records (e.g. the readable key your
            team searches by); default: Powertools' key. The emitter's key hashing applies after it.

    Raises:
        IntegrationError: ``persistence_layer`` is not a BasePersistenceLayer, is instrumented with another emitter,
            or ``detect_takeover`` is not one of the values above (``"return_values"`` needs a DynamoDB layer).
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
    names = PC.WRAPPED_METHODS + (("_get_record",) if inst.mode == "observe" else ())
    for name in names:
        setattr(persistence_layer, name, getattr(inst, name))
    setattr(persistence_layer, _INSTRUMENTED, inst)
    return persistence_layer
