"""[collector-core] The compiler's layout: token types as an enum, one keyword table, one
dispatch entry per command in parser and generator, one tree walker, one named-group scanner."""

from __future__ import annotations

import json

import pytest

from collector.insights import QueryError, compile_query, compiler, parse_query, parser, run_query
from collector.insights.catalog import SUPPORTED_COMMANDS, UNSUPPORTED_COMMANDS
from collector.insights.expressions import Binary, Call, Field, InList, Literal, walk
from collector.insights.regex import convert_named_groups, named_groups
from collector.insights.tokenizer import KEYWORDS, TokenType, tokenize
from tests.support.insights_events import events_connection

T0 = 1767607200000


def test_token_types_are_an_enum_and_compare_as_their_names():
    toks = tokenize("filter a =~ /x/ | stats count(*) by bin(5m)")
    assert all(isinstance(t.kind, TokenType) for t in toks)
    assert [t.kind for t in toks][:4] == [TokenType.IDENT, TokenType.IDENT, TokenType.OP, TokenType.REGEX]
    assert TokenType.REGEX == "REGEX"


def test_one_keyword_table_decides_regex_after_keywords_and_refuses_keywords_as_fields():
    for word, breaks_operand in KEYWORDS.items():
        kinds = [t.kind for t in tokenize(f"x {word} /r/")]
        assert (kinds[2] is TokenType.REGEX) == breaks_operand, word
    with pytest.raises(QueryError, match="unexpected keyword 'into'"):
        parse_query("fields into")
    assert parse_query("fields `into`").commands[0].items[0].expr == Field("into", 7, "`into`")


def test_every_supported_command_has_one_parser_and_one_generator_entry():
    assert set(parser._COMMANDS) == set(SUPPORTED_COMMANDS)
    node_types = {type(parse_query(q).commands[-1]) for q in (
        "fields a", "display a", "filter a", "filterIndex a = 1", "stats count(*)", "sort a", "limit 1",
        "parse @message 'a*' as x", "dedup a", "unnest a into b", "unmask", "SOURCE logGroups()",
        "join left=a right=b where a.k = b.k (SOURCE 'g')")}
    assert node_types == set(compiler._COMMAND_GENERATORS)
    assert not set(SUPPORTED_COMMANDS) & set(UNSUPPORTED_COMMANDS)


def test_walk_visits_in_list_items_so_stats_sees_the_aggregate():
    # the two walkers disagreed: one ignored the items of `in [...]`
    (cmd,) = parse_query("stats 3 in [count(*)] as d").commands
    nodes = list(walk(cmd.items[0].expr))
    assert isinstance(nodes[0], InList) and isinstance(nodes[1], Literal) and isinstance(nodes[2], Call)
    con = events_connection([{"timestamp": T0 + i, "message": "{}"} for i in range(3)])
    assert run_query(con, "stats 3 in [count(*)] as d").rows == [(1,)]  # 3 events: 3 is in [3]
    assert run_query(con, "stats 2 in [count(*)] as d").rows == [(0,)]


def test_walk_is_iterative_over_a_long_chain():
    e = parse_query("fields " + " + ".join(["a"] * 400) + " as s").commands[0].items[0].expr
    nodes = list(walk(e))
    assert len(nodes) == 799 and sum(isinstance(n, Binary) for n in nodes) == 399


def test_parser_and_compiler_share_one_named_group_scanner():
    # an escaped paren is not a group: only (?<b>...) is
    pattern = r"\(?<a>x\)(?<b>y)"
    assert named_groups(pattern) == ["b"]
    assert convert_named_groups(pattern) == (r"\(?<a>x\)(?P<b>y)", {"b": 1})
    (p,) = parse_query(f"parse @message /{pattern}/").commands
    assert p.aliases == ("b",)
    con = events_connection([{"timestamp": T0, "message": "(?<a>x)y and x)y"}])
    assert run_query(con, f"parse @message /{pattern}/ | display b").rows == [("y",)]


@pytest.mark.parametrize("pattern,message", [
    (r"(?<a>x)(?<a>y)", "named group 'a' appears twice"),
    (r"(?<1a>x)", "malformed named group"),
    (r"(?<a x)", "malformed named group"),
])
def test_malformed_named_groups_are_query_errors_with_positions(pattern, message):
    with pytest.raises(QueryError, match=message) as info:
        compile_query(f"parse @message /{pattern}/")
    assert info.value.line == 1 and info.value.column is not None


def test_standard_queries_compile_to_the_same_sql_shape(tmp_path):
    # the refactor must not change what a standard query computes: compare to a hand count
    from collector.collect import load_standard_queries

    docs = [{"schema_version": "1", "outcome": o, "service": "s", "operation": "Op", "event_source": "sqs"}
            for o in ("succeeded", "succeeded", "claimed")]
    con = events_connection([{"timestamp": T0 + i, "message": json.dumps(d)} for i, d in enumerate(docs)])
    rows = run_query(con, load_standard_queries()["outcomes"], limit_cap=None).to_records()
    assert sorted((r["outcome"], r["events"]) for r in rows) == [("claimed", 1), ("succeeded", 2)]
