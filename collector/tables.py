"""Schemas of the collector's tables: the ``events`` table every ingest writes and the offline Logs Insights engine
reads (``EVENT_COLUMNS``), and the standard tables (``TABLES``, the contract between collector, dashboard and alarms).

Each standard query in ``collector/queries/<name>.insights`` produces the table of the
same name; its result columns are exactly the ones listed here, in this order, with
these DuckDB types. ``TIMESTAMP`` columns are UTC, millisecond precision. Tables are
written as ``<out>/tables/<name>.parquet`` next to ``<out>/manifest.json``.

Outcome, status and key values inside the tables are the ones defined in
``emitter.contract``.

``log_group`` is the log group name and ``account_id`` its 12-digit account: the queries select
``@log as log_group`` (``@log`` is "account-id:log-group-name" on CloudWatch and offline), and
``collector.postprocess.split_log_identifier`` splits it for both collectors (offline, the account is
``--account-id`` / ``IDEMWATCH_ACCOUNT_ID``, default ``000000000000``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Table:
    """A standard table: ``name``, ``columns`` as ((column, duckdb_type), ...), and what it holds."""

    name: str
    columns: tuple[tuple[str, str], ...]
    description: str

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.columns)


EVENT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("@timestamp", "BIGINT"),  # epoch ms
    ("@message", "VARCHAR"),
    ("@logStream", "VARCHAR"),
    ("@log", "VARCHAR"),  # "<account id>:<log group name>" (AWS's form; offline: --account-id)
    ("@ingestionTime", "BIGINT"),  # epoch ms; NULL when the source has none
    ("@type", "VARCHAR"),
    ("@requestId", "VARCHAR"),
    ("@duration", "DOUBLE"),  # ms
    ("@billedDuration", "DOUBLE"),  # ms
    ("@memorySize", "DOUBLE"),  # bytes (1 MB = 10^6 bytes, as Logs Insights reports it)
    ("@maxMemoryUsed", "DOUBLE"),  # bytes
    ("@initDuration", "DOUBLE"),  # ms
    ("@xrayTraceId", "VARCHAR"),  # Lambda lines with an X-Ray trace ID (collector.ingest.vended)
    ("@xraySegmentId", "VARCHAR"),
    ("@seq", "BIGINT"),  # ingest order over the store's life (the tie-breaker)
    ("@json", "JSON"),  # the message when it is a JSON object, at most 200 fields
)
"""Columns of the ``events`` table as the offline engine reads them, in order, with their DuckDB types; the ingest adds
the hot fields (``collector.ingest.constants.HOT_FIELDS``) as columns named like the field: VARCHAR for the contract's
string fields (``HOT_STRING_FIELDS``), JSON for the others. How the ingest stores them: ``EVENT_STORED_COLUMNS``."""

JSON_MESSAGE_COLUMN = "@jsonMessage"
"""BOOLEAN: the message is one JSON object (its fields are the message's own)."""
JSON_FIELDS_COLUMN = "@jsonFields"
"""VARCHAR: the discovered fields as a JSON object text when they are not the message itself (the first embedded JSON
fragment of a text message, or a JSON message cut to its first 200 fields); NULL otherwise."""

INGEST_CHECKS_COLUMN = "@ingestChecks"
"""TINYINT: what the ingest still has to look at in the row's message, as the bits of
``collector.ingest.constants.IngestCheck`` (NULL: nothing), computed by the INSERT that writes the row, while the
message is in memory, so that counting them does not read every stored message again."""

EVENT_STORED_COLUMNS: tuple[tuple[str, str], ...] = tuple(c for c in EVENT_COLUMNS if c[0] != "@json") + (
    (JSON_MESSAGE_COLUMN, "BOOLEAN"), (JSON_FIELDS_COLUMN, "VARCHAR"), (INGEST_CHECKS_COLUMN, "TINYINT"))
"""Columns the ingest stores. ``@json`` is not stored (it would be a second copy of every JSON message): it is the
virtual column ``JSON_VIRTUAL_SQL`` over ``@message``, ``@jsonMessage`` and ``@jsonFields``. A store made before
``INGEST_CHECKS_COLUMN`` existed gets it (NULL in its earlier rows) when next opened."""

JSON_VIRTUAL_SQL = (f'CASE WHEN "{JSON_FIELDS_COLUMN}" IS NOT NULL THEN "{JSON_FIELDS_COLUMN}" '
                    f'WHEN "{JSON_MESSAGE_COLUMN}" THEN "@message" END')
"""The ``@json`` column of the ingest's events table: ``VARCHAR GENERATED ALWAYS AS (JSON_VIRTUAL_SQL) VIRTUAL``, JSON
object text that the ingest parsed (DuckDB's JSON functions read VARCHAR as they read JSON). Not typed JSON: a cast to
JSON parses the text again, on every row an INSERT writes (DuckDB evaluates generated columns to verify them) and on
every read."""

INTERNAL_EVENT_COLUMNS = frozenset({"@seq", "@json", JSON_MESSAGE_COLUMN, JSON_FIELDS_COLUMN, INGEST_CHECKS_COLUMN})
"""Columns of the events table that are not Logs Insights fields (a query cannot name them)."""

_TS, _S, _I, _F, _B = "TIMESTAMP", "VARCHAR", "BIGINT", "DOUBLE", "BOOLEAN"

TABLES: Mapping[str, Table] = MappingProxyType(
    {
        t.name: t
        for t in (
            Table(
                "outcomes",
                (("time", _TS), ("service", _S), ("operation", _S), ("event_source", _S), ("outcome", _S), ("events", _I)),
                "Emitter outcome records per 1-minute bin (bin start) by service/operation/event source/outcome. "
                "events = number of log records = the metric count for that outcome.",
            ),
            Table(
                "record_age",
                (("time", _TS), ("service", _S), ("operation", _S), ("event_source", _S), ("records", _I),
                 ("p50_ms", _F), ("p95_ms", _F), ("max_ms", _F)),
                "RecordAge (iterator age per record, ms) of 'received' records per 1-minute bin.",
            ),
            Table(
                "attempts",
                (("service", _S), ("operation", _S), ("event_source", _S), ("attempt", _I), ("events", _I)),
                "Distribution of delivery attempt numbers over 'received' records.",
            ),
            Table(
                "rates",
                (("time", _TS), ("service", _S), ("operation", _S), ("received", _I), ("redeliveries", _I),
                 ("retryable_failures", _I), ("poison_messages", _I), ("retry_rate", _F), ("poison_rate", _F)),
                "Per 1-minute bin: retry_rate = retryable_failures / received, poison_rate = poison_messages / received "
                "(fractions 0..1, null when received = 0).",
            ),
            Table(
                "stuck_keys",
                (("idempotency_key", _S), ("service", _S), ("operation", _S), ("last_status", _S), ("last_outcome", _S),
                 ("claimed_at", _TS), ("last_seen", _TS), ("in_progress_expires_at", _TS), ("attempts", _I),
                 ("last_request_id", _S), ("age_s", _F), ("expired", _B)),
                "Keys whose latest idempotency_status is IN_PROGRESS. age_s = window end - claimed_at (seconds); "
                "expired = in_progress_expires_at < window end (stuck: claimed and never completed within the lock timeout).",
            ),
            Table(
                "conflicting_keys",
                (("idempotency_key", _S), ("service", _S), ("operation", _S), ("conflicts", _I),
                 ("first_seen", _TS), ("last_seen", _TS)),
                "Keys reused with a different payload hash (payload_conflict outcomes), most conflicts first.",
            ),
            Table(
                "error_codes",
                (("time", _TS), ("service", _S), ("operation", _S), ("outcome", _S), ("error_code", _S),
                 ("error_class", _S), ("events", _I)),
                "Failure outcomes per 1-minute bin by error code and class.",
            ),
            Table(
                "invocations",
                (("time", _TS), ("log_group", _S), ("account_id", _S), ("invocations", _I), ("cold_starts", _I),
                 ("timeouts", _I), ("avg_duration_ms", _F), ("p95_duration_ms", _F), ("max_duration_ms", _F),
                 ("max_memory_used_mb", _F), ("avg_init_duration_ms", _F), ("max_init_duration_ms", _F),
                 ("memory_size_mb", _F)),
                "Lambda REPORT lines per 1-minute bin per log group (name and account): invocations, cold starts (Init Duration present), "
                "timeouts (Status: timeout), durations (ms), peak memory used (MB), init duration of the cold "
                "starts (ms) and the configured memory size (MB).",
            ),
            Table(
                "library_signals",
                (("time", _TS), ("log_group", _S), ("account_id", _S), ("library", _S), ("signal", _S), ("events", _F)),
                "What Powertools (Metrics EMF, Logger, idempotency exceptions) and aws-embedded-metrics users already "
                "emit, per 1-minute bin per log group (name and account): signal is an emitter Outcome value where one maps, else the metric name.",
            ),
            Table(
                "trail",
                (("timestamp", _TS), ("log_group", _S), ("account_id", _S), ("service", _S), ("operation", _S), ("event_source", _S),
                 ("outcome", _S), ("idempotency_key", _S), ("idempotency_status", _S), ("event_id", _S),
                 ("correlation_id", _S), ("function_request_id", _S), ("attempt", _I), ("error_code", _S),
                 ("record_age_ms", _F), ("remaining_time_ms", _F), ("message", _S)),
                "Every emitter outcome record (no 10,000-row cap when collected locally), with its log group (name and "
                "account), for the events explorer.",
            ),
        )
    }
)
