"""Fingerprints of source files for incremental collection: SHA-256 of a prefix, and whether a file can grow by
appending (a line-oriented plain-text format, not gzip nor a JSON document)."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["APPENDABLE_SUFFIXES", "appendable", "sha256_file"]

APPENDABLE_SUFFIXES = frozenset({".log", ".jsonl", ".ndjson", ".txt", ""})
_CHUNK = 1 << 20


def sha256_file(path: Path, limit: int | None = None) -> str:
    """Hex SHA-256 of the first ``limit`` bytes of ``path`` (all of it when None); reads 1 MiB at a time.
    Raises OSError when the file cannot be read."""
    h = hashlib.sha256()
    remaining = limit
    with open(path, "rb") as fh:
        while remaining is None or remaining > 0:
            chunk = fh.read(_CHUNK if remaining is None else min(_CHUNK, remaining))
            if not chunk:
                break
            h.update(chunk)
            if remaining is not None:
                remaining -= len(chunk)
    return h.hexdigest()


def appendable(path: Path) -> bool:
    """True for a plain line-oriented log file (suffix in ``APPENDABLE_SUFFIXES``, not gzip, not a
    filter-log-events JSON document), whose appended bytes are new events."""
    if path.suffix.lower() not in APPENDABLE_SUFFIXES:
        return False
    with open(path, "rb") as fh:
        head = fh.read(64).lstrip()
    return not head.startswith(b"\x1f\x8b") and not head.startswith(b'{"events"')
