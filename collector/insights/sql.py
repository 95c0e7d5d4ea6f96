"""Small SQL-building helpers: safe identifiers, bound parameters, typed SQL fragments.

User text never reaches the SQL text: string/regex/path values become numbered bound
parameters (``$1``), identifiers are generated (``__iw_c3``) or quoted with
:func:`quote_ident`, and numbers are rendered from parsed ``int``/``float`` values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from collector.insights.types import ValueType

__all__ = ["Params", "Typed", "as_bool", "as_json", "as_num", "as_text", "is_present", "json_present_sql", "quote_ident",
           "sql_literal", "sql_number"]


def quote_ident(name: str) -> str:
    """A DuckDB quoted identifier for any column name (``"`` doubled)."""
    return '"' + name.replace('"', '""') + '"'


def sql_literal(text: str) -> str:
    """A DuckDB string literal of ``text`` (``'`` doubled; correct for any text). For text the tool builds itself:
    JSON paths, regexes, ``json_transform`` specs, CASE mappings of the contract's names. A query's own strings are
    bound parameters instead (module docstring)."""
    return "'" + text.replace("'", "''") + "'"


def sql_number(value: float) -> str:
    """SQL literal of a parsed number (never raw user text)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, int):
        return str(int(value))
    return f"CAST({float(value)!r} AS DOUBLE)"


class Params:
    """Numbered bound parameters; equal values share one number."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._index: dict[tuple[type, Any], int] = {}

    def add(self, value: Any) -> str:
        key = (type(value), value)
        if key not in self._index:
            self.values.append(value)
            self._index[key] = len(self.values)
        return f"${self._index[key]}"


@dataclass(frozen=True)
class Typed:
    """A compiled expression: SQL text, its static type, and optional specialised forms.

    ``sql`` is the natural form (JSON for DYNAMIC). ``text_sql``/``num_sql``/``present_sql`` are cheaper
    equivalents of :func:`as_text`/:func:`as_num`/:func:`is_present` when the producer knows one.
    """

    type: ValueType
    sql: str
    text_sql: str | None = None
    num_sql: str | None = None
    is_agg: bool = False
    present_sql: str | None = None


def as_text(t: Typed) -> str:
    """VARCHAR form: JSON strings unquoted, numbers as their text, timestamps as
    ``YYYY-MM-DD HH:MM:SS.mmm``, booleans as ``1``/``0``."""
    if t.text_sql is not None:
        return t.text_sql
    if t.type is ValueType.STRING:
        return t.sql
    if t.type is ValueType.DYNAMIC:
        return f"(({t.sql}) ->> '$')"
    if t.type is ValueType.NUMBER:
        return f"CAST({t.sql} AS VARCHAR)"
    if t.type is ValueType.BOOLEAN:
        return f"CAST(CAST({t.sql} AS INTEGER) AS VARCHAR)"
    return f"strftime({t.sql}, '%Y-%m-%d %H:%M:%S.%g')"


def is_present(t: Typed) -> str:
    """BOOLEAN SQL, true when ``t`` has a value (``ispresent``): its text form is not null (a JSON ``null`` is
    missing, as an absent field is)."""
    if t.present_sql is not None:
        return t.present_sql
    return f"({as_text(t)} IS NOT NULL)"


def json_present_sql(ident: str) -> str:
    """``is_present`` of a column of DuckDB type JSON (always valid JSON text, which DuckDB checks on every write),
    without parsing most values: ``(ident ->> '$') IS NOT NULL`` is false only for SQL NULL and the JSON ``null``
    literal, and JSON text that starts with neither white space (ASCII <= 32) nor ``n`` (110) is not ``null``;
    only the rest is parsed. About a fifth of the CPU of the parse on the hot columns."""
    return (f"({ident} IS NOT NULL AND ((ascii({ident}) > 32 AND ascii({ident}) <> 110) "
            f"OR ({ident} ->> '$') IS NOT NULL))")


def as_num(t: Typed) -> str:
    """DOUBLE/BIGINT form: numbers, numeric strings (``"42"``) and JSON numbers convert,
    anything else is NULL. Timestamps become epoch milliseconds."""
    if t.num_sql is not None:
        return t.num_sql
    if t.type is ValueType.NUMBER:
        return t.sql
    if t.type is ValueType.BOOLEAN:
        return f"CAST({t.sql} AS INTEGER)"
    if t.type is ValueType.TIMESTAMP:
        return f"epoch_ms({t.sql})"
    return f"TRY_CAST({as_text(t)} AS DOUBLE)"


def as_bool(t: Typed) -> str:
    """BOOLEAN form (filter predicates): booleans as is, numbers true when non-zero,
    strings true when numeric non-zero or ``true``."""
    if t.type is ValueType.BOOLEAN:
        return t.sql
    if t.type is ValueType.NUMBER:
        return f"(({t.sql}) <> 0)"
    if t.type is ValueType.TIMESTAMP:
        return f"(({t.sql}) IS NOT NULL)"
    return f"coalesce(({as_num(t)}) <> 0, lower({as_text(t)}) = 'true')"


def as_json(t: Typed) -> str:
    """JSON form, for mixing typed values into a DYNAMIC result (e.g. ``coalesce``)."""
    if t.type is ValueType.DYNAMIC:
        return t.sql
    if t.type is ValueType.BOOLEAN:
        return f"to_json(CAST({t.sql} AS INTEGER))"
    if t.type is ValueType.TIMESTAMP:
        return f"to_json({as_text(t)})"
    return f"to_json({t.sql})"


_NUMBER_TEXT = r"'-?[0-9]+(\.[0-9]+)?'"
_NATURAL_KEY = ("list_transform(regexp_extract_all({s}, '[0-9]+|[^0-9]+'), lambda ch: CASE WHEN "
                "ascii(ch) BETWEEN 48 AND 57 THEN '0' || lpad(CAST(length(ch) AS VARCHAR), 9, '0') || ch "
                "ELSE ch END)")


def sort_parts(t: Typed) -> tuple[str, str, str, str, str]:
    """(is_number, number, number_text, natural_key, text) SQL of the Logs Insights sort order.

    Source: https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_QuerySyntax-Sort.html -
    ascending, all non-number values come before all number values ("values that include only
    numbers"); non-numbers compare in chunks: runs of digits by length then value, other runs
    by Unicode code point ("5A" < "111A" < "2345_" < "@"); numbers numerically. Descending is
    the reverse. Missing values are not ordered by the documentation; they go last here.
    """
    s = as_text(t)
    if t.type is ValueType.DYNAMIC:
        is_num = (f"(json_type({t.sql}) IN ('UBIGINT', 'BIGINT', 'DOUBLE', 'HUGEINT', 'INTEGER') "
                  f"OR regexp_full_match({s}, {_NUMBER_TEXT}))")
    else:
        is_num = f"regexp_full_match({s}, {_NUMBER_TEXT})"
    num = f"(CASE WHEN {is_num} THEN {as_num(t)} END)"
    num_text = f"(CASE WHEN {is_num} THEN {s} END)"
    return is_num, num, num_text, _NATURAL_KEY.format(s=s), s


_SCALAR_ORDER_TYPES = (ValueType.NUMBER, ValueType.TIMESTAMP, ValueType.BOOLEAN)
"""Value types ordered by their SQL value alone (one ORDER BY term)."""


def sort_term_pairs(t: Typed, desc: bool) -> list[tuple[str, str]]:
    """``(expression, direction)`` of each ORDER BY term putting ``t`` in Logs Insights sort order (see
    :func:`sort_parts`); ``direction`` is e.g. ``"DESC NULLS LAST"``."""
    d = "DESC" if desc else "ASC"
    if t.type in _SCALAR_ORDER_TYPES:
        return [(t.sql, f"{d} NULLS LAST")]
    is_num, num, num_text, key, s = sort_parts(t)
    rank = f"(CASE WHEN {s} IS NULL THEN 2 WHEN {is_num} THEN {0 if desc else 1} ELSE {1 if desc else 0} END)"
    return [(rank, "ASC"), (num, f"{d} NULLS LAST"), (num_text, f"{d} NULLS LAST"), (key, f"{d} NULLS LAST"),
            (s, f"{d} NULLS LAST")]


def sort_terms(t: Typed, desc: bool) -> list[str]:
    """ORDER BY terms putting ``t`` in Logs Insights sort order (see :func:`sort_parts`)."""
    return [f"{e} {d}" for e, d in sort_term_pairs(t, desc)]


def sort_is_scalar(t: Typed) -> bool:
    """True when ``t`` orders by its SQL value alone (one cheap term), not by the derived terms of a text."""
    return t.type in _SCALAR_ORDER_TYPES


def sort_tie_sql(t: Typed) -> str:
    """BOOLEAN SQL (a window expression), true on every row whose value of ``t`` :func:`sort_terms` orders as equal
    to another row's (and possibly on a few more: a lone NULL, never fewer): a neighbour in the order of
    :func:`sort_tie_key` is not distinct from it. DuckDB's ``IS NOT DISTINCT FROM`` and ORDER BY agree on equality
    (NULLs together, ``-0.0`` with ``0.0``, NaN with NaN), and values equal under :func:`sort_terms` have equal
    keys, hence sit in one run of that order."""
    k = sort_tie_key(t)
    return (f"(lag({k}) OVER (ORDER BY {k}) IS NOT DISTINCT FROM {k} "
            f"OR lead({k}) OVER (ORDER BY {k}) IS NOT DISTINCT FROM {k})")


def sort_tie_key(t: Typed) -> str:
    """SQL whose equal values include every pair of values :func:`sort_terms` orders as equal: the value itself for
    a scalar, else its text form (the last term; equal terms mean equal text)."""
    return t.sql if t.type in _SCALAR_ORDER_TYPES else as_text(t)


def sort_key_struct(t: Typed) -> str:
    """A struct whose ascending order is the Logs Insights ascending sort order (non-null values)."""
    is_num, num, num_text, key, s = sort_parts(t)
    return (f"{{'r': CASE WHEN {is_num} THEN 1 ELSE 0 END, 'n': {num}, 'nt': {num_text}, 'k': {key}, "
            f"'t': {s}}}")


# --------------------------------------------------------------------------- connection setup
def _ip(text: str, version: int | None):
    import ipaddress

    try:
        addr = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    return addr if version is None or addr.version == version else None


def _in_subnet(text: str, subnet: str, version: int | None) -> bool:
    import ipaddress

    addr = _ip(text, version)
    try:
        net = ipaddress.ip_network(subnet.strip(), strict=False)
    except ValueError:
        return False
    return addr is not None and addr.version == net.version and addr in net


IP_FUNCTIONS: dict[str, tuple[int, Any]] = {
    "iw_is_valid_ip": (1, lambda s: _ip(s, None) is not None),
    "iw_is_valid_ipv4": (1, lambda s: _ip(s, 4) is not None),
    "iw_is_valid_ipv6": (1, lambda s: _ip(s, 6) is not None),
    "iw_is_ip_in_subnet": (2, lambda s, n: _in_subnet(s, n, None)),
    "iw_is_ipv4_in_subnet": (2, lambda s, n: _in_subnet(s, n, 4)),
    "iw_is_ipv6_in_subnet": (2, lambda s, n: _in_subnet(s, n, 6)),
}
"""SQL name -> (arity, Python predicate) of the IP address functions (``ipaddress`` rules:
dotted-quad IPv4 without leading zeros, RFC 4291 IPv6 text; subnets in CIDR notation, host bits
allowed). Registered on a connection by :func:`register_functions`."""


def register_functions(con: Any, names: Any = None) -> None:
    """Register the engine's scalar UDFs (the IP functions) on ``con``; idempotent.

    Args:
        names: the SQL names to register (default: all of :data:`IP_FUNCTIONS`). The engine
            passes only those a query uses: the first Python UDF of a process costs about a
            second (DuckDB loads its Python-function machinery), so queries without IP
            functions never pay it.
    Works on a hardened connection too (a UDF is not a configuration setting).
    """
    import duckdb

    for name in IP_FUNCTIONS if names is None else names:
        arity, fn = IP_FUNCTIONS[name]
        try:
            con.create_function(name, fn, [duckdb.sqltype("VARCHAR")] * arity, duckdb.sqltype("BOOLEAN"),
                                side_effects=False)
        except duckdb.NotImplementedException as exc:  # "A function by the name of ... is already created"
            if "already created" not in str(exc):
                raise


HARDENING_SETTINGS = (
    ("enable_external_access", "false"),
    ("autoinstall_known_extensions", "false"),
    ("autoload_known_extensions", "false"),
    ("allow_community_extensions", "false"),
    ("lock_configuration", "true"),  # last: nothing after it can undo the settings above
)
"""DuckDB settings :func:`harden_connection` applies, in order (names checked against
``duckdb_settings()`` of the installed DuckDB by the tests)."""


def is_hardened(con: Any) -> bool:
    """True when ``con``'s database already runs with locked configuration and no external access."""
    lock, external = con.execute("SELECT current_setting('lock_configuration'), "
                                 "current_setting('enable_external_access')").fetchone()
    return bool(lock) and not external


def harden_connection(con: Any) -> Any:
    """Lock a DuckDB connection down for running user queries; returns ``con``.

    After this, SQL on ``con`` (and every connection to the same database instance) cannot
    read or write files or URLs (``read_csv``, ``COPY``, ``ATTACH``, ``httpfs``...), install or
    load extensions, or change any setting (``SET`` raises). The compiler never emits such
    SQL; this is the second wall behind it. Idempotent. Settings are per database instance,
    so do all file work (ingest, ``COPY``) on ``con``'s database before calling it.
    Source: https://duckdb.org/docs/operations_manual/securing_duckdb/overview
    """
    if is_hardened(con):
        return con
    for name, value in HARDENING_SETTINGS:
        con.execute(f"SET {name} = {value}")
    return con
