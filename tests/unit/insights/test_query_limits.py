"""[trust] Any query text gives a result or a QueryError with line and column; limits and
number rules are documented (collector/insights/constants.py) and enforced with clear errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.insights import QueryError, run_query
from collector.insights.constants import MAX_ARITHMETIC_CHAIN, MAX_NESTING_DEPTH, MAX_QUERY_LENGTH
from collector.insights.sql import HARDENING_SETTINGS, harden_connection, is_hardened
from tests.support.insights_events import events_connection

T0 = 1767607200000
EVENTS = [{"timestamp": T0 + i * 1000, "message": json.dumps(d)}
          for i, d in enumerate([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 3}])]


@pytest.fixture(scope="module")
def con():
    return events_connection(EVENTS)


def err(con, text) -> QueryError:
    with pytest.raises(QueryError) as info:
        run_query(con, text)
    assert info.value.line is not None and info.value.column is not None, str(info.value)
    assert "\n" not in str(info.value)
    return info.value


@pytest.mark.parametrize("text,column", [("limit ²", 7), ("filter a = ①", 12), ("limit ٣", 7),
                                         ("fields a + ５ as x", 12)])
def test_numbers_are_ascii_digits_only(con, text, column):
    e = err(con, text)
    assert "unexpected character" in e.message and e.column == column


def test_99_nested_parentheses_are_a_clear_error_and_64_work(con):
    e = err(con, "fields " + "(" * 99 + "a" + ")" * 99)
    assert f"nested more than {MAX_NESTING_DEPTH} levels" in e.message
    ok = run_query(con, "fields " + "(" * MAX_NESTING_DEPTH + "a" + ")" * MAX_NESTING_DEPTH + " as v")
    assert sorted(r[0] for r in ok.rows) == [1, 2, 3]
    assert "nested" in err(con, "fields " + "abs(" * 99 + "a" + ")" * 99).message
    assert "nested" in err(con, "filter " + "not " * 99 + "a").message
    assert "nested" in err(con, "fields " + "-" * 99 + "a").message


@pytest.mark.slow
def test_flat_chains_of_500_terms_run(con):
    rows = run_query(con, "filter " + " or ".join(f"a = {i}" for i in range(500)) + " | fields a").rows
    assert sorted(r[0] for r in rows) == [1, 2, 3]
    rows = run_query(con, "filter " + " and ".join(f"a != {i}" for i in range(10, 510)) + " | fields a").rows
    assert len(rows) == 3
    rows = run_query(con, "filter a = 2 | fields " + " + ".join(["a"] * MAX_ARITHMETIC_CHAIN) + " as s").rows
    assert rows == [(2.0 * MAX_ARITHMETIC_CHAIN,)]
    e = err(con, "fields " + " + ".join(["a"] * 500) + " as s")
    assert f"more than {MAX_ARITHMETIC_CHAIN} terms" in e.message


def test_query_length_limit_is_the_start_query_maximum(con):
    e = err(con, "fields a" + " " * MAX_QUERY_LENGTH)
    assert "maximum is 10,000" in e.message
    assert run_query(con, "fields a" + " " * (MAX_QUERY_LENGTH - 8)).columns == ["a"]


def test_not_in_empty_list_and_in_empty_list(con):
    # x in [] matches nothing; x not in [] matches every event where x is present (like any list)
    assert run_query(con, "filter b in [] | fields b").rows == []
    assert sorted(r[0] for r in run_query(con, "filter b not in [] | fields b").rows) == ["x", "y"]
    assert sorted(r[0] for r in run_query(con, 'filter b not in ["zz"] | fields b').rows) == ["x", "y"]


def test_out_of_range_literals(con):
    e = err(con, "filter a < 1e999")
    assert "number 1e999 is out of range" in e.message and e.column == 12
    # integers beyond 64 bits become doubles (no overflow): 1e20 is above every a
    assert len(run_query(con, "filter a < 99999999999999999999 | fields a").rows) == 3
    assert run_query(con, "filter a = 1 | fields a + 9223372036854775807 as big").rows == [(2.0**63,)]
    assert "positive integer" in err(con, "limit 99999999999999999999").message


def test_unsupported_commands_name_themselves_not_the_users_syntax(con):
    for cmd in ("pattern @message", "diff", "anomaly @duration", "lookup t k", "addtotals"):
        e = err(con, f"fields a | {cmd}")
        assert e.message.startswith(f"unsupported command '{cmd.split()[0]}': ") and e.column == 12


# ----------------------------------------------------------------------------- fuzzing
_WORDS = ["fields", "filter", "stats", "sort", "by", "limit", "parse", "dedup", "display", "unnest", "into",
          "as", "and", "or", "not", "in", "like", "desc", "asc", "offset", "count(*)", "bin(5m)", "a", "b", "@message",
          "@timestamp", "jsonParse(@message)", "SOURCE", "logGroups(", "namePrefix:", "filterIndex", "unmask",
          "isIpv4InSubnet(", "strlen(", "pct(a,", "1e999", "²", "①", "99999999999999999999", "5m", "0", "-",
          "join", "type=left", "left=a", "right=b", "where", "a.k", "b.k", "in (", "'g'", "!", "x[0]",
          "bin(@timestamp, 1h)"]
_PUNCT = list("|,()[]=<>!+-*/%^~:\"'`#@.\n\\ ") + ["/x/", "/(?<g>\\w+)/", '"a*"', "[]", "=~", "(?<", "\\("]
_query = st.lists(st.sampled_from(_WORDS + _PUNCT), min_size=1, max_size=25).map(" ".join)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(_query, st.text(max_size=60)))
def test_fuzz_only_query_errors_escape(con, text):
    """parse, compile and run: a result, or a QueryError with a position - never another
    exception, never the compiler's internal-error net (which would mean a defect)."""
    try:
        run_query(con, text)
    except QueryError as exc:
        assert "internal error" not in exc.message, exc.message
        assert "\n" not in str(exc)
        assert exc.line is not None and exc.column is not None, str(exc)


# ----------------------------------------------------------------------------- DuckDB hardening
def test_hardening_setting_names_exist_in_the_installed_duckdb():
    import duckdb

    names = {r[0] for r in duckdb.connect().execute("SELECT name FROM duckdb_settings()").fetchall()}
    assert {n for n, _ in HARDENING_SETTINGS} <= names
    assert HARDENING_SETTINGS[-1] == ("lock_configuration", "true")


def test_a_query_connection_cannot_read_files_even_if_sql_slipped_through(tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text("k\nhunter2\n")
    con = events_connection(EVENTS)
    assert con.execute(f"SELECT * FROM read_csv('{secret}')").fetchall() == [("hunter2",)]  # before: readable
    run_query(con, "fields a")  # the engine's query path hardens the connection
    assert is_hardened(con)
    import duckdb

    for sql in (f"SELECT * FROM read_csv('{secret}')", f"SELECT * FROM read_text('{secret}')",
                f"COPY events TO '{tmp_path / 'out.csv'}'", f"ATTACH '{tmp_path / 'x.duckdb'}' AS x",
                "INSTALL httpfs", "LOAD httpfs", "SET enable_external_access = true", "SET lock_configuration = false"):
        with pytest.raises(duckdb.Error) as info:
            con.execute(sql).fetchall()
        assert any(w in str(info.value) for w in ("disabled by configuration", "locked", "Permission")), sql
    assert not (tmp_path / "out.csv").exists()
    assert harden_connection(con) is con  # idempotent
    assert run_query(con, "stats count(*) as n").rows == [(3,)]  # queries still run


@pytest.mark.parametrize("text", [
    "fields fromMillis(1e300) as x", "fields fromMillis(@timestamp * 1000000) as x", "fields substr(b, 1e300) as x",
    "fields substr(b, -1e300, 1e300) as x", "fields 10 ^ 400 as x", "fields dateceil(fromMillis(8e15), 1y) as x",
])
def test_out_of_range_values_at_run_time_are_null_not_errors(con, text):
    # DuckDB raises on an out-of-range cast; the engine maps such values to null (missing)
    rows = run_query(con, text).rows
    assert len(rows) == 3


@pytest.mark.parametrize("text,column", [("fields bin(1000000000000d)", 12),
                                         ("stats count(*) by bin(5m) offset 999999999y", 34)])
def test_periods_longer_than_10000_years_are_refused(con, text, column):
    e = err(con, text)
    assert "longer than 10,000 years" in e.message and e.column == column


@pytest.mark.parametrize("text,column", [("filter b =~ /(unclosed/", 13), ("parse @message /(?<a>x)[/", 16),
                                         ("fields a\n| filter b like /x{2,1}/", 17)])
def test_invalid_regexes_are_query_errors_at_the_regex(con, text, column):
    e = err(con, text)
    assert e.message.startswith("invalid regular expression") and e.column == column
