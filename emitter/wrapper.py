"""The handler wrapper and the invocation scope: what ``@em.handler`` and ``with em.invocation(...)`` do.

At invocation start: capture the Lambda context (request id, function name, remaining time), detect the event
source, decide cold start (first invocation through the Emitter, except provisioned concurrency:
https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html ``AWS_LAMBDA_INITIALIZATION_TYPE``) and
write a ``cold_start`` record. On every exit path (return, exception, async completion): flush the aggregated EMF
documents. The handler's result is returned untouched and the emitter's own errors never reach it (``strict``
raises instead, for tests).
"""

from __future__ import annotations

import functools
import os

from emitter import constants as C
from emitter import emf
from emitter.adapters import detect_source
from emitter.aggregate import MetricAggregator
from emitter.classify import exception_outcome, recorded_as
from emitter.compact_json import dumps as _dumps
from emitter.constants import DEFAULT_OPERATION
from emitter.context import InvocationInfo, powertools_logger_correlation
from emitter.contract import Dimension, LogKey, Outcome
from emitter.log_records import record_head
from emitter.output import K_DROPPED, Problems

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType
    from typing import Any

    from emitter.core import Emitter
    from emitter.types import Classification, EventRecord

_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE, without importing inspect (a module a cold start does not need)


class InvocationScope:
    """Context manager returned by :meth:`Emitter.invocation`."""

    __slots__ = ("_cold", "_context", "_em", "_event", "_operation", "_prev")

    def __init__(self, em: InvocationLifecycle, context: Any, operation: str | None, event: Any, cold_start: bool | None) -> None:
        self._em, self._context, self._operation, self._event, self._cold = em, context, operation, event, cold_start
        self._prev: InvocationInfo | None = None

    def __enter__(self) -> Emitter:
        self._prev = self._em._begin(self._context, self._operation, self._event, self._cold)
        return self._em  # type: ignore[return-value]  # always an Emitter (the one subclass of the layers)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is not None:
            self._em._escaped(exc)
        self._em._end(self._prev, failed=exc_type is not None)

    async def __aenter__(self) -> Emitter:
        return self.__enter__()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.__exit__(exc_type, exc, tb)


class InvocationLifecycle(MetricAggregator):
    """Emitter layer 4: the handler decorator, the invocation scope, cold start and remaining time."""

    _cold: bool
    _valid_ops: set[str]
    _filter_warned: bool
    _logger_explicit: bool
    service: str
    correlation_id_provider: Callable[[], Any] | None

    if TYPE_CHECKING:  # defined by Emitter (the cold_start record, an exception's outcome)
        def record_outcome(self, outcome: Outcome | str, /, record: EventRecord | str | None = None,
                           key: str | None = None, **props: Any) -> None: ...

        def failure(self, exc: BaseException, record: EventRecord | None = None, key: str | None = None,
                    **props: Any) -> Classification: ...

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
                    with InvocationScope(self, context, op, event, None):
                        return await func(event, context, *args, **kwargs)

                wrapper: Callable[..., Any] = async_wrapper
            else:

                def wrapper(event: Any, context: Any = None, *args: Any, **kwargs: Any) -> Any:
                    prev = self._begin(context, op, event, None)
                    failed = True
                    pending = False
                    try:
                        result = func(event, context, *args, **kwargs)
                        failed = False
                        if hasattr(type(result), "__await__"):  # an async handler behind another decorator
                            pending = True
                            return self._finish_awaitable(result, prev)
                        return result
                    except BaseException as exc:
                        self._escaped(exc)
                        raise
                    finally:
                        if not pending:
                            self._end(prev, failed)

            return functools.update_wrapper(wrapper, func)

        return decorate(fn) if fn is not None else decorate

    async def _finish_awaitable(self, awaitable: Any, prev: InvocationInfo | None) -> Any:
        failed = True
        try:
            result = await awaitable
            failed = False
            return result
        except BaseException as exc:
            self._escaped(exc)
            raise
        finally:
            self._end(prev, failed)

    def invocation(self, context: Any = None, operation: str | None = None, event: Any = None,
                   cold_start: bool | None = None) -> InvocationScope:
        """Context manager (sync and async) doing what :meth:`handler` does around a block.

        ``event`` (optional) is used only to detect the event source. ``cold_start`` overrides cold-start detection
        (default: the first invocation through this Emitter is cold, except provisioned-concurrency environments).
        """
        return InvocationScope(self, context, operation, event, cold_start)

    def _begin(self, context: Any, operation: str | None, event: Any, cold_start: bool | None) -> InvocationInfo | None:
        """Start an invocation: capture the context, decide cold start, write the ``cold_start`` record. Returns the
        invocation it replaces (restored by :meth:`_end`: scopes nest). Never raises (``strict``: raises)."""
        problems = Problems()
        try:
            op: str | None = operation if operation is not None else self._default_operation
            if op not in self._valid_ops:
                if reason := emf.check_dimension_value(op):
                    problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{Dimension.OPERATION.value}",
                                 reason)
                    op = None
                elif op is not None and len(self._valid_ops) < 256:
                    self._valid_ops.add(op)
            info = InvocationInfo(context, self.clock, self.clock(), op,
                                  detect_source(event) if event is not None else None)
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
        if self.correlation_id_provider is None and not self._logger_explicit:
            # Powertools Logger in use and not told otherwise (use_logger): its correlation id, found by itself
            self.correlation_id_provider = powertools_logger_correlation(self.service)
        self._report(problems)
        if info.cold_start:
            if self._emf_level is not None and not self._filter_warned:
                self._warn_log_level_filtered()
            self.record_outcome(Outcome.COLD_START, remaining_time_ms=info.remaining_ms())
        return prev

    def _warn_log_level_filtered(self) -> None:
        """Once per Emitter, at cold start: Lambda's application log-level filter (JSON format, level above INFO)
        drops every line whose ``level`` is below it, and INFO outcome records are such lines. The EMF documents
        carry the filter's level and survive; the INFO outcome records do not, so log-derived counts (``collect``)
        will be lower than the metrics. Written at the filter's own level so it survives the filter."""
        self._filter_warned = True
        level = self._emf_level
        self._count_warning(C.WarningCode.LOG_LEVEL_FILTERED, 1)
        inv = self._inv
        static = inv.static_json if inv is not None else self._idle_static
        f = {LogKey.WARNING_CODE.value: C.WarningCode.LOG_LEVEL_FILTERED,
             "lambda_log_level": level,
             K_DROPPED: [{"code": C.WarningCode.LOG_LEVEL_FILTERED, "element": "records",
                          "reason": f"AWS_LAMBDA_LOG_LEVEL={level} with the JSON log format drops INFO "
                                    "outcome records; EMF metrics are kept (written with this level)"}]}
        head = record_head(str(level), "idemwatch outcome records below the Lambda log level are filtered")
        self._write([self._line(head, None, static, _dumps(f)[1:-1])])

    def _escaped(self, exc: BaseException) -> None:
        """An exception leaving the handler: if it means an idempotency outcome (contract.EXCEPTION_OUTCOME, e.g.
        IdempotencyAlreadyInProgressError out of ``@idempotent``) and nothing recorded it yet, record that outcome.
        Other exceptions are the handler's business (they are not classified here). Never raises."""
        try:
            o = exception_outcome(exc)
            if o is not None and not recorded_as(exc, o.value):
                self.failure(exc)
        except Exception:
            self._count_warning(C.WarningCode.INTERNAL_ERROR, 1)

    def _end(self, prev: InvocationInfo | None, failed: bool) -> None:
        try:
            self.flush()
        except Exception:
            if self.strict and not failed:
                raise
        finally:
            self._inv = prev  # one reference store: atomic, no lock needed

    @property
    def cold_start(self) -> bool | None:
        """Whether the current invocation is a cold start (None outside an invocation)."""
        inv = self._inv
        return None if inv is None else inv.cold_start

    def remaining_time_ms(self) -> float | None:
        """Milliseconds left in the current invocation (from the context); None if unknown."""
        inv = self._inv
        return None if inv is None else inv.remaining_ms()

