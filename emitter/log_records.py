"""Structured log records: one compact JSON object per outcome, built from the contract's log keys.

The general (slow-path) record builder and its helpers: contract string fields truncated to MAX_LOG_FIELD_CHARS,
idempotency keys (optionally hashed), extra properties (redacted by name, sanitized to JSON), the ISO-8601 UTC
``timestamp`` with milliseconds, the invocation-constant keys serialized once per invocation, and shrinking a record
over the CloudWatch Logs event size (256 KB,
https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/cloudwatch_limits_cwl.html) by dropping its largest extra
properties. The fast paths in :mod:`emitter.core` write the same bytes for the common calls (tested).
"""

from __future__ import annotations

import time

from emitter import constants as C
from emitter import emf
from emitter import outcomes as _o
from emitter.contract import LOG_KEYS, REDACTED, SCHEMA_VERSION, Outcome
from emitter.jsonfast import dumps as _dumps
from emitter.jsonfast import esc as _esc
from emitter.redact import normalize_name
from emitter.types import EventRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from emitter.context import InvocationInfo
    from emitter.output import Problems
    from emitter.redact import KeyHasher

# Plain-str copies of contract values (emitter.outcomes): module globals, one dict lookup each.
_ERROR_CLASS_VALUES = _o.ERROR_CLASS_VALUES
_ES_VALUE = _o.ES_VALUE
_K_ATTEMPT = _o.K_ATTEMPT
_K_COLD_START = _o.K_COLD_START
_K_CORRELATION_ID = _o.K_CORRELATION_ID
_K_ERROR_CLASS = _o.K_ERROR_CLASS
_K_ERROR_CODE = _o.K_ERROR_CODE
_K_EVENT_ID = _o.K_EVENT_ID
_K_EVENT_SOURCE = _o.K_EVENT_SOURCE
_K_FUNCTION_NAME = _o.K_FUNCTION_NAME
_K_FUNCTION_ARN = _o.K_FUNCTION_ARN
_K_FUNCTION_MEMORY_SIZE = _o.K_FUNCTION_MEMORY_SIZE
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
_K_XRAY_TRACE_ID = _o.K_XRAY_TRACE_ID
_MAX_FIELD = _o.MAX_FIELD
_M_RECORD_AGE = _o.M_RECORD_AGE
_M_REMAINING_TIME_AT_SIDE_EFFECT = _o.M_REMAINING_TIME_AT_SIDE_EFFECT
_OPERATION = _o.OPERATION
_OUTCOME_SPEC = _o.OUTCOME_SPEC
_OUTCOME_VALUE = _o.OUTCOME_VALUE
_REMAINING_OUTCOMES = _o.REMAINING_OUTCOMES
_RESERVED_KEYS = _o.RESERVED_KEYS
_STATUS_VALUES = _o.STATUS_VALUES
_Q_REQUEST_ID = f'"{_K_FUNCTION_REQUEST_ID}":'
_Q_XRAY_TRACE_ID = f'"{_K_XRAY_TRACE_ID}":'


_MAX_INT_DIGITS = 4000  # below CPython's int max str digits (4300): str() of a larger int raises ValueError


def _text(value: Any, name: str, problems: Problems) -> str:
    """str of a non-str contract value (Enum -> its value; ints and floats printed); never raises."""
    try:
        v = getattr(value, "value", value)
        if v.__class__ is str or isinstance(v, str):
            return str.__str__(v)
        if isinstance(v, bool):
            return "True" if v else "False"
        if isinstance(v, int):
            if v.bit_length() > _MAX_INT_DIGITS * 3:  # ~ 3.32 bits per digit: certainly too long to print
                problems.add(C.WarningCode.VALUE_TRUNCATED, name, f"int of {v.bit_length()} bits not printed")
                return "<int>"
            return int.__repr__(int.__index__(v))[: C.MAX_LOG_FIELD_CHARS + 1]
        if isinstance(v, float):
            return float.__repr__(float.__float__(v))
    except Exception as exc:  # a hostile ``value`` attribute or int conversion
        return _unserializable(value, name, problems, exc)
    return f"<{type(value).__name__}>"


def _enum_text(value: Any) -> str | None:
    """An Enum's str value or a str as is; None for anything else (lists, hostile objects: never raises)."""
    try:
        v = getattr(value, "value", value)
    except Exception:
        return None
    return v if v.__class__ is str else None


def _unserializable(value: Any, name: str, problems: Problems | None, exc: BaseException) -> str:
    """The placeholder for a property that cannot be serialized (counted as ``invalid_property``)."""
    if problems is not None:
        problems.add(C.WarningCode.INVALID_PROPERTY, f"property:{name}",
                     f"value could not be serialized ({type(exc).__name__}); replaced")
    return f"<{type(value).__name__}>"


class LogRecordBuilder:
    """Emitter layer 1: builds log records (JSON text). Reads the emitter state below (set by ``Emitter.__init__``
    and the invocation scope); writes nothing."""

    # Emitter state this layer reads (declarations for type checkers; no class attributes are created).
    service: str
    clock: Callable[[], int]
    event_source_dimension: bool
    _hasher: KeyHasher | None
    _redacted: frozenset[str]
    _redact_cache: dict[str, bool]
    _ts_cache: tuple[int, str]
    _ms_ts: tuple[Any, str]
    _static_cache: dict[Any, tuple[str, str]]
    _inv: InvocationInfo | None
    _idle_static: str
    _default_operation: str
    correlation_id_provider: Callable[[], Any] | None

    def _build_record(self, outcome: Outcome, record: Any, key: Any, props: dict[str, Any],
                      problems: Problems) -> tuple[str, float | None, str | None, str | None]:
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
                st = _enum_text(st)
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
                ec = _enum_text(ec)
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

        provider = self.correlation_id_provider
        if provider is not None and _K_CORRELATION_ID not in f:
            corr = props.pop(_K_CORRELATION_ID, None) if props else None
            if corr is None:
                try:
                    corr = provider()
                except Exception:
                    corr = None
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
        line = self._line(level, message, static, f, problems)
        if len(line) > C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM:
            line = self._shrink(level, message, static, f, problems)
        return line, metric_value, op, es if self.event_source_dimension else None


    def _field(self, value: Any, name: str, problems: Problems) -> str:
        """A contract string field: str (ints converted), truncated to MAX_LOG_FIELD_CHARS. Never raises: a value
        that cannot be read (a hostile ``value`` attribute, an int too large to print) becomes ``<TypeName>``."""
        if value.__class__ is not str:
            value = _text(value, name, problems)
        if len(value) > C.MAX_LOG_FIELD_CHARS:
            problems.add(C.WarningCode.VALUE_TRUNCATED, name, f"{len(value)} characters truncated to {C.MAX_LOG_FIELD_CHARS}")
            value = value[: C.MAX_LOG_FIELD_CHARS]
        return value

    def _key(self, key: Any, problems: Problems) -> str:
        if not isinstance(key, str):
            key = _text(key, _K_IDEMPOTENCY_KEY, problems) \
                if isinstance(key, (int, float)) and not isinstance(key, bool) else None
            if key is None:
                problems.add(C.WarningCode.INVALID_PROPERTY, _K_IDEMPOTENCY_KEY, "key must be a string")
                return "<invalid>"
        if self._hasher is not None:
            return self._hasher(key)
        return self._field(key, _K_IDEMPOTENCY_KEY, problems)

    def _extra_props(self, f: dict[str, Any], props: dict[str, Any], problems: Problems) -> None:
        # extra properties are the general path's only: emitter.sanitize is not loaded by ``import emitter``
        from emitter.sanitize import sanitize as _sanitize

        for name, value in props.items():
            if name in _RESERVED_KEYS:
                problems.add(C.WarningCode.NAME_CONFLICT, f"property:{name}", "the emitter owns this log key")
                continue
            if self._is_redacted(name):
                f[name] = REDACTED
                continue
            try:
                f[name] = _sanitize(value, self._redacted, problems, name, 0)
            except Exception as exc:  # a hostile object (__len__, __iter__, properties raising): replaced, counted
                f[name] = _unserializable(value, name, problems, exc)

    def _is_redacted(self, name: str) -> bool:
        hit = self._redact_cache.get(name)
        if hit is None:
            hit = normalize_name(name) in self._redacted
            if len(self._redact_cache) < 1024:
                self._redact_cache[name] = hit
        return hit

    def _line(self, level: str, message: str, static: str, f: dict[str, Any], problems: Problems | None = None,
              ms: int | None = None) -> str:
        """A log record: the head (level, message, ``timestamp`` of ``ms`` or the clock now), ``static``, ``f``."""
        try:
            body = _dumps(f)
        except (ValueError, TypeError, OverflowError, RecursionError):  # e.g. an int too large to print, nested
            for k in list(f):
                try:
                    _dumps(f[k])
                except (ValueError, TypeError, OverflowError, RecursionError) as exc:
                    f[k] = _unserializable(f[k], k, problems, exc)
            body = _dumps(f)
        return (f'{{"level":"{level}","message":"{message}","timestamp":"{self._iso(self.clock() if ms is None else ms)}",'
                f'{static},{body[1:]}')

    def _shrink(self, level: str, message: str, static: str, f: dict[str, Any], problems: Problems) -> str:
        """Drop the largest extra properties until the record fits in a log event."""
        contract = set(LOG_KEYS)
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
        """ISO-8601 UTC with milliseconds for epoch ms. Cached: the last millisecond's text (the records of one
        batch mostly share it) and the last second's date and time (read once each: another thread may replace
        them)."""
        last = self._ms_ts
        if last[0] == ms:
            return last[1]
        sec = int(ms) // 1000
        ts = self._ts_cache
        if ts[0] != sec:
            ts = self._ts_entry(sec)
        text = f"{ts[1]}.{int(ms) - sec * 1000:03d}Z"
        self._ms_ts = (ms, text)
        return text

    def _ts_entry(self, sec: int) -> tuple[int, str]:
        ts = (sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)))
        self._ts_cache = ts
        return ts

    def _static_json(self, inv: InvocationInfo | None, operation: str | None) -> str:
        """Invocation-constant keys as JSON members (no braces), built once per invocation: service, cold_start,
        function_name, function_arn, function_memory_size, function_request_id, xray_trace_id, operation,
        schema_version. The members that stay the same from one invocation to the next (everything before the
        request id; operation and schema_version after the trace id) are cached as text."""
        if inv is None:
            tail = f',"{_K_OPERATION}":{_esc(operation)}' if operation is not None else ""
            return f'"{_K_SERVICE}":{_esc(self.service)}{tail},"{_K_SCHEMA_VERSION}":"{SCHEMA_VERSION}"'
        cache = self._static_cache
        hkey = (inv.cold_start, inv.function_name, inv.function_arn, inv.function_memory_size, operation)
        hit = cache.get(hkey)  # (the members before the request id, those after the trace id)
        if hit is None:
            head = f'"{_K_SERVICE}":{_esc(self.service)},"{_K_COLD_START}":{"true" if inv.cold_start else "false"}'
            if inv.function_name:
                head += f',"{_K_FUNCTION_NAME}":{_esc(inv.function_name)}'
            if inv.function_arn:
                head += f',"{_K_FUNCTION_ARN}":{_esc(inv.function_arn)}'
            if inv.function_memory_size is not None:
                head += f',"{_K_FUNCTION_MEMORY_SIZE}":{int.__repr__(inv.function_memory_size)}'
            tail = (f',"{_K_OPERATION}":{_esc(operation)}' if operation is not None else "") + \
                f',"{_K_SCHEMA_VERSION}":"{SCHEMA_VERSION}"'
            hit = (head, tail)
            if len(cache) < 64:
                cache[hkey] = hit
        rid, xray = inv.request_id_json, inv.xray_trace_id  # the request id as JSON text (None: absent)
        if xray:
            return (f'{hit[0]}{f",{_Q_REQUEST_ID}{rid}" if rid else ""},{_Q_XRAY_TRACE_ID}{_esc(xray)}'
                    f'{hit[1]}')
        return f"{hit[0]},{_Q_REQUEST_ID}{rid}{hit[1]}" if rid else hit[0] + hit[1]
