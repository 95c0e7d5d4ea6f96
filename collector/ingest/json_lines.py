"""Bulk line formats in SQL: JSON lines (emitter, Powertools Logger/Metrics, aws-embedded-metrics, Lambda
JSON log format, or any text per line) and CloudWatch export-to-S3 objects.

Both read a line relation ``(i, line)`` and produce the staged relation ``(seq, ts, msg, stream, lg, ing)``
as a SQL subquery; DuckDB does the rest (``derive.insert_sql``). The line relation is a temp table filled
by DuckDB's parallel CSV reader for large plain files without a ``\r`` byte (``EventStore._ingest_plain_lines``),
else the zero-copy Arrow table of ``lines.line_table`` (gzip, CR, invalid UTF-8, over-long lines).
Blank lines produce no event (counted by the caller as ``blank_line``).

Export-to-S3 line: ``<ISO-8601 timestamp> <message>`` (CreateExportTask writes one event per line; the
timestamp is the event's CloudWatch timestamp, so it is used as ``@timestamp`` even when the message
carries its own). A line without that prefix is kept whole as the message, with the timestamp of its
neighbour (counted ``export_line_without_timestamp``).
"""

from __future__ import annotations


def trimmed(col: str, crlf: bool) -> str:
    # drop the line terminator kept by the zero-copy split: "\r\n" in a CRLF file, else "\n" only.
    # left(s, -n) rather than rtrim(): rtrim/trim are several times slower on a million rows.
    if crlf:
        return (f"CASE WHEN ends_with({col}, chr(13) || chr(10)) THEN left({col}, -2) "
                f"WHEN ends_with({col}, chr(10)) THEN left({col}, -1) ELSE {col} END")
    return f"CASE WHEN ends_with({col}, chr(10)) THEN left({col}, -1) ELSE {col} END"


# not blank: non-empty, and when it starts with whitespace, not whitespace only (trim() only for those rows). Kept as
# `NOT IN (...)`: the same test by ranges (`BETWEEN 9 AND 13 OR = 32`) spent ~10% less INSERT CPU but was planned
# into the serial numbered-lines CTE, and the 1M-event collection took 1.25x the wall time (benchmarks/collector_bench.py).
_NOT_BLANK = "m <> '' AND (ascii(m) NOT IN (9, 10, 11, 12, 13, 32) OR trim(m, ' ' || chr(9) || chr(13)) <> '')"


def json_lines_src(lines: str, seq_base: int, crlf: bool = False) -> str:
    """Staged relation over the line table ``lines``; ``ts`` NULL (the record's own time is used)."""
    return f"""(
    SELECT CAST(i AS BIGINT) + {int(seq_base)} AS seq, CAST(NULL AS BIGINT) AS ts, m AS msg,
        $stream AS stream, $lg AS lg, CAST(NULL AS BIGINT) AS ing
    FROM (SELECT i, {trimmed('line', crlf)} AS m FROM {lines})
    WHERE {_NOT_BLANK}
)"""


def export_src(lines: str, seq_base: int, crlf: bool = False) -> str:
    """Staged relation for export-to-S3 lines: the timestamp prefix split off the message."""
    return f"""(
    SELECT CAST(i AS BIGINT) + {int(seq_base)} AS seq,
        CASE WHEN pts IS NOT NULL THEN pts END AS ts,
        CASE WHEN pts IS NOT NULL THEN substr(m, sp + 1) ELSE m END AS msg,
        $stream AS stream, $lg AS lg, CAST(NULL AS BIGINT) AS ing
    FROM (
        SELECT i, m, sp,
            CASE WHEN sp BETWEEN 11 AND 36 THEN epoch_ms(TRY_CAST(replace(left(m, sp - 1), ',', '.') AS TIMESTAMPTZ))
            END AS pts
        FROM (SELECT i, m, strpos(m, ' ') AS sp FROM (SELECT i, {trimmed('line', crlf)} AS m FROM {lines}))
    )
    WHERE {_NOT_BLANK}
)"""
