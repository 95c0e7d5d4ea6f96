"""Format sniffing from the first bytes of a (decompressed) source.

Rules, in order (first match wins), on the first ``SNIFF_BYTES`` bytes:
1. the text starts with ``{``/``[``, an ``"events"`` key appears, and the first line is not a complete
   JSON object or is one whose ``events`` is a list -> filter-log-events / get-log-events output;
2. the first line is a CSV header naming ``timestamp`` (or ``@timestamp``) and ``message`` ->
   console CSV export;
3. structure, not a majority of lines: every export event starts with a ``<ISO-8601 timestamp> `` line and lines
   without it continue the event before them (tracebacks), however many there are. So: some line is stamped, not
   every stamped line looks like a Lambda text ``<ts> <request id>`` line, and the stamped lines are at least as many
   as the unstamped lines that would start an event of another format (a JSON object, a Lambda text line); or the
   first line is stamped -> export-to-S3;
4. a complete JSON object line with ``"type": "platform.*"`` -> Lambda JSON log format;
5. Lambda text markers (START/END/REPORT/INIT_START lines, ``[LEVEL]\\t<ts>\\t`` runtime lines) in a
   file not named ``*.jsonl``/``*.ndjson`` -> Lambda text format (multi-line events); a ``.jsonl`` name
   says one event per line, so such a file stays JSON lines even with platform lines in it;
6. anything else -> JSON lines (one event per line; non-JSON lines are text events).
"""

from __future__ import annotations

import json
import re

from collector.ingest.constants import SNIFF_BYTES
from collector.ingest.types import LogFormat

ISO_PREFIX = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? ")
"""``<ISO-8601> `` at the start of an export-to-S3 line."""

LAMBDA_TEXT_START = re.compile(
    r"^(?:(?:START|END|REPORT) RequestId: |INIT_START |INIT_REPORT |INIT_RUNTIME_DONE|RESTORE_START |RESTORE_REPORT |"
    r"EXTENSION\t|TELEMETRY\t|LOGS\t|"
    r"\[(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\](?:\t| )|"
    r"RequestId: \S+ Error: |"
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z[\t ][0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}[\t ])"
)
"""A line that starts a new Lambda text-format event (platform line, runtime log line, runtime error)."""

_MARKER = re.compile(r"^(?:(?:START|END|REPORT) RequestId: |INIT_START |\[(?:INFO|WARN|WARNING|ERROR|DEBUG)\]\t)")
_CSV_HEADER = re.compile(r'^\ufeff?"?@?timestamp"?,.*"?@?message"?', re.IGNORECASE)


def is_json_object_line(line: str) -> bool:
    """True when ``line`` (surrounding whitespace ignored) is one JSON object."""
    s = line.strip()
    if not (s.startswith("{") and s.endswith("}")):
        return False
    try:
        return isinstance(json.loads(s), dict)
    except ValueError:
        return False


def sniff(head: bytes, name: str = "") -> LogFormat:
    """The format of a source whose first bytes are ``head`` (decompressed); ``name`` is the file name."""
    text = head[:SNIFF_BYTES].decode("utf-8", "replace").lstrip("\ufeff")
    stripped = text.lstrip()
    lines = text.split("\n")
    if len(head) > SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last one may be cut by the sniff window
    lines = [ln.rstrip("\r") for ln in lines]
    nonblank = [ln for ln in lines if ln.strip()]
    first = nonblank[0] if nonblank else ""
    if stripped[:1] in "{[" and stripped[:1] and '"events"' in text and (
            not is_json_object_line(first) or isinstance(json.loads(first).get("events"), list)):
        return LogFormat.FILTER_LOG_EVENTS
    if _CSV_HEADER.match(first):
        return LogFormat.CONSOLE_CSV
    sample = nonblank[:200]
    stamped = [ln for ln in sample if ISO_PREFIX.match(ln)]
    if stamped and not all(LAMBDA_TEXT_START.match(ln) for ln in stamped):
        other_starts = sum(1 for ln in sample if not ISO_PREFIX.match(ln)
                           and (LAMBDA_TEXT_START.match(ln) or is_json_object_line(ln)))
        if ISO_PREFIX.match(sample[0]) or len(stamped) >= other_starts:
            return LogFormat.EXPORT_S3
    json_lines = [ln for ln in sample if ln.lstrip().startswith("{") and is_json_object_line(ln)]
    for ln in json_lines[:50]:
        try:
            rec = json.loads(ln)
        except ValueError:
            continue
        if str(rec.get("type", "")).startswith("platform."):
            return LogFormat.LAMBDA_JSON
    lowered = name.lower().removesuffix(".gz")
    if any(_MARKER.match(ln) for ln in sample) and not lowered.endswith((".jsonl", ".ndjson")):
        return LogFormat.LAMBDA_TEXT
    return LogFormat.JSON_LINES
