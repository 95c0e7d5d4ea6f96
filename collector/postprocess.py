"""Post-processing of standard query results that a Logs Insights query cannot do itself (one rule each, used by
both collectors; each query's header documents it).

- ``library_signals``: the query returns raw events (``@timestamp``, ``@log``, ``@message``); the table is their
  expansion into (time, log_group, library, signal, events) per 1-minute bin: EMF documents of Powertools Metrics /
  aws-embedded-metrics, and Powertools idempotency exception lines.
- ``log_group`` / ``account_id`` (``invocations``, ``library_signals``, ``trail``): the queries select
  ``@log as log_group``; ``@log`` "is a log group identifier in the form of account-id:log-group-name"
  (CWL_AnalyzeLogData-discoverable-fields), on CloudWatch and offline alike. ``split_log_identifier`` splits it
  into the log group name (``log_group``, what the dashboard and alarms read) and ``account_id``.
- ``stuck_keys``: ``age_s`` = window end - claimed_at (seconds) and ``expired`` = in_progress_expires_at < window end,
  relative to the window end of the collection (``--until``, else the last event / the collection time).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from collector.insights.log_identifier import LOG_IDENTIFIER_RE
from collector.insights.sql import sql_literal
from collector.parquet import parse_timestamp_ms

__all__ = ["ACCOUNT_COLUMN", "EXCEPTION_LINE_RE", "FILLED_COLUMNS", "POST_PROCESS", "expand_library_signal_rows",
           "expand_library_signals", "library_signals_rows", "split_log_identifier", "stuck_key_ages"]

_WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
               "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
"""What Python's ``re`` matches with ``\\s`` in a str pattern (``str.isspace``); DuckDB's RE2 ``\\s`` is ASCII only,
so the exception regex spells the class out (a test checks it against ``re``)."""

_WS = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in _WHITESPACE) + "]"
_NOT_WS = "[^" + _WS[1:]
EXCEPTION_LINE_RE = rf"^\[ERROR\]{_WS}(?:{_NOT_WS}+{_WS}+{_NOT_WS}+{_WS}+)?(Idempotency[A-Za-z]*Error):"
"""A Python runtime error line of a Powertools idempotency exception, ``[ERROR] <Exception>: ...`` or ``[ERROR]
<timestamp> <request id> <Exception>: ...``; group 1 = the exception class name (RE2 syntax)."""


def _sql_case(expr: str, mapping: Mapping[str, str]) -> str:
    """``CASE expr WHEN k THEN v ... ELSE expr END``: the mapped value, else the value itself."""
    whens = " ".join(f"WHEN {sql_literal(k)} THEN {sql_literal(v)}" for k, v in sorted(mapping.items()))
    return f"(CASE {expr} {whens} ELSE {expr} END)"


def _last(keys: str, key: str) -> str:
    """SQL: the 1-based position of the last ``key`` in the list ``keys`` (a duplicate key's last value, as Python's
    ``json`` reads it), NULL when absent."""
    return (f"(CASE WHEN list_contains({keys}, {key}) "
            f"THEN len({keys}) + 1 - list_position(list_reverse({keys}), {key}) END)")


@functools.cache
def _expansion_sql() -> str:
    """The expansion of a relation ``__iw_src(ord BIGINT, ts BIGINT epoch ms, lg VARCHAR, msg VARCHAR)`` (ord: the
    row's position, only read by the ordered sum) into entries ``(ord, minute, lg, library, signal, events,
    sub)``: one per exception line, one per EMF metric entry (events NULL: the entry is dropped as not numeric or
    without a string Name), ``sub`` its position inside the row."""
    from emitter.contract import EXCEPTION_OUTCOME, METRIC_OUTCOME

    metric_signal = _sql_case("name", {m.value: o.value for m, o in METRIC_OUTCOME.items()})
    exception_signal = _sql_case("exc", {k: o.value for k, o in EXCEPTION_OUTCOME.items()})
    number = "json_type(x) IN ('UBIGINT', 'BIGINT', 'HUGEINT', 'DOUBLE')"
    return f"""
    r AS (SELECT ord, ts - ((ts % 60000) + 60000) % 60000 AS minute, lg, coalesce(msg, '') AS msg,
                 CASE WHEN starts_with(msg, '[ERROR]')  -- the substring test only spares the regex other lines
                      THEN regexp_extract(msg, {sql_literal(EXCEPTION_LINE_RE)}, 1) ELSE '' END AS exc
          FROM __iw_src WHERE ts IS NOT NULL),
    exc_entries AS (SELECT ord, minute, lg, 'powertools' AS library, {exception_signal} AS signal,
                           1.0::DOUBLE AS events, 0 AS sub FROM r WHERE exc <> ''),
    -- a JSON object's top-level keys and values in document order (a non-object has none); no row is filtered
    -- on a parsed value, so that no parse is pushed below and done twice
    docs AS (SELECT ord, minute, lg, keys, vals,
                    TRY(json_transform(vals[{_last("keys", "'_aws'")}], {sql_literal(_AWS_SHAPE)})) AS aws
             FROM (SELECT ord, minute, lg,
                          CASE WHEN exc = '' AND json_valid(msg) THEN json_keys(msg) END AS keys,
                          CASE WHEN exc = '' AND json_valid(msg) THEN json_extract(msg, '$.*') END AS vals
                   FROM r)),
    named AS (SELECT ord, minute, lg, keys, vals, mets,
                     list_transform(mets, lambda x: CASE WHEN json_type(x.Name) = 'VARCHAR'
                                                         THEN x.Name ->> '$' END) AS names
              FROM (SELECT *, flatten(list_transform(aws.CloudWatchMetrics, lambda d: d.Metrics)) AS mets FROM docs)),
    metrics AS (SELECT ord, minute, lg,
                       CASE WHEN list_contains(keys, 'ServiceName') AND list_contains(keys, 'ServiceType')
                            THEN 'aws-embedded-metrics' WHEN list_contains(keys, 'service')
                            THEN 'powertools' ELSE 'emf' END AS library,
                       unnest(names) AS name, unnest(list_transform(names, lambda n: vals[{_last("keys", "n")}])) AS v,
                       unnest(list_transform(mets, lambda x: json_type(x.Unit) = 'VARCHAR'
                                                             AND x.Unit ->> '$' = 'Count')) AS is_count,
                       generate_subscripts(names, 1) AS sub
                FROM named),
    numbers AS (SELECT *, list_transform(list_filter(CASE WHEN json_type(v) = 'ARRAY' THEN CAST(v AS JSON[])
                                                          ELSE [v] END, lambda x: {number}),
                                         lambda x: CAST(x AS DOUBLE)) AS nums
                FROM metrics),
    emf_entries AS (SELECT ord, minute, lg, library, {metric_signal} AS signal,
                           CASE WHEN name IS NULL OR len(nums) = 0 THEN NULL
                                WHEN is_count THEN 0.0::DOUBLE + list_sum(nums) ELSE len(nums)::DOUBLE END AS events,
                           sub FROM numbers),
    entries AS (SELECT * FROM exc_entries UNION ALL SELECT * FROM emf_entries)"""


_AWS_SHAPE = '{"CloudWatchMetrics": [{"Metrics": [{"Name": "JSON", "Unit": "JSON"}]}]}'
"""The part of ``_aws`` the expansion reads. A value of another shape reads as null (not an object, not a list),
which the rule treats as Python's ``isinstance`` checks did: no entries, or a dropped entry for a metric that is not
an object with a string Name."""

_EXACT_LIMIT = 2.0 ** 53
"""Below this, sums of integral doubles are exact in any order (no rounding)."""


def expand_library_signals(con: Any, source_sql: str, params: Sequence[Any] = (),
                           ordered_source: Callable[[], tuple[str, Sequence[Any]]] | None = None
                           ) -> tuple[pa.Table, int]:
    """Expand the library_signals query rows into table rows ``(time, log_group, library, signal, events)``
    summed per 1-minute bin, in DuckDB (one pass, no row in Python).

    ``source_sql``: a SELECT of ``(ord BIGINT, ts BIGINT epoch ms, lg VARCHAR, msg VARCHAR)`` with ``params``; ``ord``
    is the row's position in query order (``@timestamp``, then ingest order). When a bin's sum is not exact in any
    order (a fractional or huge value), the sums are taken again in that order, as a sequential sum would;
    ``ordered_source``, when given, returns the SELECT and its params to use then (for a source whose ``ord``
    costs a sort).

    Rules: a Powertools idempotency exception line (``EXCEPTION_LINE_RE``) counts 1 under the emitter outcome its
    exception maps to (``emitter.contract.EXCEPTION_OUTCOME``); a message that is a JSON object with an ``_aws``
    object counts each entry of ``_aws.CloudWatchMetrics[].Metrics[]``: its value (the top-level key named by the
    entry's ``Name``) summed (``Unit`` ``"Count"``) or its number of numeric values (other units), under the outcome
    the metric maps to (``emitter.contract.METRIC_OUTCOME``) or its name. ``library``: "aws-embedded-metrics"
    (``ServiceName`` and ``ServiceType`` keys), "powertools" (a ``service`` key), else "emf". JSON is read as
    DuckDB reads it (the parser of the events table: it takes ``NaN`` and a trailing comma); a duplicate top-level key
    reads its last value, as Python's ``json`` does, a duplicate key inside ``_aws`` its first.

    Returns (Arrow table ``time`` int64 epoch ms, ``log_group``, ``library``, ``signal`` strings, ``events``
    float64, sorted by time/log_group/library/signal; number of EMF metric entries dropped because their Name is
    not a string or their value is not numeric).
    """
    body = _expansion_sql()

    def run(src: str, src_params: Sequence[Any], ordered: bool) -> pa.Table:
        total = "sum(events ORDER BY ord, sub)" if ordered else "sum(events)"
        return con.sql(f"""
            WITH __iw_src AS ({src}), {body}
            SELECT minute AS time, lg AS log_group, library, signal, 0.0::DOUBLE + {total} AS events,
                   count(*) FILTER (WHERE events IS NULL) AS dropped,
                   bool_and(events = trunc(events)) AND sum(abs(events)) < {_EXACT_LIMIT!r} AS exact
            FROM entries GROUP BY minute, lg, library, signal
            ORDER BY time, coalesce(log_group, ''), library, signal, log_group NULLS FIRST""", params=list(src_params)).to_arrow_table()

    got = run(source_sql, params, False)
    if got.num_rows and not pc.all(got.column("exact")).as_py():
        got = run(*(ordered_source() if ordered_source is not None else (source_sql, params)), True)
    dropped = pc.sum(got.column("dropped")).as_py() or 0
    kept = got.filter(pc.is_valid(got.column("events")))
    return kept.select(["time", "log_group", "library", "signal", "events"]), int(dropped)


def expand_library_signal_rows(rows: Iterable[tuple[int | None, str | None, str | None]]) -> tuple[pa.Table, int]:
    """``expand_library_signals`` over rows in memory: ``(@timestamp epoch ms, @log, @message)`` in query order
    (rows without a timestamp are ignored). Same result."""
    import duckdb

    ts, lg, msg = [], [], []
    for t, g, m in rows:
        ts.append(t)
        lg.append(g)
        msg.append(m)
    src = pa.table({"ord": pa.array(range(len(ts)), pa.int64()), "ts": pa.array(ts, pa.int64()),
                    "lg": pa.array(lg, pa.string()), "msg": pa.array(msg, pa.string())})
    con = duckdb.connect()
    try:
        con.register("__iw_rows", src)
        return expand_library_signals(con, "SELECT ord, ts, lg, msg FROM __iw_rows")
    finally:
        con.close()


def library_signals_rows(rows: Iterable[Mapping[str, str | None]]) -> tuple[list[dict[str, str | None]], int]:
    """``expand_library_signals`` over result rows in the GetQueryResults form (field -> string value;
    ``@timestamp`` as ``YYYY-MM-DD HH:MM:SS.mmm`` or epoch ms), returning table rows in the same string form
    (``time`` in epoch ms, ``events`` as ``repr(float)``, which parses back exactly) for ``parquet.to_arrow``.
    Rows without a timestamp are ignored. Returns (rows, EMF entries dropped as not numeric)."""
    triples = ((parse_timestamp_ms(ts), r.get("@log"), r.get("@message") or "")
               for r in rows if (ts := r.get("@timestamp")))
    expanded, dropped = expand_library_signal_rows(triples)
    out = [{"time": str(t), "log_group": lg, "library": lib, "signal": sig, "events": repr(float(ev))}
           for t, lg, lib, sig, ev in zip(*(expanded.column(c).to_pylist() for c in expanded.column_names))]
    return out, dropped


POST_PROCESS: dict[str, Callable[[list[dict[str, str | None]]], tuple[list[dict[str, str | None]], int]]] = {
    "library_signals": library_signals_rows,
}
"""Tables whose query output is not the table itself: table -> expansion of the string rows."""


def _arrow_scalar(value: float, arrow_type: pa.DataType, code: str) -> pa.Scalar:
    """``pa.scalar(value, arrow_type)`` for a bool or fixed-width number (``code``: its ``struct`` format, ``"?"``
    bool (one value: bit 0 of the byte), ``"q"`` int64, ``"d"`` float64), made from its bytes: pyarrow's
    conversion of any Python value imports pandas to check for its types (0.17 s that the local collector
    otherwise never pays). Raises struct.error when ``value`` does not fit the type."""
    return pa.Array.from_buffers(arrow_type, 1, [None, pa.py_buffer(struct.pack("=" + code, value))])[0]


_FALSE = _arrow_scalar(False, pa.bool_(), "?")


def stuck_key_ages(table: pa.Table, window_end_ms: int | None) -> pa.Table:
    """``table`` (stuck_keys schema, ``claimed_at``/``in_progress_expires_at`` Arrow timestamps in ms) with
    ``age_s`` = (window_end_ms - claimed_at) / 1000 (float64 seconds) and ``expired`` = in_progress_expires_at <
    window end (bool) replaced. ``window_end_ms``: epoch milliseconds; None (no window end known) or a null input
    gives null."""
    n = table.num_rows
    if window_end_ms is None or n == 0:
        age = pa.nulls(n, pa.float64())
        expired = pa.nulls(n, pa.bool_())
    else:
        end = _arrow_scalar(int(window_end_ms), pa.int64(), "q")
        claimed = table.column("claimed_at").cast(pa.int64())
        expires = table.column("in_progress_expires_at").cast(pa.int64())
        age = pc.divide(pc.subtract(end, claimed).cast(pa.float64()), _arrow_scalar(1000.0, pa.float64(), "d"))
        expired = pc.less(expires, end)
    table = table.set_column(table.schema.get_field_index("age_s"), "age_s", age)
    return table.set_column(table.schema.get_field_index("expired"), "expired", expired)


ACCOUNT_COLUMN = "account_id"
"""The column ``split_log_identifier`` fills: the 12-digit account ID of the row's ``@log``."""

FILLED_COLUMNS: dict[str, tuple[str, ...]] = {"stuck_keys": ("age_s", "expired")}
"""Table -> columns its query does not return (filled here); with ``account_id`` for every table that has it."""


def filled_columns(table) -> tuple[str, ...]:
    """Columns of ``table`` (a ``collector.tables.Table``) that post-processing fills, not its query."""
    extra = (ACCOUNT_COLUMN,) if ACCOUNT_COLUMN in table.column_names else ()
    return FILLED_COLUMNS.get(table.name, ()) + extra


_SPLIT = LOG_IDENTIFIER_RE.replace("^(", "^(?P<account>", 1).replace(":(.*)$", ":(?P<name>.*)$", 1)


def _split_array(lg: pa.Array, acct: pa.Array) -> tuple[pa.Array, pa.Array]:
    """(log group names, accounts) of one array of ``@log`` values; the regex runs on the distinct values only
    (a table holds a handful of log groups), then ``take`` spreads the results over the rows."""
    enc = pc.dictionary_encode(lg)
    values, idx = enc.dictionary, enc.indices
    m = pc.extract_regex(values, pattern=_SPLIT)
    matched = pc.fill_null(pc.is_valid(m), _FALSE)
    names = pc.if_else(matched, pc.struct_field(m, "name"), values).cast(lg.type)
    accounts = pc.struct_field(m, "account").cast(acct.type)
    row_matched = pc.fill_null(pc.take(matched, idx), _FALSE)
    return pc.take(names, idx), pc.if_else(row_matched, pc.take(accounts, idx), acct)


def split_log_identifier(data: pa.Table | pa.RecordBatch) -> pa.Table | pa.RecordBatch:
    """``data`` with ``log_group`` = the log group name and ``account_id`` = the account of an account-qualified
    ``log_group`` value (``"123456789012:/aws/lambda/fn"`` -> ``"/aws/lambda/fn"``, ``"123456789012"``); a value
    without an account prefix stays as it is and keeps the row's ``account_id`` (null when none). Data without both
    columns is returned unchanged. The one place the tables' ``@log`` is split, for both collectors."""
    names = data.schema.names
    if "log_group" not in names or ACCOUNT_COLUMN not in names:
        return data
    lg_i, acct_i = names.index("log_group"), names.index(ACCOUNT_COLUMN)
    lg, acct = data.column(lg_i), data.column(acct_i)
    if pa.types.is_null(acct.type):
        acct = acct.cast(pa.string())
    if isinstance(lg, pa.ChunkedArray):  # a Table: its two columns may be chunked differently
        lg, acct = lg.combine_chunks(), acct.combine_chunks()
    name, account = _split_array(lg, acct)
    data = data.set_column(lg_i, data.schema.field(lg_i), name)
    return data.set_column(acct_i, pa.field(ACCOUNT_COLUMN, acct.type), account)
