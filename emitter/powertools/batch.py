"""Powertools batch processing with idemwatch outcomes, and with Powertools' behaviour unchanged.

``process_partial_response`` here is Powertools' function of the same name plus ``emitter=``. It hands Powertools
the user's record handler wrapped (same signature, so Powertools passes ``lambda_context`` exactly when it would) and
leaves the processor alone: its ``_process_record`` (a subclass's, or one set on the instance), its order, its
``batchItemFailures`` and its ``BatchProcessingError`` when every record failed are Powertools' own. Per record the
wrapper writes ``received`` when the handler starts, then ``succeeded`` (unless an instrumented persistence layer
recorded the record's final outcome, e.g. ``duplicate_completed``) or the failure the handler raised
(``em.failure``: retryable / permanent / poison, or the idempotency outcome the exception means). A record
Powertools fails before calling the handler (a ``model=`` that does not validate it) gets ``received`` and that
failure after the batch; records a ``SqsFifoPartialProcessor`` short-circuits are never started, so they have
no outcome but their batch item failure. The ``batchItemFailures`` Powertools returns are counted as
BatchItemFailures (one ``batch_item_failure`` record each).

Streams (Kinesis, DynamoDB Streams) process every record by default, as in Powertools. With
``stop_at_first_failure=True`` the handler is not called for the records after the first failure: they are
reported failed (``BatchStopped``) like Powertools' ``SqsFifoPartialProcessor`` does for FIFO queues. For streams
with ReportBatchItemFailures Lambda checkpoints at the lowest failed sequence number and retries every record after
it (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html,
https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html), so a record processed after
a failure runs again; the option avoids that second run. If the first record fails, every record has then failed
and Powertools raises ``BatchProcessingError`` (unless ``raise_on_entire_batch_failure=False``).

Poison: with ``quarantine=`` given, a record whose failure classifies as permanent or poison is handed to
``quarantine(record, exc)``; when that returns, the record is written as ``poison_message`` and its handler call
counts as returned (so it is not in ``batchItemFailures``: it is safe elsewhere, retrying it would only fail
again). Without ``quarantine``, or when it raises, the record is reported as failed and the source's own redrive
(maxReceiveCount -> DLQ) takes over.

``async_process_partial_response`` does the same for Powertools' ``AsyncBatchProcessor``, which runs the records'
coroutines concurrently (``asyncio.gather``): each record's outcomes attach to it (the record scope is a ContextVar,
so each task has its own).
"""

from __future__ import annotations

import functools

from emitter.contract import ErrorClass
from emitter.core import exception_outcome
from emitter.powertools import scope as _scope
from emitter.powertools.exceptions import BatchStopped, IntegrationError
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
    """One call of :func:`process_partial_response`: the wrapped record handler and what it saw."""

    def __init__(self, processor: Any, emitter: Emitter, recs: list[EventRecord], quarantine: Quarantine | None,
                 stop_at_first_failure: bool) -> None:
        self.processor = processor
        self.em = emitter
        self.recs = recs
        self.quarantine = quarantine
        self.stop = stop_at_first_failure
        self.stopped = False
        self.calls = 0
        self.by_raw = {id(r.raw): r for r in recs}
        self.raised: dict[int, BaseException] = {}  # the exceptions the wrapper recorded (by id; kept alive here)

    def record_of(self, data: Any, index: int | None = None) -> EventRecord:
        """The EventRecord of the record Powertools hands the handler: the same dict (event source data classes
        keep it as ``raw_event``), else the record at ``index`` (a ``model=`` instance)."""
        rec = self.by_raw.get(id(getattr(data, "raw_event", None)))
        if rec is not None:
            return rec
        if index is not None and 0 <= index < len(self.recs):
            return self.recs[index]
        from emitter.types import EventRecord

        return EventRecord(raw=data)

    def _start(self, args: tuple[Any, ...], kwargs: dict[str, Any], index: int) -> tuple[EventRecord, RecordScope]:
        rec = self.record_of(kwargs["record"] if "record" in kwargs else (args[0] if args else None), index)
        self.em.received(rec)
        return rec, RecordScope(rec)

    def _failed(self, rec: EventRecord, exc: Exception) -> bool:
        """Record the handler's failure; True when the record was quarantined (the handler call then returns)."""
        self.raised[id(exc)] = exc
        if self._quarantined(rec, exc):
            return True
        self.em.failure(exc, rec)
        if self.stop:
            self.stopped = True
        return False

    def _succeeded(self, rec: EventRecord, sc: RecordScope) -> None:
        if not sc.terminal:
            self.em.succeeded(rec)

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

    def _index(self) -> int:
        """The position of the record a sync processor is on: one success or failure entry per record before it."""
        p = self.processor
        return len(p.success_messages) + len(p.fail_messages)

    def wrap(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(handler)  # inspect.signature follows __wrapped__: Powertools sees the user's parameters
        def record_handler(*args: Any, **kwargs: Any) -> Any:
            if self.stopped:
                raise BatchStopped("an earlier record of this batch failed; not processed")
            rec, sc = self._start(args, kwargs, self._index())
            prev = _scope.enter(sc)
            try:
                try:
                    result = handler(*args, **kwargs)
                finally:
                    _scope.leave(prev)
            except Exception as exc:
                if self._failed(rec, exc):
                    return None
                raise
            self._succeeded(rec, sc)
            return result

        return record_handler

    def wrap_async(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(handler)
        async def record_handler(*args: Any, **kwargs: Any) -> Any:
            index = self.calls  # the tasks start in the records' order
            self.calls += 1
            rec, sc = self._start(args, kwargs, index)
            _scope.enter(sc)  # this task's own context: nothing to restore
            try:
                result = await handler(*args, **kwargs)
            except Exception as exc:
                if self._failed(rec, exc):
                    return None
                raise
            self._succeeded(rec, sc)
            return result

        return record_handler

    def failed_before_handler(self, before: list[Any]) -> None:
        """Records Powertools failed without calling the handler (its model did not validate them): ``received``
        and their failure, after the batch. ``before``: ``processor.exceptions`` before the call (a call that
        failed before processing leaves them in place)."""
        from aws_lambda_powertools.utilities.batch.exceptions import (
            SQSFifoCircuitBreakerError,
            SQSFifoMessageGroupCircuitBreakerError,
        )

        p = self.processor
        if len(p.exceptions) == len(before) and all(a is b for a, b in zip(p.exceptions, before, strict=True)):
            return
        not_started = (SQSFifoCircuitBreakerError, SQSFifoMessageGroupCircuitBreakerError, BatchStopped)
        for i, (info, msg) in enumerate(zip(p.exceptions, p.fail_messages, strict=False)):
            exc = info[1] if isinstance(info, tuple) and len(info) > 1 else None
            if (exc is not None and id(exc) in self.raised) or isinstance(exc, not_started):
                continue
            rec = self.record_of(msg)
            self.em.received(rec)
            if exc is None:
                self.em.permanent_failure(rec, error_code="ModelValidationError")
            else:
                self.em.failure(exc, rec)

    def count_failures(self, response: dict[str, Any]) -> None:
        """One batch_item_failure per item of Powertools' response."""
        by_id = {r.item_identifier: r for r in self.recs}
        msgs = list(self.processor.fail_messages)
        failed: list[Any] = []
        for i, item in enumerate(response.get("batchItemFailures", [])):
            ident = item.get("itemIdentifier") if isinstance(item, dict) else None
            rec = by_id.get(ident) if isinstance(ident, str) else None
            if rec is None and i < len(msgs):
                rec = self.record_of(msgs[i])
            failed.append(rec if rec is not None else ident)
        self.em.batch_item_failures(failed)


def process_partial_response(event: dict[str, Any], record_handler: Callable[..., Any], processor: Any,
                             context: Any = None, *, emitter: Emitter, quarantine: Quarantine | None = None,
                             stop_at_first_failure: bool = False) -> dict[str, Any]:
    """Powertools' ``process_partial_response`` with idemwatch outcomes; returns its ``{"batchItemFailures": [...]}``.

    Args:
        event: the Lambda event (SQS, Kinesis, DynamoDB Streams or Kafka batch).
        record_handler: called once per record exactly as Powertools calls it (``record`` and, if it takes it,
            ``lambda_context``); may use ``@idempotent_function`` over an instrumented persistence layer.
        processor: a Powertools ``BatchProcessor`` (or subclass, e.g. ``SqsFifoPartialProcessor``; sync; reused
            across invocations as Powertools allows). It is not modified.
        context: the Lambda context.
        emitter: the :class:`emitter.Emitter`. Outside ``@em.handler`` the call runs in its own
            ``em.invocation(context, event=event)`` (flushed at the end).
        quarantine: ``quarantine(record, exc)`` for permanent/poison failures (see module docstring).
        stop_at_first_failure: False (default, Powertools' behaviour for every source): every record is processed.
            True: the records after the first failure are not processed and are reported failed (module
            docstring: Lambda's checkpoint rule for streams).

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
    return _run(event, record_handler, processor, context, emitter, quarantine, bool(stop_at_first_failure),
                pt_process, False)


def async_process_partial_response(event: dict[str, Any], record_handler: Callable[..., Any], processor: Any,
                                   context: Any = None, *, emitter: Emitter,
                                   quarantine: Quarantine | None = None) -> dict[str, Any]:
    """Powertools' ``async_process_partial_response`` (an ``AsyncBatchProcessor`` running ``async def``
    record handlers concurrently) with idemwatch outcomes; returns its ``{"batchItemFailures": [...]}``.

    Same arguments and outcomes as :func:`process_partial_response`, without ``stop_at_first_failure`` (the
    records run concurrently). Called from a sync handler, as Powertools requires (it runs the event loop itself).

    Raises: what Powertools raises; IntegrationError for a processor that is not an ``AsyncBatchProcessor``.
    """
    from aws_lambda_powertools.utilities.batch import AsyncBatchProcessor
    from aws_lambda_powertools.utilities.batch import async_process_partial_response as pt_async

    if not isinstance(processor, AsyncBatchProcessor):
        raise IntegrationError(f"expected a Powertools AsyncBatchProcessor, got {type(processor).__name__}")
    return _run(event, record_handler, processor, context, emitter, quarantine, False, pt_async, True)


def _run(event: dict[str, Any], record_handler: Callable[..., Any], processor: Any, context: Any, emitter: Emitter,
         quarantine: Quarantine | None, stop_at_first_failure: bool, pt_process: Callable[..., Any],
         is_async: bool) -> dict[str, Any]:
    """Run Powertools' ``pt_process`` with the wrapped record handler, then count the batchItemFailures it returns."""
    if emitter._inv is None:
        with emitter.invocation(context, event=event):
            return _run(event, record_handler, processor, context, emitter, quarantine, stop_at_first_failure,
                        pt_process, is_async)
    run = _BatchRun(processor, emitter, emitter.adapt(event), quarantine, stop_at_first_failure)
    handler = run.wrap_async(record_handler) if is_async else run.wrap(record_handler)
    before = list(processor.exceptions)
    try:
        response: dict[str, Any] = pt_process(event=event, record_handler=handler, processor=processor,
                                              context=context)
    finally:
        run.failed_before_handler(before)
    run.count_failures(response)
    return response
