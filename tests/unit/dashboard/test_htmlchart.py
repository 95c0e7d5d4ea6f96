"""dashboard.htmlchart: axis ticks, marks in place, and untrusted series names as escaped text (read back with the
standard library's parser, tests/unit/dashboard/html_chart.py)."""

from __future__ import annotations

import importlib.util
import itertools
import math
import re
from datetime import datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard import htmlchart

_spec = importlib.util.spec_from_file_location("html_chart_reader", Path(__file__).with_name("html_chart.py"))
reader = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reader)  # type: ignore[union-attr]

W = (datetime(2026, 1, 5, 10, 25), datetime(2026, 1, 5, 10, 40))
MIN = timedelta(minutes=1)
T0 = datetime(2026, 1, 5, 10, 25).timestamp()  # naive: only differences of it are used


def _ms(t: datetime) -> float:
    return (t - datetime(1970, 1, 1)) / timedelta(milliseconds=1)


def frame(rows):
    return pd.DataFrame(rows, columns=["time", "operation", "value"])


@pytest.mark.parametrize("top,kind,want", [
    (5, "count", [0, 1, 2, 3, 4, 5]),
    (0.4, "count", [0, 1]),
    (0, "count", [0, 1]),
    (10, "count", list(range(11))),
    (11, "count", [0, 5, 10, 15]),
    (598, "count", [0, 200, 400, 600]),
    (0.25, "percent", [0, 0.05, 0.1, 0.15, 0.2, 0.25]),
    (1.0833, "number", [0, 0.5, 1.0, 1.5]),
])
def test_nice_ticks_by_hand(top, kind, want):
    assert htmlchart.nice_ticks(top, kind) == pytest.approx(want)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=0, max_value=1e12, allow_nan=False), st.sampled_from(["count", "percent", "number"]))
def test_nice_ticks_cover_the_top_from_zero_at_one_step(top, kind):
    ticks = htmlchart.nice_ticks(top, kind)
    assert ticks[0] == 0 and ticks[-1] >= top and 2 <= len(ticks) <= 12
    step = ticks[1] - ticks[0]
    assert step > 0 and all(math.isclose(b - a, step, rel_tol=1e-9) for a, b in itertools.pairwise(ticks))  # one step
    if kind == "count":
        assert all(float(t).is_integer() for t in ticks)  # never a fractional count tick


def test_nice_ticks_reject_a_non_finite_top():
    with pytest.raises(ValueError):
        htmlchart.nice_ticks(math.inf, "count")


@pytest.mark.parametrize("window,want", [
    (W, ["10:26", "10:28", "10:30", "10:32", "10:34", "10:36", "10:38", "10:40"]),
    ((datetime(2026, 1, 5, 12), datetime(2026, 1, 6)), ["12:00", "14:00", "16:00", "18:00", "20:00", "22:00",
                                                         "Jan 06"]),
    ((datetime(2026, 1, 1), datetime(2026, 1, 8)), ["Jan 01", "Jan 02", "Jan 03", "Jan 04", "Jan 05", "Jan 06",
                                                    "Jan 07", "Jan 08"]),
])
def test_time_ticks_by_hand(window, want):
    ticks = htmlchart.time_ticks(window)
    assert [label for _, label in ticks] == want
    assert all(_ms(window[0]) <= t <= _ms(window[1]) for t, _ in ticks)


def test_stacked_bars_span_their_bins_and_stack_in_name_order():
    df = frame([(datetime(2026, 1, 5, 10, 30), "B", 2), (datetime(2026, 1, 5, 10, 30), "A", 3),
                (datetime(2026, 1, 5, 10, 39), "A", 1)])
    c = reader.parse(htmlchart.time_series(df, "operation", W, MIN, colour={"A": "#111111", "B": "#222222"}))
    assert reader.series(c.rows) == {"A": [3, 1], "B": [2]}
    assert c.y_labels == ["0", "1", "2", "3", "4", "5"] and c.legend == {"A": "#111111", "B": "#222222"}
    at30 = c.rows[c.rows["t"] == _ms(datetime(2026, 1, 5, 10, 30))]
    # 10:30 is a third of the way into [10:25, 10:40), a fifteenth wide; the bar reaches 5 of 5 with A (first by
    # name) from 0 to 3/5 of it, B from 3/5 to the top
    assert at30["style"].iloc[0] == "left:33.333%;width:calc(6.667% - 1px)"
    assert at30["bar"].iloc[0] == ("height:100.000%;background:linear-gradient(to top, #111111 0.00% 60.00%, "
                                   "#222222 60.00% 100.00%)")
    assert at30["tip"].iloc[0] == "bin (UTC): 2026-01-05 10:30–10:31\nA: 3\nB: 2\ntotal: 5"
    at39 = c.rows[c.rows["t"] == _ms(datetime(2026, 1, 5, 10, 39))]
    assert at39["bar"].iloc[0].startswith("height:20.000%;")  # 1 of 5


def test_lines_break_at_a_missing_value_and_clip_to_the_window():
    df = frame([(datetime(2026, 1, 5, 10, 26), "A", 0.1), (datetime(2026, 1, 5, 10, 27), "A", float("nan")),
                (datetime(2026, 1, 5, 10, 28), "A", 0.2), (datetime(2026, 1, 5, 10, 29), "A", 0.3),
                (datetime(2026, 1, 5, 10, 50), "A", 9.0)])  # after the window: not drawn, not on the axis
    c = reader.parse(htmlchart.time_series(df, "operation", W, MIN, kind="percent", stacked=False))
    assert reader.series(c.rows) == {"A": pytest.approx([0.1, 0.2, 0.3])}
    assert c.y_labels[-1] == "30%" and len(c.lines) == 1
    import base64

    svg = base64.b64decode(c.lines[0].split(",", 1)[1]).decode()
    assert svg.count("<polyline") == 1  # the lone 10:26 point is not a line; 10:28-10:29 is
    assert svg.count("h0") == 3  # a dot per value


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30).filter(lambda s: "\r" not in s), min_size=1, max_size=4,
                unique=True), st.text(max_size=20))
def test_untrusted_names_are_escaped_text(names, colour):
    df = frame([(datetime(2026, 1, 5, 10, 30), n, i + 1) for i, n in enumerate(names)])
    markup = htmlchart.time_series(df, "operation", W, MIN, colour={n: colour for n in names})
    c = reader.parse(markup)
    assert sorted(set(c.rows["series"])) == sorted(names) and list(c.legend) == sorted(names)
    p = _Tags()
    p.feed(markup)
    # only the module's own elements: a name never makes a tag, an attribute or a colour
    assert set(p.tags) <= {"style", "div", "span", "b", "i"}
    assert all(v.startswith("#") and len(v) <= 9 for v in c.legend.values())


def _svgs(c) -> list[str]:
    import base64

    return [base64.b64decode(src.split(",", 1)[1]).decode() for src in c.lines]


def test_stat_series_one_line_per_statistic_and_series_in_its_style():
    t = [datetime(2026, 1, 5, 10, 26) + i * MIN for i in range(4)]
    df = pd.DataFrame({"time": t, "operation": ["A"] * 4, "p95": [100.0, float("nan"), 300.0, 400.0],
                       "mx": [1000.0, 2000.0, 3000.0, 4000.0]})
    c = reader.parse(htmlchart.stat_series(df, "operation", W, MIN, (("p95", "p95", "solid"), ("mx", "max", "dotted")),
                                           y_title="duration (s)", per=1000.0))
    assert reader.series(c.rows, statistic="p95") == {"A": pytest.approx([0.1, 0.3, 0.4])}  # the NaN bin: no value
    assert reader.series(c.rows, statistic="max") == {"A": pytest.approx([1.0, 2.0, 3.0, 4.0])}
    assert c.meta["stats"] == "p95 max" and c.y_labels[-1] == "4"
    solid, dotted = _svgs(c)
    # p95 breaks at the gap: the lone 10:26 point is a dot (no line shows it), 10:28-10:29 a line without dots
    assert solid.count("<polyline") == 1 and solid.count("h0") == 1 and "stroke-dasharray" not in solid
    assert dotted.count("<polyline") == 1 and 'stroke-dasharray="2 3"' in dotted and "h0" not in dotted
    tip = c.rows[(c.rows["t"] == _ms(t[0])) & (c.rows["statistic"] == "max")]["tip"].iloc[0]
    assert tip == "bin (UTC): 2026-01-05 10:26–10:27\nA p95: 0.1\nA max: 1"
    with pytest.raises(ValueError, match="unknown styles"):
        htmlchart.stat_series(df, "operation", W, MIN, (("p95", "p95", "wavy"),), y_title="x")


def test_points_column_marks_bins_above_zero_over_the_bars():
    df = pd.DataFrame({"time": [datetime(2026, 1, 5, 10, 30), datetime(2026, 1, 5, 10, 31)], "operation": ["A", "A"],
                       "value": [5, 4], "cold": [2, 0]})
    c = reader.parse(htmlchart.time_series(df, "operation", W, MIN, points="cold", points_title="cold starts"))
    assert reader.series(c.rows, "points") == {"A": [2.0, 0.0]}
    (svg,) = _svgs(c)
    assert svg.count("h0") == 2 and "<polyline" not in svg  # one dot (outline + fill), at 10:30 only
    assert "A cold starts: 2" in c.rows["tip"].iloc[0] and "cold starts" not in c.rows["tip"].iloc[1]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30).filter(lambda s: "\r" not in s), min_size=1, max_size=4,
                unique=True), st.text(max_size=20))
def test_untrusted_names_are_escaped_text_in_stat_and_points_charts(names, colour):
    rows = [(datetime(2026, 1, 5, 10, 30), n, i + 1.0, i + 2.0) for i, n in enumerate(names)]
    df = pd.DataFrame(rows, columns=["time", "operation", "a", "b"])
    for markup in (htmlchart.stat_series(df, "operation", W, MIN, (("a", "p95", "solid"), ("b", "max", "ring")),
                                         y_title="t", colour={n: colour for n in names}),
                   htmlchart.time_series(df.rename(columns={"a": "value"}), "operation", W, MIN, points="b",
                                         points_title="cold starts", colour={n: colour for n in names})):
        c = reader.parse(markup)
        assert sorted(set(c.rows["series"])) == sorted(names) and list(c.legend) == sorted(names)
        p = _Tags()
        p.feed(markup)
        assert set(p.tags) <= {"style", "div", "span", "b", "i", "img"}
        assert all(v.startswith("#") and len(v) <= 9 for v in c.legend.values())
        assert all(src.startswith("data:image/svg+xml;base64,") for src in c.lines)
        for svg in _svgs(c):  # the images hold the module's own shapes only (numbers and the checked colours)
            q = _Tags()
            q.feed(svg)
            assert set(q.tags) <= {"svg", "polyline", "path"}
            assert all(re.fullmatch(r"#[0-9A-Fa-f]{3,8}", v) for v in re.findall(r'stroke="([^"]*)"', svg))
