"""The batch record being processed on this thread, shared by the batch integration and instrumented layers."""

from __future__ import annotations

import threading

from emitter.powertools.types import RecordScope

_local = threading.local()


def current() -> RecordScope | None:
    """The RecordScope of the record this thread is processing, or None."""
    return getattr(_local, "scope", None)


def enter(scope: RecordScope) -> RecordScope | None:
    """Make ``scope`` current; returns the previous one (restore it with :func:`leave`)."""
    prev = getattr(_local, "scope", None)
    _local.scope = scope
    return prev


def leave(prev: RecordScope | None) -> None:
    _local.scope = prev
