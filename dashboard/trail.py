"""Questions answered from the ``trail`` table (one row per emitter outcome record).

The trail can hold millions of rows, so it is never loaded into pandas whole: each
function runs one parameterised DuckDB query over ``<DATA>/tables/trail.parquet`` and
caches the (small) answer keyed on the dataset fingerprint and the arguments.
User input only ever reaches DuckDB as a bound parameter.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import duckdb
import pandas as pd

from collector.tables import TABLES
from dashboard.compute import Filters
from dashboard.constants import TOP_N
from dashboard.data import NOT_SET, Dataset
from emitter.contract import Outcome

__all__ = ["SEARCH_FIELDS", "search", "top_event_ids", "top_keys", "top_record_ages"]

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
    order. ``partial`` matches substrings (case-insensitive; ``%``/``_`` are literal).
    Returns (rows, truncated) with at most :data:`MAX_TRAIL_ROWS` rows. Not time-filtered:
    a trail is shown whole.

    Raises KeyError for an unknown field label.
    """
    cols = SEARCH_FIELDS[field]
    value = value.strip()
    if ds.trail_path is None or not value:
        return _empty(("matched",) + TABLES["trail"].column_names), False
    df = _search(ds.trail_path, ds.fingerprint, cols, value, partial).copy()
    truncated = len(df) > MAX_TRAIL_ROWS
    return df.head(MAX_TRAIL_ROWS), truncated


@lru_cache(maxsize=128)
def _search(path: Path, fp: str, cols: tuple[str, ...], value: str, partial: bool) -> pd.DataFrame:
    if partial:
        pat = "%" + value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        cond = " OR ".join(f"{c} ILIKE ? ESCAPE '\\'" for c in cols)
        params = [pat] * len(cols)
    else:
        cond = " OR ".join(f"{c} = ?" for c in cols)
        params = [value] * len(cols)
    names = ", ".join(TABLES["trail"].column_names)
    # one pass finds the hits' keys and event ids, a second pass returns every record sharing one
    sql = f"""WITH hit AS (SELECT idempotency_key, event_id FROM TRAIL WHERE {cond})
              SELECT ({cond}) AS matched, {names} FROM TRAIL
              WHERE ({cond})
                 OR idempotency_key IN (SELECT idempotency_key FROM hit WHERE idempotency_key IS NOT NULL)
                 OR event_id IN (SELECT event_id FROM hit WHERE event_id IS NOT NULL)
              ORDER BY timestamp, function_request_id, outcome LIMIT {MAX_TRAIL_ROWS + 1}"""
    params = params * 3
    return _query(path, sql, params)
