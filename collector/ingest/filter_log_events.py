"""``aws logs filter-log-events`` / ``get-log-events`` JSON output, read as a stream (never held whole).

Shape (CloudWatch Logs API FilterLogEvents / GetLogEvents, as the AWS CLI prints it)::

    {"events": [{"logStreamName": str, "timestamp": epoch ms, "message": str,
                 "ingestionTime": epoch ms, "eventId": str}, ...],
     "searchedLogStreams": [...], "nextToken": str}

The AWS CLI follows ``nextToken`` itself and prints every page merged into ONE document, however many events (a day of
a busy function is gigabytes). get-log-events events lack ``logStreamName`` (the stream is the request's). Also
accepted: documents saved one after the other, a JSON array of such documents, or a bare array of events. A document
cut short (an interrupted download) still yields every complete event before the cut; the cut is counted
(``filter_log_events_truncated``).

Read in the pieces the source is read in: each ``"events": [`` array is found by its key, and its elements are
parsed one at a time by Python's ``json`` (``JSONDecoder.raw_decode``: the C scanner, which reads what ``json.loads``
reads, big integers and ``1e300`` included). Memory holds one piece and one batch of events, whatever the size.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from collector.ingest.constants import Reason
from collector.ingest.lines import decode_text
from collector.ingest.types import FileReport

TRUNCATED = Reason.DOCUMENT_TRUNCATED
_EVENTS_KEY = re.compile(r'"events"\s*:\s*\[')
_BARE_ARRAY = re.compile(r'^\s*\[\s*(?!\s*\{\s*"(?:events|searchedLogStreams|nextToken|nextForwardToken|'
                         r'nextBackwardToken)"\s*:)')
_SEPARATORS = " \t\r\n,"
_SKIP = re.compile(r"[ \t\r\n,]*")
_KEY_WINDOW = 64
"""Characters kept from the end of a piece with no ``"events": [`` in it: the key may be cut by the piece's end."""


def iter_events(pieces: Iterable[bytes], report: FileReport) -> Iterator[list[Any]]:
    """Batches (one per piece read) of the elements of every events array of the document whose bytes are
    ``pieces`` (each cut after a ``\\n``; lines with bytes that are not UTF-8 decoded with U+FFFD and counted): event
    dicts, or whatever else an array holds, for the caller to count."""
    dec = json.JSONDecoder()
    it = iter(pieces)
    buf, pos, more = "", 0, True
    in_array: bool | None = None  # None: not yet known whether the document is a bare array of events

    def fill() -> bool:
        nonlocal buf, pos
        piece = next(it, None)
        if piece is None:
            return False
        buf = buf[pos:] + decode_text(piece, report)
        pos = 0
        return True

    more = fill()
    arrays = 0  # events arrays met
    while True:
        batch: list[Any] = []
        while True:
            if in_array is None:
                if len(buf) < _KEY_WINDOW and more:
                    more = fill()
                    continue
                m = _BARE_ARRAY.match(buf)
                in_array = bool(m)
                if m:
                    pos, arrays = m.end(), 1
            if not in_array:
                m = _EVENTS_KEY.search(buf, pos)
                if m is None:
                    pos = max(pos, len(buf) - _KEY_WINDOW)
                    break
                pos, in_array = m.end(), True
                arrays += 1
            pos = _SKIP.match(buf, pos).end()  # type: ignore[union-attr]  # matches the empty string too
            if pos >= len(buf):
                break
            if buf[pos] == "]":
                pos, in_array = pos + 1, False
                continue
            try:
                obj, end = dec.raw_decode(buf, pos)
            except json.JSONDecodeError as exc:
                if more and (exc.msg.startswith("Unterminated string") or exc.pos >= len(buf) - _KEY_WINDOW):
                    break  # the element goes on in the next piece
                report.count(TRUNCATED)
                if batch:
                    yield batch
                return
            except RecursionError:  # nested deeper than Python reads: this element cannot be read
                report.count(TRUNCATED)
                if batch:
                    yield batch
                return
            batch.append(obj)
            pos = end
        if batch:
            yield batch
        if not more:
            if in_array or not arrays:
                report.count(TRUNCATED)  # cut before the end of an events array (events are missing), or before any
            return
        more = fill()
