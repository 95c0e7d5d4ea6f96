"""The :class:`Emitter`: outcome calls, aggregation into EMF, structured log records, the handler wrapper.

Design (the contract is in ``emitter/CONTRACT.md``):
- every outcome call writes exactly ONE compact JSON log record at once and counts its metric in memory; every
  record is written by one writer, :meth:`LogRecordBuilder._outcome_line`;
- metrics are aggregated per invocation, one group per (Operation[, EventSource]); ``flush()`` (called by the
  wrapper on every exit path) writes each group as one or more EMF documents (split at 100 metrics / 100 values /
  256 KB, never dropped). Count metrics are summed (one value per document), Milliseconds metrics keep every value;
- so for the same traffic: number of log records with ``outcome=X`` == Sum of the metric of X (tested);
- invalid input never raises into the handler (unless ``strict``): the bad element is dropped, everything else is
  written, and ONE warning record per call carries ``idemwatch_warning`` (a WarningCode) and the list of drops;
- all state changes and sink writes happen under one lock: outcomes from worker threads are all counted.

Layout: :class:`Emitter` is built from layers, each a base class of the next:
- :mod:`emitter.log_records`  ``LogRecordBuilder``     the log record writer (timestamps, invocation members);
- :mod:`emitter.output`       ``SinkOutput``           sink writes, warning counters and the warning record;
- :mod:`emitter.aggregate`    ``MetricAggregator``     per-invocation metric groups, ``add_metric``, ``flush`` to EMF;
- :mod:`emitter.wrapper`      ``InvocationLifecycle``  ``handler``, ``invocation``, cold start, remaining time;
- this module                 ``Emitter``              construction, adapters + ``received``, the outcome calls.
"""

from __future__ import annotations

import _thread

from emitter import constants as C
from emitter import emf
from emitter.adapters import adapt_event, adapt_single
from emitter.classify import RECORDED_MARK, ErrorClassifier, exception_outcome, mark_recorded, recorded_as
from emitter.constants import DEFAULT_OPERATION
from emitter.context import default_clock
from emitter.contract import (
    DEFAULT_REDACTED_EXACT_KEYS,
    DEFAULT_REDACTED_KEYS,
    DEFAULT_REDACTION_EXCEPTIONS,
    ERROR_CLASS_OUTCOME,
    NAMESPACE_DEFAULT,
    Dimension,
    ErrorClass,
    Outcome,
    lambda_filtered_level,
    resolve_namespace,
    resolve_service,
)
from emitter.contract import metrics_disabled as _metrics_disabled
from emitter.emf import MetricSeries
from emitter.exceptions import EmfValidationError, TimeoutBudgetExceeded
from emitter.log_records import WRITING, OutcomeWriting
from emitter.output import Problems
from emitter.redact import KeyHasher, SecretNames
from emitter.sinks import Sink, StdoutSink
from emitter.types import Classification, EventRecord
from emitter.wrapper import InvocationLifecycle

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from emitter.context import InvocationInfo
    from emitter.log_records import RecordLine

__all__ = ["DEFAULT_OPERATION", "Emitter", "exception_outcome"]

_OUTCOME_VALUES = frozenset(o.value for o in Outcome)
_RECEIVED = WRITING[Outcome.RECEIVED]


def _identifier(value: Any) -> str:
    """An ``itemIdentifier`` as an exact ``str``: a ``str`` (subclass) as the text it holds, read without calling its
    methods (a subclass may override ``__len__``, ``__hash__``, ``__eq__`` or ``__str__`` and raise); anything else,
    None included, as ``""`` (no identifier)."""
    return emf.plain_str(value) or ""


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
        self.clock: Callable[[], int] = clock or default_clock
        self.event_source_dimension = event_source_dimension
        self._classifier = classifier  # None: an ErrorClassifier, made on first use
        self._redacted = SecretNames(redact_keys, C.PAYLOAD_PROPERTY_NAMES | DEFAULT_REDACTED_EXACT_KEYS,
                                     redact_exceptions, redact_extra_keys)
        self._valid_ops: set[str] = set()
        self._group_cache: dict[tuple[Any, ...], tuple[str, str]] = {}
        self._hasher = KeyHasher(key_tenant_separator, key_hash_salt) if hash_idempotency_keys else None
        self._lock = _thread.RLock()  # _thread: the module threading builds on (threading itself is not needed)
        self._groups: dict[tuple[str | None, str | None], dict[str, MetricSeries]] = {}  # emitter.aggregate
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
        self._iso_second: tuple[int, str] = (-1, "")  # the last second's date and time (LogRecordBuilder._iso)
        self._iso_last: tuple[int, str] = (-1, "")  # the last millisecond's text
        self._member_heads: dict[str, str] = {}  # extra property name -> its JSON head (_property_member)
        self._static_cache: dict[tuple[Any, ...], str] = {}  # invocation-constant log members (_static_json)
        self.warnings: dict[str, int] = {}
        """Dropped/fixed elements so far, by WarningCode (also written as warning records)."""

        problems = Problems()
        if self._redacted.rejected:
            problems.add(C.WarningCode.INVALID_PROPERTY, "redact_keys", f"{self._redacted.rejected} non-string name(s) ignored")
        svc = service if service is not None else resolve_service()
        self.service: str = svc if isinstance(svc, str) else str(svc)
        if reason := emf.check_dimension_value(svc):
            problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{Dimension.SERVICE.value}", reason)
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
                problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{Dimension.OPERATION.value}", reason)
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
            c = self._classifier = ErrorClassifier()
        return c

    @classifier.setter
    def classifier(self, value: ErrorClassifier | Callable[..., Classification] | None) -> None:
        self._classifier = value

    # ------------------------------------------------------------------ adapters and received records
    def records(self, event: Any) -> list[EventRecord]:
        """Adapt ``event`` into one :class:`EventRecord` per batch record (or one for a single event) and write one
        ``received`` outcome per record (EventsReceived; Redelivery when attempt > 1; RecordAge when known), all
        with one clock reading (epoch ms) for their ages and timestamps: they are received at the same instant.
        Never raises (strict: raises on a malformed record of a known source)."""
        now = self.clock()
        problems = Problems()
        recs = self._adapt(event, now, problems)
        self._received_all(recs, now, problems)
        return recs

    def adapt(self, event: Any) -> list[EventRecord]:
        """:meth:`records` without the ``received`` outcomes: one EventRecord per batch record, in the event's order
        (adapter problems are reported as warning records). Pair with :meth:`received` when a record's processing
        starts later or not at all (stream checkpointing)."""
        problems = Problems()
        recs = self._adapt(event, self.clock(), problems)
        self._report(problems)
        return recs

    def received(self, record: EventRecord) -> None:
        """Write the ``received`` outcome of one adapter-made record (what :meth:`records` writes per record)."""
        self._received_all([record], self.clock(), Problems())

    def record_for(self, event: Any) -> EventRecord:
        """Same as :meth:`records` for a single (non-batch) event: returns one EventRecord and writes one ``received``."""
        now = self.clock()
        problems = Problems()
        try:
            rec, err = adapt_single(event, now)
        except Exception as exc:  # pragma: no cover - adapters catch their own errors
            rec, err = EventRecord(raw=event), f"adapter crashed ({type(exc).__name__})"
        if err:
            problems.add(C.WarningCode.ADAPTER_ERROR, "record", err)
        self._received_all([rec], now, problems)
        return rec

    def _adapt(self, event: Any, now: int, problems: Problems) -> list[EventRecord]:
        try:
            recs, errors = adapt_event(event, now)
        except Exception as exc:  # pragma: no cover - adapters catch their own errors
            recs, errors = [EventRecord(raw=event)], [f"adapter crashed ({type(exc).__name__})"]
        for e in errors:
            problems.add(C.WarningCode.ADAPTER_ERROR, "record", e)
        return recs

    def _received_all(self, recs: list[EventRecord], ms: int, problems: Problems) -> None:
        """Write the ``received`` records of ``recs`` (timestamp ``ms``, epoch ms) with one warning record for the
        call's ``problems`` and one sink write. A record that cannot be written is counted as internal_error; the
        others are still written."""
        inv = self._inv
        prefix = self._prefix(_RECEIVED, ms, inv.static_json if inv is not None else self._idle_static)
        lines = []
        for rec in recs:
            try:
                lines.append(self._outcome_line(_RECEIVED, rec, None, {}, problems, prefix))
            except Exception as exc:  # noqa: BLE001 - never break the handler
                self._internal_error(Outcome.RECEIVED, exc)
        self._commit(_RECEIVED, lines, problems)

    # ------------------------------------------------------------------ outcome calls
    def claimed(self, record: EventRecord | None = None, key: str | None = None, *,
                expires_at_ms: int | None = None, **props: Any) -> None:
        """Key claimed (record written IN_PROGRESS). No metric; ``expires_at_ms`` (epoch ms) feeds stuck-key detection."""
        self.record_outcome(Outcome.CLAIMED, record, key, expires_at_ms=expires_at_ms, **props)

    def succeeded(self, record: EventRecord | None = None, key: str | None = None, **props: Any) -> None:
        """First processing finished and recorded COMPLETED: EventsSucceeded."""
        self.record_outcome(Outcome.SUCCEEDED, record, key, **props)

    def duplicate_completed(self, record: EventRecord | None = None, key: str | None = None, **props: Any) -> None:
        """Key already COMPLETED with the same payload hash: DuplicateCompleted."""
        self.record_outcome(Outcome.DUPLICATE_COMPLETED, record, key, **props)

    def duplicate_in_progress(self, record: EventRecord | None = None, key: str | None = None, **props: Any) -> None:
        """Key IN_PROGRESS and not expired (concurrent duplicate): DuplicateInProgress."""
        self.record_outcome(Outcome.DUPLICATE_IN_PROGRESS, record, key, **props)

    def payload_conflict(self, record: EventRecord | None = None, key: str | None = None, **props: Any) -> None:
        """Key reused with a different payload hash: PayloadConflict."""
        self.record_outcome(Outcome.PAYLOAD_CONFLICT, record, key, **props)

    def stale_claim_takeover(self, record: EventRecord | None = None, key: str | None = None, *,
                             expires_at_ms: int | None = None, **props: Any) -> None:
        """Expired IN_PROGRESS claim taken over: StaleClaimTakeover. ``expires_at_ms`` = the NEW claim's expiry."""
        self.record_outcome(Outcome.STALE_CLAIM_TAKEOVER, record, key, expires_at_ms=expires_at_ms, **props)

    def retryable_failure(self, record: EventRecord | None = None, key: str | None = None, *,
                          error_code: str | None = None, **props: Any) -> None:
        """Failure the source will retry: RetryableFailure."""
        self.record_outcome(Outcome.RETRYABLE_FAILURE, record, key, error_code=error_code, **props)

    def permanent_failure(self, record: EventRecord | None = None, key: str | None = None, *,
                          error_code: str | None = None, **props: Any) -> None:
        """Validation or other permanent failure: PermanentFailure."""
        self.record_outcome(Outcome.PERMANENT_FAILURE, record, key, error_code=error_code, **props)

    def poison_message(self, record: EventRecord | None = None, key: str | None = None, *,
                       error_code: str | None = None, **props: Any) -> None:
        """Event quarantined or routed to a DLQ: PoisonMessage."""
        self.record_outcome(Outcome.POISON_MESSAGE, record, key, error_code=error_code, **props)

    def ambiguous_commit(self, record: EventRecord | None = None, key: str | None = None, *,
                         side_effect_ref: str | None = None, **props: Any) -> None:
        """Side-effect outcome unknown (e.g. timeout after the call): AmbiguousCommit."""
        self.record_outcome(Outcome.AMBIGUOUS_COMMIT, record, key, side_effect_ref=side_effect_ref, **props)

    def side_effect_started(self, record: EventRecord | None = None, key: str | None = None, *,
                            side_effect_ref: str | None = None, **props: Any) -> None:
        """A side effect starts: RemainingTimeAtSideEffect = remaining invocation time (ms) from the context
        (or ``remaining_time_ms=`` given explicitly). No value when unknown (then no metric either)."""
        self.record_outcome(Outcome.SIDE_EFFECT_STARTED, record, key, side_effect_ref=side_effect_ref, **props)

    def store_error(self, record: EventRecord | None = None, key: str | None = None, *,
                    error_code: str | None = None, **props: Any) -> None:
        """The idempotency persistence layer failed: IdempotencyStoreError."""
        self.record_outcome(Outcome.STORE_ERROR, record, key, error_code=error_code, **props)

    def batch_item_failures(self, failed: Iterable[EventRecord | str]) -> dict[str, list[dict[str, str]]]:
        """Build the partial-batch response and write one ``batch_item_failure`` record per item (BatchItemFailures).

        ``failed``: EventRecords (their ``item_identifier``) or item id strings. Duplicates are reported once.
        An item without an identifier is returned as ``""``: Lambda then retries the whole batch (nothing is lost)
        and a ``missing_item_identifier`` warning is written; so is ``failed`` when it is not iterable or raises
        part-way (the items read before are returned too; ``invalid_property``). Never raises (``strict``: raises
        EmfValidationError).
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
        except Exception as exc:  # noqa: BLE001 - not iterable, or failing part-way: Lambda retries the whole batch
            problems.add(C.WarningCode.INVALID_PROPERTY, "batchItemFailures",
                         f"failed items could not be read ({type(exc).__name__}); '' returned: the whole batch fails")
            if "" not in seen:
                out.append({"itemIdentifier": ""})
        self._report(problems)
        for rec, ident in items:
            self.record_outcome(Outcome.BATCH_ITEM_FAILURE, rec if rec is not None else ident or None)
        return {"batchItemFailures": out}

    def check_time_budget(self, required_ms: float, record: EventRecord | None = None, key: str | None = None,
                          **props: Any) -> float | None:
        """Refuse a side effect when the remaining time (ms) is below ``required_ms``.

        Returns the remaining milliseconds (None when unknown: no context, so no check). When remaining < required,
        writes a ``timeout_budget_abort`` record (TimeoutBudgetAbort) and raises :class:`TimeoutBudgetExceeded`
        (retryable; ``failure()`` on it records nothing more).
        """
        value, reason = emf.coerce_metric_value(required_ms)
        if value is None:
            p = Problems()
            p.add(C.WarningCode.INVALID_PROPERTY, "required_ms", f"{reason}; budget not checked")
            self._report(p)
            return self.remaining_time_ms()
        remaining = self.remaining_time_ms()
        if remaining is None or remaining >= value:
            return remaining
        self.record_outcome(Outcome.TIMEOUT_BUDGET_ABORT, record, key, remaining_time_ms=remaining,
                            required_time_ms=value, **props)
        exc = TimeoutBudgetExceeded(remaining, value)
        mark_recorded(exc, True)  # failure() on it records nothing more
        raise exc

    def classify(self, exc: BaseException, record: EventRecord | None = None) -> Classification:
        """The emitter classifier's verdict on ``exc`` (with the record's delivery attempt). Writes nothing; never
        raises (a failing custom classifier yields retryable with the class name as code)."""
        try:
            attempt = record.attempt if isinstance(record, EventRecord) else 1
            clf = self.classifier
            return clf(exc, attempt) if not isinstance(clf, ErrorClassifier) else clf.classify(exc, attempt)
        except Exception:
            return Classification(ErrorClass.RETRYABLE, type(exc).__name__, True)

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
            if not recorded_as(exc, mapped.value):
                mark_recorded(exc, mapped.value)
                self.record_outcome(mapped, record, key, error_code=c.error_code, **props)
            return c
        if getattr(exc, RECORDED_MARK, False) is True:
            return c
        self.record_outcome(ERROR_CLASS_OUTCOME[c.error_class], record, key, error_code=c.error_code,
                            error_class=c.error_class.value, retryable=c.retryable, **props)
        return c

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
            if type(outcome) is not Outcome:
                value = emf.plain_str(outcome)  # a str subclass is read as the text it holds (its methods may raise)
                if value not in _OUTCOME_VALUES:
                    problems.add(C.WarningCode.INVALID_PROPERTY, "outcome", "not an Outcome value; nothing recorded")
                    self._report(problems)
                    return
                outcome = Outcome(value)
            w = WRITING[outcome]
            self._commit(w, [self._outcome_line(w, record, key, props, problems)], problems)
        except EmfValidationError:
            raise
        except Exception as exc:  # noqa: BLE001 - never break the handler
            self._internal_error(outcome, exc)

    def _commit(self, w: OutcomeWriting, records: list[RecordLine], problems: Problems) -> None:
        """Report the call's ``problems`` (one warning record; ``strict`` raises here, before anything is written),
        then count the metrics of ``records`` (of outcome ``w``) and write their lines in one sink write, under the
        lock."""
        if problems:
            self._report(problems)
        with self._lock:
            self._count(w, records)
            self._write([r[0] for r in records])

    def _internal_error(self, outcome: Any, exc: Exception) -> None:
        """A record the emitter could not write: counted as ``internal_error`` and said on stderr (``strict``:
        re-raised)."""
        if self.strict:
            raise exc
        self._count_warning(C.WarningCode.INTERNAL_ERROR, 1)
        self._stderr(f"idemwatch: could not record {getattr(outcome, 'value', 'an outcome')}: {type(exc).__name__}")
