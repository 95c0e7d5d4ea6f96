"""The blank-line test of the line formats (``line_formats.BLANK_SQL``: the first character's code tested before
``trim``) against the rule written out in Python: a line is blank when it is empty or only spaces, tabs and carriage
returns."""

from __future__ import annotations

import duckdb
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.ingest.line_formats import BLANK_SQL

_NOT_BLANK = f"NOT {BLANK_SQL.format(m='m')}"

# every character the two rules look at, and a few they must not confuse with them
CHARS = st.sampled_from([" ", "\t", "\r", "\n", "\x0b", "\x0c", "\x00", "\x1f", "!", "a", "{", "\u00a0", "\u2028",
                         "\u3000", "é"])


def is_blank(line: str) -> bool:
    return line.strip(" \t\r") == ""


def kept_lines(lines: list[str]) -> list[int]:
    """Indexes of ``lines`` the SQL filter keeps."""
    con = duckdb.connect()
    try:
        con.register("t", pa.table({"i": pa.array(range(len(lines)), pa.int64()), "m": pa.array(lines, pa.string())}))
        return [i for (i,) in con.execute(f"SELECT i FROM t WHERE {_NOT_BLANK} ORDER BY i").fetchall()]
    finally:
        con.close()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.text(CHARS, max_size=6), min_size=1, max_size=40), min_size=1, max_size=10))
def test_not_blank_filter_is_the_rule(files: list[list[str]]) -> None:
    lines = [ln for f in files for ln in f]
    assert kept_lines(lines) == [i for i, ln in enumerate(lines) if not is_blank(ln)]


def test_not_blank_by_hand() -> None:
    lines = ["", " ", "\t\r ", "\x0b", "\x0c ", "\n", " x", "\u00a0", "{}", "\r\r"]
    assert kept_lines(lines) == [3, 4, 5, 6, 7, 8]  # \v, \f, \n and NBSP are not trimmed: those lines are events
