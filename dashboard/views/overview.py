"""Overview: one tile per signal (value, change against the previous window, trend over the window, the
same signal from other sources), and the per-operation health table."""

from __future__ import annotations

import streamlit as st

from dashboard import htmltable, sources, sparkline, ui, urlstate
from dashboard.compute import (
    duration_unit,
    format_delta,
    format_value,
    health_table,
    in_unit,
    tile_trend,
    tiles,
)
from dashboard.constants import POISON_RATE_CRITICAL, RETRY_RATE_WARNING, SIGNALS, Health, SignalKind
from dashboard.views.stuck import STUCK_MEANING

TITLE = "Overview"


_int = htmltable.fmt_int
_pct = htmltable.fmt_percent(2)


def _to(page: str, count: str | None = None):
    """Link of a health-table cell: the signal page served at ``page``, filtered to the row's service and
    operation, same time range; none for a zero count (nothing to see there) or a row without both names."""

    def link(row) -> str | None:
        if count is not None and not row[count]:
            return None
        if htmltable.is_missing(row["service"]) or htmltable.is_missing(row["operation"]):
            return None
        return urlstate.link(page, service=[str(row["service"])], operation=[str(row["operation"])])

    return link


_C = htmltable.Column
HEALTH_BADGE = {Health.CRITICAL.value: "red", Health.WARNING.value: "orange", Health.OK.value: "green"}
HEALTH_TABLE = [
    # the row's identity, verdict and volume (received, succeeded), every input of the verdict, the reasons, then
    # the other counts: all of it up to the reasons fits a 1440 px window (the rest scrolls sideways). A count links
    # to its signal's page, filtered to the operation.
    _C("service", "service"),
    _C("operation", "operation"),
    _C("health", "health", badge=HEALTH_BADGE,
       help=f"CRITICAL: stuck keys, ambiguous commits or poison rate >= {POISON_RATE_CRITICAL:.0%}. WARNING: "
            f"conflicts, timeout-budget aborts, store errors or retry rate >= {RETRY_RATE_WARNING:.0%}."),
    _C("received", "received", _int, "right", help="Records received."),
    _C("succeeded", "succeeded", _int, "right", help="Records that succeeded."),
    _C("stuck_keys", "stuck", _int, "right", _to("stuck", "stuck_keys"),
       help="Keys stuck (expired IN_PROGRESS) at the window end."),
    _C("ambiguous_commits", "ambiguous", _int, "right", help="Ambiguous commits."),
    _C("poison_rate", "poison", _pct, "right", _to("poison", "poison_messages"), help="Poison messages / received."),
    _C("retry_rate", "retry", _pct, "right", _to("retries", "retryable_failures"),
       help="Retryable failures / received."),
    _C("conflicts", "conflicts", _int, "right", _to("conflicts", "conflicts"), help="Payload conflicts."),
    _C("timeout_budget_aborts", "t/o aborts", _int, "right", _to("timeout_aborts", "timeout_budget_aborts"),
       help="Timeout-budget aborts."),
    _C("store_errors", "store err", _int, "right", help="Idempotency store errors."),
    _C("reasons", "reasons", wrap=True, help="What made the verdict."),
    _C("duplicates", "duplicates", _int, "right", _to("duplicates", "duplicates"), help="Duplicates completed."),
    _C("in_progress_collisions", "in-progress", _int, "right", _to("in_progress", "in_progress_collisions"),
       help="In-progress collisions."),
    _C("retryable_failures", "retryable", _int, "right"),
    _C("permanent_failures", "permanent", _int, "right"),
    _C("poison_messages", "poison msgs", _int, "right"),
    # max_record_age_ms: added per render, in the unit of the largest age
    _C("event_source", "event source"),
]
"""The health table's columns (every one of ``compute.HEALTH_COLUMNS``), in order."""
HEALTH_HELP = ("One row per operation, worst verdict first; hover a column header for its meaning. A linked count "
               "opens its signal's page filtered to that operation (same time range) in a new tab.")


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
    st.subheader("Health per operation", help=HEALTH_HELP)
    h = health_table(ds, f)
    if h.empty:
        st.info("No emitter records in this window and filter selection.")
    else:
        age, unit = in_unit(h["max_record_age_ms"])
        fmt = "{:,.0f}" if unit == "ms" else "{:,.1f}"
        cols = list(HEALTH_TABLE)
        cols.insert(-1, htmltable.Column("max_record_age_ms", f"max record age ({unit})", fmt.format, "right",
                                         _to("iterator_age"), help="The largest record age (iterator age)."))
        htmltable.show(h.assign(max_record_age_ms=age), cols, key="health", caption="Health per operation")
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
