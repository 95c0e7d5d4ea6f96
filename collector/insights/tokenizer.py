"""Tokenizer for the CloudWatch Logs Insights query language (classic pipe syntax).

Token kinds: IDENT (field names incl. ``@timestamp``, ``a.b.0``, backtick-quoted names and
keywords), STRING ('...' or "..."), NUMBER, DURATION (``5m``, ``1h``, ``100ms``), REGEX
(``/.../``), OP, PIPE, COMMA, LPAREN, RPAREN, LBRACKET, RBRACKET, EOF.

A ``/`` starts a regex literal unless it follows an operand (then it is division); the one
exception is ``parse <field> /regex/`` where the regex follows a field name.
Comments start with ``#`` and run to the end of the line.
Source: https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_QuerySyntax.html
"""

from __future__ import annotations

from dataclasses import dataclass

from collector.insights.exceptions import QueryError

__all__ = ["Token", "tokenize"]

_IDENT_START = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_@$")
_IDENT_PART = _IDENT_START | set("0123456789.")
_OPERATORS = ("=~", "!=", "<=", ">=", "==", "=", "<", ">", "+", "-", "*", "/", "%", "^")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}
_OPERAND_KINDS = {"IDENT", "STRING", "NUMBER", "DURATION", "REGEX", "RPAREN", "RBRACKET"}
_NON_OPERAND_WORDS = {"and", "or", "not", "like", "in", "by", "as"}


@dataclass(frozen=True)
class Token:
    kind: str
    value: str
    pos: int  # 0-based offset of the token's first character
    end: int  # offset just past the token
    quoted: bool = False  # IDENT written with backticks (never a keyword)

    def is_word(self, *words: str) -> bool:
        return self.kind == "IDENT" and not self.quoted and self.value.lower() in words


def _is_operand(tokens: list[Token]) -> bool:
    if not tokens:
        return False
    last = tokens[-1]
    if last.kind == "IDENT" and not last.quoted and last.value.lower() in _NON_OPERAND_WORDS:
        return False
    if last.kind == "IDENT" and len(tokens) >= 2 and tokens[-2].is_word("parse"):
        return False  # parse <field> /regex/
    return last.kind in _OPERAND_KINDS


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens. Raises QueryError (with position) on an unterminated
    string/regex/backtick or a character that is not part of the language."""
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
        if c == "|":
            tokens.append(Token("PIPE", c, start, i + 1))
            i += 1
        elif c == ",":
            tokens.append(Token("COMMA", c, start, i + 1))
            i += 1
        elif c in "()[]":
            kind = {"(": "LPAREN", ")": "RPAREN", "[": "LBRACKET", "]": "RBRACKET"}[c]
            tokens.append(Token(kind, c, start, i + 1))
            i += 1
        elif c in "\"'":
            value, i = _read_string(text, i, c)
            tokens.append(Token("STRING", value, start, i))
        elif c == "`":
            j = text.find("`", i + 1)
            if j < 0:
                raise QueryError("unterminated backtick-quoted field name", start, text)
            tokens.append(Token("IDENT", text[i + 1 : j], start, j + 1, quoted=True))
            i = j + 1
        elif c == "/" and not _is_operand(tokens):
            value, i = _read_regex(text, i)
            tokens.append(Token("REGEX", value, start, i))
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            j = i
            while j < n and text[j].isdigit():
                j += 1
            if j < n and text[j] == "." and j + 1 < n and text[j + 1].isdigit():
                j += 1
                while j < n and text[j].isdigit():
                    j += 1
            if j < n and text[j] in "eE" and j + 1 < n and (text[j + 1].isdigit() or
                                                           (text[j + 1] in "+-" and j + 2 < n and text[j + 2].isdigit())):
                j += 2
                while j < n and text[j].isdigit():
                    j += 1
            k = j
            while k < n and text[k].isalpha():
                k += 1
            if k > j:
                tokens.append(Token("DURATION", text[i:k], start, k))
                i = k
            else:
                tokens.append(Token("NUMBER", text[i:j], start, j))
                i = j
        elif c in _IDENT_START:
            j = i + 1
            while j < n and text[j] in _IDENT_PART:
                j += 1
            tokens.append(Token("IDENT", text[i:j], start, j))
            i = j
        else:
            for op in _OPERATORS:
                if text.startswith(op, i):
                    tokens.append(Token("OP", "=" if op == "==" else op, start, i + len(op)))
                    i += len(op)
                    break
            else:
                raise QueryError(f"unexpected character {c!r}", start, text)
    tokens.append(Token("EOF", "", n, n))
    return tokens


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
        if c == "\n":
            break
        out.append(c)
        j += 1
    raise QueryError("unterminated regular expression (missing closing '/')", i, text)
