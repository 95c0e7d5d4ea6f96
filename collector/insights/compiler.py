"""Compile a parsed Logs Insights query to one DuckDB SQL statement over the ``events`` table.

Each command becomes a CTE stage reading the previous one. Rows keep every column they
had (``SELECT *, <new> AS __iw_cN``), so a later command can still see a field an earlier
``fields``/``display`` did not show; ``stats`` replaces the rows with its groups. The
displayed columns and the row order are tracked beside the stages and applied at the end:

- displayed: the last ``display``; else every field named by ``fields`` commands; else the
  last ``stats`` output; else ``@timestamp, @message`` (what the console shows).
- order: the last ``sort`` (ties broken by ingest order ``@seq``); without one, non-stats
  results are ``@timestamp`` descending and stats results are ordered by their group keys.
- limit: ``limit N`` where written; the result is capped at ``limit_cap`` rows (10,000 as
  on CloudWatch; ``None`` for the collector's internal, uncapped runs).

Field resolution: a column of the stage with that exact name (system fields, fields made
by ``fields``/``parse``/``stats``, and hot fields the ingest materialised as columns) wins;
otherwise the field is read from the ``@json`` column (``a.b`` = nested key, ``a.0`` = array
element or key "0", or a top-level key literally named ``a.b``); otherwise it is missing.
Dynamic typing rules are documented in :mod:`collector.insights` (package docstring).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

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
    InList,
    Item,
    LimitCmd,
    Literal,
    ParseCmd,
    Query,
    Regex,
    SortCmd,
    Star,
    StatsCmd,
    Unary,
    command_exprs,
    walk,
)
from collector.insights.functions import AGGREGATE_FUNCTIONS, SCALAR_FUNCTIONS
from collector.insights.parser import parse_query
from collector.insights.sql import Params, Typed, as_bool, as_num, as_text, quote_ident, sort_terms
from collector.insights.types import ValueType as V
from collector.tables import EVENT_COLUMNS

__all__ = ["DEFAULT_LIMIT", "EVENT_COLUMN_TYPES", "Column", "CompiledQuery", "compile_query"]

DEFAULT_LIMIT = 10_000
"""Default and maximum number of result rows of a Logs Insights query (StartQuery ``limit``)."""

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

    def typed(self) -> Typed:
        if self.ms_timestamp:
            return Typed(V.TIMESTAMP, f"epoch_ms({self.ident})", num_sql=self.ident)
        if self.type is V.DYNAMIC:
            return Typed(V.DYNAMIC, self.ident, text_sql=f"({self.ident} ->> '$')")
        return Typed(self.type, self.ident)


@dataclass
class _Scope:
    columns: dict[str, Column]
    json_ident: str | None
    seq_ident: str | None
    is_stats: bool = False
    group_keys: list[Column] = field(default_factory=list)

    @property
    def timestamp(self) -> Column | None:
        c = self.columns.get(TIMESTAMP_FIELD)
        return c if c is not None and c.type is V.TIMESTAMP else None


@dataclass(frozen=True)
class CompiledQuery:
    """SQL + bound parameters + the result columns (name, value type) in display order."""

    sql: str
    params: list
    columns: list[tuple[str, V]]


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
) -> CompiledQuery:
    """Compile Logs Insights text to DuckDB SQL.

    Args:
        query: query text (or an already parsed Query).
        table_columns: (name, DuckDB type) of the events table; default the shared schema.
            Extra JSON columns named like a field are used as materialised hot fields.
        table: events table name.
        start_ms, end_ms: inclusive bounds on ``@timestamp`` (epoch ms), None = unbounded.
        limit_cap: maximum rows (10,000 as on CloudWatch); None = no cap.
    Raises:
        QueryError: syntax error, unsupported command/function, or invalid argument.
    """
    parsed = query if isinstance(query, Query) else parse_query(query)
    cols = list(table_columns) if table_columns is not None else list(EVENT_COLUMN_TYPES.items())
    try:
        return _QueryCompiler(parsed, cols, table, start_ms, end_ms, limit_cap).compile()
    except QueryError as exc:
        raise exc.with_query(parsed.text) from None


class ExprCompiler:
    """Compiles expressions against one stage scope (used by the function registry)."""

    def __init__(self, owner: _QueryCompiler, scope: _Scope, allow_agg: bool = False,
                 group_items: dict[str, Typed] | None = None) -> None:
        self.owner = owner
        self.scope = scope
        self.params = owner.params
        self.allow_agg = allow_agg
        self.group_items = group_items or {}
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
        if isinstance(e, Literal):
            if isinstance(e.value, str):
                return Typed(V.STRING, f"CAST({self.params.add(e.value)} AS VARCHAR)")
            return Typed(V.NUMBER, repr(e.value) if isinstance(e.value, int) else f"CAST({e.value!r} AS DOUBLE)")
        if isinstance(e, Field):
            if e.name in self.group_items and not self._in_agg:
                return self.group_items[e.name]
            if self.allow_agg and not self._in_agg:
                raise self.error(f"field '{e.name}' is used in stats outside an aggregate function "
                                 f"and is not a 'by' field", e.pos)
            return self.owner.resolve_field(self.scope, e.name)
        if isinstance(e, Unary):
            inner = self.compile(e.operand)
            if e.op == "not":
                return Typed(V.BOOLEAN, f"(NOT {as_bool(inner)})", is_agg=inner.is_agg)
            return Typed(V.NUMBER, f"(- {as_num(inner)})", is_agg=inner.is_agg)
        if isinstance(e, Binary):
            return self._binary(e)
        if isinstance(e, InList):
            return self._in_list(e)
        if isinstance(e, Call):
            return self._call(e)
        if isinstance(e, Duration):
            raise self.error(f"a time period ({e.text}) is only valid as an argument of bin(), datefloor() "
                             "or dateceil()", e.pos)
        if isinstance(e, Regex):
            raise self.error("a /regex/ is only valid after like, =~ or in parse", e.pos)
        if isinstance(e, Star):
            raise self.error("'*' is only valid in count(*)", e.pos)
        raise self.error(f"unsupported expression {e!r}", getattr(e, "pos", None))  # pragma: no cover

    def _binary(self, e: Binary) -> Typed:
        if e.op in ("and", "or"):
            left, right = self.compile(e.left), self.compile(e.right)
            return Typed(V.BOOLEAN, f"({as_bool(left)} {e.op.upper()} {as_bool(right)})",
                         is_agg=left.is_agg or right.is_agg)
        if e.op in ("like", "=~"):
            left = self.compile(e.left)
            pat = e.right
            p = self.params.add(pat.value if isinstance(pat, Literal) else pat.pattern)  # type: ignore[union-attr]
            if isinstance(pat, Literal) and e.op == "like":
                sql = f"contains({as_text(left)}, {p})"
            else:
                sql = f"regexp_matches({as_text(left)}, {p})"
            if e.negated:
                sql = f"(NOT {sql})"
            return Typed(V.BOOLEAN, sql, is_agg=left.is_agg)
        left, right = self.compile(e.left), self.compile(e.right)
        agg = left.is_agg or right.is_agg
        if e.op in ("+", "-", "*", "/", "%", "^"):
            a, b = as_num(left), as_num(right)
            if e.op == "/":
                sql = f"(CAST({a} AS DOUBLE) / NULLIF(CAST({b} AS DOUBLE), 0))"
            elif e.op == "%":
                sql = f"fmod(CAST({a} AS DOUBLE), NULLIF(CAST({b} AS DOUBLE), 0))"
            elif e.op == "^":
                sql = f"pow(CAST({a} AS DOUBLE), CAST({b} AS DOUBLE))"
            else:
                sql = f"({a} {e.op} {b})"
            return Typed(V.NUMBER, sql, is_agg=agg)
        return Typed(V.BOOLEAN, compare(e.op, left, right), is_agg=agg)

    def _in_list(self, e: InList) -> Typed:
        left = self.compile(e.operand)
        items = [self.compile(i) for i in e.items]
        if not items:
            sql = "FALSE"
        elif all(i.type is V.STRING for i in items):
            sql = f"({as_text(left)} IN ({', '.join(i.sql for i in items)}))"
        elif all(i.type is V.NUMBER for i in items):
            sql = f"({as_num(left)} IN ({', '.join(i.sql for i in items)}))"
        else:
            sql = "(" + " OR ".join(compare("=", left, i) for i in items) + ")"
        if e.negated:
            sql = f"(NOT {sql})"
        return Typed(V.BOOLEAN, sql, is_agg=left.is_agg)

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
            raise self.error(f"unsupported function '{e.name}'", e.pos)
        self._check_arity(scalar.name, scalar.min_args, scalar.max_args, e)
        t = scalar.compile(self, e)
        agg = any(self._contains_agg(a) for a in e.args)
        return Typed(t.type, t.sql, t.text_sql, t.num_sql, is_agg=agg) if agg else t

    def _contains_agg(self, e: Expr) -> bool:
        if isinstance(e, Call):
            return e.key in AGGREGATE_FUNCTIONS or any(self._contains_agg(a) for a in e.args)
        if isinstance(e, Binary):
            return self._contains_agg(e.left) or self._contains_agg(e.right)
        if isinstance(e, Unary):
            return self._contains_agg(e.operand)
        if isinstance(e, InList):
            return self._contains_agg(e.operand)
        return False

    def _check_arity(self, name: str, lo: int, hi: int | None, e: Call) -> None:
        n = len(e.args)
        if n < lo or (hi is not None and n > hi):
            want = f"{lo}" if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
            raise self.error(f"{name}() takes {want} argument(s), got {n}", e.pos)


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
                 start_ms: int | None, end_ms: int | None, limit_cap: int | None) -> None:
        self.query = query
        self.table_columns = table_columns
        self.table = table
        self.start_ms, self.end_ms = start_ms, end_ms
        self.limit_cap = limit_cap
        self.params = Params()
        self.stages: list[str] = []
        self._n = 0

    def error(self, message: str, pos: int | None) -> QueryError:
        return QueryError(message, pos, self.query.text)

    def new_ident(self, prefix: str = "c") -> str:
        self._n += 1
        return quote_ident(f"__iw_{prefix}{self._n}")

    def add_stage(self, select: str) -> str:
        name = f"s{len(self.stages)}"
        self.stages.append(f"{name} AS ({select})")
        return name

    # ---- fields
    def resolve_field(self, scope: _Scope, name: str) -> Typed:
        col = scope.columns.get(name)
        if col is not None:
            return col.typed()
        if scope.json_ident is None or name.startswith("@"):
            return Typed(V.DYNAMIC, "CAST(NULL AS JSON)", text_sql="CAST(NULL AS VARCHAR)")
        j = scope.json_ident
        paths = _json_paths(name)
        if len(paths) == 1:
            p = self.params.add(paths[0])
            return Typed(V.DYNAMIC, f"json_extract({j}, {p})", text_sql=f"json_extract_string({j}, {p})")
        ps = [self.params.add(p) for p in paths]
        return Typed(V.DYNAMIC, "coalesce(" + ", ".join(f"json_extract({j}, {p})" for p in ps) + ")",
                     text_sql="coalesce(" + ", ".join(f"json_extract_string({j}, {p})" for p in ps) + ")")

    # ---- main
    def compile(self) -> CompiledQuery:
        scope = self._base_scope()
        where = []
        ts_ident = quote_ident(TIMESTAMP_FIELD)
        if self.start_ms is not None:
            where.append(f"{ts_ident} >= {int(self.start_ms)}")
        if self.end_ms is not None:
            where.append(f"{ts_ident} <= {int(self.end_ms)}")
        base = f"SELECT * FROM {quote_ident(self.table)}" + (f" WHERE {' AND '.join(where)}" if where else "")
        prev = self.add_stage(base)

        visible: list[str] | None = None
        ordering: list[str] | None = None  # None = default order of the scope
        after_dedup = False
        for cmd in self.query.commands:
            if after_dedup and not isinstance(cmd, LimitCmd):
                raise self.error("only limit can follow dedup", cmd.pos)
            prev, scope = self._prefetch_json(prev, scope, cmd)
            if isinstance(cmd, FilterCmd):
                t = ExprCompiler(self, scope).compile(cmd.expr)
                prev = self.add_stage(f"SELECT * FROM {prev} WHERE {as_bool(t)}")
            elif isinstance(cmd, (FieldsCmd, DisplayCmd)):
                prev, scope, names = self._fields(prev, scope, cmd.items)
                if isinstance(cmd, DisplayCmd):
                    visible = names
                else:
                    visible = (visible or []) + [n for n in names if n not in (visible or [])]
            elif isinstance(cmd, ParseCmd):
                prev, scope = self._parse(prev, scope, cmd)
            elif isinstance(cmd, StatsCmd):
                prev, scope, visible = self._stats(prev, scope, cmd)
                ordering = None
            elif isinstance(cmd, SortCmd):
                prev, scope, ordering = self._sort(prev, scope, cmd)
            elif isinstance(cmd, LimitCmd):
                if self.limit_cap is not None and cmd.count > self.limit_cap:
                    raise self.error(f"limit {cmd.count} exceeds the maximum of {self.limit_cap} rows", cmd.pos)
                order = self._order_sql(scope, ordering)
                prev = self.add_stage(f"SELECT * FROM {prev}{order} LIMIT {int(cmd.count)}")
            elif isinstance(cmd, DedupCmd):
                prev = self._dedup(prev, scope, cmd, ordering)
                after_dedup = True

        if visible is None:
            visible = [n for n in (TIMESTAMP_FIELD, "@message") if n in scope.columns]
        out_cols: list[tuple[str, V]] = []
        select = []
        for name in visible:
            col = scope.columns.get(name)
            if col is None:
                t = self.resolve_field(scope, name)
                select.append(t.sql)
                out_cols.append((name, t.type))
            else:
                t = col.typed()
                select.append(t.sql)
                out_cols.append((name, t.type))
        order = self._order_sql(scope, ordering)
        limit = f" LIMIT {int(self.limit_cap)}" if self.limit_cap is not None else ""
        sql = (f"WITH {', '.join(self.stages)} SELECT {', '.join(select) or 'NULL'} FROM {prev}{order}{limit}")
        return CompiledQuery(sql, list(self.params.values), out_cols)

    def _prefetch_json(self, prev: str, scope: _Scope, cmd) -> tuple[str, _Scope]:
        """Read every JSON field a command uses with ONE parse of ``@json`` per row
        (``json_extract(@json, [paths])``) instead of one parse per field; the values become
        stage columns, so later commands reuse them too. Only when a command reads >= 2."""
        if scope.json_ident is None:
            return prev, scope
        names = [n for n in dict.fromkeys(_command_fields(cmd))
                 if n not in scope.columns and not n.startswith("@")]
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
            cols[n] = Column(n, sql, V.DYNAMIC)
        return stage, _Scope(cols, scope.json_ident, scope.seq_ident, scope.is_stats, scope.group_keys)

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
            if name in _TIMESTAMP_MS_COLUMNS:
                columns[name] = Column(name, ident, V.TIMESTAMP, ms_timestamp=True)
            else:
                columns[name] = Column(name, ident, _duck_type(duck))
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
            cols[name] = Column(name, ident, t.type)
        stage = self.add_stage(f"SELECT *, {', '.join(parts)} FROM {prev}")
        return stage, _Scope(cols, scope.json_ident, scope.seq_ident, scope.is_stats, scope.group_keys)

    def _fields(self, prev: str, scope: _Scope, items: tuple[Item, ...]) -> tuple[str, _Scope, list[str]]:
        ec = ExprCompiler(self, scope)
        new: list[tuple[str, Typed]] = []
        names = []
        for item in items:
            name = item.name
            names.append(name)
            if isinstance(item.expr, Field) and item.alias is None and item.expr.name in scope.columns:
                continue  # an existing column: nothing to compute
            new.append((name, ec.compile(item.expr)))
        prev, scope = self._with_columns(prev, scope, new)
        return prev, scope, names

    def _parse(self, prev: str, scope: _Scope, cmd: ParseCmd) -> tuple[str, _Scope]:
        src = as_text(ExprCompiler(self, scope).compile(cmd.source))
        if isinstance(cmd.pattern, Literal):
            regex = glob_to_regex(str(cmd.pattern.value))
            indexes = list(range(1, len(cmd.aliases) + 1))
        else:
            regex, index_of = convert_named_groups(cmd.pattern.pattern)
            indexes = [index_of[a] for a in cmd.aliases]
        p = self.params.add(regex)
        new = []
        for alias, idx in zip(cmd.aliases, indexes):
            new.append((alias, Typed(V.STRING, f"(CASE WHEN regexp_matches({src}, {p}) "
                                                f"THEN regexp_extract({src}, {p}, {int(idx)}) END)")))
        return self._with_columns(prev, scope, new)

    def _stats(self, prev: str, scope: _Scope, cmd: StatsCmd) -> tuple[str, _Scope, list[str]]:
        key_ec = ExprCompiler(self, scope)
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
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise self.error(f"stats produces the column name {min(dup)!r} twice; use 'as' to rename", cmd.pos)
        for c in keys + agg_cols:
            columns[c.name] = c
        group = f" GROUP BY {', '.join(str(i + 1) for i in range(len(keys)))}" if keys else ""
        stage = self.add_stage(f"SELECT {', '.join(select)} FROM {prev}{group}")
        return stage, _Scope(columns, None, None, True, keys), names

    def _sort(self, prev: str, scope: _Scope, cmd: SortCmd) -> tuple[str, _Scope, list[str]]:
        ec = ExprCompiler(self, scope)
        new, terms = [], []
        cols = dict(scope.columns)
        parts = []
        for expr, desc in cmd.keys:
            t = ec.compile(expr)
            ident = self.new_ident("s")
            parts.append(f"{t.sql} AS {ident}")
            col = Column(f"__sort{ident}", ident, t.type)
            terms.extend(_order_terms(col, desc))
            new.append(col)
        if scope.seq_ident:
            terms.append(f"{scope.seq_ident} {'DESC' if cmd.keys[0][1] else 'ASC'}")
        elif scope.is_stats:
            for k in scope.group_keys:
                terms.extend(_order_terms(k, False))
        stage = self.add_stage(f"SELECT *, {', '.join(parts)} FROM {prev}")
        return stage, _Scope(cols, scope.json_ident, scope.seq_ident, scope.is_stats, scope.group_keys), terms

    def _default_order(self, scope: _Scope) -> list[str]:
        if scope.is_stats:
            terms: list[str] = []
            for k in scope.group_keys:
                terms.extend(_order_terms(k, False))
            return terms
        ts = scope.timestamp
        terms = [f"{ts.ident} DESC"] if ts is not None else []
        if scope.seq_ident:
            terms.append(f"{scope.seq_ident} DESC")
        return terms

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


# --------------------------------------------------------------------------- helpers
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


def convert_named_groups(pattern: str) -> tuple[str, dict[str, int]]:
    """Rewrite ``(?<name>`` to RE2's ``(?P<name>`` and number every capturing group.

    Returns (pattern, {name: group index}). Escapes and character classes are skipped so
    ``\\(`` and ``[(]`` do not count as groups.
    """
    out: list[str] = []
    index: dict[str, int] = {}
    n = 0
    i = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if i < len(pattern) and pattern[i] == "]":  # a leading ']' is literal
                out.append("]")
                i += 1
            continue
        if c == "(":
            rest = pattern[i + 1:]
            if rest.startswith("?<") and not rest.startswith(("?<=", "?<!")):
                end = rest.find(">")
                name = rest[2:end]
                n += 1
                index[name] = n
                out.append(f"(?P<{name}>")
                i += 1 + end + 1
                continue
            if rest.startswith("?P<"):
                end = rest.find(">")
                n += 1
                index[rest[3:end]] = n
            elif not rest.startswith("?"):
                n += 1
        out.append(c)
        i += 1
    return "".join(out), index
