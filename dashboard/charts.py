"""The dashboard's one Vega-Lite chart (the alarm timeline: a spec, a plain dict, drawn by ``st.vega_lite_chart``)
and the binned rows every chart is drawn from (:func:`series_rows`). The signal pages' and Lambda health's time
series are drawn on the server as HTML (``dashboard.htmlchart``, from those rows), which spares those pages Vega's
chunk, compile and scene.

Vega, not Plotly: Streamlit's Plotly chunk is 4.7 MB, and a stacked bar chart draws in fewer DOM nodes.

A chart is a :class:`Chart`: the spec without data, and one DataFrame of rows (sent to the browser as Arrow;
layers pick their rows with filter transforms). Time columns are epoch **milliseconds** (UTC), so nothing depends
on how the browser parses dates; the x axis is a UTC scale fixed to the selected window; every row also carries
``when``, its bin as UTC text, for the tooltip.

Safety: series names, log groups and alarm states come from logs (untrusted). They travel only as data values (the
rows, and the colour scale's domain: a literal list): Vega draws them as SVG/canvas text (never markup), and Streamlit's tooltip handler (vega-tooltip) HTML-escapes
every key and value before it sets the tooltip's HTML. No data value goes into a title, a label expression or any
other expression Vega evaluates; tooltip titles are fixed words of ours (never ``image`` or ``title``, the two keys
vega-tooltip turns into an ``<img>`` / a heading). See https://github.com/vega/vega-tooltip (``sanitize``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

import pandas as pd

__all__ = ["TIME_LABELS", "Chart", "alarm_timeline", "datetime_utc", "epoch_ms", "series_rows", "show"]

Window = tuple[datetime, datetime]
"""[start, end) of the selected window, naive UTC datetimes (the dashboard's time convention)."""
Kind = Literal["count", "percent", "number"]
"""What the y values are: ``count`` (integer ticks), ``percent`` (fractions, shown as %), ``number`` (unit in the
title)."""

LEGEND_LABEL_LIMIT = 300
"""Pixels a legend label may take before Vega truncates it (Vega's default, 160, cuts long operation names)."""
_Y_EXTENT = 56
"""Minimum pixels of every y axis (ticks, labels, title): charts stacked on a page and the two rows of the alarm
timeline start their plots at the same x."""
_TIME_FMT = "%Y-%m-%d %H:%M"
TIME_LABELS = {"year": "%Y", "quarter": "%b", "month": "%b", "week": "%b %d", "date": "%b %d", "hours": "%H:%M",
               "minutes": "%H:%M", "seconds": "%H:%M:%S", "milliseconds": "%H:%M:%S.%L"}
"""Time axis labels (a Vega multi-format: each tick in the format of its boundary): 24-hour clock, a date at
midnight (Vega's default says "10 PM")."""


@dataclass(frozen=True)
class Chart:
    """A Vega-Lite chart: ``spec`` (a dict without data) and ``data`` (its rows; one row per datum)."""

    spec: dict[str, Any]
    data: pd.DataFrame


def show(chart: Chart, key: str) -> None:
    """Draw ``chart`` across the container, themed like the app (light or dark), keyed ``key`` (container class
    ``st-key-<key>``)."""
    import streamlit as st

    with st.container(key=key):
        st.vega_lite_chart(chart.data, chart.spec, width="stretch", theme="streamlit")


# ----------------------------------------------------------------------------- rows
def epoch_ms(values: pd.Series | datetime | pd.Timestamp) -> Any:
    """Naive-UTC or tz-aware datetimes -> epoch milliseconds (float; a Series for a Series)."""
    if isinstance(values, pd.Series):
        s = pd.to_datetime(values)
        if s.dt.tz is not None:
            s = s.dt.tz_convert("UTC").dt.tz_localize(None)
        return ((s - pd.Timestamp(0)) / pd.Timedelta(milliseconds=1)).astype("float64")
    t = pd.Timestamp(values)
    if t.tzinfo is not None:
        t = t.tz_convert("UTC").tz_localize(None)
    return float((t - pd.Timestamp(0)) / pd.Timedelta(milliseconds=1))


def _rows(df: pd.DataFrame, time_col: str, width: timedelta) -> pd.DataFrame:
    """``df`` plus ``t``, ``t_end``, ``t_mid`` (epoch ms of the bin start, end, middle) and ``when`` (UTC text)."""
    start = pd.to_datetime(df[time_col])
    if start.dt.tz is not None:
        start = start.dt.tz_convert("UTC").dt.tz_localize(None)
    end = start + width
    t = epoch_ms(start)
    w_ms = width / timedelta(milliseconds=1)
    end_fmt = "%H:%M" if width < timedelta(days=1) else _TIME_FMT
    when = start.dt.strftime(_TIME_FMT) + "–" + end.dt.strftime(end_fmt)
    return df.drop(columns=[time_col]).assign(t=t, t_end=t + w_ms, t_mid=t + w_ms / 2, when=when.astype(str))


def datetime_utc(t: datetime | pd.Timestamp) -> dict[str, Any]:
    """A Vega-Lite DateTime object of a naive-UTC (or tz-aware) instant, marked UTC (a bare epoch-ms number as a
    temporal scale's domain is not read as a date by Vega-Lite 6: the axis lost its ticks)."""
    ts = pd.Timestamp(t)
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC").tz_localize(None)
    return {"year": ts.year, "month": ts.month, "date": ts.day, "hours": ts.hour, "minutes": ts.minute,
            "seconds": ts.second, "milliseconds": ts.microsecond // 1000, "utc": True}


def _x(window: Window, title: str = "time (UTC)") -> dict[str, Any]:
    return {"field": "t", "type": "temporal", "title": title,
            "scale": {"type": "utc", "domain": [datetime_utc(window[0]), datetime_utc(window[1])]},
            "axis": {"labelOverlap": True, "title": title, "format": TIME_LABELS}}  # own title: not merged with x2's


def _extent(values: pd.Series | Sequence[float]) -> tuple[float, float]:
    """(min(0, smallest), largest) of the finite values ((0.0, 0.0) for none): a y domain given in the spec that
    still holds a negative value (an alarm's metric may go below zero)."""
    v = pd.to_numeric(pd.Series(list(values), dtype="float64"), errors="coerce")
    v = v[v.map(math.isfinite)]
    return (min(0.0, float(v.min())), float(v.max())) if len(v) else (0.0, 0.0)


def _domain(extent: tuple[float, float]) -> list[float]:
    """y domain of ``extent`` (Vega still rounds the ends out to nice values); [0, 1] when nothing is above 0.

    Why given at all: Streamlit embeds a chart's view before it inserts the rows, and a scale whose domain comes
    from the (still empty) data logs Vega's "Infinite extent for field ..." warning on every chart page."""
    lo, hi = extent
    return [lo, hi] if hi > lo else [lo, lo + 1.0]


def _x2(field: str = "t_end", title: str | None = None) -> dict[str, Any]:
    """The end of an interval on the x (time) scale. Typed ``temporal``: an untyped x2 beside an x with an explicit
    domain made Vega-Lite 6 warn of "conflicting" domains (the same window, parsed and not) and compute a data
    extent from the still-empty rows ("Infinite extent for field data")."""
    enc: dict[str, Any] = {"field": field, "type": "temporal"}
    if title is not None:
        enc["title"] = title
    return enc


def _is(field: str, value: str) -> dict[str, str]:
    """A filter transform keeping rows whose ``field`` equals ``value`` (our own constant, JSON-quoted)."""
    return {"filter": f"datum[{json.dumps(field)}] === {json.dumps(value)}"}


# ----------------------------------------------------------------------------- charts
def series_rows(df: pd.DataFrame, by: str, bin_width: timedelta, *, value: str = "value", time_col: str = "time",
                stacked: bool = True, keep: Sequence[str] = ()) -> pd.DataFrame:
    """The rows of a time-series chart (drawn by ``dashboard.htmlchart``): ``series`` (the
    ``by`` value as text), ``value``, ``t`` / ``t_end`` / ``t_mid`` (epoch ms of the bin), ``when`` (UTC text) and
    ``keep``, ordered by bin then series; ``stacked`` adds ``y0`` / ``y1``, each bar's [base, top) with the series
    stacked in name order within a bin (done here: Vega-Lite does not stack bars given as x/x2 intervals)."""
    rows = _rows(df[[time_col, by, value, *keep]].rename(columns={by: "series", value: "value"}), time_col,
                 bin_width)
    rows["series"] = rows["series"].astype(str)
    rows = rows.sort_values(["t", "series"], ignore_index=True)
    if stacked:
        rows["y1"] = rows.groupby("t")["value"].cumsum()
        rows["y0"] = rows["y1"] - rows["value"]
    return rows


STATE_LABELS = {"ALARM": "ALARM", "INSUFFICIENT_DATA": "NO DATA", "OK": "OK"}
"""CloudWatch alarm state -> its row on the timeline's state band (top to bottom)."""


def alarm_timeline(timeline: pd.DataFrame, period: timedelta, *, threshold: float | None, unit: str,
                   state_colours: Mapping[str, str], value_height: int = 250, band_height: int = 84) -> Chart:
    """An alarm backtest over time: the value per period (line and points), the threshold (dashed rule) and the
    periods in ALARM shaded; below it, on its own row with the same x scale, the state band (one cell per period
    on the row of its state). Two stacked views: value and state never overlap, and each axis keeps its room.

    ``timeline``: columns ``period_start`` (datetime, UTC), ``value`` (float, NaN = no datapoint), ``state``
    (``ALARM`` / ``OK`` / ``INSUFFICIENT_DATA``). ``period``: the alarm's period. ``state_colours``: state ->
    colour. ``unit``: the metric's unit (CloudWatch's name, e.g. ``Count``), in the axis title.
    """
    rows = _rows(timeline[["period_start", "value", "state"]], "period_start", period)
    rows["state"] = rows["state"].astype(str)
    rows["state_label"] = rows["state"].map(STATE_LABELS).fillna(rows["state"])
    window = (pd.Timestamp(rows["t"].min(), unit="ms").to_pydatetime(),
              pd.Timestamp(rows["t_end"].max(), unit="ms").to_pydatetime())
    x = _x(window, "period start (UTC)")
    # the band below says what x is; one scale (shared), its window given once (in the band)
    x_top = {"field": "t", "type": "temporal", "title": None, "scale": {"type": "utc"},
             "axis": {"labelOverlap": True, "title": None, "format": TIME_LABELS}}
    value_title = unit or "value"
    threshold_label = None if threshold is None else f"threshold {threshold:g} {unit}".rstrip()
    legend = ["value", *([threshold_label] if threshold_label else [])]
    line_colour = {"scale": {"domain": legend, "range": ["#4c78a8", state_colours["ALARM"]][:len(legend)]},
                   "legend": {"orient": "top", "title": None, "labelLimit": LEGEND_LABEL_LIMIT}}
    # a Count metric (CloudWatch's unit name) ticks integers only
    value_axis = {"format": ",d", "tickMinStep": 1} if unit == "Count" else {"format": ",.4~g"}
    value_axis |= {"minExtent": _Y_EXTENT, "title": value_title}
    tip = [{"field": "when", "type": "nominal", "title": "period (UTC)"},
           {"field": "value", "type": "quantitative", "title": value_title, "format": ",.4~g"},
           {"field": "state", "type": "nominal", "title": "state"}]
    value_layers: list[dict[str, Any]] = [
        {"transform": [_is("state", "ALARM")], "mark": {"type": "rect", "color": state_colours["ALARM"],
                                                        "opacity": 0.12},
         "encoding": {"x": x_top, "x2": _x2()}},
        {"mark": {"type": "line", "point": {"size": 30}, "strokeWidth": 2},
         "encoding": {"x": x_top, "y": {"field": "value", "type": "quantitative", "title": value_title,
                                    "axis": value_axis,
                                    "scale": {"zero": True, "domain": _domain(_extent(
                                        [*rows["value"].tolist(), *([threshold] if threshold is not None else [])]))}},
                      "color": {"datum": "value", **line_colour}, "tooltip": tip}},
    ]
    if threshold is not None:
        value_layers.append({"mark": {"type": "rule", "strokeDash": [6, 4], "strokeWidth": 2},
                             "encoding": {"y": {"datum": threshold, "type": "quantitative"},
                                          "color": {"datum": threshold_label, **line_colour}}})
    order = list(STATE_LABELS.values())
    band = {"height": band_height, "mark": {"type": "rect", "x2Offset": -0.5},
            "encoding": {"x": x, "x2": _x2(),
                         "y": {"field": "state_label", "type": "nominal", "title": "state",
                               "scale": {"domain": order}, "axis": {"minExtent": _Y_EXTENT, "labelLimit": 100}},
                         "color": {"field": "state", "type": "nominal", "legend": None,
                                   "scale": {"domain": list(STATE_LABELS),
                                             "range": [state_colours[s] for s in STATE_LABELS]}},
                         "tooltip": tip}}
    value_view = {"height": value_height, "layer": value_layers}
    # fit-x: the views' widths plus their axes fit the container (Streamlit would pad a vconcat holding a layer,
    # so the plots took the whole width and the axes overflowed it)
    spec = {"$schema": "https://vega.github.io/schema/vega-lite/v6.json", "vconcat": [value_view, band],
            "spacing": 10, "autosize": {"type": "fit-x", "contains": "padding"},
            # one time axis; the value legend (value, threshold) and the state colours are separate scales
            "resolve": {"scale": {"x": "shared", "color": "independent"}, "legend": {"color": "independent"}}}
    return Chart(spec, rows)
