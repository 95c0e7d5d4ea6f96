"""Compile a parsed Logs Insights query to one DuckDB SQL statement over the ``events`` table.

Each command becomes a CTE stage reading the previous one. Rows keep every column they
had (``SELECT *, <new> AS __iw_cN``), so a later command can still see a field an earlier
``fields``/``display`` did not show; ``stats`` replaces the rows with its groups. The
displayed columns and the row order are tracked beside the stages and applied at the end:

- displayed: the last ``display``; else every field named by ``fields`` commands; else the
  last ``stats`` output; else ``@timestamp, @message`` (what the console shows) and the fields
  ``parse`` made (as AWS's published output of such a query shows them).
- order: the last ``sort`` (ties broken by ingest order ``@seq``); without one, non-stats
  results are ``@timestamp`` descending and stats results are ordered by their group keys.
- limit: ``limit N`` where written; the result is capped at ``limit_cap`` rows (10,000 as
  on CloudWatch; ``None`` for the collector's internal, uncapped runs).

Field resolution: a column of the stage with that exact name (system fields, fields made
by ``fields``/``parse``/``stats``, and hot fields the ingest materialised as columns) wins;
then ``<name>.<path>`` inside a value the query made (a ``jsonParse`` result or an
``unnest`` item, longest name first); otherwise the field is read from the ``@json`` column
(``a.b`` = nested key, ``a.0`` = array element or key "0", or a top-level key literally named
``a.b``); otherwise it is missing. After ``stats``, an expression written exactly as a result
column's name (``sort bin(5m)``, ``filter count(*) > 1``) is that column.

Layout (as sqlglot's generator): one entry per command node type in
:data:`_COMMAND_GENERATORS` and per expression node type in :data:`_EXPR_COMPILERS`; left-deep
chains (``a + b + c``, ``x or y or z``) are compiled iteratively.
Dynamic typing rules are documented in :mod:`collector.insights` (package docstring).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from collector.insights.catalog import UNSUPPORTED_FUNCTIONS
from collector.insights.constants import ACCOUNT_ID_PATTERN, DEFAULT_LIMIT
from collector.insights.exceptions import QueryError
from collector.insights.expressions import (
    Binary,
    Call,
    DedupCmd,
    DisplayCmd,
    Duration,
    Expr,
    Field,
    FieldsCmd,
    FilterCmd,
    FilterIndexCmd,
    InList,
    InSubquery,
    Item,
    JoinCmd,
    LimitCmd,
    Literal,
    ParseCmd,
    Query,
    Regex,
    SortCmd,
    SourceCmd,
    Star,
    StatsCmd,
    Unary,
    UnmaskCmd,
    UnnestCmd,
    command_exprs,
    walk,
)
from collector.insights.functions import AGGREGATE_FUNCTIONS, SCALAR_FUNCTIONS, period_interval
from collector.insights.parser import parse_query
from collector.insights.regex import capture_count, convert_named_groups
from collector.insights.sql import (
    Params,
    Typed,
    as_bool,
    as_json,
    as_num,
    as_text,
    json_present_sql,
    quote_ident,
    sort_is_scalar,
    sort_term_pairs,
    sort_terms,
    sort_tie_sql,
)
from collector.insights.types import ValueType as V
from collector.tables import EVENT_COLUMNS, INTERNAL_EVENT_COLUMNS

__all__ = ["DEFAULT_LIMIT", "EVENT_COLUMN_TYPES", "Column", "CompiledQuery", "FieldRead", "compile_query",
           "convert_named_groups", "glob_to_regex"]

TIMESTAMP_FIELD = "@timestamp"
SEQ_COLUMN = "@seq"
JSON_COLUMN = "@json"
_TIMESTAMP_MS_COLUMNS = {"@timestamp", "@ingestionTime"}
_HIDDEN_COLUMNS = {SEQ_COLUMN, JSON_COLUMN}

EVENT_COLUMN_TYPES: dict[str, str] = dict(EVENT_COLUMNS)
"""The ``events`` table schema shared with the ingest (``collector.tables.EVENT_COLUMNS``)."""


@dataclass(frozen=True)
class Column:
    name: str  # field name as the query sees it
    ident: str  # SQL expression naming it in the stage (quoted identifier)
    type: V
    ms_timestamp: bool = False  # stored as BIGINT epoch ms, seen as TIMESTAMP
    nested: bool = False  # a value the query made (jsonParse, unnest): ``name.path`` reads inside it
    json: bool = False  # a table column of DuckDB type JSON (valid JSON text): ``json_present_sql`` applies
    event_field: str | None = None  # the event field it holds as ingested (None: a value the query made)
    event_json: bool = False  # nested, and the events' own fields (a join side): ``name.path`` is field ``path``

    def typed(self) -> Typed:
        if self.ms_timestamp:
            return Typed(V.TIMESTAMP, f"epoch_ms({self.ident})", num_sql=self.ident)
        if self.type is V.DYNAMIC:
            return Typed(V.DYNAMIC, self.ident, text_sql=f"({self.ident} ->> '$')",
                         present_sql=json_present_sql(self.ident) if self.json else None)
        return Typed(self.type, self.ident)


@dataclass
class _Scope:
    columns: dict[str, Column]
    json_ident: str | None
    seq_ident: str | None
    is_stats: bool = False
    group_keys: list[Column] = field(default_factory=list)
    tiebreak: tuple[str, ...] = ()  # after @seq: what orders the rows one event became (a join's right @seq)

    def with_columns(self, columns: dict[str, Column]) -> _Scope:
        """The same scope over ``columns``."""
        return _Scope(columns, self.json_ident, self.seq_ident, self.is_stats, self.group_keys, self.tiebreak)

    @property
    def timestamp(self) -> Column | None:
        c = self.columns.get(TIMESTAMP_FIELD)
        return c if c is not None and c.type is V.TIMESTAMP else None


@dataclass(frozen=True)
class FieldRead:
    """A field a query reads that the query did not make (an event field, or a name that means nothing where it is
    read).

    ``name``: the field (for a join side's ``alias.path``, ``path``); ``pos``: its offset in the query text;
    ``available``: False when no row at that point can have it (``@`` names that are not system fields, any name
    after ``stats`` that is not one of its columns); ``candidates``: the names that point offers then."""

    name: str
    pos: int
    available: bool = True
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompiledQuery:
    """SQL + bound parameters + the result columns (name, value type) in display order.

    ``regexes``: (RE2 pattern, offset in the query text) of every regular expression the SQL
    uses, so the engine can check them before running and point at the bad one.
    ``stages``: the SQL's ``WITH`` items in order, each ``("s<k> AS (...)", offset of the command that
    made it)`` (None for the first, the events in the time range), so the engine can run a prefix
    of them and point a runtime failure at its command.
    ``unordered_sql``: for a query ending in ``sort <one timestamp> asc`` over events
    (no cap, no stats), the same rows without the final ORDER BY and with two more columns, the
    sort key ``__iw_order_key`` and the ingest order ``__iw_order_seq`` (same ``params``): a caller
    that checks the rows arrive in (key ascending, nulls last; then seq ascending) order, and falls back to
    ``sql`` when not, gets ``sql``'s rows in ``sql``'s order without the sort. None otherwise.
    ``field_reads``: every :class:`FieldRead` in query order (``collector.insights.field_check`` checks them against
    the events).
    """

    sql: str
    params: list
    columns: list[tuple[str, V]]
    regexes: list[tuple[str, int]] = field(default_factory=list)
    udfs: list[str] = field(default_factory=list)  # engine UDFs the SQL calls (sql.register_functions)
    stages: list[tuple[str, int | None]] = field(default_factory=list)
    unordered_sql: str | None = None
    field_reads: tuple[FieldRead, ...] = ()


ORDER_KEY_COLUMN, ORDER_SEQ_COLUMN = "__iw_order_key", "__iw_order_seq"
"""The two columns ``CompiledQuery.unordered_sql`` adds (sort key, ingest order)."""


def _duck_type(duck_type: str) -> V:
    t = duck_type.upper()
    if t == "JSON":
        return V.DYNAMIC
    if t in ("VARCHAR", "TEXT", "STRING") or t.startswith("VARCHAR"):
        return V.STRING
    if t == "BOOLEAN":
        return V.BOOLEAN
    if t.startswith("TIMESTAMP"):
        return V.TIMESTAMP
    if any(t.startswith(n) for n in ("BIGINT", "INTEGER", "DOUBLE", "FLOAT", "DECIMAL", "SMALLINT",
                                     "TINYINT", "HUGEINT", "UBIGINT", "UINTEGER", "REAL")):
        return V.NUMBER
    return V.DYNAMIC


def compile_query(
    query: str | Query,
    table_columns: Sequence[tuple[str, str]] | None = None,
    table: str = "events",
    start_ms: int | None = None,
    end_ms: int | None = None,
    limit_cap: int | None = DEFAULT_LIMIT,
    *,
    log_groups: Sequence[str] | None = None,
) -> CompiledQuery:
    """Compile Logs Insights text to DuckDB SQL.

    Args:
        query: query text (or an already parsed Query).
        table_columns: (name, DuckDB type) of the events table; default the shared schema.
            Extra JSON columns named like a field are used as materialised hot fields.
        table: events table name.
        start_ms, end_ms: inclusive bounds on ``@timestamp`` (epoch ms), None = unbounded.
        limit_cap: maximum rows (10,000 as on CloudWatch); None = no cap.
        log_groups: the log groups (names) the query runs on, as StartQuery's ``logGroupNames``; None = every
            group in the table. A (sub)query that starts with ``SOURCE`` chooses its own groups instead.
    Raises:
        QueryError: syntax error, unsupported command/function, or invalid argument.
    """
    parsed = query if isinstance(query, Query) else parse_query(query)
    cols = list(table_columns) if table_columns is not None else list(EVENT_COLUMN_TYPES.items())
    compiler = _QueryCompiler(parsed, cols, table, start_ms, end_ms, limit_cap,
                              tuple(log_groups) if log_groups is not None else None)
    try:
        return compiler.compile()
    except QueryError as exc:
        raise exc.with_query(parsed.text) from None
    except Exception as exc:  # a defect of the compiler: still one line with the command's position
        raise QueryError(f"internal error compiling this command ({type(exc).__name__}: {exc}); "
                         "please report the query", compiler.command_pos, parsed.text) from exc


class ExprCompiler:
    """Compiles expressions against one stage scope (used by the function registry).

    ``group_items``: names a ``stats`` command resolves without an aggregate: its ``by`` keys
    and the aliases of its earlier items (AWS's "overprovisioned memory" sample reuses them).
    ``bin_offset``: the ``offset`` of ``stats ... by bin() offset <period>``.
    """

    def __init__(self, owner: _QueryCompiler, scope: _Scope, allow_agg: bool = False,
                 group_items: dict[str, Typed] | None = None, bin_offset: Duration | None = None) -> None:
        self.owner = owner
        self.scope = scope
        self.params = owner.params
        self.allow_agg = allow_agg
        self.group_items = group_items if group_items is not None else {}
        self.bin_offset = bin_offset
        self._in_agg = False

    def error(self, message: str, pos: int | None) -> QueryError:
        return QueryError(message, pos, self.owner.query.text)

    # ---- helpers used by functions
    def timestamp_sql(self, call: Call) -> str:
        ts = self.scope.timestamp
        if ts is None:
            raise self.error(f"{call.name}() needs @timestamp, which is not available after stats", call.pos)
        return ts.typed().sql

    def event_order_key(self, call: Call) -> str:
        ts = self.scope.timestamp
        if ts is None:
            raise self.error(f"{call.name}() needs @timestamp, which is not available after stats", call.pos)
        if self.scope.seq_ident:
            # (@timestamp, @seq) packed in one HUGEINT: same order as the pair, cheaper than a struct
            return f"(CAST({ts.ident} AS HUGEINT) * 1000000000000 + {self.scope.seq_ident})"
        return ts.ident

    # ---- expressions
    def compile(self, e: Expr) -> Typed:
        if isinstance(e, Call) and self.scope.is_stats and not self.allow_agg:
            col = self.scope.columns.get(e.text)
            if col is not None:  # `sort bin(5m)` / `filter count(*) > 1` after stats: its result column
                return col.typed()
        handler = _EXPR_COMPILERS.get(type(e))
        if handler is None:  # pragma: no cover - every node type has an entry
            raise self.error(f"unsupported expression {type(e).__name__}", getattr(e, "pos", None))
        return handler(self, e)

    def _literal(self, e: Literal) -> Typed:
        if isinstance(e.value, str):
            return Typed(V.STRING, f"CAST({self.params.add(e.value)} AS VARCHAR)")
        return Typed(V.NUMBER, repr(e.value) if isinstance(e.value, int) else f"CAST({e.value!r} AS DOUBLE)")

    def _field(self, e: Field) -> Typed:
        if e.name in self.group_items and not self._in_agg:
            return self.group_items[e.name]
        if self.allow_agg and not self._in_agg:
            raise self.error(f"field '{e.name}' is used in stats outside an aggregate function "
                             f"and is not a 'by' field or an earlier alias of this stats", e.pos)
        return self.owner.resolve_field(self.scope, e.name, e.pos)

    def _unary(self, e: Unary) -> Typed:
        inner = self.compile(e.operand)
        if e.op == "not":
            return Typed(V.BOOLEAN, f"(NOT {as_bool(inner)})", is_agg=inner.is_agg)
        return Typed(V.NUMBER, f"(- {as_num(inner)})", is_agg=inner.is_agg)

    def _misplaced(self, e: Expr) -> Typed:
        if isinstance(e, Duration):
            raise self.error(f"a time period ({e.text}) is only valid as an argument of bin(), datefloor() "
                             "or dateceil()", e.pos)
        if isinstance(e, Regex):
            raise self.error("a /regex/ is only valid after like, =~ or in parse", e.pos)
        raise self.error("'*' is only valid in count(*)", e.pos)

    def _binary(self, e: Binary) -> Typed:
        if e.op in ("like", "=~"):  # the right side is a pattern, bound as a parameter
            return self._combine(e, self.compile(e.left), Typed(V.STRING, "NULL"))
        group = _CHAIN_GROUPS.get(e.op)
        if group is None:
            return self._combine(e, self.compile(e.left), self.compile(e.right))
        # a left-deep chain (a + b - c ..., x or y or z ...) compiled iteratively: its length
        # is bounded by the query length only, never by the Python stack
        spine = []
        node: Expr = e
        while isinstance(node, Binary) and node.op in group:
            spine.append(node)
            node = node.left
        acc = self.compile(node)
        if e.op in ("and", "or"):
            terms = [as_bool(acc)]
            agg = acc.is_agg
            for b in reversed(spine):
                right = self.compile(b.right)
                terms.append(as_bool(right))
                agg = agg or right.is_agg
            return Typed(V.BOOLEAN, "(" + f" {e.op.upper()} ".join(terms) + ")", is_agg=agg)
        for b in reversed(spine):
            acc = self._combine(b, acc, self.compile(b.right))
        return acc

    def _combine(self, e: Binary, left: Typed, right: Typed) -> Typed:
        agg = left.is_agg or right.is_agg
        if e.op in ("like", "=~"):
            pat = e.right
            if not isinstance(pat, (Literal, Regex)):  # pragma: no cover - the parser only builds these
                raise self.error(f"{e.op} needs a \"string\" or a /regex/", pat.pos)
            pattern = str(pat.value) if isinstance(pat, Literal) else pat.pattern
            p = self.params.add(pattern)
            if isinstance(pat, Regex) or e.op == "=~":
                self.owner.regexes.append((pattern, pat.pos))
            if isinstance(pat, Literal) and e.op == "like":
                sql = f"contains({as_text(left)}, {p})"
            else:
                sql = f"regexp_matches({as_text(left)}, {p})"
            if e.negated:
                sql = f"(NOT {sql})"
            return Typed(V.BOOLEAN, sql, is_agg=left.is_agg)
        if e.op in ("+", "-", "*", "/", "%", "^"):
            a, b = as_num(left), as_num(right)
            if e.op == "/":
                sql = f"(CAST({a} AS DOUBLE) / NULLIF(CAST({b} AS DOUBLE), 0))"
            elif e.op == "%":
                sql = f"fmod(CAST({a} AS DOUBLE), NULLIF(CAST({b} AS DOUBLE), 0))"
            elif e.op == "^":
                sql = f"pow(CAST({a} AS DOUBLE), CAST({b} AS DOUBLE))"
            else:
                # DOUBLE arithmetic: integer literals near 2**63 must not overflow BIGINT
                sql = f"(CAST({a} AS DOUBLE) {e.op} CAST({b} AS DOUBLE))" if _big(e) else f"({a} {e.op} {b})"
            return Typed(V.NUMBER, sql, is_agg=agg)
        return Typed(V.BOOLEAN, compare(e.op, left, right), is_agg=agg)

    def _in_list(self, e: InList) -> Typed:
        left = self.compile(e.operand)
        items = [self.compile(i) for i in e.items]
        agg = left.is_agg or any(i.is_agg for i in items)
        if not items:
            # the empty set: "x in []" matches no event; "x not in []" matches every event where
            # x is present - the same rule as a non-empty list, where a missing x matches neither
            sql = f"(CASE WHEN {as_text(left)} IS NOT NULL THEN FALSE END)"
        elif all(i.type is V.STRING for i in items):
            sql = f"({as_text(left)} IN ({', '.join(i.sql for i in items)}))"
        elif all(i.type is V.NUMBER for i in items):
            sql = f"({as_num(left)} IN ({', '.join(i.sql for i in items)}))"
        else:
            sql = "(" + " OR ".join(compare("=", left, i) for i in items) + ")"
        if e.negated:
            sql = f"(NOT {sql})"
        return Typed(V.BOOLEAN, sql, is_agg=agg)

    def _in_subquery(self, e: InSubquery) -> Typed:
        """``field [not] in (<subquery>)`` (CWL_QuerySyntax-Subqueries): true when the field's text equals one value
        of the subquery's result column of the same name ("Only fields explicitly selected in the subquery are
        available to the outer query"). The subquery reads the same time window, is not capped at 10,000 rows
        (AWS leaves its size open), and a missing value matches neither ``in`` nor ``not in``."""
        left = self.compile(e.operand)
        sub = self.owner.pipeline(e.query)
        shown = sub.shown()
        if e.column not in shown:
            raise self.error(f"the subquery returns no field '{e.column}' (it returns "
                             f"{', '.join(shown) or 'no field'}); end it with '| fields {e.column}'", e.pos)
        value = as_text(self.owner.resolve_field(sub.scope, e.column))
        values = self.owner.add_stage(f"SELECT DISTINCT {value} AS v FROM {sub.prev} WHERE {value} IS NOT NULL")
        sql = f"({as_text(left)} IN (SELECT v FROM {values}))"
        return Typed(V.BOOLEAN, f"(NOT {sql})" if e.negated else sql, is_agg=left.is_agg)

    def _call(self, e: Call) -> Typed:
        key = e.key
        if key in AGGREGATE_FUNCTIONS:
            fn = AGGREGATE_FUNCTIONS[key]
            if not self.allow_agg:
                raise self.error(f"stats function '{e.name}' can only be used in a stats command", e.pos)
            if self._in_agg:
                raise self.error(f"stats function '{e.name}' cannot be nested in another stats function", e.pos)
            self._check_arity(fn.name, fn.min_args, fn.max_args, e)
            if any(isinstance(a, Star) for a in e.args) and key != "count":
                raise self.error(f"'*' is only valid in count(*), not in {e.name}()", e.pos)
            self._in_agg = True
            try:
                return fn.compile(self, e)
            finally:
                self._in_agg = False
        scalar = SCALAR_FUNCTIONS.get(key)
        if scalar is None:
            gap = UNSUPPORTED_FUNCTIONS.get(key)
            reason = f": {gap.reason}" if gap else ""
            raise self.error(f"unsupported function '{e.name}'{reason}", e.pos)
        self._check_arity(scalar.name, scalar.min_args, scalar.max_args, e)
        t = scalar.compile(self, e)
        agg = any(isinstance(n, Call) and n.key in AGGREGATE_FUNCTIONS for a in e.args for n in walk(a))
        return Typed(t.type, t.sql, t.text_sql, t.num_sql, is_agg=agg) if agg else t

    def _check_arity(self, name: str, lo: int, hi: int | None, e: Call) -> None:
        n = len(e.args)
        if n < lo or (hi is not None and n > hi):
            want = f"{lo}" if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
            raise self.error(f"{name}() takes {want} argument(s), got {n}", e.pos)


_CHAIN_GROUPS = {"and": {"and"}, "or": {"or"}, "+": {"+", "-"}, "-": {"+", "-"}, "*": {"*", "/", "%"},
                 "/": {"*", "/", "%"}, "%": {"*", "/", "%"}}
_BIG = 2**53


def _big(e: Binary) -> bool:
    return any(isinstance(x, Literal) and isinstance(x.value, int) and abs(x.value) >= _BIG
               for x in (e.left, e.right))


_EXPR_COMPILERS: dict[type, Callable[..., Typed]] = {
    Literal: ExprCompiler._literal,
    Field: ExprCompiler._field,
    Unary: ExprCompiler._unary,
    Binary: ExprCompiler._binary,
    InList: ExprCompiler._in_list,
    InSubquery: ExprCompiler._in_subquery,
    Call: ExprCompiler._call,
    Duration: ExprCompiler._misplaced,
    Regex: ExprCompiler._misplaced,
    Star: ExprCompiler._misplaced,
}
"""Generator entry per expression node type."""


_SQL_OP = {"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def compare(op: str, left: Typed, right: Typed) -> str:
    """Comparison with Logs Insights' dynamic typing (see package docstring):
    against a number -> numeric; against a string -> text; two timestamps -> time;
    two dynamic fields -> numeric when both values are numeric, else text."""
    o = _SQL_OP[op]
    lt, rt = left.type, right.type
    if lt is V.TIMESTAMP and rt is V.TIMESTAMP:
        return f"({left.sql} {o} {right.sql})"
    if V.NUMBER in (lt, rt) or V.BOOLEAN in (lt, rt):
        return f"({as_num(left)} {o} {as_num(right)})"
    if V.STRING in (lt, rt):
        return f"({as_text(left)} {o} {as_text(right)})"
    if V.TIMESTAMP in (lt, rt):
        return f"({as_num(left)} {o} {as_num(right)})"
    ln, rn = as_num(left), as_num(right)
    return (f"(CASE WHEN {ln} IS NOT NULL AND {rn} IS NOT NULL THEN {ln} {o} {rn} "
            f"ELSE {as_text(left)} {o} {as_text(right)} END)")


def _order_terms(col: Column, desc: bool) -> list[str]:
    """ORDER BY terms for one sort key in the documented Logs Insights order (sql.sort_terms)."""
    return sort_terms(col.typed(), desc)


class _QueryCompiler:
    def __init__(self, query: Query, table_columns: list[tuple[str, str]], table: str,
                 start_ms: int | None, end_ms: int | None, limit_cap: int | None,
                 log_groups: tuple[str, ...] | None = None) -> None:
        self.query = query
        self.log_groups = log_groups
        self.table_columns = table_columns
        self.table = table
        self.start_ms, self.end_ms = start_ms, end_ms
        self.limit_cap = limit_cap
        self.params = Params()
        self.stages: list[str] = []
        self.stage_positions: list[int | None] = []  # the command each stage compiles (command_pos)
        self._n = 0
        self.command_pos: int | None = None  # the command being compiled (error positions)
        self.regexes: list[tuple[str, int]] = []  # (pattern, position) of every regex used
        self.udfs: set[str] = set()  # engine UDFs the SQL calls
        self.field_reads: list[FieldRead] = []  # (FieldRead) fields read that the query did not make

    def error(self, message: str, pos: int | None) -> QueryError:
        return QueryError(message, pos, self.query.text)

    def new_ident(self, prefix: str = "c") -> str:
        self._n += 1
        return quote_ident(f"__iw_{prefix}{self._n}")

    def add_stage(self, select: str) -> str:
        name = f"s{len(self.stages)}"
        self.stages.append(f"{name} AS ({select})")
        self.stage_positions.append(self.command_pos)
        return name

    # ---- fields
    def resolve_field(self, scope: _Scope, name: str, pos: int | None = None) -> Typed:
        """The value of field ``name`` in ``scope`` (rules in the module docstring). With ``pos`` (the field as the
        query writes it), the read is recorded in ``field_reads`` when the query did not make the field."""
        col = scope.columns.get(name)
        if col is not None:
            if pos is not None and col.event_field is not None:
                self.field_reads.append(FieldRead(col.event_field, pos))
            return col.typed()
        prefixed = _json_column_prefix(scope, name)
        if prefixed is not None:  # js.accounts.0 where js = jsonParse(...), an unnest item or a join side
            col, rest = prefixed
            if pos is not None and col.event_json:
                self.field_reads.append(FieldRead(rest, pos))
            return self._json_value(col.ident, rest)
        # a JSON key "@x" is the field "@@x" (CWL_AnalyzeLogData-discoverable-fields); "@x" is a generated field
        json_name: str | None = name
        if name.startswith("@"):
            json_name = name[1:] if name.startswith("@@") else None
        if scope.json_ident is None or json_name is None:
            if pos is not None:
                self.field_reads.append(FieldRead(name, pos, False, tuple(scope.columns)))
            return Typed(V.DYNAMIC, "CAST(NULL AS JSON)", text_sql="CAST(NULL AS VARCHAR)")
        if pos is not None:
            self.field_reads.append(FieldRead(name, pos))
        return self._json_value(scope.json_ident, json_name)

    def _json_value(self, json_sql: str, name: str) -> Typed:
        """The value at the flattened field name ``name`` inside the JSON ``json_sql`` (``_json_paths``)."""
        ps = [self.params.add(p) for p in _json_paths(name)]
        if len(ps) == 1:
            return Typed(V.DYNAMIC, f"json_extract({json_sql}, {ps[0]})",
                         text_sql=f"json_extract_string({json_sql}, {ps[0]})")
        return Typed(V.DYNAMIC, "coalesce(" + ", ".join(f"json_extract({json_sql}, {p})" for p in ps) + ")",
                     text_sql="coalesce(" + ", ".join(f"json_extract_string({json_sql}, {p})" for p in ps) + ")")

    # ---- main
    def compile(self) -> CompiledQuery:
        st = self.pipeline(self.query)
        scope, visible = st.scope, st.shown()
        out_cols: list[tuple[str, V]] = []
        select = []
        for name in visible:
            col = scope.columns.get(name)
            t = self.resolve_field(scope, name) if col is None else col.typed()
            select.append(t.sql)
            out_cols.append((name, t.type))
        order = self._order_sql(scope, st.ordering)
        limit = f" LIMIT {int(self.limit_cap)}" if self.limit_cap is not None else ""
        sql = (f"WITH {', '.join(self.stages)} SELECT {', '.join(select) or 'NULL'} FROM {st.prev}{order}{limit}")
        unordered = None
        if st.plain_order is not None and self.limit_cap is None and select:
            key, seq = st.plain_order
            unordered = (f"WITH {', '.join(self.stages)} SELECT {', '.join(select)}, {key} AS {ORDER_KEY_COLUMN}, "
                         f"{seq} AS {ORDER_SEQ_COLUMN} FROM {st.prev}")
        return CompiledQuery(sql, list(self.params.values), out_cols, self.regexes, sorted(self.udfs),
                             list(zip(self.stages, self.stage_positions)), unordered, tuple(self.field_reads))

    def pipeline(self, query: Query) -> _State:
        """Compile ``query``'s commands over the events in the time window (the whole query, or a subquery: each
        reads the events anew, as CWL_QuerySyntax-Subqueries says "Subqueries execute independently of the outer
        query"); returns where the pipeline ends. Restores ``command_pos`` for the command that holds a subquery."""
        outer_pos = self.command_pos
        offsets = [c for c in query.commands if isinstance(c, StatsCmd) and c.offset is not None]
        if len(offsets) > 1:
            raise self.error("only one stats command can use offset", offsets[1].pos)
        offset = offsets[0].offset if offsets else None
        where = []
        ts_ident = quote_ident(TIMESTAMP_FIELD)
        for bound, op in ((self.start_ms, ">="), (self.end_ms, "<=")):
            if bound is None:
                continue
            if offset is None:
                where.append(f"{ts_ident} {op} {int(bound)}")
            else:  # offset: the events of the window shifted back by the offset
                where.append(f"{ts_ident} {op} epoch_ms(epoch_ms({int(bound)}) - {period_interval(offset)})")
        scope = self._base_scope()
        if self.log_groups is not None and not (query.commands and isinstance(query.commands[0], SourceCmd)):
            where.append(self._group_in(scope, self.log_groups, None))
        base = f"SELECT * FROM {quote_ident(self.table)}" + (f" WHERE {' AND '.join(where)}" if where else "")
        st = _State(self.add_stage(base), scope)
        for cmd in query.commands:
            if st.after_dedup and not isinstance(cmd, LimitCmd):
                raise self.error("only limit can follow dedup", cmd.pos)
            self.command_pos = cmd.pos
            st.prev, st.scope = self._prefetch_json(st.prev, st.scope, cmd)
            st.plain_order = None  # only a sort that is the last command sets it
            _COMMAND_GENERATORS[type(cmd)](self, st, cmd)
        self.command_pos = outer_pos
        return st

    # ---- one generator per command (dispatched by _COMMAND_GENERATORS)
    def _filter_cmd(self, st: _State, cmd: FilterCmd | FilterIndexCmd) -> None:
        t = ExprCompiler(self, st.scope).compile(cmd.expr)
        st.prev = self.add_stage(f"SELECT * FROM {st.prev} WHERE {as_bool(t)}")

    def _fields_cmd(self, st: _State, cmd: FieldsCmd) -> None:
        st.prev, st.scope, names = self._fields(st.prev, st.scope, cmd.items)
        st.visible = (st.visible or []) + [n for n in names if n not in (st.visible or [])]

    def _display_cmd(self, st: _State, cmd: DisplayCmd) -> None:
        st.prev, st.scope, st.visible = self._fields(st.prev, st.scope, cmd.items)

    def _parse_cmd(self, st: _State, cmd: ParseCmd) -> None:
        st.prev, st.scope = self._parse(st.prev, st.scope, cmd)
        st.parsed += [a for a in cmd.aliases if a not in st.parsed]

    def _stats_cmd(self, st: _State, cmd: StatsCmd) -> None:
        st.prev, st.scope, st.visible = self._stats(st.prev, st.scope, cmd)
        st.ordering = None

    def _sort_cmd(self, st: _State, cmd: SortCmd) -> None:
        st.prev, st.scope, st.ordering, st.plain_order = self._sort(st.prev, st.scope, cmd)

    def _limit_cmd(self, st: _State, cmd: LimitCmd) -> None:
        if self.limit_cap is not None and cmd.count > self.limit_cap:
            raise self.error(f"limit {cmd.count} exceeds the maximum of {self.limit_cap} rows", cmd.pos)
        order = self._order_sql(st.scope, st.ordering)
        st.prev = self.add_stage(f"SELECT * FROM {st.prev}{order} LIMIT {int(cmd.count)}")

    def _dedup_cmd(self, st: _State, cmd: DedupCmd) -> None:
        st.prev = self._dedup(st.prev, st.scope, cmd, st.ordering)
        st.after_dedup = True

    def _unnest_cmd(self, st: _State, cmd: UnnestCmd) -> None:
        """One row per list element (CWL_QuerySyntax-Unnest: "Any other types, such as MAP,
        String and numbers, are treated as a list with one item"); a missing value, JSON null
        or an empty list contributes no row."""
        j = as_json(ExprCompiler(self, st.scope).compile(cmd.source))
        items = (f"(CASE WHEN {j} IS NULL OR json_type({j}) = 'NULL' THEN CAST([] AS JSON[]) "
                 f"WHEN json_type({j}) = 'ARRAY' THEN CAST({j} AS JSON[]) ELSE [{j}] END)")
        ident = self.new_ident("u")
        st.prev = self.add_stage(f"SELECT *, unnest({items}) AS {ident} FROM {st.prev}")
        cols = dict(st.scope.columns)
        cols[cmd.into] = Column(cmd.into, ident, V.DYNAMIC, nested=True)
        st.scope = st.scope.with_columns(cols)

    def _join_cmd(self, st: _State, cmd: JoinCmd) -> None:
        """``join`` (CWL_QuerySyntax-Join): each row so far (the left, primary side) with every row of the source
        subquery (the right side) whose key has the same text; ``type=left`` keeps a left row without a match once,
        its right fields missing. Rules where the page is silent: a left row matching several right rows appears
        once per match, those rows in the right events' ingest order taken in the direction of the sort (the
        default order, newest first, puts the latest right event first); keys compare as text (the number 5 is
        the text "5"); a missing key matches nothing. Afterwards ``<alias>.<field>`` reads either
        side (every field of the right events, as the page's example reads ``lambda.duration``) and a name
        without an alias reads the left row."""
        left_key = as_text(ExprCompiler(self, st.scope).compile(cmd.left_key))
        right = self.pipeline(cmd.source)
        right_key = as_text(ExprCompiler(self, right.scope).compile(cmd.right_key))
        lk, rk = self.new_ident("jl"), self.new_ident("jr")
        left_stage = self.add_stage(f"SELECT *, {left_key} AS {lk} FROM {st.prev}")
        parts = [f"{right_key} AS {rk}"]
        cols = dict(st.scope.columns)
        for name, col in st.scope.columns.items():
            cols[f"{cmd.left}.{name}"] = col
        for name, col in right.scope.columns.items():
            ident = self.new_ident("j")
            parts.append(f"{col.ident} AS {ident}")
            cols[f"{cmd.right}.{name}"] = Column(f"{cmd.right}.{name}", ident, col.type, col.ms_timestamp,
                                                 col.nested, col.json, col.event_field, col.event_json)
        if st.scope.json_ident is not None:  # api.<path>: a field of the left event
            cols.setdefault(cmd.left, Column(cmd.left, st.scope.json_ident, V.DYNAMIC, nested=True, event_json=True))
        if right.scope.json_ident is not None:  # lambda.<path>: a field of the right event
            ident = self.new_ident("j")
            parts.append(f"{right.scope.json_ident} AS {ident}")
            cols.setdefault(cmd.right, Column(cmd.right, ident, V.DYNAMIC, nested=True, event_json=True))
        tiebreak = st.scope.tiebreak
        if right.scope.seq_ident is not None:
            seq = self.new_ident("j")
            parts.append(f"{right.scope.seq_ident} AS {seq}")
            tiebreak += (seq,)
        right_stage = self.add_stage(f"SELECT {', '.join(parts)} FROM {right.prev}")
        how = "LEFT JOIN" if cmd.kind == "left" else "JOIN"
        st.prev = self.add_stage(f"SELECT l.*, r.* EXCLUDE ({rk}) FROM {left_stage} AS l {how} {right_stage} AS r "
                                 f"ON l.{lk} = r.{rk}")
        st.scope = _Scope(cols, st.scope.json_ident, st.scope.seq_ident, st.scope.is_stats, st.scope.group_keys,
                          tiebreak)

    def _unmask_cmd(self, st: _State, cmd: UnmaskCmd) -> None:
        """Offline data is never masked (no data protection policy applies to local files)."""

    def _source_cmd(self, st: _State, cmd: SourceCmd) -> None:
        """``SOURCE logGroups(...)`` or ``SOURCE '<log group>'`` as a filter on ``@log``. ``@log`` is
        ``account-id:group`` (as AWS documents it, and as the local ingest builds it) or, in a table built
        otherwise, a bare group name; names and prefixes match the group name, account identifiers the account
        part (a bare name has none, so it matches no account list)."""
        unknown = [c for c in cmd.classes if c not in _LOG_GROUP_CLASSES]
        if unknown:
            raise self.error(f"unknown log group class {unknown[0]!r} (STANDARD, INFREQUENT_ACCESS, DELIVERY)",
                             cmd.pos)
        text, name = self._log_group_sql(st.scope, cmd.pos)
        terms = []
        if cmd.names:  # SOURCE '<log group>': that log group, by its exact name
            terms.append(self._group_in(st.scope, cmd.names, cmd.pos))
        if cmd.name_prefixes:
            terms.append("(" + " OR ".join(f"starts_with({name}, {self.params.add(p)})"
                                           for p in cmd.name_prefixes) + ")")
        if cmd.classes and "STANDARD" not in cmd.classes:
            terms.append("FALSE")  # every local log group is in the default class, STANDARD
        if cmd.accounts:
            accounts = ", ".join(self.params.add(a) for a in cmd.accounts)
            terms.append(f"(regexp_extract({text}, '^({ACCOUNT_ID_PATTERN}):', 1) IN ({accounts}))")
        if terms:
            st.prev = self.add_stage(f"SELECT * FROM {st.prev} WHERE {' AND '.join(terms)}")

    def _log_group_sql(self, scope: _Scope, pos: int | None) -> tuple[str, str]:
        """SQL of (``@log`` as text, its log group name) in ``scope``."""
        log = scope.columns.get("@log")
        if log is None:
            raise self.error("selecting log groups needs the @log field, which is not in the events table", pos)
        text = as_text(log.typed())
        return text, f"regexp_replace({text}, '^{ACCOUNT_ID_PATTERN}:', '')"

    def _group_in(self, scope: _Scope, names: Sequence[str], pos: int | None) -> str:
        """SQL: the event's log group is one of ``names`` (exact names)."""
        name = self._log_group_sql(scope, pos)[1]
        return f"({name} IN ({', '.join(self.params.add(n) for n in names) or 'NULL'}))"

    def _prefetch_json(self, prev: str, scope: _Scope, cmd) -> tuple[str, _Scope]:
        """Read every JSON field a command uses with ONE parse of ``@json`` per row
        (``json_extract(@json, [paths])``) instead of one parse per field; the values become
        stage columns, so later commands reuse them too. Only when a command reads >= 2."""
        if scope.json_ident is None:
            return prev, scope
        names = [n for n in dict.fromkeys(_command_fields(cmd))
                 if n not in scope.columns and not n.startswith("@") and _json_column_prefix(scope, n) is None]
        if len(names) < 2:
            return prev, scope
        paths: list[str] = []
        index: dict[str, list[int]] = {}
        for n in names:
            index[n] = []
            for p in _json_paths(n):
                if p not in paths:
                    paths.append(p)
                index[n].append(paths.index(p) + 1)
        lst = self.new_ident("j")
        param = self.params.add(tuple(paths))
        stage = self.add_stage(f"SELECT *, json_extract({scope.json_ident}, CAST({param} AS VARCHAR[])) AS {lst} "
                               f"FROM {prev}")
        cols = dict(scope.columns)
        for n in names:
            refs = [f"{lst}[{i}]" for i in index[n]]
            sql = refs[0] if len(refs) == 1 else f"coalesce({', '.join(refs)})"
            cols[n] = Column(n, sql, V.DYNAMIC, event_field=n)
        return stage, scope.with_columns(cols)

    def _base_scope(self) -> _Scope:
        columns: dict[str, Column] = {}
        json_ident = seq_ident = None
        for name, duck in self.table_columns:
            ident = quote_ident(name)
            if name == JSON_COLUMN:
                json_ident = ident
                continue
            if name == SEQ_COLUMN:
                seq_ident = ident
                continue
            if name in INTERNAL_EVENT_COLUMNS:  # the ingest's storage of @json: not a field
                continue
            if name in _TIMESTAMP_MS_COLUMNS:
                columns[name] = Column(name, ident, V.TIMESTAMP, ms_timestamp=True, event_field=name)
            else:
                columns[name] = Column(name, ident, _duck_type(duck), json=duck.upper() == "JSON", event_field=name)
        if TIMESTAMP_FIELD not in columns:
            raise QueryError(f"events table has no {TIMESTAMP_FIELD} column")
        return _Scope(columns, json_ident, seq_ident)

    def _with_columns(self, prev: str, scope: _Scope, new: list[tuple[str, Typed]]) -> tuple[str, _Scope]:
        if not new:
            return prev, scope
        cols = dict(scope.columns)
        parts = []
        for name, t in new:
            ident = self.new_ident()
            parts.append(f"{t.sql} AS {ident}")
            cols[name] = Column(name, ident, t.type, nested=t.type is V.DYNAMIC)
        stage = self.add_stage(f"SELECT *, {', '.join(parts)} FROM {prev}")
        return stage, scope.with_columns(cols)

    def _fields(self, prev: str, scope: _Scope, items: tuple[Item, ...]) -> tuple[str, _Scope, list[str]]:
        ec = ExprCompiler(self, scope)
        new: list[tuple[str, Typed]] = []
        names = []
        for item in items:
            name = item.name
            names.append(name)
            if isinstance(item.expr, Field) and item.alias is None and item.expr.name in scope.columns:
                self.resolve_field(scope, item.expr.name, item.expr.pos)  # an existing column: only recorded
                continue
            new.append((name, ec.compile(item.expr)))
        prev, scope = self._with_columns(prev, scope, new)
        return prev, scope, names

    def _parse(self, prev: str, scope: _Scope, cmd: ParseCmd) -> tuple[str, _Scope]:
        """The fields of ``parse``: every capture of one match (``regexp_extract`` into a struct, so any number of
        captures, CWL_QuerySyntax-Parse sets no limit), each null when the pattern does not match."""
        src = as_text(ExprCompiler(self, scope).compile(cmd.source))
        if isinstance(cmd.pattern, Literal):
            regex = glob_to_regex(str(cmd.pattern.value))
            groups = len(cmd.aliases)
            index_of = {a: i + 1 for i, a in enumerate(cmd.aliases)}
        else:
            regex, index_of = convert_named_groups(cmd.pattern.pattern, cmd.pattern.pos + 1)
            groups = capture_count(regex)
            self.regexes.append((regex, cmd.pattern.pos))
        p = self.params.add(regex)
        # the struct's field names are the group numbers: aliases may repeat letters in any case, numbers cannot clash
        names = self.params.add(tuple(f"g{i}" for i in range(1, groups + 1)))
        captured = self.new_ident("p")
        stage = self.add_stage(f"SELECT *, CASE WHEN regexp_matches({src}, {p}) THEN "
                               f"regexp_extract({src}, {p}, CAST({names} AS VARCHAR[])) END AS {captured} FROM {prev}")
        cols = dict(scope.columns)
        for alias in cmd.aliases:
            cols[alias] = Column(alias, f"{captured}.g{index_of[alias]}", V.STRING)
        return stage, scope.with_columns(cols)

    def _stats(self, prev: str, scope: _Scope, cmd: StatsCmd) -> tuple[str, _Scope, list[str]]:
        key_ec = ExprCompiler(self, scope, bin_offset=cmd.offset)
        select, names, columns = [], [], {}
        group_items: dict[str, Typed] = {}
        keys: list[Column] = []
        for item in cmd.by:
            t = key_ec.compile(item.expr)
            if t.is_agg:
                raise self.error("a stats function cannot be used in 'by'", item.expr.pos)
            ident = self.new_ident("g")
            select.append(f"{t.sql} AS {ident}")
            col = Column(item.name, ident, t.type)
            keys.append(col)
            names.append(item.name)
            group_items[item.name] = t
            if isinstance(item.expr, Field):
                group_items.setdefault(item.expr.name, t)
        agg_ec = ExprCompiler(self, scope, allow_agg=True, group_items=group_items)
        agg_cols = []
        for item in cmd.items:
            t = agg_ec.compile(item.expr)
            if not t.is_agg:
                raise self.error(f"'{item.expr.text}' in stats uses no stats function", item.expr.pos)
            ident = self.new_ident("a")
            select.append(f"{t.sql} AS {ident}")
            agg_cols.append(Column(item.name, ident, t.type))
            names.append(item.name)
            if item.alias is not None:  # later items of this stats may use the alias
                group_items[item.alias] = t
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise self.error(f"stats produces the column name {min(dup)!r} twice; use 'as' to rename", cmd.pos)
        for c in keys + agg_cols:
            columns[c.name] = c
        group = f" GROUP BY {', '.join(str(i + 1) for i in range(len(keys)))}" if keys else ""
        stage = self.add_stage(f"SELECT {', '.join(select)} FROM {prev}{group}")
        return stage, _Scope(columns, None, None, True, keys), names

    def _sort(self, prev: str, scope: _Scope, cmd: SortCmd
              ) -> tuple[str, _Scope, list[str], tuple[str, str] | None]:
        """(stage, scope, ORDER BY terms, (key ident, seq ident) when the order is one ascending timestamp
        then ingest order)."""
        ec = ExprCompiler(self, scope)
        new: list[Column] = []
        pairs: list[tuple[str, str]] = []  # ORDER BY (expression, direction) after the first key's terms
        first: list[str] = []
        first_sql = ""
        cols = dict(scope.columns)
        parts = []
        for i, (expr, desc) in enumerate(cmd.keys):
            t = ec.compile(expr)
            ident = self.new_ident("s")
            parts.append(f"{t.sql} AS {ident}")
            col = Column(f"__sort{ident}", ident, t.type)
            if i == 0:
                first, first_sql = _order_terms(col, desc), t.sql
            else:
                pairs.extend(sort_term_pairs(col.typed(), desc))
            new.append(col)
        tie_broken = new[1:]
        if scope.seq_ident:
            pairs.append((scope.seq_ident, "DESC" if cmd.keys[0][1] else "ASC"))
        elif scope.is_stats:
            for k in scope.group_keys:
                pairs.extend(sort_term_pairs(k.typed(), False))
            tie_broken += scope.group_keys
        pairs.extend((t, "DESC" if cmd.keys[0][1] else "ASC") for t in scope.tiebreak)
        stage = self.add_stage(f"SELECT *, {', '.join(parts)} FROM {prev}")
        group_idents = {k.ident for k in scope.group_keys}
        if (scope.is_stats and new[0].type is V.TIMESTAMP and first_sql not in group_idents
                and any(not sort_is_scalar(c.typed()) for c in tie_broken)):
            # the terms after the first key's only order rows that tie on it: computed for those rows alone (a text
            # key's terms take regexes and lists). Only when the first key is a timestamp a stats function made
            # (max(@timestamp), fromMillis(...)): those rarely tie, while counts and bin() keys mostly do, and then
            # the neighbour test would cost more than it saves
            tie = self.new_ident("t")
            # (a neighbour test, not count(*) OVER (PARTITION BY ...), which DuckDB plans as a self-join that
            # computes the whole query twice)
            stage = self.add_stage(f"SELECT *, {sort_tie_sql(new[0].typed())} AS {tie} FROM {stage}")
            pairs = [(f"(CASE WHEN {tie} THEN {e} END)", d) for e, d in pairs]
        terms = first + [f"{e} {d}" for e, d in pairs]
        simple = (len(new) == 1 and not cmd.keys[0][1] and scope.seq_ident is not None and not scope.is_stats
                  and new[0].type is V.TIMESTAMP)
        plain = (new[0].ident, scope.seq_ident) if simple and scope.seq_ident is not None else None
        return stage, scope.with_columns(cols), terms, plain

    def _default_order(self, scope: _Scope) -> list[str]:
        terms: list[str] = []
        if scope.is_stats:
            for k in scope.group_keys:
                terms.extend(_order_terms(k, False))
            return terms + [f"{t} ASC" for t in scope.tiebreak]
        ts = scope.timestamp
        if ts is not None:
            terms.append(f"{ts.ident} DESC")
        if scope.seq_ident:
            terms.append(f"{scope.seq_ident} DESC")
        return terms + [f"{t} DESC" for t in scope.tiebreak]

    def _order_sql(self, scope: _Scope, ordering: list[str] | None) -> str:
        terms = ordering if ordering is not None else self._default_order(scope)
        return f" ORDER BY {', '.join(terms)}" if terms else ""

    def _dedup(self, prev: str, scope: _Scope, cmd: DedupCmd, ordering: list[str] | None) -> str:
        ec = ExprCompiler(self, scope)
        keys = [ec.compile(f) for f in cmd.fields]
        nulls = " OR ".join(f"{as_text(k)} IS NULL" for k in keys)
        part = ", ".join(as_text(k) for k in keys)
        order = self._order_sql(scope, ordering)
        return self.add_stage(f"SELECT * FROM {prev} QUALIFY ({nulls}) OR "
                              f"row_number() OVER (PARTITION BY {part}{order}) = 1")


@dataclass
class _State:
    """Where the compilation of the command pipeline stands."""

    prev: str  # name of the last CTE stage
    scope: _Scope
    visible: list[str] | None = None  # displayed columns; None = the default
    ordering: list[str] | None = None  # ORDER BY terms; None = default order of the scope
    after_dedup: bool = False
    plain_order: tuple[str, str] | None = None  # (key, seq) idents when the last command is a plain event sort
    parsed: list[str] = field(default_factory=list)  # the fields parse commands made, in order

    def shown(self) -> list[str]:
        """The result columns: ``visible``, else ``@timestamp``, ``@message`` and the fields ``parse`` made (the
        output AWS prints for a parse query without fields, repost.aws/knowledge-center/cloudwatch-vpc-flow-logs)."""
        if self.visible is not None:
            return self.visible
        shown = [n for n in (TIMESTAMP_FIELD, "@message") if n in self.scope.columns]
        return shown + [n for n in self.parsed if n not in shown]


_LOG_GROUP_CLASSES = {"STANDARD", "INFREQUENT_ACCESS", "DELIVERY"}  # LogGroupSummary.logGroupClass values

_COMMAND_GENERATORS: dict[type, Callable[..., None]] = {
    FieldsCmd: _QueryCompiler._fields_cmd,
    DisplayCmd: _QueryCompiler._display_cmd,
    FilterCmd: _QueryCompiler._filter_cmd,
    FilterIndexCmd: _QueryCompiler._filter_cmd,
    StatsCmd: _QueryCompiler._stats_cmd,
    SortCmd: _QueryCompiler._sort_cmd,
    LimitCmd: _QueryCompiler._limit_cmd,
    ParseCmd: _QueryCompiler._parse_cmd,
    DedupCmd: _QueryCompiler._dedup_cmd,
    UnnestCmd: _QueryCompiler._unnest_cmd,
    UnmaskCmd: _QueryCompiler._unmask_cmd,
    SourceCmd: _QueryCompiler._source_cmd,
    JoinCmd: _QueryCompiler._join_cmd,
}
"""Generator entry per command node type: ``(compiler, state, command) -> None`` (typed loosely: each entry takes
its own node type, which a dict keyed by type cannot express)."""


# --------------------------------------------------------------------------- helpers
def _json_column_prefix(scope: _Scope, name: str) -> tuple[Column, str] | None:
    """(JSON column, rest) when ``name`` is ``<column>.<path>`` of a DYNAMIC stage column
    (a ``jsonParse`` result or an ``unnest`` item), longest column name first."""
    if "." not in name:
        return None
    parts = name.split(".")
    for k in range(len(parts) - 1, 0, -1):
        col = scope.columns.get(".".join(parts[:k]))
        if col is not None and col.nested:
            return col, ".".join(parts[k:])
    return None


def _command_fields(cmd) -> list[str]:
    """Field names a command reads, in order of appearance."""
    return [node.name for e in command_exprs(cmd) for node in walk(e) if isinstance(node, Field)]


def _json_paths(name: str) -> list[str]:
    """JSON paths a flattened field name can mean, most likely first."""
    segs = name.split(".")

    def key(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    paths = ["$" + "".join(f"[{s}]" if s.isdigit() else "." + key(s) for s in segs)]
    if any(s.isdigit() for s in segs):
        paths.append("$" + "".join("." + key(s) for s in segs))
    if len(segs) > 1:
        paths.append("$." + key(name))
    return paths


_REGEX_SPECIAL = set("\\.^$|?*+()[]{}")


def glob_to_regex(pattern: str) -> str:
    """Logs Insights glob -> RE2: literal text, each ``*`` a lazy capture group; a trailing
    ``*`` takes the rest of the value. Matches anywhere in the value (not anchored)."""
    parts = pattern.split("*")
    esc = ["".join("\\" + ch if ch in _REGEX_SPECIAL else ch for ch in p) for p in parts]
    groups = ["(.*?)"] * (len(parts) - 1)
    if pattern.endswith("*") and groups:
        groups[-1] = "(.*)"
    out = esc[0]
    for g, lit in zip(groups, esc[1:]):
        out += g + lit
    return "(?s)" + out
