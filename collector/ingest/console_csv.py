"""CloudWatch console CSV export.

The console's "Download search results (CSV)" / log-events export writes a header (``timestamp,message``;
Logs Insights result exports use the field names, e.g. ``@timestamp,@message,@logStream``) and one row per
event; messages are quoted, quotes doubled, and a message may span several physical lines (the Lambda
runtime keeps the trailing newline inside the quotes). ``timestamp`` is epoch ms, or a date
(``2026-11-30 00:29:28.657``, ISO-8601; UTC).

A row without a message column is skipped (``csv_row_malformed``). Read as a stream (``iter_rows``): a file of any
size holds one batch of rows at a time.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import Any

from collector.ingest.constants import Reason
from collector.ingest.lines import decode_text
from collector.ingest.timestamps import iso_to_ms
from collector.ingest.types import FileReport

_ALIASES = {
    "timestamp": "timestamp", "@timestamp": "timestamp",
    "message": "message", "@message": "message",
    "logstreamname": "stream", "@logstream": "stream", "logstream": "stream",
    "ingestiontime": "ingest", "@ingestiontime": "ingest",
}


def _ts(value: str) -> int | float | None:
    """Epoch ms of a CSV time cell: digits (epoch s below 10^11, else ms) or a date; any other number is passed on
    as it is, for the store's range check (``1e300`` is counted ``timestamp_out_of_range_replaced`` there)."""
    v = value.strip()
    if not v:
        return None
    if v.isdigit():
        n = int(v)
        return n * 1000 if n < 10**11 else n
    try:
        return float(v)
    except ValueError:
        return iso_to_ms(v.replace(" ", "T", 1) if "T" not in v else v)


ROWS_PER_BATCH = 20_000
"""Rows staged at a time: memory holds one batch, whatever the file's size."""


def iter_rows(pieces: Iterable[bytes], report: FileReport) -> Iterator[list[dict[str, Any]]]:
    """Batches of rows as dicts ``{timestamp, message, logStreamName, ingestionTime}`` (missing ones None) of the CSV
    whose bytes are ``pieces`` (each cut after a ``\\n``), read as a stream.

    Raises:
        ValueError: the header names no message column.
    """
    lines = (line for piece in pieces for line in io.StringIO(decode_text(piece, report), newline=""))
    reader = csv.reader(lines)
    try:
        header = next(reader)
    except StopIteration:
        return
    roles = [_ALIASES.get(h.strip().lstrip("\ufeff").lower()) for h in header]
    if "message" not in roles:
        raise ValueError(f"CSV header has no message column: {header!r}")
    out: list[dict[str, Any]] = []
    try:
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                report.count(Reason.BLANK_LINE)
                continue
            rec: dict[str, Any] = {}
            for role, value in zip(roles, row):
                if role:
                    rec[role] = value
            if rec.get("message") is None:
                report.count(Reason.CSV_ROW_MALFORMED)
                continue
            out.append({"timestamp": _ts(rec.get("timestamp", "")), "message": rec["message"],
                        "logStreamName": rec.get("stream") or None,
                        "ingestionTime": _ts(rec.get("ingest", "")) if rec.get("ingest") else None})
            if len(out) >= ROWS_PER_BATCH:
                yield out
                out = []
    except csv.Error:
        report.count(Reason.CSV_ROW_MALFORMED)
    if out:
        yield out
