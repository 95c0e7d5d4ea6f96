"""Small SQL-building helpers: safe identifiers, bound parameters, typed SQL fragments.

User text never reaches the SQL text: string/regex/path values become numbered bound
parameters (``$1``), identifiers are generated (``__iw_c3``) or quoted with
:func:`quote_ident`, and numbers are rendered from parsed ``int``/``float`` values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from collector.insights.types import ValueType

__all__ = ["Params", "Typed", "as_bool", "as_json", "as_num", "as_text", "quote_ident", "sql_number"]


def quote_ident(name: str) -> str:
    """A DuckDB quoted identifier for any column name (``"`` doubled)."""
    return '"' + name.replace('"', '""') + '"'


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

    ``sql`` is the natural form (JSON for DYNAMIC). ``text_sql``/``num_sql`` are cheaper
    equivalents of :func:`as_text`/:func:`as_num` when the producer knows one.
    """

    type: ValueType
    sql: str
    text_sql: str | None = None
    num_sql: str | None = None
    is_agg: bool = False


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
