"""Fingerprints of source files for incremental collection: SHA-256 of a prefix, and whether a file can grow by
appending (a line-oriented plain-text format, not gzip nor a JSON document)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["APPENDABLE_SUFFIXES", "appendable", "sha256_file"]

APPENDABLE_SUFFIXES = frozenset({".log", ".jsonl", ".ndjson", ".txt", ""})
_CHUNK = 2 << 20
"""Bytes read and hashed per step: hashlib hashes a buffer this large without the GIL, so a hash on a thread runs
beside the ingest's own line check (``collect._ingest_sources``) instead of waiting for the GIL after every small
piece; and the buffer stays in the CPU's cache between the read that fills it and the hash that reads it."""


def sha256_file(path: Path, limit: int | None = None) -> str:
    """Hex SHA-256 of the first ``limit`` bytes of ``path`` (all of it when None); reads up to ``_CHUNK`` bytes at a
    time into one reused buffer no larger than the bytes to hash (memory: that buffer). Raises OSError when the file
    cannot be read."""
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as fh:
        size = os.fstat(fh.fileno()).st_size if limit is None else limit
        buf = bytearray(max(1, min(_CHUNK, size)))
        view = memoryview(buf)
        remaining = limit
        while remaining is None or remaining > 0:
            n = fh.readinto(view if remaining is None else view[:min(len(buf), remaining)])
            if not n:
                break
            h.update(view[:n])
            if remaining is not None:
                remaining -= n
    return h.hexdigest()


def appendable(path: Path) -> bool:
    """True for a plain line-oriented log file (suffix in ``APPENDABLE_SUFFIXES``, not gzip, not a
    filter-log-events JSON document), whose appended bytes are new events."""
    if path.suffix.lower() not in APPENDABLE_SUFFIXES:
        return False
    with open(path, "rb") as fh:
        head = fh.read(64).lstrip()
    return not head.startswith(b"\x1f\x8b") and not head.startswith(b'{"events"')
