"""dashboard.charts without Streamlit: rows, stacking, axes and the alarm timeline, against hand-derived values."""

from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd
import pytest

from dashboard import charts

T0 = datetime(2026, 1, 5, 10, 0)  # naive UTC
T0_MS = 1_767_607_200_000.0  # 2026-01-05T10:00:00Z in epoch ms (date -u -d @1767607200)
MIN = timedelta(minutes=1)


def test_epoch_ms_reads_naive_as_utc_and_converts_aware():
    assert charts.epoch_ms(T0) == T0_MS
    assert charts.epoch_ms(pd.Timestamp("2026-01-05T11:00:00+01:00")) == T0_MS
    s = pd.Series(pd.to_datetime(["2026-01-05T10:00:00Z", "2026-01-05T10:01:00Z"], utc=True))
    assert charts.epoch_ms(s).tolist() == [T0_MS, T0_MS + 60_000]


def test_stacked_bars_cover_their_bin_and_stack_in_name_order():
    df = pd.DataFrame({"time": [T0, T0, T0 + MIN], "operation": ["B", "A", "B"], "value": [3, 2, 7]})
    c = charts.time_series(df, "operation", (T0, T0 + 5 * MIN), MIN, colour={"A": "#111111", "B": "#222222"})
    rows = c.data.set_index(["t", "series"])
    # bin 10:00: A [0, 2), B [2, 5); bin 10:01: B [0, 7)
    assert rows.loc[(T0_MS, "A"), ["y0", "y1"]].tolist() == [0, 2]
    assert rows.loc[(T0_MS, "B"), ["y0", "y1"]].tolist() == [2, 5]
    assert rows.loc[(T0_MS + 60_000, "B"), ["y0", "y1"]].tolist() == [0, 7]
    assert (c.data["t_end"] - c.data["t"]).eq(60_000).all()
    assert c.data.loc[c.data["t"] == T0_MS, "when"].iloc[0] == "2026-01-05 10:00–10:01"
    (bars,) = c.spec["layer"]
    enc = bars["encoding"]
    assert enc["x"]["scale"]["type"] == "utc"
    assert enc["x"]["scale"]["domain"] == [{"year": 2026, "month": 1, "date": 5, "hours": 10, "minutes": m,
                                            "seconds": 0, "milliseconds": 0, "utc": True} for m in (0, 5)]
    assert (enc["y"]["field"], enc["y2"]["field"], enc["x2"]["field"]) == ("y1", "y0", "t_end")
    # largest stacked total is 7: integer ticks 0..7
    assert enc["y"]["axis"]["values"] == list(range(8)) and enc["y"]["axis"]["format"] == ",d"
    assert enc["color"]["scale"] == {"domain": ["A", "B"], "range": ["#111111", "#222222"]}
    assert {t["title"] for t in enc["tooltip"]} == {"operation", "bin (UTC)", "events"}


@pytest.mark.parametrize("total,values", [(0, [0, 1]), (1, [0, 1]), (2.5, [0, 1, 2, 3]), (10, list(range(11)))])
def test_small_counts_tick_every_integer(total, values):
    axis, scale = charts.count_axis(total)
    assert axis["values"] == values and scale["domain"] == [0, values[-1]] and axis["tickMinStep"] == 1


def test_large_counts_get_integer_ticks_without_a_fixed_list():
    axis, scale = charts.count_axis(11)
    assert "values" not in axis and axis["tickMinStep"] == 1 and axis["format"] == ",d" and scale["zero"] is True


def test_a_day_bin_says_both_dates():
    df = pd.DataFrame({"time": [T0.replace(hour=0)], "library": ["Powertools"], "value": [4]})
    c = charts.time_series(df, "library", (T0.replace(hour=0), T0.replace(hour=0) + timedelta(days=2)),
                           timedelta(days=1))
    assert c.data["when"].tolist() == ["2026-01-05 00:00–2026-01-06 00:00"]
    assert "range" not in c.spec["layer"][0]["encoding"]["color"]["scale"]  # no colour map: the theme's palette


def test_untrusted_names_stay_data():
    evil = "<img src=x onerror=alert(1)>"
    df = pd.DataFrame({"time": [T0], "operation": [evil], "value": [0.25]})
    c = charts.time_series(df, "operation", (T0, T0 + MIN), MIN, kind="percent", stacked=False)
    assert c.data["series"].tolist() == [evil]
    line = c.spec["layer"][0]
    # only the colour domain (a literal list) holds it: no title, no expression
    assert line["encoding"]["color"]["scale"]["domain"] == [evil]
    assert evil not in str({k: v for k, v in line["encoding"].items() if k != "color"})
    assert line["encoding"]["y"]["axis"]["format"] == ".1~%"


def test_alarm_timeline_rows_and_views():
    tl = pd.DataFrame({"period_start": pd.to_datetime(["2026-01-05T10:00Z", "2026-01-05T10:05Z"], utc=True),
                       "value": [1.0, float("nan")], "state": ["ALARM", "INSUFFICIENT_DATA"]})
    c = charts.alarm_timeline(tl, timedelta(minutes=5), threshold=0.5, unit="Count",
                              state_colours={"ALARM": "#d62728", "OK": "#2ca02c", "INSUFFICIENT_DATA": "#9e9e9e"})
    assert c.data["t"].tolist() == [T0_MS, T0_MS + 300_000]
    assert c.data["t_end"].tolist() == [T0_MS + 300_000, T0_MS + 600_000]
    assert c.data["state_label"].tolist() == ["ALARM", "NO DATA"]
    top, band = c.spec["vconcat"]
    assert [d["minutes"] for d in band["encoding"]["x"]["scale"]["domain"]] == [0, 10]
    assert top["layer"][2]["encoding"]["color"]["datum"] == "threshold 0.5 Count"
    assert c.spec["resolve"]["scale"]["color"] == "independent"


def test_every_scale_domain_is_in_the_spec(vega):
    """Streamlit embeds a view before inserting its rows: a y domain taken from the data, or an untyped x2, made Vega
    warn "Infinite extent" / "conflicting domain" on every chart page. Every quantitative y holds a domain covering
    the values drawn (a negative alarm value and the threshold included), every x2 is temporal."""
    df = pd.DataFrame({"time": [T0, T0, T0 + MIN], "operation": ["B", "A", "B"], "value": [3, 20, 7]})
    stacked = charts.time_series(df, "operation", (T0, T0 + 5 * MIN), MIN)
    lines = charts.time_series(df.assign(value=[0.5, 0.25, 0.75]), "operation", (T0, T0 + 5 * MIN), MIN,
                               kind="percent", stacked=False)
    stats = charts.stat_series(df.rename(columns={"value": "mx"}).assign(p95=[1.0, 2.0, 9.0]), "operation",
                               (T0, T0 + 5 * MIN), MIN, (("mx", "max", "solid"), ("p95", "p95", "dotted")),
                               y_title="ms")
    tl = pd.DataFrame({"period_start": [T0, T0 + MIN], "value": [-4.0, 2.0], "state": ["OK", "ALARM"]})
    alarm = charts.alarm_timeline(tl, MIN, threshold=6.0, unit="Count",
                                  state_colours={"ALARM": "#f00", "OK": "#0f0", "INSUFFICIENT_DATA": "#999"})
    expected = {id(stacked): [0.0, 23.0], id(lines): [0.0, 0.75], id(stats): [0.0, 20.0], id(alarm): [-4.0, 6.0]}
    checked = set()
    for chart in (stacked, lines, stats, alarm):
        for view in vega.layers(chart.spec):
            enc = view["encoding"]
            if "x2" in enc:
                assert enc["x2"]["type"] == "temporal", enc["x2"]
            y = enc.get("y", {})
            if y.get("type") == "quantitative" and "field" in y:
                assert y["scale"]["domain"] == expected[id(chart)], (view["mark"], y)
                checked.add(id(chart))
    assert checked == set(expected)
