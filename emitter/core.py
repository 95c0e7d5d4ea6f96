"""The :class:`Emitter`: outcome calls, aggregation into EMF, structured log records, the handler wrapper.

Design (the contract is in ``emitter/CONTRACT.md``):
- every outcome call writes exactly ONE compact JSON log record at once and counts its metric in memory;
- metrics are aggregated per invocation, one group per (Operation[, EventSource]); ``flush()`` (called by the
  wrapper on every exit path) writes each group as one or more EMF documents (split at 100 metrics / 100 values /
  256 KB, never dropped). Count metrics are summed (one value per document), Milliseconds metrics keep every value;
- so for the same traffic: number of log records with ``outcome=X`` == Sum of the metric of X (tested);
- invalid input never raises into the handler (unless ``strict``): the bad element is dropped, everything else is
  written, and ONE warning record per call carries ``idemwatch_warning`` (a WarningCode) and the list of drops;
- all state changes and sink writes happen under one lock: outcomes from worker threads are all counted.
"""

from __future__ import annotations

import _thread
import os
import sys
import time

from emitter import constants as C
from emitter import emf
from emitter import outcomes as _o
from emitter.adapters import adapt_event, adapt_single, detect_source
from emitter.classify import ErrorClassifier
from emitter.context import InvocationInfo
from emitter.contract import (
    DEFAULT_REDACTED_KEYS,
    DIMENSION_SETS,
    ENV_NAMESPACE,
    ENV_NAMESPACE_FALLBACK,
    ENV_SERVICE,
    ENV_SERVICE_FALLBACK,
    ERROR_CLASS_OUTCOME,
    EVENT_SOURCE_DIMENSION_SET,
    NAMESPACE_DEFAULT,
    REDACTED,
    SCHEMA_VERSION,
    SERVICE_UNDEFINED,
    ErrorClass,
    LogKey,
    Outcome,
)
from emitter.exceptions import EmfValidationError, SinkError, TimeoutBudgetExceeded
from emitter.jsonfast import dumps as _dumps
from emitter.jsonfast import esc as _esc
from emitter.redact import KeyHasher, normalize_name, normalized_set
from emitter.sanitize import sanitize as _sanitize
from emitter.sinks import Sink, StdoutSink
from emitter.types import Classification, EventRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

# Hot-path names from emitter.outcomes (module globals: one dict lookup each).
_CONTRACT_METRICS = _o.CONTRACT_METRICS
_EMF_PROPS = _o.EMF_PROPS
_ERROR_CLASS_VALUES = _o.ERROR_CLASS_VALUES
_ES_VALUE = _o.ES_VALUE
_EVENT_SOURCE = _o.EVENT_SOURCE
_FAST_PARTS = _o.FAST_PARTS
_F_EXPIRES = _o.F_EXPIRES
_K_ATTEMPT = _o.K_ATTEMPT
_K_COLD_START = _o.K_COLD_START
_K_CORRELATION_ID = _o.K_CORRELATION_ID
_K_ERROR_CLASS = _o.K_ERROR_CLASS
_K_ERROR_CODE = _o.K_ERROR_CODE
_K_EVENT_ID = _o.K_EVENT_ID
_K_EVENT_SOURCE = _o.K_EVENT_SOURCE
_K_FUNCTION_NAME = _o.K_FUNCTION_NAME
_K_FUNCTION_REQUEST_ID = _o.K_FUNCTION_REQUEST_ID
_K_IDEMPOTENCY_KEY = _o.K_IDEMPOTENCY_KEY
_K_IDEMPOTENCY_STATUS = _o.K_IDEMPOTENCY_STATUS
_K_IN_PROGRESS_EXPIRES_AT_MS = _o.K_IN_PROGRESS_EXPIRES_AT_MS
_K_OPERATION = _o.K_OPERATION
_K_OUTCOME = _o.K_OUTCOME
_K_RECORD_AGE_MS = _o.K_RECORD_AGE_MS
_K_REMAINING_TIME_MS = _o.K_REMAINING_TIME_MS
_K_RETRYABLE = _o.K_RETRYABLE
_K_SCHEMA_VERSION = _o.K_SCHEMA_VERSION
_K_SERVICE = _o.K_SERVICE
_K_SIDE_EFFECT_REF = _o.K_SIDE_EFFECT_REF
_K_TENANT_ID = _o.K_TENANT_ID
_K_WARNING_CODE = _o.K_WARNING_CODE
_K_XRAY_TRACE_ID = _o.K_XRAY_TRACE_ID
_LINE_HEAD = _o.LINE_HEAD
_MAX_FIELD = _o.MAX_FIELD
_M_EVENTS_RECEIVED = _o.M_EVENTS_RECEIVED
_M_RECORD_AGE = _o.M_RECORD_AGE
_M_REDELIVERY = _o.M_REDELIVERY
_M_REMAINING_TIME_AT_SIDE_EFFECT = _o.M_REMAINING_TIME_AT_SIDE_EFFECT
_OPERATION = _o.OPERATION
_OUTCOME_METRIC_NAME = _o.OUTCOME_METRIC_NAME
_OUTCOME_SPEC = _o.OUTCOME_SPEC
_OUTCOME_VALUE = _o.OUTCOME_VALUE
_RECEIVED_HEAD = _o.RECEIVED_HEAD
_RECEIVED_TAKEN = _o.RECEIVED_TAKEN
_REMAINING_OUTCOMES = _o.REMAINING_OUTCOMES
_RESERVED_KEYS = _o.RESERVED_KEYS
_ROOT_RESERVED = _o.ROOT_RESERVED
_SERVICE = _o.SERVICE
_STATUS_VALUES = _o.STATUS_VALUES
_U_COUNT = _o.U_COUNT
_U_MS = _o.U_MS

DEFAULT_OPERATION = "default"
"""Operation dimension value for outcomes recorded outside any invocation without an explicit operation."""

_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE, without importing inspect
class _SlowPath(Exception):
    """Internal: the call needs the general record builder."""


def _default_clock() -> int:
    return time.time_ns() // 1_000_000


class _Problems(list):  # list[tuple[code, element, reason]]
    def add(self, code: str, element: str, reason: str) -> None:
        self.append((code, element[:128], reason))


class _Invocation:
    """Context manager returned by :meth:`Emitter.invocation`."""

    __slots__ = ("_cold", "_context", "_em", "_event", "_operation", "_prev")

    def __init__(self, em: Emitter, context: Any, operation: str | None, event: Any, cold_start: bool | None) -> None:
        self._em, self._context, self._operation, self._event, self._cold = em, context, operation, event, cold_start
        self._prev: InvocationInfo | None = None

    def __enter__(self) -> Emitter:
        self._prev = self._em._begin(self._context, self._operation, self._event, self._cold)
        return self._em

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self._em._end(self._prev, failed=exc_type is not None)

    async def __aenter__(self) -> Emitter:
        return self.__enter__()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.__exit__(exc_type, exc, tb)


class Emitter:
    """Idempotency and handler metrics as CloudWatch EMF, plus one structured JSON log record per outcome.

    Args:
        service: ``Service`` dimension and ``service`` log key. Default: $IDEMWATCH_SERVICE, $POWERTOOLS_SERVICE_NAME,
            else ``service_undefined``.
        namespace: CloudWatch namespace. Default: $IDEMWATCH_NAMESPACE, $POWERTOOLS_METRICS_NAMESPACE, ``Idempotency``.
        sink: where lines go (default :class:`StdoutSink`); anything with ``write_lines(iterable_of_str)``.
        event_source_dimension: add the bounded ``EventSource`` dimension (extra set ``[Service, EventSource]``).
        redact_keys: property names whose values are replaced by ``***REDACTED***`` (case-insensitive,
            ``-``/``_`` equivalent). Payload-like names (body, payload, detail, ...) are always redacted.
        hash_idempotency_keys: log ``tenant:sha256:<32 hex>`` instead of the key (tenant prefix before
            ``key_tenant_separator`` stays readable); ``key_hash_salt`` switches to HMAC-SHA256.
        strict: raise :class:`EmfValidationError` on invalid input instead of dropping it with a warning record.
        classifier: an :class:`ErrorClassifier` (or callable ``(exc, attempt) -> Classification``) for ``failure()``.
        clock: callable returning epoch MILLISECONDS (int); the demo injects simulated time.
        dimensions: extra dimensions added to every dimension set (bounded values only; at most 28).
        operation: Operation value used outside any invocation (default ``default``).

    Raises: never, except EmfValidationError in strict mode and TimeoutBudgetExceeded from check_time_budget.
    """

    def __init__(
        self,
        service: str | None = None,
        namespace: str | None = None,
        sink: Sink | None = None,
        event_source_dimension: bool = False,
        redact_keys: Iterable[str] = DEFAULT_REDACTED_KEYS,
        hash_idempotency_keys: bool = False,
        strict: bool = False,
        classifier: ErrorClassifier | Callable[..., Classification] | None = None,
        clock: Callable[[], int] | None = None,
        *,
        dimensions: Mapping[str, str] | None = None,
        operation: str | None = None,
        key_tenant_separator: str | None = ":",
        key_hash_salt: str | bytes | None = None,
    ) -> None:
        self.strict = strict
        self.sink: Any = sink if sink is not None else StdoutSink()
        self.clock: Callable[[], int] = clock or _default_clock
        self.event_source_dimension = event_source_dimension
        self.classifier = classifier or ErrorClassifier()
        self._redacted = normalized_set(redact_keys) | normalized_set(C.PAYLOAD_PROPERTY_NAMES)
        self._redact_cache: dict[str, bool] = {}
        self._valid_ops: set[str] = set()
        self._group_cache: dict[tuple[Any, ...], tuple[dict[str, str], list[list[str]], str, str]] = {}
        self._hasher = KeyHasher(key_tenant_separator, key_hash_salt) if hash_idempotency_keys else None
        self._lock = _thread.RLock()
        self._groups: dict[tuple[str | None, str | None], dict[str, emf.MetricSeries]] = {}
        self._dimensions: dict[str, str] = {}
        self._inv: InvocationInfo | None = None
        self._cold = True
        self._timestamp_ms: int | None = None
        self._ts_cache: tuple[int, str] = (-1, "")
        self.warnings: dict[str, int] = {}
        """Dropped/fixed elements so far, by WarningCode (also written as warning records)."""

        problems = _Problems()
        svc = service if service is not None else (
            os.environ.get(ENV_SERVICE) or os.environ.get(ENV_SERVICE_FALLBACK) or SERVICE_UNDEFINED)
        self.service: str = svc if isinstance(svc, str) else str(svc)
        if reason := emf.check_dimension_value(svc):
            problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{_SERVICE}", reason)
            self._service_dim: str | None = None
        else:
            self._service_dim = svc
        ns = namespace if namespace is not None else (
            os.environ.get(ENV_NAMESPACE) or os.environ.get(ENV_NAMESPACE_FALLBACK) or NAMESPACE_DEFAULT)
        if reason := emf.check_namespace(ns):
            problems.add(C.WarningCode.INVALID_NAMESPACE, "namespace", reason + f"; using {NAMESPACE_DEFAULT}")
            ns = NAMESPACE_DEFAULT
        self.namespace: str = ns
        self._default_operation = DEFAULT_OPERATION
        if operation is not None:
            if reason := emf.check_dimension_value(operation):
                problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{_OPERATION}", reason)
            else:
                self._default_operation = operation
        self._idle_static = self._static_json(None, self._default_operation)
        self._idle_emf_props = self._emf_props_json(None)
        for name, value in (dimensions or {}).items():
            self._add_dimension(name, value, problems)
        self._report(problems)

    # ------------------------------------------------------------------ invocation lifecycle
    def handler(self, fn: Callable[..., Any] | None = None, *, operation: str | None = None) -> Any:
        """Decorator for a Lambda handler ``(event, context)``, sync or ``async def``.

        Captures the context, detects the event source, writes a ``cold_start`` record on cold invocations, flushes
        on every exit path (including exceptions) and returns the handler's result untouched.
        ``operation`` defaults to the function's ``__name__``. Usable as ``@em.handler`` or ``@em.handler(operation=..)``.
        """

        def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
            op = operation or getattr(func, "__name__", None) or DEFAULT_OPERATION
            code = getattr(func, "__code__", None)
            if code is not None and code.co_flags & _CO_COROUTINE:

                async def async_wrapper(event: Any, context: Any = None, *args: Any, **kwargs: Any) -> Any:
                    with _Invocation(self, context, op, event, None):
                        return await func(event, context, *args, **kwargs)

                wrapper: Callable[..., Any] = async_wrapper
            else:

                def wrapper(event: Any, context: Any = None, *args: Any, **kwargs: Any) -> Any:
                    prev = self._begin(context, op, event, None)  # inlined `with invocation()`: per-call cost
                    failed = True
                    pending = False
                    try:
                        result = func(event, context, *args, **kwargs)
                        failed = False
                        if hasattr(result, "__await__"):  # an async handler hidden behind another decorator
                            pending = True
                            return self._finish_awaitable(result, prev)
                        return result
                    finally:
                        if not pending:
                            self._end(prev, failed)

            for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
                try:
                    setattr(wrapper, attr, getattr(func, attr))
                except (AttributeError, TypeError):
                    pass
            wrapper.__wrapped__ = func  # type: ignore[attr-defined]
            return wrapper

        return decorate(fn) if fn is not None else decorate

    async def _finish_awaitable(self, awaitable: Any, prev: InvocationInfo | None) -> Any:
        failed = True
        try:
            result = await awaitable
            failed = False
            return result
        finally:
            self._end(prev, failed)

    def invocation(self, context: Any = None, operation: str | None = None, event: Any = None,
                   cold_start: bool | None = None) -> _Invocation:
        """Context manager (sync and async) doing what :meth:`handler` does around a block.

        ``event`` (optional) is used only to detect the event source. ``cold_start`` overrides cold-start detection
        (default: the first invocation through this Emitter is cold, except provisioned-concurrency environments).
        """
        return _Invocation(self, context, operation, event, cold_start)

    def _begin(self, context: Any, operation: str | None, event: Any, cold_start: bool | None) -> InvocationInfo | None:
        problems = _Problems()
        try:
            now = self.clock()
            info = InvocationInfo(context, self.clock, now)
            op: str | None = operation if operation is not None else self._default_operation
            if op not in self._valid_ops:
                if reason := emf.check_dimension_value(op):
                    problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{_OPERATION}", reason)
                    op = None
                elif len(self._valid_ops) < 256:
                    self._valid_ops.add(op)  # type: ignore[arg-type]  # checked: a valid str
            info.operation = op
            info.event_source = detect_source(event) if event is not None else None
            with self._lock:
                if cold_start is None:
                    cold = self._cold and os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") != "provisioned-concurrency"
                else:
                    cold = bool(cold_start)
                self._cold = False
                info.cold_start = cold
                info.static_json = self._static_json(info, op)
                prev, self._inv = self._inv, info
        except Exception as exc:  # never break the handler
            if self.strict:
                raise
            self._count_warning(C.WarningCode.INTERNAL_ERROR, 1)
            self._stderr(f"idemwatch: invocation start failed: {type(exc).__name__}")
            return self._inv
        if problems:
            self._report(problems)
        if info.cold_start:
            self.record_outcome(Outcome.COLD_START, remaining_time_ms=info.remaining_ms())
        return prev

    def _end(self, prev: InvocationInfo | None, failed: bool) -> None:
        try:
            self.flush()
        except Exception:
            if self.strict and not failed:
                raise
        finally:
            with self._lock:
                self._inv = prev

    @property
    def cold_start(self) -> bool | None:
        """Whether the current invocation is a cold start (None outside an invocation)."""
        inv = self._inv
        return None if inv is None else inv.cold_start

    def remaining_time_ms(self) -> float | None:
        """Milliseconds left in the current invocation (from the context); None if unknown."""
        inv = self._inv
        return None if inv is None else inv.remaining_ms()

    # ------------------------------------------------------------------ adapters
    def records(self, event: Any) -> list[EventRecord]:
        """Adapt ``event`` into one :class:`EventRecord` per batch record (or one for a single event) and write one
        ``received`` outcome per record (EventsReceived; Redelivery when attempt > 1; RecordAge when known).
        Never raises (strict: raises on a malformed record of a known source)."""
        try:
            recs, errors = adapt_event(event, self.clock())
        except Exception as exc:  # pragma: no cover - adapters catch their own errors
            recs, errors = [EventRecord(raw=event)], [f"adapter crashed ({type(exc).__name__})"]
        self._adapter_errors(errors)
        for r in recs:
            self._received(r)
        return recs

    def record_for(self, event: Any) -> EventRecord:
        """Same as :meth:`records` for a single (non-batch) event: returns one EventRecord and writes one ``received``."""
        try:
            rec, err = adapt_single(event, self.clock())
        except Exception as exc:  # pragma: no cover
            rec, err = EventRecord(raw=event), f"adapter crashed ({type(exc).__name__})"
        self._adapter_errors([err] if err else [])
        self._received(rec)
        return rec

    def _received(self, rec: EventRecord) -> None:
        """The ``received`` outcome of an adapter-made record: a fast path writing exactly what
        ``record_outcome(Outcome.RECEIVED, rec)`` writes (tested); unusual values go through record_outcome."""
        try:
            eid, key, corr, attempt, age = rec.event_id, rec.idempotency_key, rec.correlation_id, rec.attempt, \
                rec.record_age_ms
            if (
                attempt.__class__ is not int
                or (eid is not None and (eid.__class__ is not str or len(eid) > _MAX_FIELD))
                or (key is not None and (key.__class__ is not str or len(key) > _MAX_FIELD))
                or (corr is not None and (corr.__class__ is not str or len(corr) > _MAX_FIELD))
                or (age is not None and (age.__class__ is not int or age < 0))
            ):
                raise _SlowPath
            es = _ES_VALUE.get(rec.event_source)
            if es is None:
                raise _SlowPath
            parts = [_RECEIVED_HEAD, f'"{_K_EVENT_SOURCE}":"{es}"']
            if eid is not None:
                parts.append(f'"{_K_EVENT_ID}":{_esc(eid)}')
            if key is not None:
                parts.append(f'"{_K_IDEMPOTENCY_KEY}":{_esc(key if self._hasher is None else self._hasher(key))}')
            parts.append(f'"{_K_ATTEMPT}":{int.__repr__(attempt)}')
            if corr is not None:
                parts.append(f'"{_K_CORRELATION_ID}":{_esc(corr)}')
            if age is not None:
                parts.append(f'"{_K_RECORD_AGE_MS}":{int.__repr__(age)}')
            for dk, dv in rec.details.items():
                if dv is None:
                    continue
                if dk.__class__ is not str or dk in _RECEIVED_TAKEN or dk in _RESERVED_KEYS:
                    raise _SlowPath
                if self._is_redacted(dk):
                    parts.append(f'{_esc(dk)}:"{REDACTED}"')
                elif dv.__class__ is str and len(dv) <= _MAX_FIELD:
                    parts.append(f"{_esc(dk)}:{_esc(dv)}")
                elif dv.__class__ is int:
                    parts.append(f"{_esc(dk)}:{int.__repr__(dv)}")
                else:
                    raise _SlowPath
            inv = self._inv
            if inv is not None:
                static, op = inv.static_json, inv.operation
            else:
                static, op = self._idle_static, self._default_operation
            line = f'{_LINE_HEAD[Outcome.RECEIVED]}{self._iso(self.clock())}",{static},{",".join(parts)}}}'
            if len(line) > C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM:
                raise _SlowPath
            es = es if self.event_source_dimension else None
            with self._lock:
                self._add(op, es, _M_EVENTS_RECEIVED, _U_COUNT, 60, 1, True)
                if attempt > 1:
                    self._add(op, es, _M_REDELIVERY, _U_COUNT, 60, 1, True)
                if age is not None:
                    self._add(op, es, _M_RECORD_AGE, _U_MS, 60, age, False)
                self._write([line])
        except _SlowPath:
            self.record_outcome(Outcome.RECEIVED, rec)
        except Exception as exc:  # never break the handler
            if self.strict:
                raise
            self._count_warning(C.WarningCode.INTERNAL_ERROR, 1)
            self._stderr(f"idemwatch: could not record received: {type(exc).__name__}")

    def _adapter_errors(self, errors: list[str]) -> None:
        if errors:
            p = _Problems()
            for e in errors:
                p.add(C.WarningCode.ADAPTER_ERROR, "record", e)
            self._report(p)

    # ------------------------------------------------------------------ outcome calls
    def claimed(self, record: EventRecord | None = None, key: str | None = None, *,
                expires_at_ms: int | None = None, **props: Any) -> None:
        """Key claimed (record written IN_PROGRESS). No metric; ``expires_at_ms`` (epoch ms) feeds stuck-key detection."""
        self._outcome(Outcome.CLAIMED, record, key, _F_EXPIRES, expires_at_ms, props)

    def succeeded(self, record: EventRecord | None = None, key: str | None = None, **props: Any) -> None:
        """First processing finished and recorded COMPLETED: EventsSucceeded."""
        self._outcome(Outcome.SUCCEEDED, record, key, None, None, props)

    def duplicate_completed(self, record: EventRecord | None = None, key: str | None = None, **props: Any) -> None:
        """Key already COMPLETED with the same payload hash: DuplicateCompleted."""
        self._outcome(Outcome.DUPLICATE_COMPLETED, record, key, None, None, props)

    def duplicate_in_progress(self, record: EventRecord | None = None, key: str | None = None, **props: Any) -> None:
        """Key IN_PROGRESS and not expired (concurrent duplicate): DuplicateInProgress."""
        self._outcome(Outcome.DUPLICATE_IN_PROGRESS, record, key, None, None, props)

    def payload_conflict(self, record: EventRecord | None = None, key: str | None = None, **props: Any) -> None:
        """Key reused with a different payload hash: PayloadConflict."""
        self._outcome(Outcome.PAYLOAD_CONFLICT, record, key, None, None, props)

    def stale_claim_takeover(self, record: EventRecord | None = None, key: str | None = None, *,
                             expires_at_ms: int | None = None, **props: Any) -> None:
        """Expired IN_PROGRESS claim taken over: StaleClaimTakeover. ``expires_at_ms`` = the NEW claim's expiry."""
        self._outcome(Outcome.STALE_CLAIM_TAKEOVER, record, key, _F_EXPIRES, expires_at_ms, props)

    def retryable_failure(self, record: EventRecord | None = None, key: str | None = None, *,
                          error_code: str | None = None, **props: Any) -> None:
        """Failure the source will retry: RetryableFailure."""
        self._outcome(Outcome.RETRYABLE_FAILURE, record, key, _K_ERROR_CODE, error_code, props)

    def permanent_failure(self, record: EventRecord | None = None, key: str | None = None, *,
                          error_code: str | None = None, **props: Any) -> None:
        """Validation or other permanent failure: PermanentFailure."""
        self._outcome(Outcome.PERMANENT_FAILURE, record, key, _K_ERROR_CODE, error_code, props)

    def poison_message(self, record: EventRecord | None = None, key: str | None = None, *,
                       error_code: str | None = None, **props: Any) -> None:
        """Event quarantined or routed to a DLQ: PoisonMessage."""
        self._outcome(Outcome.POISON_MESSAGE, record, key, _K_ERROR_CODE, error_code, props)

    def ambiguous_commit(self, record: EventRecord | None = None, key: str | None = None, *,
                         side_effect_ref: str | None = None, **props: Any) -> None:
        """Side-effect outcome unknown (e.g. timeout after the call): AmbiguousCommit."""
        self._outcome(Outcome.AMBIGUOUS_COMMIT, record, key, _K_SIDE_EFFECT_REF, side_effect_ref, props)

    def side_effect_started(self, record: EventRecord | None = None, key: str | None = None, *,
                            side_effect_ref: str | None = None, **props: Any) -> None:
        """A side effect starts: RemainingTimeAtSideEffect = remaining invocation time (ms) from the context
        (or ``remaining_time_ms=`` given explicitly). No value when unknown (then no metric either)."""
        self.record_outcome(Outcome.SIDE_EFFECT_STARTED, record, key, side_effect_ref=side_effect_ref, **props)

    def store_error(self, record: EventRecord | None = None, key: str | None = None, *,
                    error_code: str | None = None, **props: Any) -> None:
        """The idempotency persistence layer failed: IdempotencyStoreError."""
        self._outcome(Outcome.STORE_ERROR, record, key, _K_ERROR_CODE, error_code, props)

    def batch_item_failures(self, failed: Iterable[EventRecord | str]) -> dict[str, list[dict[str, str]]]:
        """Build the partial-batch response and write one ``batch_item_failure`` record per item (BatchItemFailures).

        ``failed``: EventRecords (their ``item_identifier``) or item id strings. Duplicates are reported once.
        An item without an identifier is returned as ``""``: Lambda then retries the whole batch (nothing is lost)
        and a ``missing_item_identifier`` warning is written.
        Returns ``{"batchItemFailures": [{"itemIdentifier": id}, ...]}``
        (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html#services-sqs-batchfailurereporting).
        """
        out: list[dict[str, str]] = []
        seen: set[str] = set()
        problems = _Problems()
        items = []
        for item in failed:
            rec = item if isinstance(item, EventRecord) else None
            ident = rec.item_identifier if rec is not None else item
            if not isinstance(ident, str) or not ident:
                problems.add(C.WarningCode.MISSING_ITEM_IDENTIFIER, "batchItemFailures",
                             "item without identifier returned as '' (Lambda retries the whole batch)")
                ident = ""
            if ident in seen:
                problems.add(C.WarningCode.DUPLICATE_ITEM_IDENTIFIER, "batchItemFailures", "item listed twice")
                continue
            seen.add(ident)
            out.append({"itemIdentifier": ident})
            items.append((rec, ident))
        self._report(problems)
        for rec, ident in items:
            self.record_outcome(Outcome.BATCH_ITEM_FAILURE, rec if rec is not None else (ident or None))
        return {"batchItemFailures": out}

    def check_time_budget(self, required_ms: float, record: EventRecord | None = None, key: str | None = None,
                          **props: Any) -> float | None:
        """Refuse a side effect when the remaining time (ms) is below ``required_ms``.

        Returns the remaining milliseconds (None when unknown: no context, so no check). When remaining < required,
        writes a ``timeout_budget_abort`` record (TimeoutBudgetAbort) and raises :class:`TimeoutBudgetExceeded`
        (retryable; ``failure()`` on it records nothing more).
        """
        value, reason = emf.coerce_metric_value(required_ms)
        if reason is not None:
            p = _Problems()
            p.add(C.WarningCode.INVALID_PROPERTY, "required_ms", reason + "; budget not checked")
            self._report(p)
            return self.remaining_time_ms()
        remaining = self.remaining_time_ms()
        if remaining is None or remaining >= value:  # type: ignore[operator]
            return remaining
        self.record_outcome(Outcome.TIMEOUT_BUDGET_ABORT, record, key, remaining_time_ms=remaining,
                            required_time_ms=value, **props)
        exc = TimeoutBudgetExceeded(remaining, value)  # type: ignore[arg-type]
        exc._idemwatch_recorded = True  # type: ignore[attr-defined]
        raise exc

    def failure(self, exc: BaseException, record: EventRecord | None = None, key: str | None = None,
                **props: Any) -> Classification:
        """Classify ``exc`` (the emitter's classifier, with the record's attempt) and write retryable_failure /
        permanent_failure / poison_message with its error code. Returns the Classification. The exception message
        is never logged. A TimeoutBudgetExceeded already recorded by check_time_budget is not recorded twice."""
        attempt = record.attempt if isinstance(record, EventRecord) else 1
        try:
            c = self.classifier(exc, attempt) if not isinstance(self.classifier, ErrorClassifier) \
                else self.classifier.classify(exc, attempt)
        except Exception:
            c = Classification(ErrorClass.RETRYABLE, type(exc).__name__, True)
        if getattr(exc, "_idemwatch_recorded", False):
            return c
        self.record_outcome(ERROR_CLASS_OUTCOME[c.error_class], record, key, error_code=c.error_code,
                            error_class=c.error_class.value, retryable=c.retryable, **props)
        return c

    # ------------------------------------------------------------------ the generic outcome writer
    def _outcome(self, outcome: Outcome, record: Any, key: Any, field: str | None, value: Any,
                 props: dict[str, Any]) -> None:
        """Outcome methods land here. The common call (an EventRecord or None, a plain key, at most one known
        keyword, no extra properties) takes a fast path that writes exactly what :meth:`record_outcome` writes for
        the same call (a test compares them); anything else goes through record_outcome."""
        try:
            if (
                props
                or (record is not None and record.__class__ is not EventRecord)
                or (value is not None and (value.__class__ is not (int if field is _F_EXPIRES else str)
                                           or (field is not _F_EXPIRES and len(value) > _MAX_FIELD)))  # type: ignore[arg-type]
            ):
                raise _SlowPath
            # JSON assembled from C-escaped pieces in the key order record_outcome uses (same bytes, tested).
            head, status_part, code_default, tail_const = _FAST_PARTS[outcome]
            inv = self._inv
            es: Any
            if record is not None:
                es = record.event_source
                eid = record.event_id
                if key is None:
                    key = record.idempotency_key
                attempt = record.attempt
                corr = record.correlation_id
                if attempt.__class__ is not int or (corr is not None and (
                        corr.__class__ is not str or len(corr) > _MAX_FIELD)):
                    raise _SlowPath
            else:
                es = inv.event_source if inv is not None else None
                eid = corr = attempt = None
            parts = [f'"{_K_OUTCOME}":"{_OUTCOME_VALUE[outcome]}"']
            if es is not None:
                es = _ES_VALUE.get(es, es)
                if es.__class__ is not str:
                    raise _SlowPath
                parts.append(f'"{_K_EVENT_SOURCE}":{_esc(es)}')
            if eid is not None:
                if eid.__class__ is not str or len(eid) > _MAX_FIELD:
                    raise _SlowPath
                parts.append(f'"{_K_EVENT_ID}":{_esc(eid)}')
            if key is not None:
                if key.__class__ is not str or len(key) > _MAX_FIELD:
                    raise _SlowPath
                parts.append(f'"{_K_IDEMPOTENCY_KEY}":{_esc(key if self._hasher is None else self._hasher(key))}')
                if status_part:
                    parts.append(status_part)
            if value is not None and field is _F_EXPIRES:
                parts.append(f'"{_K_IN_PROGRESS_EXPIRES_AT_MS}":{int.__repr__(value)}')
            if value is not None and field is _K_ERROR_CODE:
                parts.append(f'"{_K_ERROR_CODE}":{_esc(value)}')
            elif code_default:
                parts.append(code_default)
            if tail_const:
                parts.append(tail_const)
            if attempt is not None:
                parts.append(f'"{_K_ATTEMPT}":{int.__repr__(attempt)}')
            if corr is not None:
                parts.append(f'"{_K_CORRELATION_ID}":{_esc(corr)}')
            if value is not None and field is _K_SIDE_EFFECT_REF:
                parts.append(f'"{_K_SIDE_EFFECT_REF}":{_esc(value)}')
            if inv is not None:
                static, op = inv.static_json, inv.operation
            else:
                static, op = self._idle_static, self._default_operation
            ms = self.clock()
            sec = ms // 1000
            ts = self._ts_cache  # read once: another thread may replace it
            if ts[0] != sec:
                ts = self._ts_entry(sec)
            line = f'{head}{ts[1]}.{ms - sec * 1000:03d}Z",{static},{",".join(parts)}}}'
            metric = _OUTCOME_METRIC_NAME[outcome]
            es = es if self.event_source_dimension else None
            with self._lock:
                if metric is not None:
                    group = self._groups.get((op, es))
                    if group is None:
                        group = self._groups[(op, es)] = {}
                    ser = group.get(metric)
                    if ser is None:
                        group[metric] = emf.MetricSeries(metric, _U_COUNT, 60, [1])
                    else:
                        ser.values[0] += 1
                self._write([line])
        except _SlowPath:
            if value is not None:
                props[field] = value  # type: ignore[index]
            self.record_outcome(outcome, record, key, **props)
        except EmfValidationError:
            raise
        except Exception as exc:  # never break the handler
            if self.strict:
                raise
            self._count_warning(C.WarningCode.INTERNAL_ERROR, 1)
            self._stderr(f"idemwatch: could not record {outcome!s}: {type(exc).__name__}")

    def record_outcome(self, outcome: Outcome | str, /, record: EventRecord | str | None = None, key: str | None = None,
                       **props: Any) -> None:
        """Write one log record with ``outcome`` and count its metric (see contract.OUTCOME_METRIC).

        Known keyword args: ``expires_at_ms`` (epoch ms), ``error_code``, ``error_class``, ``retryable``,
        ``side_effect_ref``, ``tenant_id``, ``correlation_id``, ``idempotency_status``, ``remaining_time_ms``,
        ``operation`` (overrides the invocation's). Anything else is an extra log property (redacted by name,
        sanitized to JSON; never pass payloads). ``record`` may be an EventRecord or an event id string.
        """
        problems = _Problems()
        try:
            if outcome.__class__ is not Outcome:
                try:
                    outcome = Outcome(outcome)
                except ValueError:
                    problems.add(C.WarningCode.INVALID_PROPERTY, "outcome", "not an Outcome value; nothing recorded")
                    self._report(problems)
                    return
            line, metric_value, op, es = self._build_record(outcome, record, key, props, problems)
            if problems:
                self._report(problems)  # strict raises here, before anything is written
            metric = _OUTCOME_METRIC_NAME[outcome]
            with self._lock:
                if metric is not None:
                    if metric is _M_REMAINING_TIME_AT_SIDE_EFFECT:
                        if metric_value is not None:
                            self._add(op, es, metric, _U_MS, 60, metric_value, False)
                    else:
                        self._add(op, es, metric, _U_COUNT, 60, 1, True)
                if outcome is Outcome.RECEIVED and isinstance(record, EventRecord):
                    if record.attempt > 1:
                        self._add(op, es, _M_REDELIVERY, _U_COUNT, 60, 1, True)
                    if metric_value is not None:
                        self._add(op, es, _M_RECORD_AGE, _U_MS, 60, metric_value, False)
                self._write([line])
        except EmfValidationError:
            raise
        except Exception as exc:  # never break the handler
            if self.strict:
                raise
            self._count_warning(C.WarningCode.INTERNAL_ERROR, 1)
            self._stderr(f"idemwatch: could not record {outcome!s}: {type(exc).__name__}")

    def _build_record(self, outcome: Outcome, record: Any, key: Any, props: dict[str, Any],
                      problems: _Problems) -> tuple[str, float | None, str | None, str | None]:
        level, status, retryable, error_class, error_code, message = _OUTCOME_SPEC[outcome]
        inv = self._inv
        static = inv.static_json if inv is not None else self._idle_static
        op = inv.operation if inv is not None else self._default_operation
        rec = record if isinstance(record, EventRecord) else None
        explicit_status = False
        f: dict[str, Any] = {_K_OUTCOME: _OUTCOME_VALUE[outcome]}
        es = rec.event_source if rec is not None else (inv.event_source if inv is not None else None)
        if es is not None:
            es = _ES_VALUE.get(es, es)
            f[_K_EVENT_SOURCE] = es
        if rec is not None:
            eid = rec.event_id
            if eid is not None:
                f[_K_EVENT_ID] = eid if eid.__class__ is str and len(eid) <= _MAX_FIELD else self._field(
                    eid, _K_EVENT_ID, problems)
        elif record is not None:
            f[_K_EVENT_ID] = self._field(record, _K_EVENT_ID, problems)

        if props:
            if "operation" in props:
                o = props.pop("operation")
                if o is not None:
                    if reason := emf.check_dimension_value(o):
                        problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{_OPERATION}", reason)
                    elif o != op:
                        op = o
                        static = self._static_json(inv, op)
            st = props.pop(_K_IDEMPOTENCY_STATUS, None)
            if st is not None:
                st = getattr(st, "value", st)
                if st in _STATUS_VALUES:
                    status, explicit_status = st, True
                else:
                    problems.add(C.WarningCode.INVALID_PROPERTY, _K_IDEMPOTENCY_STATUS,
                                 "not an IdempotencyStatus value")
            r = props.pop(_K_RETRYABLE, None)
            if r is not None:
                retryable = bool(r)
            ec = props.pop(_K_ERROR_CLASS, None)
            if ec is not None:
                ec = getattr(ec, "value", ec)
                if ec in _ERROR_CLASS_VALUES:
                    error_class = ec
                else:
                    problems.add(C.WarningCode.INVALID_PROPERTY, _K_ERROR_CLASS, "not an ErrorClass value")
            code = props.pop(_K_ERROR_CODE, None)
            if code is not None:
                error_code = self._field(code, _K_ERROR_CODE, problems)
            exp = props.pop("expires_at_ms", None)
            if exp is None:
                exp = props.pop(_K_IN_PROGRESS_EXPIRES_AT_MS, None)
        else:
            exp = None

        k = key if key is not None else (rec.idempotency_key if rec is not None else None)
        if k is not None:
            f[_K_IDEMPOTENCY_KEY] = k if (k.__class__ is str and self._hasher is None and len(k) <= _MAX_FIELD) \
                else self._key(k, problems)
        if status is not None and (k is not None or explicit_status):  # a status describes a key's record
            f[_K_IDEMPOTENCY_STATUS] = status
        if exp is not None:
            v, reason = emf.coerce_metric_value(exp)
            if reason is None:
                f[_K_IN_PROGRESS_EXPIRES_AT_MS] = int(v)  # type: ignore[arg-type]
            else:
                problems.add(C.WarningCode.INVALID_PROPERTY, _K_IN_PROGRESS_EXPIRES_AT_MS, reason)
        if error_code is not None:
            f[_K_ERROR_CODE] = error_code
        if error_class is not None:
            f[_K_ERROR_CLASS] = error_class
        if retryable is not None:
            f[_K_RETRYABLE] = retryable
        if rec is not None:
            f[_K_ATTEMPT] = rec.attempt
            corr = props.pop(_K_CORRELATION_ID, None) if props else None
            corr = corr if corr is not None else rec.correlation_id
            if corr is not None:
                f[_K_CORRELATION_ID] = self._field(corr, _K_CORRELATION_ID, problems)

        metric_value: float | None = None
        if outcome is Outcome.RECEIVED and rec is not None:
            if rec.record_age_ms is not None:
                metric_value, reason = emf.coerce_metric_value(rec.record_age_ms)
                if reason is None:
                    f[_K_RECORD_AGE_MS] = metric_value
                else:
                    problems.add(C.WarningCode.INVALID_METRIC_VALUE, _M_RECORD_AGE, reason)
            for dk, dv in rec.details.items():
                if dv is not None and dk not in f and dk not in props and dk not in _RESERVED_KEYS:
                    if self._is_redacted(dk):
                        f[dk] = REDACTED
                    elif dv.__class__ in (str, int) and (dv.__class__ is int or len(dv) <= _MAX_FIELD):  # type: ignore[arg-type]
                        f[dk] = dv  # adapter-made bounded values: no sanitizing needed
                    else:
                        props[dk] = dv
        if props and _K_REMAINING_TIME_MS in props:
            rem = props.pop(_K_REMAINING_TIME_MS)
        elif outcome in _REMAINING_OUTCOMES:
            rem = inv.remaining_ms() if inv is not None else None
        else:
            rem = None
        if rem is not None:
            v, reason = emf.coerce_metric_value(rem)
            if reason is None and v >= 0:  # type: ignore[operator]
                f[_K_REMAINING_TIME_MS] = v
                if outcome is Outcome.SIDE_EFFECT_STARTED:
                    metric_value = v
            else:
                problems.add(C.WarningCode.INVALID_METRIC_VALUE, _M_REMAINING_TIME_AT_SIDE_EFFECT,
                             reason or "negative remaining time")
        if props:
            for name in (_K_SIDE_EFFECT_REF, _K_TENANT_ID):
                if name in props:
                    v = props.pop(name)
                    if v is not None:
                        f[name] = self._field(v, name, problems)
            if props:
                self._extra_props(f, props, problems)
        line = self._line(level, message, static, f)
        if len(line) > C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM:
            line = self._shrink(level, message, static, f, problems)
        return line, metric_value, op, es if self.event_source_dimension else None

    # ------------------------------------------------------------------ record helpers
    def _field(self, value: Any, name: str, problems: _Problems) -> str:
        """A contract string field: str (ints converted), truncated to MAX_LOG_FIELD_CHARS."""
        if not isinstance(value, str):
            value = getattr(value, "value", value)
            value = value if isinstance(value, str) else (str(value) if isinstance(value, (int, float)) else f"<{type(value).__name__}>")
        if len(value) > C.MAX_LOG_FIELD_CHARS:
            problems.add(C.WarningCode.VALUE_TRUNCATED, name, f"{len(value)} characters truncated to {C.MAX_LOG_FIELD_CHARS}")
            value = value[: C.MAX_LOG_FIELD_CHARS]
        return value

    def _key(self, key: Any, problems: _Problems) -> str:
        if not isinstance(key, str):
            key = str(key) if isinstance(key, (int, float)) and not isinstance(key, bool) else None
            if key is None:
                problems.add(C.WarningCode.INVALID_PROPERTY, _K_IDEMPOTENCY_KEY, "key must be a string")
                return "<invalid>"
        if self._hasher is not None:
            return self._hasher(key)
        return self._field(key, _K_IDEMPOTENCY_KEY, problems)

    def _extra_props(self, f: dict[str, Any], props: dict[str, Any], problems: _Problems) -> None:
        for name, value in props.items():
            if name in _RESERVED_KEYS:
                problems.add(C.WarningCode.NAME_CONFLICT, f"property:{name}", "the emitter owns this log key")
                continue
            if self._is_redacted(name):
                f[name] = REDACTED
                continue
            f[name] = _sanitize(value, self._redacted, problems, name, 0)

    def _is_redacted(self, name: str) -> bool:
        hit = self._redact_cache.get(name)
        if hit is None:
            hit = normalize_name(name) in self._redacted
            if len(self._redact_cache) < 1024:
                self._redact_cache[name] = hit
        return hit

    def _line(self, level: str, message: str, static: str, f: dict[str, Any]) -> str:
        body = _dumps(f)
        return (f'{{"level":"{level}","message":"{message}","timestamp":"{self._iso(self.clock())}",'
                f'{static},{body[1:]}')

    def _shrink(self, level: str, message: str, static: str, f: dict[str, Any], problems: _Problems) -> str:
        """Drop the largest extra properties until the record fits in a log event."""
        contract = set(LogKey._value2member_map_)
        extras = sorted((k for k in f if k not in contract), key=lambda k: len(_dumps(f[k])), reverse=True)
        line = self._line(level, message, static, f)
        for k in extras:
            problems.add(C.WarningCode.PROPERTY_TOO_LARGE, f"property:{k}",
                         f"record over {C.MAX_EVENT_BYTES} bytes; property dropped")
            del f[k]
            line = self._line(level, message, static, f)
            if len(line) <= C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM:
                break
        return line

    def _iso(self, ms: int) -> str:
        """ISO-8601 UTC with milliseconds for epoch ms (the seconds part is cached: most records share it)."""
        sec = int(ms) // 1000
        ts = self._ts_cache
        if ts[0] != sec:
            ts = self._ts_entry(sec)
        return f"{ts[1]}.{int(ms) - sec * 1000:03d}Z"

    def _ts_entry(self, sec: int) -> tuple[int, str]:
        ts = (sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)))
        self._ts_cache = ts
        return ts

    def _static_json(self, inv: InvocationInfo | None, operation: str | None) -> str:
        """Invocation-constant keys, serialized once per invocation (string concatenation of C-escaped values:
        this runs on every invocation)."""
        parts = [f'"{_K_SERVICE}":{_esc(self.service)}']
        if inv is not None:
            parts.append(f'"{_K_COLD_START}":{"true" if inv.cold_start else "false"}')
            if inv.function_name:
                parts.append(f'"{_K_FUNCTION_NAME}":{_esc(inv.function_name)}')
            if inv.request_id:
                parts.append(f'"{_K_FUNCTION_REQUEST_ID}":{_esc(inv.request_id)}')
            if inv.xray_trace_id:
                parts.append(f'"{_K_XRAY_TRACE_ID}":{_esc(inv.xray_trace_id)}')
        if operation is not None:
            parts.append(f'"{_K_OPERATION}":{_esc(operation)}')
        parts.append(f'"{_K_SCHEMA_VERSION}":"{SCHEMA_VERSION}"')
        return ",".join(parts)

    # ------------------------------------------------------------------ metrics
    def _add(self, op: str | None, es: str | None, name: str, unit: str, resolution: int, value: float,
             summed: bool) -> None:
        group = self._groups.get((op, es))
        if group is None:
            group = self._groups[(op, es)] = {}
        s = group.get(name)
        if s is None:
            group[name] = emf.MetricSeries(name, unit, resolution, [value])
        elif summed:
            s.values[0] += value
        else:
            s.values.append(value)

    def add_metric(self, name: str, value: float, unit: str = "Count", resolution: int = 60,
                   operation: str | None = None) -> None:
        """Add a custom metric value (kept as a value list, split at 100 values). ``resolution``: the int 1 (high
        resolution) or 60. Names of the contract's metrics, dimensions and EMF members are refused (they would break
        the logs == metrics equality or the document). Invalid input: dropped + warning (strict: raises)."""
        problems = _Problems()
        element = f"metric:{name}" if isinstance(name, str) else "metric"
        if reason := emf.check_metric_name(name):
            problems.add(C.WarningCode.INVALID_METRIC_NAME, element, reason)
        elif name in _CONTRACT_METRICS or name in _ROOT_RESERVED or name in self._dimensions:
            problems.add(C.WarningCode.NAME_CONFLICT, element, "name used by the contract, a dimension or EMF")
        v, reason = emf.coerce_metric_value(value)
        if reason:
            problems.add(C.WarningCode.INVALID_METRIC_VALUE, element, reason)
        if reason := emf.check_unit(unit):
            problems.add(C.WarningCode.INVALID_UNIT, element, reason)
        if reason := emf.check_resolution(resolution):
            problems.add(C.WarningCode.INVALID_RESOLUTION, element, reason)
        inv = self._inv
        op = operation if operation is not None else (inv.operation if inv is not None else self._default_operation)
        if operation is not None and (reason := emf.check_dimension_value(operation)):
            problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{_OPERATION}", reason)
        es = None
        if self.event_source_dimension and inv is not None and inv.event_source is not None:
            es = inv.event_source.value
        if not problems:
            with self._lock:
                existing = self._groups.get((op, es), {}).get(name)
                if existing is not None and (existing.unit != unit or existing.resolution != resolution):
                    problems.add(C.WarningCode.METRIC_DEFINITION_CONFLICT, element,
                                 "same metric added with another unit or resolution in this flush")
                else:
                    self._add(op, es, name, unit, resolution, v, False)  # type: ignore[arg-type]
        self._report(problems)

    def add_dimension(self, name: str, value: str) -> None:
        """Add a dimension to every dimension set (persists across flushes). Bounded values only: names that look
        like keys, tenants, event or request ids are refused (each distinct value is a paid custom metric)."""
        problems = _Problems()
        with self._lock:
            self._add_dimension(name, value, problems)
        self._report(problems)

    def _add_dimension(self, name: Any, value: Any, problems: _Problems) -> None:
        element = f"dimension:{name}" if isinstance(name, str) else "dimension"
        if reason := emf.check_dimension_name(name):
            problems.add(C.WarningCode.INVALID_DIMENSION_NAME, element, reason)
        elif name.lower().replace("_", "").replace("-", "") in C.HIGH_CARDINALITY_DIMENSION_NAMES:
            problems.add(C.WarningCode.HIGH_CARDINALITY_DIMENSION, element, "unbounded values belong in log properties")
        elif name in _ROOT_RESERVED or name in _CONTRACT_METRICS:
            problems.add(C.WarningCode.NAME_CONFLICT, element, "name used by the contract or EMF")
        elif reason := emf.check_dimension_value(value):
            problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, element, reason)
        elif name not in self._dimensions and len(self._dimensions) >= C.MAX_CUSTOM_DIMENSIONS:
            problems.add(C.WarningCode.TOO_MANY_DIMENSIONS, element,
                         f"at most {C.MAX_CUSTOM_DIMENSIONS} custom dimensions ({C.MAX_DIMENSIONS_PER_SET} per set)")
        else:
            self._dimensions[name] = value

    def set_timestamp(self, timestamp_ms: int) -> None:
        """Use ``timestamp_ms`` (epoch ms) as ``_aws.Timestamp`` of the next flush. Must be within 14 days past /
        2 hours future of the emitter clock; otherwise dropped (the flush time is used) + warning."""
        problems = _Problems()
        if reason := emf.check_timestamp(timestamp_ms, self.clock()):
            problems.add(C.WarningCode.INVALID_TIMESTAMP, "timestamp", reason)
        else:
            self._timestamp_ms = timestamp_ms
        self._report(problems)

    def flush(self) -> list[str]:
        """Write the aggregated metrics now as EMF documents (one group per Operation[/EventSource], split at 100
        metrics / 100 values / 256 KB) and reset them. Returns the lines written (empty when nothing was recorded)."""
        with self._lock:
            groups, self._groups = self._groups, {}
            ts, self._timestamp_ms = self._timestamp_ms, None
            if not groups:
                return []
            ts = ts if ts is not None else int(self.clock())
            inv = self._inv
            if inv is not None:
                props_body = inv.emf_props_json
                if props_body is None:
                    props_body = inv.emf_props_json = self._emf_props_json(inv)
            else:
                props_body = self._idle_emf_props
            lines: list[str] = []
            for (op, es), series in groups.items():
                dims, sets, header, dims_body = self._group_dimensions(op, es)
                values = list(series.values())
                body = f"{dims_body},{props_body}" if dims_body else props_body
                line = emf.fast_document(header, ts, body, values)
                if line is not None:
                    lines.append(line)
                else:
                    import json  # rare path (a group over 100 metrics/values or 256 KB): json is loaded lazily

                    props = json.loads("{" + props_body + "}")
                    lines.extend(emf.build_documents(self.namespace, dims, sets, values, ts, props))
            self._write(lines)
            return lines

    @staticmethod
    def _emf_props_json(inv: InvocationInfo | None) -> str:
        """Root members copied into every EMF document: function name, request id, schema version (JSON text)."""
        props: dict[str, Any] = {}
        if inv is not None:
            if inv.function_name:
                props[_EMF_PROPS[0]] = inv.function_name
            if inv.request_id:
                props[_EMF_PROPS[1]] = inv.request_id
        props[_K_SCHEMA_VERSION] = SCHEMA_VERSION
        return _dumps(props)[1:-1]

    def _group_dimensions(self, op: str | None, es: str | None) -> tuple[dict[str, str], list[list[str]], str, str]:
        """Root dimension members, dimension sets, directive header and dimension members as JSON text of a group
        (cached; custom dimensions are part of the key)."""
        key = (op, es, tuple(self._dimensions.items()))
        hit = self._group_cache.get(key)
        if hit is not None:
            return hit
        dims: dict[str, str] = {}
        if self._service_dim is not None:
            dims[_SERVICE] = self._service_dim
        if op is not None:
            dims[_OPERATION] = op
        if es is not None:
            dims[_EVENT_SOURCE] = es
        base_sets = list(DIMENSION_SETS) + ([EVENT_SOURCE_DIMENSION_SET] if es is not None else [])
        sets: list[list[str]] = []
        for bs in base_sets:
            s = [d for d in bs if d in dims] + list(self._dimensions)
            if s not in sets:
                sets.append(s)
        dims.update(self._dimensions)
        out = (dims, sets, emf.directive_header(self.namespace, sets), _dumps(dims)[1:-1] if dims else "")
        if len(self._group_cache) < 256:
            self._group_cache[key] = out
        return out

    def pending(self) -> dict[tuple[str | None, str | None], dict[str, list[float | int]]]:
        """Metrics not yet flushed: {(operation, event_source|None): {metric name: values}} (Count metrics summed)."""
        with self._lock:
            return {g: {n: list(s.values) for n, s in series.items()} for g, series in self._groups.items()}

    # ------------------------------------------------------------------ output and problems
    def _write(self, lines: list[str]) -> None:
        if not lines:
            return
        with self._lock:
            try:
                self.sink.write_lines(lines)
            except Exception as exc:
                self._count_warning(C.WarningCode.SINK_ERROR, len(lines))
                if self.strict:
                    raise SinkError(f"sink failed: {type(exc).__name__}") from exc
                self._stderr(f"idemwatch: sink failed ({type(exc).__name__}); {len(lines)} line(s) not written")

    def _count_warning(self, code: str, n: int) -> None:
        with self._lock:
            self.warnings[code] = self.warnings.get(code, 0) + n

    def _report(self, problems: _Problems) -> None:
        """Strict: raise on the first problem. Otherwise: count them and write ONE warning record for the call."""
        if not problems:
            return
        if self.strict:
            code, element, reason = problems[0]
            raise EmfValidationError(code, f"{element}: {reason}")
        with self._lock:
            for code, _, _ in problems:
                self.warnings[code] = self.warnings.get(code, 0) + 1
        inv = self._inv
        static = inv.static_json if inv is not None else self._idle_static
        f = {
            _K_WARNING_CODE: problems[0][0],
            "idemwatch_dropped": [{"code": c, "element": e, "reason": r} for c, e, r in problems],
        }
        self._write([self._line("WARNING", "idemwatch dropped or fixed invalid input", static, f)])

    @staticmethod
    def _stderr(msg: str) -> None:
        try:
            sys.stderr.write(msg + "\n")
        except Exception:
            pass
