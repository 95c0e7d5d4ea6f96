"""Limits, column names and reason codes of the ingest.

Sources of the limits:
- CloudWatch Logs ``PutLogEvents``: "Each log event can be no larger than 1 MB"; the batch size counts
  every message in UTF-8 plus 26 bytes per event, so the largest message is 1,048,576 - 26 bytes.
  https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutLogEvents.html
- Logs Insights discovers at most 200 fields of a JSON log event (issue 3; "Supported logs and
  discovered fields").
"""

from __future__ import annotations

from emitter.contract import LogKey

EVENTS_TABLE = "events"

PENDING_TIMESTAMPS_TABLE = "iw_pending_timestamps"
"""Batches ``(lo, hi, fallback_ms)`` of ``@seq`` whose timestamp rule (neighbour's time, else ``fallback_ms``, the
file's mtime in epoch ms) is still to apply: written with the events, applied by the store's second transaction
(``EventStore.transaction``), or when the store is next opened after a crash between the two."""
PENDING_FIELDS_TABLE = "iw_pending_fields"
"""Discovered fields ``(seq, fields)`` still to set on events (JSON object text: the first 200 fields of a wide JSON
message, or the first embedded JSON fragment of a text one); applied like ``PENDING_TIMESTAMPS_TABLE``."""

MAX_EVENT_BYTES = 1_048_576 - 26
"""Largest message CloudWatch Logs stores (bytes of UTF-8); longer lines are truncated and counted."""

MAX_DISCOVERED_FIELDS = 200
"""At most this many JSON fields (leaf paths ``a.b`` / ``a.0``) are discovered per event; the rest are
dropped from ``@json`` (in document order) and counted."""

MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024
"""Default cap on the decompressed bytes kept of one gzip source (256 MiB): the rest of a larger stream (a gzip
bomb) is not read, counted ``decompressed_size_cap_reached`` once per file. Knob: ``EventStore(max_decompressed_bytes=)``,
``collect local --max-decompressed-bytes``."""

SNIFF_BYTES = 64 * 1024
"""How much of a (decompressed) file the format sniffer reads."""

MAX_TIMESTAMP_MS = 253_402_300_799_999
"""Latest event time accepted, epoch ms (9999-12-31T23:59:59.999Z, the last ISO-8601 four-digit-year instant); the
earliest is ``-MAX_TIMESTAMP_MS``. A timestamp or ingestion time outside (``1e300``, ``99999999999999999999999``,
``inf``) is not stored: the event takes a neighbour's time, counted ``timestamp_out_of_range_replaced``."""

OUT_OF_RANGE_MS = -9_223_372_036_854_775_808
"""BIGINT minimum: the ingest SQL marks an out-of-range record time with it; ``_finish_batch`` counts and clears it."""

LAMBDA_LOG_GROUP_PREFIX = "/aws/lambda/"
"""``@log`` of a file without a log group: ``/aws/lambda/<file stem>`` (the demo's layout)."""

HOT_FIELDS: tuple[str, ...] = tuple(
    k.value
    for k in (
        LogKey.SCHEMA_VERSION, LogKey.OUTCOME, LogKey.SERVICE, LogKey.OPERATION, LogKey.EVENT_SOURCE,
        LogKey.IDEMPOTENCY_KEY, LogKey.IDEMPOTENCY_STATUS, LogKey.ATTEMPT, LogKey.RECORD_AGE_MS,
        LogKey.ERROR_CODE, LogKey.ERROR_CLASS, LogKey.FUNCTION_REQUEST_ID, LogKey.IN_PROGRESS_EXPIRES_AT_MS,
        LogKey.EVENT_ID, LogKey.CORRELATION_ID, LogKey.REMAINING_TIME_MS, LogKey.MESSAGE,
    )
) + ("_aws.Timestamp",)
"""Fields materialised as extra columns named like the field, so the engine reads a column instead of parsing
``@json`` again: every contract key a standard query (collector/queries/*.insights) reads, and EMF
``_aws.Timestamp`` (library_signals). A JSON column holds ``json_extract("@json", '$.<field>')`` (NULL when absent),
a ``HOT_STRING_FIELDS`` column ``json_extract_string``; both taken from the one parse of the line. ``record.status``
(invocations) is read from ``@json`` on REPORT records only.
"""

HOT_STRING_FIELDS: frozenset[str] = frozenset(
    k.value
    for k in (
        LogKey.SCHEMA_VERSION, LogKey.OUTCOME, LogKey.SERVICE, LogKey.OPERATION, LogKey.EVENT_SOURCE,
        LogKey.IDEMPOTENCY_KEY, LogKey.IDEMPOTENCY_STATUS, LogKey.ERROR_CODE, LogKey.ERROR_CLASS,
        LogKey.FUNCTION_REQUEST_ID, LogKey.EVENT_ID, LogKey.CORRELATION_ID,
    )
)
"""Hot fields stored as VARCHAR (the string value, unquoted) instead of JSON: the contract fixes them as strings
(emitter/CONTRACT.md, "Log record keys"), so the engine reads them as strings without unquoting JSON text on every
row. The others keep Logs Insights' dynamic typing as JSON: numbers the contract writes as numbers (``attempt``,
``record_age_ms``... which a foreign log may write as strings), ``message`` (Powertools Logger writes any value
there) and ``_aws.Timestamp``. A non-string value in a string field (a foreign log's ``"service": 5``) is stored as
its JSON text (``5``): it compares as before (numerically against a number, by text against a string), and
``stats ... by`` groups it with the string ``"5"`` (over ``@json`` they are two groups; Logs Insights documents no
rule for mixed types)."""

UNIQUE_VALUE_COLUMNS: frozenset[str] = frozenset(
    ["@requestId", "_aws.Timestamp"] + [
        k.value
        for k in (
            LogKey.IDEMPOTENCY_KEY, LogKey.EVENT_ID, LogKey.FUNCTION_REQUEST_ID, LogKey.CORRELATION_ID,
            LogKey.RECORD_AGE_MS, LogKey.IN_PROGRESS_EXPIRES_AT_MS, LogKey.REMAINING_TIME_MS,
        )
    ]
)
"""Text columns (VARCHAR or JSON) of the events table whose values are nearly all distinct (ids, epoch times, ages):
stored uncompressed. DuckDB's default for text, a dictionary with FSST, finds nothing to share in them and spends more
CPU choosing and building it than on the rest of their write (``benchmarks/collector_bench.py`` shows the difference;
the database file grows about 2x). Low-cardinality columns (``outcome``, ``service``...) keep the dictionary, which
shrinks them about 10x."""


class IngestCheck:
    """Bits of the events table's ``@ingestChecks`` (``collector.tables.INGEST_CHECKS_COLUMN``): what the ingest looks at
    again after the INSERT (``derive.ingest_checks_sql`` sets them)."""

    INVALID_JSON = 1
    """Not a JSON object but starts with ``{``: counted ``invalid_json_kept_as_text``."""
    EMBEDDED_JSON = 2
    """Not a JSON object but holds a ``{``: its first embedded JSON fragment's fields are looked for."""
    WIDE_JSON = 4
    """A JSON object that may have more than ``MAX_DISCOVERED_FIELDS`` fields (at least 2x that many bytes and that
    many commas): its fields are counted and capped."""
    TRUNCATED = 8
    """The message was longer than ``MAX_EVENT_BYTES`` and was cut: counted ``event_truncated_over_1mb``."""


MB = 1_000_000
"""Logs Insights reports ``@memorySize`` / ``@maxMemoryUsed`` in bytes with 1 MB = 10^6 bytes (AWS Lambda
operator guide queries divide by 1000/1000 to get MB)."""


class Reason:
    """Reason codes of ``IngestReport.by_reason`` (number of lines or events each).

    SKIPPED: input that produced no event. REPAIRED: an event whose content was changed to be
    stored. NOTED: kept unchanged but worth knowing (never silently).
    """

    # skipped
    BLANK_LINE = "blank_line"
    EVENT_WITHOUT_MESSAGE = "event_without_message"
    CSV_ROW_MALFORMED = "csv_row_malformed"
    NOT_A_LOG_FILE = "not_a_log_file"  # a binary file met while reading a directory (one per file)
    # repaired
    INVALID_UTF8 = "invalid_utf8_replaced"
    CRLF = "crlf_line_ending_stripped"
    TRUNCATED_OVER_1MB = "event_truncated_over_1mb"
    JSON_FIELDS_OVER_200 = "json_fields_over_200_dropped"
    GZIP_TRUNCATED = "gzip_truncated_partial_last_line"
    TIMESTAMP_OUT_OF_RANGE = "timestamp_out_of_range_replaced"
    # noted
    INVALID_JSON = "invalid_json_kept_as_text"
    TIMESTAMP_INFERRED = "timestamp_from_neighbour_event"
    TIMESTAMP_FROM_FILE = "timestamp_from_file_mtime"
    EXPORT_LINE_WITHOUT_TIMESTAMP = "export_line_without_timestamp"
    GZIP_TRUNCATED_STREAM = "gzip_stream_truncated"
    DECOMPRESSED_CAP = "decompressed_size_cap_reached"  # once per file: its data beyond the cap was not read
    MULTILINE_JOINED = "continuation_lines_joined"
    EMBEDDED_JSON = "fields_from_embedded_json_fragment"  # message kept; fields of its first JSON object discovered
    SKIPPED_ENTRY_PREFIX = "skipped_entry_"  # + source.EntryKind: a directory entry not read (FIFO, dangling link...)

    DOCUMENT_TRUNCATED = "filter_log_events_truncated"  # a filter-log-events document cut short: its partial event
    SKIPPED = frozenset({BLANK_LINE, EVENT_WITHOUT_MESSAGE, CSV_ROW_MALFORMED, NOT_A_LOG_FILE, DOCUMENT_TRUNCATED})
    REPAIRED = frozenset({INVALID_UTF8, CRLF, TRUNCATED_OVER_1MB, JSON_FIELDS_OVER_200, GZIP_TRUNCATED,
                          TIMESTAMP_OUT_OF_RANGE})
