"""Property test: the engine against a small Python oracle of the documented semantics, on
random events whose fields are numbers in some events and strings (numeric or not) in others."""

from __future__ import annotations

import json
import math
from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from collector.insights import run_query
from tests.support.insights_events import events_connection

T0 = 1767607200000
values = st.one_of(st.integers(-50, 50), st.sampled_from(["7", "-3", "abc", "", "12x"]), st.none())
events = st.lists(st.tuples(st.sampled_from(["A", "B", "C"]), values, st.integers(0, 600_000)), max_size=40)


def _num(v):
    """Numeric value of a field (JSON number, or a string that is a number), else None."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        f = float(v)
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def _load(evs):
    docs = []
    for op, n, offset in evs:
        doc = {"op": op}
        if n is not None:
            doc["n"] = n
        docs.append({"timestamp": T0 + offset, "message": json.dumps(doc)})
    return events_connection(docs)


@settings(max_examples=25, deadline=None)
@given(events, st.integers(-20, 20))
def test_filter_numeric_then_stats_by_bin_and_field(evs, k):
    con = _load(evs)
    res = run_query(con, f"filter n > {k} | stats count(*) as c, sum(n) as s, max(n) as m by bin(1m) as t, op")
    expect: dict = defaultdict(lambda: [0, 0.0, -math.inf])
    for op, n, offset in evs:
        x = _num(n)
        if x is not None and x > k:
            minute = (T0 + offset) // 60_000 * 60_000
            e = expect[(minute, op)]
            e[0] += 1
            e[1] += x
            e[2] = max(e[2], x)
    got = {(int(r[0].timestamp() * 1000), r[1]): [r[2], r[3], r[4]] for r in res.rows}
    assert set(got) == set(expect)
    for key, (c, s, m) in expect.items():
        assert got[key][0] == c and math.isclose(got[key][1], s) and got[key][2] == m


@settings(max_examples=25, deadline=None)
@given(events)
def test_count_field_counts_presence_and_text_equality(evs):
    con = _load(evs)
    res = run_query(con, 'stats count(*) as all_, count(n) as with_n by op | sort op asc')
    exp = defaultdict(lambda: [0, 0])
    for op, n, _ in evs:
        exp[op][0] += 1
        exp[op][1] += n is not None
    assert [(r[0], r[1], r[2]) for r in res.rows] == [(op, *exp[op]) for op in sorted(exp)]
    eq = run_query(con, 'filter n = "7" | stats count(*) as c').rows[0][0]
    assert eq == sum(1 for _, n, _ in evs if n is not None and str(n) == "7")
