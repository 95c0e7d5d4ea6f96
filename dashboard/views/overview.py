"""Overview: one tile per signal (value, change against the previous window, trend over the window, the
same signal from other sources), and the per-operation health table."""

from __future__ import annotations

import streamlit as st

from dashboard import sources, sparkline, ui
from dashboard.compute import (
    duration_unit,
    format_delta,
    format_value,
    health_table,
    in_unit,
    tile_trend,
    tiles,
)
from dashboard.constants import SIGNALS, SignalKind
from dashboard.views.stuck import STUCK_MEANING

TITLE = "Overview"
_count = st.column_config.NumberColumn
HEALTH_COLUMN_CONFIG = {
    # short labels and explicit widths: service, operation, health, reasons and the verdict's inputs fit a
    # 1400 px window without horizontal scrolling (the remaining counts follow on the right)
    "service": st.column_config.TextColumn("service", width=80),
    "operation": st.column_config.TextColumn("operation", width=140),
    "health": st.column_config.TextColumn("health", width=80, help="CRITICAL: stuck keys, ambiguous commits or "
                                          "poison rate >= 1%. WARNING: conflicts, timeout-budget aborts, store "
                                          "errors or retry rate >= 5%."),
    "reasons": st.column_config.TextColumn("reasons", width=280),
    "stuck_keys": _count("stuck", width=55, help="Keys stuck (expired IN_PROGRESS) at the window end."),
    "ambiguous_commits": _count("ambiguous", width=80, help="Ambiguous commits."),
    "poison_rate": _count("poison", format="percent", width=65, help="Poison messages / received."),
    "retry_rate": _count("retry", format="percent", width=60, help="Retryable failures / received."),
    "conflicts": _count("conflicts", width=70, help="Payload conflicts."),
    "timeout_budget_aborts": _count("t/o aborts", width=75, help="Timeout-budget aborts."),
    "store_errors": _count("store err", width=70, help="Idempotency store errors."),
    "received": _count("received", width=75),
    "in_progress_collisions": _count("in-progress", width=85, help="In-progress collisions."),
    "retryable_failures": _count("retryable", width=75),
    "permanent_failures": _count("permanent", width=80),
    "poison_messages": _count("poison msgs", width=85),
}


_SPARK_KIND = {SignalKind.COUNT: "count", SignalKind.RATE: "rate", SignalKind.AGE: "duration"}
SPARK_CHART = {"count": "area", "rate": "line", "duration": "line"}
"""Sparkline type per tile kind. Counts are filled to zero (an area), not bars (one SVG element per bin)."""
SPARK_AGG = {"count": "sum", "rate": "max", "duration": "max"}
"""How consecutive bins merge when a window has more than ``sparkline.MAX_POINTS`` bins: counts add up, rates and
ages keep their largest bin (a one-bin spike stays visible at its height)."""
TREND_HELP = {
    "count": "Trend: one point per bin of the window, zero to the largest bin (more than {n} bins: each point "
             "sums consecutive bins).",
    "rate": "Trend: the rate per bin of the window, zero to the largest bin (more than {n} bins: each point is the "
            "largest of consecutive bins).",
    "duration": "Trend: the largest age per bin of the window, zero to the largest bin (more than {n} bins: each "
                "point is the largest of consecutive bins).",
}


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
    st.subheader("Health per operation")
    h = health_table(ds, f)
    if h.empty:
        st.info("No emitter records in this window and filter selection.")
    else:
        age, unit = in_unit(h["max_record_age_ms"])
        h = h.assign(max_record_age_ms=age)
        ui.table(h, key="health", **HEALTH_COLUMN_CONFIG,
                 max_record_age_ms=_count(f"max record age ({unit})", format="%.1f" if unit != "ms" else "%.0f"))
    ui.footer(TITLE)


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
        lib, _ = sources.library_series(ds, sig.outcome.value, f)  # type: ignore[union-attr]
        trend = lib.groupby("time", as_index=False)["value"].sum()
        kind = "count"
    flat = delta is not None and abs(delta) < 1e-12
    spark = _spark(trend, kind)
    if kind is not None:
        help_text += " " + TREND_HELP[kind].format(n=sparkline.MAX_POINTS)
    # an increase is bad for every signal (inverse colours); no change is grey without an arrow
    st.metric(label, shown, delta_text, delta_color="off" if flat else "inverse",
              delta_arrow="off" if flat else "auto", help=help_text)
    if spark is not None:
        k = kind or "count"
        points = sparkline.bucket(spark, SPARK_AGG[k])  # type: ignore[arg-type]
        try:
            image = sparkline.svg(points, SPARK_CHART[k])  # type: ignore[arg-type]
        except ValueError as exc:  # a negative or non-finite value, kept as logged (odd or hostile lines)
            st.caption(f"no trend drawn: {exc}")
        else:
            st.image(image, width="stretch", alt=f"trend: {len(points)} points from {min(points):g} to "
                                                  f"{max(points):g}")
    elif sig.kind is not SignalKind.STUCK:
        st.caption("no trend: nothing in this window")
    for r in others:
        d = "" if r.previous is None else f" (Δ {_count_delta(r.value - r.previous)})"
        st.caption(f"{ui.md_escape(r.source)} metrics: {r.value:,.0f}{d}")
    if stuck_scan is not None:
        st.caption(f"{sources.STUCK_SCAN_LABEL}: {stuck_scan:,} stuck at scan time")
    st.page_link(sig.page, label="Details")


def _spark(trend, kind: str | None) -> list[float] | None:
    """The tile's trend: one value per bin over the window (gaps as 0), in the tile's unit: percent for a rate,
    the unit of the largest value for a duration. None when all zero."""
    if trend is None or not len(trend) or trend["value"].fillna(0).abs().sum() == 0:
        return None
    v = trend["value"].astype(float).fillna(0.0)
    if kind == "rate":
        v = v * 100
    elif kind == "duration":
        v = v / duration_unit(float(v.max()))[1]
    return [round(x, 4) for x in v.tolist()]


def _count_delta(d: float | None) -> str | None:
    return None if d is None else f"{d:+,.0f}"
