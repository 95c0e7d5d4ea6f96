"""Recursive-descent parser: query text -> :class:`~collector.insights.expressions.Query`.

Grammar (classic Logs Insights QL)::

    query    := command ("|" command)*
    command  := fields items | display items | filter expr | stats items [by items]
              | sort expr [asc|desc] ("," expr [asc|desc])* | limit N
              | parse [expr] (STRING | REGEX) [as name ("," name)*] | dedup field ("," field)*
    items    := expr [as name] ("," expr [as name])*
    expr     := or;  or := and ("or" and)*;  and := not ("and" not)*;  not := "not" not | cmp
    cmp      := add [(= != < <= > >= =~) add | [not] like (STRING|REGEX) | [not] in "[" list "]"]
    add      := mul (("+"|"-") mul)*;  mul := pow (("*"|"/"|"%") pow)*
    pow      := unary ["^" pow];  unary := "-" unary | primary
    primary  := NUMBER | STRING | REGEX | DURATION | "*" | IDENT ["(" args ")"] | "(" expr ")"

Commands that Logs Insights has but this engine does not run (``unnest``, ``lookup``,
``pattern``, ``diff``, ``anomaly``, ``unmask``, ``filterIndex``, ``SOURCE``, ``join``...) are
rejected with a QueryError naming the command and its position; never silently ignored.
Source: https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_QuerySyntax.html
"""

from __future__ import annotations

import re

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
)
from collector.insights.periods import canonical_unit
from collector.insights.tokenizer import Token, tokenize

__all__ = ["SUPPORTED_COMMANDS", "named_groups", "parse_query"]

SUPPORTED_COMMANDS = ("fields", "display", "filter", "stats", "sort", "limit", "parse", "dedup")
_COMPARISON = {"=", "!=", "<", "<=", ">", ">=", "=~"}
_NAMED_GROUP = re.compile(r"\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>")


def named_groups(pattern: str) -> list[str]:
    """Names of the ``(?<name>...)`` / ``(?P<name>...)`` groups of a regex, in order."""
    return _NAMED_GROUP.findall(pattern)


def parse_query(text: str) -> Query:
    """Parse ``text``. Raises QueryError (message + position) on any syntax error."""
    try:
        return _Parser(text).parse()
    except QueryError as exc:
        raise exc.with_query(text) from None


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    # ------------------------------------------------------------------ helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def advance(self) -> Token:
        t = self.tokens[self.i]
        self.i += 1
        return t

    def error(self, message: str, tok: Token | None = None) -> QueryError:
        t = tok or self.tok
        return QueryError(message, t.pos, self.text)

    def expect(self, kind: str, what: str) -> Token:
        if self.tok.kind != kind:
            found = "end of query" if self.tok.kind == "EOF" else repr(self.tok.value)
            raise self.error(f"expected {what}, found {found}")
        return self.advance()

    def slice(self, start: int) -> str:
        end = self.tokens[self.i - 1].end
        return self.text[start:end].strip()

    def at_command_end(self) -> bool:
        return self.tok.kind in ("PIPE", "EOF")

    # ------------------------------------------------------------------ commands
    def parse(self) -> Query:
        commands = []
        if self.tok.kind == "EOF":
            raise self.error("empty query")
        while True:
            commands.append(self.command())
            if self.tok.kind == "EOF":
                break
            if self.tok.kind != "PIPE":
                raise self.error(f"unexpected {self.tok.value!r}: expected '|' or end of query")
            self.advance()
        return Query(self.text, tuple(commands))

    def command(self):
        t = self.tok
        if t.kind != "IDENT" or t.quoted:
            raise self.error("expected a command (fields, filter, stats, sort, limit, parse, display, dedup)")
        name = t.value.lower()
        if name not in SUPPORTED_COMMANDS:
            raise self.error(f"unsupported command '{t.value}'")
        self.advance()
        if name == "fields":
            return FieldsCmd(self.items(), t.pos)
        if name == "display":
            return DisplayCmd(self.items(), t.pos)
        if name == "filter":
            expr = self.expr()
            self.end_of_command("filter")
            return FilterCmd(expr, t.pos)
        if name == "stats":
            items = self.items(stop_at_by=True)
            by: tuple[Item, ...] = ()
            if self.tok.is_word("by"):
                self.advance()
                by = self.items()
            return StatsCmd(items, by, t.pos)
        if name == "sort":
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
                if self.tok.kind != "COMMA":
                    break
                self.advance()
            self.end_of_command("sort")
            return SortCmd(tuple(keys), t.pos)
        if name == "limit":
            n = self.expect("NUMBER", "a row count after limit")
            if not n.value.isdigit() or int(n.value) < 1:
                raise self.error("limit must be a positive integer", n)
            self.end_of_command("limit")
            return LimitCmd(int(n.value), t.pos)
        if name == "parse":
            return self.parse_cmd(t)
        # dedup
        fields = []
        while True:
            f = self.expect("IDENT", "a field name after dedup")
            fields.append(Field(f.value, f.pos, f.value))
            if self.tok.kind != "COMMA":
                break
            self.advance()
        self.end_of_command("dedup")
        return DedupCmd(tuple(fields), t.pos)

    def end_of_command(self, name: str) -> None:
        if not self.at_command_end():
            raise self.error(f"unexpected {self.tok.value!r} in {name}")

    def parse_cmd(self, t: Token) -> ParseCmd:
        if self.tok.kind in ("STRING", "REGEX"):
            source: Expr = Field("@message", t.pos, "@message")
        else:
            source = self.primary()
        pt = self.tok
        if pt.kind == "STRING":
            pattern: Literal | Regex = Literal(pt.value, pt.pos, self.text[pt.pos:pt.end])
        elif pt.kind == "REGEX":
            pattern = Regex(pt.value, pt.pos, self.text[pt.pos:pt.end])
        else:
            raise self.error("parse needs a glob pattern in quotes or a /regex/")
        self.advance()
        aliases: list[str] = []
        if self.tok.is_word("as"):
            self.advance()
            while True:
                a = self.expect("IDENT", "a field name after as")
                aliases.append(a.value)
                if self.tok.kind != "COMMA":
                    break
                self.advance()
        self.end_of_command("parse")
        if isinstance(pattern, Literal):
            stars = str(pattern.value).count("*")
            if stars == 0:
                raise self.error("parse glob pattern has no '*' wildcard", pt)
            if len(aliases) != stars:
                raise self.error(
                    f"parse glob pattern has {stars} '*' wildcard(s) but {len(aliases)} field name(s) after as", pt)
        else:
            groups = named_groups(pattern.pattern)
            if aliases:
                raise self.error("parse with a regular expression names its fields with (?<name>...) groups, "
                                 "not with as", pt)
            if not groups:
                raise self.error("parse regular expression has no named capture group (?<name>...)", pt)
            aliases = groups
        return ParseCmd(source, pattern, tuple(aliases), t.pos)

    def items(self, stop_at_by: bool = False) -> tuple[Item, ...]:
        items = []
        while True:
            e = self.expr()
            alias = None
            if self.tok.is_word("as"):
                self.advance()
                alias = self.expect("IDENT", "a name after as").value
            items.append(Item(e, alias))
            if self.tok.kind != "COMMA":
                break
            self.advance()
        if not self.at_command_end() and not (stop_at_by and self.tok.is_word("by")):
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
        if self.tok.is_word("not"):
            t = self.advance()
            operand = self.not_expr()
            return Unary("not", operand, t.pos, self.slice(t.pos))
        return self.comparison()

    def comparison(self) -> Expr:
        start = self.tok.pos
        left = self.additive()
        t = self.tok
        if t.kind == "OP" and t.value in _COMPARISON:
            self.advance()
            if t.value == "=~":
                right = self.pattern_operand("=~")
            else:
                right = self.additive()
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
            self.expect("LBRACKET", "'[' after in")
            items = []
            if self.tok.kind != "RBRACKET":
                while True:
                    items.append(self.additive())
                    if self.tok.kind != "COMMA":
                        break
                    self.advance()
            self.expect("RBRACKET", "']' closing the in list")
            return InList(left, tuple(items), negated, t.pos, self.slice(start))
        return left

    def pattern_operand(self, op: str) -> Expr:
        t = self.tok
        if t.kind == "STRING":
            self.advance()
            return Literal(t.value, t.pos, self.text[t.pos:t.end])
        if t.kind == "REGEX":
            self.advance()
            return Regex(t.value, t.pos, self.text[t.pos:t.end])
        raise self.error(f"{op} needs a \"string\" or a /regex/")

    def additive(self) -> Expr:
        start = self.tok.pos
        left = self.multiplicative()
        while self.tok.kind == "OP" and self.tok.value in ("+", "-"):
            op = self.advance()
            right = self.multiplicative()
            left = Binary(op.value, left, right, op.pos, self.slice(start))
        return left

    def multiplicative(self) -> Expr:
        start = self.tok.pos
        left = self.power()
        while self.tok.kind == "OP" and self.tok.value in ("*", "/", "%"):
            op = self.advance()
            right = self.power()
            left = Binary(op.value, left, right, op.pos, self.slice(start))
        return left

    def power(self) -> Expr:
        start = self.tok.pos
        base = self.unary()
        if self.tok.kind == "OP" and self.tok.value == "^":
            op = self.advance()
            exponent = self.power()  # right-associative
            return Binary("^", base, exponent, op.pos, self.slice(start))
        return base

    def unary(self) -> Expr:
        if self.tok.kind == "OP" and self.tok.value == "-":
            t = self.advance()
            operand = self.unary()
            if isinstance(operand, Literal) and isinstance(operand.value, (int, float)):
                return Literal(-operand.value, t.pos, self.slice(t.pos))
            return Unary("-", operand, t.pos, self.slice(t.pos))
        if self.tok.kind == "OP" and self.tok.value == "+":
            self.advance()
            return self.unary()
        return self.primary()

    def primary(self) -> Expr:
        t = self.tok
        if t.kind == "NUMBER":
            self.advance()
            value: int | float = int(t.value) if t.value.isdigit() else float(t.value)
            return Literal(value, t.pos, t.value)
        if t.kind == "STRING":
            self.advance()
            return Literal(t.value, t.pos, self.text[t.pos:t.end])
        if t.kind == "REGEX":
            self.advance()
            return Regex(t.value, t.pos, self.text[t.pos:t.end])
        if t.kind == "DURATION":
            self.advance()
            m = re.fullmatch(r"(\d+)([A-Za-z]+)", t.value)
            unit = canonical_unit(m.group(2)) if m else None
            if m is None or unit is None:
                raise self.error(f"invalid time period {t.value!r} (units: ms s m h d w mo q y)", t)
            return Duration(int(m.group(1)), unit, t.pos, t.value)
        if t.kind == "OP" and t.value == "*":
            self.advance()
            return Star(t.pos)
        if t.kind == "LPAREN":
            self.advance()
            inner = self.expr()
            self.expect("RPAREN", "')'")
            return inner
        if t.kind == "IDENT":
            self.advance()
            if not t.quoted and self.tok.kind == "LPAREN":
                self.advance()
                args = []
                if self.tok.kind != "RPAREN":
                    while True:
                        args.append(self.expr())
                        if self.tok.kind != "COMMA":
                            break
                        self.advance()
                self.expect("RPAREN", f"')' closing {t.value}(")
                return Call(t.value, tuple(args), t.pos, self.slice(t.pos))
            if not t.quoted and t.value.lower() in ("and", "or", "not", "like", "in", "by", "as", "asc", "desc"):
                raise self.error(f"unexpected keyword {t.value!r}", t)
            return Field(t.value, t.pos, self.text[t.pos:t.end])
        found = "end of query" if t.kind == "EOF" else repr(t.value)
        raise self.error(f"expected a field, value or function, found {found}")
