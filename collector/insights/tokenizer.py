"""Tokenizer for the CloudWatch Logs Insights query language (classic pipe syntax).

Token types are :class:`TokenType`; the language's reserved words are the one table
:data:`KEYWORDS` (the tokenizer uses it to tell division from a regex, the parser to refuse a
keyword where a field is expected).

A ``/`` starts a regex literal unless it follows an operand (then it is division); the
exceptions are ``parse <field> /regex/`` where the regex follows a field name, and ``parse /regex/``
where it follows the command word (the field is then ``@message``). A regex literal
may span lines (the docs print long ``parse`` patterns over two lines, wrapped at a space):
the line break and the white space around it stand for one space. Comments start with ``#``
and run to the end of the line. Numbers are ASCII digits only (``0-9``), as the docs write them:
``²`` or ``①`` are not digits here.

A field name may index a list with brackets written against it (``users[1].action``, the "bracket
access operator" of the structure types in CWL_QuerySyntax-operations-functions); the token's value is
the flattened name Logs Insights uses for JSON arrays (``users.1.action``, CWL_AnalyzeLogData-discoverable-fields:
"use requestParameters.instancesSet.items.0.instanceId"), so both spellings name one field.
Source: https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_QuerySyntax.html
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from collector.insights.constants import MAX_QUERY_LENGTH
from collector.insights.exceptions import QueryError

__all__ = ["KEYWORDS", "Token", "TokenType", "tokenize"]


class TokenType(str, Enum):
    """Kinds of tokens (``str`` values, so ``TokenType.REGEX == "REGEX"``)."""

    IDENT = "IDENT"  # field names incl. @timestamp, a.b.0, `quoted names`; also command/keyword words
    STRING = "STRING"  # '...' or "..."
    NUMBER = "NUMBER"  # 12, 1.5, 2e3 (ASCII digits)
    DURATION = "DURATION"  # 5m, 1h, 100ms
    REGEX = "REGEX"  # /.../
    OP = "OP"  # = != < <= > >= =~ + - * / % ^ ! (``!`` is ``not``)
    PIPE = "PIPE"
    COMMA = "COMMA"
    COLON = "COLON"  # SOURCE logGroups(namePrefix: [...])
    LPAREN = "LPAREN"
    RPAREN = "RPAREN"
    LBRACKET = "LBRACKET"
    RBRACKET = "RBRACKET"
    EOF = "EOF"


KEYWORDS: dict[str, bool] = {
    # word: True when an operand cannot end with it (a following '/' starts a regex)
    "and": True, "or": True, "not": True, "like": True, "in": True, "by": True, "as": True, "into": True,
    "offset": True, "asc": False, "desc": False,
}
"""Reserved words of the language (lower case). Backtick-quote a field with such a name."""

_DIGITS = frozenset("0123456789")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_IDENT_START = _LETTERS | set("_@$")
_IDENT_PART = _IDENT_START | _DIGITS | {"."}
_OPERATORS = ("=~", "!=", "<=", ">=", "==", "=", "<", ">", "+", "-", "*", "/", "%", "^", "!")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}
_SINGLE = {"|": TokenType.PIPE, ",": TokenType.COMMA, ":": TokenType.COLON, "(": TokenType.LPAREN,
           ")": TokenType.RPAREN, "[": TokenType.LBRACKET, "]": TokenType.RBRACKET}
_OPERAND_TYPES = {TokenType.IDENT, TokenType.STRING, TokenType.NUMBER, TokenType.DURATION, TokenType.REGEX,
                  TokenType.RPAREN, TokenType.RBRACKET}


@dataclass(frozen=True)
class Token:
    kind: TokenType
    value: str
    pos: int  # 0-based offset of the token's first character
    end: int  # offset just past the token
    quoted: bool = False  # IDENT written with backticks (never a keyword)

    def is_word(self, *words: str) -> bool:
        return self.kind is TokenType.IDENT and not self.quoted and self.value.lower() in words

    @property
    def is_keyword(self) -> bool:
        return self.kind is TokenType.IDENT and not self.quoted and self.value.lower() in KEYWORDS


def _is_operand(tokens: list[Token]) -> bool:
    if not tokens:
        return False
    last = tokens[-1]
    if last.is_keyword and KEYWORDS[last.value.lower()]:
        return False
    if last.kind is TokenType.IDENT and len(tokens) >= 2 and tokens[-2].is_word("parse"):
        return False  # parse <field> /regex/
    if last.is_word("parse") and (len(tokens) == 1 or tokens[-2].kind is TokenType.PIPE):
        return False  # parse /regex/: the command word, not a field named parse
    return last.kind in _OPERAND_TYPES


def _scan_digits(text: str, j: int) -> int:
    while j < len(text) and text[j] in _DIGITS:
        j += 1
    return j


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens (the last is EOF).

    Raises:
        QueryError (with position): query longer than MAX_QUERY_LENGTH characters, an
        unterminated string/regex/backtick, or a character that is not part of the language.
    """
    if len(text) > MAX_QUERY_LENGTH:
        raise QueryError(f"query is {len(text):,} characters long; the maximum is {MAX_QUERY_LENGTH:,}",
                         MAX_QUERY_LENGTH, text)
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        start = i
        if c in _SINGLE:
            tokens.append(Token(_SINGLE[c], c, start, i + 1))
            i += 1
        elif c in "\"'":
            value, i = _read_string(text, i, c)
            tokens.append(Token(TokenType.STRING, value, start, i))
        elif c == "`":
            j = text.find("`", i + 1)
            if j < 0:
                raise QueryError("unterminated backtick-quoted field name", start, text)
            tokens.append(Token(TokenType.IDENT, text[i + 1 : j], start, j + 1, quoted=True))
            i = j + 1
        elif c == "/" and not _is_operand(tokens):
            value, i = _read_regex(text, i)
            tokens.append(Token(TokenType.REGEX, value, start, i))
        elif c in _DIGITS or (c == "." and i + 1 < n and text[i + 1] in _DIGITS):
            j = _scan_digits(text, i)
            if j < n and text[j] == "." and j + 1 < n and text[j + 1] in _DIGITS:
                j = _scan_digits(text, j + 1)
            if j + 1 < n and text[j] in "eE" and (text[j + 1] in _DIGITS or
                                                  (text[j + 1] in "+-" and j + 2 < n and text[j + 2] in _DIGITS)):
                j = _scan_digits(text, j + 2)
            k = j
            while k < n and text[k] in _LETTERS:
                k += 1
            if k > j:
                tokens.append(Token(TokenType.DURATION, text[i:k], start, k))
                i = k
            else:
                tokens.append(Token(TokenType.NUMBER, text[i:j], start, j))
                i = j
        elif c in _IDENT_START:
            name, i = _read_name(text, i)
            tokens.append(Token(TokenType.IDENT, name, start, i))
        else:
            for op in _OPERATORS:
                if text.startswith(op, i):
                    tokens.append(Token(TokenType.OP, "=" if op == "==" else op, start, i + len(op)))
                    i += len(op)
                    break
            else:
                raise QueryError(f"unexpected character {c!r}", start, text)
    tokens.append(Token(TokenType.EOF, "", n, n))
    return tokens


def _read_name(text: str, i: int) -> tuple[str, int]:
    """A field or command name starting at ``i``: (its flattened name, offset past it). ``[<digits>]`` right after
    a name part is a list index and becomes ``.<digits>``; never after a keyword, so ``in[1]`` stays a list."""
    n = len(text)
    parts: list[str] = []
    j = i
    while True:
        k = j + 1 if j == i else j
        while k < n and text[k] in _IDENT_PART:
            k += 1
        parts.append(text[j:k])
        j = k
        if j >= n or text[j] != "[" or "".join(parts).lower() in KEYWORDS:
            break
        close = _scan_digits(text, j + 1)
        if close == j + 1 or close >= n or text[close] != "]":
            break
        parts.append("." + text[j + 1:close])
        j = close + 1
    return "".join(parts), j


def _read_string(text: str, i: int, quote: str) -> tuple[str, int]:
    out: list[str] = []
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\\" and j + 1 < len(text):
            nxt = text[j + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            j += 2
            continue
        if c == quote:
            return "".join(out), j + 1
        out.append(c)
        j += 1
    raise QueryError("unterminated string literal", i, text)


def _read_regex(text: str, i: int) -> tuple[str, int]:
    out: list[str] = []
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\\" and j + 1 < len(text):
            # ``\/`` is an escaped slash; every other escape is kept for the regex engine.
            out.append("/" if text[j + 1] == "/" else text[j : j + 2])
            j += 2
            continue
        if c == "/":
            return "".join(out), j + 1
        if c in "\r\n":
            # a pattern continued on the next line, as the docs print long parse patterns
            # (CWL_QuerySyntax-examples: "...method:(?<method2>.*?),\n    latency := ..."): they
            # wrap at a space, so the line break with the spaces around it stands for one space
            while out and out[-1] in (" ", "\t"):
                out.pop()
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            out.append(" ")
            continue
        out.append(c)
        j += 1
    raise QueryError("unterminated regular expression (missing closing '/')", i, text)
