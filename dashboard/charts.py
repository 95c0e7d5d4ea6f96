"""Plotly figure builders: every chart of the dashboard, as pure functions of DataFrames (no Streamlit here).

Conventions every figure follows:

- Time axes are UTC: x values are naive-UTC datetimes (the dashboard's time convention), the axis is titled
  ``time (UTC)`` and fixed to the selected window, and the hover shows the whole bin as full UTC timestamps
  (``2026-01-05 10:15–10:20 UTC``; both dates for a bin that ends on another day).
- Counts are drawn on integer axes (:func:`count_axis`); every value axis names its unit in its title.
- One colour per series value, given by the caller (``dashboard.compute.colour_map``: the same operation has the
  same colour on every page); the legend toggles a series on click (plotly's default).
- No template, font or background colour is set: ``st.plotly_chart(theme="streamlit")`` themes the figure like
  the app, light or dark as the viewer chose.
- Dragging across a chart selects a time span (``dragmode="select"``, horizontal): the page turns the selection
  into its time range (:func:`selected_window`, ``dashboard.ui.chart``). Plotly's own zoom and pan only move the
  picture in the browser, so the modebar leaves them out (:data:`MODEBAR_REMOVE`): every change of the view goes
  through the page's range, its URL and its history.

What the browser draws is kept small, because every figure is drawn more than once (Streamlit's frontend updates a
chart right after its first draw):

- Trace values go to plotly as plain lists (:func:`trace_values`), not numpy arrays. plotly writes a numeric numpy array as
  a base64 typed array, which plotly.js decodes into a new array on every ``Plotly.react``: the update after the
  first draw then finds every array changed and redraws the whole figure; a list it finds unchanged and skips.
- A line carries a marker per point only where a point could be missed without it (:func:`line_mode`); each marker
  is an SVG element of its own.

Safety: series names, log groups and alarm states come from logs (untrusted). Plotly reads a small set of HTML tags
(``<b>``, ``<br>``, ``<a href>`` ...) and entities in every text it draws, so each such name goes through
:func:`text` (``html.escape``): plotly then draws the literal characters, and no name becomes markup.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

__all__ = [
    "MODEBAR_REMOVE",
    "STATE_LABELS",
    "Window",
    "alarm_timeline",
    "bin_labels",
    "count_axis",
    "line_mode",
    "margin",
    "selected_window",
    "series",
    "sparkline",
    "stat_series",
    "text",
    "trace_values",
]

Window = tuple[datetime, datetime]
"""[start, end) of the selected window, naive UTC datetimes."""
Kind = Literal["count", "percent", "number"]
"""What the y values are: ``count`` (integer axis), ``percent`` (fractions, drawn as %), ``number`` (any unit)."""

TIME_TITLE = "time (UTC)"
HEIGHT = 320
"""Plot height of a full-width chart, CSS pixels (legend included)."""
MODEBAR_REMOVE = ("zoom2d", "pan2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d", "resetScale2d")
"""Modebar buttons taken away: each would change the view in the browser only, out of step with the page's range."""
_DAY = timedelta(days=1)


def text(name: object) -> str:
    """An untrusted name as plotly text that draws exactly its characters (``<``, ``>``, ``&``, quotes escaped)."""
    return html.escape("" if name is None else str(name), quote=True)


def bin_labels(start: pd.Series, width: timedelta) -> list[str]:
    """The hover text of each bin starting at ``start`` (naive UTC): ``2026-01-05 10:15–10:20 UTC`` (the span's
    text, :func:`_span_labels`)."""
    s = pd.to_datetime(start)
    return _span_labels(s, s + width)


def _span_labels(lo: pd.Series, hi: pd.Series) -> list[str]:
    """``2026-01-05 10:15–10:20 UTC`` for each span [lo, hi) (naive UTC), the end's date too when the span is a day
    or longer or ends on a later day (an end at midnight ends the day before)."""
    dated = ((hi - lo) >= _DAY) | ((hi - timedelta(microseconds=1)).dt.normalize() != lo.dt.normalize())
    end = hi.dt.strftime("%H:%M").where(~dated, hi.dt.strftime("%Y-%m-%d %H:%M"))
    return (lo.dt.strftime("%Y-%m-%d %H:%M") + "–" + end + " UTC").tolist()


def trace_values(s: pd.Series | Sequence[float]) -> list[Any]:
    """A trace's numbers as a plain list (NaN kept: plotly writes it as null, a gap), never a numpy array (see the
    module's notes: a typed array makes plotly.js redraw the whole figure on every update)."""
    return s.tolist() if isinstance(s, pd.Series) else list(s)


MARKERS_BELOW = 20
"""A line of fewer points than this gets a marker on each (plotly's own rule for its default ``mode``)."""


def line_mode(y: pd.Series | Sequence[float]) -> Literal["lines", "lines+markers"]:
    """``lines+markers`` for a line on which a point could be missed without its marker: one of fewer than
    :data:`MARKERS_BELOW` points, or one with a value alone between gaps (NaN, or the trace's end, on both sides:
    a line draws nothing for it); else ``lines`` (a dense line shows its points by its vertices and its hover)."""
    v = pd.to_numeric(pd.Series(y, dtype="float64"), errors="coerce").to_numpy()
    if len(v) < MARKERS_BELOW:
        return "lines+markers"
    ok = ~np.isnan(v)
    before = np.r_[False, ok[:-1]]
    after = np.r_[ok[1:], False]
    return "lines+markers" if bool((ok & ~before & ~after).any()) else "lines"


def _with_when(df: pd.DataFrame, width: timedelta) -> pd.DataFrame:
    """``df`` plus ``when``: each row's :func:`bin_labels` text, formatted once per distinct bin."""
    t = pd.to_datetime(df["time"])
    uniq = pd.Series(t.unique())
    return df.assign(when=t.map(dict(zip(uniq, bin_labels(uniq, width)))))


def count_axis(top: float) -> dict[str, Any]:
    """A y axis for counts up to ``top``: integer ticks from zero (a step of 1 below 10, where plotly's automatic
    ticks could fall on halves), thousands separated."""
    axis: dict[str, Any] = {"rangemode": "tozero", "tickformat": ",d"}
    if not (isinstance(top, (int, float)) and math.isfinite(top)) or top < 10:
        # 5 % above the top tick: a point on the largest value is drawn whole
        axis |= {"tick0": 0, "dtick": 1, "range": [0, max(1, math.ceil(top) if math.isfinite(top) else 1) * 1.05]}
    return axis


LEGEND_ROW_PX = 800
"""Width of a legend row: about the plot's width beside the sidebar in a 1280 px window."""


def margin(legend: Sequence[str]) -> dict[str, int]:
    """The margins of a figure with a time axis below and ``legend`` (its entries' names) above, sized for what
    plotly draws there with Streamlit's theme: the two-line time labels and the axis title below (80 px), value
    labels of up to about seven characters and the axis title on the left (90 px), and one 29 px legend row per
    :data:`LEGEND_ROW_PX` of entries (each about 40 px of symbol and gap and 6.5 px a character). Plotly grows a
    margin that is too small, but only by drawing the figure again (and Streamlit's frontend then updates it
    again): a figure whose margins already fit is drawn once."""
    width = sum(40 + 6.5 * len(html.unescape(name)) for name in legend)
    rows = math.ceil(width / LEGEND_ROW_PX)
    return {"l": 90, "r": 10, "t": 10 + 29 * rows, "b": 80}


def _legend(traces: Sequence[Mapping[str, Any]]) -> list[str]:
    return [t["name"] for t in traces if t.get("showlegend", True)]


def _layout(window: Window, y_title: str, kind: Kind, top: float, height: int, legend: Sequence[str]) -> dict[str, Any]:
    y: dict[str, Any] = {"title": {"text": y_title}, "rangemode": "tozero", "fixedrange": True}
    if kind == "count":
        y |= count_axis(top)
    elif kind == "percent":
        y |= {"tickformat": ".1~%"}
    return {
        "height": height, "margin": margin(legend), "barmode": "stack", "bargap": 0.1,
        "dragmode": "select", "selectdirection": "h", "hovermode": "closest", "yaxis": y, "showlegend": True,
        "xaxis": {"title": {"text": TIME_TITLE}, "type": "date", "range": [window[0], window[1]],
                  "hoverformat": "%Y-%m-%d %H:%M:%S"},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0, "title": {"text": ""}},
    }


def series(df: pd.DataFrame, by: str, window: Window, bin_width: timedelta, *, kind: Kind = "count",
           stacked: bool = True, colours: Mapping[str, str] | None = None, y_title: str = "events (count)",
           value: str = "value", points: tuple[str, str] | None = None, height: int = HEIGHT) -> go.Figure:
    """One trace per value of ``by`` over time: stacked bars (``stacked``, for counts) or lines (markers where
    :func:`line_mode` asks for them).

    ``df``: columns ``time`` (bin start, naive UTC), ``by`` and ``value``; ``window``: the x range; ``bin_width``:
    the bins' width (bars span their bin; the hover names it); ``colours``: series value -> colour (others get
    plotly's); ``kind``: ``percent`` values are fractions (axis in %). Series are in name order. ``points``:
    (column, label) of a second count drawn as open dots per value of ``by`` where it is above zero (the cold
    starts over the invocations), in the same legend group as its series.
    """
    traces: list[dict[str, Any]] = []
    width_ms = bin_width / timedelta(milliseconds=1)
    fmt = {"count": ",d", "percent": ".2%", "number": ",.4~g"}[kind]
    for name, g in sorted(_with_when(df, bin_width).groupby(by, observed=True), key=lambda kv: str(kv[0])):
        g = g.sort_values("time")
        common: dict[str, Any] = {
            "x": g["time"].to_numpy(), "y": trace_values(g[value]), "name": text(name), "legendgroup": text(name),
            "customdata": g["when"].to_numpy(),
            "hovertemplate": f"%{{customdata}}<br>%{{fullData.name}}: %{{y:{fmt}}}<extra></extra>"}
        colour = (colours or {}).get(str(name))
        if stacked:
            traces.append({"type": "bar", **common, "offset": 0, "width": width_ms,
                           "marker": {"color": colour} if colour else {}})
        else:
            traces.append({"type": "scatter", **common, "mode": line_mode(g[value]),
                           "line": {"color": colour} if colour else {}, "connectgaps": False})
        if points is not None:
            pg = g[g[points[0]] > 0]
            traces.append({
                "type": "scatter", "x": pg["time"].to_numpy(), "y": trace_values(pg[points[0]]), "name": common["name"],
                "meta": [points[1]], "legendgroup": common["name"], "showlegend": False, "mode": "markers",
                "customdata": pg["when"].to_numpy(),
                "marker": {"symbol": "circle-open", "size": 9, "line": {"width": 2},
                           **({"color": colour} if colour else {})},
                "hovertemplate": "%{customdata}<br>%{fullData.name} · %{meta[0]}: %{y:,d}<extra></extra>"})
    top = float(df.groupby("time")[value].sum().max()) if stacked and len(df) else (
        float(df[value].max()) if len(df) else 0.0)
    return go.Figure(data=traces, layout=_layout(window, y_title, kind, top, height, _legend(traces)))


DASHES = {"solid": "solid", "dotted": "dot", "dashed": "dash"}
"""Line style of a statistic in :func:`stat_series` (plotly's names)."""


def stat_series(df: pd.DataFrame, by: str, window: Window, bin_width: timedelta,
                stats: Sequence[tuple[str, str, str]], *, y_title: str, per: float = 1.0,
                colours: Mapping[str, str] | None = None, markers_only: bool = False,
                height: int = HEIGHT) -> go.Figure:
    """Several statistics of each ``by`` value over time, one trace per (value, statistic): colour by the value,
    line style by the statistic (``stats``: (column, label, ``solid``/``dotted``/``dashed``)). Values are divided
    by ``per`` (a unit's size, e.g. 1000 for ms -> s). Lines carry markers where :func:`line_mode` asks for them;
    ``markers_only`` draws points alone (figures of a few bins, such as the cold starts' init durations). Traces of
    one value share a name and a legend group: one legend entry per value (the statistics are told apart by line
    style, and by name in the hover: each trace's ``meta``), and a click hides all of them."""
    traces: list[dict[str, Any]] = []
    for name, g in sorted(_with_when(df, bin_width).groupby(by, observed=True), key=lambda kv: str(kv[0])):
        g = g.sort_values("time")
        colour = (colours or {}).get(str(name))
        for i, (col, label, dash) in enumerate(stats):
            y = g[col] / per
            traces.append({
                "type": "scatter", "x": g["time"].to_numpy(), "y": trace_values(y), "name": text(name),
                "meta": [label], "legendgroup": text(name), "showlegend": i == 0, "customdata": g["when"].to_numpy(),
                "mode": "markers" if markers_only else line_mode(y),
                "marker": {"color": colour, "size": 8 if dash == "solid" else 5} if colour else {},
                "line": {"color": colour, "dash": DASHES[dash]} if colour else {"dash": DASHES[dash]},
                "hovertemplate": "%{customdata}<br>%{fullData.name} · %{meta[0]}: %{y:,.4~g}<extra></extra>"})
    return go.Figure(data=traces, layout=_layout(window, y_title, "number", 0.0, height, _legend(traces)))


SPARK_HEIGHT = 60


def sparkline(times: Sequence[datetime], values: Sequence[float], *, kind: Kind, colour: str,
              window: Window) -> go.Figure:
    """A tile's trend: one point per bin over the window, counts filled to zero (an area), rates and durations as
    a line. No axes, legend or interaction (``staticPlot`` when shown): the tile's number says the value; the hover
    of the full chart on the signal's page says the details."""
    trace = {"type": "scatter", "x": list(times), "y": list(values), "mode": "lines",
             "line": {"color": colour, "width": 1.5}, "hoverinfo": "skip"}
    if kind == "count":
        trace["fill"] = "tozeroy"
    return go.Figure(data=[trace], layout={
        "height": SPARK_HEIGHT, "margin": {"l": 0, "r": 0, "t": 2, "b": 2}, "showlegend": False,
        "xaxis": {"visible": False, "range": [window[0], window[1]], "type": "date"},
        "yaxis": {"visible": False, "range": _spark_range(values)}})


def _spark_range(values: Sequence[float]) -> list[float]:
    """y range of a sparkline: from zero (or the lowest value, when one is negative) to the highest, 5% headroom."""
    lo, hi = min(0.0, min(values, default=0.0)), max(0.0, max(values, default=0.0))
    pad = (hi - lo) * 0.05 or 1.0
    return [lo - (pad if lo < 0 else 0.0), hi + pad]


STATE_LABELS = {"ALARM": "ALARM", "OK": "OK", "INSUFFICIENT_DATA": "NO DATA"}
"""CloudWatch alarm state -> its row on the timeline's state band (top to bottom)."""


def alarm_timeline(timeline: pd.DataFrame, period: timedelta, *, threshold: float | None, unit: str,
                   state_colours: Mapping[str, str], height: int = 380) -> go.Figure:
    """An alarm backtest over time, two rows on one time axis: above, the value per period (a line, with points
    where :func:`line_mode` asks for them), the threshold (dashed) and the periods in ALARM shaded; below, the state
    band: one bar per run of consecutive periods in the same state, on the row of that state (its hover names the
    run's span and its number of periods).

    ``timeline``: columns ``period_start`` (datetime, UTC; naive or aware), ``value`` (float, NaN = no datapoint),
    ``state`` (``ALARM`` / ``OK`` / ``INSUFFICIENT_DATA``). ``period``: the alarm's period. ``state_colours``:
    state -> colour. ``unit``: the metric's unit (CloudWatch's name, e.g. ``Count``; a Count gets an integer axis).
    """
    start = pd.to_datetime(timeline["period_start"])
    if start.dt.tz is not None:
        start = start.dt.tz_convert("UTC").dt.tz_localize(None)
    state = timeline["state"].astype(str).reset_index(drop=True)
    value = pd.to_numeric(timeline["value"], errors="coerce").reset_index(drop=True)
    start = start.reset_index(drop=True)
    when = bin_labels(start, period)
    value_title = f"value ({unit})" if unit else "value"
    traces: list[dict[str, Any]] = [{
        "type": "scatter", "x": start.to_numpy(), "y": trace_values(value), "mode": line_mode(value), "name": "value",
        "customdata": np.column_stack([when, state]), "connectgaps": False, "xaxis": "x", "yaxis": "y",
        "hovertemplate": "%{customdata[0]}<br>value: %{y:,.4~g}<br>state: %{customdata[1]}<extra></extra>"}]
    if threshold is not None:
        edges = pd.Series([start.min(), start.max() + period], dtype=start.dtype).to_numpy()
        traces.append({"type": "scatter", "x": edges, "y": [threshold, threshold],
                       "mode": "lines", "name": f"threshold {threshold:g} {unit}".rstrip(), "hoverinfo": "skip",
                       "line": {"dash": "dash", "color": state_colours.get("ALARM")}, "xaxis": "x", "yaxis": "y"})
    runs = {s: _runs(start, state == s, period) for s in STATE_LABELS}
    for s, label in STATE_LABELS.items():
        if not runs[s]:
            continue
        los, his = (pd.Series([r[i] for r in runs[s]], dtype="datetime64[ns]") for i in (0, 1))
        n = [round((hi - lo) / period) for lo, hi in runs[s]]
        traces.append({
            "type": "bar", "base": los.tolist(), "x": ((his - los) / timedelta(milliseconds=1)).tolist(),
            "y": [label] * len(n), "orientation": "h", "name": label, "showlegend": False,
            "marker": {"color": state_colours.get(s)}, "xaxis": "x2", "yaxis": "y2",
            "customdata": [f"{span} · {k:,} period{'s' if k != 1 else ''}"
                           for span, k in zip(_span_labels(los, his), n, strict=True)],
            "hovertemplate": "%{customdata}<br>state: " + label + "<extra></extra>"})
    top = float(pd.concat([value, pd.Series([threshold or 0.0])]).max(skipna=True) or 0.0)
    y: dict[str, Any] = {"title": {"text": value_title}, "rangemode": "tozero", "fixedrange": True}
    if unit == "Count":
        y |= count_axis(top)
    # the two rows' axes (domains, anchors, the shared time axis) as plotly lays out a two-row grid
    grid = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.75, 0.25], vertical_spacing=0.06).layout
    axes = {k: grid[k].to_plotly_json() for k in ("xaxis", "yaxis", "xaxis2", "yaxis2")}
    shade = {"type": "rect", "xref": "x", "yref": "y domain", "y0": 0, "y1": 1, "opacity": 0.12, "line": {"width": 0},
             "fillcolor": state_colours.get("ALARM")}
    # the backtest covers the whole collected history, not the page's window: plotly's own zoom (in the browser)
    return go.Figure(data=traces, layout={
        "xaxis": axes["xaxis"], "height": height, "margin": margin(_legend(traces)), "dragmode": "zoom",
        "hovermode": "closest", "bargap": 0, "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
        "shapes": [shade | {"x0": lo, "x1": hi} for lo, hi in runs["ALARM"]],
        "yaxis": axes["yaxis"] | y,
        "yaxis2": axes["yaxis2"] | {"title": {"text": "state"}, "fixedrange": True, "type": "category",
                                    "categoryorder": "array", "categoryarray": list(STATE_LABELS.values())[::-1]},
        "xaxis2": axes["xaxis2"] | {"title": {"text": "period start (UTC)"}, "type": "date",
                                    "hoverformat": "%Y-%m-%d %H:%M:%S"}})


def _runs(start: pd.Series, on: pd.Series, period: timedelta) -> list[tuple[datetime, datetime]]:
    """[first start, last start + period) of each run of consecutive periods where ``on`` holds: a run goes on to
    the next row when that row holds too and starts one period later."""
    idx = np.flatnonzero(on.to_numpy(dtype=bool))
    if not len(idx):
        return []
    t = start.to_numpy()[idx]
    goes_on = (np.diff(idx) == 1) & (np.diff(t) == np.timedelta64(period))
    firsts, lasts = t[np.r_[True, ~goes_on]], t[np.r_[~goes_on, True]]
    return [(pd.Timestamp(lo), pd.Timestamp(hi) + period) for lo, hi in zip(firsts, lasts)]


def selected_window(selection: Mapping[str, Any] | None, bounds: Window) -> Window | None:
    """The time span a drag selected on a chart (Streamlit's plotly selection state: ``{"box": [{"x": [x0, x1],
    ...}], ...}``), widened to whole minutes (the URL's resolution) and clipped to ``bounds`` (the data); None
    when nothing usable was selected (a click, a cleared selection, a span outside the data)."""
    boxes = (selection or {}).get("box") or []
    xs = [x for b in boxes for x in (b.get("x") or [])]
    if len(xs) < 2:
        return None
    try:
        times = [pd.Timestamp(x) for x in xs]
    except (ValueError, TypeError):
        return None
    times = [t.tz_convert("UTC").tz_localize(None) if t.tzinfo is not None else t for t in times]
    lo = max(min(times).floor("min").to_pydatetime(), bounds[0])
    hi = min(max(times).ceil("min").to_pydatetime(), bounds[1])
    if hi <= lo:
        return None
    return lo, hi
