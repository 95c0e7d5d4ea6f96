"""What a Logs Insights query refers to, read from its parse tree (no compilation, no data).

Used by the standard-query contract tests (every field a standard query reads is a contract key) and by
``benchmarks/collector_bench.py`` (its floor materialises exactly the fields the standard queries read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from collector.insights.expressions import (
    DisplayCmd,
    Field,
    FieldsCmd,
    Literal,
    ParseCmd,
    StatsCmd,
    command_exprs,
    walk,
)
from collector.insights.parser import parse_query

__all__ = ["QueryReferences", "query_references"]


@dataclass(frozen=True)
class QueryReferences:
    """The references of one query.

    Attributes:
        fields_read: the event fields the query reads (``@message``, ``service``, ``_aws.Timestamp``...), in order of
            first use, each once: every field name its commands evaluate that no earlier command defined (an alias of
            ``fields``/``display``/``stats``, a ``stats`` group key, a ``parse`` name).
        literals: every literal value in its expressions, in source order (strings, numbers, booleans).
        columns: the result columns, in order (the last ``stats``'s keys and values, else every ``fields``/``display``
            item; empty when the query selects none).
    """

    fields_read: tuple[str, ...]
    literals: tuple[Any, ...]
    columns: tuple[str, ...]


def query_references(text: str) -> QueryReferences:
    """The :class:`QueryReferences` of the query ``text``. Raises ``QueryError`` when it does not parse."""
    literals: list[Any] = []
    defined: set[str] = set()
    read: list[str] = []
    columns: list[str] = []
    for cmd in parse_query(text).commands:
        nodes = [n for e in command_exprs(cmd) for n in walk(e)]
        literals += [n.value for n in nodes if isinstance(n, Literal)]
        read += [n.name for n in nodes if isinstance(n, Field) and n.name not in defined and n.name not in read]
        if isinstance(cmd, (FieldsCmd, DisplayCmd)):
            columns += [i.name for i in cmd.items if i.name not in columns]
        elif isinstance(cmd, StatsCmd):
            columns = [i.name for i in cmd.by + cmd.items]
        if isinstance(cmd, (FieldsCmd, DisplayCmd, StatsCmd)):
            defined |= {i.name for i in (cmd.items + (cmd.by if isinstance(cmd, StatsCmd) else ()))}
        if isinstance(cmd, ParseCmd):
            defined |= set(cmd.aliases)
    return QueryReferences(tuple(read), tuple(literals), tuple(columns))
