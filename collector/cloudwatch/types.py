"""Data types of the CloudWatch collector (results of queries, statistics, what the manifest records)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collector.cloudwatch.windows import Window


@dataclass
class QueryStats:
    """GetQueryResults ``statistics`` summed over queries. Units: records (events) and bytes."""

    records_matched: float = 0.0
    records_scanned: float = 0.0
    bytes_scanned: float = 0.0

    def add(self, other: QueryStats) -> None:
        self.records_matched += other.records_matched
        self.records_scanned += other.records_scanned
        self.bytes_scanned += other.bytes_scanned

    @classmethod
    def from_api(cls, stats: dict[str, Any] | None) -> QueryStats:
        stats = stats or {}
        return cls(float(stats.get("recordsMatched", 0.0)), float(stats.get("recordsScanned", 0.0)),
                   float(stats.get("bytesScanned", 0.0)))

    def to_json(self) -> dict[str, float]:
        return {"records_matched": self.records_matched, "records_scanned": self.records_scanned,
                "bytes_scanned": self.bytes_scanned}


@dataclass
class QueryAttempt:
    """One StartQuery and its outcome.

    ``status``: the final QueryStatus (Complete, Failed, Cancelled, Timeout, Unknown) or ``DeadlineExceeded`` when
    our own deadline passed and StopQuery was called. ``rows``: rows received (all pages). ``capped``: the result
    hit the row cap (more rows exist than were returned). ``duration_s``: StartQuery to final status (wall clock).
    """

    query_id: str
    window: Window
    log_groups: tuple[str, ...]
    status: str
    rows: int = 0
    capped: bool = False
    pages: int = 0
    duration_s: float = 0.0
    stats: QueryStats = field(default_factory=QueryStats)

    def to_json(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "start": self.window.start, "end": self.window.end,
                "log_groups": len(self.log_groups), "status": self.status, "rows": self.rows,
                "capped": self.capped, "pages": self.pages, "duration_s": round(self.duration_s, 3),
                **self.stats.to_json()}


@dataclass
class WindowResult:
    """Final result for one requested window over one batch of <= 50 log groups, after any splits and retries.

    ``rows``: list of dicts field -> string value (as GetQueryResults returns them, ``@ptr`` removed) in the
    order of the sub-windows. ``status``: ``complete``, ``truncated`` (some sub-window still capped at the row
    limit and could not be split further: rows are missing) or ``failed`` (some sub-window never completed;
    ``error`` says why). ``sub_windows``: the windows actually queried to completion.
    """

    window: Window
    log_groups: tuple[str, ...]
    rows: list[dict[str, str | None]] = field(default_factory=list)
    status: str = "complete"
    error: str | None = None
    sub_windows: list[Window] = field(default_factory=list)
    truncated_windows: list[Window] = field(default_factory=list)
    attempts: list[QueryAttempt] = field(default_factory=list)
    stats: QueryStats = field(default_factory=QueryStats)
