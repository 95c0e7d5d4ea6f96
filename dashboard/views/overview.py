"""Overview: one tile per signal (value, change against the previous window, trend over the window, the
same signal from other sources), and the per-operation health table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import charts, lambda_health, sources, ui, urlstate
from dashboard.compute import (
    covers,
    duration_unit,
    format_delta,
    format_value,
    health_table,
    in_unit,
    tile_trend,
    tiles,
)
from dashboard.constants import POISON_RATE_CRITICAL, RETRY_RATE_WARNING, SIGNAL_BY_KEY, SIGNALS, SignalKind
from dashboard.views.stuck import STUCK_MEANING

TITLE = "Overview"
_col = st.column_config


def _to(key: str, count: str | None = None) -> ui.Target:
    """Link of a health-table cell: the page of signal ``key``, filtered to the row's service and operation, same
    time range and other filters; none for a zero count (nothing to see there)."""

    def target(row):
        if count is not None and not row[count]:
            return None
        return SIGNAL_BY_KEY[key].page, urlstate.params(service=[str(row["service"])],
                                                        operation=[str(row["operation"])])

    return target


def _n(label: str, help: str, width: int = 65) -> Any:
    return _col.NumberColumn(label, help=help, format="localized", width=width)


HEALTH_COLUMNS = {
    "service": _col.TextColumn("service", width=100),
    "operation": _col.TextColumn("operation", width=140),
    "health": _col.TextColumn(
        "health", width=80,
        help=f"CRITICAL: stuck keys, ambiguous commits or poison rate >= {POISON_RATE_CRITICAL:.0%}. WARNING: "
             f"conflicts, timeout-budget aborts, store errors or retry rate >= {RETRY_RATE_WARNING:.0%}."),
    "reasons": _col.TextColumn("reasons", width=250, help="What made the verdict."),
    "received": _n("received", "Records received in the window."),
    "succeeded": _n("succeeded", "Records that succeeded in the window."),
    "stuck_keys": _n("stuck keys", "Keys stuck (expired IN_PROGRESS) at the window end. Click: Stuck keys."),
    "ambiguous_commits": _n("ambiguous commits", "Ambiguous commits in the window."),
    "poison_rate": _col.NumberColumn("poison rate", format="percent", width=75,
                                     help="Poison messages / received. Click: Poison rate, this operation."),
    "retry_rate": _col.NumberColumn("retry rate", format="percent", width=65,
                                    help="Retryable failures / received. Click: Retries, this operation."),
    "conflicts": _n("conflicts", "Payload conflicts. Click: Payload conflicts, this operation."),
    "timeout_budget_aborts": _n("timeout aborts", "Timeout-budget aborts. Click: Timeout-budget aborts."),
    "store_errors": _n("store errors", "Idempotency store errors in the window."),
    "duplicates": _n("duplicates", "Duplicates completed. Click: Duplicates, this operation."),
    "in_progress_collisions": _n("in-progress collisions", "Click: In-progress collisions, this operation."),
    "retryable_failures": _n("retryable failures", "Retryable failures in the window."),
    "permanent_failures": _n("permanent failures", "Permanent failures in the window."),
    "poison_messages": _n("poison messages", "Poison messages in the window."),
    "event_source": _col.TextColumn("event source", width=120),
}
"""Column configs of the health table (every column of ``compute.HEALTH_COLUMNS``); max record age is added per
render, in the unit of the largest age."""
HEALTH_SHOWN = ("health", "operation", "received", "stuck_keys", "poison_rate", "retry_rate", "conflicts", "reasons")
"""The health table's default columns: the verdict and its inputs first; the rest hidden, one click away in the grid's column menu."""
HEALTH_LINKS = {"stuck_keys": _to("stuck", "stuck_keys"), "poison_rate": _to("poison", "poison_messages"),
                "retry_rate": _to("retries", "retryable_failures"), "conflicts": _to("conflicts", "conflicts"),
                "timeout_budget_aborts": _to("timeout_aborts", "timeout_budget_aborts"),
                "duplicates": _to("duplicates", "duplicates"),
                "in_progress_collisions": _to("in_progress", "in_progress_collisions"),
                "max_record_age_ms": _to("iterator_age")}
HEALTH_HELP = ("One row per operation, worst verdict first; every figure is for the selected window. Hover a header "
               "for its meaning; a click on a count opens its signal's page filtered to that operation (same time "
               "range). More columns (service, every outcome count, max record age): the eye in the table's toolbar.")
TREND_HELP = {
    "count": "Trend: the count per bin of the window, from zero.",
    "rate": "Trend: the rate per bin of the window, from zero.",
    "duration": "Trend: the largest age per bin of the window, from zero.",
}
_SPARK_KIND = {SignalKind.COUNT: "count", SignalKind.RATE: "rate", SignalKind.AGE: "duration"}


def render() -> None:
    ctx = ui.context()
    ds, f = ctx.ds, ctx.filters
    ui.page_header(TITLE, "Idempotency health of at-least-once handlers. Each tile: the value in the window, Δ = "
                          "change against the previous window of the same length (shown when the collected data "
                          "covers it; red means worse), its trend over the window, and the same signal from other "
                          "sources (Powertools metrics, the idempotency table scan) where collected. Stuck keys is "
                          "a state at the end of the window (no Δ, no trend).")
    ts = tiles(ds, f, SIGNALS)
    emitter = not ds.table("outcomes").empty  # a Powertools-only fleet has no emitter record
    for row in (ts[:4], ts[4:]):
        cols = st.columns(4)
        for col, t in zip(cols, row):
            with col, st.container(border=True, key=f"tile-{t.signal.key}"):
                _tile(ds, f, t, emitter)
    _lambda(ds, f)
    st.subheader("Health per operation", help=HEALTH_HELP)
    h = health_table(ds, f)
    if h.empty:
        st.info("No emitter records in this window and filter selection.")
    else:
        age, unit = in_unit(h["max_record_age_ms"])
        cfg = HEALTH_COLUMNS | {"max_record_age_ms": _col.NumberColumn(
            f"max record age ({unit})", format="%.0f" if unit == "ms" else "%.1f", width=110,
            help="The largest record age (iterator age) of stream and queue sources; empty for other sources. "
                 "Click: Max iterator age.")}
        ui.table(h.assign(max_record_age_ms=age), key="health", columns=cfg, shown=HEALTH_SHOWN, links=HEALTH_LINKS)
    ui.footer(TITLE)


def _lambda(ds, f) -> None:
    """The Lambda platform's view of the window (REPORT lines): invocations, timeouts, cold starts; with the window
    before for comparison when the data covers it."""
    t = lambda_health.totals(ds, f)
    if t["invocations"] is None:
        return
    prev = lambda_health.totals(ds, f.previous()) if covers(ds, f.previous()) else None
    with st.container(border=True, key="tile-lambda"):
        cols = st.columns([1, 1, 1, 1], vertical_alignment="center")
        for col, name, label, help_text in (
                (cols[0], "invocations", "Lambda invocations", "REPORT lines in the window."),
                (cols[1], "timeouts", "Lambda timeouts", "REPORT lines with Status: timeout in the window: the "
                                                         "handler ran out of time (its idempotency key may be stuck)."),
                (cols[2], "cold_starts", "Cold starts", "REPORT lines with an Init Duration in the window.")):
            v = t[name] or 0.0
            d = None if prev is None else v - (prev[name] or 0.0)
            flat = d is not None and abs(d) < 1e-12
            col.metric(label, f"{v:,.0f}", _count_delta(d), help=help_text,
                       delta_color="off" if flat or name == "invocations" else "inverse",
                       delta_arrow="off" if flat else "auto")
        cols[3].page_link("app_pages/lambda_health.py", label="Lambda health", query_params=urlstate.params())


def _tile(ds, f, t, emitter: bool) -> None:
    """One tile: the emitter's value (or, on a fleet without the emitter, the first other source's), its trend
    and the readings of the other sources, each labelled with its source."""
    sig = t.signal
    others = [] if sig.outcome is None else sources.readings(ds, sig.outcome.value, f)
    stuck_scan = sources.table_stuck_count(ds) if sig.kind is SignalKind.STUCK else None
    help_text = STUCK_MEANING if sig.kind is SignalKind.STUCK else sig.description
    label, trend, kind = sig.title, None, _SPARK_KIND.get(sig.kind)
    if emitter or not others:
        shown, delta, delta_text = format_value(sig, t.value), t.delta, format_delta(sig, t.delta)
        if emitter:
            trend = tile_trend(ds, sig, f)
        elif stuck_scan is not None:  # the scan is the only source of stuck keys here
            label, shown, stuck_scan = f"{sig.title} · DynamoDB scan", f"{stuck_scan:,}", None
        else:  # nothing in this data measures it: say so instead of showing a zero
            shown, delta, delta_text = "–", None, None
            help_text += " No source in this data measures it (it needs the idemwatch emitter)."
    else:  # no emitter record at all: the tile shows the first library's count (a count, also for a rate)
        first = others.pop(0)
        label = f"{sig.title} · {first.source}"
        delta = None if first.previous is None else first.value - first.previous
        shown, delta_text = f"{first.value:,.0f}", _count_delta(delta)
        lib, _ = sources.library_series(ds, sig.counted, f)
        trend = lib.groupby("time", as_index=False)["value"].sum()
        kind = "count"
    flat = delta is not None and abs(delta) < 1e-12
    if kind is not None:
        help_text += " " + TREND_HELP[kind]
    # an increase is bad for every signal (inverse colours); no change is grey without an arrow
    st.metric(label, shown, delta_text, delta_color="off" if flat else "inverse",
              delta_arrow="off" if flat else "auto", help=help_text)
    spark = _spark(trend, kind)
    if spark is not None:
        ui.chart(charts.sparkline(spark[0], spark[1], kind="count" if kind == "count" else "number",
                                  colour=SPARK_COLOUR, window=(f.start, f.end)), key=f"spark-{sig.key}", static=True)
    elif sig.kind is not SignalKind.STUCK:
        st.caption("no trend: nothing in this window")
    for r in others:
        d = "" if r.previous is None else f" (Δ {_count_delta(r.value - r.previous)})"
        st.caption(f"{ui.md_escape(r.source)} metrics: {r.value:,.0f}{d}")
    if stuck_scan is not None:
        st.caption(f"{sources.STUCK_SCAN_LABEL}: {stuck_scan:,} stuck at scan time")
    st.page_link(sig.page, label="Details", query_params=urlstate.params())


SPARK_COLOUR = "#636EFA"
"""The trend's colour (plotly's first), on the light and the dark theme alike."""


def _spark(trend, kind: str | None) -> tuple[list, list[float]] | None:
    """The tile's trend: (bin starts, one value per bin over the window, gaps as 0) in the tile's unit: percent for
    a rate, the unit of the largest value for a duration. None when every bin is 0. A value as logged is drawn as
    it is (a negative age from an odd clock: below the zero line); only a non-finite one becomes 0."""
    if trend is None or not len(trend):
        return None
    v = pd.to_numeric(trend["value"], errors="coerce").astype(float)
    v = v.where(np.isfinite(v), 0.0)
    if not v.abs().sum():
        return None
    if kind == "rate":
        v = v * 100
    elif kind == "duration":
        v = v / duration_unit(float(v.abs().max()))[1]
    return trend["time"].tolist(), v.tolist()


def _count_delta(d: float | None) -> str | None:
    return None if d is None else f"{d:+,.0f}"
