"""Registry of Logs Insights functions and how each compiles to DuckDB SQL.

Scalar functions (usable in fields/filter/sort/stats arguments) and stats (aggregate)
functions, with the semantics documented by AWS:
- https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_QuerySyntax-operations-functions.html
- https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_QuerySyntax-Stats.html

A function that is not in these registries is a QueryError naming it (never silently
different). Boolean-returning functions (``ispresent``, ``isempty``, ``isblank``,
``strcontains``) show as 1/0 in results, as Logs Insights shows them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from collector.insights.expressions import Call, Duration, Literal, Star
from collector.insights.periods import FIXED_UNIT_MS
from collector.insights.sql import Typed, as_json, as_num, as_text, is_present, sort_key_struct, sql_number
from collector.insights.types import ValueType as V

if TYPE_CHECKING:  # pragma: no cover
    from collector.insights.compiler import ExprCompiler

__all__ = ["AGGREGATE_FUNCTIONS", "SCALAR_FUNCTIONS", "Function", "ceil_timestamp", "floor_timestamp"]

Compile = Callable[["ExprCompiler", Call], Typed]


_FUNCTIONS_PAGE = "CWL_QuerySyntax-operations-functions.html"
_STATS_PAGE = "CWL_QuerySyntax-Stats.html"
_TIMESERIES_PAGE = "CWL_QuerySyntax-timeseries-functions.html"


@dataclass(frozen=True)
class Function:
    name: str  # canonical spelling, as documented
    min_args: int
    max_args: int | None  # None = variadic
    compile: Compile
    doc: str
    page: str = _FUNCTIONS_PAGE  # AWS doc page (under constants.DOCS) that defines it


# --------------------------------------------------------------------------- time periods
_MONDAY_OFFSET_MS = 4 * 86_400_000  # 1970-01-05 is a Monday: weeks start on Monday (UTC)


def floor_timestamp(ts_sql: str, period: Duration) -> str:
    """SQL rounding a TIMESTAMP down to a multiple of ``period`` (UTC)."""
    if period.amount < 1:
        raise ValueError("period must be >= 1")
    if period.unit in FIXED_UNIT_MS:
        p = period.amount * FIXED_UNIT_MS[period.unit]
        off = _MONDAY_OFFSET_MS if period.unit == "w" else 0
        return f"epoch_ms(((epoch_ms({ts_sql}) - {off}) // {p}) * {p} + {off})"
    months = period.amount * {"mo": 1, "q": 3, "y": 12}[period.unit]
    idx = f"((year({ts_sql}) - 1970) * 12 + month({ts_sql}) - 1)"
    f = f"(({idx} // {months}) * {months})"
    return f"CAST(make_date(CAST(1970 + {f} // 12 AS INTEGER), CAST({f} % 12 + 1 AS INTEGER), 1) AS TIMESTAMP)"


def period_interval(period: Duration) -> str:
    """SQL INTERVAL of ``period`` (milliseconds for fixed units, months for mo/q/y)."""
    if period.unit in FIXED_UNIT_MS:
        return f"INTERVAL {period.amount * FIXED_UNIT_MS[period.unit]} MILLISECOND"
    return f"INTERVAL {period.amount * {'mo': 1, 'q': 3, 'y': 12}[period.unit]} MONTH"


def ceil_timestamp(ts_sql: str, period: Duration) -> str:
    """SQL rounding a TIMESTAMP up to a multiple of ``period`` (a value on a boundary stays)."""
    fl = floor_timestamp(ts_sql, period)
    return f"(CASE WHEN {fl} = {ts_sql} THEN {fl} ELSE {fl} + {period_interval(period)} END)"


def _period_arg(ctx: ExprCompiler, call: Call, index: int) -> Duration:
    arg = call.args[index]
    if not isinstance(arg, Duration):
        raise ctx.error(f"{call.name}() needs a time period such as 5m or 1h as argument {index + 1}", arg.pos)
    if arg.amount < 1:
        raise ctx.error(f"{call.name}() period must be at least 1", arg.pos)
    return arg


MAX_EPOCH_MS = 8_000_000_000_000_000
"""Largest |epoch milliseconds| turned into a timestamp (about year 255,000): DuckDB timestamps end
in year 294,247, and bins/periods (at most 10,000 years) must not step past that. Beyond it a
value is null, never a runtime error."""


def epoch_ms_sql(num_sql: str) -> str:
    """TIMESTAMP of epoch milliseconds ``num_sql``; null outside +-MAX_EPOCH_MS (or not a number)."""
    return (f"(CASE WHEN abs({num_sql}) <= {MAX_EPOCH_MS} THEN epoch_ms(CAST({num_sql} AS BIGINT)) END)")


def _clamped_int(num_sql: str, lo: int, hi: int) -> str:
    """BIGINT of a number clamped to [lo, hi] (substr positions: no overflow, no out-of-range error)."""
    return f"CAST(least(greatest(CAST({num_sql} AS DOUBLE), {lo}), {hi}) AS BIGINT)"


def _timestamp_arg(ctx: ExprCompiler, call: Call, index: int) -> str:
    t = ctx.compile(call.args[index])
    if t.type is V.TIMESTAMP:
        return t.sql
    if t.type is V.NUMBER:
        return epoch_ms_sql(t.sql)
    return f"TRY_CAST({as_text(t)} AS TIMESTAMP)"


# --------------------------------------------------------------------------- scalar functions
def _args(ctx: ExprCompiler, call: Call) -> list[Typed]:
    return [ctx.compile(a) for a in call.args]


def _bool(sql: str) -> Typed:
    return Typed(V.BOOLEAN, sql)


def _ispresent(ctx, call):
    (a,) = _args(ctx, call)
    return _bool(is_present(a))


def _isempty(ctx, call):
    (a,) = _args(ctx, call)
    return _bool(f"(coalesce({as_text(a)}, '') = '')")


def _isblank(ctx, call):
    (a,) = _args(ctx, call)
    return _bool(f"(trim(coalesce({as_text(a)}, ''), ' \t\r\n') = '')")


def _coalesce(ctx, call):
    args = _args(ctx, call)
    types = {a.type for a in args}
    if len(types) == 1:
        t = args[0].type
        return Typed(t, f"coalesce({', '.join(a.sql for a in args)})")
    return Typed(V.DYNAMIC, f"coalesce({', '.join(as_json(a) for a in args)})")


def _text_fn(sql_name: str) -> Compile:
    def compile_(ctx, call):
        (a,) = _args(ctx, call)
        return Typed(V.STRING, f"{sql_name}({as_text(a)})")
    return compile_


def _strlen(ctx, call):
    (a,) = _args(ctx, call)
    return Typed(V.NUMBER, f"length({as_text(a)})")


def _concat(ctx, call):
    args = _args(ctx, call)
    return Typed(V.STRING, f"concat({', '.join(as_text(a) for a in args)})")


def _substr(ctx, call):
    args = _args(ctx, call)
    s, start = as_text(args[0]), f"{_clamped_int(as_num(args[1]), -(2**32 - 2), 2**32 - 2)} + 1"
    if len(args) == 3:
        return Typed(V.STRING, f"substr({s}, {start}, {_clamped_int(as_num(args[2]), 0, 2**32 - 1)})")
    return Typed(V.STRING, f"substr({s}, {start})")


def _replace(ctx, call):
    s, a, b = _args(ctx, call)
    return Typed(V.STRING, f"replace({as_text(s)}, {as_text(a)}, {as_text(b)})")


def _trim_fn(sql_name: str) -> Compile:
    def compile_(ctx, call):
        args = _args(ctx, call)
        chars = as_text(args[1]) if len(args) == 2 else "' \t\r\n'"
        return Typed(V.STRING, f"{sql_name}({as_text(args[0])}, {chars})")
    return compile_


def _strcontains(ctx, call):
    s, sub = _args(ctx, call)
    return _bool(f"contains({as_text(s)}, {as_text(sub)})")


def _num_fn(sql_name: str) -> Compile:
    def compile_(ctx, call):
        (a,) = _args(ctx, call)
        return Typed(V.NUMBER, f"{sql_name}({as_num(a)})")
    return compile_


def _sqrt(ctx, call):
    (a,) = _args(ctx, call)
    n = as_num(a)
    return Typed(V.NUMBER, f"(CASE WHEN {n} >= 0 THEN sqrt({n}) END)")


def _log(ctx, call):
    (a,) = _args(ctx, call)
    n = as_num(a)
    return Typed(V.NUMBER, f"(CASE WHEN {n} > 0 THEN ln({n}) END)")


def _variadic_num(sql_name: str) -> Compile:
    def compile_(ctx, call):
        args = _args(ctx, call)
        return Typed(V.NUMBER, f"{sql_name}({', '.join(as_num(a) for a in args)})")
    return compile_


def _bin(ctx, call):
    """``bin(period)``; inside ``stats ... by bin(p) offset o`` an event at t goes to the bin of
    t + o, so with the window shifted back by o (compiler) each bin holds the events one
    offset earlier, labelled with the current period (time-shifted comparison).

    ``bin(timestamp, period)`` (AWS documents one argument; its GenAI dashboard guide and many published queries
    write ``bin(@timestamp, 1h)``) rounds that timestamp down, as ``datefloor`` does."""
    if len(call.args) == 2:
        period = _period_arg(ctx, call, 1)
        ts = _timestamp_arg(ctx, call, 0)
    else:
        period = _period_arg(ctx, call, 0)
        ts = ctx.timestamp_sql(call)
    if ctx.bin_offset is not None:
        ts = f"({ts} + {period_interval(ctx.bin_offset)})"
    return Typed(V.TIMESTAMP, floor_timestamp(ts, period))


def _datefloor(ctx, call):
    period = _period_arg(ctx, call, 1)
    return Typed(V.TIMESTAMP, floor_timestamp(_timestamp_arg(ctx, call, 0), period))


def _dateceil(ctx, call):
    period = _period_arg(ctx, call, 1)
    return Typed(V.TIMESTAMP, ceil_timestamp(_timestamp_arg(ctx, call, 0), period))


def _frommillis(ctx, call):
    (a,) = _args(ctx, call)
    return Typed(V.TIMESTAMP, epoch_ms_sql(as_num(a)))


def _tomillis(ctx, call):
    return Typed(V.NUMBER, f"epoch_ms({_timestamp_arg(ctx, call, 0)})")


def _json_parse(ctx, call):
    """``jsonParse(field)``: the field's text parsed as JSON (MAP/LIST/scalar); null when the
    text is not valid JSON. Dotted and indexed names (``js.a.0``) then read inside it."""
    (a,) = _args(ctx, call)
    s = as_text(a)
    return Typed(V.DYNAMIC, f"(CASE WHEN json_valid({s}) THEN CAST({s} AS JSON) END)")


def _json_stringify(ctx, call):
    """``jsonStringify(MAP|LIST)``: compact JSON text of the value."""
    (a,) = _args(ctx, call)
    return Typed(V.STRING, f"CAST(json({as_json(a)}) AS VARCHAR)")


def _unmask(ctx, call):
    """``unmask(field)``: offline data is never masked, so the value itself."""
    (a,) = _args(ctx, call)
    return a


def _ip_fn(sql_name: str, n_args: int) -> Compile:
    def compile_(ctx, call):
        args = _args(ctx, call)
        ctx.owner.udfs.add(sql_name)
        return _bool(f"{sql_name}({', '.join(as_text(a) for a in args[:n_args])})")
    return compile_


SCALAR_FUNCTIONS: dict[str, Function] = {
    f.name.lower(): f
    for f in (
        Function("ispresent", 1, 1, _ispresent, "1 if the field exists in the event"),
        Function("isempty", 1, 1, _isempty, "1 if the field is missing or an empty string"),
        Function("isblank", 1, 1, _isblank, "1 if the field is missing, empty or only white space"),
        Function("coalesce", 1, None, _coalesce, "first argument that is not null"),
        Function("strlen", 1, 1, _strlen, "length in Unicode code points"),
        Function("toupper", 1, 1, _text_fn("upper"), "upper case"),
        Function("tolower", 1, 1, _text_fn("lower"), "lower case"),
        Function("concat", 1, None, _concat, "concatenation (missing values as empty strings)"),
        Function("substr", 2, 3, _substr, "substr(str, start[, length]); start is 0-based"),
        Function("replace", 3, 3, _replace, "replace(str, search, replacement): every occurrence"),
        Function("trim", 1, 2, _trim_fn("trim"), "strip white space (or the given characters) both ends"),
        Function("ltrim", 1, 2, _trim_fn("ltrim"), "strip white space (or the given characters) on the left"),
        Function("rtrim", 1, 2, _trim_fn("rtrim"), "strip white space (or the given characters) on the right"),
        Function("strcontains", 2, 2, _strcontains, "1 if str contains searchValue"),
        Function("abs", 1, 1, _num_fn("abs"), "absolute value"),
        Function("ceil", 1, 1, _num_fn("ceil"), "round up"),
        Function("floor", 1, 1, _num_fn("floor"), "round down"),
        Function("sqrt", 1, 1, _sqrt, "square root (null for negative numbers)"),
        Function("log", 1, 1, _log, "natural logarithm (null for values <= 0)"),
        Function("greatest", 1, None, _variadic_num("greatest"), "largest of the numbers"),
        Function("least", 1, None, _variadic_num("least"), "smallest of the numbers"),
        Function("bin", 1, 2, _bin, "@timestamp rounded down to the period (UTC); bin(t, period): t rounded down"),
        Function("datefloor", 2, 2, _datefloor, "timestamp rounded down to the period"),
        Function("dateceil", 2, 2, _dateceil, "timestamp rounded up to the period"),
        Function("fromMillis", 1, 1, _frommillis, "epoch milliseconds -> timestamp"),
        Function("toMillis", 1, 1, _tomillis, "timestamp -> epoch milliseconds"),
        Function("jsonParse", 1, 1, _json_parse, "text -> JSON value (MAP, LIST or scalar); null if not JSON"),
        Function("jsonStringify", 1, 1, _json_stringify, "MAP/LIST -> compact JSON text"),
        Function("unmask", 1, 1, _unmask, "the value itself (offline data is never masked)",
                 "CWL_QuerySyntax-Unmask.html"),
        Function("isValidIp", 1, 1, _ip_fn("iw_is_valid_ip", 1), "1 if the text is an IPv4 or IPv6 address"),
        Function("isValidIpV4", 1, 1, _ip_fn("iw_is_valid_ipv4", 1), "1 if the text is an IPv4 address"),
        Function("isValidIpV6", 1, 1, _ip_fn("iw_is_valid_ipv6", 1), "1 if the text is an IPv6 address"),
        Function("isIpInSubnet", 2, 2, _ip_fn("iw_is_ip_in_subnet", 2),
                 "1 if the IPv4/IPv6 address is in the CIDR subnet"),
        Function("isIpv4InSubnet", 2, 2, _ip_fn("iw_is_ipv4_in_subnet", 2),
                 "1 if the IPv4 address is in the IPv4 CIDR subnet"),
        Function("isIpv6InSubnet", 2, 2, _ip_fn("iw_is_ipv6_in_subnet", 2),
                 "1 if the IPv6 address is in the IPv6 CIDR subnet"),
    )
}


# --------------------------------------------------------------------------- stats functions
def _agg(t: V, sql: str) -> Typed:
    return Typed(t, sql, is_agg=True)


def _count(ctx, call):
    if not call.args or isinstance(call.args[0], Star):
        return _agg(V.NUMBER, "count(*)")
    (a,) = _args(ctx, call)
    return _agg(V.NUMBER, f"count({as_text(a) if a.type is V.DYNAMIC else a.sql})")


def _count_distinct(ctx, call):
    (a,) = _args(ctx, call)
    return _agg(V.NUMBER, f"count(DISTINCT {as_text(a)})")


def _numeric_agg(sql_name: str, keep_timestamp: bool = False) -> Compile:
    def compile_(ctx, call):
        (a,) = _args(ctx, call)
        if keep_timestamp and a.type is V.TIMESTAMP:
            return _agg(V.TIMESTAMP, f"{sql_name}({a.sql})")
        return _agg(V.NUMBER, f"{sql_name}({as_num(a)})")
    return compile_


def _pct(ctx, call):
    a = ctx.compile(call.args[0])
    p = call.args[1]
    if not isinstance(p, Literal) or not isinstance(p.value, (int, float)) or not 0 <= p.value <= 100:
        raise ctx.error("pct() needs a percentile between 0 and 100 as its second argument", p.pos)
    return _agg(V.NUMBER, f"quantile_disc({as_num(a)}, {sql_number(float(p.value) / 100.0)})")


def _time_ordered(sql_name: str) -> Compile:
    def compile_(ctx, call):
        (a,) = _args(ctx, call)
        key = ctx.event_order_key(call)
        return _agg(a.type, f"{sql_name}({a.sql}, {key})")
    return compile_


def _sorts(sql_name: str, simple: str) -> Compile:
    def compile_(ctx, call):
        (a,) = _args(ctx, call)
        if a.type in (V.NUMBER, V.TIMESTAMP, V.BOOLEAN):
            return _agg(a.type, f"{simple}({a.sql})")
        s = as_text(a)
        return _agg(a.type, f"{sql_name}({a.sql}, {sort_key_struct(a)}) FILTER (WHERE {s} IS NOT NULL)")
    return compile_


AGGREGATE_FUNCTIONS: dict[str, Function] = {
    f.name.lower(): f
    for f in (
        Function("count", 0, 1, _count, "count(*) counts events; count(field) events where field is present",
                 _STATS_PAGE),
        Function("count_distinct", 1, 1, _count_distinct, "number of distinct values (exact here)", _STATS_PAGE),
        Function("sum", 1, 1, _numeric_agg("sum"), "sum of the numeric values", _STATS_PAGE),
        Function("avg", 1, 1, _numeric_agg("avg"), "mean of the numeric values", _STATS_PAGE),
        Function("min", 1, 1, _numeric_agg("min", keep_timestamp=True), "smallest numeric value (or timestamp)",
                 _STATS_PAGE),
        Function("max", 1, 1, _numeric_agg("max", keep_timestamp=True), "largest numeric value (or timestamp)",
                 _STATS_PAGE),
        Function("pct", 2, 2, _pct, "percentile (nearest rank: a value present in the data)", _STATS_PAGE),
        Function("stddev", 1, 1, _numeric_agg("stddev_samp"), "sample standard deviation", _STATS_PAGE),
        Function("earliest", 1, 1, _time_ordered("arg_min"), "value from the event with the earliest @timestamp",
                 _STATS_PAGE),
        Function("latest", 1, 1, _time_ordered("arg_max"), "value from the event with the latest @timestamp",
                 _STATS_PAGE),
        Function("sortsFirst", 1, 1, _sorts("arg_min", "min"), "value that sorts first (Logs Insights sort order)",
                 _STATS_PAGE),
        Function("sortsLast", 1, 1, _sorts("arg_max", "max"), "value that sorts last (Logs Insights sort order)",
                 _STATS_PAGE),
        Function("count_over_time", 1, 1, _count, "events with the field per group (use with by bin(period))",
                 _TIMESERIES_PAGE),
        Function("sum_over_time", 1, 1, _numeric_agg("sum"), "sum of the numeric values per group (use with by "
                 "bin(period))", _TIMESERIES_PAGE),
    )
}
