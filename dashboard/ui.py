"""Streamlit layout helpers shared by the pages: context, filters, safe text, tables, charts.

Safety rule: everything that comes from logs (keys, ids, service/operation names, error
codes, messages) is untrusted. It is shown only through ``st.dataframe`` (rendered as
text by the grid), through :func:`md_escape` inside markdown, as plotly text escaped by
``dashboard.charts.text``, or as widget options (plain text). No call in the dashboard uses
``unsafe_allow_html`` or ``st.html``.
"""

from __future__ import annotations

import functools
import os
import re
import string
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import streamlit as st

from dashboard import charts, cloudwatch_panel, urlstate
from dashboard import links as id_links
from dashboard.compute import Filters, choose_bin, default_preset, dimension_values, preset_window
from dashboard.constants import CUSTOM_RANGE, ENV_DATA_DIR, ENV_REFRESH_S, RANGE_PRESETS, REFRESH_S
from dashboard.data import Dataset, DataStatus, fingerprint, load_dataset, manifest_summary, skipped_lines

__all__ = [
    "RENDERED_MARK",
    "Context",
    "Target",
    "build_context",
    "chart",
    "context",
    "footer",
    "lazy_expander",
    "md_escape",
    "no_data",
    "page_header",
    "set_window",
    "table",
]

_CTX = "_idemwatch_ctx"

RENDERED_MARK = "rendered in"
"""Text of the footer caption each page writes last (the browser test and benchmark wait for it)."""
_MD_SPECIALS = re.compile("([" + re.escape(string.punctuation) + "])")


@dataclass(frozen=True)
class Context:
    """What a page needs: the dataset, the sidebar's filters, and when the rerun started
    (``time.perf_counter()``, for the footer's render time)."""

    ds: Dataset
    filters: Filters
    started: float


@dataclass(frozen=True)
class _Run:
    ds: Dataset
    filters: Filters | None
    started: float


def md_escape(text: object) -> str:
    """Untrusted text -> markdown that renders as exactly that text.

    Backslash-escapes every ASCII punctuation character (CommonMark allows it for all of
    them), which also defuses Streamlit's ``:color[...]`` directives, ``$`` LaTeX and
    emoji shortcodes; newlines become spaces.
    """
    s = "" if text is None else str(text)
    return _MD_SPECIALS.sub(r"\\\1", s.replace("\r", " ").replace("\n", " "))


def data_dir() -> Path:
    """The data directory: ``$IDEMWATCH_DATA`` (set by ``idemwatch dashboard``), else ``--data`` after ``--``."""
    env = os.environ.get(ENV_DATA_DIR)
    if env:
        return Path(env)
    import sys

    argv = sys.argv[1:]
    if "--data" in argv and argv.index("--data") + 1 < len(argv):
        return Path(argv[argv.index("--data") + 1])
    return Path("idemwatch-data")


def build_context() -> Dataset:
    """Load the data (cached on the manifest) and draw the sidebar filters. Called once per
    rerun by ``app.py`` before the page runs; pages read the result with :func:`context`.
    With a CloudWatch source configured, also refreshes stale data first and draws the
    source panel (``dashboard.cloudwatch_panel``)."""
    t0 = time.perf_counter()
    urlstate.begin()
    d = data_dir()
    cw = cloudwatch_panel.source()  # None unless `idemwatch dashboard --cloudwatch-...` configured one
    if cw is not None:
        cloudwatch_panel.auto_refresh(cw, d)  # before loading: a refresh is seen by this very run
    ds = load_dataset(d)
    slot = st.sidebar.container() if cw is not None else None  # the source box goes above the filters
    f = _sidebar(ds) if ds.ok else None
    if cw is not None:
        cloudwatch_panel.panel(cw, ds.data_dir, ds.manifest, slot)
    every = refresh_interval_s()
    if every:
        with st.sidebar:
            _watch(d, fingerprint(d) if ds.data_dir.is_dir() else "", cw, every)
    st.session_state[_CTX] = _Run(ds, f, t0)
    return ds


def _fragment_run() -> bool:
    """True while Streamlit runs only a fragment (a timer tick), not the whole page."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def refresh_interval_s() -> float:
    """Seconds between checks for new data (``$IDEMWATCH_REFRESH_S``, default :data:`REFRESH_S`; 0 = never)."""
    try:
        return max(0.0, float(os.environ.get(ENV_REFRESH_S, REFRESH_S)))
    except ValueError:
        return REFRESH_S


def _watch(d: Path, fp: str, cw, every: float) -> None:
    """Rerun the whole page when the data directory changed (its fingerprint: manifest bytes and table file
    stats, a few ``stat`` calls) or, with a CloudWatch source, when a collection is due. A fragment on a timer:
    between changes only this check runs, nothing is redrawn."""

    @st.fragment(run_every=every)
    def check() -> None:
        if not _fragment_run():  # the page's own run just loaded the data: nothing to compare yet
            return
        now = fingerprint(d) if d.is_dir() else ""
        if now != fp or (cw is not None and cloudwatch_panel.refresh_is_due(cw, d)):
            # a CloudWatch collection happens at the start of the app run (cloudwatch_panel.auto_refresh)
            st.rerun(scope="app")

    check()


def context() -> Context:
    """The current rerun's context; shows how to get data and stops the page when there is none."""
    run = st.session_state.get(_CTX)
    if run is None:
        build_context()
        run = st.session_state[_CTX]
    if not run.ds.ok or run.filters is None:
        no_data(run.ds)
        st.stop()
    return Context(run.ds, run.filters, run.started)


RANGE_CODES: dict[str, str] = {
    label: ("all" if span is None else f"{int(span.total_seconds() // 60)}m" if span < timedelta(hours=1)
            else f"{int(span.total_seconds() // 3600)}h" if span <= timedelta(days=1) else f"{span.days}d")
    for label, span in RANGE_PRESETS} | {CUSTOM_RANGE: "custom"}
"""Time-range label -> its ``range`` query parameter value (``15m``, ``24h``, ``7d``, ``all``, ``custom``)."""
_URL_TIME = "%Y-%m-%dT%H:%M"


def _decode_window(raw: list[str]):
    try:
        lo, hi = (datetime.strptime(x, _URL_TIME) for x in raw[0].split("/", 1))
    except ValueError:
        return urlstate.INVALID
    return (lo, hi) if hi > lo else urlstate.INVALID


def _sidebar(ds: Dataset) -> Filters:
    assert ds.start is not None and ds.end is not None
    sb = st.sidebar
    labels = [p[0] for p in RANGE_PRESETS] + [CUSTOM_RANGE]
    by_code = {c: label for label, c in RANGE_CODES.items()}
    urlstate.bind("f_range", "range", default=default_preset(ds.start, ds.end),
                  decode=lambda raw: by_code.get(raw[0], urlstate.INVALID), encode=lambda v: [RANGE_CODES[v]],
                  valid=urlstate.one_of(labels))
    choice = sb.selectbox("Time range", labels, key="f_range",
                          help="Relative to the end of the collected data, not to the wall clock.")
    if choice == CUSTOM_RANGE:
        whole = (ds.start, ds.end)
        urlstate.bind("f_custom", "window", default=whole, decode=_decode_window,
                      encode=lambda v: [f"{v[0]:{_URL_TIME}}/{v[1]:{_URL_TIME}}"],
                      valid=lambda v: (max(v[0], ds.start), min(v[1], ds.end)) if min(v[1], ds.end) > max(
                          v[0], ds.start) else urlstate.INVALID)
        lo, hi = sb.slider("Window (UTC)", min_value=ds.start, max_value=ds.end,
                           step=pd.Timedelta(minutes=1).to_pytimedelta(), format="MM-DD HH:mm", key="f_custom")
        start, end = (lo, hi) if hi > lo else (ds.start, ds.end)
    else:
        span = dict(RANGE_PRESETS)[choice]
        start, end = preset_window(ds.start, ds.end, span)
    services = tuple(_multi(sb, "Service", dimension_values(ds, "service"), "f_service", "service"))
    operations = tuple(_multi(sb, "Operation", dimension_values(ds, "operation", services), "f_operation",
                              "operation"))
    sources = tuple(_multi(sb, "Event source", dimension_values(ds, "event_source"), "f_source", "source"))
    b = choose_bin(start, end)
    sb.caption(f"{_fmt(start)} – {_fmt(end)} UTC · bin {_fmt_bin(b)}")
    with sb.container(key="window-steps", horizontal=True):
        st.button("◀", key="step-earlier", on_click=_step, args=(-1,), disabled=start <= ds.start,
                  help="Earlier: move the window back by half its span.")
        st.button("Zoom out", key="step-out", on_click=_step, args=(0,), disabled=start <= ds.start and end >= ds.end,
                  help="Double the window around its middle. Zoom in: drag across a chart.")
        st.button("▶", key="step-later", on_click=_step, args=(1,), disabled=end >= ds.end,
                  help="Later: move the window forward by half its span.")
    skipped = skipped_lines(ds.manifest)
    if skipped:
        sb.warning(f"The collector skipped {skipped:,} log line(s) it could not parse; see Data below.")
    if ds.problems:
        sb.warning(f"{len(ds.problems)} table problem(s); see Data below.")
    with sb.expander("Data"):
        st.caption(md_escape(ds.data_dir))
        for k, v in manifest_summary(ds.manifest).items():
            st.caption(f"{k}: {md_escape(v)}")
        st.caption(f"trail rows: {ds.trail_rows:,}")
        for p in ds.problems:
            st.caption(md_escape(p))
    return Filters(start, end, services, operations, sources)


def _multi(where, label: str, options: list[str], key: str, param: str) -> list[str]:
    """A sidebar multiselect bound to a repeated query parameter (values no longer offered are dropped)."""
    decode, encode = urlstate.many()
    urlstate.bind(key, param, default=[], decode=decode, encode=encode, valid=urlstate.among(options))
    return where.multiselect(label, options, key=key, placeholder="All")


def _fmt(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M")


def _fmt_bin(b) -> str:
    m = int(b.total_seconds() // 60)
    return f"{m} min" if m < 60 else f"{m // 60} h" if m < 1440 else f"{m // 1440} d"


GET_DATA = """\
# simulate the demo fleet and collect it (no AWS account needed)
idemwatch demo --out {d} --no-serve
# or collect your own Lambda logs (CloudWatch export, `aws logs tail`, filter-log-events JSON, ...)
idemwatch collect local path/to/logs/ --out {d}
# or query CloudWatch Logs Insights directly
idemwatch collect cloudwatch --log-group-prefix /aws/lambda/ --since 24h --out {d}
# then
idemwatch dashboard --data {d}"""


def no_data(ds: Dataset) -> None:
    """Explain why nothing can be shown and how to get data (never a traceback)."""
    why = {
        DataStatus.NO_DIR: "The data directory does not exist.",
        DataStatus.NO_TABLES: "The data directory holds no collected tables.",
        DataStatus.EMPTY: "The collected tables are empty: no emitter records in the collected logs.",
    }.get(ds.status, "No data.")
    st.title("No data to show yet")
    st.info(why)
    st.text(f"Data directory: {ds.data_dir}")
    st.markdown("Get data with one of these commands:")
    st.code(GET_DATA.format(d=ds.data_dir), language="bash")
    for p in ds.problems:
        st.caption(md_escape(p))


def page_header(title: str, description: str | None = None) -> None:
    st.title(title)
    if description:
        st.caption(description)


def lazy_expander(label: str, *, key: str, param: str) -> Any:
    """A collapsed expander keyed ``key`` whose content the page draws only while it is open (the returned
    container's ``.open``): closed, it costs the browser nothing. Opening or closing it reruns the page, and its
    state is in the URL (``<param>=1`` while open). For secondary figures and tables of a page."""
    decode, encode = urlstate.flag()
    urlstate.bind(key, param, default=False, decode=decode, encode=encode)
    return st.expander(label, key=key, on_change="rerun")


def footer(page: str) -> None:
    """Last element of every page: page name and render time (what the browser test waits for)."""
    urlstate.publish()
    ctx = st.session_state.get(_CTX)
    ms = (time.perf_counter() - ctx.started) * 1000 if ctx else 0.0
    st.caption(f"idemwatch · {page} · {RENDERED_MARK} {ms:.0f} ms")


Target = Callable[[pd.Series], "tuple[str, dict[str, list[str]]] | None"]
"""A table link: row -> (page file, query parameters) of the page a click on that cell opens, or None."""


def table(df: pd.DataFrame, *, key: str, columns: dict[str, Any] | None = None, shown: Sequence[str] | None = None,
          links: Mapping[str, Target] | None = None, height: int | Literal["auto"] = "auto", ids: bool = True) -> None:
    """A read-only table (``st.dataframe``: the grid renders every cell as text, safe for untrusted values) in a
    container keyed ``table-<key>`` (CSS class ``st-key-table-<key>``, which tests address).

    ``columns``: column name -> ``st.column_config`` entry (label, unit, width, help). ``shown``: the columns drawn
    by default, in order (None: all); the others are hidden columns, one click away in the grid's own column menu
    (the eye in its toolbar), so a table that fits the window never puts a column out of reach. ``links``: column -> :data:`Target`; a click on
    such a cell opens its page in this tab (``st.switch_page``: one history entry, the query parameters carrying
    the time range and filters), so those cells read as links (their column help says where they lead). ``ids``:
    every id column (``dashboard.links.ID_FIELDS``) links to the Events explorer.
    """
    if ids:
        columns = id_links.id_columns(df, columns)
        links = {**id_links.explorer_targets(df), **(links or {})}
    cfg: dict[str, Any] = {c: ({"label": v} if isinstance(v, str) else dict(v or {})) for c, v in (columns or {}).items()}
    order = list(df.columns)
    if shown is not None:
        # the others are hidden, not dropped: the grid's column menu (the eye in its toolbar) shows any of them
        first = [c for c in shown if c in df.columns]
        order = first + [c for c in df.columns if c not in first]
        for c in order[len(first):]:
            cfg[c] = {**cfg.get(c, {}), "hidden": True}
    with st.container(key=f"table-{key}"):
        if not links:
            st.dataframe(df, hide_index=True, width="stretch", height=height, column_config=cfg or None,
                         column_order=order)
            return
        event = st.dataframe(df, hide_index=True, width="stretch", height=height, column_config=cfg or None,
                             column_order=order, on_select="rerun", selection_mode="single-cell",
                             key=f"grid-{key}")
    cells = event.selection.get("cells", []) if event else []
    for row, col in cells:
        target = links.get(col)
        hit = target(df.iloc[int(row)]) if target is not None else None
        if hit is not None:
            st.switch_page(hit[0], query_params=hit[1])


CHART_CONFIG: dict[str, Any] = {"displaylogo": False, "scrollZoom": False,
                                "modeBarButtonsToRemove": list(charts.MODEBAR_REMOVE)}
"""Plotly's options for every chart: no scroll zoom (the wheel scrolls the page), no browser-only zoom or pan."""


def chart(fig: Any, key: str, *, zoom: bool = True, static: bool = False) -> None:
    """Draw a plotly figure (``dashboard.charts``) across its container, keyed ``key`` (CSS class ``st-key-<key>``),
    themed like the app (light or dark).

    ``zoom``: dragging across the chart selects a time span and the page's time range becomes that span
    (:func:`set_window`: the sidebar shows "Custom range", the URL changes, Back returns to the previous range).
    Streamlit passes plotly's selection events on to the script, not its zoom (relayout) events, so the drag is a
    horizontal box selection rather than plotly's own zoom. ``zoom=False``: a chart outside the page's time range
    (the alarm backtest) keeps plotly's own zoom and pan, in the browser. ``static``: no interaction at all (tile
    sparklines).
    """
    with st.container(key=key):
        if static or not zoom:
            config = {"staticPlot": True} if static else {"displaylogo": False, "scrollZoom": False}
            st.plotly_chart(fig, width="stretch", theme="streamlit", config=config, key=f"{key}-plot")
            return
        run = st.session_state.get(_CTX)
        f = run.filters if run is not None else None
        # a new widget per window: the selection that made this window is not carried onto its chart
        wkey = f"{key}-zoom" if f is None else f"{key}-zoom-{f.start:%Y%m%d%H%M}-{f.end:%Y%m%d%H%M}"
        st.plotly_chart(fig, width="stretch", theme="streamlit", config=CHART_CONFIG, key=wkey,
                        on_select=functools.partial(_zoomed, wkey), selection_mode="box")


def _zoomed(wkey: str) -> None:
    """Selection callback of a chart: the selected span becomes the page's time range."""
    run = st.session_state.get(_CTX)
    state = st.session_state.get(wkey)
    if run is None or run.ds.start is None or run.ds.end is None or state is None:
        return
    w = charts.selected_window(state.get("selection"), (run.ds.start, run.ds.end))
    if w is not None:
        set_window(*w)


def set_window(start: datetime, end: datetime) -> None:
    """Make [start, end) (naive UTC, whole minutes, inside the data) the time range: "Custom range" in the
    sidebar. Call it from a widget callback (before the sidebar is drawn)."""
    st.session_state["f_range"] = CUSTOM_RANGE
    st.session_state["f_custom"] = (start, end)


def _step(direction: int) -> None:
    """The sidebar's Earlier / Zoom out / Later buttons: move the window by half its span (``direction`` -1 or
    +1), or (0) double it around its middle; clipped to the data."""
    run = st.session_state.get(_CTX)
    if run is None or run.filters is None or run.ds.start is None or run.ds.end is None:
        return
    f, lo_b, hi_b = run.filters, run.ds.start, run.ds.end
    span = f.end - f.start
    if direction == 0:
        lo, hi = f.start - span / 2, f.end + span / 2
    else:
        lo, hi = f.start + direction * span / 2, f.end + direction * span / 2
        if lo < lo_b:
            lo, hi = lo_b, min(hi_b, lo_b + span)
        if hi > hi_b:
            lo, hi = max(lo_b, hi_b - span), hi_b
    lo, hi = max(lo, lo_b), min(hi, hi_b)
    lo = pd.Timestamp(lo).floor("min").to_pydatetime()
    hi = pd.Timestamp(hi).ceil("min").to_pydatetime()
    if hi > lo:
        set_window(lo, hi)
