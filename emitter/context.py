"""Invocation context: what the emitter reads from a Lambda context object (or a stand-in).

Accepted contexts:
- a real ``LambdaContext`` or any object with ``aws_request_id``, ``function_name``,
  ``get_remaining_time_in_millis()``, ``invoked_function_arn`` and ``memory_limit_in_mb`` (each optional; the last two
  become ``function_arn`` / ``function_memory_size`` like Powertools Logger writes them);
- a dict: ``aws_request_id`` (or ``request_id``), ``function_name``, and either ``remaining_time_ms`` (remaining at
  invocation start; decreases with the emitter clock) or ``deadline_ms`` (epoch ms; remaining = deadline - clock);
- None (tests, containers): no request id, remaining time unknown.
Reading a context never raises: a failing attribute is treated as missing.
"""

from __future__ import annotations

import os
import sys
import time

from emitter.compact_json import esc as _esc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _get(ctx: Any, *names: str) -> Any:
    for name in names:
        try:
            v = ctx.get(name) if isinstance(ctx, dict) else getattr(ctx, name, None)
        except Exception:
            v = None
        if v is not None:
            return v
    return None


def _str(v: Any) -> str | None:
    """A context value as a non-empty str: a str (a subclass read as the str it holds), an int as its digits.
    Read through ``type(v)``: a hostile object's own methods are never called."""
    t = type(v)
    if issubclass(t, str):
        return str.__str__(v) or None
    if issubclass(t, int) and not issubclass(t, bool):
        v = int.__index__(v)
        return int.__repr__(v) if -(10**18) < v < 10**18 else None
    return None


class InvocationInfo:
    """Context values captured at invocation start. ``remaining_ms()`` gives milliseconds left (None if unknown)."""

    __slots__ = (
        "_clock",
        "_context",
        "_remaining",
        "cold_start",
        "emf_props_json",
        "event_source",
        "function_arn",
        "function_memory_size",
        "function_name",
        "operation",
        "request_id",
        "request_id_json",
        "start_ms",
        "static_json",
        "xray_trace_id",
    )

    def __init__(self, context: Any, clock: Callable[[], int], start_ms: int, operation: str | None = None,
                 event_source: Any = None) -> None:
        self.start_ms = start_ms
        rid = _get(context, "aws_request_id", "request_id")
        fname = _get(context, "function_name")
        arn = mem = None
        if not issubclass(type(context), dict):  # a LambdaContext's keys as Powertools Logger writes them
            arn = _get(context, "invoked_function_arn")
            mem = _get(context, "memory_limit_in_mb")
        self.function_arn = arn if type(arn) is str and arn and len(arn) <= 2048 else None
        self.function_memory_size = _memory(mem)
        self.request_id = _str(rid)
        # its JSON text, escaped once for the log records' and the EMF documents' invocation members
        self.request_id_json = None if self.request_id is None else _esc(self.request_id)
        self.function_name = _str(fname) or os.environ.get("AWS_LAMBDA_FUNCTION_NAME") or None
        # the remaining-time source is looked up when first asked for (most invocations never ask)
        self._context = context
        self._clock = clock
        self._remaining = _UNRESOLVED
        self.cold_start = False
        self.operation = operation
        self.event_source = event_source
        self.xray_trace_id = _xray_root(os.environ.get(ENV_TRACE_ID))
        self.static_json = ""
        self.emf_props_json: str | None = None

    def remaining_ms(self) -> float | None:
        fn = self._remaining
        if fn is _UNRESOLVED:
            try:
                fn = _remaining_fn(self._context, self._clock, self.start_ms)
            except Exception:  # noqa: BLE001 - a failing attribute is a missing one
                fn = None
            self._remaining = fn
        if fn is None:
            return None
        try:
            v = fn()
        except Exception:  # noqa: BLE001 - a failing context: remaining time unknown
            return None
        t = type(v)
        if issubclass(t, bool) or not issubclass(t, (int, float)):
            return None
        v = int.__index__(v) if issubclass(t, int) else float.__float__(v)
        return None if v != v else max(0, v)


_UNRESOLVED: Any = object()


def _memory(v: Any) -> int | None:
    """``memory_limit_in_mb`` as an int (the runtime gives an int or a digit string), None if absent or odd."""
    if type(v) is int:
        return v if 0 < v < 1 << 31 else None
    if type(v) is str and v.isascii() and v.isdigit() and len(v) <= 9:
        return int(v)
    return None


def default_clock() -> int:
    """The emitter's default clock: epoch milliseconds (int)."""
    return time.time_ns() // 1_000_000


ENV_TRACE_ID = "_X_AMZN_TRACE_ID"
"""The X-Ray trace header Lambda sets for each invocation (``Root=1-...;Parent=...;Sampled=0|1``)."""


def _remaining_fn(context: Any, clock: Callable[[], int], start_ms: int) -> Callable[[], Any] | None:
    if context is None:
        return None
    if issubclass(type(context), dict):
        return _dict_remaining(context, clock, start_ms)
    fn = getattr(context, "get_remaining_time_in_millis", None)
    return fn if callable(fn) else None


def _dict_remaining(context: dict[str, Any], clock: Callable[[], int], start_ms: int) -> Callable[[], Any] | None:
    """The remaining-time function of a dict context (its own function: the closures' cells are made only here)."""
    deadline = context.get("deadline_ms")
    if isinstance(deadline, (int, float)) and not isinstance(deadline, bool):
        return lambda: deadline - clock()
    rem = context.get("remaining_time_ms")
    if isinstance(rem, (int, float)) and not isinstance(rem, bool):
        return lambda: rem - (clock() - start_ms)
    return None


_PT_LOGGER_MODULE = "aws_lambda_powertools.logging.logger"
_PT_HANDLER_ATTR = "powertools_handler"  # aws_lambda_powertools.logging.constants.LOGGER_ATTRIBUTE_POWERTOOLS_HANDLER


def powertools_logger_correlation(service: str) -> Callable[[], Any] | None:
    """The correlation id source of an active Powertools Logger for ``service``, or None; never raises and never
    imports Powertools (only a Logger already made can be found).

    Powertools ``Logger(service=...)`` configures the standard-library logger named after its service and marks it
    with ``powertools_handler`` (the handler whose formatter holds the log keys, ``Logger._init_logger``);
    ``Logger.get_correlation_id()`` is ``registered_formatter.log_format.get("correlation_id")``. The returned
    function reads the same, when called (``set_correlation_id`` and ``inject_lambda_context`` change it, and
    ``clear_state`` replaces the dict). Only the logger named exactly ``service`` is looked at: no scan of every
    logger per invocation."""
    try:
        if sys.modules.get(_PT_LOGGER_MODULE) is None:
            return None
        logging = sys.modules.get("logging")
        if logging is None:
            return None
        std = logging.Logger.manager.loggerDict.get(service)
        handler = getattr(std, _PT_HANDLER_ATTR, None) if std is not None else None
        if handler is None or not isinstance(getattr(handler, "formatter", None), logging.Formatter):
            return None
    except Exception:  # noqa: BLE001 - a hostile logger or handler: no correlation id, never an error
        return None

    def correlation_id() -> Any:
        log_format = getattr(handler.formatter, "log_format", None)
        return log_format.get("correlation_id") if isinstance(log_format, dict) else None

    return correlation_id


def _xray_root(header: str | None) -> str | None:
    """``Root=1-5759e988-bd862e3fe1be46a994272793;Parent=...;Sampled=1`` -> ``1-5759e988-bd862e3fe1be46a994272793``."""
    if not header:
        return None
    for part in header.split(";"):
        if part.startswith("Root="):
            return part[5:] or None
    return None
