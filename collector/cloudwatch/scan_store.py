"""The events combined scans returned (``collector.cloudwatch.scan``), kept per window for later runs.

Layout: ``<out>/cloudwatch/scans/<start>-<end>.parquet``, one file per scanned window (columns ``timestamp`` epoch
ms, ``log_group``, ``account_id``, ``log_stream``, ``message``), and the manifest's ``scan`` section (``ScanLedger``):
per file its window, state (complete | partial | truncated), the filters it was scanned with, and the sub-windows
still capped at the row limit.

A table whose window was scanned before is computed again from the file, without a query: a changed standard query
costs nothing to re-collect, and ``stuck_keys`` (whose rows depend on every event of the range) reads the windows
already collected instead of scanning the whole ``--since`` range on every run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from collector.cloudwatch.scan import ScannedEvent
from collector.cloudwatch.windows import Window, merge_adjacent

SCANS_DIR = Path("cloudwatch") / "scans"

SETTLED = ("complete", "truncated")
"""States of a scanned window that later runs reuse (``partial`` windows are scanned again: late events)."""

_SCHEMA = pa.schema([("timestamp", pa.int64()), ("log_group", pa.string()), ("account_id", pa.string()),
                     ("log_stream", pa.string()), ("message", pa.string())])


def part_path(out: Path, w: Window) -> Path:
    return out / SCANS_DIR / f"{w.key()}.parquet"


def write_part(out: Path, w: Window, events: Sequence[ScannedEvent]) -> None:
    """Write the events of window ``w`` (atomically: a killed run leaves the previous file or none)."""
    p = part_path(out, w)
    p.parent.mkdir(parents=True, exist_ok=True)
    cols: list[list[Any]] = [[e.timestamp for e in events], [e.log_group for e in events],
                             [e.account_id for e in events], [e.log_stream for e in events],
                             [e.message for e in events]]
    table = pa.Table.from_arrays([pa.array(c, type=t.type) for c, t in zip(cols, _SCHEMA)], schema=_SCHEMA)
    tmp = p.with_suffix(".parquet.tmp")
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(p)


def read_part(out: Path, w: Window) -> list[ScannedEvent]:
    """The events stored for window ``w``. Raises OSError when the file is missing or unreadable."""
    t = pq.read_table(part_path(out, w), schema=_SCHEMA)
    return [ScannedEvent(*row) for row in zip(*(t.column(i).to_pylist() for i in range(t.num_columns)))]


@dataclass
class ScanPart:
    """One stored window: ``state``, ``filters`` (id of the filter set in ``ScanLedger.filter_sets``), the capped
    sub-windows (``truncated``), the number of events."""

    window: Window
    state: str
    filters: str
    truncated: list[Window] = field(default_factory=list)
    events: int = 0


@dataclass
class ScanLedger:
    """The manifest's ``scan`` section: the stored windows of one set of log groups (``log_groups_sha256``)."""

    log_groups_sha256: str = ""
    parts: list[ScanPart] = field(default_factory=list)
    filter_sets: dict[str, list[str]] = field(default_factory=dict)
    stale: bool = False

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | None, log_groups_sha256: str, out: Path) -> ScanLedger:
        """The ledger of the previous run, or an empty one when the log groups changed (``stale``: files of another
        set of log groups may remain; the caller drops them with ``drop_all`` before scanning)."""
        doc = doc or {}
        if doc.get("log_groups_sha256") != log_groups_sha256:
            return cls(log_groups_sha256, stale=True)
        parts = [ScanPart(Window(*p["window"]), p["state"], p["filters"], [Window(*w) for w in p.get("truncated", [])],
                          int(p.get("events", 0))) for p in doc.get("parts", [])]
        return cls(log_groups_sha256, [p for p in parts if part_path(out, p.window).exists()],
                   {k: list(v) for k, v in (doc.get("filter_sets") or {}).items()})

    def to_json(self) -> dict[str, Any]:
        used = {p.filters for p in self.parts}
        return {"log_groups_sha256": self.log_groups_sha256,
                "filter_sets": {k: v for k, v in self.filter_sets.items() if k in used},
                "parts": [{"window": [p.window.start, p.window.end], "state": p.state, "filters": p.filters,
                           **({"truncated": [[w.start, w.end] for w in p.truncated]} if p.truncated else {}),
                           "events": p.events} for p in sorted(self.parts, key=lambda p: p.window)]}

    def filter_set(self, filter_shas: Iterable[str]) -> str:
        shas = sorted(set(filter_shas))
        key = hashlib.sha256("\n".join(shas).encode()).hexdigest()[:16]
        self.filter_sets[key] = shas
        return key

    def serving(self, needed: Iterable[str], states: Sequence[str] = SETTLED) -> list[ScanPart]:
        """Stored windows in ``states`` made with every filter of ``needed``."""
        need = set(needed)
        return [p for p in self.parts if p.state in states and need <= set(self.filter_sets.get(p.filters, ()))]

    def covered(self, w: Window, needed: Iterable[str], states: Sequence[str] = SETTLED) -> bool:
        """True when stored windows (``states``, made with ``needed`` filters) cover all of ``w``."""
        return any(c.start <= w.start and w.end <= c.end
                   for c in merge_adjacent(p.window for p in self.serving(needed, states)))

    def overlapping(self, w: Window) -> list[ScanPart]:
        return [p for p in self.parts if not (p.window.end < w.start or p.window.start > w.end)]

    def record(self, out: Path, part: ScanPart, events: Sequence[ScannedEvent]) -> None:
        """Store ``part`` and its events, replacing every stored window it overlaps."""
        for old in self.overlapping(part.window):
            self.parts.remove(old)
            if old.window != part.window:
                part_path(out, old.window).unlink(missing_ok=True)
        write_part(out, part.window, events)
        self.parts.append(part)

    def forget(self, out: Path, w: Window) -> None:
        """Drop the stored windows overlapping ``w`` (its scan failed: nothing stored claims it)."""
        for old in self.overlapping(w):
            self.parts.remove(old)
            part_path(out, old.window).unlink(missing_ok=True)

    def events(self, out: Path, w: Window, needed: Iterable[str]) -> list[ScannedEvent]:
        """The stored events of ``w`` (from every serving window overlapping it, restricted to ``w``)."""
        lo, hi = w.start * 1000, w.end * 1000 + 999
        parts = [p for p in self.serving(needed, SETTLED + ("partial",))
                 if not (p.window.end < w.start or p.window.start > w.end)]
        return [e for p in parts for e in read_part(out, p.window) if lo <= e.timestamp <= hi]

    def truncated_in(self, w: Window) -> list[Window]:
        return [t for p in self.overlapping(w) for t in p.truncated if not (t.end < w.start or t.start > w.end)]


def drop_all(out: Path) -> None:
    d = out / SCANS_DIR
    if d.is_dir():
        for p in d.glob("*.parquet"):
            p.unlink()


def build_store(events: Iterable[ScannedEvent], account_id: str | None = None) -> Any:
    """An in-memory ``EventStore`` of ``events`` for the offline engine (``add_events``). ``account_id``: the
    account of the log groups (default: the events'). Raises ValueError for events of several accounts."""
    from collector.ingest import EventStore

    events = list(events)
    if account_id is None:
        account_id = next((e.account_id for e in events if e.account_id), None)
    store = EventStore(account_id=account_id) if account_id else EventStore()
    add_events(store, events)
    return store


def add_events(store: Any, events: Iterable[ScannedEvent]) -> None:
    """Ingest scanned ``events`` (one window's) into ``store``: per log group (sorted), in time order, ties in the
    order the scan returned them (as the engine's ``@seq`` keeps them). Raises ValueError for an event of another
    account than the store's (a collection reads one account's log groups)."""
    by_group: dict[str, list[ScannedEvent]] = {}
    for e in events:
        if e.account_id and e.account_id != store.account_id:
            raise ValueError(f"scanned events of several accounts: {store.account_id}, {e.account_id}")
        by_group.setdefault(e.log_group, []).append(e)
    for g in sorted(by_group):
        evs = sorted(by_group[g], key=lambda e: e.timestamp)  # stable
        store.ingest_events([{"timestamp": e.timestamp, "message": e.message, "logStreamName": e.log_stream}
                             for e in evs], g)
