"""Engine semantics on a hand-made events table (values computed by hand)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from collector.insights import QueryError, run_query
from tests.support.insights_events import events_connection

T0 = 1767607200000  # 2026-01-05T10:00:00.000Z


def ev(offset_ms, doc=None, message=None, **system):
    msg = message if message is not None else json.dumps(doc)
    e = {"timestamp": T0 + offset_ms, "message": msg}
    e.update(system)
    return e


EVENTS = [
    ev(0, {"op": "A", "n": 5, "s": "x", "key": "k1", "st": "IN_PROGRESS"}),
    ev(1_000, {"op": "B", "n": "7", "s": "y", "key": "k1", "st": "COMPLETED"}),
    ev(2_500, {"op": "A", "n": 2.5, "s": "10", "key": "k2", "st": "IN_PROGRESS", "nested": {"a": {"b": 3}}}),
    ev(61_000, {"op": "B", "n": "abc", "key": "k3", "arr": [10, 20], "empty": "", "blank": "  \t"}),
    ev(125_000, message="START RequestId: r1 Version: $LATEST", **{"@type": "START", "@requestId": "r1"}),
    ev(125_100, message="REPORT RequestId: r1\tDuration: 12.50 ms", **{"@type": "REPORT", "@duration": 12.5}),
]


@pytest.fixture(params=[(), ("op", "n", "key")], ids=["json-only", "hot-columns"])
def con(request):
    """Same events with and without materialised hot-field columns: same answers either way."""
    return events_connection(EVENTS, hot=request.param)


def q(con, text, **kw):
    return run_query(con, text, **kw)


def test_default_columns_and_default_sort_is_timestamp_desc(con):
    res = q(con, "filter ispresent(@type)")
    assert res.columns == ["@timestamp", "@message"]
    assert [r[1][:5] for r in res.rows] == ["REPOR", "START"]
    assert res.rows[0][0] == datetime(2026, 1, 5, 10, 2, 5, 100000, tzinfo=UTC)


def test_numeric_comparison_converts_numeric_strings_only(con):
    res = q(con, "filter n > 3 | fields key | sort @timestamp asc")
    assert [r[0] for r in res.rows] == ["k1", "k1"]  # 5 and "7"; 2.5 no; "abc" is not a number
    res = q(con, "filter n = 7 | fields op")
    assert res.rows == [("B",)]


def test_string_comparison_uses_text_of_numbers(con):
    assert q(con, 'filter n = "5" | fields key').rows == [("k1",)]
    # sort: non-number values first, then numbers (documented natural sort)
    assert q(con, 'filter s < "y" | fields s | sort s asc').rows == [("x",), ("10",)]


def test_field_versus_field_is_numeric_when_both_are_numbers(con):
    # 5 vs "x": text "5" < "x"; "7" vs "y": text; 2.5 vs "10": numeric 2.5 < 10 (text: "2.5" > "10")
    res = q(con, "filter n < s | fields key | sort @timestamp asc")
    assert [r[0] for r in res.rows] == ["k1", "k1", "k2"]
    assert q(con, "filter n > s | fields key").rows == []


def test_sort_strings_before_numbers_missing_last(con):
    res = q(con, "filter ispresent(key) | fields n | sort n asc")
    assert [r[0] for r in res.rows] == ["abc", 2.5, 5, "7"]  # "7" is a number value: numbers numerically last
    res = q(con, "fields n | sort n desc")
    assert [r[0] for r in res.rows] == ["7", 5, 2.5, "abc", None, None]


def test_sort_follows_the_documented_natural_order():
    # the ascending example of https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_QuerySyntax-Sort.html
    documented = ["!:", "#", "*%04", "0#", "5A", "111A", "2345_", "@", "@_", "A", "A9876fghj", "a12345hfh",
                  "0", "01", "1", "2", "3"]
    shuffled = documented[7:] + documented[:7][::-1]
    con = events_connection([ev(i, {"v": v}) for i, v in enumerate(shuffled)])
    assert [r[0] for r in q(con, "fields v | sort v asc").rows] == documented
    assert [r[0] for r in q(con, "fields v | sort v desc").rows] == documented[::-1]
    rec = q(con, "stats sortsFirst(v) as first, sortsLast(v) as last").rows
    assert rec == [("!:", "3")]


def test_arithmetic_and_division_by_zero(con):
    res = q(con, "filter key = 'k1' | fields n * 2 as d, n % 2 as m, n / 0 as z, 2 ^ 3 as p, -n as neg "
                 "| sort @timestamp asc")
    assert res.rows == [(10, 1, None, 8, -5), (14, 1, None, 8, -7)]


def test_nested_array_and_dotted_fields(con):
    assert q(con, "filter ispresent(nested.a.b) | fields nested.a.b").rows == [(3,)]
    assert q(con, "filter ispresent(arr.1) | fields arr.0, arr.1").rows == [(10, 20)]


def test_string_functions(con):
    res = q(con, 'filter key = "k3" | fields isempty(empty) as e1, isempty(s) as e2, isblank(blank) as b1, '
                 'isblank(op) as b2, strlen(op) as l, concat(op, "-", key) as c, toupper(key) as u, '
                 'substr("xyZfooxyZ", 3, 3) as sub, replace("a-b-c", "-", "+") as r, trim("  p ") as t, '
                 'ltrim("  p ") as lt, rtrim("  p ") as rt, strcontains(key, "3") as sc, coalesce(s, op) as co')
    assert res.to_records()[0] == {"e1": 1, "e2": 1, "b1": 1, "b2": 0, "l": 1, "c": "B-k3", "u": "K3",
                                   "sub": "foo", "r": "a+b+c", "t": "p", "lt": "p ", "rt": "  p", "sc": 1,
                                   "co": "B"}


def test_numeric_and_datetime_functions(con):
    res = q(con, "filter key = 'k2' | fields abs(-n) as a, ceil(n) as c, floor(n) as f, greatest(n, 4) as g, "
                 "toMillis(@timestamp) as ms, fromMillis(0) as epoch, datefloor(@timestamp, 1m) as fl, "
                 "dateceil(@timestamp, 1m) as ce, dateceil(fromMillis(60000), 1m) as on_boundary, "
                 "datefloor(@timestamp, 1mo) as month, datefloor(@timestamp, 1w) as week")
    r = res.to_records_json()[0]
    assert r == {"a": 2.5, "c": 3, "f": 2, "g": 4, "ms": T0 + 2500, "epoch": "1970-01-01 00:00:00.000",
                 "fl": "2026-01-05 10:00:00.000", "ce": "2026-01-05 10:01:00.000",
                 "on_boundary": "1970-01-01 00:01:00.000", "month": "2026-01-01 00:00:00.000",
                 "week": "2026-01-05 00:00:00.000"}  # 2026-01-05 is a Monday


def test_like_regex_and_in(con):
    assert q(con, 'filter s like "1" | fields key').rows == [("k2",)]
    assert q(con, "filter key like /^k[23]$/ | fields key | sort key asc").rows == [("k2",), ("k3",)]
    assert q(con, "filter key =~ /K1/ | fields key").rows == []  # case-sensitive
    assert q(con, "filter key =~ /(?i)K3/ | fields key").rows == [("k3",)]
    assert q(con, 'filter op in ["A"] and key not in ["k2"] | fields key').rows == [("k1",)]
    assert q(con, "filter n in [5, 7] | fields key | sort @timestamp asc").rows == [("k1",), ("k1",)]


def test_stats_functions_and_names(con):
    res = q(con, "filter ispresent(key) | stats count(*), count(s), count_distinct(key), sum(n), avg(n), "
                 "min(n), max(n), pct(n, 50), stddev(n), earliest(st), latest(st), sortsFirst(s), sortsLast(s), "
                 "min(@timestamp) as first")
    rec = res.to_records()[0]
    assert res.columns[:3] == ["count(*)", "count(s)", "count_distinct(key)"]
    assert rec["count(*)"] == 4 and rec["count(s)"] == 3 and rec["count_distinct(key)"] == 3
    assert rec["sum(n)"] == pytest.approx(14.5) and rec["avg(n)"] == pytest.approx(14.5 / 3)
    assert (rec["min(n)"], rec["max(n)"], rec["pct(n, 50)"]) == (2.5, 7, 5)
    mean = 14.5 / 3
    sample_sd = (sum((x - mean) ** 2 for x in (5, 7, 2.5)) / 2) ** 0.5
    assert rec["stddev(n)"] == pytest.approx(sample_sd)
    assert (rec["earliest(st)"], rec["latest(st)"]) == ("IN_PROGRESS", "IN_PROGRESS")
    assert (rec["sortsFirst(s)"], rec["sortsLast(s)"]) == ("x", "10")  # numbers sort after other values
    assert rec["first"] == datetime(2026, 1, 5, 10, 0, tzinfo=UTC)


def test_stats_by_bin_with_alias_default_group_order_and_arithmetic_on_aggregates(con):
    res = q(con, "stats count(*) as events, sum(n) / count(*) as ratio by bin(1m) as minute, op")
    assert res.columns == ["minute", "op", "events", "ratio"]
    recs = res.to_records_json()
    assert recs == [
        {"minute": "2026-01-05 10:00:00.000", "op": "A", "events": 2, "ratio": 3.75},
        {"minute": "2026-01-05 10:00:00.000", "op": "B", "events": 1, "ratio": 7},
        {"minute": "2026-01-05 10:01:00.000", "op": "B", "events": 1, "ratio": None},
        {"minute": "2026-01-05 10:02:00.000", "op": None, "events": 2, "ratio": None},
    ]


def test_two_stats_commands_and_filter_on_aggregate(con):
    res = q(con, "filter ispresent(key) | stats count(*) as c by key | filter c > 1 | stats sum(c) as total")
    assert res.rows == [(2,)]


def test_latest_per_key(con):
    res = q(con, 'stats latest(st) as last by key | filter last = "IN_PROGRESS"')
    assert res.rows == [("k2", "IN_PROGRESS")]


def test_dedup_keeps_first_in_sort_order_and_null_keys(con):
    res = q(con, "fields key, st | dedup key")
    # default order @timestamp desc: k1 keeps its later (COMPLETED) record; missing keys are kept
    assert [(r[0], r[1]) for r in res.rows] == [(None, None), (None, None), ("k3", None), ("k2", "IN_PROGRESS"),
                                                ("k1", "COMPLETED")]
    res = q(con, "fields key, st | sort @timestamp asc | dedup key | limit 2")
    assert res.rows == [("k1", "IN_PROGRESS"), ("k2", "IN_PROGRESS")]


def test_parse_glob_regex_and_display(con):
    res = q(con, 'filter @type = "REPORT" | parse @message "Duration: * ms" as d | display @requestId, d')
    assert res.rows == [(None, "12.50")]
    res = q(con, r"parse @message /RequestId: (?<rid>\w+)/ | filter ispresent(rid) | display rid, @type "
                 r"| sort @timestamp asc")
    assert res.rows == [("r1", "START"), ("r1", "REPORT")]


def test_time_range_inclusive_both_ends(con):
    res = q(con, "fields key | sort @timestamp asc", start=(T0 + 1_000) / 1000, end=(T0 + 61_000) / 1000)
    assert [r[0] for r in res.rows] == ["k1", "k2", "k3"]


def test_limit_and_cap(con):
    assert len(q(con, "fields key | limit 2").rows) == 2
    assert len(run_query(con, "fields key", limit_cap=3).rows) == 3
    assert len(run_query(con, "fields key", limit_cap=None).rows) == 6


def test_records_json_formats():
    con = events_connection([ev(0, {"v": 1.0, "i": 3, "o": {"a": 1}, "b": True, "z": None})])
    res = run_query(con, "fields @timestamp, v, i, o, b, z, missing, bin(1h)")
    assert res.to_records_json() == [{"@timestamp": "2026-01-05 10:00:00.000", "v": 1, "i": 3, "o": '{"a":1}',
                                      "b": 1, "z": None, "missing": None, "bin(1h)": "2026-01-05 10:00:00.000"}]
    table = res.to_arrow()
    assert str(table.schema.field("@timestamp").type) == "timestamp[ms, tz=UTC]"
    assert table.column("i").to_pylist() == [3]


def test_invalid_regex_is_a_query_error_at_its_position(con):
    with pytest.raises(QueryError, match="invalid regular expression") as info:
        q(con, "fields key\n| filter key =~ /(unclosed/")
    assert (info.value.line, info.value.column) == (2, 17)
