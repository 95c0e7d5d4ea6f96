"""Questions answered from the ``trail`` table (one row per emitter outcome record).

The trail can hold millions of rows, so it is never loaded into pandas whole: each
function runs one parameterised DuckDB query over ``<DATA>/tables/trail.parquet`` and
caches the (small) answer keyed on the dataset fingerprint and the arguments.
User input only ever reaches DuckDB as a bound parameter.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import streamlit as st

from collector.tables import TABLES
from dashboard.cache import answer
from dashboard.compute import Filters
from dashboard.constants import ITERATOR_AGE_SOURCES, TOP_N
from dashboard.data import NOT_SET, Dataset
from emitter.contract import Outcome

__all__ = [
    "PAGE_ROWS",
    "SEARCH_FIELDS",
    "SearchPage",
    "attempts",
    "failures_by_log_group",
    "log_groups",
    "search",
    "search_page",
    "top_event_ids",
    "top_keys",
    "top_record_ages",
    "warm",
]

SEARCH_FIELDS: dict[str, tuple[str, ...]] = {
    "Any id": ("idempotency_key", "event_id", "correlation_id", "function_request_id"),
    "Idempotency key": ("idempotency_key",),
    "Event id": ("event_id",),
    "Correlation id": ("correlation_id",),
    "Request id": ("function_request_id",),
}
"""Search field label -> trail columns searched."""
MAX_TRAIL_ROWS = 5000
"""Rows :func:`search` returns at most (a key's trail is normally a handful of records)."""
PAGE_ROWS = 500
"""Rows of one explorer page (:func:`search_page`): what the browser receives and draws per search."""


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


@answer
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
    return _failures(ds.trail_path, ds.fingerprint, f, outcomes)


@answer
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
    return _top_keys(ds.trail_path, ds.fingerprint, outcome, f, n)


@answer
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
    return _top_event_ids(ds.trail_path, ds.fingerprint, outcome, f, n)


@answer
def _top_event_ids(path: Path, fp: str, outcome: str, f: Filters, n: int) -> pd.DataFrame:
    where, params = _where(f)
    sql = f"""SELECT event_id, any_value(event_source) AS event_source, any_value(service) AS service,
                     any_value(operation) AS operation, count(*) AS events, max(attempt) AS max_attempt,
                     min(timestamp) AS first_seen, max(timestamp) AS last_seen
              FROM TRAIL WHERE {where} AND outcome = ? AND event_id IS NOT NULL
              GROUP BY event_id ORDER BY events DESC, event_id LIMIT {int(n)}"""
    return _query(path, sql, params + [outcome])


def attempts(ds: Dataset, f: Filters) -> pd.DataFrame:
    """Delivery attempt number -> ``received`` records in the window (columns ``attempt``, ``received``), from
    the trail: the window and filters apply (the collector's ``attempts`` table covers the whole collection).
    Records without an attempt number are left out."""
    if ds.trail_path is None:
        return _empty(("attempt", "received"))
    return _attempts(ds.trail_path, ds.fingerprint, f)


@answer
def _attempts(path: Path, fp: str, f: Filters) -> pd.DataFrame:
    where, params = _where(f)
    sql = f"""SELECT attempt, count(*) AS received FROM TRAIL
              WHERE {where} AND outcome = ? AND attempt IS NOT NULL GROUP BY attempt ORDER BY attempt"""
    return _query(path, sql, params + [Outcome.RECEIVED.value])


def top_record_ages(ds: Dataset, f: Filters, n: int = TOP_N) -> pd.DataFrame:
    """The ``received`` records with the largest record age (ms) in the window."""
    if ds.trail_path is None:
        return _empty(AGE_COLUMNS)
    return _top_ages(ds.trail_path, ds.fingerprint, f, n)


@answer
def _top_ages(path: Path, fp: str, f: Filters, n: int) -> pd.DataFrame:
    where, params = _where(f)
    sources = sorted(ITERATOR_AGE_SOURCES)
    sql = f"""SELECT {', '.join(AGE_COLUMNS)} FROM TRAIL
              WHERE {where} AND outcome = ? AND record_age_ms IS NOT NULL
                    AND event_source IN ({', '.join('?' * len(sources))})
              ORDER BY record_age_ms DESC, timestamp, event_id LIMIT {int(n)}"""
    return _query(path, sql, params + [Outcome.RECEIVED.value, *sources])


@dataclass(frozen=True)
class SearchPage:
    """One page of a trail search (:func:`search_page`).

    ``rows``: this page's records (a ``matched`` column first, then the trail columns), in trail order;
    ``total``: records in the whole result (exact); ``matched``: of them, records matching the search directly;
    ``keys`` / ``events``: distinct idempotency keys / event ids in the whole result; ``page``: this page, 1-based
    (clamped to ``1..pages``); ``pages``: pages in the whole result (0 when nothing matched); ``first``: 1-based
    position in the result of this page's first row (0 when nothing matched).
    """

    rows: pd.DataFrame
    total: int
    matched: int
    keys: int
    events: int
    page: int
    pages: int
    first: int


def search_page(ds: Dataset, field: str, value: str, *, partial: bool = False, page: int = 1,
                page_size: int = PAGE_ROWS) -> SearchPage:
    """Page ``page`` (1-based; clamped to the pages there are) of the whole trail of whatever matches ``value`` in
    ``field`` (a :data:`SEARCH_FIELDS` label), ``page_size`` rows a page, with the exact size of the whole result.

    Rows matching directly are marked ``matched``; then every record sharing an idempotency key or event id with a
    matched row is added (so a search by request or correlation id shows the full life of the keys/events that
    request touched), in trail order (timestamp, request id, outcome, then file order: the same on every page).
    ``partial`` matches substrings (case-insensitive, Unicode lower-casing; every character is literal). Not
    time-filtered: a trail is shown whole. Nothing is dropped: every record of the result is on some page.

    The match runs on the in-memory id index (:func:`warm`), then only the page's rows are read from the Parquet
    file. Raises KeyError for an unknown field label, ValueError for ``page_size < 1``.
    """
    if page_size < 1:
        raise ValueError(f"page_size must be >= 1, got {page_size}")
    cols = SEARCH_FIELDS[field]
    value = value.strip()
    if ds.trail_path is None or not value:
        return SearchPage(_empty(("matched",) + TABLES["trail"].column_names), 0, 0, 0, 0, 1, 0, 0)
    m = _search(ds.trail_path, ds.fingerprint, cols, value, partial)
    total = len(m.rn)
    pages = math.ceil(total / page_size)
    page = min(max(1, int(page)), max(1, pages))
    start = (page - 1) * page_size
    rows = _read_rows(ds.trail_path, ds.fingerprint, cols, value, partial, start, page_size)
    return SearchPage(rows, total, m.matched, m.keys, m.events, page, pages, start + 1 if total else 0)


def search(ds: Dataset, field: str, value: str, *, partial: bool = False) -> tuple[pd.DataFrame, bool]:
    """The first :data:`MAX_TRAIL_ROWS` records of :func:`search_page`'s result and whether there are more:
    (rows, truncated). For a page that shows one key's trail; the explorer pages through the whole result.
    Raises KeyError for an unknown field label."""
    p = search_page(ds, field, value, partial=partial, page_size=MAX_TRAIL_ROWS)
    return p.rows, p.total > MAX_TRAIL_ROWS


# ----------------------------------------------------------------------------- id index
_ID_COLUMNS = SEARCH_FIELDS["Any id"]
_HAY_SEP = "\x1f"
"""Separator of the id columns in the lower-cased ``hay`` column (ASCII unit separator: never typed in a search;
a search value containing it falls back to one test per column)."""
INDEX_VERSIONS = 2
"""Trail id indexes kept (``st.cache_resource``): about 200 MB each for 1M records."""


def warm(ds: Dataset) -> None:
    """Build the trail's id index in a background thread (the explorer page calls it when it opens, so the first
    search does not pay for it). No-op without a trail; returns at once when it is built already."""
    if ds.trail_path is None:
        return
    threading.Thread(target=_hot_db, args=(ds.trail_path, ds.fingerprint), daemon=True,
                     name="idemwatch-trail-index").start()


def _close(con: duckdb.DuckDBPyConnection) -> None:
    con.close()


@st.cache_resource(max_entries=INDEX_VERSIONS, show_spinner=False, on_release=_close)
def _hot_db(path: Path, fp: str) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB database holding the trail's hot search fields: file row number, the sort key of a
    trail (timestamp, request id, outcome), the four id columns, and ``hay``: the ids lower-cased and joined, so an
    "Any id" substring search is one ``contains`` per row. One per data version, built once (Streamlit's resource
    cache makes a concurrent caller wait for it), shared by every session through a cursor per query."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    ids = ", ".join(_ID_COLUMNS)
    con.execute(f"""CREATE TABLE hot AS
        SELECT file_row_number AS rn, timestamp, outcome, {ids},
               lower(concat_ws(chr(31), {', '.join(f"coalesce({c}, '')" for c in _ID_COLUMNS)})) AS hay
        FROM read_parquet('{_lit(path)}', file_row_number = true)""")
    return con


@dataclass(frozen=True)
class _Match:
    """A search's whole result: file row numbers in trail order (int64), which of them match directly (bool),
    and the counts over the result."""

    rn: np.ndarray
    hit: np.ndarray
    matched: int
    keys: int
    events: int


@answer
def _search(path: Path, fp: str, cols: tuple[str, ...], value: str, partial: bool) -> _Match:
    if partial and cols == _ID_COLUMNS and _HAY_SEP not in value:
        cond, params = "contains(hay, lower(?))", [value]
    elif partial:
        cond, params = " OR ".join(f"contains(lower({c}), lower(?))" for c in cols), [value] * len(cols)
    else:
        cond, params = " OR ".join(f"{c} = ?" for c in cols), [value] * len(cols)
    cur = _hot_db(path, fp).cursor()  # a cursor per query: the index is shared by every session's thread
    try:
        # in memory: the hits, then every record sharing a hit's key or event id (semi joins on the distinct keys
        # and event ids); the whole result's row numbers in trail order, and its counts
        got = cur.execute(f"""
            WITH hit AS MATERIALIZED (SELECT rn, idempotency_key, event_id FROM hot WHERE {cond}),
                 ks AS MATERIALIZED (SELECT DISTINCT idempotency_key FROM hit WHERE idempotency_key IS NOT NULL),
                 es AS MATERIALIZED (SELECT DISTINCT event_id FROM hit WHERE event_id IS NOT NULL),
                 rel AS (SELECT rn FROM hit
                         UNION SELECT h.rn FROM hot h SEMI JOIN ks USING (idempotency_key)
                         UNION SELECT h.rn FROM hot h SEMI JOIN es USING (event_id)),
                 res AS MATERIALIZED (SELECT h.rn, h.timestamp, h.function_request_id, h.outcome, h.idempotency_key,
                                             h.event_id, h.rn IN (SELECT rn FROM hit) AS hit
                                      FROM hot h SEMI JOIN rel USING (rn)),
                 agg AS (SELECT count(DISTINCT idempotency_key) AS keys, count(DISTINCT event_id) AS events FROM res)
            SELECT rn, hit, keys, events FROM res, agg
            ORDER BY timestamp, function_request_id, outcome, rn""", params).fetchnumpy()
    finally:
        cur.close()
    rn, hit = np.asarray(got["rn"], dtype=np.int64), np.asarray(got["hit"], dtype=bool)
    if not len(rn):
        return _Match(rn, hit, 0, 0, 0)
    return _Match(rn, hit, int(hit.sum()), int(got["keys"][0]), int(got["events"][0]))


@answer
def _read_rows(path: Path, fp: str, cols: tuple[str, ...], value: str, partial: bool, start: int,
               n: int) -> pd.DataFrame:
    """Records ``start .. start + n - 1`` of the search's result, read from the Parquet file (``matched`` first)."""
    m = _search(path, fp, cols, value, partial)
    rn, hit = m.rn[start:start + n], m.hit[start:start + n]
    if not len(rn):
        return _empty(("matched",) + TABLES["trail"].column_names)
    names = ", ".join(TABLES["trail"].column_names)
    cur = _hot_db(path, fp).cursor()
    try:
        df = cur.execute(f"""SELECT file_row_number AS rn, {names}
            FROM read_parquet('{_lit(path)}', file_row_number = true)
            WHERE file_row_number IN (SELECT unnest(?::BIGINT[]))""", [rn.tolist()]).fetchdf()
    finally:
        cur.close()
    # the result's order (the index's sort), whatever order the file scan returned
    df = df.set_index("rn").loc[rn].reset_index(drop=True)
    df.insert(0, "matched", hit)
    return df
