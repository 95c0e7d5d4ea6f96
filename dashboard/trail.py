"""Questions answered from the ``trail`` table (one row per emitter outcome record).

The trail can hold millions of rows, so it is never loaded into pandas whole: each
function runs one parameterised DuckDB query over ``<DATA>/tables/trail.parquet`` and
caches the (small) answer keyed on the dataset fingerprint and the arguments.
User input only ever reaches DuckDB as a bound parameter.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path

import duckdb
import pandas as pd

from collector.tables import TABLES
from dashboard.compute import Filters
from dashboard.constants import TOP_N
from dashboard.data import NOT_SET, Dataset
from emitter.contract import Outcome

__all__ = ["SEARCH_FIELDS", "failures_by_log_group", "log_groups", "search", "top_event_ids", "top_keys",
           "top_record_ages", "warm"]

SEARCH_FIELDS: dict[str, tuple[str, ...]] = {
    "Any id": ("idempotency_key", "event_id", "correlation_id", "function_request_id"),
    "Idempotency key": ("idempotency_key",),
    "Event id": ("event_id",),
    "Correlation id": ("correlation_id",),
    "Request id": ("function_request_id",),
}
"""Search field label -> trail columns searched."""
MAX_TRAIL_ROWS = 5000
"""Rows returned by a search at most (a key's trail is normally a handful of records)."""


def _where(f: Filters) -> tuple[str, list]:
    clauses = ["timestamp >= ?", "timestamp < ?"]
    params: list = [f.start, f.end]
    for col, vals in (("service", f.services), ("operation", f.operations), ("event_source", f.event_sources)):
        if vals:
            # null dimensions read as NOT_SET in the aggregate tables; match them the same way here
            clauses.append(f"coalesce({col}, ?) IN ({', '.join('?' * len(vals))})")
            params.extend([NOT_SET, *vals])
    return " AND ".join(clauses), params


def _query(path: Path, sql: str, params: list) -> pd.DataFrame:
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        return con.execute(sql.replace("TRAIL", f"read_parquet('{_lit(path)}')"), params).fetchdf()
    finally:
        con.close()


def _lit(path: Path) -> str:
    return str(path).replace("'", "''")


def _empty(cols: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame(columns=list(cols))


TOP_KEY_COLUMNS = ("idempotency_key", "service", "operation", "events", "first_seen", "last_seen")
TOP_EVENT_COLUMNS = ("event_id", "event_source", "service", "operation", "events", "max_attempt", "first_seen",
                     "last_seen")
AGE_COLUMNS = ("timestamp", "service", "operation", "event_source", "event_id", "idempotency_key", "attempt",
               "record_age_ms")


def log_groups(ds: Dataset, f: Filters) -> frozenset[str] | None:
    """Log groups whose trail records carry the selected services / operations / event sources (None = no such
    filter selected, or no trail to map them: tables keyed by log group are then not filtered)."""
    if ds.trail_path is None or not (f.services or f.operations or f.event_sources):
        return None
    m = _log_group_map(ds.trail_path, ds.fingerprint)
    for col, vals in (("service", f.services), ("operation", f.operations), ("event_source", f.event_sources)):
        if vals:
            m = m[m[col].isin(vals)]
    return frozenset(m["log_group"].tolist())


@lru_cache(maxsize=8)
def _log_group_map(path: Path, fp: str) -> pd.DataFrame:
    sql = f"""SELECT DISTINCT log_group, coalesce(service, '{NOT_SET}') AS service,
                     coalesce(operation, '{NOT_SET}') AS operation, coalesce(event_source, '{NOT_SET}') AS event_source
              FROM TRAIL WHERE log_group IS NOT NULL"""
    return _query(path, sql, [])


def failures_by_log_group(ds: Dataset, f: Filters, outcomes: tuple[str, ...]) -> pd.DataFrame:
    """Emitter failure records per log group and outcome in the window (columns ``log_group``, ``outcome``,
    ``events``): the errors of a Lambda function as the emitter saw them."""
    if ds.trail_path is None:
        return _empty(("log_group", "outcome", "events"))
    return _failures(ds.trail_path, ds.fingerprint, f, outcomes).copy()


@lru_cache(maxsize=64)
def _failures(path: Path, fp: str, f: Filters, outcomes: tuple[str, ...]) -> pd.DataFrame:
    where, params = _where(f)
    sql = f"""SELECT log_group, outcome, count(*) AS events FROM TRAIL
              WHERE {where} AND outcome IN ({', '.join('?' * len(outcomes))}) AND log_group IS NOT NULL
              GROUP BY ALL ORDER BY events DESC, log_group, outcome"""
    return _query(path, sql, params + list(outcomes))


def top_keys(ds: Dataset, outcome: str, f: Filters, n: int = TOP_N) -> pd.DataFrame:
    """Idempotency keys with the most ``outcome`` records in the window (ties by key)."""
    if ds.trail_path is None:
        return _empty(TOP_KEY_COLUMNS)
    return _top_keys(ds.trail_path, ds.fingerprint, outcome, f, n).copy()


@lru_cache(maxsize=256)
def _top_keys(path: Path, fp: str, outcome: str, f: Filters, n: int) -> pd.DataFrame:
    where, params = _where(f)
    sql = f"""SELECT idempotency_key, any_value(service) AS service, any_value(operation) AS operation,
                     count(*) AS events, min(timestamp) AS first_seen, max(timestamp) AS last_seen
              FROM TRAIL WHERE {where} AND outcome = ? AND idempotency_key IS NOT NULL
              GROUP BY idempotency_key ORDER BY events DESC, idempotency_key LIMIT {int(n)}"""
    return _query(path, sql, params + [outcome])


def top_event_ids(ds: Dataset, outcome: str, f: Filters, n: int = TOP_N) -> pd.DataFrame:
    """Event ids (messageId, sequence number, ...) with the most ``outcome`` records in the window."""
    if ds.trail_path is None:
        return _empty(TOP_EVENT_COLUMNS)
    return _top_event_ids(ds.trail_path, ds.fingerprint, outcome, f, n).copy()


@lru_cache(maxsize=256)
def _top_event_ids(path: Path, fp: str, outcome: str, f: Filters, n: int) -> pd.DataFrame:
    where, params = _where(f)
    sql = f"""SELECT event_id, any_value(event_source) AS event_source, any_value(service) AS service,
                     any_value(operation) AS operation, count(*) AS events, max(attempt) AS max_attempt,
                     min(timestamp) AS first_seen, max(timestamp) AS last_seen
              FROM TRAIL WHERE {where} AND outcome = ? AND event_id IS NOT NULL
              GROUP BY event_id ORDER BY events DESC, event_id LIMIT {int(n)}"""
    return _query(path, sql, params + [outcome])


def top_record_ages(ds: Dataset, f: Filters, n: int = TOP_N) -> pd.DataFrame:
    """The ``received`` records with the largest record age (ms) in the window."""
    if ds.trail_path is None:
        return _empty(AGE_COLUMNS)
    return _top_ages(ds.trail_path, ds.fingerprint, f, n).copy()


@lru_cache(maxsize=64)
def _top_ages(path: Path, fp: str, f: Filters, n: int) -> pd.DataFrame:
    where, params = _where(f)
    sql = f"""SELECT {', '.join(AGE_COLUMNS)} FROM TRAIL
              WHERE {where} AND outcome = ? AND record_age_ms IS NOT NULL
              ORDER BY record_age_ms DESC, timestamp, event_id LIMIT {int(n)}"""
    return _query(path, sql, params + [Outcome.RECEIVED.value])


def search(ds: Dataset, field: str, value: str, *, partial: bool = False) -> tuple[pd.DataFrame, bool]:
    """The whole trail of whatever matches ``value`` in ``field`` (a :data:`SEARCH_FIELDS` label).

    Rows matching directly are marked ``matched``; then every record sharing an
    idempotency key or event id with a matched row is added (so a search by request or
    correlation id shows the full life of the keys/events that request touched), in time
    order. ``partial`` matches substrings (case-insensitive, Unicode lower-casing; every
    character is literal). Returns (rows, truncated) with at most :data:`MAX_TRAIL_ROWS`
    rows. Not time-filtered: a trail is shown whole.

    The match runs on the in-memory id index (:func:`warm`), then only the rows found are
    read from the Parquet file.

    Raises KeyError for an unknown field label.
    """
    cols = SEARCH_FIELDS[field]
    value = value.strip()
    if ds.trail_path is None or not value:
        return _empty(("matched",) + TABLES["trail"].column_names), False
    df = _search(ds.trail_path, ds.fingerprint, cols, value, partial).copy()
    truncated = len(df) > MAX_TRAIL_ROWS
    return df.head(MAX_TRAIL_ROWS), truncated


# ----------------------------------------------------------------------------- id index
_ID_COLUMNS = SEARCH_FIELDS["Any id"]
_HAY_SEP = "\x1f"
"""Separator of the id columns in the lower-cased ``hay`` column (ASCII unit separator: never typed in a search;
a search value containing it falls back to one test per column)."""
_HOT_LOCK = threading.Lock()
_HOT: dict[tuple[str, str], duckdb.DuckDBPyConnection] = {}


def warm(ds: Dataset) -> None:
    """Build the trail's id index in a background thread (the explorer page calls it when it opens, so the first
    search does not pay for it). No-op without a trail or when it is built already."""
    if ds.trail_path is None or (str(ds.trail_path), ds.fingerprint) in _HOT:
        return
    threading.Thread(target=_hot_db, args=(ds.trail_path, ds.fingerprint), daemon=True,
                     name="idemwatch-trail-index").start()


def _hot_db(path: Path, fp: str) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB database holding the trail's hot search fields: file row number, the sort key of a
    trail (timestamp, request id, outcome), the four id columns, and ``hay``: the ids lower-cased and joined, so an
    "Any id" substring search is one ``contains`` per row. One per data version (an older one is closed); about
    200 MB for 1M rows. Built once under a lock; later calls return it."""
    key = (str(path), fp)
    with _HOT_LOCK:
        con = _HOT.get(key)
        if con is not None:
            return con
        con = duckdb.connect()
        con.execute("SET TimeZone = 'UTC'")
        ids = ", ".join(_ID_COLUMNS)
        con.execute(f"""CREATE TABLE hot AS
            SELECT file_row_number AS rn, timestamp, outcome, {ids},
                   lower(concat_ws(chr(31), {', '.join(f"coalesce({c}, '')" for c in _ID_COLUMNS)})) AS hay
            FROM read_parquet('{_lit(path)}', file_row_number = true)""")
        for old in [k for k in _HOT if k[0] == key[0]]:
            _HOT.pop(old).close()
        _HOT[key] = con
        return con


@lru_cache(maxsize=128)
def _search(path: Path, fp: str, cols: tuple[str, ...], value: str, partial: bool) -> pd.DataFrame:
    if partial and cols == _ID_COLUMNS and _HAY_SEP not in value:
        cond, params = "contains(hay, lower(?))", [value]
    elif partial:
        cond, params = " OR ".join(f"contains(lower({c}), lower(?))" for c in cols), [value] * len(cols)
    else:
        cond, params = " OR ".join(f"{c} = ?" for c in cols), [value] * len(cols)
    names = ", ".join(TABLES["trail"].column_names)
    cur = _hot_db(path, fp).cursor()  # a cursor per query: the index is shared by every session's thread
    try:
        # in memory: the hits, then every record sharing a hit's key or event id (semi joins on the distinct keys
        # and event ids), the first MAX_TRAIL_ROWS + 1 in trail order; only those rows are then read from Parquet
        picked = cur.execute(f"""
            WITH hit AS MATERIALIZED (SELECT rn, idempotency_key, event_id FROM hot WHERE {cond}),
                 ks AS MATERIALIZED (SELECT DISTINCT idempotency_key FROM hit WHERE idempotency_key IS NOT NULL),
                 es AS MATERIALIZED (SELECT DISTINCT event_id FROM hit WHERE event_id IS NOT NULL),
                 rel AS (SELECT rn FROM hit
                         UNION SELECT h.rn FROM hot h SEMI JOIN ks USING (idempotency_key)
                         UNION SELECT h.rn FROM hot h SEMI JOIN es USING (event_id))
            SELECT h.rn, h.rn IN (SELECT rn FROM hit) AS matched FROM hot h SEMI JOIN rel USING (rn)
            ORDER BY timestamp, function_request_id, outcome LIMIT {MAX_TRAIL_ROWS + 1}""", params).fetchall()
        if not picked:
            return _empty(("matched",) + TABLES["trail"].column_names)
        df = cur.execute(f"""SELECT file_row_number AS rn, {names}
            FROM read_parquet('{_lit(path)}', file_row_number = true)
            WHERE file_row_number IN (SELECT unnest(?::BIGINT[]))
            ORDER BY timestamp, function_request_id, outcome""", [[rn for rn, _ in picked]]).fetchdf()
        hits = {rn for rn, m in picked if m}
        df.insert(0, "matched", df.pop("rn").isin(hits))
        return df
    finally:
        cur.close()
