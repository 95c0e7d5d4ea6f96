"""Line formats: how the lines of a source become events (one rule per format, one framing for all).

Every line-oriented format is a ``LineRule``: which line starts an event, and what that line's prefix gives (the
event's timestamp, its log stream) before the message. A line that starts no event continues the event before it
(joined with ``\\n``: a traceback, a pretty-printed JSON document, a message with newlines that the writer did not
escape); the first non-blank line of a source starts an event whatever it is (a file cut mid-event). Blank lines
(``BLANK_SQL``) between events are dropped (counted ``blank_line``); inside an event, before a line that continues
it, they are kept; every continuation line kept in an event is counted ``continuation_lines_joined``, so that
``events + skipped + joined`` is the number of lines.

The formats (what the writer really produces, with its source):

- ``json-lines``, ``lambda-json``: one event per line (emitter, Powertools Logger / Metrics, aws-embedded-metrics,
  the Lambda JSON log format): every non-blank line starts an event. The event's time is the record's own
  (``derive.insert_sql``, ``own_ts``).
- ``lambda-text``: the Lambda text format (awslambdaric, ../shared/samples/lambda-text-format.log): ``START`` / ``END``
  / ``REPORT RequestId:``, ``INIT_START``, ``[LEVEL]\\t<ts>\\t<request id>\\t<msg>``, ``[ERROR] Type: msg``,
  ``<ts> <request id> Task timed out ...``, ``RequestId: <id> Error: ...`` (``sniff.LAMBDA_TEXT_START``) and a line
  that is one JSON object (DuckDB's JSON reader decides, the same that discovers its fields) start an event; the
  ``[LEVEL]\\t<ts>`` / ``<ts> <request id>`` prefix gives its time, else the JSON record's own.
- ``export-s3``: CloudWatch ``CreateExportTask`` objects, ``<ISO-8601> <message>`` per event (AWS, "Exporting log
  data to Amazon S3"; newlines inside a message are not escaped). The prefix is the event's CloudWatch timestamp.
- ``aws-logs-tail``: ``aws logs tail --format detailed`` (the default): ``<timestamp> <log stream> <message>``, the
  timestamp ``datetime.isoformat(timespec='microseconds')`` of a UTC time (``2026-11-30T00:29:28.657000+00:00``) and
  every message ``rstrip()``-ed, one ``\\n`` added (aws-cli v2, ``awscli/customizations/logs/tail.py``,
  ``DetailedLogEventsFormatter`` and ``BaseLogEventsFormatter._write_log_event``).
- ``aws-logs-tail-short``: ``aws logs tail --format short``: ``<timestamp> <message>``, the timestamp
  ``strftime("%Y-%m-%dT%H:%M:%S")`` in UTC (whole seconds, no zone; same file, ``ShortLogEventsFormatter``).
- ``sam-logs``: ``sam logs`` text output: ``<log stream> <timestamp> <message>``, the timestamp
  ``datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat()`` (``...28.657000+00:00``, no fraction on a whole
  second), a message that starts with ``{`` re-indented by ``json.dumps(indent=2)`` (so on several lines), a
  ``\\n`` added when missing (aws-sam-cli, ``samcli/lib/observability/cw_logs/cw_log_formatters.py``:
  ``CWPrettyPrintFormatter``, ``CWJsonFormatter``, ``CWAddNewLineIfItDoesntExist``; ``samcli/lib/utils/time.py``
  ``timestamp_to_iso``). Colours are off when the output is not a terminal (``click.echo``).

The prefix formats take the prefix's time as the event's (it is the CloudWatch timestamp) and its log stream, when
it has one, as ``@logStream``; a line whose prefix has a date that does not exist (``2026-02-30``) starts no event.
The ``aws logs tail`` and ``sam logs`` formats print the log stream name as one word: a stream name with a space in
it (CloudWatch allows one) is cut there.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from collector.ingest.constants import Reason
from collector.ingest.sniff import ISO_PREFIX, LAMBDA_TEXT_START, SAM_PREFIX, TAIL_PREFIX, TAIL_SHORT_PREFIX
from collector.ingest.types import LogFormat
from collector.insights.sql import sql_literal

BLANK_SQL = "(CASE WHEN ascii({m}) IN (0, 9, 13, 32) THEN trim({m}, ' ' || chr(9) || chr(13)) = '' ELSE false END)"
"""A blank line (``{m}``: the line without its terminator): empty or only spaces, tabs and carriage returns (a line of
other whitespace, ``\\v`` or U+00A0, is an event). The first character's code is tested first (``ascii('')`` is 0),
so ``trim`` runs only on lines that start with one of the three; a ``CASE``, not ``OR``: DuckDB evaluates both sides
of an ``OR`` for every row."""

_ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"


@dataclass(frozen=True)
class LineRule:
    """How the lines of one format start events.

    ``prefix``: an RE2 pattern matched at the start of a line; a line starts an event when it matches and its
    ``ts_group`` parses as a time (the rest of the line, after the whole match, is the message's first line).
    ``starts``: instead of a prefix, an RE2 pattern whose match starts an event (the line is the message);
    ``json_starts``: a line that is one JSON object starts one too; neither: every non-blank line starts one.
    ``time_in_line``: an RE2 pattern whose group 1 is the event's ISO-8601 time when the line has it (``starts``
    formats). ``own_ts``: an event without a prefix time takes its JSON record's own. ``no_ts_reason``: the
    reason an event without a time is counted under (None: ``timestamp_from_neighbour_event``)."""

    fmt: LogFormat
    prefix: str | None = None
    ts_group: int = 1
    stream_group: int | None = None
    starts: str | None = None
    json_starts: bool = False
    time_in_line: str | None = None
    own_ts: bool = False
    no_ts_reason: str | None = None

    @property
    def every_line(self) -> bool:
        """Every non-blank line starts an event (no line can continue another)."""
        return self.prefix is None and self.starts is None and not self.json_starts


RULES: dict[LogFormat, LineRule] = {r.fmt: r for r in (
    LineRule(LogFormat.JSON_LINES, own_ts=True),
    LineRule(LogFormat.LAMBDA_JSON, own_ts=True),
    LineRule(LogFormat.LAMBDA_TEXT, starts=LAMBDA_TEXT_START.pattern, json_starts=True, own_ts=True,
             time_in_line=rf"^(?:\[[A-Z]+\]\t)?({_ISO}(?:\.\d+)?Z)[\t ]"),
    LineRule(LogFormat.EXPORT_S3, prefix=ISO_PREFIX.pattern, no_ts_reason=Reason.EXPORT_LINE_WITHOUT_TIMESTAMP),
    LineRule(LogFormat.AWS_LOGS_TAIL, prefix=TAIL_PREFIX.pattern, stream_group=2),
    LineRule(LogFormat.AWS_LOGS_TAIL_SHORT, prefix=TAIL_SHORT_PREFIX.pattern),
    LineRule(LogFormat.SAM_LOGS, prefix=SAM_PREFIX.pattern, ts_group=2, stream_group=1),
)}
"""The rule of each line format (``EventStore`` reads every other format as a document)."""


def trimmed(col: str, crlf: bool) -> str:
    """SQL of the line ``col`` without its terminator: ``\\r\\n`` in a CRLF file, else ``\\n`` only (a ``\\r`` before it
    is message content: the Lambda runtime ends some messages with one). ``left(s, -n)`` rather than ``rtrim``, which
    would also take trailing spaces and tabs (a ``REPORT`` line ends with a tab)."""
    if crlf:
        return (f"CASE WHEN ends_with({col}, chr(13) || chr(10)) THEN left({col}, -2) "
                f"WHEN ends_with({col}, chr(10)) THEN left({col}, -1) ELSE {col} END")
    return f"CASE WHEN ends_with({col}, chr(10)) THEN left({col}, -1) ELSE {col} END"


def _iso_ms(text: str) -> str:
    """SQL: epoch ms of the ISO-8601 text ``text`` (``''`` when a pattern did not match: NULL without a cast, since a
    failed ``TRY_CAST`` to a timestamp costs about a microsecond, most of a line's framing)."""
    return f"epoch_ms(TRY_CAST(NULLIF(replace({text}, ',', '.'), '') AS TIMESTAMPTZ))"


def flags_sql(rule: LineRule, lines: str, crlf: bool) -> str:
    """Relation over the line relation ``lines`` ``(i, line)``: ``i``, the line ``m`` (terminator removed; ``''`` for
    the NULL DuckDB's CSV reader gives an empty line), ``bl``
    (blank), ``st`` (starts an event), and for a line that starts one its time ``pts`` (epoch ms or NULL), log stream
    ``pstream`` (or NULL) and the message's first line ``body``."""
    m = "m"
    blank = BLANK_SQL.format(m=m)
    if rule.prefix is not None:
        pat = sql_literal(rule.prefix)
        stream = f"NULLIF(regexp_extract(m, {pat}, {rule.stream_group}), '')" if rule.stream_group else "NULL"
        inner = (f"SELECT i, m, {_iso_ms(f'regexp_extract(m, {pat}, {rule.ts_group})')} AS pts, {stream} AS pstream, "
                 f"substr(m, length(regexp_extract(m, {pat}, 0)) + 1) AS body FROM (SELECT i, "
                 f"COALESCE({trimmed('line', crlf)}, '') AS m FROM {lines})")
        return f"SELECT i, m, {blank} AS bl, pts IS NOT NULL AS st, pts, pstream, body FROM ({inner})"
    if rule.every_line:
        st = f"NOT {blank}"
    else:
        # a JSON object as DuckDB's reader takes it (derive.insert_sql reads its fields); no Lambda line starts with
        # "{", so each line is tested once (a CASE: DuckDB evaluates both sides of an OR for every row)
        starts = f"regexp_matches(m, {sql_literal(rule.starts)})" if rule.starts is not None else "false"
        st = f"(CASE WHEN starts_with(m, '{{') THEN json_valid(m) ELSE {starts} END)" if rule.json_starts else starts
    ts = (_iso_ms(f"regexp_extract(m, {sql_literal(rule.time_in_line)}, 1)") if rule.time_in_line
          else "CAST(NULL AS BIGINT)")
    return (f"SELECT i, m, {blank} AS bl, {st} AS st, {ts} AS pts, CAST(NULL AS VARCHAR) AS pstream, m AS body "
            f"FROM (SELECT i, COALESCE({trimmed('line', crlf)}, '') AS m FROM {lines})")


FLAGS_TABLE = "_iw_flags"
"""Temp table ``(bl, st, pts, pstream, m)`` of a source's lines in order (``rowid`` minus the first row's is the line's
number: DuckDB keeps insertion order, ``preserve_insertion_order``): blank, starts an event, the time and log stream
of a line that starts one, and its text (the message's first line of a line that starts an event, else the line).
The events of a format whose lines may continue an event are read from it, so the source is read once and no
relation of numbered lines is materialised beside it (DuckDB's buffer pool holds it, spilled past ``memory_limit``)."""


def flags_table_sql(rule: LineRule, lines: str, crlf: bool) -> str:
    """``CREATE TEMP TABLE`` of ``FLAGS_TABLE`` from ``lines`` (its ``i`` unused, so a reader need not number its
    rows: numbering is a serial pass, and the start tests after it would run on one thread)."""
    return (f"CREATE OR REPLACE TEMP TABLE {FLAGS_TABLE} AS SELECT bl, st, pts, pstream, "
            f"CASE WHEN st THEN body ELSE m END AS m FROM ({flags_sql(rule, lines, crlf)})")


CONTINUATION_COUNT_SQL = f"SELECT count(*) FILTER (WHERE NOT bl AND NOT st) FROM {FLAGS_TABLE}"
"""The number of non-blank lines that start no event (0: every event is one line; the first non-blank line, which
starts an event whatever it is, may be one of them)."""

JOIN_SLICE_CHARS = 32 * 1024 * 1024
"""Characters of joined continuation lines (``JOINED``'s ``rest``) at most per INSERT, past one event's own (see
``join_continuations``): DuckDB's hash join keeps its build side's strings within ``memory_limit`` only when they
fit in it (with more it fails, out of memory, instead of spilling), so the events with continuation lines are
inserted a slice of lines at a time, each joining only its own rows."""

JOINED = "read_parquet($joined)"
"""The rows ``(owner, rest, lines)`` (a temporary Parquet file, ``$joined``: appends to a table inside a transaction
would stay in memory until its COMMIT): per event with continuation lines, the line number of its first line, the
kept continuation lines joined with ``\\n`` (NULL for the first non-blank line when it starts no event and nothing
follows it) and how many they are (``join_continuations``)."""


def join_continuations(batches: Iterable[Any], first: int) -> Iterator[tuple[list[int], list[str | None], list[int]]]:
    """The events with continuation lines of a source whose lines' flags are ``batches`` (Arrow record batches of
    ``FLAGS_TABLE``'s ``bl, st`` and ``m`` of the lines that start no event, NULL for the others, in line order) and whose first non-blank line is line ``first``: batches of
    ``JOINED`` rows ``(owner, rest, lines)``. A continuation line belongs to the last line before it that
    starts an event (or is ``first``); the blank lines at the end of an event are not kept.

    Vectorised where every line is looked at (which lines start events, whose each continuation line is): only the
    continuation lines are Python strings, so memory holds one batch, and DuckDB sorts and aggregates nothing (its
    window and ordered aggregates hold their input in memory)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    base = 0  # line number of the batch's first row
    owner = -1  # the event the lines being read continue (-1: before any)
    lines: list[str] = []  # its continuation lines so far
    kept = 0  # how many of them end with a non-blank line (blank ones after it are not kept)
    out: tuple[list[int], list[str | None], list[int]] = ([], [], [])

    def close() -> None:
        if owner >= 0 and (kept or owner == first):
            out[0].append(owner)
            out[1].append("\n".join(lines[:kept]) if kept else None)
            out[2].append(kept)

    for batch in batches:
        n = batch.num_rows
        st = batch.column(1).to_numpy(zero_copy_only=False).astype(bool)
        bl = batch.column(0).to_numpy(zero_copy_only=False).astype(bool)
        rows = np.arange(base, base + n)
        owns = st | (rows == first)
        cont = np.flatnonzero(~owns & (rows > first))
        starts = np.flatnonzero(owns)
        texts = pc.take(batch.column(2), pa.array(cont)).to_pylist()
        # for each continuation line, the index in ``starts`` of the last start before it (-1: the carried owner)
        which = np.searchsorted(starts, cont, side="right") - 1
        j = 0
        for k, s in enumerate(starts.tolist()):
            while j < len(cont) and which[j] < k:  # continuation lines of the current owner, before this start
                lines.append(texts[j])
                if not bl[cont[j]]:
                    kept = len(lines)
                j += 1
            close()
            owner, lines, kept = base + s, [], 0
        while j < len(cont):
            lines.append(texts[j])
            if not bl[cont[j]]:
                kept = len(lines)
            j += 1
        if out[0]:
            yield out
            out = ([], [], [])
        base += n
    close()
    if out[0]:
        yield out


def line_events_src(rule: LineRule, lines: str, crlf: bool, seq_base: int) -> str:
    """Staged relation ``(seq, ts, msg, stream, lg, ing)`` of the events of ``lines`` for a rule whose every non-blank
    line starts an event (``LineRule.every_line``; ``$stream``: the log stream of an event whose line gives none;
    ``$lg``: the ``@log``); ``seq`` is the line number ``i`` plus ``seq_base``."""
    return f"""(SELECT i + {int(seq_base)} AS seq, pts AS ts, body AS msg, COALESCE(pstream, $stream) AS stream,
    $lg AS lg, CAST(NULL AS BIGINT) AS ing FROM ({flags_sql(rule, lines, crlf)}) WHERE st)"""


def flag_events_src(seq_base: int, row_base: int, *, joined: bool, lines: tuple[int, int] | None = None) -> str:
    """Staged relation ``(seq, ts, msg, stream, lg, ing)`` of the events of ``FLAGS_TABLE`` whose first row has the
    rowid ``row_base`` (``$stream``, ``$lg`` as ``line_events_src``); ``seq`` is the event's first line number plus
    ``seq_base``. ``joined``: ``JOINED`` holds this source's continuation lines (else there are none); ``lines``:
    only the events whose first line's number ``n`` is ``lo <= n < hi`` (a slice, ``JOIN_SLICE_CHARS``)."""
    base, rb = int(seq_base), int(row_base)
    own = f"(f.rowid - {rb})"
    where = f" AND {own} >= {int(lines[0])} AND {own} < {int(lines[1])}" if lines is not None else ""
    if not joined:
        return f"""(SELECT {own} + {base} AS seq, f.pts AS ts, f.m AS msg, COALESCE(f.pstream, $stream) AS stream,
    $lg AS lg, CAST(NULL AS BIGINT) AS ing FROM {FLAGS_TABLE} AS f WHERE f.st{where})"""
    rows = f" WHERE owner >= {int(lines[0])} AND owner < {int(lines[1])}" if lines is not None else ""
    return f"""(SELECT {own} + {base} AS seq, CASE WHEN f.st THEN f.pts END AS ts,
    f.m || COALESCE(chr(10) || j.rest, '') AS msg,
    COALESCE(CASE WHEN f.st THEN f.pstream END, $stream) AS stream, $lg AS lg, CAST(NULL AS BIGINT) AS ing
    FROM {FLAGS_TABLE} AS f LEFT JOIN (SELECT owner, rest FROM {JOINED}{rows}) AS j ON j.owner = {own}
    WHERE (f.st OR j.owner IS NOT NULL){where})"""
