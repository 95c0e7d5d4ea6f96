"""The ``AlarmRule`` of a composite alarm: tokenizer, parser into a small tree, renderer and evaluator.

Grammar, from the PutCompositeAlarm API reference (``AlarmRule``, in the model botocore ships) and the CloudWatch
User Guide ("Create a composite alarm")::

    rule     := or
    or       := and ("OR" and)*
    and      := not ("AND" not)*
    not      := "NOT" not | atom
    atom     := "(" rule ")" | "TRUE" | "FALSE" | STATE "(" name ")"
              | "AT_LEAST" "(" count "," STATE "," "(" name ("," name)* ")" ")"
    STATE    := "ALARM" | "OK" | "INSUFFICIENT_DATA"
    name     := '"' characters other than '"' '"' | characters other than ")" (an alarm name or ARN)

Limits (same sources): at most 10,240 characters (the model's length), at most 100 child alarms, at most 500
elements ("child alarms, TRUE or FALSE statements, and parentheses. A pair of parentheses counts as one element"),
and at least one child alarm, TRUE or FALSE. How AND and OR bind when mixed without parentheses is not documented,
so this parser binds AND tighter (as most languages do) and :func:`parse` reports the mix so that the validator can
ask for parentheses; :func:`render_any` always writes unambiguous rules. ``AT_LEAST(2, ALARM, (a, b, c))`` (also
``AT_LEAST(50%, ...)``) is read so that a valid rule is never refused.

A composite alarm is in ALARM while its rule is true, else OK (INSUFFICIENT_DATA only right after it is created):
:func:`evaluate` gives the rule's value for the children's states.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

MAX_RULE_LENGTH = 10_240
MAX_CHILDREN = 100
MAX_ELEMENTS = 500
STATES = ("ALARM", "OK", "INSUFFICIENT_DATA")
_KEYWORDS = {"AND", "OR", "NOT", "TRUE", "FALSE", "AT_LEAST", *STATES}
_ARN_NAME = re.compile(r"^arn:[^:]+:cloudwatch:[^:]*:[^:]*:alarm:(.+)$")


class RuleSyntaxError(ValueError):
    """The rule does not follow the grammar; ``position`` is the 0-based character offset of the problem."""

    def __init__(self, message: str, position: int) -> None:
        self.position = position
        super().__init__(f"{message} (at character {position + 1})")


@dataclass(frozen=True)
class Node:
    """One node of a parsed rule. ``op``: "OR" | "AND" | "NOT" | "CONST" | "STATE" | "AT_LEAST" | "GROUP"
    (a parenthesised sub-rule, kept so that elements can be counted)."""

    op: str
    children: tuple[Node, ...] = ()
    value: bool = False
    """CONST: its truth value."""
    state: str = ""
    """STATE and AT_LEAST: the state asked for."""
    names: tuple[str, ...] = ()
    """STATE: the one alarm; AT_LEAST: its alarms (as written: name or ARN)."""
    count: float = 0
    """AT_LEAST: how many (``percent`` False) or which share in % (``percent`` True)."""
    percent: bool = False


@dataclass(frozen=True)
class ParsedRule:
    """A parsed rule and what the validator checks on it."""

    tree: Node
    children: tuple[str, ...]
    """The alarms the rule names (alarm names; an ARN is reduced to its name), first use order, no repeats."""
    elements: int
    """Child alarm references, TRUE/FALSE statements and parenthesis pairs (the API's element count)."""
    mixed_and_or: bool = field(default=False)
    """AND and OR appear side by side without parentheses (their relative precedence is not documented)."""


def alarm_name_of(ref: str) -> str:
    """The alarm name in a rule reference: the name itself, or the last part of an alarm ARN."""
    m = _ARN_NAME.match(ref)
    return m.group(1) if m else ref


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, position): kinds "(", ")", ",", "word", "quoted"."""
    out: list[tuple[str, str, int]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "(),":
            out.append((c, c, i))
            i += 1
        elif c == '"':
            j = text.find('"', i + 1)
            if j < 0:
                raise RuleSyntaxError("unterminated quoted alarm name", i)
            out.append(("quoted", text[i + 1:j], i))
            i = j + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '(),"':
                j += 1
            out.append(("word", text[i:j], i))
            i = j
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.mixed = False

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, kind: str, word: str | None = None) -> tuple[str, str, int]:
        t = self.peek()
        if t is None:
            raise RuleSyntaxError(f"expected {word or kind}, got the end of the rule", len(self.text))
        if t[0] != kind or (word is not None and t[1] != word):
            raise RuleSyntaxError(f"expected {word or kind}, got {t[1]!r}", t[2])
        self.i += 1
        return t

    def rule(self) -> Node:
        parts = [self.conj()]
        while (t := self.peek()) is not None and t[0] == "word" and t[1] == "OR":
            self.i += 1
            parts.append(self.conj())
        if len(parts) > 1 and any(x.op == "AND" for x in parts):
            self.mixed = True
        return parts[0] if len(parts) == 1 else Node("OR", tuple(parts))

    def conj(self) -> Node:
        parts = [self.neg()]
        while (t := self.peek()) is not None and t[0] == "word" and t[1] == "AND":
            self.i += 1
            parts.append(self.neg())
        return parts[0] if len(parts) == 1 else Node("AND", tuple(parts))

    def neg(self) -> Node:
        t = self.peek()
        if t is not None and t[0] == "word" and t[1] == "NOT":
            self.i += 1
            return Node("NOT", (self.neg(),))
        return self.atom()

    def name(self, stops: str = ")") -> str:
        t = self.peek()
        if t is None:
            raise RuleSyntaxError("expected an alarm name, got the end of the rule", len(self.text))
        if t[0] == "quoted":
            self.i += 1
            if not t[1].strip():
                raise RuleSyntaxError("empty alarm name", t[2])
            return t[1]
        if t[0] != "word":
            raise RuleSyntaxError(f"expected an alarm name, got {t[1]!r}", t[2])
        # an unquoted name runs to the closing parenthesis (or the comma of a list); it may hold spaces
        start = t[2]
        ends = [e for e in (self.text.find(c, start) for c in stops) if e >= 0]
        end = min(ends) if ends else -1
        if end < 0:
            raise RuleSyntaxError("unterminated alarm name", start)
        while self.i < len(self.toks) and self.toks[self.i][2] < end:
            self.i += 1
        return self.text[start:end].strip()

    def atom(self) -> Node:
        t = self.peek()
        if t is None:
            raise RuleSyntaxError("expected a condition, got the end of the rule", len(self.text))
        if t[0] == "(":
            self.i += 1
            inner = self.rule()
            self.take(")")
            return Node("GROUP", (inner,))
        if t[0] != "word":
            raise RuleSyntaxError(f"expected a condition, got {t[1]!r}", t[2])
        word = t[1]
        if word in ("TRUE", "FALSE"):
            self.i += 1
            return Node("CONST", value=word == "TRUE")
        if word in STATES:
            self.i += 1
            self.take("(")
            ref = self.name()
            self.take(")")
            return Node("STATE", state=word, names=(ref,))
        if word == "AT_LEAST":
            self.i += 1
            self.take("(")
            n = self.take("word")
            m = re.fullmatch(r"(\d+(?:\.\d+)?)(%?)", n[1])
            if not m:
                raise RuleSyntaxError(f"AT_LEAST needs a count or a percentage, got {n[1]!r}", n[2])
            self.take(",")
            st = self.take("word")
            if st[1] not in STATES:
                raise RuleSyntaxError(f"expected one of {', '.join(STATES)}, got {st[1]!r}", st[2])
            self.take(",")
            self.take("(")
            refs = [self.name("),")]
            while (p := self.peek()) is not None and p[0] == ",":
                self.i += 1
                refs.append(self.name("),"))
            self.take(")")
            self.take(")")
            return Node("AT_LEAST", state=st[1], names=tuple(refs), count=float(m.group(1)), percent=bool(m.group(2)))
        raise RuleSyntaxError(f"unknown word {word!r} (AND, OR, NOT, TRUE, FALSE, AT_LEAST, "
                              f"{', '.join(STATES)})", t[2])


def parse(text: str) -> ParsedRule:
    """Parse ``text``; raises :class:`RuleSyntaxError` (a ``ValueError``) when it does not follow the grammar. The
    limits are not checked here (:mod:`alarms.validate` reports each with its own rule id)."""
    p = _Parser(text)
    if not p.toks:
        raise RuleSyntaxError("the rule is empty", 0)
    tree = p.rule()
    if (t := p.peek()) is not None:
        raise RuleSyntaxError(f"unexpected {t[1]!r} after a complete rule", t[2])
    children: list[str] = []
    elements = 0

    def walk(n: Node) -> None:
        nonlocal elements
        if n.op in ("STATE", "AT_LEAST"):
            for ref in n.names:
                elements += 1
                name = alarm_name_of(ref)
                if name not in children:
                    children.append(name)
            if n.op == "AT_LEAST":
                elements += 1  # its parenthesised list
        elif n.op == "CONST" or n.op == "GROUP":
            elements += 1
        for c in n.children:
            walk(c)

    walk(tree)
    return ParsedRule(tree, tuple(children), elements, p.mixed)


def evaluate(tree: Node, states: Mapping[str, str]) -> bool:
    """The rule's value when each alarm (by name; an ARN counts as its name) is in ``states[name]`` ("ALARM" |
    "OK" | "INSUFFICIENT_DATA"; a missing name counts as INSUFFICIENT_DATA, the state of an alarm with no data)."""
    def state(ref: str) -> str:
        return states.get(alarm_name_of(ref), "INSUFFICIENT_DATA")

    if tree.op == "OR":
        return any(evaluate(c, states) for c in tree.children)
    if tree.op == "AND":
        return all(evaluate(c, states) for c in tree.children)
    if tree.op == "NOT":
        return not evaluate(tree.children[0], states)
    if tree.op == "GROUP":
        return evaluate(tree.children[0], states)
    if tree.op == "CONST":
        return tree.value
    if tree.op == "STATE":
        return state(tree.names[0]) == tree.state
    hits = sum(1 for ref in tree.names if state(ref) == tree.state)
    need = tree.count * len(tree.names) / 100 if tree.percent else tree.count
    return hits >= need


def quote(name: str) -> str:
    """``name`` as a rule reference: in double quotes. Raises ``ValueError`` for a name holding ``"`` (the rule
    syntax has no escape for it)."""
    if '"' in name:
        raise ValueError(f"alarm name {name!r} holds a double quote, which an AlarmRule cannot reference")
    return f'"{name}"'


def render_any(names: Sequence[str], state: str = "ALARM") -> str:
    """``STATE("a") OR STATE("b") ...`` for ``names`` (quoted, :func:`quote`); "FALSE" for none."""
    if not names:
        return "FALSE"
    return " OR ".join(f"{state}({quote(n)})" for n in names)


def rewrite(text: str, reference: Callable[[str], str | None], escape: Callable[[str], str]) -> str:
    """``text`` (a rule whose alarm names are quoted, as :func:`render_any` writes them) for a template language:
    each quoted name for which ``reference(name)`` gives an expression (``${LogicalId}``, a Terraform reference) is
    replaced by it, every other character goes through ``escape`` (the language's literal form). Unquoted names are
    only escaped."""
    out: list[str] = []
    pos = 0
    for kind, value, start in _tokens(text):
        if kind != "quoted":
            continue
        out.append(escape(text[pos:start]))
        ref = reference(value)
        out.append(f'"{ref}"' if ref is not None else escape(f'"{value}"'))
        pos = start + len(value) + 2
    out.append(escape(text[pos:]))
    return "".join(out)
