"""Value types of the ingest: the format enum and the ingest report."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum

from collector.ingest.constants import Reason


class LogFormat(str, Enum):
    """The input formats (issue 3, "Ingest: real formats"; the AWS CLI's and SAM CLI's viewers: issue 39). The line
    formats' rules and sources: ``line_formats``."""

    JSON_LINES = "json-lines"  # one event per line: JSON objects (emitter, Powertools, EMF) or text
    LAMBDA_TEXT = "lambda-text"  # START/END/REPORT, [LEVEL]\t<ts>\t<request id>\t<msg>, multi-line tracebacks
    LAMBDA_JSON = "lambda-json"  # Lambda JSON log format: platform.* records + JSON app records
    FILTER_LOG_EVENTS = "filter-log-events"  # aws logs filter-log-events / get-log-events JSON output
    CONSOLE_CSV = "console-csv"  # CloudWatch console "Download search results (CSV)"
    EXPORT_S3 = "export-s3"  # CreateExportTask objects: "<ISO-8601> <message>" per line
    AWS_LOGS_TAIL = "aws-logs-tail"  # aws logs tail --format detailed: "<ISO-8601 us+00:00> <log stream> <message>"
    AWS_LOGS_TAIL_SHORT = "aws-logs-tail-short"  # aws logs tail --format short: "<YYYY-MM-DDTHH:MM:SS> <message>"
    SAM_LOGS = "sam-logs"  # sam logs: "<log stream> <ISO-8601+00:00> <message>", JSON messages indented


@dataclass
class FileReport:
    """What one source produced: ``events`` stored, lines ``skipped`` (no event), events ``repaired``
    (content changed to be stored) and every count ``by_reason`` (``constants.Reason`` codes)."""

    source: str
    format: str
    events: int = 0
    by_reason: Counter[str] = field(default_factory=Counter)
    compressed: bool = False
    bytes_read: int = 0
    """Bytes of the source read (compressed bytes for gzip)."""
    path: str = ""
    """How it was read (``IngestPath``)."""

    @property
    def skipped(self) -> int:
        return sum(n for r, n in self.by_reason.items() if r in Reason.SKIPPED)

    @property
    def repaired(self) -> int:
        return sum(n for r, n in self.by_reason.items() if r in Reason.REPAIRED)

    def count(self, reason: str, n: int = 1) -> None:
        if n:
            self.by_reason[reason] += int(n)

    def as_dict(self) -> dict[str, object]:
        return {"source": self.source, "format": self.format, "compressed": self.compressed, "events": self.events,
                "skipped": self.skipped, "repaired": self.repaired, "by_reason": dict(self.by_reason),
                "bytes_read": self.bytes_read, "ingest_path": self.path}


class IngestPath:
    """How a source was read (``FileReport.path``, the manifest's ``ingest_path``): why one file was slower."""

    DUCKDB_READER = "duckdb-line-reader"
    """A plain line file read by DuckDB's parallel CSV reader (``store.LINE_READER``), no byte through Python."""
    LINE_PIECES = "line-pieces"
    """Lines split in Python in pieces (gzip, ``\\r`` bytes, invalid UTF-8, over-long lines, small files) and framed
    in DuckDB."""
    JSON_STREAM = "json-stream"
    """A filter-log-events / get-log-events document parsed as a stream, events staged in batches."""
    CSV_STREAM = "csv-stream"
    """A console CSV export parsed as a stream (Python's ``csv``), rows staged in batches."""
    EVENTS = "events"
    """Event dicts handed over by the caller (``EventStore.ingest_events``)."""



@dataclass
class IngestReport:
    """Totals over the sources of one ``ingest_path`` / ``ingest_events`` call.

    ``events``: events stored; ``skipped``: input lines/events that produced no event; ``repaired``:
    events stored with changed content; ``by_reason``: reason code -> count (skipped, repaired and noted
    reasons, see ``constants.Reason``); ``per_file``: source -> FileReport.
    """

    per_file: dict[str, FileReport] = field(default_factory=dict)

    @property
    def events(self) -> int:
        return sum(f.events for f in self.per_file.values())

    @property
    def skipped(self) -> int:
        return sum(f.skipped for f in self.per_file.values())

    @property
    def repaired(self) -> int:
        return sum(f.repaired for f in self.per_file.values())

    @property
    def by_reason(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for f in self.per_file.values():
            total.update(f.by_reason)
        return dict(total)

    def add(self, report: FileReport) -> None:
        key, i = report.source, 2
        while key in self.per_file:  # the same file ingested twice in one report
            key, i = f"{report.source}#{i}", i + 1
        self.per_file[key] = report

    def merge(self, other: IngestReport) -> None:
        for r in other.per_file.values():
            self.add(r)

    def as_dict(self) -> dict[str, object]:
        return {"events": self.events, "skipped": self.skipped, "repaired": self.repaired,
                "by_reason": self.by_reason, "per_file": {k: v.as_dict() for k, v in self.per_file.items()}}
