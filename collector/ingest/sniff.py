"""Format sniffing from the first bytes of a (decompressed) source.

Every rule rests on structure (where an event starts), never on a majority of lines: a message may be a traceback
or a pretty-printed JSON dump of any length, so continuation lines (and what they happen to look like) do not vote.
Rules, in order (first match wins), on the first ``SNIFF_BYTES`` bytes (all of its lines):

1. filter-log-events / get-log-events output: ONE JSON document, so the text opens with ``{`` whose first key is a
   key of that response (``events``, ``searchedLogStreams``, ``nextToken``, ``nextForwardToken``,
   ``nextBackwardToken``), with ``[`` and such a page (pages saved one after the other), or with ``[`` and an
   event object (its first key ``timestamp``, ``message``, ``logStreamName``, ``ingestionTime`` or ``eventId``);
   a first line that is a complete JSON object is one JSON-lines record unless its ``events`` is a list, and a
   document that ends inside the window is followed by nothing or another page (not by lines of text);
2. the first line is a CSV header naming ``timestamp`` (or ``@timestamp``) and ``message`` -> console CSV export;
3. a prefix format (``PREFIXES``: ``sam logs``, ``aws logs tail`` detailed and short, export-to-S3, in that order):
   every event starts with the format's prefix (export-to-S3: a ``<ISO-8601 timestamp> `` line) and lines without it
   continue the event before them, however many there are. An export object starts at an event, so a stamped first line (not a
   Lambda text ``<ts> <request id>`` line) decides it. A file cut mid-event (first line unstamped) is an export when
   some line is stamped (not every one a Lambda text line), no unstamped line is a Lambda platform line
   (``START``/``END``/``REPORT RequestId:``, ``INIT_START``: in an export they carry the timestamp prefix too), and
   the stamped lines are at least as many as the unstamped lines that would start an event of another format;
4. a complete JSON object line with ``"type": "platform.*"`` anywhere in the window -> Lambda JSON log format;
5. Lambda text markers (START/END/REPORT/INIT_START lines, ``[LEVEL]\\t`` runtime lines) anywhere in the window,
   in a file not named ``*.jsonl``/``*.ndjson`` -> Lambda text format (multi-line events); a ``.jsonl`` name
   says one event per line, so such a file stays JSON lines even with platform lines in it;
6. anything else -> JSON lines (one event per line; non-JSON lines are text events).
"""

from __future__ import annotations

import json
import re

from collector.ingest.constants import SNIFF_BYTES
from collector.ingest.types import LogFormat

_ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"
ISO_PREFIX = re.compile(rf"^({_ISO}(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?) ")
"""``<ISO-8601> `` at the start of an export-to-S3 line (group 1: the time)."""
TAIL_PREFIX = re.compile(rf"^({_ISO}\.\d{{6}}[+-]\d\d:\d\d) (\S+)(?: |$)")
"""``aws logs tail --format detailed``: ``<ISO-8601, microseconds, +00:00> <log stream> `` (groups: time, stream)."""
TAIL_SHORT_PREFIX = re.compile(rf"^({_ISO})(?: |$)")
"""``aws logs tail --format short``: ``<YYYY-MM-DDTHH:MM:SS> `` (group 1: the time, UTC)."""
SAM_PREFIX = re.compile(rf"^(\S+) ({_ISO}(?:\.\d{{6}})?[+-]\d\d:\d\d)(?: |$)")
"""``sam logs``: ``<log stream> <ISO-8601+00:00> `` (groups: stream, time)."""
PREFIXES: tuple[tuple[LogFormat, re.Pattern[str]], ...] = (
    (LogFormat.SAM_LOGS, SAM_PREFIX), (LogFormat.AWS_LOGS_TAIL, TAIL_PREFIX),
    (LogFormat.AWS_LOGS_TAIL_SHORT, TAIL_SHORT_PREFIX), (LogFormat.EXPORT_S3, ISO_PREFIX))
"""The formats whose every event starts with a prefix, most specific first (rule 3)."""

LAMBDA_TEXT_START = re.compile(
    r"^(?:(?:START|END|REPORT) RequestId: |INIT_START |INIT_REPORT |INIT_RUNTIME_DONE|RESTORE_START |RESTORE_REPORT |"
    r"EXTENSION\t|TELEMETRY\t|LOGS\t|"
    r"\[(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\](?:\t| )|"
    r"RequestId: \S+ Error: |"
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z[\t ][0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}[\t ])"
)
"""A line that starts a new Lambda text-format event (platform line, runtime log line, runtime error)."""

_PLATFORM_LINE = re.compile(r"^(?:(?:START|END|REPORT) RequestId: |INIT_START )")
"""A Lambda platform line: its own event, so in an export-to-S3 object it is always stamped."""

_FLE_START = re.compile(
    r'^\s*(?:\[\s*)?\{\s*"(?:events|searchedLogStreams|nextToken|nextForwardToken|nextBackwardToken)"\s*:'
    r'|^\s*\[\s*\{\s*"(?:timestamp|message|logStreamName|ingestionTime|eventId)"\s*:|^\s*\[\s*\]\s*$')
"""The opening of a FilterLogEvents / GetLogEvents response, an array of them, or a bare array of events."""

_MARKER = re.compile(r"^(?:(?:START|END|REPORT) RequestId: |INIT_START |\[(?:INFO|WARN|WARNING|ERROR|DEBUG)\]\t)")
_CSV_HEADER = re.compile(r'^\ufeff?"?@?timestamp"?,.*"?@?message"?', re.IGNORECASE)


def is_json_object_line(line: str) -> bool:
    """True when ``line`` (surrounding whitespace ignored) is one JSON object that Python's ``json`` reads (an object
    nested too deep for it, a RecursionError, is not)."""
    s = line.strip()
    if not (s.startswith("{") and s.endswith("}")):
        return False
    try:
        return isinstance(json.loads(s), dict)
    except (ValueError, RecursionError):
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
    if _is_filter_log_events(stripped, first):
        return LogFormat.FILTER_LOG_EVENTS
    if _CSV_HEADER.match(first):
        return LogFormat.CONSOLE_CSV
    for fmt, prefix in PREFIXES:
        if _is_prefixed(nonblank, prefix):
            return fmt
    for ln in nonblank:
        if '"platform.' in ln and is_json_object_line(ln) and str(json.loads(ln).get("type", "")).startswith(
                "platform."):
            return LogFormat.LAMBDA_JSON
    lowered = name.lower().removesuffix(".gz")
    if not lowered.endswith((".jsonl", ".ndjson")) and any(_MARKER.match(ln) for ln in nonblank):
        return LogFormat.LAMBDA_TEXT
    return LogFormat.JSON_LINES


def _is_filter_log_events(stripped: str, first: str) -> bool:
    """Rule 1 of the module docstring; ``stripped`` is the window without leading whitespace. A document that ends
    inside the window must be followed by nothing or by another page, not by lines of text (a pretty-printed JSON
    record at the top of a log file opens like a response page too)."""
    if not _FLE_START.match(stripped):
        return False
    if is_json_object_line(first) and not isinstance(json.loads(first).get("events"), list):
        return False  # one JSON-lines record
    text = stripped.rstrip()
    try:
        _, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as exc:
        # cut by the window or an interrupted download (the error is at the end: inside the last string, literal,
        # number or escape) vs not JSON at all (a line of text after a pretty-printed opening)
        return exc.msg.startswith("Unterminated string") or exc.pos >= len(text) - 6
    rest = text[end:].lstrip()
    return not rest or rest[:1] in "{["


def _is_prefixed(lines: list[str], prefix: re.Pattern[str]) -> bool:
    """Rule 3 of the module docstring over the non-blank ``lines`` of the sniff window, for a format whose events
    start with ``prefix``."""
    if not lines:
        return False
    if prefix.match(lines[0]):
        return not LAMBDA_TEXT_START.match(lines[0])
    stamped = other_starts = 0
    foreign_stamp = False
    for ln in lines:
        if prefix.match(ln):
            stamped += 1
            foreign_stamp = foreign_stamp or not LAMBDA_TEXT_START.match(ln)
        elif _PLATFORM_LINE.match(ln):
            return False
        elif LAMBDA_TEXT_START.match(ln) or (ln.lstrip()[:1] == "{" and is_json_object_line(ln)):
            other_starts += 1
    return foreign_stamp and stamped >= other_starts
