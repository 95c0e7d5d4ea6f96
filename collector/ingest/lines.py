"""Splitting decoded bytes into lines, zero-copy where the input is clean.

The bulk formats (JSON lines, export-to-S3) are one event per ``\\n``-terminated line. A bare ``\\r``
is *not* a line break: the Lambda runtime joins the lines of a multi-line error message with ``\\r``
so that it stays one CloudWatch event (see ../shared/samples/powertools-real.jsonl, line 31), which is
why DuckDB's CSV reader (it breaks on ``\\r``) is not used here.

Fast path: ``\\n`` positions are found with numpy and the file bytes become an Arrow large-string
array without copying (each element still ends with its ``\\n``; SQL trims it). Slow path (only when
the bytes are not valid UTF-8 or a line exceeds the CloudWatch event size): per-line repair in Python,
every repaired line counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where an array is made: the plain-file fast path (store.py) reads no line through here,
    import numpy as np  # and collect_local imports them on a thread while its ingest runs (collect._import_ahead)
    import pyarrow as pa

from collector.ingest.constants import MAX_EVENT_BYTES, Reason
from collector.ingest.types import FileReport

_SCAN = 32 * 1024 * 1024  # bytes compared at a time (bounds the temporary bool array)

TEXT_PIECE_BYTES = 16 * 1024 * 1024
"""Bytes of a Lambda text file read and framed at a time (``EventStore`` holds one piece and its events)."""


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


def over_event_size(body_bytes: Any) -> Any:
    """True where a message of ``body_bytes`` UTF-8 bytes is longer than a CloudWatch event (``MAX_EVENT_BYTES``): such
    a line is cut to that size at a character boundary and counted ``event_truncated_over_1mb``. ``body_bytes`` (an int
    or a numpy array) counts the line without its terminator (``\\n``, or ``\\r\\n`` in a CRLF file; an unterminated
    last line has none). The one statement of the rule: ``line_table``, its repair and the plain-file pre-scan
    (``store._plain_lines_ok``) apply it."""
    return body_bytes > MAX_EVENT_BYTES


def line_table(data: bytes, report: FileReport, *, stream_truncated: bool = False) -> tuple[pa.Table, bool]:
    """Arrow table ``(i BIGINT, line LARGE_STRING)``: one row per line, in file order.

    ``line`` keeps its terminator (``\\n`` or ``\\r\\n``); blank lines are kept (SQL drops and counts
    them). Returns ``(table, crlf)``: ``crlf`` is True when at least half the lines end ``\\r\\n`` (a CRLF
    file: SQL strips the ``\\r`` and every such line is counted ``crlf_line_ending_stripped``); otherwise a
    ``\\r`` before ``\\n`` is message content (the Lambda runtime ends some messages with it) and is kept.
    Counted here: ``invalid_utf8_replaced``
    (lines with bytes that are not UTF-8, decoded with U+FFFD), ``event_truncated_over_1mb`` (lines
    longer than the CloudWatch event size, ``over_event_size``, cut at a character boundary), and when
    ``stream_truncated`` ``gzip_partial_last_line`` (the unterminated last line of a cut gzip stream, kept as it is).
    """
    import numpy as np
    import pyarrow as pa

    n_bytes = len(data)
    nl = newline_positions(data)
    starts = np.empty(len(nl) + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:] = nl + 1
    if starts[-1] == n_bytes:  # data ends with "\n": no unterminated tail
        offsets = starts
    else:
        offsets = np.append(starts, n_bytes)
        if stream_truncated:
            report.count(Reason.GZIP_TRUNCATED)
    n = len(offsets) - 1
    if n <= 0:
        return pa.table({"i": pa.array([], pa.int64()), "line": pa.array([], pa.large_string())}), False
    # cr_before_nl[k]: the k-th "\n" follows a "\r" (line k ends "\r\n"; lines 0..len(nl)-1 are the terminated ones)
    cr_before_nl = np.zeros(len(nl), dtype=bool)
    if len(nl):
        inner = nl > 0
        cr_before_nl[inner] = np.frombuffer(data, np.uint8)[nl[inner] - 1] == 13
    n_crlf = int(np.count_nonzero(cr_before_nl))
    crlf = n_crlf * 2 >= n and n_crlf > 0
    if crlf:
        report.count(Reason.CRLF, n_crlf)
    body = np.diff(offsets)  # each line's bytes without its terminator
    body[:len(nl)] -= 1 + (cr_before_nl if crlf else 0)
    arr = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    over = over_event_size(body)
    clean = not bool(over.any())
    if clean:
        try:
            arr.validate(full=True)  # UTF-8 check of every element
        except pa.ArrowInvalid:
            clean = False
    if not clean:
        arr = _repaired(data, offsets, body, report)
    # from the buffer: pa.array(ndarray) imports pandas (0.17 s) to check for its types
    i = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(np.arange(n, dtype=np.int64))])
    return pa.table({"i": i, "line": arr}), crlf


def _repaired(data: bytes, offsets: np.ndarray, body: np.ndarray, report: FileReport) -> pa.Array:
    """The lines of ``data`` (``offsets``: n + 1 line bounds; ``body``: each line's bytes without its terminator)
    decoded with U+FFFD for invalid bytes and cut to the event size (the terminator kept after the cut), counted."""
    import pyarrow as pa

    out: list[str] = []
    bad = cut = 0
    mv = memoryview(data)
    for a, b, m in zip(offsets[:-1].tolist(), offsets[1:].tolist(), body.tolist(), strict=True):
        raw = mv[a:a + m]
        replaced = False
        try:
            text = str(raw, "utf-8")
        except UnicodeDecodeError:
            text = str(raw, "utf-8", "replace")
            replaced = True
            bad += 1
        if over_event_size(m) or replaced:  # U+FFFD is 3 bytes: a repaired message may have grown past the limit
            enc = text.encode("utf-8")
            if over_event_size(len(enc)):
                text = enc[:MAX_EVENT_BYTES].decode("utf-8", "ignore")
                cut += 1
        out.append(text + str(mv[a + m:b], "ascii"))  # the terminator: "\n" or "\r\n"
    report.count(Reason.INVALID_UTF8, bad)
    report.count(Reason.TRUNCATED_OVER_1MB, cut)
    return pa.array(out, pa.large_string())


def decode_text(data: bytes, report: FileReport) -> str:
    """Whole-file UTF-8 decode for the small irregular formats; lines with invalid bytes are decoded
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


def clip_message(msg: str, report: FileReport) -> str:
    """``msg`` cut to the CloudWatch event size (UTF-8 bytes) when longer; counted."""
    if len(msg) * 4 <= MAX_EVENT_BYTES:
        return msg
    enc = msg.encode("utf-8")
    if len(enc) <= MAX_EVENT_BYTES:
        return msg
    report.count(Reason.TRUNCATED_OVER_1MB)
    return enc[:MAX_EVENT_BYTES].decode("utf-8", "ignore")
