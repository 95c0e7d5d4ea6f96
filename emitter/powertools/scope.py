"""The batch record being processed in this context (thread, or asyncio task: a ContextVar, so the records an
``AsyncBatchProcessor`` runs concurrently on one thread each keep their own), shared by the batch integration and
instrumented layers."""

from __future__ import annotations

import contextvars

from emitter.powertools.types import RecordScope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from emitter.types import EventRecord

_current: contextvars.ContextVar[RecordScope | None] = contextvars.ContextVar("idemwatch_record_scope", default=None)


def current() -> RecordScope | None:
    """The RecordScope of the record this context is processing, or None."""
    return _current.get()


def enter(scope: RecordScope) -> RecordScope | None:
    """Make ``scope`` current; returns the previous one (restore it with :func:`leave`)."""
    prev = _current.get()
    _current.set(scope)
    return prev


def leave(prev: RecordScope | None) -> None:
    _current.set(prev)


class record_scope:  # lower case: used like a function, ``with record_scope(rec):``
    """``with record_scope(rec): ...``: the outcomes instrumented persistence layers record in this context (thread
    or asyncio task) inside the block attach to ``rec`` (its event id, event source, attempt, correlation id). Use it around an
    ``@idempotent_function`` call in a single-event handler (API Gateway, EventBridge); the batch integration does
    it for every record. ``.terminal`` tells whether the layer recorded the call's final outcome."""

    __slots__ = ("_prev", "scope")

    def __init__(self, record: EventRecord | None) -> None:
        self.scope = RecordScope(record)
        self._prev: RecordScope | None = None

    def __enter__(self) -> RecordScope:
        self._prev = enter(self.scope)
        return self.scope

    def __exit__(self, *exc: object) -> None:
        leave(self._prev)
