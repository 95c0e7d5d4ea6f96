"""dashboard.charts without Streamlit: rows, stacking and the alarm timeline, against hand-derived values."""

from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd

from dashboard import charts

T0 = datetime(2026, 1, 5, 10, 0)  # naive UTC
T0_MS = 1_767_607_200_000.0  # 2026-01-05T10:00:00Z in epoch ms (date -u -d @1767607200)
MIN = timedelta(minutes=1)


def test_epoch_ms_reads_naive_as_utc_and_converts_aware():
    assert charts.epoch_ms(T0) == T0_MS
    assert charts.epoch_ms(pd.Timestamp("2026-01-05T11:00:00+01:00")) == T0_MS
    s = pd.Series(pd.to_datetime(["2026-01-05T10:00:00Z", "2026-01-05T10:01:00Z"], utc=True))
    assert charts.epoch_ms(s).tolist() == [T0_MS, T0_MS + 60_000]


def test_stacked_rows_cover_their_bin_and_stack_in_name_order():
    df = pd.DataFrame({"time": [T0, T0, T0 + MIN], "operation": ["B", "A", "B"], "value": [3, 2, 7]})
    data = charts.series_rows(df, "operation", MIN)
    rows = data.set_index(["t", "series"])
    # bin 10:00: A [0, 2), B [2, 5); bin 10:01: B [0, 7)
    assert rows.loc[(T0_MS, "A"), ["y0", "y1"]].tolist() == [0, 2]
    assert rows.loc[(T0_MS, "B"), ["y0", "y1"]].tolist() == [2, 5]
    assert rows.loc[(T0_MS + 60_000, "B"), ["y0", "y1"]].tolist() == [0, 7]
    assert (data["t_end"] - data["t"]).eq(60_000).all()
    assert (data["t_mid"] - data["t"]).eq(30_000).all()
    assert data.loc[data["t"] == T0_MS, "when"].iloc[0] == "2026-01-05 10:00–10:01"
    assert "y0" not in charts.series_rows(df, "operation", MIN, stacked=False)


def test_a_day_bin_says_both_dates():
    df = pd.DataFrame({"time": [T0.replace(hour=0)], "library": ["Powertools"], "value": [4]})
    assert charts.series_rows(df, "library", timedelta(days=1))["when"].tolist() == ["2026-01-05 00:00–2026-01-06 00:00"]


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
    warn "Infinite extent" / "conflicting domain". Every quantitative y of the alarm timeline holds a domain covering
    the values drawn (a negative value and the threshold included), every x2 is temporal."""
    tl = pd.DataFrame({"period_start": [T0, T0 + MIN], "value": [-4.0, 2.0], "state": ["OK", "ALARM"]})
    alarm = charts.alarm_timeline(tl, MIN, threshold=6.0, unit="Count",
                                  state_colours={"ALARM": "#f00", "OK": "#0f0", "INSUFFICIENT_DATA": "#999"})
    checked = 0
    for view in vega.layers(alarm.spec):
        enc = view["encoding"]
        if "x2" in enc:
            assert enc["x2"]["type"] == "temporal", enc["x2"]
        y = enc.get("y", {})
        if y.get("type") == "quantitative" and "field" in y:
            assert y["scale"]["domain"] == [-4.0, 6.0], (view["mark"], y)
            checked += 1
    assert checked
