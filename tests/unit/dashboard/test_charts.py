"""dashboard.charts without Streamlit: the plotly figures as dicts, against hand-computed values."""

from __future__ import annotations

import html
import importlib.util
import json
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dashboard import charts

T0 = datetime(2026, 1, 5, 10, 0)  # naive UTC
MIN = timedelta(minutes=1)
W = (T0, T0 + 5 * MIN)


_spec = importlib.util.spec_from_file_location("app_read_charts", Path(__file__).with_name("app_read.py"))
_read = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_read)  # type: ignore[union-attr]


def fig_dict(fig) -> dict:
    """The figure as the browser gets it (its JSON), typed arrays decoded; times as ISO text."""
    return _read._arrays(json.loads(fig.to_json()))


def ts(values) -> list[pd.Timestamp]:
    """Times as the JSON writes them (ISO text, any precision) -> Timestamps (equal to the naive datetimes)."""
    return [pd.Timestamp(v) for v in values]


def by_name(fig) -> dict[str, dict]:
    return {html.unescape(t["name"]): t for t in fig_dict(fig)["data"]}


def test_stacked_counts_are_bars_over_their_bins_in_name_order():
    df = pd.DataFrame({"time": [T0, T0, T0 + MIN], "operation": ["B", "A", "B"], "value": [3, 2, 7]})
    fig = charts.series(df, "operation", W, MIN, colours={"A": "#111111", "B": "#222222"})
    d = fig_dict(fig)
    assert [t["name"] for t in d["data"]] == ["A", "B"]  # name order: the stack is the same in every bin
    a, b = d["data"]
    assert (a["type"], list(a["y"]), a["marker"]["color"]) == ("bar", [2], "#111111")
    assert list(b["y"]) == [3, 7] and ts(b["x"]) == [T0, T0 + MIN]
    assert a["width"] == 60_000 and a["offset"] == 0  # a bar spans [bin start, bin end) in ms
    assert list(b["customdata"]) == ["2026-01-05 10:00–10:01 UTC", "2026-01-05 10:01–10:02 UTC"]
    lay = d["layout"]
    assert lay["barmode"] == "stack" and ts(lay["xaxis"]["range"]) == [T0, T0 + 5 * MIN]
    assert lay["xaxis"]["title"]["text"] == "time (UTC)" and lay["yaxis"]["title"]["text"] == "events (count)"
    # the largest stacked bin is 7 (10:01): whole-number ticks 0..7
    assert (lay["yaxis"]["dtick"], lay["yaxis"]["tick0"], lay["yaxis"]["range"]) == (1, 0, [0, 7 * 1.05])
    assert (lay["dragmode"], lay["selectdirection"]) == ("select", "h")
    assert not {"paper_bgcolor", "plot_bgcolor", "font", "colorway"} & set(lay)  # Streamlit themes it (light or dark)


def test_a_large_count_axis_keeps_plotly_ticks_but_integer_labels():
    axis = charts.count_axis(1234.0)
    assert axis == {"rangemode": "tozero", "tickformat": ",d"}  # plotly's steps over 1,234 are whole numbers
    assert charts.count_axis(float("nan"))["dtick"] == 1


def test_rates_are_lines_with_a_percent_axis():
    df = pd.DataFrame({"time": [T0, T0 + MIN], "operation": ["A", "A"], "value": [0.25, None]})
    d = fig_dict(charts.series(df, "operation", W, MIN, kind="percent", stacked=False, y_title="poison rate (%)"))
    (tr,) = d["data"]
    assert tr["type"] == "scatter" and tr["mode"] == "lines+markers" and tr["connectgaps"] is False
    assert tr["y"][0] == 0.25 and pd.isna(tr["y"][1])  # a bin without received records is a gap, not 0
    assert "%{y:.2%}" in tr["hovertemplate"]
    assert d["layout"]["yaxis"]["tickformat"] == ".1~%" and "dtick" not in d["layout"]["yaxis"]


def test_trace_values_are_lists_not_typed_arrays():
    """plotly writes a numpy array as a base64 typed array (``bdata``), which plotly.js redraws on every update."""
    df = pd.DataFrame({"time": [T0, T0 + MIN], "log_group": ["/a", "/a"], "n": [3, 2], "cold": [1, 0],
                       "p95": [1.5, float("nan")]})
    figs = [charts.series(df, "log_group", W, MIN, value="n", points=("cold", "cold starts")),
            charts.series(df, "log_group", W, MIN, value="p95", kind="number", stacked=False),
            charts.stat_series(df, "log_group", W, MIN, (("p95", "p95", "solid"),), y_title="s")]
    for fig in figs:
        assert "bdata" not in fig.to_json()
    assert json.loads(figs[1].to_json())["data"][0]["y"] == [1.5, None]  # NaN: a gap


@pytest.mark.parametrize("y,mode", [
    ([1.0] * 19, "lines+markers"),  # a short line: every point marked (plotly's own default)
    ([1.0] * 20, "lines"),  # a dense line: its vertices and hover show the points
    ([1.0] * 10 + [float("nan")] * 10, "lines"),  # a gap after a run: nothing lost
    ([1.0] * 10 + [float("nan"), 2.0, float("nan")] + [1.0] * 10, "lines+markers"),  # 2.0 alone between gaps
    ([float("nan")] * 20 + [3.0], "lines+markers"),  # alone at the end
    ([float("nan")] * 30, "lines"),  # nothing to draw
])
def test_line_mode_marks_points_a_line_cannot_show(y, mode):
    assert charts.line_mode(y) == mode


def test_margins_leave_room_for_the_time_axis_and_the_legend_rows():
    assert charts.margin([]) == {"l": 90, "r": 10, "t": 10, "b": 80}  # no legend: nothing above the plot
    assert charts.margin(["max", "p95", "p50"])["t"] == 10 + 29  # 3 x 40 px + 9 characters x 6.5 px: one row
    names = [f"/aws/lambda/orders-consumer-{i}" for i in range(8)]  # 8 x (40 + 29 x 6.5) = 1828 px: three rows
    assert charts.margin(names)["t"] == 10 + 3 * 29
    assert charts.margin([charts.text("<&>")]) == charts.margin(["<&>"])  # entities count as the characters drawn
    df = pd.DataFrame({"time": [T0], "operation": ["A"], "value": [1]})
    assert fig_dict(charts.series(df, "operation", W, MIN))["layout"]["margin"] == charts.margin(["A"])


def test_a_day_bin_says_both_dates():
    assert charts.bin_labels(pd.Series([T0.replace(hour=0)]), timedelta(days=1)) == [
        "2026-01-05 00:00–2026-01-06 00:00 UTC"]


HOSTILE = ["<img src=x onerror=alert(1)>", "**bold** $x$ :red[y]", "<b>x</b> &amp; <a href='javascript:1'>y</a>"]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_series_names_are_escaped_text(name):
    df = pd.DataFrame({"time": [T0], "operation": [name], "value": [1]})
    (tr,) = fig_dict(charts.series(df, "operation", W, MIN))["data"]
    assert "<" not in tr["name"] and ">" not in tr["name"]  # plotly reads no tag of it
    assert html.unescape(tr["name"]) == name  # the entities draw exactly the name


@given(st.text(max_size=40))
def test_text_round_trips_every_string(name):
    escaped = charts.text(name)
    assert "<" not in escaped and ">" not in escaped and html.unescape(escaped) == name


def test_stat_series_one_trace_per_group_and_statistic():
    df = pd.DataFrame({"time": [T0, T0 + MIN], "log_group": ["/a", "/a"], "p95": [100.0, 200.0],
                       "mx": [1000.0, 3000.0]})
    fig = charts.stat_series(df, "log_group", W, MIN, (("p95", "p95", "solid"), ("mx", "max", "dotted")),
                             y_title="duration (s)", per=1000.0, colours={"/a": "#123456"})
    p95, mx = fig_dict(fig)["data"]
    assert (p95["name"], p95["meta"], mx["name"], mx["meta"]) == ("/a", ["p95"], "/a", ["max"])
    assert list(p95["y"]) == [0.1, 0.2] and list(mx["y"]) == [1.0, 3.0]  # ms -> s
    assert (p95["line"]["dash"], mx["line"]["dash"]) == ("solid", "dot")
    assert p95["legendgroup"] == mx["legendgroup"] == "/a"  # one click hides both
    assert p95["showlegend"] is True and mx["showlegend"] is False  # one legend entry per log group
    assert mx["line"]["color"] == "#123456" and "%{meta[0]}" in mx["hovertemplate"]


def test_points_mark_only_bins_above_zero():
    df = pd.DataFrame({"time": [T0, T0 + MIN], "log_group": ["/a", "/a"], "invocations": [3, 2], "cold": [1, 0]})
    bar, dots = fig_dict(charts.series(df, "log_group", W, MIN, value="invocations", points=("cold", "cold starts")))[
        "data"]
    assert ts(dots["x"]) == [T0] and list(dots["y"]) == [1] and dots["meta"] == ["cold starts"]
    assert dots["marker"]["symbol"] == "circle-open" and dots["legendgroup"] == bar["legendgroup"] == "/a"
    assert dots["showlegend"] is False


def test_sparkline_fills_counts_and_keeps_a_negative_value_visible():
    d = fig_dict(charts.sparkline([T0, T0 + MIN], [0.0, 4.0], kind="count", colour="#636EFA", window=W))
    (tr,) = d["data"]
    assert tr["fill"] == "tozeroy" and d["layout"]["yaxis"]["range"] == [0.0, 4.2]  # 5 % headroom
    assert ts(d["layout"]["xaxis"]["range"]) == [T0, T0 + 5 * MIN] and d["layout"]["showlegend"] is False
    d = fig_dict(charts.sparkline([T0], [-2.0], kind="number", colour="#636EFA", window=W))
    assert "fill" not in d["data"][0] and d["layout"]["yaxis"]["range"] == [-2.1, 0.1]


def test_alarm_timeline_rows_shading_and_threshold():
    tl = pd.DataFrame({"period_start": pd.to_datetime(["2026-01-05T10:00Z", "2026-01-05T10:05Z",
                                                       "2026-01-05T10:10Z"], utc=True),
                       "value": [1.0, float("nan"), 0.0], "state": ["ALARM", "ALARM", "OK"]})
    colours = {"ALARM": "#d62728", "OK": "#2ca02c", "INSUFFICIENT_DATA": "#9e9e9e"}
    d = fig_dict(charts.alarm_timeline(tl, timedelta(minutes=5), threshold=0.5, unit="Count", state_colours=colours))
    t = {tr["name"]: tr for tr in d["data"]}
    assert list(t["value"]["y"])[0] == 1.0 and ts(t["value"]["x"])[0] == T0  # aware UTC -> naive UTC
    assert list(t["threshold 0.5 Count"]["y"]) == [0.5, 0.5]
    assert t["threshold 0.5 Count"]["line"]["dash"] == "dash"
    # the state band: one bar per run of periods in one state (10:00 and 10:05 ALARM: one bar of 10 minutes)
    assert ts(t["ALARM"]["base"]) == [T0] and list(t["ALARM"]["x"]) == [600_000]
    assert t["ALARM"]["orientation"] == "h" and t["ALARM"]["marker"]["color"] == "#d62728"
    assert list(t["ALARM"]["customdata"]) == ["2026-01-05 10:00–10:10 UTC · 2 periods"]
    assert list(t["OK"]["customdata"]) == ["2026-01-05 10:10–10:15 UTC · 1 period"]
    # the two consecutive ALARM periods are one shaded interval [10:00, 10:10)
    assert [tuple(ts((s["x0"], s["x1"]))) for s in d["layout"]["shapes"]] == [(T0, T0 + 10 * MIN)]
    assert d["layout"]["yaxis"]["tickformat"] == ",d"  # a Count metric: integer ticks
    assert d["layout"]["yaxis2"]["categoryarray"] == ["NO DATA", "OK", "ALARM"]  # ALARM on top


@pytest.mark.parametrize("box,expected", [
    ([{"x": ["2026-01-05 10:01:20.5", "2026-01-05 10:03:10"]}], (T0 + MIN, T0 + 4 * MIN)),  # widened to minutes
    ([{"x": ["2026-01-05 10:03", "2026-01-05 10:01"]}], (T0 + MIN, T0 + 3 * MIN)),  # dragged right to left
    ([{"x": ["2026-01-05 09:00", "2026-01-05 10:02"]}], (T0, T0 + 2 * MIN)),  # clipped to the data
    ([{"x": ["2026-01-05 11:00", "2026-01-05 11:30"]}], None),  # outside the data
    ([], None),  # a click, or a cleared selection
    ([{"x": ["not a time", "2026-01-05 10:02"]}], None),
])
def test_selected_window(box, expected):
    assert charts.selected_window({"box": box, "points": []}, (T0, T0 + 10 * MIN)) == expected
