"""Structured log records: the one writer of every log line the emitter writes (outcome and warning records).

A record is one compact JSON object on one line, written as ``json.dumps(..., separators=(",", ":"))`` writes it
(ASCII, non-ASCII escaped): the head (``level``, ``message``, ``timestamp``: constant per outcome, precomputed), the
invocation's constant members (service, cold start, function, request id, X-Ray trace id, operation, schema
version: serialized once per invocation, :meth:`LogRecordBuilder._static_json`), then the record's own members in
the order of the contract (``emitter/CONTRACT.md``). Contract string fields are cut to MAX_LOG_FIELD_CHARS;
idempotency keys are optionally hashed; extra properties and record details are redacted by name and sanitized to
JSON (:mod:`emitter.sanitize`). A record over the CloudWatch Logs event size (256 KB,
https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/cloudwatch_limits_cwl.html) loses its largest extra
properties, each counted. Nothing here raises on a value: what cannot be written is replaced and counted.
"""

from __future__ import annotations

import time

from emitter import constants as C
from emitter import emf
from emitter.compact_json import dumps as _dumps
from emitter.compact_json import esc as _esc
from emitter.contract import (
    LOG_KEYS,
    OUTCOME_METRIC,
    REDACTED,
    SCHEMA_VERSION,
    Dimension,
    ErrorClass,
    EventSource,
    IdempotencyStatus,
    LogKey,
    Metric,
    Outcome,
    Unit,
)
from emitter.exceptions import TimeoutBudgetExceeded
from emitter.sanitize import key_text, sanitize
from emitter.types import EventRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from emitter.context import InvocationInfo
    from emitter.output import Problems
    from emitter.redact import KeyHasher, SecretNames

OUTCOME_SPEC: dict[Outcome, tuple[str, IdempotencyStatus | None, bool | None, ErrorClass | None, str | None, str]] = {
    # outcome: (level, default idempotency_status, default retryable, default error_class, default error_code,
    #           message); emitter/CONTRACT.md's outcome table says the same (a test compares)
    Outcome.RECEIVED: ("INFO", None, None, None, None, "Event received"),
    Outcome.CLAIMED: ("INFO", IdempotencyStatus.IN_PROGRESS, None, None, None, "Idempotency key claimed"),
    Outcome.SUCCEEDED: ("INFO", IdempotencyStatus.COMPLETED, None, None, None, "Event processed"),
    Outcome.DUPLICATE_COMPLETED: ("INFO", IdempotencyStatus.COMPLETED, None, None, None,
                                  "Duplicate of a COMPLETED key: stored result returned"),
    Outcome.DUPLICATE_IN_PROGRESS: ("WARNING", IdempotencyStatus.IN_PROGRESS, True, None, "DuplicateInProgress",
                                    "Duplicate of an IN_PROGRESS key: retry later"),
    Outcome.PAYLOAD_CONFLICT: ("WARNING", None, False, ErrorClass.PERMANENT, "PayloadConflict",
                               "Idempotency key reused with a different payload"),
    Outcome.STALE_CLAIM_TAKEOVER: ("WARNING", IdempotencyStatus.IN_PROGRESS, None, None, None,
                                   "Expired IN_PROGRESS claim taken over"),
    Outcome.RETRYABLE_FAILURE: ("WARNING", None, True, ErrorClass.RETRYABLE, "Unspecified", "Retryable failure"),
    Outcome.PERMANENT_FAILURE: ("ERROR", None, False, ErrorClass.PERMANENT, "Unspecified", "Permanent failure"),
    Outcome.POISON_MESSAGE: ("ERROR", None, False, ErrorClass.POISON, "Unspecified", "Poison message"),
    Outcome.TIMEOUT_BUDGET_ABORT: ("WARNING", None, True, ErrorClass.RETRYABLE, TimeoutBudgetExceeded.error_code,
                                   "Side effect refused: remaining time below budget"),
    Outcome.AMBIGUOUS_COMMIT: ("ERROR", None, None, None, "AmbiguousCommit",
                               "Side-effect outcome unknown: needs reconciliation"),
    Outcome.SIDE_EFFECT_STARTED: ("INFO", None, None, None, None, "Side effect started"),
    Outcome.BATCH_ITEM_FAILURE: ("WARNING", None, True, None, None, "Item returned in batchItemFailures"),
    Outcome.STORE_ERROR: ("ERROR", None, True, None, "IdempotencyStoreError", "Idempotency store error"),
    Outcome.COLD_START: ("INFO", None, None, None, None, "Cold start"),
}
"""What each outcome's record says by default; ``idempotency_status`` is written only with a key (or when given)."""

REMAINING_OUTCOMES = frozenset({Outcome.SIDE_EFFECT_STARTED, Outcome.TIMEOUT_BUDGET_ABORT, Outcome.COLD_START})
"""Outcomes whose record carries the invocation's remaining time (``remaining_time_ms``) when known."""

RESERVED_KEYS = frozenset(k.value for k in (
    LogKey.LEVEL, LogKey.MESSAGE, LogKey.TIMESTAMP, LogKey.SERVICE, LogKey.COLD_START, LogKey.FUNCTION_NAME,
    LogKey.FUNCTION_ARN, LogKey.FUNCTION_MEMORY_SIZE, LogKey.FUNCTION_REQUEST_ID, LogKey.XRAY_TRACE_ID,
    LogKey.OUTCOME, LogKey.SCHEMA_VERSION, LogKey.WARNING_CODE, LogKey.EVENT_SOURCE, LogKey.EVENT_ID,
    LogKey.ATTEMPT, LogKey.RECORD_AGE_MS, LogKey.OPERATION, LogKey.IDEMPOTENCY_KEY,
)) | {"idemwatch_dropped"}
"""Keys the emitter owns in a log record: an extra property of that name is refused (``name_conflict``)."""

_OWNED_KEYS = RESERVED_KEYS | frozenset(LOG_KEYS)
"""Names a record detail cannot take (the contract's keys): such a detail is left out."""
_STATUS_VALUES = frozenset(s.value for s in IdempotencyStatus)
_ERROR_CLASS_VALUES = frozenset(c.value for c in ErrorClass)
_MAX_FIELD = C.MAX_LOG_FIELD_CHARS
_MAX_LINE = C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM
_SHORT_INT = 10**18  # ints below this in magnitude are written with str() (no digit limit to reach)
_MAX_INT_DIGITS = 4000  # below CPython's int max str digits (4300): str() of a larger int raises ValueError
_REDACTED_JSON = _esc(REDACTED)


def record_head(level: str, message: str) -> str:
    """The constant start of a record: its ``level`` and ``message`` members and the opening of ``timestamp``."""
    return (f'{{"{LogKey.LEVEL.value}":{_esc(level)},"{LogKey.MESSAGE.value}":{_esc(message)},'
            f'"{LogKey.TIMESTAMP.value}":"')


def _member(key: LogKey) -> str:
    """The JSON head of a member after the first: ``,"name":``."""
    return f',"{key.value}":'


# the members a record may carry after ``outcome``, in the contract's order
_EVENT_SOURCE = _member(LogKey.EVENT_SOURCE)
_EVENT_ID = _member(LogKey.EVENT_ID)
_IDEMPOTENCY_KEY = _member(LogKey.IDEMPOTENCY_KEY)
_IDEMPOTENCY_STATUS = _member(LogKey.IDEMPOTENCY_STATUS)
_EXPIRES = _member(LogKey.IN_PROGRESS_EXPIRES_AT_MS)
_ERROR_CODE = _member(LogKey.ERROR_CODE)
_ERROR_CLASS = _member(LogKey.ERROR_CLASS)
_RETRYABLE_TRUE = _member(LogKey.RETRYABLE) + "true"
_RETRYABLE_FALSE = _member(LogKey.RETRYABLE) + "false"
_ATTEMPT = _member(LogKey.ATTEMPT)
_CORRELATION_ID = _member(LogKey.CORRELATION_ID)
_RECORD_AGE = _member(LogKey.RECORD_AGE_MS)
_REMAINING_TIME = _member(LogKey.REMAINING_TIME_MS)
_SIDE_EFFECT_REF = _member(LogKey.SIDE_EFFECT_REF)
_TENANT_ID = _member(LogKey.TENANT_ID)
# the invocation's members that change between invocations (LogRecordBuilder._static_json)
_REQUEST_ID = _member(LogKey.FUNCTION_REQUEST_ID)
_XRAY_TRACE_ID = _member(LogKey.XRAY_TRACE_ID)
_OPERATION = _member(LogKey.OPERATION)
_SCHEMA_VERSION = _member(LogKey.SCHEMA_VERSION) + _esc(SCHEMA_VERSION)
_EVENT_SOURCE_MEMBER = {e: _EVENT_SOURCE + _esc(e.value) for e in EventSource}  # the member of each source
_EVENT_SOURCE_VALUE = {e: e.value for e in EventSource}  # each source's value (the EventSource dimension)
# the keyword names the writer reads from a call's properties (plain str: the names a call's ``**props`` carry)
_P_OPERATION = "operation"
_P_STATUS = LogKey.IDEMPOTENCY_STATUS.value
_P_RETRYABLE = LogKey.RETRYABLE.value
_P_ERROR_CLASS = LogKey.ERROR_CLASS.value
_P_ERROR_CODE = LogKey.ERROR_CODE.value
_P_EXPIRES = "expires_at_ms"
_P_EXPIRES_KEY = LogKey.IN_PROGRESS_EXPIRES_AT_MS.value
_P_CORRELATION_ID = LogKey.CORRELATION_ID.value
_P_REMAINING_TIME = LogKey.REMAINING_TIME_MS.value
_P_SIDE_EFFECT_REF = LogKey.SIDE_EFFECT_REF.value
_P_TENANT_ID = LogKey.TENANT_ID.value


def _codes_json(error_code: str | None, error_class: str | None, retryable: bool | None) -> str:
    """The ``error_code``, ``error_class`` and ``retryable`` members of a record (those not None), as JSON text."""
    text = "" if error_code is None else _ERROR_CODE + _esc(error_code)
    if error_class is not None:
        text += _ERROR_CLASS + _esc(error_class)
    if retryable is not None:
        text += _RETRYABLE_TRUE if retryable else _RETRYABLE_FALSE
    return text


class OutcomeWriting:
    """How the writer writes the records of one outcome and what they count, made once per outcome from
    :data:`OUTCOME_SPEC` and ``contract.OUTCOME_METRIC``: the record's constant text and defaults, and its metrics
    (``count_metric``: the Count metric each record adds 1 to; ``value_metric``: the Milliseconds metric that takes
    the record's value, RecordAge of ``received`` and RemainingTimeAtSideEffect of ``side_effect_started``)."""

    __slots__ = ("codes", "count_metric", "error_class", "error_code", "head", "member", "outcome", "received",
                 "remaining", "retryable", "side_effect", "status", "status_member", "value_metric")

    def __init__(self, outcome: Outcome) -> None:
        level, status, retryable, error_class, error_code, message = OUTCOME_SPEC[outcome]
        self.outcome = outcome
        self.head = record_head(level, message)
        self.member = f'"{LogKey.OUTCOME.value}":"{outcome.value}"'
        self.status = None if status is None else status.value
        self.status_member = "" if status is None else _IDEMPOTENCY_STATUS + _esc(status.value)
        self.retryable = retryable
        self.error_class = None if error_class is None else error_class.value
        self.error_code = error_code
        self.codes = _codes_json(error_code, self.error_class, retryable)  # the members of a call that gives none
        self.received = outcome is Outcome.RECEIVED
        self.side_effect = outcome is Outcome.SIDE_EFFECT_STARTED
        self.remaining = outcome in REMAINING_OUTCOMES
        # the outcome's metric: a Count metric is summed, any other (RemainingTimeAtSideEffect) takes the value
        metric = OUTCOME_METRIC[outcome]
        counted = metric is not None and metric.unit is Unit.COUNT
        self.count_metric = metric.value if metric is not None and counted else None
        value_metric = Metric.RECORD_AGE if self.received else None if counted else metric
        self.value_metric = None if value_metric is None else value_metric.value


WRITING = {o: OutcomeWriting(o) for o in Outcome}
"""Outcome -> its :class:`OutcomeWriting`."""

RecordLine = tuple[str, float | None, str | None, str | None, bool]
"""An outcome record as :meth:`LogRecordBuilder._outcome_line` returns it: (line, metric_value, operation,
event_source, redelivered)."""


def _text(value: Any, name: str, problems: Problems) -> str:
    """str of a non-str contract value (Enum -> its value; ints and floats printed); never raises."""
    try:
        v = getattr(value, "value", value)
        if issubclass(type(v), str):
            return str.__str__(v)
        if issubclass(type(v), bool):
            return "True" if v else "False"
        if issubclass(type(v), int):
            if v.bit_length() > _MAX_INT_DIGITS * 3:  # ~ 3.32 bits per digit: certainly too long to print
                problems.add(C.WarningCode.VALUE_TRUNCATED, name, f"int of {v.bit_length()} bits not printed")
                return "<int>"
            return int.__repr__(int.__index__(v))[: _MAX_FIELD + 1]
        if issubclass(type(v), float):
            return float.__repr__(float.__float__(v))
    except Exception as exc:  # a hostile ``value`` attribute or int conversion
        return _unserializable(value, name, problems, exc)
    return f"<{type(value).__name__}>"


def _enum_text(value: Any) -> str | None:
    """An Enum's str value or a str as is; None for anything else (lists, hostile objects: never raises)."""
    try:
        return emf.plain_str(getattr(value, "value", value))
    except Exception:  # noqa: BLE001 - a hostile ``value`` attribute
        return None


def _unserializable(value: Any, name: str, problems: Problems | None, exc: BaseException) -> str:
    """The placeholder for a value that cannot be written (counted as ``invalid_property``)."""
    if problems is not None:
        problems.add(C.WarningCode.INVALID_PROPERTY, f"property:{key_text(name)}",
                     f"value could not be serialized ({type(exc).__name__}); replaced")
    return f"<{type(value).__name__}>"


class LogRecordBuilder:
    """Emitter layer 1: writes log records (JSON text). Reads the emitter state below (set by ``Emitter.__init__``
    and the invocation scope); writes nothing to the sink."""

    # Emitter state this layer reads (declarations for type checkers; no class attributes are created).
    service: str
    clock: Callable[[], int]
    event_source_dimension: bool
    _hasher: KeyHasher | None
    _redacted: SecretNames
    _iso_second: tuple[int, str]
    _iso_last: tuple[int, str]
    _member_heads: dict[str, str]
    _static_cache: dict[tuple[Any, ...], str]
    _inv: InvocationInfo | None
    _idle_static: str
    _default_operation: str
    correlation_id_provider: Callable[[], Any] | None

    def _outcome_line(self, w: OutcomeWriting, record: Any, key: Any, props: dict[str, Any], problems: Problems,
                      prefix: str | None = None) -> RecordLine:
        """The record of outcome ``w`` (:data:`WRITING`) for ``record`` (an EventRecord, an event id, or None) and
        ``key`` (default: the record's idempotency key), with the known keyword values and extra properties of
        ``props`` (consumed). ``prefix``: :meth:`_prefix` of the outcome (a batch of records shares it; default: made
        now, with the clock's time). Problems found are added to ``problems``.

        Returns ``(line, metric_value, operation, event_source, redelivered)``: the JSON text (no newline), the
        RecordAge ms of a ``received`` record or the RemainingTimeAtSideEffect ms of a ``side_effect_started`` one
        (else None), the metric group (``event_source`` only when the EventSource dimension is on) and whether the
        record is a redelivery (attempt > 1)."""
        status = w.status
        inv = self._inv
        op = inv.operation if inv is not None else self._default_operation
        rec = record if type(record) is EventRecord or issubclass(type(record), EventRecord) else None
        explicit_status = False
        expires = corr = None
        codes = w.codes
        if props:
            if _P_OPERATION in props:
                o = props.pop(_P_OPERATION)
                if o is not None:
                    if reason := emf.check_dimension_value(o):
                        problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{Dimension.OPERATION.value}",
                                     reason)
                    elif (o := emf.plain_str(o)) != op:
                        op = o
                        prefix = self._prefix(w, None, self._static_json(inv, op))
            retryable, error_class, error_code = w.retryable, w.error_class, w.error_code
            st = props.pop(_P_STATUS, None)
            if st is not None:
                st = _enum_text(st)
                if st in _STATUS_VALUES:
                    status, explicit_status = st, True
                else:
                    problems.add(C.WarningCode.INVALID_PROPERTY, _P_STATUS, "not an IdempotencyStatus value")
            r = props.pop(_P_RETRYABLE, None)
            if r is not None:
                try:
                    retryable = bool(r)
                except Exception:  # noqa: BLE001 - an object whose __bool__ raises: the outcome's default stays
                    problems.add(C.WarningCode.INVALID_PROPERTY, _P_RETRYABLE, "not readable as a bool")
            ec = props.pop(_P_ERROR_CLASS, None)
            if ec is not None:
                ec = _enum_text(ec)
                if ec in _ERROR_CLASS_VALUES:
                    error_class = ec
                else:
                    problems.add(C.WarningCode.INVALID_PROPERTY, _P_ERROR_CLASS, "not an ErrorClass value")
            code = props.pop(_P_ERROR_CODE, None)
            if code is not None:
                error_code = code if type(code) is str and len(code) <= _MAX_FIELD else \
                    self._field(code, LogKey.ERROR_CODE, problems)
            if r is not None or ec is not None or code is not None:
                codes = _codes_json(error_code, error_class, retryable)
            expires = props.pop(_P_EXPIRES, None)
            if expires is None:
                expires = props.pop(_P_EXPIRES_KEY, None)
            corr = props.pop(_P_CORRELATION_ID, None)
        if prefix is None:
            prefix = self._prefix(w, None, inv.static_json if inv is not None else self._idle_static)

        parts = [prefix]
        es = rec.event_source if rec is not None else (inv.event_source if inv is not None else None)
        if type(es) is EventSource:
            parts.append(_EVENT_SOURCE_MEMBER[es])
        elif es is not None:
            parts.append(_EVENT_SOURCE + _esc(self._field(es, LogKey.EVENT_SOURCE, problems)))
        eid = rec.event_id if rec is not None else record
        if eid is not None:
            parts.append(_EVENT_ID + _esc(eid if type(eid) is str and len(eid) <= _MAX_FIELD else
                                          self._field(eid, LogKey.EVENT_ID, problems)))
        k = key if key is not None else (rec.idempotency_key if rec is not None else None)
        if k is not None:
            parts.append(_IDEMPOTENCY_KEY + _esc(k if type(k) is str and self._hasher is None and len(k) <= _MAX_FIELD
                                                 else self._key(k, problems)))
        if status is not None and (k is not None or explicit_status):  # a status describes a key's record
            parts.append(w.status_member if status is w.status else _IDEMPOTENCY_STATUS + _esc(status))
        if expires is not None:
            v, reason = emf.coerce_metric_value(expires)
            if v is not None:
                parts.append(_EXPIRES + repr(int(v)))
            else:
                problems.add(C.WarningCode.INVALID_PROPERTY, _P_EXPIRES_KEY, str(reason))
        if codes:
            parts.append(codes)
        redelivered = False
        metric_value: float | None = None
        if rec is not None:
            attempt = rec.attempt
            if type(attempt) is int and -_SHORT_INT < attempt < _SHORT_INT:
                parts.append(_ATTEMPT + repr(attempt))
                redelivered = attempt > 1
            else:
                parts.append(_ATTEMPT + self._json(attempt, LogKey.ATTEMPT, problems))
            if corr is None:
                corr = rec.correlation_id
        if corr is None and self.correlation_id_provider is not None:
            try:
                corr = self.correlation_id_provider()
            except Exception as exc:  # noqa: BLE001 - a failing provider (a Logger gone) gives no correlation id
                corr = None  # counted: the class name only (an exception's message may carry the event's data)
                problems.add(C.WarningCode.ADAPTER_ERROR, LogKey.CORRELATION_ID.value,
                             f"correlation id provider raised {type(exc).__name__}")
        if corr is not None:
            parts.append(_CORRELATION_ID + _esc(corr if type(corr) is str and len(corr) <= _MAX_FIELD else
                                                self._field(corr, LogKey.CORRELATION_ID, problems)))
        if w.received and rec is not None:
            age = rec.record_age_ms
            if type(age) is int and -_SHORT_INT < age < _SHORT_INT:  # an adapter's age: a valid metric value
                metric_value = age
                parts.append(_RECORD_AGE + repr(age))
            elif age is not None:
                metric_value, reason = emf.coerce_metric_value(age)
                if metric_value is not None:
                    parts.append(_RECORD_AGE + repr(metric_value))  # a finite number: its repr is its JSON text
                else:
                    problems.add(C.WarningCode.INVALID_METRIC_VALUE, Metric.RECORD_AGE.value, str(reason))
        if props and _P_REMAINING_TIME in props:
            rem = props.pop(_P_REMAINING_TIME)
        elif w.remaining:
            rem = inv.remaining_ms() if inv is not None else None
        else:
            rem = None
        if rem is not None:
            v, reason = emf.coerce_metric_value(rem)
            if v is not None and v >= 0:
                parts.append(_REMAINING_TIME + repr(v))
                if w.side_effect:
                    metric_value = v
            else:
                problems.add(C.WarningCode.INVALID_METRIC_VALUE, Metric.REMAINING_TIME_AT_SIDE_EFFECT.value,
                             reason or "negative remaining time")
        if props:
            ref = props.pop(_P_SIDE_EFFECT_REF, None)
            if ref is not None:
                parts.append(_SIDE_EFFECT_REF + _esc(self._field(ref, LogKey.SIDE_EFFECT_REF, problems)))
            tenant = props.pop(_P_TENANT_ID, None)
            if tenant is not None:
                parts.append(_TENANT_ID + _esc(self._field(tenant, LogKey.TENANT_ID, problems)))

        # after the contract's members: the received record's source details, then the call's extra properties;
        # these (``parts[first_extra:]``, named in ``names``) are what a record too large for an event loses
        first_extra = len(parts)
        names: list[str] = []
        if w.received and rec is not None:
            try:
                for name, value in rec.details.items():
                    if value is None:
                        continue
                    if type(name) is not str:
                        name = key_text(name)
                    if name in _OWNED_KEYS or name in props:  # the contract's keys, or a property of the call
                        continue
                    names.append(name)
                    parts.append(self._property_member(name, value, problems))
            except Exception as exc:  # noqa: BLE001 - a hand-made record whose details are no dict
                problems.add(C.WarningCode.INVALID_PROPERTY, "details",
                             f"record details could not be read ({type(exc).__name__}); left out")
        if props:
            for name, value in props.items():
                if name in RESERVED_KEYS:
                    problems.add(C.WarningCode.NAME_CONFLICT, f"property:{name}", "the emitter owns this log key")
                    continue
                names.append(name)
                parts.append(self._property_member(name, value, problems))
        parts.append("}")
        line = "".join(parts)
        if names and len(line) > _MAX_LINE:
            line = self._shrink(parts, first_extra, names, problems)
        # the EventSource dimension takes the contract's bounded values only
        es_dimension = _EVENT_SOURCE_VALUE[es] if self.event_source_dimension and type(es) is EventSource else None
        return line, metric_value, op, es_dimension, redelivered

    def _prefix(self, w: OutcomeWriting, ms: int | None, static: str) -> str:
        """The start of every record of outcome ``w`` written at ``ms`` (epoch ms; default: the clock now) with the
        invocation members ``static``: its head (:func:`record_head`), timestamp, ``static`` and ``outcome``."""
        return f'{w.head}{self._iso(self.clock() if ms is None else ms)}",{static},{w.member}'

    def _line(self, head: str, ms: int | None, static: str, body: str) -> str:
        """A record other than an outcome's (warning records): ``head`` (:func:`record_head`), the ``timestamp`` of
        ``ms`` (epoch ms; default: the clock now), the invocation's members ``static`` and the record's members
        ``body`` (JSON members without braces)."""
        return f'{head}{self._iso(self.clock() if ms is None else ms)}",{static},{body}}}'

    def _shrink(self, parts: list[str], first: int, names: list[str], problems: Problems) -> str:
        """Drop the largest extra properties (``parts[first:first + len(names)]``, named ``names``) until the record
        (``parts`` joined) fits in a log event, each counted."""
        line = "".join(parts)
        for i in sorted(range(first, first + len(names)), key=lambda i: len(parts[i]), reverse=True):
            problems.add(C.WarningCode.PROPERTY_TOO_LARGE, f"property:{names[i - first]}",
                         f"record over {C.MAX_EVENT_BYTES} bytes; property dropped")
            parts[i] = ""
            line = "".join(parts)
            if len(line) <= _MAX_LINE:
                break
        return line

    def _field(self, value: Any, name: str, problems: Problems) -> str:
        """A contract string field: a str (ints converted, an Enum as its value) of at most MAX_LOG_FIELD_CHARS.
        Never raises: a value that cannot be read (a hostile ``value`` attribute, an int too large to print, a str
        subclass with hostile methods is read as the str it holds) becomes ``<TypeName>``."""
        if type(value) is not str:
            value = _text(value, name, problems)
        if len(value) > _MAX_FIELD:
            problems.add(C.WarningCode.VALUE_TRUNCATED, name, f"{len(value)} characters truncated to {_MAX_FIELD}")
            value = value[:_MAX_FIELD]
        return value

    def _key(self, key: Any, problems: Problems) -> str:
        """An idempotency key as written: a str (ints and floats printed), hashed when hashing is on."""
        t = type(key)
        if not issubclass(t, str):
            if not issubclass(t, (int, float)) or issubclass(t, bool):
                problems.add(C.WarningCode.INVALID_PROPERTY, LogKey.IDEMPOTENCY_KEY.value, "key must be a string")
                return "<invalid>"
            key = _text(key, LogKey.IDEMPOTENCY_KEY.value, problems)
        elif t is not str:
            key = str.__str__(key)
        if self._hasher is not None:
            return self._hasher(key)
        return self._field(key, LogKey.IDEMPOTENCY_KEY.value, problems)

    def _json(self, value: Any, name: str, problems: Problems) -> str:
        """``value`` as JSON text; a value JSON cannot hold becomes ``"<TypeName>"`` (counted)."""
        try:
            return _dumps(value)
        except Exception as exc:  # noqa: BLE001 - an int too large to print, a container whose methods raise
            return _esc(_unserializable(value, name, problems, exc))

    def _property_member(self, name: str, value: Any, problems: Problems) -> str:
        """An extra property or record detail as a JSON member (with its leading comma): ``***REDACTED***`` when its
        name is a secret's (:mod:`emitter.redact`), else the value made safe to log
        (:func:`emitter.sanitize.sanitize`). The member's head and redaction, by name, are cached (bounded): a
        function logs the same few names over and over."""
        head = self._member_heads.get(name)
        if head is None:
            head = f",{_esc(name)}:" + (_REDACTED_JSON if name in self._redacted else "")
            if len(self._member_heads) < 1024:
                self._member_heads[name] = head
        if head[-1] != ":":  # redacted
            return head
        if type(value) is str:
            return head + _esc(value)
        if type(value) is int:
            try:
                return head + repr(value)
            except ValueError:  # over the int-to-str digit limit: written as the general path writes it
                pass
        try:
            return head + self._json(sanitize(value, self._redacted, problems, name, 0), name, problems)
        except Exception as exc:  # noqa: BLE001 - a hostile object (__len__, __iter__, properties raising)
            return head + _esc(_unserializable(value, name, problems, exc))

    def _iso(self, ms: int) -> str:
        """ISO-8601 UTC with milliseconds for epoch ms. The last millisecond's text and the last second's date and
        time are cached: the records of one invocation mostly share them."""
        last = self._iso_last
        if last[0] == ms:
            return last[1]
        sec, milli = divmod(int(ms), 1000)
        cached = self._iso_second
        if cached[0] != sec:
            cached = self._iso_second = (sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)))
        text = f"{cached[1]}.{milli:03d}Z"
        self._iso_last = (ms, text)
        return text

    def _static_json(self, inv: InvocationInfo | None, operation: str | None) -> str:
        """Invocation-constant keys as JSON members (no braces), built once per invocation: service, cold_start,
        function_name, function_arn, function_memory_size, function_request_id, xray_trace_id, operation,
        schema_version. The members that stay the same from one invocation to the next (everything before the
        request id; operation and schema_version after the trace id) are cached as text."""
        tail = _OPERATION + _esc(operation) + _SCHEMA_VERSION if operation is not None else _SCHEMA_VERSION
        if inv is None:
            return f'"{LogKey.SERVICE.value}":{_esc(self.service)}{tail}'
        cache = self._static_cache
        cache_key = (inv.cold_start, inv.function_name, inv.function_arn, inv.function_memory_size)
        head = cache.get(cache_key)
        if head is None:
            head = (f'"{LogKey.SERVICE.value}":{_esc(self.service)},'
                    f'"{LogKey.COLD_START.value}":{"true" if inv.cold_start else "false"}')
            if inv.function_name:
                head += f',"{LogKey.FUNCTION_NAME.value}":{_esc(inv.function_name)}'
            if inv.function_arn:
                head += f',"{LogKey.FUNCTION_ARN.value}":{_esc(inv.function_arn)}'
            if inv.function_memory_size is not None:
                head += f',"{LogKey.FUNCTION_MEMORY_SIZE.value}":{int.__repr__(inv.function_memory_size)}'
            if len(cache) < 64:
                cache[cache_key] = head
        if inv.request_id_json:
            head += _REQUEST_ID + inv.request_id_json
        if inv.xray_trace_id:
            head += _XRAY_TRACE_ID + _esc(inv.xray_trace_id)
        return head + tail
