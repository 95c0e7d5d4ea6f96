"""Engines of the fake Logs Insights server (``tests.support.fake_logs_insights.FakeLogsInsightsServer``): how a query over the
server's events becomes result rows. ``@log`` is ``"<FAKE_ACCOUNT_ID>:<log group>"`` in every engine, the form
CloudWatch returns ("a log group identifier in the form of account-id:log-group-name"). ``InsightsEngine`` answers with the offline Logs Insights engine;
``raw_events_engine`` and ``trail_engine`` ignore the query (for tests of the runner and of the collector that must
not depend on the offline engine). ``load_export_lines`` reads export-to-S3 style files (the demo's logs) as events.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from collector.cloudwatch.scan import api_text
from collector.insights.log_identifier import log_identifier
from collector.insights.result import format_timestamp
from collector.insights.sql import sql_literal

if TYPE_CHECKING:
    from tests.support.fake_logs_insights import FakeLogsInsightsServer

__all__ = ["FAKE_ACCOUNT_ID", "Engine", "InsightsEngine", "Rows", "default_engine", "format_ts", "insights_engine",
           "load_export_lines", "raw_events_engine", "trail_engine"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

FAKE_ACCOUNT_ID = "123456789012"
"""The account of the fake Logs Insights server (``tests.support.fake_logs_insights``): the AWS documentation's
example account ID, also moto's default. Its ``@log`` values are ``"123456789012:<log group>"``, as CloudWatch returns them."""

Rows = list[list[tuple[str, str | None]]]
Engine = Callable[[str, dict[str, list[dict[str, Any]]], int, int], Rows]
"""engine(query, {log_group: events}, start_s, end_s) -> rows, each a list of (field, string value or None).
Events are filter-log-events dicts already restricted to [start_s, end_s] (inclusive, whole seconds)."""


def format_ts(ms: int) -> str:
    """Epoch ms -> ``YYYY-MM-DD HH:MM:SS.mmm`` (UTC), how Logs Insights returns ``@timestamp``."""
    return format_timestamp(_EPOCH + timedelta(milliseconds=int(ms)))


def raw_events_engine(query: str, groups: dict[str, list[dict[str, Any]]], start: int, end: int) -> Rows:
    """Engine that ignores the query and returns every event: ``@timestamp``, ``@message``, ``@logStream``, ``@log``,
    newest first (the Logs Insights default order). For tests of the runner itself (splitting, paging, faults)."""
    evs = [(e["timestamp"], g, e) for g, events in groups.items() for e in events]
    evs.sort(key=lambda t: (-t[0], t[1], t[2].get("eventId", "")))
    return [[("@timestamp", format_ts(ts)), ("@message", e["message"]), ("@logStream", e.get("logStreamName")),
             ("@log", log_identifier(FAKE_ACCOUNT_ID, g))] for ts, g, e in evs]


class InsightsEngine:
    """Engine backed by the offline Logs Insights engine (``collector.insights.run_query``) over one
    ``collector.ingest.EventStore`` of all the server's events (``tests.support.insights_events.events_connection`` while
    the ingest is not installed), rebuilt only when events are added. A query over some log groups runs on a view
    restricted to them; the time window is applied by ``run_query`` (start/end inclusive, as StartQuery).
    Values are rendered as the API does: strings; nulls omitted by the server."""

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        self._store: Any = None
        self._views: dict[tuple[tuple[str, ...], str | None], str] = {}

    def __call__(self, query: str, groups: dict[str, list[dict[str, Any]]], start: int, end: int) -> Rows:
        # called without a server (direct use): build a store for just these events
        return self._run(self._build(groups), "events", query, start, end)

    def run_on(self, server: FakeLogsInsightsServer, query: str, names: tuple[str, ...], start: int,
               end: int, only: str | None = None) -> Rows:
        """Run over the server's events of log groups ``names``; ``only``: an SQL condition further restricting the
        events the query sees (the indexed events a filterIndex query reads)."""
        key = (id(server), server.version)
        if self._key != key:
            self._store, self._key, self._views = self._build(server.groups), key, {}
        table = self._views.get((names, only))
        if table is None:
            table = f"q_{len(self._views)}"
            in_list = ", ".join(sql_literal(log_identifier(FAKE_ACCOUNT_ID, n)) for n in names)
            self._store.connection.execute(f'CREATE TEMP VIEW {table} AS SELECT * FROM {self._store.table} '
                                           f'WHERE "@log" IN ({in_list})' + (f" AND {only}" if only else "")
                                           ).fetchall()
            self._views[(names, only)] = table
        return self._run(self._store, table, query, start, end)

    @staticmethod
    def _build(groups: dict[str, list[dict[str, Any]]]) -> Any:
        from collector.ingest import EventStore

        store = EventStore(account_id=FAKE_ACCOUNT_ID)
        for g, events in sorted(groups.items()):
            if events:
                store.ingest_events(events, g)
        return store

    @staticmethod
    def _run(store: Any, table: str, query: str, start: int, end: int) -> Rows:
        from types import SimpleNamespace

        from collector.insights import run_query

        res = run_query(SimpleNamespace(connection=store.connection, table=table), query, start=start, end=end,
                        limit_cap=None)
        return [[(k, api_text(v)) for k, v in rec.items()] for rec in res.to_records_json()]


def insights_engine(query: str, groups: dict[str, list[dict[str, Any]]], start: int, end: int) -> Rows:
    """One-shot form of ``InsightsEngine`` (builds a store for ``groups``): the offline path of tests."""
    return InsightsEngine()(query, groups, start, end)


def trail_engine(query: str, groups: dict[str, list[dict[str, Any]]], start: int, end: int) -> Rows:
    """Simple evaluator (ignores the query): one ``trail``-table row per JSON log record that has an ``outcome``
    key: ``timestamp`` (the event time), ``log_group`` and every other trail column read from the record's key of
    the same name (``message`` = the raw message); ``log_group`` is ``@log`` (account-qualified), as ``@log as
    log_group`` returns it. For collector tests that must not depend on the offline engine."""
    from collector.tables import TABLES

    cols = TABLES["trail"].column_names
    out: Rows = []
    for g, events in groups.items():
        for e in sorted(events, key=lambda e: e["timestamp"]):
            try:
                rec = json.loads(e["message"])
            except ValueError:
                continue
            if not isinstance(rec, dict) or "outcome" not in rec:
                continue
            row: list[tuple[str, str | None]] = [("timestamp", format_ts(e["timestamp"])),
                                                 ("log_group", log_identifier(FAKE_ACCOUNT_ID, g))]
            for c in cols[3:]:  # after timestamp, log_group, account_id (which no query returns)
                v = e["message"] if c == "message" else rec.get(c)
                row.append((c, None if v is None else str(v)))
            out.append(row)
    return out


def default_engine() -> Engine:
    """The offline engine (``InsightsEngine``)."""
    return InsightsEngine()


def load_export_lines(path: Any) -> list[dict[str, Any]]:
    """Events (filter-log-events dicts: ``timestamp`` epoch ms, ``message``, ``logStreamName``, ``eventId``) of a
    CloudWatch export-to-S3 style file (``<ISO-8601 UTC> <message>`` per event, e.g. the demo's logs), framed by the
    ingest's own rule (``collector.ingest.line_formats``: continuation lines join the event before them).
    Lines before the first timestamped one have no time and are left out."""
    from pathlib import Path

    from collector.ingest import EventStore, LogFormat, Reason

    store = EventStore(hot_fields=())
    try:
        rep = store.ingest_bytes(Path(path).read_bytes(), Path(path).name, fmt=LogFormat.EXPORT_S3)
        rows = store.connection.execute('SELECT "@timestamp", "@message" FROM events ORDER BY "@seq"').fetchall()
    finally:
        store.close()
    if rep.by_reason.get(Reason.EXPORT_LINE_WITHOUT_TIMESTAMP):
        rows = rows[1:]  # the lines before the first timestamped one: the first event, the only one without a time
    return [{"timestamp": ts, "message": msg, "logStreamName": "export", "eventId": f"{i:010d}"}
            for i, (ts, msg) in enumerate(rows)]