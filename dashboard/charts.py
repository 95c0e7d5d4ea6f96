"""The Vega-Lite charts of the dashboard (Lambda health's, the alarm timeline): specs (plain dicts) drawn by
``st.vega_lite_chart``. The signal pages' time series are drawn on the server as HTML (``dashboard.htmlchart``, from
the same rows: :func:`series_rows`), which spares those pages Vega's chunk, compile and scene.

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

__all__ = ["BOTTOM_LEGEND", "LINE_STYLES", "TIME_LABELS", "Chart", "alarm_timeline", "count_axis", "datetime_utc",
           "epoch_ms", "points_layer", "series_rows", "show", "stat_series", "time_series"]

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
BOTTOM_LEGEND = {"orient": "bottom", "direction": "vertical", "labelLimit": 300}
"""Legend settings of a half-width chart: below the plot, one name a row (log group names are long), so the plot
keeps the width."""


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


def count_axis(max_total: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """(axis, scale) of a count: integer ticks only, from zero; every integer ticked up to a total of 10."""
    axis: dict[str, Any] = {"format": ",d", "tickMinStep": 1, "minExtent": _Y_EXTENT}
    scale: dict[str, Any] = {"zero": True}
    if max_total <= 10:
        top = max(1, math.ceil(max_total))
        axis["values"] = list(range(top + 1))
        scale["domain"] = [0, top]
    return axis, scale


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


def _y(kind: Kind, title: str, field: str = "value", max_total: float = 0.0,
       extent: tuple[float, float] | None = None) -> dict:
    """y encoding of ``field``; ``max_total`` (counts: the largest stack) or ``extent`` (:func:`_extent` of the
    values drawn) sets the domain (:func:`_domain`)."""
    if kind == "count":
        axis, scale = count_axis(max_total)
    elif kind == "percent":
        axis, scale = {"format": ".1~%", "minExtent": _Y_EXTENT}, {"zero": True}
    else:
        axis, scale = {"format": ",.4~g", "minExtent": _Y_EXTENT}, {"zero": True}
    scale.setdefault("domain", _domain(extent if extent is not None else (0.0, max_total)))
    return {"field": field, "type": "quantitative", "title": title, "axis": {**axis, "title": title}, "scale": scale}


def _x2(field: str = "t_end", title: str | None = None) -> dict[str, Any]:
    """The end of an interval on the x (time) scale. Typed ``temporal``: an untyped x2 beside an x with an explicit
    domain made Vega-Lite 6 warn of "conflicting" domains (the same window, parsed and not) and compute a data
    extent from the still-empty rows ("Infinite extent for field data")."""
    enc: dict[str, Any] = {"field": field, "type": "temporal"}
    if title is not None:
        enc["title"] = title
    return enc


_VALUE_FORMAT = {"count": ",d", "percent": ".2%", "number": ",.4~g"}


def _colour(names: Sequence[str], colour: Mapping[str, str] | None, title: str, *,
            legend: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Colour by ``series``: each name its ``colour`` entry (``compute.colour_map``), else the theme's palette."""
    enc: dict[str, Any] = {"field": "series", "type": "nominal", "title": title,
                           "legend": {"labelLimit": LEGEND_LABEL_LIMIT, **(legend or {})}}
    names = sorted(set(names))
    if colour and all(n in colour for n in names):
        enc["scale"] = {"domain": names, "range": [colour[n] for n in names]}
    else:
        enc["scale"] = {"domain": names}
    return enc


def _tooltip(series_title: str, value_title: str, kind: Kind, field: str = "value",
             extra: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    return [{"field": "series", "type": "nominal", "title": series_title},
            {"field": "when", "type": "nominal", "title": "bin (UTC)"},
            {"field": field, "type": "quantitative", "title": value_title, "format": _VALUE_FORMAT[kind]},
            *extra]


def _is(field: str, value: str) -> dict[str, str]:
    """A filter transform keeping rows whose ``field`` equals ``value`` (our own constant, JSON-quoted)."""
    return {"filter": f"datum[{json.dumps(field)}] === {json.dumps(value)}"}


def _spec(layers: list[dict[str, Any]], height: int, **top: Any) -> dict[str, Any]:
    return {"$schema": "https://vega.github.io/schema/vega-lite/v6.json", "height": height, "layer": layers,
            **top}


# ----------------------------------------------------------------------------- charts
def series_rows(df: pd.DataFrame, by: str, bin_width: timedelta, *, value: str = "value", time_col: str = "time",
                stacked: bool = True, keep: Sequence[str] = ()) -> pd.DataFrame:
    """The rows of a :func:`time_series` chart (Vega-Lite here, HTML in ``dashboard.htmlchart``): ``series`` (the
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


def time_series(df: pd.DataFrame, by: str, window: Window, bin_width: timedelta, *, value: str = "value",
                y_title: str = "events", kind: Kind = "count", stacked: bool = True, height: int = 320,
                colour: Mapping[str, str] | None = None, time_col: str = "time",
                extra_layers: Sequence[dict[str, Any]] = (), keep: Sequence[str] = (),
                legend: Mapping[str, Any] | None = None) -> Chart:
    """One series per ``by`` value over the window: stacked bars covering [bin start, bin end) (counts: integer
    ticks), or lines with a point per bin (rates, ages).

    ``df``: columns ``time_col`` (bin start, naive UTC), ``by``, ``value`` (and ``keep``, carried for
    ``extra_layers``). ``kind="percent"``: values are fractions (0.05 = 5 %). ``colour``: ``by`` value -> CSS
    colour (``compute.colour_map``: one colour per operation on every page). Series are ordered by name.
    ``legend``: extra Vega-Lite legend properties (e.g. :data:`BOTTOM_LEGEND`).
    """
    rows = series_rows(df, by, bin_width, value=value, time_col=time_col, stacked=stacked, keep=keep)
    names = rows["series"].unique().tolist()
    if stacked:
        total = float(rows["y1"].max()) if len(rows) else 0.0
        mark = {"type": "bar", "x2Offset": -1}
        # titles: a bar's screen-reader label names every channel (Vega-Lite's aria description)
        enc = {"x": _x(window), "x2": _x2("t_end", "bin end (UTC)"),
               "y": _y(kind, y_title, "y1", total), "y2": {"field": "y0", "title": "stack base"}}
    else:
        mark = {"type": "line", "point": {"size": 36}, "strokeWidth": 2}
        enc = {"x": _x(window), "y": _y(kind, y_title, extent=_extent(rows["value"]))}
    # a bar legend's swatch is a plain square (a points layer's outline would frame it)
    swatch = {"symbolStrokeWidth": 0} if stacked else {}
    enc |= {"color": _colour(names, colour, by, legend={**swatch, **(legend or {})}),
            "tooltip": _tooltip(by, y_title, kind)}
    return Chart(_spec([{"mark": mark, "encoding": enc}, *extra_layers], height), rows)


def points_layer(field: str, title: str, *, shape: str = "diamond", size: int = 70) -> dict[str, Any]:
    """A layer of :func:`time_series` marking ``field`` (a count kept with ``keep``) at each bin's middle, in the
    series' colour, for the bins where it is above 0."""
    return {"transform": [{"filter": f"datum[{json.dumps(field)}] > 0"}],
            "mark": {"type": "point", "shape": shape, "filled": True, "size": size, "stroke": "#000000",
                     "strokeWidth": 0.8},
            "encoding": {"x": {"field": "t_mid", "type": "temporal"}, "y": {"field": field, "type": "quantitative"},
                         "color": {"field": "series", "type": "nominal"},
                         "tooltip": [{"field": "series", "type": "nominal", "title": "series"},
                                     {"field": "when", "type": "nominal", "title": "bin (UTC)"},
                                     {"field": field, "type": "quantitative", "title": title, "format": ",d"}]}}


LINE_STYLES: dict[str, dict[str, Any]] = {
    "solid": {"type": "line", "strokeWidth": 2},
    "dotted": {"type": "line", "strokeWidth": 2, "strokeDash": [2, 3]},
    "dashed": {"type": "line", "strokeWidth": 2, "strokeDash": [6, 4]},
    "dot": {"type": "point", "filled": True, "size": 60},
    "ring": {"type": "point", "filled": False, "size": 160, "strokeWidth": 1.5},
}
"""Mark of one statistic in :func:`stat_series`."""


def stat_series(df: pd.DataFrame, by: str, window: Window, bin_width: timedelta,
                stats: Sequence[tuple[str, str, str]], *, y_title: str, per: float = 1.0, height: int = 260,
                colour: Mapping[str, str] | None = None, time_col: str = "time",
                legend: Mapping[str, Any] | None = None) -> Chart:
    """Several statistics of each ``by`` value over the window, one style each (p95 solid and max dotted, say).

    ``stats``: (column of ``df``, label in the tooltip's ``statistic`` row, a :data:`LINE_STYLES` name). Values are
    divided by ``per`` (``compute.duration_unit``'s ms per unit; the unit goes in ``y_title``). Null values leave
    gaps. The legend shows the ``by`` colours; the page's caption says which style is which statistic.
    """
    long = df[[time_col, by, *(c for c, _, _ in stats)]].melt(id_vars=[time_col, by], var_name="column",
                                                               value_name="value")
    label = {c: lab for c, lab, _ in stats}
    long = long.assign(statistic=long["column"].map(label), value=long["value"].astype("float64") / per)
    rows = _rows(long.drop(columns=["column"]).rename(columns={by: "series"}), time_col, bin_width)
    rows["series"] = rows["series"].astype(str)
    rows = rows.sort_values(["statistic", "series", "t"], ignore_index=True)
    names = rows["series"].unique().tolist()
    extent = _extent(rows["value"])
    layers = []
    for _, lab, style in stats:
        # the window's scale once, on the first layer (layers share it; a second copy makes Vega-Lite warn)
        x = _x(window) if not layers else {"field": "t", "type": "temporal"}
        enc = {"x": x, "y": _y("number", y_title, extent=extent), "color": _colour(names, colour, by, legend=legend),
               "tooltip": _tooltip(by, y_title, "number",
                                   extra=[{"field": "statistic", "type": "nominal", "title": "statistic"}])}
        layers.append({"transform": [_is("statistic", lab)], "mark": dict(LINE_STYLES[style]), "encoding": enc})
    return Chart(_spec(layers, height), rows)


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
