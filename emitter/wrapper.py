"""The handler wrapper and the invocation scope: what ``@em.handler`` and ``with em.invocation(...)`` do.

At invocation start: capture the Lambda context (request id, function name, remaining time), detect the event
source, decide cold start (first invocation through the Emitter, except provisioned concurrency:
https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html ``AWS_LAMBDA_INITIALIZATION_TYPE``) and
write a ``cold_start`` record. On every exit path (return, exception, async completion): flush the aggregated EMF
documents. The handler's result is returned untouched and the emitter's own errors never reach it (``strict``
raises instead, for tests).
"""

from __future__ import annotations

import os

from emitter import constants as C
from emitter import emf
from emitter import outcomes as _o
from emitter.adapters import detect_source
from emitter.aggregate import MetricAggregator
from emitter.constants import DEFAULT_OPERATION
from emitter.context import InvocationInfo, _default_clock, _time_ns, powertools_logger_correlation
from emitter.contract import Outcome
from emitter.output import Problems

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from emitter.core import Emitter
    from emitter.types import EventRecord

_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE, without importing inspect
_new = object.__new__
# Plain-str copies of contract values (emitter.outcomes): module globals, one dict lookup each.
_OPERATION = _o.OPERATION


class InvocationScope:
    """Context manager returned by :meth:`Emitter.invocation`."""

    __slots__ = ("_cold", "_context", "_em", "_event", "_operation", "_prev")

    def __init__(self, em: InvocationLifecycle, context: Any, operation: str | None, event: Any, cold_start: bool | None) -> None:
        self._em, self._context, self._operation, self._event, self._cold = em, context, operation, event, cold_start
        self._prev: InvocationInfo | None = None

    def __enter__(self) -> Emitter:
        self._prev = self._em._begin(self._context, self._operation, self._event, self._cold)
        return self._em  # type: ignore[return-value]  # always an Emitter (the one subclass of the layers)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc is not None:
            self._em._escaped(exc)  # type: ignore[arg-type]
        self._em._end(self._prev, failed=exc_type is not None)

    async def __aenter__(self) -> Emitter:
        return self.__enter__()

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.__exit__(exc_type, exc, tb)


class InvocationLifecycle(MetricAggregator):
    """Emitter layer 4: the handler decorator, the invocation scope, cold start and remaining time."""

    _cold: bool
    _valid_ops: set[str]
    _filter_warned: bool
    _logger_explicit: bool
    service: str
    correlation_id_provider: Callable[[], Any] | None

    if TYPE_CHECKING:  # defined by Emitter (the cold_start record)
        def record_outcome(self, outcome: Outcome | str, /, record: EventRecord | str | None = None,
                           key: str | None = None, **props: Any) -> None: ...

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
                    prev = self._begin(context, op, event, None)  # inlined `with invocation()`: per-call cost
                    failed = True
                    pending = False
                    try:
                        result = func(event, context, *args, **kwargs) if args or kwargs else func(event, context)
                        failed = False
                        # an async handler hidden behind another decorator (a plain dict or None, the usual
                        # results, has no __await__: not looked up)
                        if result is not None and result.__class__ is not dict and hasattr(result, "__await__"):
                            pending = True
                            return self._finish_awaitable(result, prev)
                        return result
                    except BaseException as exc:
                        self._escaped(exc)
                        raise
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
        problems = None
        try:
            clock = self.clock
            now = _time_ns() // 1_000_000 if clock is _default_clock else clock()  # _default_clock inlined
            op: str | None = operation if operation is not None else self._default_operation
            if op not in self._valid_ops:
                if reason := emf.check_dimension_value(op):
                    problems = Problems()
                    problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{_OPERATION}", reason)
                    op = None
                elif len(self._valid_ops) < 256:
                    self._valid_ops.add(op)  # type: ignore[arg-type]  # checked: a valid str
            # InvocationInfo(...) without the class call: CPython 3.11 does not specialize calls of a class with a
            # Python __init__ (about 0.6 us each); a method call is specialized
            info = _new(InvocationInfo)
            info.__init__(context, clock, now, op, detect_source(event) if event is not None else None)  # type: ignore[misc]
            self._lock.acquire()  # not `with`: a with-block on a C lock costs ~0.4 us more on CPython 3.11
            try:
                if cold_start is None:
                    cold = self._cold and os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") != "provisioned-concurrency"
                else:
                    cold = bool(cold_start)
                self._cold = False
                info.cold_start = cold
                info.static_json = self._static_json(info, op)
                prev, self._inv = self._inv, info
            finally:
                self._lock.release()
        except Exception as exc:  # never break the handler
            if self.strict:
                raise
            self._count_warning(C.WarningCode.INTERNAL_ERROR, 1)
            self._stderr(f"idemwatch: invocation start failed: {type(exc).__name__}")
            return self._inv
        if self.correlation_id_provider is None and not self._logger_explicit:
            # Powertools Logger in use and not told otherwise (use_logger): its correlation id, found by itself
            self.correlation_id_provider = powertools_logger_correlation(self.service)
        if problems:
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
        f = {_o.K_WARNING_CODE: C.WarningCode.LOG_LEVEL_FILTERED,
             "lambda_log_level": level,
             "idemwatch_dropped": [{"code": C.WarningCode.LOG_LEVEL_FILTERED, "element": "records",
                                    "reason": f"AWS_LAMBDA_LOG_LEVEL={level} with the JSON log format drops INFO "
                                              "outcome records; EMF metrics are kept (written with this level)"}]}
        self._write([self._line(level, "idemwatch outcome records below the Lambda log level are filtered",  # type: ignore[arg-type]
                                static, f)])

    def _escaped(self, exc: BaseException) -> None:
        """An exception leaving the handler: if it means an idempotency outcome (contract.EXCEPTION_OUTCOME, e.g.
        IdempotencyAlreadyInProgressError out of ``@idempotent``) and nothing recorded it yet, record that outcome.
        Other exceptions are the handler's business (they are not classified here). Never raises."""
        try:
            from emitter.core import _recorded_as, exception_outcome

            o = exception_outcome(exc)
            if o is not None and not _recorded_as(exc, o.value):
                self.failure(exc)  # type: ignore[attr-defined]
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

