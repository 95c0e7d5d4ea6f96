"""Ingest of real Lambda / CloudWatch log formats into a DuckDB events table (``EventStore``).

Formats (sniffed, plain or gzip): JSON lines (emitter, Powertools, aws-embedded-metrics), the Lambda
text format, the Lambda JSON log format, ``aws logs filter-log-events`` / ``get-log-events`` output,
the CloudWatch console CSV export and CloudWatch export-to-S3 objects. Nothing is dropped silently:
every skipped, repaired or noteworthy line is counted by reason in the ``IngestReport``.

    from collector.ingest import EventStore
    store = EventStore()
    report = store.ingest_path("logs/orders.log")          # -> IngestReport
    store.connection.sql('SELECT count(*) FROM events')
"""

from collector.ingest.constants import HOT_FIELDS, MAX_DISCOVERED_FIELDS, MAX_EVENT_BYTES, Reason
from collector.ingest.exceptions import IngestError, UnknownFormatError
from collector.ingest.sniff import sniff
from collector.ingest.store import EventStore, default_log_group
from collector.ingest.types import FileReport, IngestReport, LogFormat

__all__ = [
    "HOT_FIELDS", "MAX_DISCOVERED_FIELDS", "MAX_EVENT_BYTES", "EventStore", "FileReport",
    "IngestError", "IngestReport", "LogFormat", "Reason", "UnknownFormatError", "default_log_group", "sniff",
]
