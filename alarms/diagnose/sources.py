"""Where the evidence queries run: the one Logs Insights engine offline (``collector.insights.run_query``) over a
data directory's collected events, over its ``trail`` table, or over log files; or CloudWatch Logs Insights itself
(``collector.cloudwatch.runner``). Each source answers ``run(query) -> Evidence``; the rules read the rows the same
way whichever answered (numbers or numeric text).

- ``--data DIR`` collected by ``collect local``: ``DIR/events.duckdb``, opened read-only (every field, log streams,
  ``REPORT`` lines).
- ``--data DIR`` collected by ``collect cloudwatch`` (no events database): ``DIR/tables/trail.parquet``, one row per
  emitter outcome record, loaded as the events table. It has no log streams and no ``REPORT`` lines, so IW104 and
  IW109 are not observable there (said in their findings).
- log files or directories (any ingest format): ingested into memory first.
- CloudWatch: each query over the whole window and every log group (50 per StartQuery), never split (a split would
  cut an entity's records apart); a result over the row limit is kept and flagged truncated.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Protocol

from alarms.diagnose.exceptions import SourceError
from alarms.diagnose.types import Evidence

__all__ = ["EngineSource", "EvidenceSource", "cloudwatch_source", "open_data_dir", "open_log_files"]

log = logging.getLogger(__name__)

EVENTS_DB = "events.duckdb"
"""``collect local``'s events database in a data directory (``collector.collect.EVENTS_DB``)."""
TRAIL_FILE = Path("tables") / "trail.parquet"
"""The ``trail`` table in a data directory (``collector.tables``), written by both collectors."""

_TRAIL_AS_EVENTS = """
CREATE TABLE events AS SELECT
    CAST(epoch_ms(timestamp) AS BIGINT) AS "@timestamp",
    CASE WHEN account_id IS NULL OR account_id = '' THEN log_group ELSE account_id || ':' || log_group END AS "@log",
    CAST(NULL AS VARCHAR) AS "@logStream", CAST(NULL AS VARCHAR) AS "@message", CAST(NULL AS VARCHAR) AS "@type",
    CAST(NULL AS VARCHAR) AS "@requestId", CAST(NULL AS DOUBLE) AS "@initDuration",
    '1' AS schema_version, service, operation, event_source, outcome, idempotency_key, idempotency_status, event_id,
    correlation_id, function_request_id, attempt, error_code, record_age_ms, remaining_time_ms, message
FROM read_parquet($1)
"""
"""The trail's columns as the events table the engine reads: ``@timestamp`` in epoch ms, ``@log`` account-qualified
as the queries select it; every trail row is an emitter record (the trail query keeps only those)."""


class EvidenceSource(Protocol):
    """Runs Logs Insights queries over one body of evidence. ``description`` says what it is (for the report)."""

    description: str

    def run(self, query: str) -> Evidence: ...

    def run_many(self, queries: Sequence[str]) -> list[Evidence]: ...

    def close(self) -> None: ...


class EngineSource:
    """The offline engine over an events table of ``connection`` (a DuckDB connection; ``table`` its name), within
    ``start`` .. ``end`` (epoch seconds, inclusive; None = unbounded). No row limit: every entity is counted.

    ``workers``: more connections to the same database (cursors made before it was hardened) that
    :meth:`run_many` runs queries on at the same time (DuckDB runs one query per connection at a time)."""

    def __init__(self, connection: Any, description: str, *, table: str = "events", start: float | None = None,
                 end: float | None = None, workers: Sequence[Any] = (), keep: Any = None,
                 scratch: Path | None = None) -> None:
        self.connection = connection
        self.description = description
        self.table = table
        self.start, self.end = start, end
        self.workers = list(workers)
        self._keep = keep  # an object that owns the connection (an in-memory EventStore)
        self._scratch = scratch  # DuckDB's spill folder, removed on close

    def run(self, query: str, connection: Any = None) -> Evidence:
        """The rows of ``query`` (Logs Insights JSON values: numbers as numbers, timestamps as text).

        Raises:
            collector.insights.QueryError: the query does not compile or fails while it runs.
        """
        from collector.insights import run_query

        res = run_query(SimpleNamespace(connection=connection or self.connection, table=self.table), query,
                        start=self.start, end=self.end, limit_cap=None)
        return Evidence(tuple(res.to_records_json()))

    def run_many(self, queries: Sequence[str]) -> list[Evidence]:
        """:meth:`run` of each query, spread over the connection and its workers; results in ``queries``' order."""
        if not self.workers or len(queries) < 2:
            return [self.run(q) for q in queries]
        from concurrent.futures import ThreadPoolExecutor

        cons = [self.connection, *self.workers]
        lanes: list[list[int]] = [list(range(i, len(queries), len(cons))) for i in range(len(cons))]
        out: list[Evidence | None] = [None] * len(queries)

        def lane(k: int) -> None:
            for i in lanes[k]:
                out[i] = self.run(queries[i], cons[k])

        with ThreadPoolExecutor(max_workers=len(cons), thread_name_prefix="idemwatch-diagnose") as pool:
            for f in [pool.submit(lane, k) for k in range(len(cons))]:
                f.result()
        return [e for e in out if e is not None]

    def close(self) -> None:
        for con in (*self.workers, self.connection):
            try:
                con.close()
            except Exception:  # noqa: BLE001, S112 - closing a connection that already failed
                continue
        self._keep = None
        if self._scratch is not None:
            import shutil

            shutil.rmtree(self._scratch, ignore_errors=True)


def memory_limit() -> str:
    """DuckDB's memory limit for a diagnosis: ``IDEMWATCH_MEMORY_LIMIT``, else ``collect local``'s default
    (``collector.collect.DEFAULT_MEMORY_LIMIT``); DuckDB spills to a private folder beyond it."""
    import os

    from collector.collect import DEFAULT_MEMORY_LIMIT

    return os.environ.get("IDEMWATCH_MEMORY_LIMIT") or DEFAULT_MEMORY_LIMIT


def _config() -> tuple[dict[str, str | bool | int | float | list[str]], Path]:
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="idemwatch-diagnose-"))
    return {"memory_limit": memory_limit(), "temp_directory": str(scratch)}, scratch


def _session(con: Any) -> Any:
    from collector.ingest.store import SESSION_SETTINGS

    for setting in SESSION_SETTINGS:
        con.execute(setting)
    return con


def _with_workers(con: Any, n: int) -> list[Any]:
    """``n`` cursors of ``con`` set up like it, then ``con``'s database hardened (``harden_connection``)."""
    from collector.insights import harden_connection

    workers = [_session(con.cursor()) for _ in range(n)]
    harden_connection(con)
    return workers


def open_data_dir(data: Path, start: float | None = None, end: float | None = None, workers: int = 1) -> EngineSource:
    """The evidence of a data directory: its collected events (``events.duckdb``, read-only), else its ``trail``
    table. ``start``/``end``: epoch seconds, inclusive. DuckDB keeps to :func:`memory_limit` and spills to a
    private folder (removed on ``close()``), never into ``data``.

    Raises:
        SourceError: ``data`` is not a directory, holds neither, or another process is writing its events database
            (``collect local`` running).
    """
    import duckdb

    data = Path(data)
    if not data.is_dir():
        raise SourceError(f"no such data directory: {data}")
    db = data / EVENTS_DB
    if db.is_file():
        config, scratch = _config()
        try:
            con = _session(duckdb.connect(str(db), read_only=True, config=config))
        except duckdb.Error as exc:
            _remove(scratch)
            raise SourceError(f"cannot open {db} (is 'idemwatch collect local' writing it?): "
                              f"{str(exc).splitlines()[0]}") from None
        if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'events'").fetchone()[0]:
            con.close()
            _remove(scratch)
            raise SourceError(f"{db} holds no events table: collect into {data} with 'idemwatch collect local'")
        return EngineSource(con, f"events collected in {data}", start=start, end=end,
                            workers=_with_workers(con, workers), scratch=scratch)
    trail = data / TRAIL_FILE
    if trail.is_file():
        config, scratch = _config()
        con = _session(duckdb.connect(config=config))
        try:
            con.execute(_TRAIL_AS_EVENTS, [str(trail)])
        except duckdb.Error as exc:
            con.close()
            _remove(scratch)
            raise SourceError(f"cannot read {trail}: {str(exc).splitlines()[0]}") from None
        return EngineSource(con, f"trail table of {data} (no log streams, no REPORT lines)", start=start, end=end,
                            workers=_with_workers(con, workers), scratch=scratch)
    raise SourceError(f"{data} holds neither {EVENTS_DB} nor {TRAIL_FILE}: collect it first "
                      "('idemwatch collect local' or 'idemwatch collect cloudwatch')")


def _remove(scratch: Path) -> None:
    import shutil

    shutil.rmtree(scratch, ignore_errors=True)


def open_log_files(paths: Sequence[Path], start: float | None = None, end: float | None = None, *,
                   account_id: str | None = None, workers: int = 1) -> EngineSource:
    """The evidence of log files and directories (any ingest format, plain or gzip), ingested into memory.
    Skipped and repaired lines are logged as one note each (``IngestReport``), never dropped silently.

    Raises:
        SourceError: a path does not exist, or a file named on its own is not a log file.
    """
    from collector.ingest import EventStore, UnknownFormatError
    from collector.insights.constants import DEFAULT_ACCOUNT_ID

    for p in map(Path, paths):
        if not p.exists():
            raise SourceError(f"no such file or directory: {p}")
    store = EventStore(account_id=account_id or DEFAULT_ACCOUNT_ID)
    events = skipped = 0
    try:
        for p in map(Path, paths):
            report = store.ingest_path(p)
            events += report.events
            skipped += report.skipped
            for reason, n in sorted(report.by_reason.items()):
                log.warning("%s: %d line(s) %s", p, n, reason)
    except UnknownFormatError as exc:
        store.close()
        raise SourceError(str(exc)) from None
    desc = f"{events:,} log events of {len(paths)} path(s)" + (f" ({skipped:,} lines skipped)" if skipped else "")
    return EngineSource(store.connection, desc, start=start, end=end,
                        workers=_with_workers(store.connection, workers), keep=store)


class CloudWatchSource:
    """CloudWatch Logs Insights over ``log_groups`` in ``start`` .. ``end`` (epoch seconds, inclusive), through the
    collector's runner (concurrency cap, throttling backoff, paging up to 100,000 rows per query)."""

    def __init__(self, runner: Any, log_groups: Sequence[str], start: int, end: int) -> None:
        from collector.cloudwatch.windows import Window

        self.runner = runner
        self.log_groups = list(log_groups)
        self.window = Window(int(start), int(end))
        self.description = f"CloudWatch Logs Insights over {len(self.log_groups)} log group(s)"

    def run(self, query: str) -> Evidence:
        """Rows of ``query`` over every log group (batches of 50 concatenated: every query groups by ``@log``).

        Raises:
            SourceError: a query failed or was stopped.
        """
        return self.run_many([query])[0]

    def run_many(self, queries: Sequence[str]) -> list[Evidence]:
        """Every query at once through the runner's pool (its concurrency cap holds over all of them)."""
        from collector.cloudwatch.runner import QueryJob

        jobs = [QueryJob(q, tuple(self.log_groups), (self.window,), split_align_s=None) for q in queries]
        out = []
        for results in self.runner.run_jobs(jobs):
            rows: list[dict[str, Any]] = []
            truncated = False
            for res in results:
                if res.status == "failed":
                    raise SourceError(f"a Logs Insights query failed: {res.error}")
                truncated = truncated or res.status == "truncated"
                rows.extend(res.rows)
            out.append(Evidence(tuple(rows), truncated))
        return out

    def close(self) -> None:
        return None


def cloudwatch_source(client: Any, log_groups: Sequence[str] = (), prefixes: Sequence[str] = (), *, start: int,
                      end: int, config: Any = None) -> CloudWatchSource:
    """A :class:`CloudWatchSource` for the log groups named or matching ``prefixes`` (``DescribeLogGroups``).

    Raises:
        idemwatch.aws.AwsError or collector.cloudwatch.exceptions.CloudWatchCollectorError: a log group or prefix matches nothing, access is
            denied, credentials are missing.
    """
    from collector.cloudwatch.log_groups import discover_log_groups
    from collector.cloudwatch.runner import LogsInsightsRunner

    groups = discover_log_groups(client, log_groups, prefixes)
    return CloudWatchSource(LogsInsightsRunner(client, config), groups, start, end)
