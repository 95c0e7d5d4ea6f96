"""Powertools batch processing with outcomes taken from the batch result itself.

``process_partial_response`` here is Powertools' function of the same name plus ``emitter=``: each record gets
``received`` when its processing starts, then ``succeeded`` (unless an instrumented persistence layer recorded its
final outcome, e.g. ``duplicate_completed``) or the failure Powertools caught (``em.failure``: retryable / permanent
/ poison, or the idempotency outcome the exception means); the ``batchItemFailures`` Powertools returns are counted
as BatchItemFailures (one ``batch_item_failure`` record each). The response is Powertools' own.

Streams (Kinesis, DynamoDB Streams): Lambda checkpoints at the lowest failed sequence number and retries every
record after it (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html,
https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html), so records processed after a
failure would run twice. The integration stops at the first failure: later records are neither processed nor
``received``, and ``batchItemFailures`` holds the first failed record only. Queues (SQS) process every record.

Poison: with ``quarantine=`` given, a record whose failure classifies as permanent or poison is handed to
``quarantine(record, exc)``; when that returns, the record is written as ``poison_message`` and left out of
``batchItemFailures`` (it is safe elsewhere, retrying it would only fail again). Without ``quarantine``, or when it
raises, the record is reported as failed and the source's own redrive (maxReceiveCount -> DLQ) takes over.

``async_process_partial_response`` does the same for Powertools' ``AsyncBatchProcessor``, which runs the records'
coroutines concurrently (``asyncio.gather``): each record's outcomes attach to it (the record scope is a ContextVar,
so each task has its own). All records start before any finishes, so a stream batch cannot stop at its first
failure: every record runs, ``batchItemFailures`` lists every failed one as Powertools returns it, and Lambda
restarts the shard at the lowest of them (records after it that succeeded run again: an instrumented idempotency
layer then records ``duplicate_completed``). Use the sync ``BatchProcessor`` where a stream must stop at a failure.
"""

from __future__ import annotations

from emitter.contract import ErrorClass
from emitter.core import exception_outcome
from emitter.powertools import constants as PC
from emitter.powertools import scope as _scope
from emitter.powertools.exceptions import IntegrationError
from emitter.powertools.types import RecordScope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from emitter.core import Emitter
    from emitter.powertools.types import Quarantine
    from emitter.types import EventRecord

__all__ = ["async_process_partial_response", "process_partial_response"]

_QUARANTINABLE = (ErrorClass.PERMANENT, ErrorClass.POISON)


class _BatchRun:
    """One call of :func:`process_partial_response`: the per-record hook put on the processor for that call."""

    def __init__(self, processor: Any, emitter: Emitter, recs: list[EventRecord], quarantine: Quarantine | None,
                 checkpoint: bool) -> None:
        self.processor = processor
        self.em = emitter
        self.recs = recs
        self.quarantine = quarantine
        self.checkpoint = checkpoint
        self.index = 0
        self.stopped = False
        self.orig = type(processor)._process_record
        self.orig_async = type(processor)._async_process_record
        self.by_raw = {id(r.raw): r for r in recs}

    def _start(self, record: dict[str, Any]) -> tuple[EventRecord, RecordScope, RecordScope | None]:
        """The record's EventRecord, written ``received``, and its scope made current (returns the previous one)."""
        i = self.index
        self.index += 1
        rec = self.by_raw.get(id(record))
        if rec is None:  # the adapter saw another shape: still count the record
            rec = self.recs[i] if i < len(self.recs) else _fallback_record(record)
        self.em.received(rec)
        sc = RecordScope(rec)
        return rec, sc, _scope.enter(sc)

    def process_record(self, record: dict[str, Any]) -> Any:
        if self.stopped:
            self.index += 1
            return (PC.SKIPPED, None, record)
        rec, sc, prev = self._start(record)
        try:
            result = self.orig(self.processor, record)
        finally:
            _scope.leave(prev)
        return self._finish(rec, sc, result)

    async def async_process_record(self, record: dict[str, Any]) -> Any:
        rec, sc, prev = self._start(record)
        try:
            result = await self.orig_async(self.processor, record)
        finally:
            _scope.leave(prev)
        # No await between Powertools' failure_handler and here: its exceptions[-1] is this record's (one thread)
        return self._finish(rec, sc, result)

    def _finish(self, rec: EventRecord, sc: RecordScope, result: Any) -> Any:
        """The record's final outcome from Powertools' result: succeeded (unless the layer recorded it), or the
        failure Powertools registered last (this record's), quarantined or recorded."""
        em = self.em
        if result[0] == "success":
            if not sc.terminal:
                em.succeeded(rec)
            return result
        p = self.processor
        exc = p.exceptions[-1][1] if p.exceptions else None
        if exc is None:  # Powertools' model-validation path registers a failure without exception info
            em.permanent_failure(rec, error_code="ModelValidationError")
        elif self._quarantined(rec, exc):
            p.exceptions.pop()
            p.fail_messages.pop()
            return result
        else:
            em.failure(exc, rec)
        if self.checkpoint:
            self.stopped = True
        return result

    def _quarantined(self, rec: EventRecord, exc: BaseException) -> bool:
        if self.quarantine is None or exception_outcome(exc) is not None:
            return False
        c = self.em.classify(exc, rec)
        if c.error_class not in _QUARANTINABLE:
            return False
        try:
            self.quarantine(rec, exc)
        except Exception as qexc:  # not quarantined: reported as failed, the source retries / redrives it
            self.em._stderr(f"idemwatch: quarantine failed ({type(qexc).__name__}); record reported as failed")
            return False
        self.em.poison_message(rec, error_code=c.error_code)
        return True


def _fallback_record(record: Any) -> EventRecord:
    from emitter.types import EventRecord

    return EventRecord(raw=record)


def process_partial_response(event: dict[str, Any], record_handler: Callable[..., Any], processor: Any,
                             context: Any = None, *, emitter: Emitter, quarantine: Quarantine | None = None,
                             stop_at_first_failure: bool | None = None) -> dict[str, Any]:
    """Powertools' ``process_partial_response`` with idemwatch outcomes; returns its ``{"batchItemFailures": [...]}``.

    Args:
        event: the Lambda event (SQS, Kinesis or DynamoDB Streams batch).
        record_handler: called once per record as Powertools calls it (``record`` and, if it takes it,
            ``lambda_context``); may use ``@idempotent_function`` over an instrumented persistence layer.
        processor: a Powertools ``BatchProcessor`` (sync; reused across invocations as Powertools allows).
        context: the Lambda context.
        emitter: the :class:`emitter.Emitter`. Outside ``@em.handler`` the call runs in its own
            ``em.invocation(context, event=event)`` (flushed at the end).
        quarantine: ``quarantine(record, exc)`` for permanent/poison failures (see module docstring).
        stop_at_first_failure: default True for Kinesis / DynamoDB Streams processors, False for SQS.

    Raises: what Powertools raises (ValueError for an event of the wrong shape, BatchProcessingError when every
    record failed); IntegrationError for a processor that is not a Powertools BatchProcessor; the emitter itself
    never raises into the handler.
    """
    from aws_lambda_powertools.utilities.batch import AsyncBatchProcessor, BasePartialBatchProcessor
    from aws_lambda_powertools.utilities.batch import process_partial_response as pt_process

    if not isinstance(processor, BasePartialBatchProcessor) or isinstance(processor, AsyncBatchProcessor):
        raise IntegrationError(f"expected a Powertools BatchProcessor, got {type(processor).__name__}"
                               + (" (use async_process_partial_response)" if isinstance(processor, AsyncBatchProcessor)
                                  else ""))
    return _run(event, record_handler, processor, context, emitter, quarantine, stop_at_first_failure, pt_process,
                "_process_record")


def async_process_partial_response(event: dict[str, Any], record_handler: Callable[..., Any], processor: Any,
                                   context: Any = None, *, emitter: Emitter,
                                   quarantine: Quarantine | None = None) -> dict[str, Any]:
    """Powertools' ``async_process_partial_response`` (an ``AsyncBatchProcessor`` running ``async def``
    record handlers concurrently) with idemwatch outcomes; returns its ``{"batchItemFailures": [...]}``.

    Same arguments and outcomes as :func:`process_partial_response`, except that a stream batch does not stop at
    its first failure (its records run concurrently; module docstring). Called from a sync handler, as Powertools
    requires (it runs the event loop itself).

    Raises: what Powertools raises; IntegrationError for a processor that is not an ``AsyncBatchProcessor``.
    """
    from aws_lambda_powertools.utilities.batch import AsyncBatchProcessor
    from aws_lambda_powertools.utilities.batch import async_process_partial_response as pt_async

    if not isinstance(processor, AsyncBatchProcessor):
        raise IntegrationError(f"expected a Powertools AsyncBatchProcessor, got {type(processor).__name__}")
    return _run(event, record_handler, processor, context, emitter, quarantine, False, pt_async,
                "_async_process_record")


def _run(event: dict[str, Any], record_handler: Callable[..., Any], processor: Any, context: Any, emitter: Emitter,
         quarantine: Quarantine | None, stop_at_first_failure: bool | None, pt_process: Callable[..., Any],
         hook: str) -> dict[str, Any]:
    """Run Powertools' ``pt_process`` with the per-record hook on the processor's ``hook`` method for this call,
    then count the batchItemFailures it returns."""
    if emitter._inv is None:
        with emitter.invocation(context, event=event):
            return _run(event, record_handler, processor, context, emitter, quarantine, stop_at_first_failure,
                        pt_process, hook)
    recs = emitter.adapt(event)
    checkpoint = stop_at_first_failure if stop_at_first_failure is not None else (
        getattr(processor.event_type, "name", "") in PC.STREAM_EVENT_TYPES)
    run = _BatchRun(processor, emitter, recs, quarantine, checkpoint)
    setattr(processor, hook, run.process_record if hook == "_process_record" else run.async_process_record)
    try:
        response = pt_process(event=event, record_handler=record_handler, processor=processor, context=context)
    finally:
        delattr(processor, hook)
    by_id = {r.item_identifier: r for r in recs}
    failed: list[Any] = []
    for item in response.get("batchItemFailures", []):
        ident = item.get("itemIdentifier")
        failed.append(by_id.get(ident, ident))
    emitter.batch_item_failures(failed)
    return response
