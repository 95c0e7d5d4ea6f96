"""Exceptions raised by the emitter.

By default the emitter never raises its own errors into a handler (bad input is dropped and reported in a
warning record). ``strict=True`` (for tests) raises :class:`EmfValidationError` instead.
:class:`TimeoutBudgetExceeded` is different: it is raised on purpose by ``Emitter.check_time_budget``.
"""

from __future__ import annotations


class EmitterError(Exception):
    """Base class of the emitter's exceptions."""


class EmfValidationError(EmitterError, ValueError):
    """Input violates an EMF/CloudWatch rule (strict mode only). ``code`` is a WarningCode value."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class TimeoutBudgetExceeded(EmitterError):
    """Remaining invocation time is below the budget a side effect needs; the side effect was refused.

    Retryable: the event source redelivers it. ``remaining_ms`` and ``required_ms`` are milliseconds.
    """

    retryable = True
    error_code = "TimeoutBudgetExceeded"

    def __init__(self, remaining_ms: float, required_ms: float) -> None:
        super().__init__(f"remaining time {remaining_ms:.0f} ms is below the required {required_ms:.0f} ms")
        self.remaining_ms = remaining_ms
        self.required_ms = required_ms


class SinkError(EmitterError):
    """A sink could not write (strict mode only; otherwise counted in ``Emitter.warnings``). A sink may raise it
    with ``lines_lost`` (int) set when only some of the lines it was given were lost; those are what is counted."""

    lines_lost: int | None = None
