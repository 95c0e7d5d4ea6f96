"""Time-series charts drawn on the server as HTML (``st.html``), for the signal pages and Lambda health.

Why not ``st.vega_lite_chart``: a Vega chart makes the browser load Streamlit's Vega chunk, compile the spec and
build its scene; on a signal page at 1M events that was about half of the browser's work of a page switch
(``benchmarks/dashboard_bench.py``), and the first chart page of a tab also waited for React's 500 ms Suspense
throttle while the chunk loaded. A few positioned ``<div>``s a bin draw with the page, through the HTML element the
Overview already loaded (``st.html`` keeps HTML only: its sanitizer drops inline ``<svg>``, so a line is an ``<img>``
of an SVG made of numbers, under the points). What these charts need is drawn here: stacked bars of counts over [bin start, bin end)
with integer ticks, lines with a point per bin for rates and durations, a UTC time axis fixed to the selected
window, one colour per series (``compute.colour_map``), a legend, and a hover tooltip per bin (text inside the bin's
column, shown by the style sheet); for Lambda health, several statistics per series (:func:`stat_series`: a line style
or a point size each) and a points column over the bars (cold starts). The alarm timeline stays Vega-Lite
(``dashboard.charts``).

Safety: series names come from logs (untrusted). Every text and attribute value here goes through
``html.escape`` (``& < > " '``), attributes are double-quoted, and a colour is used only when it is a ``#hex``
literal; everything else in the markup (the line images included) is numbers computed here and constants of this
module.

Each bin's column (class ``m``) carries its data for tests and scripts: ``data-t`` / ``data-t-end`` (bin start / end,
epoch ms UTC), ``data-s`` (the series drawn in it, as indexes into the legend's names) and ``data-v`` (their values, in
the same order; fractions for a percent chart), and its tooltip (``span.tip``: the bin, then a ``name: value`` line
per series). A name is never an attribute value: the sanitizer of ``st.html`` drops an attribute that holds markup.
"""

from __future__ import annotations

import base64
import html
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

import pandas as pd

from dashboard.charts import Kind, Window, epoch_ms, series_rows
from dashboard.compute import palette_colours

__all__ = ["CLASS", "HEIGHT", "LINE_DASH", "POINT_SIZE", "nice_ticks", "show", "stat_series", "time_series",
           "time_ticks"]

CLASS = "idw-chart"
"""CSS class of the chart's box (tests, the benchmark and the style sheet address it)."""
HEIGHT = 260
"""Default height of the plot area, CSS pixels (the axes and the legend come on top)."""
_MAX_X_TICKS = 9
_TIME_STEPS_MIN = (1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 10080)
"""Time-axis tick steps in minutes (aligned to UTC multiples of the step)."""
_HEX = re.compile(r"#[0-9A-Fa-f]{3,8}")
_TIME_FMT = "%Y-%m-%d %H:%M"
STYLE = f"""<style>
.{CLASS} {{ position: relative; padding: 0.5rem 0.8rem 0 4.2rem; font-size: 0.8rem; }}
.{CLASS} .plot {{ position: relative; border-bottom: 1px solid rgba(128, 128, 128, 0.6); }}
.{CLASS} .gl {{ position: absolute; left: 0; right: 0; height: 0; border-top: 1px solid rgba(128, 128, 128, 0.2); }}
.{CLASS} .yl {{ position: absolute; right: calc(100% + 0.4rem); transform: translateY(50%); white-space: nowrap;
  opacity: 0.8; font-variant-numeric: tabular-nums; }}
.{CLASS} .xl {{ position: absolute; top: calc(100% + 0.3rem); transform: translateX(-50%); white-space: nowrap;
  opacity: 0.8; }}
.{CLASS} .xl::before {{ content: ""; position: absolute; left: 50%; top: -0.3rem; height: 0.25rem;
  border-left: 1px solid rgba(128, 128, 128, 0.6); }}
.{CLASS} .yt {{ position: absolute; left: 0.2rem; top: 50%; transform: translate(-50%, -50%) rotate(-90deg)
  translateY(0.7rem); white-space: nowrap; opacity: 0.85; }}
.{CLASS} .xt {{ text-align: center; margin-top: 1.7rem; opacity: 0.85; }}
.{CLASS} .m {{ position: absolute; top: 0; bottom: 0; }}
.{CLASS} .m:hover {{ background: rgba(128, 128, 128, 0.14); z-index: 2; }}
.{CLASS} .bar {{ position: absolute; left: 0; right: 0; bottom: 0; }}
.{CLASS} .tip {{ display: none; position: absolute; top: 0; left: calc(100% + 8px); padding: 0.3rem 0.5rem;
  border-radius: 0.25rem; background: rgba(20, 22, 30, 0.94); color: #f0f2f6; white-space: pre; font-size: 0.75rem;
  line-height: 1.35; pointer-events: none; }}
.{CLASS} .tip.rt {{ left: auto; right: calc(100% + 8px); }}
.{CLASS} .m:hover .tip {{ display: block; }}
.{CLASS} .ln {{ position: absolute; left: 0; width: 100%; pointer-events: none; }}
.{CLASS} .legend {{ display: flex; flex-wrap: wrap; gap: 0.2rem 1rem; margin-top: 0.3rem; overflow-wrap: anywhere; }}
.{CLASS} .legend b {{ font-weight: 600; }}
.{CLASS} .legend i {{ display: inline-block; width: 0.7rem; height: 0.7rem; margin-right: 0.3rem;
  border-radius: 0.15rem; vertical-align: -0.05rem; }}
</style>"""
"""Text in the page's colour (light or dark theme), lines and grid in a grey that reads on both."""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def nice_ticks(top: float, kind: Kind, target: int = 5) -> list[float]:
    """Tick values from 0 to at least ``top``, about ``target`` of them, at a step of 1, 2 or 5 x 10^k (0 to 1 for a
    ``top`` <= 0). ``count``: whole steps only, every integer up to a top of 10 (no fractional tick). Raises
    ValueError for a ``top`` that is not finite."""
    if not math.isfinite(top):
        raise ValueError(f"axis top must be finite, got {top!r}")
    # nothing above zero: a 0..1 axis; a positive top below 1e-9 (no rate or duration is that small) ticks to 1e-9,
    # so the step stays a normal float (5e-324 / 5 underflows to 0)
    top = 1.0 if top <= 0 else max(top, 1e-9)
    if kind == "count" and top <= 10:
        return [float(i) for i in range(math.ceil(top) + 1)]
    raw = top / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    if kind == "count":
        step = max(1.0, round(step))
    n = math.ceil(top / step - 1e-9)
    ticks = [float(f"{i * step:.12g}") for i in range(n + 1)]  # 5 x 2e-06 is 9.999999999999999e-06 in floats
    return ticks if ticks[-1] >= top else [*ticks, float(f"{(n + 1) * step:.12g}")]


def _tick_label(v: float, step: float, kind: Kind) -> str:
    if kind == "count":
        return f"{v:,.0f}"
    if kind == "percent":
        d = max(0, -math.floor(math.log10(step * 100))) if step > 0 else 0
        return f"{v * 100:.{d}f}%"
    d = max(0, -math.floor(math.log10(step))) if step > 0 else 0
    return f"{v:,.{d}f}"


def time_ticks(window: Window) -> list[tuple[float, str]]:
    """(epoch ms, label) of the time axis over ``window`` (naive UTC): at most about nine ticks at the first step of
    :data:`_TIME_STEPS_MIN` that fits, on UTC multiples of the step; labelled ``HH:MM``, or ``Mon DD`` at midnight
    (and for steps of a day or more)."""
    lo, hi = epoch_ms(window[0]), epoch_ms(window[1])
    span_min = max(1.0, (hi - lo) / 60_000)
    step = next((s for s in _TIME_STEPS_MIN if span_min / s <= _MAX_X_TICKS), _TIME_STEPS_MIN[-1])
    step_ms = step * 60_000
    out = []
    t = math.ceil(lo / step_ms) * step_ms
    while t <= hi:
        d = datetime(1970, 1, 1) + timedelta(milliseconds=t)
        midnight = d.hour == 0 and d.minute == 0
        out.append((t, d.strftime("%b %d") if midnight or step >= 1440 else d.strftime("%H:%M")))
        t += step_ms
    return out


def _fmt_value(v: float, kind: Kind) -> str:
    return f"{v:,.0f}" if kind == "count" else f"{v * 100:.2f}%" if kind == "percent" else f"{v:,.4g}"


def _colours(names: Sequence[str], colour: Mapping[str, str] | None) -> dict[str, str]:
    """Each name its ``colour`` entry when that is a ``#hex`` literal, else the palette by name order
    (``compute.palette_colours``); in name order."""
    given = colour or {}
    return {n: c if (c := given.get(n)) is not None and _HEX.fullmatch(c) else fallback
            for n, fallback in palette_colours(names).items()}


def _pct(v: float) -> str:
    return f"{v:.3f}%"


_DOT_ROOM = 5
"""CSS pixels the line image reaches above and below the plot: a dot on the top or bottom line is drawn whole (an
image clips at its edge)."""


LINE_DASH = {"solid": None, "dotted": "2 3", "dashed": "6 4"}
"""Stroke dash (CSS pixels) of each line style of :func:`stat_series` ."""
POINT_SIZE = {"dot": 8, "ring": 4}
"""Point-only styles of :func:`stat_series`: the point's diameter, CSS pixels (the larger point drawn first, so a
smaller one on the same spot shows on top; the Vega-Lite chart drew the second as a hollow ring)."""


def _line_image(runs: Sequence[Sequence[tuple[float, float]]], colour: str, height: int, *, line: bool = True,
                dash: str | None = None, dot: float = 7, outline: bool = False, lone_dots: bool = False) -> str:
    """An ``<img>`` of an SVG drawing each run of (x %, y % from the bottom) points as a line with a dot per point
    in ``colour`` (a ``#hex`` checked by the caller), stretched over the plot (the strokes keep their width).
    ``line=False``: the dots alone; ``dash``: an SVG ``stroke-dasharray`` of the line (a constant of this module);
    ``dot``: the dots' diameter in CSS pixels (0: none); ``outline``: a dark ring round each dot (a dot drawn over
    a bar); ``lone_dots``: a dot only for a point alone in its run (no line shows it), so a dash pattern reads."""
    lines = "".join(
        '<polyline points="' + " ".join(f"{x:.2f},{100 - y:.2f}" for x, y in run) + f'" fill="none" stroke="{colour}" '
        'stroke-width="2" stroke-linejoin="round" vector-effect="non-scaling-stroke"'
        + (f' stroke-dasharray="{dash}"' if dash else "") + "/>" for run in runs if line and len(run) > 1)
    # a point per value: a zero-length path with a round cap draws a circle of the stroke's width, which (unlike a
    # <circle>) the stretched viewBox does not squash
    points = "".join(f"M{x:.2f} {100 - y:.2f}h0" for run in runs for x, y in run
                     if not lone_dots or len(run) == 1) if dot else ""
    dots = "".join(f'<path d="{points}" stroke="{c}" stroke-width="{w:g}" stroke-linecap="round" '
                   'vector-effect="non-scaling-stroke"/>'
                   for c, w in ((("#000000", dot + 2),) if outline else ()) + ((colour, dot),)) if points else ""
    k = _DOT_ROOM / max(1, height) * 100  # the room, in viewBox units of the plot's 100
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 {-k:.3f} 100 {100 + 2 * k:.3f}" '
           f'preserveAspectRatio="none">{lines}{dots}</svg>')
    return (f'<img class="ln" alt="" style="top:-{_DOT_ROOM}px;height:calc(100% + {2 * _DOT_ROOM}px)" '
            f'src="data:image/svg+xml;base64,{base64.b64encode(svg.encode()).decode()}">')


def time_series(df: pd.DataFrame, by: str, window: Window, bin_width: timedelta, *, value: str = "value",
                y_title: str = "events", kind: Kind = "count", stacked: bool = True, height: int = HEIGHT,
                colour: Mapping[str, str] | None = None, time_col: str = "time", points: str | None = None,
                points_title: str = "") -> str:
    """One series per ``by`` value over the window as HTML (with its legend and style sheet): stacked bars covering
    [bin start, bin end) (counts: integer ticks), or lines with a point per bin (rates, ages; a missing value breaks
    the line). ``df`` with columns ``time_col`` (bin start, naive
    UTC), ``by`` and ``value``; ``kind="percent"``: values are fractions; ``colour``: ``by`` value -> ``#hex``
    colour; ``height``: the plot's CSS pixels. ``points``: a count column of ``df`` (stacked bars only) drawn as a
    dot outlined in black at the bin's middle, in the series' colour, where it is above 0 (its values in the bin
    column's ``data-p``, its tooltip line ``<series> <points_title>: <n>``). Marks
    outside the window are left out, values clipped to the axis. Returns the HTML text."""
    rows = series_rows(df, by, bin_width, value=value, time_col=time_col, stacked=stacked,
                       keep=[points] if points and stacked else [])
    names = sorted(rows["series"].unique().tolist())
    colours = _colours(names, colour)
    lo, hi = epoch_ms(window[0]), epoch_ms(window[1])
    span = max(hi - lo, 1.0)
    rows = rows[(rows["t_end"] > lo) & (rows["t"] < hi)]
    vals = pd.to_numeric(rows["y1" if stacked else "value"], errors="coerce").astype("float64")
    vals = vals[vals.map(math.isfinite)]
    ticks = nice_ticks(float(vals.max()) if len(vals) and vals.max() > 0 else 0.0, kind)
    top = ticks[-1] or 1.0

    def x(t: float) -> float:  # % of the plot's width
        return (min(max(t, lo), hi) - lo) / span * 100

    def y(v: float) -> float:  # % of the plot's height, from the bottom
        return min(max(v, 0.0), top) / top * 100

    index = {n: i for i, n in enumerate(names)}
    parts = _axes(window, ticks, kind, x, y)
    runs: dict[str, list[list[tuple[float, float]]]] = {n: [[]] for n in names}
    dots: dict[str, list[tuple[float, float]]] = {n: [] for n in names}  # the points column's marks
    # one column per bin: its bar (stacked: one box, a colour band per series) and its tooltip, text inside the
    # column shown on hover by the style sheet (not a title attribute: the sanitizer of st.html drops an attribute
    # holding markup, a hostile name); about 3 elements a bin, whatever the number of series
    n_axis = len(parts)
    # plain Python over the rows (a pandas group per bin cost ~0.1 s of CPU on a 48-bin, 8-series chart)
    records = rows.to_dict("records")
    records.sort(key=lambda r: (r["t"], r["series"]))
    for (t, t_end, when), group in itertools.groupby(records, key=lambda r: (r["t"], r["t_end"], r["when"])):
        g = [r for r in group if math.isfinite(float(r["value"])) and (not stacked or r["value"] > 0)]
        if not stacked:  # a bin where a series has no value breaks its line
            for n in set(names) - {r["series"] for r in g}:
                if runs[n][-1]:
                    runs[n].append([])
        if not g:
            continue
        left, width = x(t), x(t_end) - x(t)
        lines = [f"bin (UTC): {when}"] + [f"{r['series']}: {_fmt_value(float(r['value']), kind)}" for r in g]
        bar = ""
        if stacked:
            total = max(float(r["y1"]) for r in g)
            stops = ", ".join(f"{colours[r['series']]} {r['y0'] / total * 100:.2f}% {r['y1'] / total * 100:.2f}%"
                              for r in g)
            bar = f'<div class="bar" style="height:{_pct(y(total))};background:linear-gradient(to top, {stops})"></div>'
            lines.append(f"total: {_fmt_value(total, kind)}")
        p_attr = ""
        if points and stacked:
            marked = [r for r in g if float(r[points]) > 0]
            for r in marked:
                dots[r["series"]].append((x((t + t_end) / 2), y(float(r[points]))))
            lines += [f"{r['series']} {points_title}: {float(r[points]):,.0f}" for r in marked]
            p_attr = f' data-p="{" ".join(repr(float(r[points])) for r in g)}"'
        for r in g:
            runs[r["series"]][-1].append((x(t), y(float(r["value"]))))
        tip = f'<span class="tip{" rt" if left > 60 else ""}">{_e(chr(10).join(lines))}</span>'
        parts.append(f'<div class="m" style="left:{_pct(left)};width:calc({_pct(width)} - 1px)" data-t="{t:.0f}" '
                     f'data-t-end="{t_end:.0f}" data-s="{" ".join(str(index[r["series"]]) for r in g)}" '
                     f'data-v="{" ".join(repr(float(r["value"])) for r in g)}"{p_attr}>{bar}{tip}</div>')
    if not stacked:  # under the columns (the hover targets)
        parts[n_axis:n_axis] = [_line_image(runs[n], colours[n], int(height)) for n in names]
    elif points:  # over the bars (the image lets the pointer through to the columns)
        parts += [_line_image([dots[n]], colours[n], int(height), line=False, outline=True) for n in names if dots[n]]
    return _box(parts, names, colours, by, y_title, kind, lo, hi, ticks, height)


def _axes(window: Window, ticks: Sequence[float], kind: Kind, x, y) -> list[str]:
    """The grid lines and tick labels of both axes (``x``, ``y``: value -> % of the plot)."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    parts = [f'<div class="gl" style="bottom:{_pct(y(v))}"></div>'
             f'<span class="yl" style="bottom:{_pct(y(v))}">{_e(_tick_label(v, step, kind))}</span>' for v in ticks]
    return parts + [f'<span class="xl" style="left:{_pct(x(t))}">{_e(label)}</span>' for t, label in time_ticks(window)]


def _box(parts: Sequence[str], names: Sequence[str], colours: Mapping[str, str], by: str, y_title: str, kind: Kind,
         lo: float, hi: float, ticks: Sequence[float], height: int, extra: str = "") -> str:
    """The chart's box around the plot's ``parts``: the style sheet, its ``data-*`` description, the axis titles
    and the legend (``by``, a swatch per name); ``extra``: more ``data-*`` attributes (constants and numbers)."""
    legend = "".join(f'<span><i style="background:{colours[n]}"></i>{_e(n)}</span>' for n in names)
    label = _e(f"{y_title} per {by} over time (UTC), {len(names)} series")
    return (f'{STYLE}<div class="{CLASS}" role="img" aria-label="{label}" data-kind="{kind}" data-by="{_e(by)}" '
            f'data-y-title="{_e(y_title)}" data-x-domain="{lo:.0f} {hi:.0f}" '
            f'data-y-ticks="{" ".join(repr(v) for v in ticks)}"{extra}><span class="yt">{_e(y_title)}</span>'
            f'<div class="plot" style="height:{int(height)}px">{"".join(parts)}</div>'
            f'<div class="xt">time (UTC)</div><div class="legend"><b>{_e(by)}</b>{legend}</div></div>')


def stat_series(df: pd.DataFrame, by: str, window: Window, bin_width: timedelta,
                stats: Sequence[tuple[str, str, str]], *, y_title: str, per: float = 1.0, height: int = HEIGHT,
                colour: Mapping[str, str] | None = None, time_col: str = "time") -> str:
    """Several statistics of each ``by`` value over the window as HTML, one style each (p95 solid and max dotted,
    say). ``stats``: (column of ``df``, its label, a style: ``solid``,
    ``dotted`` or ``dashed`` (:data:`LINE_DASH`: a line, as the Vega-Lite lines without a point per bin; a value
    alone between gaps a dot), ``dot`` or ``ring``
    (:data:`POINT_SIZE`: points alone)). Values are divided by ``per`` (the unit goes in ``y_title``); a missing
    value leaves a gap. One column per bin, its tooltip a ``<series> <label>: <value>`` line per value, its
    ``data-s`` / ``data-v`` the series indexes and values and ``data-k`` the statistic of each (indexes into the
    box's ``data-stats``, the labels in order). The legend shows the ``by`` colours; the page's caption says which
    style is which statistic. Raises ValueError for an unknown style. Returns the HTML text."""
    unknown = [st for _, _, st in stats if st not in LINE_DASH and st not in POINT_SIZE]
    if unknown:
        raise ValueError(f"unknown styles {unknown}: use one of {[*LINE_DASH, *POINT_SIZE]}")
    cols = [c for c, _, _ in stats]
    # one pass over the frame for every statistic (series_rows formats each bin's text: ~9 ms a call on 384 rows)
    rows = series_rows(df.assign(**{c: df[c].astype("float64") / per for c in set(cols)}), by, bin_width,
                       value=cols[0], time_col=time_col, stacked=False, keep=[c for c in dict.fromkeys(cols[1:])
                                                                              if c != cols[0]])
    names = sorted(rows["series"].unique().tolist())
    colours = _colours(names, colour)
    lo, hi = epoch_ms(window[0]), epoch_ms(window[1])
    span = max(hi - lo, 1.0)
    rows = rows[(rows["t_end"] > lo) & (rows["t"] < hi)]
    records = []
    for m in rows.to_dict("records"):
        for k, c in enumerate(cols):
            v = float(m["value"] if c == cols[0] else m[c])
            if math.isfinite(v):
                records.append({"series": m["series"], "t": m["t"], "t_end": m["t_end"], "when": m["when"],
                                "value": v, "k": k})
    top_value = max((float(m["value"]) for m in records), default=0.0)
    ticks = nice_ticks(top_value if top_value > 0 else 0.0, "number")
    top = ticks[-1] or 1.0

    def x(t: float) -> float:
        return (min(max(t, lo), hi) - lo) / span * 100

    def y(v: float) -> float:
        return min(max(v, 0.0), top) / top * 100

    index = {n: i for i, n in enumerate(names)}
    parts = _axes(window, ticks, "number", x, y)
    runs = {(k, n): [[]] for k in range(len(stats)) for n in names}
    columns = []
    records.sort(key=lambda m: (m["t"], m["k"], m["series"]))
    for (t, t_end, when), group in itertools.groupby(records, key=lambda m: (m["t"], m["t_end"], m["when"])):
        g = list(group)
        for key in set(runs) - {(m["k"], m["series"]) for m in g}:  # a bin without a value breaks that line
            if runs[key][-1]:
                runs[key].append([])
        for m in g:
            runs[(m["k"], m["series"])][-1].append((x(t), y(float(m["value"]))))
        left, width = x(t), x(t_end) - x(t)
        lines = [f"bin (UTC): {when}"] + [f"{m['series']} {stats[m['k']][1]}: {_fmt_value(float(m['value']), 'number')}"
                                          for m in g]
        tip = f'<span class="tip{" rt" if left > 60 else ""}">{_e(chr(10).join(lines))}</span>'
        columns.append(f'<div class="m" style="left:{_pct(left)};width:calc({_pct(width)} - 1px)" data-t="{t:.0f}" '
                       f'data-t-end="{t_end:.0f}" data-s="{" ".join(str(index[m["series"]]) for m in g)}" '
                       f'data-v="{" ".join(repr(float(m["value"])) for m in g)}" '
                       f'data-k="{" ".join(str(m["k"]) for m in g)}">{tip}</div>')
    # the larger points first (a smaller point on the same spot stays visible), lines last among the images
    order = sorted(range(len(stats)), key=lambda k: -POINT_SIZE.get(stats[k][2], 0))
    for k in order:
        style = stats[k][2]
        for n in names:
            if any(runs[(k, n)]):
                parts.append(_line_image(runs[(k, n)], colours[n], int(height), line=style in LINE_DASH,
                                         dash=LINE_DASH.get(style), dot=POINT_SIZE.get(style, 5),
                                         lone_dots=style in LINE_DASH))
    labels = " ".join(_e(lab) for _, lab, _ in stats)
    return _box(parts + columns, names, colours, by, y_title, "number", lo, hi, ticks, height,
                extra=f' data-stats="{labels}"')


def show(key: str, df: pd.DataFrame, by: str, window: Window, bin_width: timedelta, *,
         stats: Sequence[tuple[str, str, str]] | None = None, **options) -> None:
    """Draw :func:`time_series` of ``(df, by, window, bin_width, **options)`` across the container, keyed ``key``
    (container class ``st-key-<key>``, as ``charts.show`` keys a Vega chart); with ``stats``, :func:`stat_series`
    of ``(df, by, window, bin_width, stats, **options)``. This module's one ``st.html`` call: its body is always one
    of the two, which escape every text they hold."""
    import streamlit as st

    with st.container(key=key):
        st.html(_markup(df, by, window, bin_width, stats, options))


def _markup(df: pd.DataFrame, by: str, window: Window, bin_width: timedelta,
            stats: Sequence[tuple[str, str, str]] | None, options: Mapping) -> str:
    if stats is None:
        return time_series(df, by, window, bin_width, **options)
    return stat_series(df, by, window, bin_width, stats, **options)
