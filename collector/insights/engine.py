"""``run_query``: compile a Logs Insights query and run it on an EventStore's DuckDB table."""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import Any

from collector.insights.compiler import DEFAULT_LIMIT, CompiledQuery, compile_query
from collector.insights.exceptions import QueryError
from collector.insights.result import QueryResult, decode_value
from collector.insights.sql import harden_connection, register_functions

__all__ = ["connection_and_table", "prepare_query", "run_query", "table_columns"]


def connection_and_table(store: Any) -> tuple[Any, str]:
    """(DuckDB connection, events table name) of an ``EventStore`` or a bare connection holding ``events``."""
    if hasattr(store, "connection"):
        return store.connection, getattr(store, "table", "events")
    return store, "events"  # a bare duckdb connection holding an ``events`` table


def table_columns(con: Any, table: str) -> list[tuple[str, str]]:
    """(column name, DuckDB type) of ``table``, in table order."""
    rows = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1 "
        "ORDER BY ordinal_position", [table]).fetchall()
    if not rows:
        raise QueryError(f"no events table named {table!r}")
    return [(r[0], r[1]) for r in rows]


def seconds_to_ms(value: float | None, *, upper: bool) -> int | None:
    """A window bound in epoch seconds (None = unbounded) as the epoch-ms bound the queries compare ``@timestamp``
    with, inclusive: a lower bound rounded up, an upper one (``upper``) down, so a bound between two milliseconds
    admits only the milliseconds inside it. The one rounding rule of a time window (queries and table slices)."""
    if value is None:
        return None
    ms = float(value) * 1000.0
    return math.floor(ms) if upper else math.ceil(ms)


def prepare_query(store: Any, query: str, start: float | None = None, end: float | None = None,
                  limit_cap: int | None = DEFAULT_LIMIT, *, harden: bool = True,
                  check_regexes: bool = True, log_groups: Sequence[str] | None = None) -> tuple[Any, CompiledQuery]:
    """Compile ``query`` against ``store``'s events table without running it.

    Returns (DuckDB connection, CompiledQuery) so a caller can run ``compiled.sql`` with
    ``compiled.params`` inside its own statement (e.g. typed Parquet export). Same arguments
    and errors as :func:`run_query`; the connection is set up and hardened the same way.
    ``check_regexes``: compile every regex with DuckDB first (one tiny query each), so a bad
    one is a positioned QueryError before the caller runs the SQL.
    """
    con, table = connection_and_table(store)
    if harden and con not in _HARDENED:
        harden_connection(con)
        _HARDENED.add(con)
    compiled = compile_query(query, table_columns(con, table), table,
                             seconds_to_ms(start, upper=False), seconds_to_ms(end, upper=True), limit_cap,
                             log_groups=log_groups)
    if compiled.udfs:
        register_functions(con, compiled.udfs)
    if check_regexes:
        _check_regexes(con, query, compiled)
    return con, compiled


_HARDENED: weakref.WeakSet = weakref.WeakSet()
"""Connections this process already hardened (skips the settings check on every query)."""


def _check_regexes(con: Any, query: str, compiled: CompiledQuery) -> None:
    """Compile every regex with DuckDB's own RE2 first, so a bad one is a QueryError at its
    position (line/column), not a runtime failure of the whole statement."""
    if not compiled.regexes:
        return
    patterns = [p for p, _ in compiled.regexes]
    try:  # all at once (one statement); one by one only to find the bad one
        con.execute("SELECT " + ", ".join(f"regexp_matches('', ${i + 1})" for i in range(len(patterns))),
                    patterns).fetchall()
        return
    except Exception as exc:
        if "duckdb" not in type(exc).__module__:
            raise
    for pattern, pos in compiled.regexes:
        try:
            con.execute("SELECT regexp_matches('', $1)", [pattern]).fetchall()
        except Exception as exc:
            if "duckdb" not in type(exc).__module__:
                raise
            raise QueryError(f"invalid regular expression: {str(exc).splitlines()[0]}", pos, query) from None


def _failing_command(con: Any, compiled: CompiledQuery) -> int | None:
    """Offset of the command whose SQL stage fails, found after the whole statement failed at run time (DuckDB
    says what failed, not where): the shortest prefix of ``compiled.stages`` that fails when every column of its
    last stage is computed (``sum(hash(row))``; a plain ``count(*)`` would let DuckDB skip the columns), by binary
    search (a prefix holds every column of the shorter ones, so once a prefix fails the longer ones do too). None
    when no prefix fails on its own (the failure is in the final projection or sort) or it is the first stage
    (the events in the time range). Costs about log2(stages) scans, on the error path only."""
    stages = compiled.stages
    if not stages:
        return None
    n = len(compiled.params)
    # every parameter bound once in a one-row side table, so a prefix that uses only some still binds them all
    side = ("(SELECT " + ", ".join(f"CAST(${i + 1} AS VARCHAR) AS p{i}" for i in range(n)) + ") AS _iw_p") if n else ""

    def fails(k: int) -> bool:
        sql = (f"WITH {', '.join(s for s, _ in stages[:k + 1])} SELECT sum(hash(_iw_q)) "
               f"FROM (SELECT * FROM s{k}) AS _iw_q{', ' + side if side else ''}")
        try:
            con.execute(sql, compiled.params).fetchall()
        except Exception as exc:  # any DuckDB failure of the prefix counts
            if "duckdb" not in type(exc).__module__:
                raise
            return True
        return False

    lo, hi = 0, len(stages) - 1
    if not fails(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if fails(mid):
            hi = mid
        else:
            lo = mid + 1
    return stages[lo][1]


def _command_word(query: str, pos: int) -> str:
    """The command keyword at ``pos`` (``fields``, ``stats``, ...)."""
    word = query[pos:].split(None, 1)
    return word[0].rstrip("|") if word else ""


def run_query(store: Any, query: str, start: float | None = None, end: float | None = None,
              limit_cap: int | None = DEFAULT_LIMIT, *, harden: bool = True,
              log_groups: Sequence[str] | None = None) -> QueryResult:
    """Run a Logs Insights query over the events of ``store``.

    Args:
        store: an ``EventStore`` (``.connection`` + ``.table``) or a DuckDB connection with
            an ``events`` table.
        query: Logs Insights QL text.
        start, end: epoch SECONDS, both inclusive (StartQuery semantics); None = unbounded.
            An event at exactly ``end`` (to the millisecond) is included.
        limit_cap: maximum rows (10,000, the CloudWatch maximum); None lifts it.
        harden: lock the connection's database down first (:func:`~collector.insights.sql.
            harden_connection`: no file/URL access, no extension install/load, configuration
            locked). It stays hardened afterwards: do every ingest/COPY on that database
            before the first query. ``False`` only for a caller that hardens it itself.
        log_groups: the log groups (names, without account) the query runs on, as StartQuery's
            ``logGroupNames``; None = every group of the store. A ``SOURCE`` at the start of the
            query (or of a subquery) chooses its groups instead.
    Returns:
        QueryResult.
    Raises:
        QueryError: on a syntax error or an unsupported command/function (message names
            it and its line/column), or a failure while DuckDB runs the statement (e.g. a
            malformed ``@json`` in a table not built by the ingest): the message names the
            command whose stage fails and its line/column (:func:`_failing_command`), or
            carries no position when no single command can be blamed.
    """
    con, compiled = prepare_query(store, query, start, end, limit_cap, harden=harden, log_groups=log_groups)
    try:
        raw_rows = con.execute(compiled.sql, compiled.params).fetchall()
    except Exception as exc:  # a runtime error in DuckDB is a query error
        if "duckdb" not in type(exc).__module__:
            raise
        pos = _failing_command(con, compiled)
        where = "" if pos is None else f" in '{_command_word(query, pos)}'"
        raise QueryError(f"query failed{where}: {str(exc).splitlines()[0]}", pos, query) from exc
    types = [t for _, t in compiled.columns]
    rows = [tuple(decode_value(v, t) for v, t in zip(r, types)) for r in raw_rows]
    return QueryResult([n for n, _ in compiled.columns], types, rows, compiled.sql, tuple(compiled.params))
