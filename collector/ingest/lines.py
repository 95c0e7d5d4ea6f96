"""Splitting decoded bytes into lines, zero-copy where the input is clean.

The line formats (``line_formats``) read ``\\n``-terminated lines. A bare ``\\r`` is *not* a line break: the
Lambda runtime joins the lines of a multi-line error message with ``\\r`` so that it stays one CloudWatch event
(see ../shared/samples/powertools-real.jsonl, line 31), which is why DuckDB's CSV reader (it breaks on ``\\r``)
reads only files without one (``store._plain_line_count``).

``\\n`` positions are found with numpy and the bytes become an Arrow large-string array without copying (each
element still ends with its ``\\n``; SQL trims it). Only lines that are not valid UTF-8 are decoded in Python,
every one counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where an array is made: the plain-file fast path (store.py) reads no line through here,
    import numpy as np  # and collect_local imports them on a thread while its ingest runs (collect._import_ahead)
    import pyarrow as pa

from collector.ingest.constants import Reason
from collector.ingest.types import FileReport

_SCAN = 32 * 1024 * 1024  # bytes compared at a time (bounds the temporary bool array)

TEXT_PIECE_BYTES = 16 * 1024 * 1024
"""Bytes of a source read, split into lines and handed to DuckDB at a time (``EventStore`` holds one piece)."""
DOCUMENT_PIECE_BYTES = 4 * 1024 * 1024
"""Bytes of a filter-log-events or CSV document parsed at a time: its events become Python objects, several times the
bytes they came from, so the piece is smaller than a line piece."""


def byte_pieces(read: Callable[[int], bytes], size: int) -> Iterator[bytes]:
    """The bytes ``read(n)`` returns until it returns ``b""``, regrouped into pieces of about ``size`` bytes that each
    end just after a ``\\n`` (the last one may not: an unterminated last line). A line longer than ``size`` makes
    its piece longer."""
    rest = b""
    while block := read(size):
        buf = rest + block
        cut = buf.rfind(b"\n")
        if cut < 0:
            rest = buf
            continue
        yield buf[:cut + 1]
        rest = buf[cut + 1:]
    if rest:
        yield rest


def newline_positions(data: bytes) -> np.ndarray:
    """Offsets of every ``\\n`` byte in ``data`` (int64, ascending)."""
    import numpy as np

    arr = np.frombuffer(data, dtype=np.uint8)
    parts = [np.flatnonzero(arr[i:i + _SCAN] == 10) + i for i in range(0, len(arr), _SCAN)]
    return np.concatenate(parts).astype(np.int64, copy=False) if parts else np.empty(0, np.int64)


def line_table(data: bytes, report: FileReport, first: int = 0) -> tuple[pa.Table, int, int]:
    """Arrow table ``(i BIGINT, line LARGE_STRING)`` of the lines of ``data`` (bytes cut at a ``\\n``, or the end of
    a source), one row per line in order, ``i`` counted from ``first``; returns ``(table, lines, crlf_lines)``.

    ``line`` keeps its terminator (``\\n`` or ``\\r\\n``: whether the source is a CRLF file is decided over all of
    it, ``line_formats.trimmed`` removes it); blank lines are kept (the framing drops and counts them). Zero-copy
    over ``data`` unless a line is not valid UTF-8: such lines are decoded with U+FFFD, counted
    ``invalid_utf8_replaced``.
    """
    import numpy as np
    import pyarrow as pa

    n_bytes = len(data)
    nl = newline_positions(data)
    starts = np.empty(len(nl) + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:] = nl + 1
    offsets = starts if starts[-1] == n_bytes else np.append(starts, n_bytes)
    n = len(offsets) - 1
    if n <= 0:
        return pa.table({"i": pa.array([], pa.int64()), "line": pa.array([], pa.large_string())}), 0, 0
    n_crlf = 0
    if len(nl):
        inner = nl[nl > 0]
        n_crlf = int(np.count_nonzero(np.frombuffer(data, np.uint8)[inner - 1] == 13))
    arr = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    try:
        arr.validate(full=True)  # UTF-8 check of every element
    except pa.ArrowInvalid:
        arr = _repaired(data, offsets, report)
    # from the buffer: pa.array(ndarray) imports pandas to check for its types
    i = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(np.arange(first, first + n, dtype=np.int64))])
    return pa.table({"i": i, "line": arr}), n, n_crlf


def _repaired(data: bytes, offsets: np.ndarray, report: FileReport) -> pa.Array:
    """The lines of ``data`` (``offsets``: n + 1 line bounds) decoded with U+FFFD for invalid bytes, counted."""
    import pyarrow as pa

    out: list[str] = []
    bad = 0
    mv = memoryview(data)
    for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True):
        raw = mv[a:b]
        try:
            out.append(str(raw, "utf-8"))
        except UnicodeDecodeError:
            out.append(str(raw, "utf-8", "replace"))
            bad += 1
    report.count(Reason.INVALID_UTF8, bad)
    return pa.array(out, pa.large_string())


def decode_text(data: bytes, report: FileReport) -> str:
    """UTF-8 decode of ``data`` for the document formats (console CSV); lines with invalid bytes are decoded
    with U+FFFD and counted (``invalid_utf8_replaced``)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    parts = []
    bad = 0
    for raw in data.split(b"\n"):
        try:
            parts.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            parts.append(raw.decode("utf-8", "replace"))
            bad += 1
    report.count(Reason.INVALID_UTF8, bad)
    return "\n".join(parts)
