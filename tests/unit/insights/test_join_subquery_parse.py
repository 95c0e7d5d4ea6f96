"""[fidelity-vended] join, subqueries, parse with many captures, list indexes, ``!`` and two-argument bin: the syntax
the published queries write, the rules where AWS is silent, and the one-line errors for what cannot run.

Expected values are computed by hand from the events in each test."""

from __future__ import annotations

import json

import pytest

from collector.insights import QueryError, compile_query, parse_query, run_query
from collector.insights.expressions import Field, InList, InSubquery, JoinCmd, SourceCmd, Unary
from collector.insights.tokenizer import TokenType, tokenize
from tests.support.insights_events import events_connection

T0 = 1767607200000


def _con(groups: dict[str, list[dict]]):
    events = []
    for group, docs in groups.items():
        events += [{"timestamp": T0 + i * 1000, "message": json.dumps(d), "@log": f"000000000000:{group}"}
                   for i, d in enumerate(docs)]
    return events_connection(events)


# ----------------------------------------------------------------------------- tokens and syntax
@pytest.mark.parametrize("text,name", [("users[1].action", "users.1.action"), ("a[0][12].b", "a.0.12.b"),
                                       ("items.0.instanceId", "items.0.instanceId"), ("x[2]", "x.2")])
def test_a_list_index_is_the_flattened_field_name(text, name):
    (cmd,) = parse_query(f"fields {text}").commands
    assert cmd.items[0].expr == Field(name, 7, text)


def test_brackets_after_a_keyword_or_with_a_space_stay_a_list():
    (cmd,) = parse_query("filter a in[1, 2] and b in [3]").commands
    assert isinstance(cmd.expr.left, InList) and isinstance(cmd.expr.right, InList)
    with pytest.raises(QueryError, match="unexpected '\\['") as e:  # an index is written against the name
        parse_query("fields a [1]")
    assert e.value.column == 10


def test_parse_without_a_field_reads_at_message_with_a_regex_or_a_glob():
    con = events_connection([{"timestamp": T0, "message": "lvl=WARN x"}])
    assert run_query(con, "parse /lvl=(?<lvl>[A-Z]+)/ | display lvl").rows == [("WARN",)]
    assert run_query(con, 'parse "lvl=* x" as lvl | display lvl').rows == [("WARN",)]
    # a field named parse is still divided
    assert [t.kind for t in tokenize("fields parse / 2")][2] is TokenType.OP


def test_bang_is_not():
    (cmd,) = parse_query("filter !isPresent(a) and b != 1").commands
    assert isinstance(cmd.expr.left, Unary) and cmd.expr.left.op == "not"
    con = events_connection([{"timestamp": T0, "message": '{"a": 1}'}, {"timestamp": T0 + 1, "message": '{"b": 2}'}])
    assert run_query(con, "filter !ispresent(a) | fields b").rows == [(2,)]


def test_bin_with_a_timestamp_argument_rounds_that_timestamp():
    con = events_connection([{"timestamp": T0 + m * 60_000, "message": "{}"} for m in (0, 5, 61, 62)])
    q = "stats count(*) as n by bin(@timestamp, 1h) as hour | sort hour asc"
    assert run_query(con, q).to_records_json() == [{"hour": "2026-01-05 10:00:00.000", "n": 2},
                                                   {"hour": "2026-01-05 11:00:00.000", "n": 2}]
    assert run_query(con, q.replace("bin(@timestamp, 1h)", "bin(1h)")).rows == run_query(con, q).rows


# ----------------------------------------------------------------------------- parse
def test_parse_glob_with_thirty_wildcards_and_regex_with_twelve_groups():
    words = [f"w{i}" for i in range(30)]
    con = events_connection([{"timestamp": T0, "message": " ".join(words)}])
    names = ", ".join(f"f{i}" for i in range(30))
    row = run_query(con, f"parse @message '{' '.join(['*'] * 30)}' as {names} | display f0, f9, f10, f29").rows
    assert row == [("w0", "w9", "w10", " ".join(words[29:]))]
    # unnamed groups count too: the named ones are groups 10 and 12
    regex = "".join("(w[0-9]+) " for _ in range(9)) + "(?<ten>w[0-9]+) (w[0-9]+) (?<twelve>w[0-9]+)"
    assert run_query(con, f"parse /{regex}/ | display ten, twelve").rows == [("w9", "w11")]


# ----------------------------------------------------------------------------- subqueries
GROUPS = {
    "/aws/lambda/main": [{"requestId": "q1", "user": "a"}, {"requestId": "q2", "user": "b"},
                         {"requestId": 3, "user": "c"}, {"user": "d"}],
    "/aws/lambda/db": [{"requestId": "q1", "err": "Timeout"}, {"requestId": "q2", "err": "Deadlock"},
                       {"requestId": "3", "err": "Timeout"}],
}


def test_subquery_membership_compares_text_and_a_missing_value_matches_neither_way():
    con = _con(GROUPS)
    q = ("filter requestId in (SOURCE '/aws/lambda/db' | filter err = 'Timeout' | fields requestId) "
         "| fields user | sort user asc")
    run = {"log_groups": ["/aws/lambda/main"]}
    assert run_query(con, q, **run).rows == [("a",), ("c",)]  # q1, and the number 3 is the text "3"
    assert run_query(con, q.replace(" in (", " not in ("), **run).rows == [("b",)]  # d has no requestId


def test_subquery_errors_name_what_is_wrong():
    con = _con(GROUPS)
    with pytest.raises(QueryError, match=r"the subquery returns no field 'requestId' \(it returns @timestamp, "
                                         r"@message\); end it with '\| fields requestId'"):
        run_query(con, "filter requestId in (SOURCE '/aws/lambda/db' | filter err = 'Timeout')")
    with pytest.raises(QueryError, match="cannot be nested inside another subquery") as e:
        parse_query("filter a in (filter b in (fields b) | fields a)")
    assert e.value.column == 26
    with pytest.raises(QueryError, match="compared with a field"):
        parse_query("filter strlen(a) in (fields a)")
    with pytest.raises(QueryError, match="empty subquery"):
        parse_query("filter a in ()")
    with pytest.raises(QueryError, match="expected '\\|' or '\\)' closing the subquery"):
        parse_query("filter a in (fields a")


def test_source_by_name_and_log_groups_choose_the_events():
    con = _con(GROUPS)
    (src, _) = parse_query("SOURCE '/aws/lambda/db', '/x' | fields err").commands
    assert isinstance(src, SourceCmd) and src.names == ("/aws/lambda/db", "/x")
    assert run_query(con, "SOURCE '/aws/lambda/db' | stats count(*) as n").rows == [(3,)]
    assert run_query(con, "stats count(*) as n", log_groups=["/aws/lambda/main"]).rows == [(4,)]
    # a query starting with SOURCE chooses its own groups
    assert run_query(con, "SOURCE '/aws/lambda/db' | stats count(*) as n", log_groups=["/aws/lambda/main"]).rows == [
        (3,)]


# ----------------------------------------------------------------------------- join
JOIN = ("join {type}left=api right=fn where api.rid = fn.rid (SOURCE '/aws/lambda/fn'{more}) "
        "| fields api.rid, api.status, fn.ms | sort api.status desc")
JOIN_GROUPS = {
    "/aws/apigw": [{"rid": "r1", "status": 500}, {"rid": "r2", "status": 502}, {"rid": "r3", "status": 200}],
    "/aws/lambda/fn": [{"rid": "r2", "ms": 10}, {"rid": "r2", "ms": 30}, {"rid": "r3", "ms": 5}],
}


def test_join_repeats_a_left_row_per_match_in_ingest_order_and_left_keeps_the_unmatched():
    con = _con(JOIN_GROUPS)
    run = {"log_groups": ["/aws/apigw"]}
    # r2 matches two right events: once per match, the right events in their ingest order after the sort
    assert run_query(con, JOIN.format(type="", more=""), **run).rows == [("r2", 502, 30), ("r2", 502, 10),
                                                                         ("r3", 200, 5)]
    assert run_query(con, JOIN.format(type="type=left ", more=""), **run).rows == [
        ("r2", 502, 30), ("r2", 502, 10), ("r1", 500, None), ("r3", 200, 5)]
    # the source may be a whole query; fields read afterwards: alias.field, a name without alias reads the left
    q = ("join left=api right=fn where api.rid = fn.rid (SOURCE '/aws/lambda/fn' | stats max(ms) as top by rid) "
         "| fields rid, status, fn.top | sort rid asc")
    assert run_query(con, q, **run).rows == [("r2", 502, 30), ("r3", 200, 5)]


def test_join_syntax_errors_are_one_line_with_a_position():
    (cmd,) = parse_query("join type=LEFT right=b left=a where b.k = a.k (SOURCE 'g')").commands
    assert isinstance(cmd, JoinCmd) and cmd.kind == "left" and (cmd.left_key.name, cmd.right_key.name) == ("k", "k")
    for text, message in [
        ("join left=a right=b where a.k = b.k", "expected '\\(' starting the join source"),
        ("join right=b where a.k = b.k (fields x)", "join needs left=<alias> right=<alias>"),
        ("join type=outer left=a right=b where a.k = b.k (fields x)", "type=outer is not a join type"),
        ("join left=a right=a where a.k = a.k (fields x)", "both 'a'"),
        ("join left=a right=b where c.k = b.k (fields x)", "'c.k' in join's where names no side"),
        ("join left=a right=b where a.k = a.j (fields x)", "compares two fields of 'a'"),
        ("join left=a right=b a.k = b.k (fields x)", "expected 'where a.<field> = b.<field>'"),
        ("join left=a right=b where a.k < b.k (fields x)", "one equality"),
        ("filter x in (join left=a right=b where a.k = b.k (fields x) | fields x)", "cannot be nested"),
    ]:
        with pytest.raises(QueryError, match=message) as e:
            compile_query(text)
        assert e.value.line == 1 and e.value.column is not None and "\n" not in str(e.value), text


def test_a_subquery_is_an_operand_not_a_child_of_the_outer_rows():
    (cmd,) = parse_query("filter a in (SOURCE 'g' | fields a)").commands
    assert isinstance(cmd.expr, InSubquery) and cmd.expr.column == "a"
    assert cmd.expr.query.commands[0] == SourceCmd((), (), (), 13, ("g",))
