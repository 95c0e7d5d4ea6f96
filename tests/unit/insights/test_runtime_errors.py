"""A failure while DuckDB runs a compiled query points at the command that caused it, not at line 1, column 1.

The realistic case: ``run_query`` over a DuckDB connection whose ``events`` table was not built by the ingest, with
a ``@json`` column holding a malformed document; DuckDB's ``json_extract`` then fails at run time ("Malformed
JSON"), in the stage of the first command that reads a JSON field.
"""

from __future__ import annotations

import duckdb
import pytest

from collector.insights import QueryError, run_query
from collector.insights.compiler import CompiledQuery
from collector.insights.engine import _failing_command

T0 = 1767607200000


@pytest.fixture()
def con():
    c = duckdb.connect()
    c.execute(f"""CREATE TABLE events AS SELECT {T0} + i AS "@timestamp", 'm' || i AS "@message",
                  CASE WHEN i = 3 THEN '{{bad' ELSE '{{"a": 1, "b": 2}}' END AS "@json" FROM range(5) t(i)""")
    return c


@pytest.mark.parametrize(("query", "command", "line", "column"), [
    ("filter @timestamp > 0\n| fields a", "fields", 2, 3),
    ("fields @message\n| filter @timestamp > 0\n| stats count(*) as n by a", "stats", 3, 3),
    ("fields @timestamp\n  | filter @timestamp >= 0\n  | sort a desc", "sort", 3, 5),
    ("filter a = 1", "filter", 1, 1),
])
def test_runtime_failure_names_the_command_and_its_position(con, query, command, line, column):
    with pytest.raises(QueryError) as info:
        run_query(con, query)
    err = info.value
    assert (err.line, err.column) == (line, column)
    assert err.message.startswith(f"query failed in '{command}': ") and "Malformed JSON" in err.message
    assert str(err).endswith(f"(line {line}, column {column})")


def test_rows_before_the_bad_one_do_not_fail(con):
    """The locator only runs after a real failure: a query that never reads the bad document succeeds."""
    res = run_query(con, f"filter @timestamp <= {T0 + 2}\n| fields @message", start=None)
    assert sorted(r[0] for r in res.rows) == ["m0", "m1", "m2"]


def test_no_position_when_no_stage_fails_alone():
    """A failure outside every stage (here: the final projection) gets no position rather than a wrong one; so does
    one in the first stage (the events in the time range), which belongs to no command."""
    c = duckdb.connect()
    ok = CompiledQuery("WITH s0 AS (SELECT 1 AS x) SELECT error('boom') FROM s0", [], [],
                       stages=[("s0 AS (SELECT 1 AS x)", None)])
    assert _failing_command(c, ok) is None
    base = CompiledQuery("", [], [], stages=[("s0 AS (SELECT error('boom') AS x)", None),
                                             ("s1 AS (SELECT * FROM s0)", 7)])
    assert _failing_command(c, base) is None
    second = CompiledQuery("", [5], [], stages=[("s0 AS (SELECT 1 AS x)", None),
                                                ("s1 AS (SELECT x FROM s0 WHERE x < $1)", 3),
                                                ("s2 AS (SELECT error('boom') AS y FROM s1)", 9),
                                                ("s3 AS (SELECT * FROM s2)", 20)])
    assert _failing_command(c, second) == 9  # the first failing stage, though later ones fail too
