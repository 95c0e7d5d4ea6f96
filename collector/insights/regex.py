"""The one scanner of regular-expression literals: named groups and their conversion to RE2.

Logs Insights writes named groups as ``(?<name>...)`` (Java style); DuckDB's RE2 wants
``(?P<name>...)``. The parser (which names ``parse`` fields after the groups) and the compiler
(which extracts them by group number) both use :func:`convert_named_groups`, so they can
never disagree on which groups exist.
Source: https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_QuerySyntax-Parse.html
"""

from __future__ import annotations

import re

from collector.insights.exceptions import QueryError

__all__ = ["capture_count", "convert_named_groups", "named_groups"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def convert_named_groups(pattern: str, pos: int = 0) -> tuple[str, dict[str, int]]:
    """Rewrite ``(?<name>`` to RE2's ``(?P<name>`` and number every capturing group (see :func:`_scan`)."""
    out, index, _ = _scan(pattern, pos)
    return out, index


def capture_count(pattern: str) -> int:
    """Number of capturing groups (named or not) of a regex (see :func:`_scan`)."""
    return _scan(pattern, 0)[2]


def _scan(pattern: str, pos: int) -> tuple[str, dict[str, int], int]:
    """Rewrite ``(?<name>`` to RE2's ``(?P<name>`` and number every capturing group.

    Args:
        pattern: the regex as written between the slashes.
        pos: offset of the pattern in the query text (for error positions).
    Returns:
        (RE2 pattern, {group name: 1-based group number}, number of capturing groups), names in pattern order.
    Raises:
        QueryError: a malformed group name (``(?<1x>``, ``(?<a`` without ``>``) or a name used twice.

    Escapes and character classes are skipped, so ``\\(`` and ``[(]`` are not groups;
    ``(?<=``/``(?<!`` (look-behind) and ``(?:``-style groups are not capturing.
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
            if i < len(pattern) and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < len(pattern) and pattern[i] == "]":  # a leading ']' is literal
                out.append("]")
                i += 1
            continue
        if c == "(":
            rest = pattern[i + 1:]
            named = rest.startswith("?P<") or (rest.startswith("?<") and not rest.startswith(("?<=", "?<!")))
            if named:
                skip = 3 if rest.startswith("?P<") else 2
                end = rest.find(">", skip)
                name = rest[skip:end] if end >= 0 else ""
                if end < 0 or not _NAME.fullmatch(name):
                    raise QueryError("malformed named group in regular expression: expected (?<name>...) with a "
                                     "name of letters, digits and _", pos + i + 1)
                if name in index:
                    raise QueryError(f"named group '{name}' appears twice in the regular expression", pos + i + 1)
                n += 1
                index[name] = n
                out.append(f"(?P<{name}>")
                i += 1 + end + 1
                continue
            if not rest.startswith("?"):
                n += 1
        out.append(c)
        i += 1
    return "".join(out), index, n


def named_groups(pattern: str, pos: int = 0) -> list[str]:
    """Names of the named groups of a regex, in order (same scanner as :func:`convert_named_groups`)."""
    return list(convert_named_groups(pattern, pos)[1])
