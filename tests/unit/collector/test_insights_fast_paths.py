"""The compiler's cheaper forms give what the plain forms give, on random data.

- ``ispresent`` of a JSON column (``sql.json_present_sql``) tests the first character before parsing: it must agree
  with ``(x ->> '$') IS NOT NULL`` on every JSON text, with any white space around it.
- A stats result sorted by a timestamp a stats function made computes the later ORDER BY terms (the other sort keys,
  then the group keys in Logs Insights order) only on rows that tie on that timestamp (``sql.sort_tie_sql``): the
  rows must come out in the order of the same SQL with every term computed on every row.
"""

from __future__ import annotations

import json
import re

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.insights import run_query
from collector.insights.engine import prepare_query
from collector.insights.sql import json_present_sql
from tests.support.insights_events import events_connection

T0 = 1767607200000

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6) | st.sampled_from(["null", "n", " ", "nul"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6)
_space = st.text(alphabet=" \t\n\r", max_size=3)


@pytest.mark.slow  # 200 generated documents, each through DuckDB
@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.tuples(_space, _json_values, _space,
                                                st.sampled_from([(",", ":"), (", ", ": ")]))), max_size=30))
def test_json_present_sql_agrees_with_the_parse(values):
    con = duckdb.connect()
    con.execute('CREATE TABLE t (i INTEGER, "j" JSON)')
    rows = [(i, None if v is None else v[0] + json.dumps(v[1], separators=v[3]) + v[2]) for i, v in enumerate(values)]
    if rows:
        con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    got = con.execute(f"""SELECT i, {json_present_sql('"j"')}, ("j" ->> '$') IS NOT NULL FROM t ORDER BY i""").fetchall()
    assert [(i, fast) for i, fast, _ in got] == [(i, slow) for i, _, slow in got]
    # the oracle: present unless SQL NULL or the JSON null literal
    assert [fast for _, fast, _ in got] == [v is not None and v[1] is not None for v in values]


def test_json_present_sql_hand_cases():
    con = duckdb.connect()
    cases = {None: False, "null": False, " null": False, "null ": False, "\n\tnull\r": False, '"null"': True,
             '""': True, "0": True, "false": True, "[]": True, "{}": True, ' "a"': True, "[null]": True}
    got = {v: con.execute(f"SELECT {json_present_sql('CAST($1 AS JSON)')}", [v]).fetchall()[0][0] for v in cases}
    assert got == cases


def test_ispresent_of_a_hot_json_column_uses_the_fast_form_and_counts_json_null_as_missing():
    docs = [{"a": "x"}, {"a": None}, {"b": 1}, {"a": 0}, {"a": ""}, {"a": [None]}]
    con = events_connection([{"timestamp": T0 + i, "message": json.dumps(d)} for i, d in enumerate(docs)], hot=("a",))
    _, compiled = prepare_query(con, "filter ispresent(a) | fields a", limit_cap=None)
    assert "ascii(" in compiled.sql  # the fast form, not only the parse
    rows = run_query(con, "filter ispresent(a) | stats count(*) as n").rows
    assert rows == [(4,)]  # "x", 0, "" and [null]; not the JSON null nor the absent field


_keys = st.one_of(st.none(), st.integers(-3, 12), st.sampled_from(["a", "a1", "a10", "a2", "B", "7", "07", "-3", "x y"]))
_events = st.lists(st.tuples(_keys, _keys, st.integers(0, 4), st.one_of(st.none(), st.integers(0, 3))), max_size=60)
_QUERIES = (
    "stats max(@timestamp) as last, count(*) as c by k1, k2 | sort last asc",
    "stats max(@timestamp) as last, count(*) as c by k1, k2 | sort last desc",
    "stats max(@timestamp) as last by k1 | sort last asc, k1 desc | limit 4",
    "stats fromMillis(max(n)) as m, count(*) as c by k2, k1 | sort m desc",
    "filter ispresent(k1) | stats min(@timestamp) as first by k1, bin(1m) as t | sort first asc",
)
_TIE = re.compile(r'\(CASE WHEN ("__iw_t\d+") THEN ')


@settings(max_examples=60, deadline=None)
@given(_events, st.sampled_from(_QUERIES))
def test_sort_terms_computed_on_ties_only_give_the_full_order(evs, query):
    docs = []
    for k1, k2, t, n in evs:
        doc = {k: v for k, v in (("k1", k1), ("k2", k2), ("n", None if n is None else T0 + n * 1000)) if v is not None}
        docs.append({"timestamp": T0 + t * 1000, "message": json.dumps(doc)})  # few distinct times: many ties
    con = events_connection(docs)
    con, compiled = prepare_query(con, query, limit_cap=None)
    assert _TIE.search(compiled.sql), "the query does not take the tie-only path"
    eager = _TIE.sub("(CASE WHEN TRUE THEN ", compiled.sql)
    lazy_rows = con.execute(compiled.sql, compiled.params).fetchall()
    eager_rows = con.execute(eager, compiled.params).fetchall()
    # rows that tie on every term may come in either order: compare the order of the sorted columns' text and
    # the rows as a multiset (a limit may cut between tied rows, which are then equal on every term)
    if "limit" not in query:
        assert sorted(map(repr, lazy_rows)) == sorted(map(repr, eager_rows))
    assert _order_signature(lazy_rows, compiled) == _order_signature(eager_rows, compiled)


def _order_signature(rows, compiled):
    """The rows' values of every column the query groups or sorts by, in row order (what the ORDER BY decides)."""
    names = [n for n, _ in compiled.columns]
    keep = [i for i, n in enumerate(names) if n != "c"]  # the count may differ between rows that tie
    return [tuple(_text(r[i]) for i in keep) for r in rows]


def _text(v):
    """A value as the sort sees it: its text (JSON 7 and "7" alike; they tie on every term)."""
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            pass
    return str(v)


def test_a_new_hot_column_is_read_by_name_whatever_its_duckdb_type():
    """A column the ingest adds (a dotted JSON name, or a typed column) is the field of that name: no @json parse."""
    docs = [{"_aws": {"Timestamp": T0}, "code": 5}, {"code": 7}, {"_aws": {"Timestamp": T0 + 1}}]
    con = events_connection([{"timestamp": T0 + i, "message": json.dumps(d)} for i, d in enumerate(docs)],
                            hot=("_aws.Timestamp",))
    con.execute('ALTER TABLE events ADD COLUMN "code" BIGINT')
    # filled as the ingest fills them: the nested _aws.Timestamp as JSON, code as a number
    con.execute('UPDATE events SET "code" = CAST(json_extract("@json", \'$.code\') AS BIGINT), '
                '"_aws.Timestamp" = json_extract("@json", \'$._aws.Timestamp\')')
    query = "filter ispresent(_aws.Timestamp) or ispresent(code) | stats count(*) as n, sum(code) as s"
    _, compiled = prepare_query(con, query, limit_cap=None)
    assert '"_aws.Timestamp"' in compiled.sql and '"code"' in compiled.sql and '"@json"' not in compiled.sql
    assert run_query(con, query).rows == [(3, 12)]
    assert run_query(con, "filter ispresent(_aws.Timestamp) and not ispresent(code) | stats count(*) as n").rows == [(1,)]
