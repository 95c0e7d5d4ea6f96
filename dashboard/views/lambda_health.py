"""Lambda health: invocations, cold starts, timeouts, durations and memory from the Lambda REPORT lines
(``invocations`` table), and errors and cold starts as the emitter and Powertools saw them, each labelled
with its source."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import charts, lambda_health, sources, trail, ui
from dashboard.compute import colour_map, duration_unit, format_ms, outcome_totals
from dashboard.constants import FAILURE_OUTCOMES
from emitter.contract import Outcome

TITLE = "Lambda health"
_col = st.column_config


def render() -> None:
    ctx = ui.context()
    ds, f = ctx.ds, ctx.filters
    ui.page_header(TITLE, "From the Lambda platform's REPORT line of every invocation (invocations table: 1-minute "
                          "bins per log group), beside what the emitter and Powertools recorded. Durations in "
                          "ms/s/min, memory in MB (10^6 bytes). p95 is the largest 1-minute p95 (an upper bound: "
                          "percentiles do not merge across bins).")
    if f.services or f.operations or f.event_sources:
        groups = trail.log_groups(ds, f)
        st.caption("Filtered to the log groups whose emitter records carry the selected service / operation / event "
                   "source" + ("." if groups is not None else " (no trail collected: not filtered)."))
    t = lambda_health.totals(ds, f)
    if t["invocations"] is None:
        st.info("No Lambda REPORT lines in this window (the invocations table is empty for it).")
    else:
        _tiles(t)
        _charts(ds, f)
        st.subheader("Per log group")
        _table(ds, f)
    _cold_starts(ds, f, t)
    _errors(ds, f)
    ui.footer(TITLE)


def _tiles(t: dict) -> None:
    top, bottom = st.columns(4), st.columns(4)
    top[0].metric("Invocations", f"{t['invocations']:,.0f}", border=True)
    rate = t["cold_start_rate"]
    top[1].metric("Cold starts", f"{t['cold_starts']:,.0f}", None if rate is None else f"{rate * 100:.1f}%",
                  delta_color="off", delta_arrow="off", border=True, help="Share of invocations that were cold.")
    top[2].metric("Timeouts", f"{t['timeouts']:,.0f}", border=True, help="REPORT lines with Status: timeout.")
    used, pct = t["max_memory_used_mb"], t["peak_memory_pct"]
    top[3].metric("Peak memory used", "–" if used is None else f"{used:,.0f} MB",
                  None if pct is None else f"{pct * 100:.0f}% of memory size", delta_color="off", delta_arrow="off",
                  border=True, help="Max Memory Used of the REPORT lines (MB = 10^6 bytes); the share is the largest "
                                    "1-minute Max Memory Used / Memory Size of one log group.")
    bottom[0].metric("Avg duration", format_ms(t["avg_duration_ms"]), border=True, help="Invocation-weighted mean.")
    bottom[1].metric("p95 duration", format_ms(t["p95_duration_ms"]), border=True,
                     help="The largest 1-minute p95 in the window (an upper bound).")
    bottom[2].metric("Max duration", format_ms(t["max_duration_ms"]), border=True)
    init_max = t["max_init_duration_ms"]
    bottom[3].metric("Avg init duration", format_ms(t["avg_init_duration_ms"]),
                     None if init_max is None else f"max {format_ms(init_max)}", delta_color="off",
                     delta_arrow="off", border=True,
                     help="Init Duration of the cold starts' REPORT lines (mean over cold starts, and the largest).")


def _charts(ds, f) -> None:
    """Invocations, durations and timeouts per bin and log group (plotly); memory and the cold starts' init
    durations in an expander, drawn when it is opened."""
    s, b = lambda_health.series(ds, f)
    colours = colour_map(ds, "log_group")
    window = (f.start, f.end)
    # one chart a row: a log group's legend entry stays readable beside a long name, and the plot keeps its height
    st.caption("Invocations per bin (bars) and cold starts (open dots), per log group")
    ui.chart(charts.series(s, "log_group", window, b, value="invocations", y_title="invocations (count)",
                           colours=colours, points=("cold_starts", "cold starts"), height=_H),
             key="lambda_invocations")
    unit, per = duration_unit(float(s["max_duration_ms"].max()))
    st.caption("Duration per bin: p95 (solid) and max (dotted), per log group")
    ui.chart(charts.stat_series(s, "log_group", window, b, (("p95_duration_ms", "p95", "solid"),
                                                           ("max_duration_ms", "max", "dotted")),
                                y_title=f"duration ({unit})", per=per, colours=colours, height=_H),
             key="lambda_duration")
    st.caption("Timeouts per bin, per log group (REPORT lines with Status: timeout)")
    tmo = s[s["timeouts"] > 0]
    if tmo.empty:
        st.success("No timeout in this window.")
    else:
        ui.chart(charts.series(tmo, "log_group", window, b, value="timeouts", y_title="timeouts (count)",
                               colours=colours, height=240), key="lambda_timeouts")
    more = ui.lazy_expander("Memory and cold-start init duration per bin", key="lambda_more", param="more")
    if not more.open:
        return
    with more:
        st.caption("Peak memory used (solid) vs memory size (dashed) per bin, per log group")
        ui.chart(charts.stat_series(s, "log_group", window, b, (("max_memory_used_mb", "used", "solid"),
                                                               ("memory_size_mb", "size", "dashed")),
                                    y_title="memory (MB)", colours=colours, height=_H), key="lambda_memory")
        cold = s[s["cold_starts"] > 0]
        st.caption("Init duration of the cold starts per bin: max (large dots) and avg (small dots), per log group")
        if cold.empty:
            st.success("No cold start in this window.")
        else:
            unit, per = duration_unit(float(cold["max_init_duration_ms"].max()))
            ui.chart(charts.stat_series(cold, "log_group", window, b, (("max_init_duration_ms", "max", "solid"),
                                                                      ("avg_init_duration_ms", "avg", "dotted")),
                                        y_title=f"init duration ({unit})", per=per, colours=colours,
                                        markers_only=True, height=_H), key="lambda_init")


_H = 280
"""Height of each chart, CSS pixels (legend included)."""


def _table(ds, f) -> None:
    g = lambda_health.per_log_group(ds, f)
    cfg: dict = {"log_group": _col.TextColumn("log group", width="medium")}
    for c in lambda_health.COUNT_COLUMNS:
        cfg[c] = _col.NumberColumn(c.replace("_", " "), format="localized", width="small")
    cfg["cold_start_rate"] = _col.NumberColumn("cold start rate", format="percent", width="small",
                                               help="Cold starts / invocations.")
    # one unit for every duration column, that of the smallest duration shown: s and min never sit side by side,
    # and no average reads 0.00 beside a two-minute maximum
    ms_cols = [c for c in g.columns if c.endswith("_ms")]
    values = g[ms_cols].to_numpy().ravel() if len(g) and ms_cols else []
    positive = [float(v) for v in values if v == v and v > 0]
    unit, per = duration_unit(min(positive) if positive else None)
    for c in ms_cols:
        g[c] = (g[c] / per).round(0 if unit == "ms" else 2)  # whole ms: the grid's localized format shows them as is
        cfg[c] = _col.NumberColumn(f"{c.removesuffix('_ms').replace('_', ' ')} ({unit})",
                                   format="localized" if unit == "ms" else "%.2f", width="small")
    for c in (c for c in g.columns if c.endswith("_mb")):
        cfg[c] = _col.NumberColumn(f"{c.removesuffix('_mb').replace('_', ' ')} (MB)", format="%.0f", width="small",
                                   help="MB = 10^6 bytes.")
    cfg["peak_memory_pct"] = _col.NumberColumn("peak memory share", format="percent", width="small",
                                               help="Largest 1-minute max memory used / memory size.")
    ui.table(g, key="lambda_groups", columns=cfg,
             shown=["invocations", "log_group", "timeouts", "cold_start_rate", "avg_duration_ms", "p95_duration_ms",
                    "max_duration_ms", "peak_memory_pct"])


def _cold_starts(ds, f, t: dict) -> None:
    st.subheader("Cold starts by source")
    rows = []
    if t["cold_starts"] is not None:
        rows.append(("Lambda REPORT lines (Init Duration present)", "invocations", t["cold_starts"]))
    emitted = outcome_totals(ds, f)[Outcome.COLD_START.value]
    if not ds.table("outcomes").empty:
        rows.append(("idemwatch emitter (cold_start records)", "outcomes", float(emitted)))
    for r in sources.readings(ds, Outcome.COLD_START.value, f):
        rows.append((f"{r.source} metrics (ColdStart)", r.table, r.value))
    if not rows:
        st.caption("No source in this data records cold starts.")
        return
    ui.table(pd.DataFrame(rows, columns=["source", "table", "cold starts"])[["cold starts", "source", "table"]],
             key="lambda_cold", columns={"cold starts": _col.NumberColumn("cold starts", format="localized", width="small")})


def _errors(ds, f) -> None:
    st.subheader("Errors")
    st.caption("Failure outcomes the emitter recorded, per log group (trail), and Powertools idempotency "
               "exceptions and metrics (library_signals). Lambda REPORT lines carry no error status for handler "
               "exceptions, so these are the errors seen from inside the handler.")
    fails = trail.failures_by_log_group(ds, f, tuple(o.value for o in FAILURE_OUTCOMES))
    with st.container():
        st.caption("idemwatch emitter")
        if fails.empty:
            st.caption("No failure records in this window." if ds.trail_path is not None
                       else "The trail was not collected.")
        else:
            piv = fails.pivot_table(index="log_group", columns="outcome", values="events", aggfunc="sum",
                                    fill_value=0, observed=True)
            piv.insert(0, "failures", piv.sum(axis=1))
            piv = piv.sort_values("failures", ascending=False).reset_index()
            piv.columns = [str(c) for c in piv.columns]
            shown = piv[["failures", "log_group", *[c for c in piv.columns if c not in ("failures", "log_group")]]]
            ui.table(shown, key="lambda_errors", columns={"log_group": _col.TextColumn("log group"),
                                                          "failures": _col.NumberColumn("failures", format="localized")},
                     shown=["failures", "log_group", *[c for c in shown.columns if c not in ("failures", "log_group")][:3]])
    with st.container():
        st.caption("Powertools / EMF libraries")
        lib = sources.by_log_group(ds, "library_signals", f)
        failure_signals = {o.value for o in FAILURE_OUTCOMES} | {Outcome.DUPLICATE_IN_PROGRESS.value,
                                                                 Outcome.PAYLOAD_CONFLICT.value}
        lib = lib[lib["signal"].astype(str).isin(failure_signals) | lib["signal"].astype(str).str.endswith("Error")]
        if lib.empty:
            st.caption("No library error signal in this window.")
        else:
            g = lib.groupby(["library", "log_group", "signal"], as_index=False, observed=True)["events"].sum()
            g["library"] = g["library"].astype(str).map(sources.label)
            ui.table(g.sort_values("events", ascending=False)[["events", "library", "log_group", "signal"]],
                     key="lambda_lib_errors", columns={"events": _col.NumberColumn("events", format="localized"),
                                                       "log_group": _col.TextColumn("log group")})
