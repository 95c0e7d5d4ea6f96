"""collect_local: run the standard queries over local log files and write the standard tables.

Layout written under ``out``::

    out/tables/<name>.parquet   one per table in collector/tables.py, exactly its columns/types
    out/manifest.json           sources, time window, query hashes, row counts, skipped lines
    out/events.duckdb           the collected events (kept so a later collect only adds new data)

Incremental collection ("collecting again only adds new data"): every source file is
fingerprinted (size + SHA-256). On a later run a file with the same fingerprint is skipped;
a line-oriented file (JSON lines, Lambda text, export-to-S3 lines; not gzip/CSV/JSON
documents) that grew by appending (its old bytes unchanged) has only the appended bytes
ingested; any other change (rewritten, truncated, or a non-appendable format) replaces the
events that file contributed before (tracked by their ``@seq`` range). The tables are then
recomputed from all collected events, so re-running with no new data writes identical
tables. ``since``/``until`` (epoch seconds, inclusive) select the time window of the tables;
events outside it stay collected for later windows.

Post-processing done here (documented in each query's header): ``stuck_keys.age_s`` and
``stuck_keys.expired`` relative to the window end, and the expansion of ``library_signals``
EMF documents / exception lines into (time, log_group, library, signal, events).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from collector.insights import QueryResult, run_query
from collector.insights.engine import prepare_query
from collector.insights.sql import Typed, as_num, as_text, quote_ident
from collector.insights.types import ValueType
from collector.tables import TABLES, Table

__all__ = [
    "MANIFEST_VERSION",
    "QUERIES_DIR",
    "CollectError",
    "add_stuck_key_ages",
    "collect_local",
    "expand_library_signals",
    "load_standard_queries",
    "query_added_columns",
]

QUERIES_DIR = Path(__file__).resolve().parent / "queries"
MANIFEST_VERSION = 1
EVENTS_DB = "events.duckdb"
_ADDED = re.compile(r"^#\s*columns added by collect_local:\s*(.+)$", re.MULTILINE)
_APPENDABLE_SUFFIXES = {".log", ".jsonl", ".ndjson", ".txt", ""}


class CollectError(RuntimeError):
    """A source cannot be collected (missing path, unreadable file, no standard query)."""


# --------------------------------------------------------------------------- queries
def load_standard_queries(directory: Path = QUERIES_DIR) -> dict[str, str]:
    """``{table name: query text}`` for every table in collector/tables.py.
    Raises CollectError when a table has no ``<name>.insights`` file."""
    out = {}
    for name in TABLES:
        p = directory / f"{name}.insights"
        if not p.is_file():
            raise CollectError(f"no standard query for table {name!r} ({p})")
        out[name] = p.read_text(encoding="utf-8")
    return out


def query_added_columns(text: str) -> tuple[str, ...]:
    """Columns a query header says collect_local adds (``# columns added by collect_local: a, b``)."""
    m = _ADDED.search(text)
    return tuple(c.strip() for c in m.group(1).split(",")) if m else ()


# --------------------------------------------------------------------------- post-processing
_EXCEPTION_NAME = re.compile(r"^\[ERROR\]\s(?:\S+\s+\S+\s+)?(Idempotency[A-Za-z]*Error):")


def _outcome_for_metric(name: str) -> str:
    from emitter.contract import METRIC_OUTCOME, Metric

    try:
        return METRIC_OUTCOME[Metric(name)].value
    except (ValueError, KeyError):
        return name


def _outcome_for_exception(name: str) -> str:
    from emitter.contract import EXCEPTION_OUTCOME

    mapped = EXCEPTION_OUTCOME.get(name)
    return mapped.value if mapped else name


def _emf_library(doc: Mapping[str, Any]) -> str:
    if "ServiceName" in doc and "ServiceType" in doc:
        return "aws-embedded-metrics"  # its default dimensions (LogGroup, ServiceName, ServiceType)
    if "service" in doc:
        return "powertools"  # Powertools Metrics always adds the "service" dimension
    return "emf"


def _metric_events(value: Any, unit: str | None) -> float | None:
    values = value if isinstance(value, list) else [value]
    nums = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not nums:
        return None
    return float(sum(nums)) if unit == "Count" else float(len(nums))


def expand_library_signals(rows: Iterable[tuple[datetime, str | None, str]]) -> tuple[list[tuple], int]:
    """Expand the library_signals query rows ``(@timestamp, @log, @message)`` into table rows
    ``(time, log_group, library, signal, events)`` summed per 1-minute bin.

    Returns (rows sorted by time/log_group/library/signal, number of EMF metric entries that
    were dropped because their value was not numeric).
    """
    acc: dict[tuple, float] = defaultdict(float)
    dropped = 0
    for ts, log_group, message in rows:
        minute = ts.replace(second=0, microsecond=0)
        m = _EXCEPTION_NAME.match(message or "")
        if m:
            acc[(minute, log_group, "powertools", _outcome_for_exception(m.group(1)))] += 1.0
            continue
        try:
            doc = json.loads(message)
        except (TypeError, ValueError):
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("_aws"), dict):
            continue
        library = _emf_library(doc)
        directives = doc["_aws"].get("CloudWatchMetrics")
        for directive in directives if isinstance(directives, list) else []:
            metrics = directive.get("Metrics") if isinstance(directive, dict) else None
            for metric in metrics if isinstance(metrics, list) else []:
                if not isinstance(metric, dict) or not isinstance(metric.get("Name"), str):
                    dropped += 1
                    continue
                name = metric["Name"]
                events = _metric_events(doc.get(name), metric.get("Unit"))
                if events is None:
                    dropped += 1
                    continue
                acc[(minute, log_group, library, _outcome_for_metric(name))] += events
    out = sorted(((k[0], k[1], k[2], k[3], v) for k, v in acc.items()),
                 key=lambda r: (r[0], r[1] or "", r[2], r[3]))
    return out, dropped


def add_stuck_key_ages(rows: list[dict[str, Any]], window_end: datetime | None) -> None:
    """Set ``age_s`` (window end - claimed_at, seconds) and ``expired`` (lock expiry before
    the window end) on stuck_keys rows, in place. Unknown inputs give null."""
    for r in rows:
        claimed, expires = r.get("claimed_at"), r.get("in_progress_expires_at")
        r["age_s"] = (window_end - claimed).total_seconds() if window_end and claimed else None
        r["expired"] = (expires < window_end) if window_end and expires else None


# --------------------------------------------------------------------------- writing tables
def _arrow_schema(table: Table):
    import pyarrow as pa

    types = {"TIMESTAMP": pa.timestamp("ms", tz="UTC"), "VARCHAR": pa.string(), "BIGINT": pa.int64(),
             "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_()}
    return pa.schema([(n, types[t]) for n, t in table.columns])


def _coerce(value: Any, duck_type: str) -> tuple[Any, bool]:
    """Value -> column type; returns (value, ok). A value that does not convert is null, not ok."""
    if value is None:
        return None, True
    try:
        if duck_type == "TIMESTAMP":
            if isinstance(value, datetime):
                return (value if value.tzinfo else value.replace(tzinfo=UTC)), True
            return None, False
        if duck_type == "BIGINT":
            f = float(value)
            if not f.is_integer():
                return None, False
            return int(f), True
        if duck_type == "DOUBLE":
            f = float(value)
            return (None, True) if math.isnan(f) else (f, True)
        if duck_type == "BOOLEAN":
            if isinstance(value, bool):
                return value, True
            if isinstance(value, (int, float)):
                return bool(value), True
            s = str(value).lower()
            return (s in ("true", "1"), True) if s in ("true", "false", "1", "0") else (None, False)
        return (value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list))
                else str(value)), True
    except (TypeError, ValueError):
        return None, False


def write_table(table: Table, records: Sequence[Mapping[str, Any]], path: Path) -> dict[str, int]:
    """Write ``records`` as ``path`` (Parquet) with exactly the table's columns and types.
    Returns ``{column: values that did not convert (written as null)}`` for columns with any."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    bad: dict[str, int] = {}
    cols = []
    for name, duck in table.columns:
        values = []
        for r in records:
            v, ok = _coerce(r.get(name), duck)
            if not ok:
                bad[name] = bad.get(name, 0) + 1
            values.append(v)
        cols.append(values)
    schema = _arrow_schema(table)
    arrow = pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(cols, schema)], schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".parquet.tmp")
    pq.write_table(arrow, tmp)
    tmp.replace(path)
    return bad


# --------------------------------------------------------------------------- sources
def _iter_files(paths: Sequence[Path]) -> list[tuple[Path, bool]]:
    """Files to collect as ``(path, named)``: ``named`` is False for files found inside a directory.

    Directories are read recursively, skipping hidden files and folders (as ``EventStore.ingest_path`` does).
    """
    files: list[tuple[Path, bool]] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            files.extend((f, False) for f in sorted(p.rglob("*")) if f.is_file()
                         and not any(part.startswith(".") for part in f.relative_to(p).parts))
        elif p.is_file():
            files.append((p, True))
        else:
            raise CollectError(f"no such file or directory: {p}")
    seen: set[str] = set()
    out: list[tuple[Path, bool]] = []
    for f, named in files:
        key = str(f.resolve())
        if key not in seen:
            seen.add(key)
            out.append((f, named))
    return out


def _sha256(path: Path, limit: int | None = None) -> str:
    h = hashlib.sha256()
    remaining = limit
    with open(path, "rb") as fh:
        while True:
            n = 1 << 20 if remaining is None else min(1 << 20, remaining)
            if n == 0:
                break
            chunk = fh.read(n)
            if not chunk:
                break
            h.update(chunk)
            if remaining is not None:
                remaining -= len(chunk)
    return h.hexdigest()


def _appendable(path: Path) -> bool:
    if path.suffix.lower() not in _APPENDABLE_SUFFIXES:
        return False
    with open(path, "rb") as fh:
        head = fh.read(64).lstrip()
    return not head.startswith(b"\x1f\x8b") and not head.startswith(b'{"events"')


@dataclass
class _Batch:
    report: Any
    rows: int
    seq: tuple[int, int] | None


class _EventsDB:
    """The persistent events table (out/events.duckdb) that every collect appends to."""

    def __init__(self, path: Path) -> None:
        import duckdb

        self.con = duckdb.connect(str(path))
        self.table = "events"

    @property
    def connection(self) -> Any:
        return self.con

    def exists(self) -> bool:
        return bool(self.con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'events'").fetchall()[0][0])

    def max_seq(self) -> int:
        if not self.exists():
            return -1
        v = self.con.execute('SELECT max("@seq") FROM events').fetchall()[0][0]
        return -1 if v is None else int(v)

    def append_from(self, store: Any) -> tuple[int, tuple[int, int] | None]:
        """Copy a fresh EventStore's events in, renumbering ``@seq`` after the current maximum.
        Column types are kept (JSON columns stay JSON; Arrow carries them as text)."""
        src_types = store.connection.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1 "
            "ORDER BY ordinal_position", [store.table]).fetchall()
        arrow = store.connection.sql(f"SELECT * FROM {_qi(store.table)}").to_arrow_table()
        n = arrow.num_rows
        if n == 0:
            return 0, None
        base = self.max_seq() + 1
        shift = base - _min_seq(arrow)
        select = ", ".join(
            f'"@seq" + {int(shift)} AS "@seq"' if name == "@seq" else f"CAST({_qi(name)} AS {duck}) AS {_qi(name)}"
            for name, duck in src_types)
        self.con.register("_iw_batch", arrow)
        try:
            if not self.exists():
                self.con.execute(f"CREATE TABLE events AS SELECT {select} FROM _iw_batch").fetchall()
            else:
                have = {r[0] for r in self.con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = 'events'").fetchall()}
                for name, duck in src_types:
                    if name not in have:
                        self.con.execute(f"ALTER TABLE events ADD COLUMN {_qi(name)} {duck}").fetchall()
                self.con.execute(f"INSERT INTO events BY NAME SELECT {select} FROM _iw_batch").fetchall()
        finally:
            self.con.unregister("_iw_batch")
        return n, (base, base + n - 1)

    def delete_ranges(self, ranges: Iterable[Sequence[int]]) -> int:
        removed = 0
        for lo, hi in ranges:
            removed += self.con.execute('DELETE FROM events WHERE "@seq" BETWEEN $1 AND $2', [lo, hi]).fetchall()[0][0]
        return removed

    def close(self) -> None:
        self.con.close()


def _qi(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _min_seq(arrow) -> int:
    import pyarrow.compute as pc

    v = pc.min(arrow.column("@seq")).as_py()
    return 0 if v is None else int(v)


def _report_json(report: Any) -> dict[str, Any]:
    by_reason = getattr(report, "by_reason", {}) or {}
    return {"events": int(getattr(report, "events", 0)), "skipped": int(getattr(report, "skipped", 0)),
            "repaired": int(getattr(report, "repaired", 0)), "by_reason": dict(by_reason)}


def _ingest_file(path: Path, db: _EventsDB, offset: int = 0, *, named: bool = True) -> _Batch:
    """Ingest one file (from byte ``offset`` on) into ``db``.

    Raises:
        CollectError: ``path`` was named explicitly and is not a log file (binary content). Found inside a
            directory, such a file (a ``.parquet``, an image…) is skipped and counted ``not_a_log_file``.
    """
    from collector.ingest import EventStore, UnknownFormatError
    from collector.ingest.constants import Reason
    from collector.ingest.types import FileReport, IngestReport

    store = EventStore()
    try:
        if offset:
            # Only the appended bytes, under the same file name so the derived log group is the same.
            with tempfile.TemporaryDirectory(prefix="idemwatch-tail-") as tmp:
                tail = Path(tmp) / path.name
                with open(path, "rb") as src, open(tail, "wb") as dst:
                    src.seek(offset)
                    shutil.copyfileobj(src, dst)
                report = store.ingest_path(tail)
        else:
            report = store.ingest_path(path)
    except UnknownFormatError as exc:
        if named:
            raise CollectError(str(exc)) from None
        skipped = FileReport(source=str(path), format="unknown")
        skipped.count(Reason.NOT_A_LOG_FILE)
        report = IngestReport()
        report.add(skipped)
        return _Batch(report, 0, None)
    rows, seq = db.append_from(store)
    return _Batch(report, rows, seq)


# --------------------------------------------------------------------------- main entry
def _iso(dt: datetime | None) -> str | None:
    return None if dt is None else dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _epoch_to_dt(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(float(seconds), tz=UTC)


Progress = Callable[[str, str, int, int], None]
"""``progress(stage, item, done, total)``: stage "ingest" (item = file path) or "tables" (item = table name)."""


def collect_local(paths: Sequence[Path], out: Path, since: float | None = None, until: float | None = None,
                  queries: Mapping[str, str] | None = None, *, progress: Progress | None = None) -> dict[str, Any]:
    """Ingest log files and write every standard table plus the manifest under ``out``.

    Args:
        paths: files and/or directories (read recursively; hidden files skipped). Any of the
            ingest formats, plain or gzip.
        out: output directory (created).
        since, until: table window in epoch seconds, both inclusive; None = unbounded.
        queries: {table: query text} override (default: collector/queries/*.insights).
        progress: optional callback, called before each file and each table (for a progress bar).
    Returns:
        The manifest dict (also written to ``out/manifest.json``).
    Raises:
        CollectError: a path does not exist, a file named in ``paths`` is not a log file (binary), or a
            table has no query. (A binary file found inside a directory is skipped and counted instead.)
        collector.insights.QueryError: a standard query does not compile.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    queries = dict(queries) if queries is not None else load_standard_queries()
    files = _iter_files(paths)
    manifest_path = out / "manifest.json"
    previous = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    prev_sources = {s["path"]: s for s in previous.get("sources", [])}

    db = _EventsDB(out / EVENTS_DB)
    try:
        sources, run = _ingest_sources(files, prev_sources, db, progress)
        tables_info, window = _write_tables(db, out, queries, since, until, progress)
    finally:
        db.close()
    counts = {"events": 0, "skipped": 0, "repaired": 0}
    by_reason: dict[str, int] = defaultdict(int)
    for s in sources.values():
        for k in counts:
            counts[k] += s["ingest"][k]
        for reason, n in s["ingest"]["by_reason"].items():
            by_reason[reason] += n
    totals: dict[str, Any] = {**counts, "by_reason": dict(by_reason)}
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "collector": "local",
        "collected_at": _iso(datetime.now(UTC)),
        "time_window": window,
        "sources": sorted(sources.values(), key=lambda s: s["path"]),
        "ingest": totals,
        "this_run": run,
        "queries": {name: {"file": f"collector/queries/{name}.insights",
                           "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
                    for name, text in queries.items()},
        "tables": tables_info,
    }
    tmp = manifest_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False, default=str))
    tmp.replace(manifest_path)
    return manifest


def _ingest_sources(files: list[tuple[Path, bool]], prev_sources: dict[str, dict], db: _EventsDB, progress: Progress | None = None
                    ) -> tuple[dict[str, dict], dict[str, Any]]:
    sources = dict(prev_sources)  # sources collected earlier stay listed (their events stay collected)
    run = {"new": 0, "unchanged": 0, "appended": 0, "replaced": 0, "events_added": 0, "events_removed": 0,
           "skipped_lines": 0}
    for i, (f, named) in enumerate(files):
        if progress is not None:
            progress("ingest", str(f), i, len(files))
        key = str(f.resolve())
        size = f.stat().st_size
        digest = _sha256(f)
        prev = prev_sources.get(key)
        if prev is not None and prev["size"] == size and prev["sha256"] == digest:
            run["unchanged"] += 1
            continue
        entry = {"path": key, "size": size, "sha256": digest, "collected_at": _iso(datetime.now(UTC))}
        if (prev is not None and size > prev["size"] and _appendable(f)
                and _sha256(f, prev["size"]) == prev["sha256"]):
            batch = _ingest_file(f, db, offset=prev["size"], named=named)
            run["appended"] += 1
            ranges = list(prev["seq_ranges"]) + ([list(batch.seq)] if batch.seq else [])
            ingest = _merge_reports(prev["ingest"], _report_json(batch.report))
        else:
            if prev is not None:
                run["events_removed"] += db.delete_ranges(prev.get("seq_ranges", []))
                run["replaced"] += 1
            else:
                run["new"] += 1
            batch = _ingest_file(f, db, named=named)
            ranges = [list(batch.seq)] if batch.seq else []
            ingest = _report_json(batch.report)
        run["events_added"] += batch.rows
        run["skipped_lines"] += int(getattr(batch.report, "skipped", 0))
        entry.update({"seq_ranges": ranges, "ingest": ingest})
        sources[key] = entry
    return sources, run


def _merge_reports(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    by: dict[str, int] = defaultdict(int)
    for r in (a, b):
        for k, v in (r.get("by_reason") or {}).items():
            by[k] += v
    return {"events": a["events"] + b["events"], "skipped": a["skipped"] + b["skipped"],
            "repaired": a["repaired"] + b["repaired"], "by_reason": dict(by)}


def _write_tables(db: _EventsDB, out: Path, queries: Mapping[str, str], since: float | None,
                  until: float | None, progress: Progress | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    data_start = data_end = None
    if db.exists():
        where, params = [], []
        if since is not None:
            where.append('"@timestamp" >= $1')
            params.append(math.ceil(since * 1000))
        if until is not None:
            where.append(f'"@timestamp" <= ${len(params) + 1}')
            params.append(math.floor(until * 1000))
        lo, hi = db.con.execute('SELECT min("@timestamp"), max("@timestamp") FROM events'
                                + (" WHERE " + " AND ".join(where) if where else ""), params).fetchall()[0]
        data_start = None if lo is None else datetime.fromtimestamp(lo / 1000, tz=UTC)
        data_end = None if hi is None else datetime.fromtimestamp(hi / 1000, tz=UTC)
    window_end = _epoch_to_dt(until) if until is not None else data_end
    info: dict[str, Any] = {}
    for i, (name, table) in enumerate(TABLES.items()):
        if progress is not None:
            progress("tables", name, i, len(TABLES))
        started = time.perf_counter()
        path = out / "tables" / f"{name}.parquet"
        if db.exists() and name not in _PYTHON_POST_PROCESSED:
            added = _stuck_key_age_sql(window_end) if name == "stuck_keys" else None
            rows, bad = _write_table_via_sql(db, table, queries[name], since, until, path, added)
        else:
            records = _run_table(db, name, table, queries[name], since, until, window_end) if db.exists() else []
            rows, bad = len(records), write_table(table, records, path)
        info[name] = {"path": f"tables/{name}.parquet", "rows": rows,
                      "query_seconds": round(time.perf_counter() - started, 4)}
        if bad:
            info[name]["bad_values"] = bad
    window = {"since": _iso(_epoch_to_dt(since)), "until": _iso(_epoch_to_dt(until)),
              "data_start": _iso(data_start), "data_end": _iso(data_end), "window_end": _iso(window_end)}
    return info, window


_PYTHON_POST_PROCESSED = {"library_signals"}


def _stuck_key_age_sql(window_end: datetime | None) -> dict[str, str]:
    """SQL of the stuck_keys columns relative to the window end (same rule as add_stuck_key_ages).
    ``window_end`` comes from the manifest window, rendered as an integer literal."""
    if window_end is None:
        return {"age_s": "CAST(NULL AS DOUBLE)", "expired": "CAST(NULL AS BOOLEAN)"}
    end_ms = round(window_end.timestamp() * 1000)
    return {"age_s": f'(({end_ms} - epoch_ms("claimed_at")) / 1000.0)',
            "expired": f'(epoch_ms("in_progress_expires_at") < {end_ms})'}


def _convert_sql(t: Typed, duck_type: str) -> str:
    """SQL converting an engine value to a table column type (null when it does not convert)."""
    if duck_type == "VARCHAR":
        return as_text(t)
    if duck_type == "DOUBLE":
        return f"CAST({as_num(t)} AS DOUBLE)"
    if duck_type == "BIGINT":
        n = f"CAST({as_num(t)} AS DOUBLE)"
        return f"(CASE WHEN {n} = floor({n}) AND abs({n}) < 9.2e18 THEN CAST({n} AS BIGINT) END)"
    if duck_type == "TIMESTAMP":
        return t.sql if t.type is ValueType.TIMESTAMP else f"TRY_CAST({as_text(t)} AS TIMESTAMP)"
    if duck_type == "BOOLEAN":
        if t.type is ValueType.BOOLEAN:
            return t.sql
        return (f"(CASE lower({as_text(t)}) WHEN 'true' THEN TRUE WHEN '1' THEN TRUE "
                f"WHEN 'false' THEN FALSE WHEN '0' THEN FALSE END)")
    raise CollectError(f"unsupported table column type {duck_type}")


def _write_table_via_sql(db: _EventsDB, table: Table, query: str, since: float | None, until: float | None,
                         path: Path, added: Mapping[str, str] | None = None) -> tuple[int, dict[str, int]]:
    """Run a standard query and write its table without a round trip through Python values:
    the engine's SQL is wrapped in a typed SELECT, fetched as Arrow and written as Parquet.
    ``added``: {column: SQL over the typed query columns} for columns the query cannot produce."""
    import pyarrow.parquet as pq

    added = dict(added or {})
    con, compiled = prepare_query(db, query, since, until, limit_cap=None)
    names = [n for n, _ in compiled.columns]
    if names + list(added) != list(table.column_names):
        raise CollectError(f"query for table {table.name!r} returns columns {names}, "
                           f"the table has {list(table.column_names)}")
    aliases = [f"c{i}" for i in range(len(names))]
    con.execute(f"CREATE OR REPLACE TEMP TABLE _iw_result AS SELECT * FROM ({compiled.sql}) AS q({', '.join(aliases)})",
                compiled.params).fetchall()
    try:
        converted, bad_terms = [], []
        for alias, (name, vtype), (_, duck) in zip(aliases, compiled.columns, table.columns[:len(names)]):
            t = Typed(vtype, alias)
            expr = _convert_sql(t, duck)
            converted.append(f"{expr} AS {quote_ident(name)}")
            if duck != "VARCHAR" and not (duck == "TIMESTAMP" and vtype is ValueType.TIMESTAMP):
                # only these conversions can fail (text and timestamps-as-timestamps cannot)
                bad_terms.append((name, f"count(*) FILTER (WHERE {as_text(t)} IS NOT NULL AND ({expr}) IS NULL)"))
        counts = con.execute("SELECT count(*)" + "".join(f", {sql}" for _, sql in bad_terms)
                             + " FROM _iw_result").fetchall()[0]
        extra = "".join(f", {sql} AS {quote_ident(n)}" for n, sql in added.items())
        arrow = con.sql(f"SELECT *{extra} FROM (SELECT {', '.join(converted)} FROM _iw_result)").to_arrow_table()
    finally:
        con.execute("DROP TABLE IF EXISTS _iw_result").fetchall()
    arrow = arrow.cast(_arrow_schema(table))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".parquet.tmp")
    pq.write_table(arrow, tmp)
    tmp.replace(path)
    bad = {name: int(n) for (name, _), n in zip(bad_terms, counts[1:]) if n}
    return int(counts[0]), bad


def _run_table(db: _EventsDB, name: str, table: Table, query: str, since: float | None, until: float | None,
               window_end: datetime | None) -> list[dict[str, Any]]:
    result: QueryResult = run_query(db, query, start=since, end=until, limit_cap=None)
    if name == "library_signals":
        rows, _dropped = expand_library_signals(
            (r["@timestamp"], r["@log"], r["@message"]) for r in result.to_records())
        return [dict(zip(table.column_names, r)) for r in rows]
    records = result.to_records()
    if name == "stuck_keys":
        add_stuck_key_ages(records, window_end)
    return records
