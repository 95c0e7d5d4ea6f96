"""AST of a parsed Logs Insights query: expressions and commands.

Every node keeps ``pos`` (offset into the query text) so errors can point at it, and
expressions keep ``text`` (the source slice) because Logs Insights names an un-aliased
result column by the expression as written (``count(*)``, ``bin(5m)``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = [
    "Binary",
    "Call",
    "Command",
    "DedupCmd",
    "DisplayCmd",
    "Duration",
    "Expr",
    "Field",
    "FieldsCmd",
    "FilterCmd",
    "FilterIndexCmd",
    "InList",
    "InSubquery",
    "Item",
    "JoinCmd",
    "LimitCmd",
    "Literal",
    "ParseCmd",
    "Query",
    "Regex",
    "SortCmd",
    "SourceCmd",
    "Star",
    "StatsCmd",
    "Unary",
    "UnmaskCmd",
    "UnnestCmd",
    "children",
    "command_exprs",
    "subqueries",
    "walk",
]


@dataclass(frozen=True)
class Literal:
    value: str | int | float
    pos: int
    text: str


@dataclass(frozen=True)
class Regex:
    pattern: str
    pos: int
    text: str


@dataclass(frozen=True)
class Duration:
    """A period literal such as ``5m``: ``amount`` units of ``unit`` (canonical: ms s m h d w mo q y)."""

    amount: int
    unit: str
    pos: int
    text: str


@dataclass(frozen=True)
class Field:
    name: str
    pos: int
    text: str


@dataclass(frozen=True)
class Star:
    pos: int
    text: str = "*"


@dataclass(frozen=True)
class Unary:
    op: str  # "-" | "not"
    operand: Expr
    pos: int
    text: str


@dataclass(frozen=True)
class Binary:
    op: str  # + - * / % ^ = != < <= > >= and or like =~
    left: Expr
    right: Expr
    pos: int
    text: str
    negated: bool = False  # "not like"


@dataclass(frozen=True)
class InList:
    operand: Expr
    items: tuple[Expr, ...]
    negated: bool
    pos: int
    text: str


@dataclass(frozen=True)
class InSubquery:
    """``<operand> [not] in (<subquery>)`` (CWL_QuerySyntax-Subqueries): membership in one result column of another
    query, the column named like ``column``."""

    operand: Expr
    query: Query
    column: str  # the subquery's result column the values come from: the operand's field name
    negated: bool
    pos: int
    text: str


@dataclass(frozen=True)
class Call:
    name: str  # as written
    args: tuple[Expr, ...]
    pos: int
    text: str

    @property
    def key(self) -> str:
        return self.name.lower()


Expr = Literal | Regex | Duration | Field | Star | Unary | Binary | InList | InSubquery | Call


@dataclass(frozen=True)
class Item:
    """``expr [as alias]``; ``name`` is the result column name (alias, else the source text)."""

    expr: Expr
    alias: str | None

    @property
    def name(self) -> str:
        if self.alias is not None:
            return self.alias
        if isinstance(self.expr, Field):
            return self.expr.name
        return self.expr.text


@dataclass(frozen=True)
class FieldsCmd:
    items: tuple[Item, ...]
    pos: int


@dataclass(frozen=True)
class DisplayCmd:
    items: tuple[Item, ...]
    pos: int


@dataclass(frozen=True)
class FilterCmd:
    expr: Expr
    pos: int


@dataclass(frozen=True)
class FilterIndexCmd:
    """``filterIndex <expr>``: offline there is no field index, so it filters like ``filter``."""

    expr: Expr
    pos: int


@dataclass(frozen=True)
class StatsCmd:
    items: tuple[Item, ...]
    by: tuple[Item, ...]
    pos: int
    offset: Duration | None = None  # ``by bin(5m) offset 1h``


@dataclass(frozen=True)
class SortCmd:
    keys: tuple[tuple[Expr, bool], ...]  # (expr, descending)
    pos: int


@dataclass(frozen=True)
class LimitCmd:
    count: int
    pos: int


@dataclass(frozen=True)
class ParseCmd:
    source: Expr
    pattern: Literal | Regex
    aliases: tuple[str, ...]  # glob: one per '*'; regex: named groups (filled by the parser)
    pos: int


@dataclass(frozen=True)
class DedupCmd:
    fields: tuple[Field, ...]
    pos: int


@dataclass(frozen=True)
class UnnestCmd:
    """``unnest <field> into <name>``: one record per element of a list."""

    source: Expr
    into: str
    pos: int


@dataclass(frozen=True)
class UnmaskCmd:
    """``unmask [fields]``: offline data is never masked, so this changes nothing."""

    fields: tuple[Field, ...]
    pos: int


@dataclass(frozen=True)
class SourceCmd:
    """``SOURCE logGroups(namePrefix: [...], class: [...], accountIdentifiers: [...])``, or ``SOURCE '<log group>'``
    (``names``: exact log group names, the form the join and subquery pages write)."""

    name_prefixes: tuple[str, ...]
    classes: tuple[str, ...]
    accounts: tuple[str, ...]
    pos: int
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class JoinCmd:
    """``join [type=inner|left] left=<alias> right=<alias> where <alias>.<field> = <alias>.<field> (<subquery>)``
    (CWL_QuerySyntax-Join). ``left_key``/``right_key``: the field names without their alias."""

    kind: str  # "inner" | "left"
    left: str
    right: str
    left_key: Field
    right_key: Field
    source: Query
    pos: int


Command = (FieldsCmd | DisplayCmd | FilterCmd | FilterIndexCmd | StatsCmd | SortCmd | LimitCmd | ParseCmd
           | DedupCmd | UnnestCmd | UnmaskCmd | SourceCmd | JoinCmd)


def children(expr: Expr) -> tuple[Expr, ...]:
    """The operands of ``expr`` in source order (``in [...]``: the operand, then every item)."""
    if isinstance(expr, Binary):
        return (expr.left, expr.right)
    if isinstance(expr, Unary):
        return (expr.operand,)
    if isinstance(expr, InList):
        return (expr.operand, *expr.items)
    if isinstance(expr, InSubquery):  # the subquery reads its own events: not an operand of this row
        return (expr.operand,)
    if isinstance(expr, Call):
        return expr.args
    return ()


def walk(expr: Expr) -> Iterator[Expr]:
    """Every node of ``expr`` in pre-order: the node, then its operands left to right (source order).

    Iterative (an explicit stack), so a chain of thousands of terms cannot exhaust the
    Python stack. This is the one tree walker: field discovery, aggregate detection and the
    standard-query contract test all use it.
    """
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def command_exprs(cmd: Command) -> tuple[Expr, ...]:
    """The expressions a command evaluates on its input rows, in source order (``stats``: the ``by`` keys first;
    ``limit``: none; ``join``: its left key, the right one is read by its subquery's rows)."""
    if isinstance(cmd, (FilterCmd, FilterIndexCmd)):
        return (cmd.expr,)
    if isinstance(cmd, UnnestCmd):
        return (cmd.source,)
    if isinstance(cmd, (FieldsCmd, DisplayCmd)):
        return tuple(i.expr for i in cmd.items)
    if isinstance(cmd, StatsCmd):
        return tuple(i.expr for i in cmd.by + cmd.items)
    if isinstance(cmd, SortCmd):
        return tuple(e for e, _ in cmd.keys)
    if isinstance(cmd, ParseCmd):
        return (cmd.source,)
    if isinstance(cmd, (DedupCmd, UnmaskCmd)):
        return cmd.fields
    if isinstance(cmd, JoinCmd):
        return (cmd.left_key,)
    return ()


def subqueries(cmd: Command) -> tuple[Query, ...]:
    """The queries nested in a command: a ``join``'s source and every ``in (<subquery>)`` of its expressions."""
    nested = [n.query for e in command_exprs(cmd) for n in walk(e) if isinstance(n, InSubquery)]
    return (cmd.source, *nested) if isinstance(cmd, JoinCmd) else tuple(nested)


@dataclass(frozen=True)
class Query:
    """A parsed query (or subquery): its text (the whole query's text for a subquery, so positions stay absolute)
    and its commands."""

    text: str
    commands: tuple[Command, ...] = field(default_factory=tuple)
