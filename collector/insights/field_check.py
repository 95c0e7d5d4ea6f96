"""Fields a query reads that no scanned event has: the warning CloudWatch does not give.

A misspelt field (``stats count(*) by outcom``) runs on CloudWatch and offline alike and returns one row with a
blank group over every event. :func:`missing_fields` names each field the query reads from the events (never one the
query makes itself with ``as``, ``parse`` or ``stats``) that is present in none of the events of the time window,
and suggests the closest name that is present. ``idemwatch query`` prints them as warnings on standard error
(``--strict-fields`` makes them an error); the result itself is never changed.

Presence is the engine's own ``count(field)`` ("events where the field is present", a JSON ``null`` counting as
missing), run as one ``stats`` over the window, so the check reads fields exactly as the query does. Only when a
field is missing does it list the names that are present (system fields with a value, and every JSON field,
arrays flattened as ``a.0``), to pick the suggestion.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from collector.insights.compiler import JSON_COLUMN, TIMESTAMP_FIELD, FieldRead, compile_query
from collector.insights.engine import connection_and_table, prepare_query, seconds_to_ms, table_columns
from collector.insights.exceptions import line_column
from collector.insights.expressions import Call, Field, Item, Query, StatsCmd
from collector.insights.sql import quote_ident
from collector.tables import INTERNAL_EVENT_COLUMNS

__all__ = ["MissingField", "missing_fields"]


@dataclass(frozen=True)
class MissingField:
    """A field the query reads that no scanned event has.

    Attributes:
        name: the field as the query names it.
        line, column: where the query first reads it (1-based).
        events: how many events the time window holds (all of them lack the field).
        available: False when nothing could have the field where the query reads it (a name after ``stats`` that
            is not one of its columns, an ``@`` name Logs Insights does not generate).
        suggestion: the closest name present there, or None.
    """

    name: str
    line: int
    column: int
    events: int
    available: bool
    suggestion: str | None

    @property
    def message(self) -> str:
        """One line: which field, where, why, and the suggestion."""
        where = f" (line {self.line}, column {self.column})"
        why = (f"is present in none of the {self.events:,} events scanned" if self.available
               else "is not a field at that point of the query")
        hint = f"; did you mean '{self.suggestion}'?" if self.suggestion else ""
        return f"field '{self.name}'{where} {why}{hint}"


def missing_fields(store: Any, query: str, start: float | None = None, end: float | None = None, *,
                   log_groups: Sequence[str] | None = None) -> list[MissingField]:
    """The fields ``query`` reads that none of ``store``'s events in the window has, in query order.

    Args:
        store: an ``EventStore`` or a DuckDB connection with an ``events`` table (as :func:`~collector.insights.
            run_query`).
        query: Logs Insights query text.
        start, end: the query's window, epoch seconds, inclusive (None: unbounded).
        log_groups: the query's log groups (as ``run_query``); the check scans every group, the ones a ``SOURCE``
            reads included.
    Returns:
        One :class:`MissingField` per field (its first read); empty when every field is present somewhere, or when
        the window holds no event (nothing to compare with).
    Raises:
        collector.insights.QueryError: the query does not compile (as ``run_query`` would raise).
    """
    con, compiled = prepare_query(store, query, start, end, check_regexes=False, log_groups=log_groups)
    reads: dict[str, FieldRead] = {}
    for read in compiled.field_reads:
        reads.setdefault(read.name, read)
    table = connection_and_table(store)[1]
    columns = table_columns(con, table)
    counts = _presence(con, query, list(reads), columns, table, start, end)
    total = counts.pop(None)
    if not total:
        return []
    missing = [r for r in reads.values() if not r.available or not counts[r.name]]
    if not missing:
        return []
    present = _present_names(con, columns, table, start, end)
    out = []
    for r in missing:
        candidates = [c for c in r.candidates if c != r.name] if not r.available else present
        line, column = line_column(query, r.pos)
        out.append(MissingField(r.name, line, column, total, r.available, _closest(r.name, candidates)))
    return out


def _presence(con: Any, text: str, names: list[str], columns: list[tuple[str, str]], table: str,
              start: float | None, end: float | None) -> dict[str | None, int]:
    """{field: events where present} for ``names`` and {None: events in the window}: one ``stats`` over the window,
    compiled by the engine (so the field is read exactly as the query reads it)."""
    items = [Item(Call("count", (), 0, "count()"), "n")]
    items += [Item(Call("count", (Field(n, 0, n),), 0, f"count({n})"), f"c{i}") for i, n in enumerate(names)]
    compiled = compile_query(Query(text, (StatsCmd(tuple(items), (), 0),)), columns, table,
                             seconds_to_ms(start, upper=False), seconds_to_ms(end, upper=True), None)
    row = con.execute(compiled.sql, compiled.params).fetchone()
    counts: dict[str | None, int] = {None: int(row[0])}
    counts.update({n: int(v) for n, v in zip(names, row[1:])})
    return counts


def _present_names(con: Any, columns: list[tuple[str, str]], table: str, start: float | None,
                   end: float | None) -> list[str]:
    """Names of the fields some event of the window has: system/table columns with a value, and every JSON field
    (``json_group_structure`` merges the shape of every event's ``@json``)."""
    names = [n for n, _ in columns if n not in INTERNAL_EVENT_COLUMNS]
    ts = quote_ident(TIMESTAMP_FIELD)
    where, params = [], []
    for bound, op in ((seconds_to_ms(start, upper=False), ">="), (seconds_to_ms(end, upper=True), "<=")):
        if bound is not None:
            params.append(bound)
            where.append(f"{ts} {op} ${len(params)}")
    cond = f" WHERE {' AND '.join(where)}" if where else ""
    t = quote_ident(table)
    counts = ", ".join(f"count({quote_ident(n)})" for n in names)
    has_json = any(n == JSON_COLUMN for n, _ in columns)
    shape = f", json_group_structure(json({quote_ident(JSON_COLUMN)}))" if has_json else ""
    row = con.execute(f"SELECT {counts}{shape} FROM {t}{cond}", params).fetchone()
    present = [n for n, c in zip(names, row) if c]
    if has_json and row[len(names)] is not None:
        present += _flatten(json.loads(row[len(names)]))
    return present


def _flatten(shape: Any, prefix: str = "") -> list[str]:
    """Dotted field names of a ``json_group_structure`` shape (lists as ``.0``; only-null values are no field)."""
    if isinstance(shape, dict):
        return [n for k, v in shape.items() for n in _flatten(v, f"{prefix}{k}.")]
    if isinstance(shape, list):
        return [n for v in shape for n in _flatten(v, f"{prefix}0.")]
    return [] if shape == "NULL" or not prefix else [prefix[:-1]]


def _closest(name: str, candidates: list[str]) -> str | None:
    """The candidate that differs from ``name`` only in case, else the closest by ``difflib`` (ratio >= 0.6)."""
    folded = {c.lower(): c for c in candidates}
    if name.lower() in folded:
        return folded[name.lower()]
    match = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return match[0] if match else None
