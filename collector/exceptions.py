"""Errors of the collector (local and CloudWatch). Each carries a one-line message fit for the CLI (no traceback)."""

from __future__ import annotations

__all__ = ["CollectError", "CollectLockedError", "MissingQueryError", "OutOfMemoryError"]


class CollectError(Exception):
    """Base class: a source or an option cannot be collected; ``str(exc)`` is a one-line explanation."""


class MissingQueryError(CollectError):
    """A standard table has no query file (``collector/queries/<table>.insights``), or the name is no standard table."""


class CollectLockedError(CollectError):
    """Another ``collect local`` holds the lock of the same ``--out`` directory."""


class OutOfMemoryError(CollectError):
    """DuckDB needed more memory than its memory limit (``collect local --memory-limit`` / ``IDEMWATCH_MEMORY_LIMIT``)
    allows; the message names what it was doing, DuckDB's own reason, and the knob to raise."""
