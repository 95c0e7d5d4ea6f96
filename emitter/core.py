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

Layout: :class:`Emitter` is built from layers, each a base class of the next (plain attribute lookups, so the hot
path costs the same as one flat class):
- :mod:`emitter.log_records`  ``LogRecordBuilder``     log record JSON (general builder, timestamps, static keys);
- :mod:`emitter.output`       ``SinkOutput``           sink writes, warning counters and the warning record;
- :mod:`emitter.aggregate`    ``MetricAggregator``     per-invocation metric groups, ``add_metric``, ``flush`` to EMF;
- :mod:`emitter.wrapper`      ``InvocationLifecycle``  ``handler``, ``invocation``, cold start, remaining time;
- this module                 ``Emitter``              construction, adapters + ``received``, the outcome calls and
  their fast paths (which write exactly the bytes the general builder writes; tested).
"""

from __future__ import annotations

import _thread
import sys as _sys

from emitter import constants as C
from emitter import contract as _contract  # ErrorClass and ERROR_CLASS_OUTCOME: made on first use
from emitter import emf
from emitter import outcomes as _o
from emitter.adapters import _arn_name, adapt_event, adapt_single
from emitter.constants import DEFAULT_OPERATION
from emitter.context import _default_clock, _time_ns
from emitter.contract import (
    DEFAULT_REDACTED_EXACT_KEYS,
    DEFAULT_REDACTED_KEYS,
    DEFAULT_REDACTION_EXCEPTIONS,
    EXCEPTION_OUTCOME,
    NAMESPACE_DEFAULT,
    REDACTED,
    EventSource,
    Outcome,
    lambda_filtered_level,
    resolve_namespace,
    resolve_service,
)
from emitter.contract import metrics_disabled as _metrics_disabled
from emitter.exceptions import EmfValidationError, TimeoutBudgetExceeded
from emitter.jsonfast import esc as _esc
from emitter.output import Problems
from emitter.redact import KeyHasher, SecretNames
from emitter.sinks import Sink, StdoutSink
from emitter.types import Classification, EventRecord
from emitter.wrapper import InvocationLifecycle

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from emitter.classify import ErrorClassifier
    from emitter.context import InvocationInfo

__all__ = ["DEFAULT_OPERATION", "Emitter", "exception_outcome"]

# Hot-path names from emitter.outcomes (module globals: one dict lookup each).
_ES_VALUE = _o.ES_VALUE
_FAST_PARTS = _o.FAST_PARTS
_F_EXPIRES = _o.F_EXPIRES
_K_ATTEMPT = _o.K_ATTEMPT
_K_CORRELATION_ID = _o.K_CORRELATION_ID
_K_ERROR_CODE = _o.K_ERROR_CODE
_K_EVENT_ID = _o.K_EVENT_ID
_K_EVENT_SOURCE = _o.K_EVENT_SOURCE
_K_IDEMPOTENCY_KEY = _o.K_IDEMPOTENCY_KEY
_K_IN_PROGRESS_EXPIRES_AT_MS = _o.K_IN_PROGRESS_EXPIRES_AT_MS
_K_OUTCOME = _o.K_OUTCOME
_K_RECORD_AGE_MS = _o.K_RECORD_AGE_MS
_K_SIDE_EFFECT_REF = _o.K_SIDE_EFFECT_REF
_LINE_HEAD = _o.LINE_HEAD
_MAX_FIELD = _o.MAX_FIELD
_MAX_ABS = C.MAX_ABS_VALUE
_MAX_ABS_INT = int(_MAX_ABS)  # the same bound (2^360 is an integer): an int compares faster with an int than a float
_M_EVENTS_RECEIVED = _o.M_EVENTS_RECEIVED
_M_RECORD_AGE = _o.M_RECORD_AGE
_M_REDELIVERY = _o.M_REDELIVERY
_M_REMAINING_TIME_AT_SIDE_EFFECT = _o.M_REMAINING_TIME_AT_SIDE_EFFECT
_OPERATION = _o.OPERATION
_OUTCOME_METRIC_NAME = _o.OUTCOME_METRIC_NAME
_OUTCOME_VALUE = _o.OUTCOME_VALUE
_RECEIVED_HEAD = _o.RECEIVED_HEAD
_RECEIVED_TAKEN = _o.RECEIVED_TAKEN
_RESERVED_KEYS = _o.RESERVED_KEYS
_SERVICE = _o.SERVICE
_U_COUNT = _o.U_COUNT
_U_MS = _o.U_MS
# Outcome members as module globals: ``Outcome.X`` is a class attribute lookup through the Enum metaclass (~0.1 us).
_AMBIGUOUS_COMMIT = Outcome.AMBIGUOUS_COMMIT
_BATCH_ITEM_FAILURE = Outcome.BATCH_ITEM_FAILURE
_CLAIMED = Outcome.CLAIMED
_DUPLICATE_COMPLETED = Outcome.DUPLICATE_COMPLETED
_DUPLICATE_IN_PROGRESS = Outcome.DUPLICATE_IN_PROGRESS
_PAYLOAD_CONFLICT = Outcome.PAYLOAD_CONFLICT
_PERMANENT_FAILURE = Outcome.PERMANENT_FAILURE
_POISON_MESSAGE = Outcome.POISON_MESSAGE
_RECEIVED = Outcome.RECEIVED
_RETRYABLE_FAILURE = Outcome.RETRYABLE_FAILURE
_STALE_CLAIM_TAKEOVER = Outcome.STALE_CLAIM_TAKEOVER
_STORE_ERROR = Outcome.STORE_ERROR
_SUCCEEDED = Outcome.SUCCEEDED
_SQS = EventSource.SQS
_DYNAMODB = EventSource.DYNAMODB
_new = object.__new__
# Pieces of the received line: the event_source member per source, then the other members with their comma.
_ES_PART = {e: f'"{_K_EVENT_SOURCE}":"{v}"' for e, v in _ES_VALUE.items()}
_P_EVENT_ID = f',"{_K_EVENT_ID}":'
_RECEIVED_LINE_HEAD = _LINE_HEAD[_RECEIVED]
_P_SQS_RECEIVED = f'{_RECEIVED_HEAD},{_ES_PART[_SQS]}{_P_EVENT_ID}'  # an SQS received line's members after the static ones
_P_KEY = f',"{_K_IDEMPOTENCY_KEY}":'
_P_ATTEMPT = f',"{_K_ATTEMPT}":'
_P_CORRELATION_ID = f',"{_K_CORRELATION_ID}":'
_P_RECORD_AGE = f',"{_K_RECORD_AGE_MS}":'
_P_ATTEMPT_1 = f'{_P_ATTEMPT}1{_P_RECORD_AGE}'
_P_ATTEMPT_1_END = f'{_P_ATTEMPT}1}}\n'  # an outcome line's end for a first delivery
_P_ERROR_CODE = f',"{_K_ERROR_CODE}":'
_P_EXPIRES = f',"{_K_IN_PROGRESS_EXPIRES_AT_MS}":'
_P_SIDE_EFFECT_REF = f',"{_K_SIDE_EFFECT_REF}":'
# _sqs_records' bound on a line's length after its prefix (see there), without the 3 * int()'s digit limit (read per
# call: it can be set at run time); computed once instead of per batch
_LINE_BOUND = 3 * (12 * _MAX_FIELD + 40) + 3 * 2 + 1
# The outcome fast path's pieces: FAST_PARTS with a leading comma on each optional member, and the outcome member
# alone or followed by the event_source member of each known source.
_FAST_PARTS_C = {o: (head, status and "," + status, code and "," + code, tail and "," + tail)
                 for o, (head, status, code, tail) in _FAST_PARTS.items()}
_OUTCOME_PART = {o: f'"{_K_OUTCOME}":"{v}"' for o, v in _OUTCOME_VALUE.items()}
# outcome -> {event source or None -> the outcome fast path's constants: (line head, outcome [+ event_source] members,
# status member, default error code member, tail members, metric name, event source value)}. The inner entries are
# filled as met (not at import: Lambda cold starts import this). Two lookups, not one keyed by the pair: a tuple key
# is built and hashed on every call (about twice the time of the two lookups on CPython 3.11).
_OUTCOME_LINE_PARTS: dict[Outcome, dict[Any, tuple[Any, ...]]] = {o: {} for o in _FAST_PARTS_C}


def _outcome_line_parts(outcome: Outcome, es: Any) -> tuple[Any, ...]:
    """The entry of ``_OUTCOME_LINE_PARTS`` for (outcome, es), made and cached; _SlowPath for an event source whose
    value is not a str."""
    head, status_part, code_default, tail_const = _FAST_PARTS_C[outcome]
    if es is None:
        oes, es_value = _OUTCOME_PART[outcome], None
    else:
        es_value = _ES_VALUE.get(es, es)
        if es_value.__class__ is not str:
            raise _SlowPath
        oes = f'{_OUTCOME_PART[outcome]},"{_K_EVENT_SOURCE}":{_esc(es_value)}'
    parts = (head, oes, status_part, code_default, tail_const, _OUTCOME_METRIC_NAME[outcome], es_value)
    by_source = _OUTCOME_LINE_PARTS[outcome]
    if len(by_source) < 64:
        by_source[es] = parts
    return parts


def exception_outcome(exc: BaseException) -> Outcome | None:
    """The outcome ``exc`` means by ``contract.EXCEPTION_OUTCOME`` (class names along the MRO), else None."""
    try:
        for klass in type(exc).__mro__:
            o = EXCEPTION_OUTCOME.get(klass.__name__)
            if o is not None:
                return o
    except Exception:  # a hostile __mro__/__name__
        return None
    return None


def _recorded_as(exc: BaseException | None, outcome: str) -> bool:
    """True when ``exc`` or an exception it was raised from/during (``__cause__``/``__context__``, 8 deep) carries
    the mark ``outcome``: the persistence layer recorded it where Powertools decided it."""
    for _ in range(8):
        if exc is None:
            return False
        if getattr(exc, "_idemwatch_recorded", None) == outcome:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _mark_recorded(exc: BaseException, outcome: str) -> None:
    try:
        exc._idemwatch_recorded = outcome  # type: ignore[attr-defined]
    except Exception:  # an exception type with __slots__ or a read-only attribute
        pass


def _identifier(value: Any) -> str:
    """An ``itemIdentifier`` as an exact ``str``: a ``str`` (subclass) as the text it holds, read without calling its
    methods (a subclass may override ``__len__``, ``__hash__``, ``__eq__`` or ``__str__`` and raise); anything else,
    None included, as ``""`` (no identifier)."""
    return str.__str__(value) if isinstance(value, str) else ""


class _SlowPath(Exception):
    """Internal: the call needs the general record builder."""


_NOT_READ: Any = object()
_SLOW: Any = object()  # a value only the general builder writes (not None, not a str)


class Emitter(InvocationLifecycle):
    """Idempotency and handler metrics as CloudWatch EMF, plus one structured JSON log record per outcome.

    Args:
        service: ``Service`` dimension and ``service`` log key. Default: $IDEMWATCH_SERVICE, $POWERTOOLS_SERVICE_NAME,
            else ``service_undefined``.
        namespace: CloudWatch namespace. Default: $IDEMWATCH_NAMESPACE, $POWERTOOLS_METRICS_NAMESPACE, ``Idempotency``.
        sink: where lines go (default :class:`StdoutSink`); anything with ``write_lines(iterable_of_str)``.
        event_source_dimension: add the bounded ``EventSource`` dimension (extra set ``[Service, EventSource]``).
        redact_keys: property names whose values are replaced by ``***REDACTED***``, matched as families after
            normalization (``password`` also redacts ``dbPassword``; rule: :mod:`emitter.redact`, docs/secrets.md).
            Payload-like names (body, payload, detail, ...) are always redacted.
        redact_extra_keys: names redacted in addition to ``redact_keys`` (keeps the default list).
        redact_exceptions: whole names never redacted (normalized), e.g. ``{"token_count"}``.
        hash_idempotency_keys: log ``tenant:sha256:<32 hex>`` instead of the key (tenant prefix before
            ``key_tenant_separator`` stays readable); ``key_hash_salt`` switches to HMAC-SHA256.
        strict: raise :class:`EmfValidationError` on invalid input instead of dropping it with a warning record.
        classifier: an :class:`ErrorClassifier` (or callable ``(exc, attempt) -> Classification``) for ``failure()``.
        clock: callable returning epoch MILLISECONDS (int); the demo injects simulated time.
        dimensions: default dimensions added to every dimension set of every flush (bounded values only; at most
            28); see :meth:`set_default_dimensions`. ``add_dimension`` ones last until the next flush.
        operation: Operation value used outside any invocation (default ``default``).
        metrics_disabled: True writes no EMF documents (outcome log records are still written). Default:
            ``contract.metrics_disabled()`` ($IDEMWATCH_METRICS_DISABLED, else Powertools' POWERTOOLS_METRICS_DISABLED).

    Raises: never, except EmfValidationError in strict mode and TimeoutBudgetExceeded from check_time_budget.
    """

    # The state every layer reads, as slots: an instance dict of more than 30 names is no longer the compact
    # per-class layout CPython 3.11 reads fastest (every ``self.x`` of the hot paths would pay for it). The layers
    # above have no __slots__, so an instance still has a __dict__ (subclasses and users may add attributes).
    __slots__ = (
        "_classifier", "_cold", "_default_dims", "_default_operation", "_detail_keys", "_dimensions", "_emf_level",
        "_emf_props_head", "_filter_warned", "_group_cache", "_groups", "_hasher", "_idle_emf_props", "_idle_static",
        "_inv", "_lock", "_logger_explicit", "_ms_ts", "_redact_cache", "_redacted", "_service_dim", "_sqs_queues",
        "_static_cache", "_timestamp_ms", "_ts_cache", "_valid_ops", "clock", "correlation_id_provider",
        "event_source_dimension", "metrics_disabled", "namespace", "service", "sink", "strict", "warnings",
    )

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
        redact_extra_keys: Iterable[str] = (),
        redact_exceptions: Iterable[str] = DEFAULT_REDACTION_EXCEPTIONS,
        metrics_disabled: bool | None = None,
    ) -> None:
        self.strict = strict
        self.sink: Any = sink if sink is not None else StdoutSink()
        self.clock: Callable[[], int] = clock or _default_clock
        self.event_source_dimension = event_source_dimension
        self._classifier = classifier  # None: an ErrorClassifier, made on first use (emitter.classify is not imported
        # by ``import emitter``: a cold start that records no failure never needs it)
        self._redacted = SecretNames(redact_keys, C.PAYLOAD_PROPERTY_NAMES | DEFAULT_REDACTED_EXACT_KEYS,
                                     redact_exceptions, redact_extra_keys)
        self._redact_cache: dict[str, bool] = {}
        self._detail_keys: dict[str, str] = {}  # received-record detail name -> its JSON head (',"name":' or redacted)
        self._sqs_queues: dict[str, tuple[str, str]] = {}  # queue ARN -> (queue name, its ``received`` member text)
        self._valid_ops: set[str] = set()
        self._group_cache: dict[Any, tuple[dict[str, str], list[list[str]], str, str]] = {}
        self._hasher = KeyHasher(key_tenant_separator, key_hash_salt) if hash_idempotency_keys else None
        self._lock = _thread.RLock()
        self._groups: dict[Any, dict[str, Any]] = {}  # emitter.aggregate (keys: aggregate.group_key)
        self._dimensions: dict[str, str] = {}
        self._default_dims: dict[str, str] = {}
        self.metrics_disabled: bool = _metrics_disabled() if metrics_disabled is None else bool(metrics_disabled)
        self._emf_level: str | None = lambda_filtered_level()
        self._emf_props_head: dict[str | None, str] = {}  # EMF root members before the request id, by function name
        self._filter_warned = False
        self.correlation_id_provider: Callable[[], Any] | None = None
        """Callable giving the correlation id of records that carry none of their own (e.g. Powertools Logger's
        ``get_correlation_id``; set by ``emitter.powertools.use_logger``). None: off. When None at an invocation's
        start, an active Powertools Logger of the same service is looked for and used (unless ``use_logger`` was
        called: that choice stands, ``use_logger(em, None)`` included)."""
        self._logger_explicit = False
        self._inv: InvocationInfo | None = None
        self._cold = True
        self._timestamp_ms: int | None = None
        self._ts_cache: tuple[int, str] = (-1, "")
        self._ms_ts: tuple[Any, str] = (None, "")
        self._static_cache: dict[Any, tuple[str, str]] = {}  # invocation-constant log members (_static_json)
        self.warnings: dict[str, int] = {}
        """Dropped/fixed elements so far, by WarningCode (also written as warning records)."""

        problems = Problems()
        if self._redacted.rejected:
            problems.add(C.WarningCode.INVALID_PROPERTY, "redact_keys", f"{self._redacted.rejected} non-string name(s) ignored")
        svc = service if service is not None else resolve_service()
        self.service: str = svc if isinstance(svc, str) else str(svc)
        if reason := emf.check_dimension_value(svc):
            problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{_SERVICE}", reason)
            self._service_dim: str | None = None
        else:
            self._service_dim = svc
        ns = namespace if namespace is not None else resolve_namespace()
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
            self._add_dimension(name, value, problems, default=True)
        self._report(problems)


    @property
    def classifier(self) -> ErrorClassifier | Callable[..., Classification]:
        """The classifier ``failure()`` uses: the one given, else an :class:`ErrorClassifier` (made on first use)."""
        c = self._classifier
        if c is None:
            from emitter.classify import ErrorClassifier

            c = self._classifier = ErrorClassifier()
        return c

    @classifier.setter
    def classifier(self, value: ErrorClassifier | Callable[..., Classification] | None) -> None:
        self._classifier = value

    # ------------------------------------------------------------------ adapters
    def records(self, event: Any) -> list[EventRecord]:
        """Adapt ``event`` into one :class:`EventRecord` per batch record (or one for a single event) and write one
        ``received`` outcome per record (EventsReceived; Redelivery when attempt > 1; RecordAge when known).
        Never raises (strict: raises on a malformed record of a known source).

        A batch of plain SQS messages (the common Lambda batch) takes a fused path, :meth:`_sqs_records`, that
        adapts the messages and writes their lines in one pass; it returns and writes exactly what the general path
        (adapt, then the ``received`` builder) does, reading the clock as often (tested)."""
        clock = self.clock
        now = _time_ns() // 1_000_000 if clock is _default_clock else clock()  # _default_clock inlined
        if event.__class__ is dict:
            raw = event.get("Records")
            if raw.__class__ is list and raw:
                # the lines' timestamp: a second reading of an injected clock (the general path reads it again); the
                # default clock's first reading stands for both (the two readings of one instant: ~70 ns saved)
                ms = now if clock is _default_clock else clock()
                recs = self._sqs_records(raw, now, ms)
                if recs is None:  # a message needs the general path: from the top, with the general path's clock
                    # readings: adapter warnings (if any) read the clock second, the received lines third
                    try:
                        recs, errors = adapt_event(event, now)
                    except Exception as exc:  # noqa: BLE001  # pragma: no cover - adapters catch their own errors
                        recs, errors = [EventRecord(raw=event)], [f"adapter crashed ({type(exc).__name__})"]
                    self._adapter_errors(errors, ms)
                    self._received_all(recs, None if errors else ms)
                return recs
        recs = self._adapt(event, now)
        self._received_all(recs)
        return recs

    def adapt(self, event: Any) -> list[EventRecord]:
        """:meth:`records` without the ``received`` outcomes: one EventRecord per batch record, in the event's order
        (adapter problems are reported as warning records). Pair with :meth:`received` when a record's processing
        starts later or not at all (stream checkpointing)."""
        return self._adapt(event, self.clock())

    def _adapt(self, event: Any, now: int) -> list[EventRecord]:
        try:
            recs, errors = adapt_event(event, now)
        except Exception as exc:  # pragma: no cover - adapters catch their own errors
            recs, errors = [EventRecord(raw=event)], [f"adapter crashed ({type(exc).__name__})"]
        self._adapter_errors(errors)
        return recs

    def _sqs_records(self, raw: list[Any], now: int, ms: int) -> list[EventRecord] | None:
        """The fused :meth:`records` of a batch of plain SQS messages: each message is adapted and its ``received``
        line built in the same step, from the values as read (no second look at them), and all lines go out in one
        sink write. ``now``: the adapter's clock reading (record ages); ``ms``: the lines' timestamp (epoch ms).

        Plain means: standard queue (no MessageGroupId), the three attributes as strings ``int()`` reads, no message
        attributes, a str messageId and queue name of at most MAX_LOG_FIELD_CHARS, and a correlation id provider's
        value (read once for the batch: its records are received at the same instant) None or a str of at most
        MAX_LOG_FIELD_CHARS. Any other message returns None before anything is written; the caller then runs the general path on the whole
        batch. Same EventRecords and bytes as ``adapt_event`` + :meth:`_received_all` (hypothesis-tested)."""
        try:
            # the provider's correlation id, read once: the batch's records are received at the same instant
            corr = None if self.correlation_id_provider is None else self._provided_correlation_id()
            corr_part = "" if corr is None else _P_CORRELATION_ID + _esc(corr)
            p_attempt_1 = f"{_P_ATTEMPT}1{corr_part}{_P_RECORD_AGE}" if corr_part else _P_ATTEMPT_1
            p_record_age = corr_part + _P_RECORD_AGE
            heads = self._detail_keys
            q_head = heads.get("queue") or self._detail_head("queue")
            f_head = heads.get("first_receive_at_ms") or self._detail_head("first_receive_at_ms")
            f_redacted = f_head[-1] == '"'  # type: ignore[index]
            queues = self._sqs_queues
            inv = self._inv
            if inv is not None:
                static, op = inv.static_json, inv.operation
            else:
                static, op = self._idle_static, self._default_operation
            tc = self._ms_ts  # self._iso's cache, read once (another thread may replace it)
            prefix = f'{_RECEIVED_LINE_HEAD}{tc[1] if tc[0] == ms else self._iso(ms)}",{static},{_P_SQS_RECEIVED}'
            # of the line after the prefix, its newline included (the lines end with one: see _received_commit)
            limit = C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM - len(prefix) + 1
            recs: list[EventRecord] = []
            lines: list[str] = []
            ages: list[int] = []
            redelivered = 0
            # The previous message's first-receive text and value, and queue: the messages of one poll mostly share
            # them (an equal str gives the same int; a str compare costs a fraction of int() and of a dict lookup)
            last_f: Any = None
            first = 0
            last_arn: Any = None
            qp: Any = None
            tail: Any = None  # the line's members after record_age_ms's value, for this queue and first-receive time
            details: Any = None  # the records' details for this queue and first-receive time
            # a line's length is bounded by its parts' (ids and queue name escaped: at most 12 chars a char, a
            # character outside the BMP being a surrogate pair of \uXXXX; ints of at most int()'s digit limit):
            # checked only when the prefix leaves less room than that
            digits = _sys.get_int_max_str_digits()
            check_len = not digits or limit < _LINE_BOUND + 3 * digits
            for r in raw:
                # members by subscript, messageAttributes and eventSourceARN too (Lambda always sends them; a
                # KeyError hands the batch back to the general path, below, which writes the same); all values checked
                if r.__class__ is not dict or r["eventSource"] != "aws:sqs" or r["messageAttributes"]:
                    return None
                attrs = r["attributes"]
                if attrs.__class__ is not dict or "MessageGroupId" in attrs:
                    return None
                s, f, c = attrs["SentTimestamp"], attrs["ApproximateFirstReceiveTimestamp"], \
                    attrs["ApproximateReceiveCount"]
                if s.__class__ is not str or f.__class__ is not str or c.__class__ is not str:
                    return None
                sent = int(s)  # what the adapter does with str attributes
                mid = r["messageId"]
                if mid.__class__ is not str or len(mid) > _MAX_FIELD:
                    return None
                arn = r["eventSourceARN"]
                if arn != last_arn or arn.__class__ is not str:
                    qp = queues.get(arn) if arn.__class__ is str else None
                    if qp is None:
                        queue = _arn_name(arn)  # None unless an ARN str
                        if queue.__class__ is not str or len(queue) > _MAX_FIELD:  # type: ignore[arg-type]
                            return None
                        # (queue name, the members after record_age_ms up to first_receive_at_ms's value or the end)
                        qp = (queue, (q_head if q_head[-1] == '"' else q_head + _esc(queue)) +  # type: ignore[index]
                              (f_head + "}" if f_redacted else f_head))  # type: ignore[operator]
                        if len(queues) < 256:
                            queues[arn] = qp
                    last_arn = arn
                    last_f = None  # the tail is made again, below
                if f != last_f:
                    first = int(f)
                    last_f = f
                    tail = qp[1] + "\n" if f_redacted else f"{qp[1]}{first}}}\n"
                    details = {"queue": qp[0], "first_receive_at_ms": first}  # each record gets a copy (C, cheaper)
                age = now - sent
                if age < 0:  # never negative under clock skew
                    age = 0
                elif age > _MAX_ABS_INT:  # not a metric value (coerce_metric_value): the general builder drops it
                    return None
                if c == "1":  # the first delivery (int("1")): its members as one constant
                    attempt = 1
                    line = f"{_esc(mid)}{p_attempt_1}{age}{tail}"
                else:
                    attempt = int(c)
                    if attempt > 1:
                        redelivered += 1
                    else:
                        attempt = 1
                    line = f"{_esc(mid)}{_P_ATTEMPT}{attempt}{p_record_age}{age}{tail}"
                if check_len and len(line) > limit:
                    return None
                rec = _new(EventRecord)  # EventRecord(...) without the class call (~0.6 us on CPython 3.11)
                rec.event_id = mid
                rec.event_source = _SQS
                rec.attempt = attempt
                rec.record_age_ms = age
                rec.sent_at_ms = sent
                rec.idempotency_key = rec.correlation_id = None
                rec.details = details.copy()
                rec.raw = r
                recs.append(rec)  # not a bound method: CPython 3.11 specializes list.append calls
                lines.append(line)
                ages.append(age)
        except Exception:  # noqa: BLE001 - an odd value (int() refusing it, an unhashable ARN, a correlation id the
            return None  # general builder converts): the general path
        self._received_commit(lines, op, _ES_VALUE[_SQS] if self.event_source_dimension else None, len(lines),
                              redelivered, ages, recs[0].attempt == 1, prefix)
        return recs

    def received(self, record: EventRecord) -> None:
        """Write the ``received`` outcome of one adapter-made record (what :meth:`records` writes per record)."""
        self._received(record)

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
        """The ``received`` outcome of one adapter-made record (see :meth:`_received_all`)."""
        self._received_all([rec])

    def _received_all(self, recs: list[EventRecord], ms: int | None = None) -> None:
        """The ``received`` outcomes of adapter-made records, written together (one clock reading, one lock, one sink
        write: they are received at the same instant). Each line is exactly what ``record_outcome(Outcome.RECEIVED,
        rec)`` writes (tested); a record with unusual values goes through record_outcome, in order. ``ms``: the
        clock reading to use (epoch ms; default: read now)."""
        try:
            inv = self._inv
            if inv is not None:
                static, op = inv.static_json, inv.operation
            else:
                static, op = self._idle_static, self._default_operation
            prefix = f'{_LINE_HEAD[_RECEIVED]}{self._iso(self.clock() if ms is None else ms)}",{static},{_RECEIVED_HEAD},'
            hasher = self._hasher
            provider = self.correlation_id_provider
            provided: Any = _NOT_READ  # the provider's correlation id, read once (the records' common instant)
            limit = C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM
            es_dimension = self.event_source_dimension
            es_part = _ES_PART
            heads = self._detail_keys
            lines: list[str] = []
            n = redelivered = 0
            ages: list[int] = []
            es_dim = None
            age_first = False
            for rec in recs:
                line = None
                eid, key, corr, attempt, age = rec.event_id, rec.idempotency_key, rec.correlation_id, rec.attempt, \
                    rec.record_age_ms
                if corr is None and provider is not None:
                    if provided is _NOT_READ:
                        try:
                            provided = self._provided_correlation_id()
                        except _SlowPath:  # a value the general builder converts
                            provided = _SLOW
                    corr = provided
                es = es_part.get(rec.event_source)
                if (
                    es is not None and attempt.__class__ is int
                    and (eid is None or (eid.__class__ is str and len(eid) <= _MAX_FIELD))
                    and (key is None or (key.__class__ is str and len(key) <= _MAX_FIELD))
                    and (corr is None or (corr.__class__ is str and len(corr) <= _MAX_FIELD))
                    and (age is None or (age.__class__ is int and 0 <= age <= _MAX_ABS))  # a metric value
                ):
                    details = ""  # the source details as members (inlined: this runs per record)
                    for dk, dv in rec.details.items():
                        if dv is None:
                            continue
                        head = heads.get(dk)
                        if head is None and (head := self._detail_head(dk)) is None:
                            details = None
                            break
                        cls = dv.__class__
                        if head[-1] == '"':  # redacted
                            details += head
                        elif cls is int:
                            details = f"{details}{head}{dv}"
                        elif cls is str and len(dv) <= _MAX_FIELD:
                            details = f"{details}{head}{_esc(dv)}"
                        else:
                            details = None
                            break
                    if details is not None:
                        # one f-string in the key order of the general builder (same bytes, tested); attempt and
                        # age are exact ints here, so {x} is int.__repr__
                        if key is None and corr is None and eid is not None and age is not None:  # the usual
                            line = (f'{prefix}{es}{_P_EVENT_ID}{_esc(eid)}{_P_ATTEMPT}{attempt}'
                                    f'{_P_RECORD_AGE}{age}{details}}}')
                        else:
                            line = (f'{prefix}{es}{"" if eid is None else _P_EVENT_ID + _esc(eid)}'
                                    f'{"" if key is None else _P_KEY + _esc(key if hasher is None else hasher(key))}'
                                    f'{_P_ATTEMPT}{attempt}'
                                    f'{"" if corr is None else _P_CORRELATION_ID + _esc(corr)}'
                                    f'{"" if age is None else _P_RECORD_AGE + int.__repr__(age)}{details}}}')
                        if len(line) > limit:
                            line = None
                if line is None:  # the general builder, keeping the order of the lines
                    if lines:
                        self._received_commit(lines, op, es_dim, n, redelivered, ages, age_first)
                        lines, n, redelivered, ages, age_first = [], 0, 0, [], False
                    self.record_outcome(Outcome.RECEIVED, rec)
                    continue
                if es_dimension:
                    es = _ES_VALUE[rec.event_source]
                    if lines and es != es_dim:
                        self._received_commit(lines, op, es_dim, n, redelivered, ages, age_first)
                        lines, n, redelivered, ages, age_first = [], 0, 0, [], False
                    es_dim = es
                lines.append(line)
                n += 1
                if attempt > 1:
                    redelivered += 1
                if age is not None:
                    if not ages and not redelivered:
                        age_first = True  # metric order in the document: as record by record
                    ages.append(age)
            if lines:
                self._received_commit(lines, op, es_dim, n, redelivered, ages, age_first)
        except Exception as exc:  # never break the handler
            if self.strict:
                raise
            self._count_warning(C.WarningCode.INTERNAL_ERROR, 1)
            self._stderr(f"idemwatch: could not record received: {type(exc).__name__}")

    def _detail_head(self, name: Any) -> str | None:
        """The JSON head (``,"name":``, or the whole redacted member) of a ``received`` line's source detail, cached;
        None when the name needs the general builder (not a str, or a key the emitter owns)."""
        if name.__class__ is not str or name in _RECEIVED_TAKEN or name in _RESERVED_KEYS:
            return None
        head = f',{_esc(name)}:"{REDACTED}"' if self._is_redacted(name) else f",{_esc(name)}:"
        if len(self._detail_keys) < 256:
            self._detail_keys[name] = head
        return head

    def _received_commit(self, lines: list[str], op: str | None, es: str | None, n: int, redelivered: int,
                         ages: list[int], age_first: bool, prefix: str = "") -> None:
        """Count and write the ``received`` lines of one batch. ``prefix``: the text every line starts with, when
        ``lines`` are given without it and each with its newline: it is joined in once (one copy of the batch's
        text, ``prefix.join(["", *lines])``). ``es``: None unless the EventSource dimension is on (the callers
        decide)."""
        self._lock.acquire()  # not `with`: a with-block on a C lock costs ~0.4 us more on CPython 3.11
        try:
            key = op if es is None else (op, es)  # self._add, inlined (aggregate.group_key)
            group = self._groups.get(key)
            if group is None:
                group = self._groups[key] = {}
            group[_M_EVENTS_RECEIVED] = group.get(_M_EVENTS_RECEIVED, 0) + n  # a Count sum (emitter.aggregate)
            if redelivered and not age_first:
                group[_M_REDELIVERY] = group.get(_M_REDELIVERY, 0) + redelivered
            if ages:
                values = group.get(_M_RECORD_AGE)  # a Milliseconds list: every value
                if values is None:
                    group[_M_RECORD_AGE] = ages  # the caller's own list, handed over
                else:
                    values.extend(ages)
            if redelivered and age_first:
                group[_M_REDELIVERY] = group.get(_M_REDELIVERY, 0) + redelivered
            try:  # self._write inlined (the lock is held)
                sink = self.sink
                if not prefix:
                    sink.write_lines(lines)
                elif sink.__class__ is StdoutSink:  # its write_lines, inlined (Lambda's sink)
                    out = _sys.stdout
                    out.write(prefix.join(["", *lines]))
                    out.flush()
                else:
                    sink.write_lines([prefix + line[:-1] for line in lines])
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - as in _write
                self._sink_failed(exc, len(lines))
        finally:
            self._lock.release()

    def _adapter_errors(self, errors: list[str], ms: int | None = None) -> None:
        if errors:
            p = Problems()
            for e in errors:
                p.add(C.WarningCode.ADAPTER_ERROR, "record", e)
            self._report(p, ms)

    # ------------------------------------------------------------------ outcome calls
    def claimed(self, record: EventRecord | None = None, key: str | None = None, *,
                expires_at_ms: int | None = None, **props: Any) -> None:
        """Key claimed (record written IN_PROGRESS). No metric; ``expires_at_ms`` (epoch ms) feeds stuck-key detection."""
        self._outcome(_CLAIMED, record, key, _F_EXPIRES, expires_at_ms, props)

    def succeeded(self, record: EventRecord | None = None, key: str | None = None, **props: Any) -> None:
        """First processing finished and recorded COMPLETED: EventsSucceeded."""
        self._outcome(_SUCCEEDED, record, key, None, None, props)

    def duplicate_completed(self, record: EventRecord | None = None, key: str | None = None, **props: Any) -> None:
        """Key already COMPLETED with the same payload hash: DuplicateCompleted."""
        self._outcome(_DUPLICATE_COMPLETED, record, key, None, None, props)

    def duplicate_in_progress(self, record: EventRecord | None = None, key: str | None = None, **props: Any) -> None:
        """Key IN_PROGRESS and not expired (concurrent duplicate): DuplicateInProgress."""
        self._outcome(_DUPLICATE_IN_PROGRESS, record, key, None, None, props)

    def payload_conflict(self, record: EventRecord | None = None, key: str | None = None, **props: Any) -> None:
        """Key reused with a different payload hash: PayloadConflict."""
        self._outcome(_PAYLOAD_CONFLICT, record, key, None, None, props)

    def stale_claim_takeover(self, record: EventRecord | None = None, key: str | None = None, *,
                             expires_at_ms: int | None = None, **props: Any) -> None:
        """Expired IN_PROGRESS claim taken over: StaleClaimTakeover. ``expires_at_ms`` = the NEW claim's expiry."""
        self._outcome(_STALE_CLAIM_TAKEOVER, record, key, _F_EXPIRES, expires_at_ms, props)

    def retryable_failure(self, record: EventRecord | None = None, key: str | None = None, *,
                          error_code: str | None = None, **props: Any) -> None:
        """Failure the source will retry: RetryableFailure."""
        self._outcome(_RETRYABLE_FAILURE, record, key, _K_ERROR_CODE, error_code, props)

    def permanent_failure(self, record: EventRecord | None = None, key: str | None = None, *,
                          error_code: str | None = None, **props: Any) -> None:
        """Validation or other permanent failure: PermanentFailure."""
        self._outcome(_PERMANENT_FAILURE, record, key, _K_ERROR_CODE, error_code, props)

    def poison_message(self, record: EventRecord | None = None, key: str | None = None, *,
                       error_code: str | None = None, **props: Any) -> None:
        """Event quarantined or routed to a DLQ: PoisonMessage."""
        self._outcome(_POISON_MESSAGE, record, key, _K_ERROR_CODE, error_code, props)

    def ambiguous_commit(self, record: EventRecord | None = None, key: str | None = None, *,
                         side_effect_ref: str | None = None, **props: Any) -> None:
        """Side-effect outcome unknown (e.g. timeout after the call): AmbiguousCommit."""
        self._outcome(_AMBIGUOUS_COMMIT, record, key, _K_SIDE_EFFECT_REF, side_effect_ref, props)

    def side_effect_started(self, record: EventRecord | None = None, key: str | None = None, *,
                            side_effect_ref: str | None = None, **props: Any) -> None:
        """A side effect starts: RemainingTimeAtSideEffect = remaining invocation time (ms) from the context
        (or ``remaining_time_ms=`` given explicitly). No value when unknown (then no metric either)."""
        self.record_outcome(Outcome.SIDE_EFFECT_STARTED, record, key, side_effect_ref=side_effect_ref, **props)

    def store_error(self, record: EventRecord | None = None, key: str | None = None, *,
                    error_code: str | None = None, **props: Any) -> None:
        """The idempotency persistence layer failed: IdempotencyStoreError."""
        self._outcome(_STORE_ERROR, record, key, _K_ERROR_CODE, error_code, props)

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
        problems = Problems()
        items: list[tuple[EventRecord | None, str]] = []
        try:
            for item in failed:
                rec = item if isinstance(item, EventRecord) else None
                ident = _identifier(rec.item_identifier if rec is not None else item)
                if not ident:
                    problems.add(C.WarningCode.MISSING_ITEM_IDENTIFIER, "batchItemFailures",
                                 "item without identifier returned as '' (Lambda retries the whole batch)")
                if ident in seen:
                    problems.add(C.WarningCode.DUPLICATE_ITEM_IDENTIFIER, "batchItemFailures", "item listed twice")
                    continue
                seen.add(ident)
                out.append({"itemIdentifier": ident})
                items.append((rec, ident))
        except Exception as exc:  # a failing iterable or item: Lambda retries the whole batch ('' is no identifier)
            if self.strict:
                raise
            self._count_warning(C.WarningCode.INTERNAL_ERROR, 1)
            self._stderr(f"idemwatch: could not read the failed items: {type(exc).__name__}; whole batch failed")
            if "" not in seen:
                out.append({"itemIdentifier": ""})
        if problems:
            self._report(problems)
        for rec, ident in items:
            if rec is not None:
                self._outcome(_BATCH_ITEM_FAILURE, rec, None, None, None, {})
            else:
                self.record_outcome(Outcome.BATCH_ITEM_FAILURE, ident or None)
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
            p = Problems()
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

    def classify(self, exc: BaseException, record: EventRecord | None = None) -> Classification:
        """The emitter classifier's verdict on ``exc`` (with the record's delivery attempt). Writes nothing; never
        raises (a failing custom classifier yields retryable with the class name as code)."""
        attempt = record.attempt if isinstance(record, EventRecord) else 1
        try:
            from emitter.classify import ErrorClassifier

            clf = self.classifier
            return clf(exc, attempt) if not isinstance(clf, ErrorClassifier) else clf.classify(exc, attempt)
        except Exception:
            return Classification(_contract.ErrorClass.RETRYABLE, type(exc).__name__, True)

    def failure(self, exc: BaseException, record: EventRecord | None = None, key: str | None = None,
                **props: Any) -> Classification:
        """Record the failure ``exc`` and return its Classification.

        An exception that means an idempotency outcome (``contract.EXCEPTION_OUTCOME``, matched by class name along
        the MRO: IdempotencyAlreadyInProgressError -> duplicate_in_progress, IdempotencyValidationError ->
        payload_conflict, IdempotencyPersistenceLayerError -> store_error, ...) is recorded as THAT outcome, unless
        the instrumented persistence layer already recorded it (marked on the exception or its cause/context).
        Anything else is classified (the emitter's classifier, with the record's attempt) and written as
        retryable_failure / permanent_failure / poison_message with its error code. The exception message is never
        logged. A TimeoutBudgetExceeded already recorded by check_time_budget is not recorded twice."""
        c = self.classify(exc, record)
        mapped = exception_outcome(exc)
        if mapped is not None:
            if not _recorded_as(exc, mapped.value):
                _mark_recorded(exc, mapped.value)
                self.record_outcome(mapped, record, key, error_code=c.error_code, **props)
            return c
        if getattr(exc, "_idemwatch_recorded", False) is True:
            return c
        self.record_outcome(_contract.ERROR_CLASS_OUTCOME[c.error_class], record, key, error_code=c.error_code,
                            error_class=c.error_class.value, retryable=c.retryable, **props)
        return c

    # ------------------------------------------------------------------ the generic outcome writer
    def _provided_correlation_id(self) -> str | None:
        """The correlation id provider's value for a line of the fast paths: None (no id, or the provider failed: as
        the general builder) or a str of at most MAX_LOG_FIELD_CHARS; any other value raises _SlowPath carrying it,
        for the general builder to convert."""
        try:
            corr = self.correlation_id_provider()  # type: ignore[misc]
        except Exception:  # noqa: BLE001 - a failing provider gives no correlation id (the general builder's rule)
            return None
        if corr is None or (corr.__class__ is str and len(corr) <= _MAX_FIELD):
            return corr
        raise _SlowPath(corr)

    def _outcome(self, outcome: Outcome, record: Any, key: Any, field: str | None, value: Any,
                 props: dict[str, Any]) -> None:
        """Outcome methods land here. The common call (an EventRecord or None, a plain key, at most one known
        keyword, no extra properties) takes a fast path that writes exactly what :meth:`record_outcome` writes for
        the same call (a test compares them); anything else goes through record_outcome."""
        try:
            if props:
                raise _SlowPath
            # JSON assembled from C-escaped pieces in the key order record_outcome uses (same bytes, tested).
            inv = self._inv
            es: Any
            if record is not None:
                if record.__class__ is not EventRecord:
                    raise _SlowPath
                es = record.event_source
                eid = record.event_id
                if key is None:
                    key = record.idempotency_key
                attempt = record.attempt
                corr = record.correlation_id
                if attempt.__class__ is not int or (eid is not None and (
                        eid.__class__ is not str or len(eid) > _MAX_FIELD)):
                    raise _SlowPath
                if corr is not None and (corr.__class__ is not str or len(corr) > _MAX_FIELD):
                    raise _SlowPath
            else:
                es = inv.event_source if inv is not None else None
                eid = corr = attempt = None
            parts = _OUTCOME_LINE_PARTS[outcome].get(es)
            if parts is None:
                parts = _outcome_line_parts(outcome, es)
            head, oes, status_part, code_default, tail_const, metric, es_value = parts
            if key is not None:
                if key.__class__ is not str or len(key) > _MAX_FIELD:
                    raise _SlowPath
                key_json = _esc(key if self._hasher is None else self._hasher(key))  # key stays the caller's
            # the value keyword's member(s), before the tail; those record_outcome would check go to it
            if value is None:
                value_part = code_default
            elif field is _K_ERROR_CODE:
                if value.__class__ is not str or len(value) > _MAX_FIELD:
                    raise _SlowPath
                value_part = _P_ERROR_CODE + _esc(value)
            elif field is _F_EXPIRES:
                if value.__class__ is not int or not -_MAX_ABS <= value <= _MAX_ABS:  # what coerce_metric_value takes
                    raise _SlowPath
                value_part = f"{_P_EXPIRES}{int.__repr__(value)}{code_default}"
            else:  # side_effect_ref: after correlation_id
                if value.__class__ is not str or len(value) > _MAX_FIELD:
                    raise _SlowPath
                value_part = code_default
            if corr is None and self.correlation_id_provider is not None:  # after every check: read once
                corr = self._provided_correlation_id()
            if inv is not None:
                static, op = inv.static_json, inv.operation
            else:
                static, op = self._idle_static, self._default_operation
            clock = self.clock
            ms = _time_ns() // 1_000_000 if clock is _default_clock else clock()  # _default_clock inlined
            tc = self._ms_ts  # read once: another thread may replace it
            iso = tc[1] if tc[0] == ms else self._iso(ms)
            # one f-string in the key order record_outcome uses (same bytes, tested), newline included; the usual
            # call (a record with its id, no correlation id or side-effect ref) without conditionals
            if eid is not None and corr is None and field is not _K_SIDE_EFFECT_REF:
                # the line's end: a first delivery's as one constant (formatting the int costs more than the test)
                end = _P_ATTEMPT_1_END if attempt == 1 else f"{_P_ATTEMPT}{attempt}}}\n"
                if key is not None:
                    line = (f'{head}{iso}",{static},{oes}{_P_EVENT_ID}{_esc(eid)}{_P_KEY}{key_json}{status_part}'
                            f'{value_part}{tail_const}{end}')
                else:  # e.g. batch_item_failures of adapted records
                    line = f'{head}{iso}",{static},{oes}{_P_EVENT_ID}{_esc(eid)}{value_part}{tail_const}{end}'
            else:
                line = (f'{head}{iso}",{static},{oes}{"" if eid is None else _P_EVENT_ID + _esc(eid)}'
                        f'{"" if key is None else _P_KEY + key_json + status_part}'
                        f'{value_part}{tail_const}{"" if attempt is None else _P_ATTEMPT + int.__repr__(attempt)}'
                        f'{"" if corr is None else _P_CORRELATION_ID + _esc(corr)}'
                        f'{_P_SIDE_EFFECT_REF + _esc(value) if field is _K_SIDE_EFFECT_REF and value is not None else ""}'
                        '}\n')
            es = es_value if self.event_source_dimension else None
            self._lock.acquire()  # not `with`: a with-block on a C lock costs ~0.4 us more on CPython 3.11
            try:
                if metric is not None:
                    gkey = op if es is None else (op, es)  # aggregate.group_key (not ``key``: the caller's key)
                    group = self._groups.get(gkey)
                    if group is None:
                        group = self._groups[gkey] = {}
                    group[metric] = group.get(metric, 0) + 1  # a Count sum (emitter.aggregate)
                try:  # self._write inlined (the lock is held)
                    sink = self.sink
                    if sink.__class__ is StdoutSink:  # its write_lines for one line, inlined (Lambda's sink)
                        out = _sys.stdout
                        out.write(line)
                        out.flush()
                    else:
                        sink.write_lines([line[:-1]])
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:  # noqa: BLE001 - as in _write
                    self._sink_failed(exc, 1)
            finally:
                self._lock.release()
        except _SlowPath as slow:
            if value is not None:
                props[field] = value  # type: ignore[index]
            if slow.args:  # the provider's correlation id, already read (record_outcome would read it again)
                props[_K_CORRELATION_ID] = slow.args[0]
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
        problems = Problems()
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

