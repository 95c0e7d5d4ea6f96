"""Recursive-descent parser: query text -> :class:`~collector.insights.expressions.Query`.

Grammar (classic Logs Insights QL)::

    query    := [source "|"] command ("|" command)*
    source   := SOURCE logGroups "(" [key ":" "[" STRING ("," STRING)* "]" ("," ...)*] ")"
              | SOURCE STRING ("," STRING)*
    subquery := "(" query ")"                    (not inside another subquery)
    command  := fields items | display items | filter expr | filterIndex expr
              | stats items [by items [offset DURATION]]
              | sort [by] expr [asc|desc] ("," expr [asc|desc])* | limit N
              | parse [expr] (STRING | REGEX) [as name ("," name)*] | dedup field ("," field)*
              | unnest expr into name | unmask [field ("," field)*]
              | join [type "=" (inner|left)] left "=" name right "=" name where name "=" name subquery
    items    := expr [as name] ("," expr [as name])*
    expr     := or;  or := and ("or" and)*;  and := not ("and" not)*;  not := ("not" | "!") not | cmp
    cmp      := add [(= != < <= > >= =~) add | [not] like (STRING|REGEX) | [not] in "[" list "]"
                     | [not] in subquery]
    add      := mul (("+"|"-") mul)*;  mul := pow (("*"|"/"|"%") pow)*
    pow      := unary ["^" pow];  unary := "-" unary | primary
    primary  := NUMBER | STRING | REGEX | DURATION | "*" | IDENT ["(" args ")"] | "(" expr ")"

Commands are dispatched through :data:`_COMMANDS` (one entry per supported command of
:mod:`collector.insights.catalog`); a documented command the engine does not run is refused
with a QueryError naming it and why. Expression nesting is limited to
:data:`~collector.insights.constants.MAX_NESTING_DEPTH`; flat chains are parsed iteratively.
Source: https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_QuerySyntax.html
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from collector.insights.catalog import SUPPORTED_COMMANDS, UNSUPPORTED_COMMANDS
from collector.insights.constants import MAX_ARITHMETIC_CHAIN, MAX_NESTING_DEPTH
from collector.insights.exceptions import QueryError
from collector.insights.expressions import (
    Binary,
    Call,
    Command,
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
)
from collector.insights.periods import FIXED_UNIT_MS, canonical_unit
from collector.insights.regex import named_groups
from collector.insights.tokenizer import Token, TokenType, tokenize

__all__ = ["parse_query"]

T = TokenType
_COMPARISON = {"=", "!=", "<", "<=", ">", ">=", "=~"}
_MAX_INT = 2**63 - 1
_MONTHS = {"mo": 1, "q": 3, "y": 12}
_MAX_PERIOD_MS = 10_000 * 366 * 86_400_000  # a period longer than 10,000 years is refused
_JOIN_OPTIONS = ("type", "left", "right")
_SOURCE_KEYS = {"nameprefix": "namePrefix", "class": "class", "loggroupclass": "class",
                "accountidentifiers": "accountIdentifiers", "accountidentifier": "accountIdentifiers"}


def parse_query(text: str) -> Query:
    """Parse ``text``.

    Raises:
        QueryError (message + line/column): any syntax error, an unsupported command, a
        number out of range, or input beyond the documented limits (constants module).
        TypeError: ``text`` is not a str (a caller's bug, not a query error).
    """
    if not isinstance(text, str):
        raise TypeError(f"query text must be str, not {type(text).__name__}")
    parser = None
    try:
        parser = _Parser(text)
        return parser.parse()
    except QueryError as exc:
        raise exc.with_query(text) from None
    except Exception as exc:  # a defect of the parser: still one line with a position
        pos = parser.tok.pos if parser is not None and parser.i < len(parser.tokens) else 0
        raise QueryError(f"internal error parsing the query ({type(exc).__name__}: {exc}); please report the query",
                         pos, text) from exc


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.depth = 0
        self.in_subquery = False  # a subquery cannot hold another (CWL_QuerySyntax-Subqueries)

    # ------------------------------------------------------------------ helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def at(self, kind: TokenType) -> bool:
        """The current token is of ``kind`` (a call, so that a type checker does not carry what it learnt about
        ``self.tok`` past ``advance()``)."""
        return self.tok.kind is kind

    def at_op(self, op: str) -> bool:
        """The current token is the operator ``op``."""
        return self.tok.kind is T.OP and self.tok.value == op

    def advance(self) -> Token:
        t = self.tokens[self.i]
        self.i += 1
        return t

    def error(self, message: str, tok: Token | None = None) -> QueryError:
        t = tok or self.tok
        return QueryError(message, t.pos, self.text)

    def expect(self, kind: TokenType, what: str) -> Token:
        if self.tok.kind is not kind:
            raise self.error(f"expected {what}, found {self.found()}")
        return self.advance()

    def found(self) -> str:
        return "end of query" if self.tok.kind is T.EOF else repr(self.tok.value)

    def slice(self, start: int) -> str:
        end = self.tokens[self.i - 1].end
        return self.text[start:end].strip()

    def at_command_end(self) -> bool:
        return self.tok.kind in (T.PIPE, T.EOF) or (self.in_subquery and self.tok.kind is T.RPAREN)

    def end_of_command(self, name: str) -> None:
        if not self.at_command_end():
            raise self.error(f"unexpected {self.tok.value!r} in {name}")

    def nest(self) -> None:
        """Enter one level of expression nesting (parentheses, call, unary, ``^``)."""
        self.depth += 1
        if self.depth > MAX_NESTING_DEPTH:
            raise self.error(f"expression nested more than {MAX_NESTING_DEPTH} levels deep")

    def comma(self) -> bool:
        if self.tok.kind is T.COMMA:
            self.advance()
            return True
        return False

    # ------------------------------------------------------------------ commands
    def parse(self) -> Query:
        if self.tok.kind is T.EOF:
            raise self.error("empty query")
        commands = self.pipeline(T.EOF, "end of query")
        return Query(self.text, commands)

    def pipeline(self, end: TokenType, end_text: str) -> tuple[Command, ...]:
        """Commands separated by ``|`` up to the token ``end`` (not consumed)."""
        commands: list[Command] = []
        while True:
            commands.append(self.command(first=not commands))
            kind = self.tok.kind
            if kind is end:
                return tuple(commands)
            if kind is not T.PIPE:
                raise self.error(f"unexpected {self.tok.value!r}: expected '|' or {end_text}")
            self.advance()

    def subquery(self, what: str) -> Query:
        """``( query )`` at the current token: a nested query over its own events (CWL_QuerySyntax-Subqueries)."""
        open_ = self.expect(T.LPAREN, f"'(' starting the {what}")
        if self.in_subquery:
            raise self.error(f"a {what} cannot be nested inside another subquery (AWS supports no nested "
                             "subqueries)", open_)
        if self.tok.kind is T.RPAREN:
            raise self.error(f"empty {what}: expected a query such as SOURCE '<log group>' | ...")
        self.in_subquery = True
        try:
            commands = self.pipeline(T.RPAREN, f"')' closing the {what}")
        finally:
            self.in_subquery = False
        self.advance()
        return Query(self.text, commands)

    def command(self, first: bool) -> Command:
        t = self.tok
        if t.kind is not T.IDENT or t.quoted:
            raise self.error("expected a command (" + ", ".join(c.name for c in SUPPORTED_COMMANDS.values()) + ")")
        name = t.value.lower()
        parse = _COMMANDS.get(name)
        if parse is None:
            gap = UNSUPPORTED_COMMANDS.get(name)
            reason = gap.notes if gap else "not a Logs Insights command"
            raise self.error(f"unsupported command '{t.value}': {reason}")
        if name == "source" and not first:
            raise self.error("SOURCE must be the first command of the query")
        self.advance()
        return parse(self, t)

    def fields_cmd(self, t: Token) -> FieldsCmd:
        return FieldsCmd(self.items(), t.pos)

    def display_cmd(self, t: Token) -> DisplayCmd:
        return DisplayCmd(self.items(), t.pos)

    def filter_cmd(self, t: Token) -> FilterCmd:
        expr = self.expr()
        self.end_of_command("filter")
        return FilterCmd(expr, t.pos)

    def filter_index_cmd(self, t: Token) -> FilterIndexCmd:
        # CWL_QuerySyntax-FilterIndex documents two forms: field = value and field in [...]
        expr = self.expr()
        if not ((isinstance(expr, Binary) and expr.op == "=" and isinstance(expr.left, Field))
                or (isinstance(expr, InList) and not expr.negated and isinstance(expr.operand, Field))):
            raise self.error("filterIndex takes 'field = value' or 'field in [values]'", t)
        self.end_of_command("filterIndex")
        return FilterIndexCmd(expr, t.pos)

    def stats_cmd(self, t: Token) -> StatsCmd:
        items = self.items(stop_words=("by",))
        by: tuple[Item, ...] = ()
        offset = None
        if self.tok.is_word("by"):
            self.advance()
            by = self.items(stop_words=("offset",))
            if self.tok.is_word("offset"):
                ot = self.advance()
                if not any(isinstance(i.expr, Call) and i.expr.key == "bin" for i in by):
                    raise self.error("offset is only valid after 'by bin(period)'", ot)
                offset = self.period(self.expect(T.DURATION, "a time period such as 1h after offset"))
                self.end_of_command("stats")
        return StatsCmd(items, by, t.pos, offset)

    def sort_cmd(self, t: Token) -> SortCmd:
        if self.tok.is_word("by"):  # `sort by x` is how AWS's own query definitions write it
            self.advance()
        keys = []
        while True:
            e = self.expr()
            desc = False
            if self.tok.is_word("asc"):
                self.advance()
            elif self.tok.is_word("desc"):
                self.advance()
                desc = True
            keys.append((e, desc))
            if not self.comma():
                break
        self.end_of_command("sort")
        return SortCmd(tuple(keys), t.pos)

    def limit_cmd(self, t: Token) -> LimitCmd:
        n = self.expect(T.NUMBER, "a row count after limit")
        if not n.value.isdigit() or int(n.value) < 1 or int(n.value) > _MAX_INT:
            raise self.error("limit must be a positive integer", n)
        self.end_of_command("limit")
        return LimitCmd(int(n.value), t.pos)

    def dedup_cmd(self, t: Token) -> DedupCmd:
        fields = self.field_list("dedup")
        if not fields:
            raise self.error(f"expected a field name after dedup, found {self.found()}")
        self.end_of_command("dedup")
        return DedupCmd(tuple(fields), t.pos)

    def unmask_cmd(self, t: Token) -> UnmaskCmd:
        paren = self.tok.kind is T.LPAREN  # `| unmask(@message)` as well as `| unmask @message`
        if paren:
            self.advance()
        fields = self.field_list("unmask")
        if paren:
            self.expect(T.RPAREN, "')' closing unmask(")
        self.end_of_command("unmask")
        return UnmaskCmd(tuple(fields), t.pos)

    def field_list(self, command: str) -> list[Field]:
        fields: list[Field] = []
        while self.tok.kind is T.IDENT:
            f = self.advance()
            fields.append(Field(f.value, f.pos, f.value))
            if not self.comma():
                break
            if self.tok.kind is not T.IDENT:
                raise self.error(f"expected a field name after ',' in {command}, found {self.found()}")
        return fields

    def unnest_cmd(self, t: Token) -> UnnestCmd:
        source = self.additive()
        if not self.tok.is_word("into"):
            raise self.error(f"expected 'into <name>' after unnest {source.text}, found {self.found()}")
        self.advance()
        into = self.expect(T.IDENT, "a field name after into")
        self.end_of_command("unnest")
        return UnnestCmd(source, into.value, t.pos)

    def join_cmd(self, t: Token) -> JoinCmd:
        """``join type=<inner|left> left=<alias> right=<alias> where <alias>.<field>=<alias>.<field> (<subquery>)``,
        options in any order, ``type`` optional (default inner), as CWL_QuerySyntax-Join documents it."""
        options: dict[str, Token] = {}
        while self.tok.kind is T.IDENT and not self.tok.quoted and self.tok.value.lower() in _JOIN_OPTIONS:
            key = self.advance()
            if not self.at_op("="):
                raise self.error(f"expected '=' after {key.value} in join")
            self.advance()
            options[key.value.lower()] = self.expect(T.IDENT, f"a value after {key.value}= in join")
        kind = options["type"].value.lower() if "type" in options else "inner"
        if kind not in ("inner", "left"):
            raise self.error(f"join type={options['type'].value} is not a join type (inner, left)", options["type"])
        if "left" not in options or "right" not in options:
            raise self.error("join needs left=<alias> right=<alias> (names for the fields of each side)")
        left, right = options["left"].value, options["right"].value
        if left == right:
            raise self.error(f"join's left and right aliases are both '{left}'", options["right"])
        if not self.tok.is_word("where"):
            raise self.error(f"expected 'where {left}.<field> = {right}.<field>' in join, found {self.found()}")
        self.advance()
        a = self.expect(T.IDENT, f"{left}.<field> after where")
        if not self.at_op("="):
            raise self.error("join's where condition is one equality: <left>.<field> = <right>.<field>")
        self.advance()
        b = self.expect(T.IDENT, f"{right}.<field> after '='")
        keys = {}
        for k in (a, b):
            alias, _, name = k.value.partition(".")
            if alias not in (left, right) or not name:
                raise self.error(f"'{k.value}' in join's where names no side: write {left}.<field> or "
                                 f"{right}.<field>", k)
            if alias in keys:
                raise self.error(f"join's where compares two fields of '{alias}'; compare {left}.<field> with "
                                 f"{right}.<field>", k)
            keys[alias] = Field(name, k.pos + len(alias) + 1, name)
        source = self.subquery("join source")
        self.end_of_command("join")
        return JoinCmd(kind, left, right, keys[left], keys[right], source, t.pos)

    def source_cmd(self, t: Token) -> SourceCmd:
        if self.tok.kind is T.STRING:  # SOURCE '<log group>' [, ...]: exact names (join and subquery pages)
            names = [self.advance().value]
            while self.comma():
                names.append(self.expect(T.STRING, "a quoted log group name after ','").value)
            self.end_of_command("SOURCE")
            return SourceCmd((), (), (), t.pos, tuple(names))
        fn = self.expect(T.IDENT, "logGroups(...) or a quoted log group name after SOURCE")
        if fn.value.lower() != "loggroups":
            raise self.error(f"unsupported SOURCE '{fn.value}': only logGroups(...) selects local data", fn)
        self.expect(T.LPAREN, "'(' after logGroups")
        values: dict[str, list[str]] = {"namePrefix": [], "class": [], "accountIdentifiers": []}
        while self.tok.kind is not T.RPAREN:
            key = self.expect(T.IDENT, "namePrefix, class or accountIdentifiers")
            canon = _SOURCE_KEYS.get(key.value.lower())
            if canon is None:
                raise self.error(f"unknown logGroups key '{key.value}' (namePrefix, class, accountIdentifiers)", key)
            self.expect(T.COLON, f"':' after {key.value}")
            self.expect(T.LBRACKET, f"'[' starting the {key.value} list")
            while self.tok.kind is not T.RBRACKET:
                values[canon].append(self.expect(T.STRING, f"a quoted {key.value} value").value)
                if not self.comma():
                    break
            self.expect(T.RBRACKET, f"']' closing the {key.value} list")
            if not self.comma():
                break
        self.expect(T.RPAREN, "')' closing logGroups(")
        if len(values["namePrefix"]) > 5:  # "You can include as many as five prefixes in the list."
            raise self.error("SOURCE logGroups accepts at most 5 namePrefix values", t)
        if len(values["accountIdentifiers"]) > 20:  # "as many as 20 account identifiers"
            raise self.error("SOURCE logGroups accepts at most 20 accountIdentifiers", t)
        self.end_of_command("SOURCE")
        return SourceCmd(tuple(values["namePrefix"]), tuple(v.upper() for v in values["class"]),
                         tuple(values["accountIdentifiers"]), t.pos)

    def parse_cmd(self, t: Token) -> ParseCmd:
        if self.tok.kind in (T.STRING, T.REGEX):
            source: Expr = Field("@message", t.pos, "@message")
        else:
            source = self.primary()
        pt = self.tok
        if pt.kind is T.STRING:
            pattern: Literal | Regex = Literal(pt.value, pt.pos, self.text[pt.pos:pt.end])
        elif pt.kind is T.REGEX:
            pattern = Regex(pt.value, pt.pos, self.text[pt.pos:pt.end])
        else:
            raise self.error("parse needs a glob pattern in quotes or a /regex/")
        self.advance()
        aliases: list[str] = []
        if self.tok.is_word("as"):
            self.advance()
            while True:
                aliases.append(self.expect(T.IDENT, "a field name after as").value)
                if not self.comma():
                    break
        self.end_of_command("parse")
        if isinstance(pattern, Literal):
            stars = str(pattern.value).count("*")
            if stars == 0:
                raise self.error("parse glob pattern has no '*' wildcard", pt)
            if len(aliases) != stars:
                raise self.error(
                    f"parse glob pattern has {stars} '*' wildcard(s) but {len(aliases)} field name(s) after as", pt)
        else:
            groups = named_groups(pattern.pattern, pt.pos + 1)
            if aliases:
                raise self.error("parse with a regular expression names its fields with (?<name>...) groups, "
                                 "not with as", pt)
            if not groups:
                raise self.error("parse regular expression has no named capture group (?<name>...)", pt)
            aliases = groups
        return ParseCmd(source, pattern, tuple(aliases), t.pos)

    def items(self, stop_words: tuple[str, ...] = ()) -> tuple[Item, ...]:
        items = []
        while True:
            e = self.expr()
            alias = None
            if self.tok.is_word("as"):
                self.advance()
                alias = self.expect(T.IDENT, "a name after as").value
            items.append(Item(e, alias))
            if not self.comma():
                break
        if not self.at_command_end() and not self.tok.is_word(*stop_words):
            raise self.error(f"unexpected {self.tok.value!r}: expected ',' '|' or end of query")
        return tuple(items)

    # ------------------------------------------------------------------ expressions
    def expr(self) -> Expr:
        return self.or_expr()

    def or_expr(self) -> Expr:
        start = self.tok.pos
        left = self.and_expr()
        while self.tok.is_word("or"):
            op = self.advance()
            right = self.and_expr()
            left = Binary("or", left, right, op.pos, self.slice(start))
        return left

    def and_expr(self) -> Expr:
        start = self.tok.pos
        left = self.not_expr()
        while self.tok.is_word("and"):
            op = self.advance()
            right = self.not_expr()
            left = Binary("and", left, right, op.pos, self.slice(start))
        return left

    def not_expr(self) -> Expr:
        # ``!x`` is ``not x``: AWS's operator tables list only ``not``, but published query definitions (AWS's
        # GenAI dashboard guide, Terraform modules in production) write ``!isPresent(...)``
        if self.tok.is_word("not") or self.at_op("!"):
            t = self.advance()
            self.nest()
            operand = self.not_expr()
            self.depth -= 1
            return Unary("not", operand, t.pos, self.slice(t.pos))
        return self.comparison()

    def comparison(self) -> Expr:
        start = self.tok.pos
        left = self.additive()
        t = self.tok
        if t.kind is T.OP and t.value in _COMPARISON:
            self.advance()
            right = self.pattern_operand("=~") if t.value == "=~" else self.additive()
            return Binary(t.value, left, right, t.pos, self.slice(start))
        negated = False
        if t.is_word("not") and self.tokens[self.i + 1].is_word("like", "in"):
            self.advance()
            negated = True
            t = self.tok
        if t.is_word("like"):
            self.advance()
            right = self.pattern_operand("like")
            return Binary("like", left, right, t.pos, self.slice(start), negated=negated)
        if t.is_word("in"):
            self.advance()
            if self.tok.kind is T.LPAREN:
                if not isinstance(left, Field):
                    raise self.error("a subquery's values are compared with a field: write <field> in (<subquery>)",
                                     t)
                query = self.subquery("subquery")
                return InSubquery(left, query, left.name, negated, t.pos, self.slice(start))
            self.expect(T.LBRACKET, "'[' or '(' after in")
            items = []
            if self.tok.kind is not T.RBRACKET:
                while True:
                    items.append(self.additive())
                    if not self.comma():
                        break
            self.expect(T.RBRACKET, "']' closing the in list")
            return InList(left, tuple(items), negated, t.pos, self.slice(start))
        return left

    def pattern_operand(self, op: str) -> Expr:
        t = self.tok
        if t.kind is T.STRING:
            self.advance()
            return Literal(t.value, t.pos, self.text[t.pos:t.end])
        if t.kind is T.REGEX:
            self.advance()
            return Regex(t.value, t.pos, self.text[t.pos:t.end])
        raise self.error(f"{op} needs a \"string\" or a /regex/")

    def additive(self) -> Expr:
        start = self.tok.pos
        left = self.multiplicative()
        terms = 1
        while self.tok.kind is T.OP and self.tok.value in ("+", "-"):
            op = self.advance()
            terms += 1
            if terms > MAX_ARITHMETIC_CHAIN:
                raise self.error(f"more than {MAX_ARITHMETIC_CHAIN} terms in one chain of '+', '-' "
                                 "operators", op)
            right = self.multiplicative()
            left = Binary(op.value, left, right, op.pos, self.slice(start))
        return left

    def multiplicative(self) -> Expr:
        start = self.tok.pos
        left = self.power()
        terms = 1
        while self.tok.kind is T.OP and self.tok.value in ("*", "/", "%"):
            op = self.advance()
            terms += 1
            if terms > MAX_ARITHMETIC_CHAIN:
                raise self.error(f"more than {MAX_ARITHMETIC_CHAIN} terms in one chain of '*', '/', '%' "
                                 "operators", op)
            right = self.power()
            left = Binary(op.value, left, right, op.pos, self.slice(start))
        return left

    def power(self) -> Expr:
        start = self.tok.pos
        base = self.unary()
        if self.tok.kind is T.OP and self.tok.value == "^":
            op = self.advance()
            self.nest()
            exponent = self.power()  # right-associative
            self.depth -= 1
            return Binary("^", base, exponent, op.pos, self.slice(start))
        return base

    def unary(self) -> Expr:
        if self.tok.kind is T.OP and self.tok.value in ("-", "+"):
            t = self.advance()
            self.nest()
            operand = self.unary()
            self.depth -= 1
            if t.value == "+":
                return operand
            if isinstance(operand, Literal) and isinstance(operand.value, (int, float)):
                return Literal(-operand.value, t.pos, self.slice(t.pos))
            return Unary("-", operand, t.pos, self.slice(t.pos))
        return self.primary()

    def period(self, t: Token) -> Duration:
        m = re.fullmatch(r"([0-9]+)([A-Za-z]+)", t.value)
        unit = canonical_unit(m.group(2)) if m else None
        if m is None or unit is None:
            raise self.error(f"invalid time period {t.value!r} (units: ms s m h d w mo q y)", t)
        amount = int(m.group(1))
        months = amount * _MONTHS.get(unit, 0)
        if months > 120_000 or amount * FIXED_UNIT_MS.get(unit, 0) > _MAX_PERIOD_MS:
            raise self.error(f"time period {t.value!r} is longer than 10,000 years", t)
        return Duration(amount, unit, t.pos, t.value)

    def number(self, t: Token) -> Literal:
        """A number literal: an int when written as digits and within 64 bits, else a double.

        A value beyond the double range (``1e999``) is an error, not infinity: AWS documents
        no infinity literal, and an infinite bound would match everything or nothing silently.
        """
        if t.value.isdigit() and int(t.value) <= _MAX_INT:
            return Literal(int(t.value), t.pos, t.value)
        value = float(t.value)
        if not math.isfinite(value):
            raise self.error(f"number {t.value} is out of range (beyond about 1.8e308)", t)
        return Literal(value, t.pos, t.value)

    def primary(self) -> Expr:
        t = self.tok
        if t.kind is T.NUMBER:
            self.advance()
            return self.number(t)
        if t.kind is T.STRING:
            self.advance()
            return Literal(t.value, t.pos, self.text[t.pos:t.end])
        if t.kind is T.REGEX:
            self.advance()
            return Regex(t.value, t.pos, self.text[t.pos:t.end])
        if t.kind is T.DURATION:
            self.advance()
            return self.period(t)
        if t.kind is T.OP and t.value == "*":
            self.advance()
            return Star(t.pos)
        if t.kind is T.LPAREN:
            self.advance()
            self.nest()
            inner = self.expr()
            self.depth -= 1
            self.expect(T.RPAREN, "')'")
            return inner
        if t.kind is T.IDENT:
            self.advance()
            if not t.quoted and self.tok.kind is T.LPAREN:
                self.advance()
                self.nest()
                args = []
                if not self.at(T.RPAREN):
                    while True:
                        args.append(self.expr())
                        if not self.comma():
                            break
                self.depth -= 1
                self.expect(T.RPAREN, f"')' closing {t.value}(")
                return Call(t.value, tuple(args), t.pos, self.slice(t.pos))
            if t.is_keyword:
                raise self.error(f"unexpected keyword {t.value!r}", t)
            return Field(t.value, t.pos, self.text[t.pos:t.end])
        raise self.error(f"expected a field, value or function, found {self.found()}")


_COMMANDS: dict[str, Callable[[_Parser, Token], Command]] = {
    "fields": _Parser.fields_cmd,
    "display": _Parser.display_cmd,
    "filter": _Parser.filter_cmd,
    "filterindex": _Parser.filter_index_cmd,
    "stats": _Parser.stats_cmd,
    "sort": _Parser.sort_cmd,
    "limit": _Parser.limit_cmd,
    "parse": _Parser.parse_cmd,
    "dedup": _Parser.dedup_cmd,
    "unnest": _Parser.unnest_cmd,
    "unmask": _Parser.unmask_cmd,
    "source": _Parser.source_cmd,
    "join": _Parser.join_cmd,
}
"""Parser entry per command (keys: lower-cased names; exactly catalog.SUPPORTED_COMMANDS)."""
