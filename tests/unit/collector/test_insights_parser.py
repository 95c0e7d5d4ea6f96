"""Tokenizer/parser: syntax, positions of errors, unsupported commands and functions."""

from __future__ import annotations

import pytest

from collector.insights import QueryError, compile_query, parse_query
from collector.insights.compiler import convert_named_groups, glob_to_regex
from collector.insights.expressions import (
    Binary,
    Call,
    Duration,
    Field,
    FieldsCmd,
    FilterCmd,
    InList,
    ParseCmd,
    SortCmd,
    StatsCmd,
)
from collector.insights.tokenizer import tokenize


def test_division_versus_regex_is_decided_by_context():
    kinds = [t.kind for t in tokenize("fields a / 2 | filter b like /x\\/y/ | parse @message /(?<k>\\d+)/")]
    assert kinds.count("REGEX") == 2
    toks = tokenize("filter b like /x\\/y/")
    assert [t.value for t in toks if t.kind == "REGEX"] == ["x/y"]


def test_comments_and_durations_and_backticks():
    q = parse_query("# leading comment\nstats count(*) by bin(5m) # trailing\n| sort `my field` desc")
    stats, sort = q.commands
    assert isinstance(stats, StatsCmd) and isinstance(sort, SortCmd)
    (by,) = stats.by
    assert isinstance(by.expr, Call) and by.expr.args == (Duration(5, "m", by.expr.args[0].pos, "5m"),)
    assert by.name == "bin(5m)"
    assert sort.keys[0][0] == Field("my field", sort.keys[0][0].pos, "`my field`") and sort.keys[0][1] is True


@pytest.mark.parametrize("unit,canon", [("ms", "ms"), ("msec", "ms"), ("sec", "s"), ("mins", "m"), ("hrs", "h"),
                                         ("d", "d"), ("w", "w"), ("mon", "mo"), ("qtr", "q"), ("yr", "y")])
def test_documented_bin_units(unit, canon):
    (cmd,) = parse_query(f"stats count(*) by bin(2{unit})").commands
    assert cmd.by[0].expr.args[0].unit == canon


def test_operator_precedence():
    (cmd,) = parse_query("fields 1 + 2 * 3 ^ 2 as x").commands
    e = cmd.items[0].expr
    assert isinstance(e, Binary) and e.op == "+"
    assert e.right.op == "*" and e.right.right.op == "^"
    (f,) = parse_query("filter a = 1 or b = 2 and not c in [1, 2]").commands
    assert isinstance(f, FilterCmd) and f.expr.op == "or" and f.expr.right.op == "and"
    assert f.expr.right.right.op == "not" and isinstance(f.expr.right.right.operand, InList)


def test_not_like_and_not_in():
    (f,) = parse_query('filter a not like "x" and b not in ["y"]').commands
    assert f.expr.left.negated is True and f.expr.left.op == "like"
    assert f.expr.right.negated is True


def test_item_names_are_alias_or_source_text():
    (cmd,) = parse_query("fields strlen( x ) , y as why, @timestamp").commands
    assert isinstance(cmd, FieldsCmd)
    assert [i.name for i in cmd.items] == ["strlen( x )", "why", "@timestamp"]


def test_parse_glob_and_regex_aliases():
    (p,) = parse_query('parse @message "a=* b=*" as x, y').commands
    assert isinstance(p, ParseCmd) and p.aliases == ("x", "y")
    (r,) = parse_query(r"parse @message /(?<lvl>\w+) (?P<rest>.*)/").commands
    assert r.aliases == ("lvl", "rest")


@pytest.mark.parametrize("query,message,line,column", [
    ("fields a | anomaly @message", "unsupported command 'anomaly'", 1, 12),
    ("fields a\n| pattern @message", "unsupported command 'pattern'", 2, 3),
    ("filter foo(a) = 1", "unsupported function 'foo'", 1, 8),
    ("fields a |\n  stats madeup(x)", "unsupported function 'madeup'", 2, 9),
    ('parse @message "a=* b=*" as x', "2 '*' wildcard(s) but 1 field name(s)", 1, 16),
    ('filter a = "unterminated', "unterminated string literal", 1, 12),
    ("fields a,", "expected a field, value or function, found end of query", 1, 10),
    ("limit 0", "limit must be a positive integer", 1, 7),
    ("stats count(*) by bin(5parsecs)", "invalid time period", 1, 23),
    ("fields sum(x)", "stats function 'sum' can only be used in a stats command", 1, 8),
    ("stats sum(count(*))", "cannot be nested", 1, 11),
    ("stats operation", "is not a 'by' field", 1, 7),
    ('stats strlen("abc")', "uses no stats function", 1, 7),
    ("stats strlen(2, 3)", "strlen() takes 1 argument(s), got 2", 1, 7),
    ("fields @timestamp | dedup a | sort b", "only limit can follow dedup", 1, 31),
    ("fields x | limit 20000", "exceeds the maximum of 10000", 1, 12),
])
def test_errors_name_the_problem_and_its_position(query, message, line, column):
    with pytest.raises(QueryError) as info:
        compile_query(query)
    err = info.value
    assert message in err.message
    assert (err.line, err.column) == (line, column), str(err)
    assert "\n" not in str(err)


def test_glob_to_regex_escapes_literals_and_takes_the_rest_with_a_trailing_star():
    assert glob_to_regex("a.b (*) c*") == r"(?s)a\.b \((.*?)\) c(.*)"


def test_convert_named_groups_numbers_every_capturing_group():
    pattern, index = convert_named_groups(r"(\d)(?:x)[(](?<a>y)(?<b>z(w))\((?P<c>q)")
    assert pattern == r"(\d)(?:x)[(](?P<a>y)(?P<b>z(w))\((?P<c>q)"
    assert index == {"a": 2, "b": 3, "c": 5}


def test_user_text_is_bound_never_concatenated():
    evil = "x'); DROP TABLE events; --"
    compiled = compile_query(f'filter `{evil}` = "{evil}" | fields "{evil}" as y')
    assert "DROP TABLE" not in compiled.sql
    assert evil in compiled.params
