"""Lambda health: invocations, cold starts, timeouts, durations and memory from the Lambda REPORT lines
(``invocations`` table), and errors and cold starts as the emitter and Powertools saw them, each labelled
with its source."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import htmlchart, htmltable, lambda_health, sources, trail, ui
from dashboard.compute import colour_map, duration_unit, format_ms, in_unit, outcome_totals
from dashboard.constants import FAILURE_OUTCOMES
from emitter.contract import Outcome

TITLE = "Lambda health"
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
    """The five charts, drawn on the server (``dashboard.htmlchart``): a Vega-Lite chart here made this the slowest
    page to open (the tab's first Vega page loads and compiles Vega: 0.85-1.3 s of a 1.1-1.3 s switch at 1M
    events, ``benchmarks/dashboard_bench.py``)."""
    s, b = lambda_health.series(ds, f)
    colour = colour_map(ds, "log_group")
    window = (f.start, f.end)
    left, right = st.columns(2)
    with left:
        st.caption("Invocations per bin (bars) and cold starts (outlined dots), per log group")
        htmlchart.show("lambda_invocations", s.rename(columns={"invocations": "value"}), "log_group", window, b,
                       y_title="invocations", colour=colour, height=_H, points="cold_starts",
                       points_title="cold starts")
    with right:
        unit, per = duration_unit(float(s["max_duration_ms"].max()))
        st.caption(f"Duration per bin ({unit}): p95 (solid) and max (dotted), per log group")
        htmlchart.show("lambda_duration", s, "log_group", window, b,
                       stats=(("p95_duration_ms", "p95", "solid"), ("max_duration_ms", "max", "dotted")),
                       y_title=f"duration ({unit})", per=per, colour=colour, height=_H)
    left, right = st.columns(2)
    with left:
        st.caption("Peak memory used (solid) vs memory size (dashed) per bin (MB), per log group")
        htmlchart.show("lambda_memory", s, "log_group", window, b,
                       stats=(("max_memory_used_mb", "used", "solid"), ("memory_size_mb", "size", "dashed")),
                       y_title="memory (MB)", colour=colour, height=_H)
    with right:
        cold = s[s["cold_starts"] > 0]
        if cold.empty:
            st.caption("Init duration per bin")
            st.success("No cold start in this window.")
        else:
            unit, per = duration_unit(float(cold["max_init_duration_ms"].max()))
            st.caption(f"Init duration of the cold starts per bin ({unit}): max (large dots) and avg (small dots), "
                       "per log group")
            htmlchart.show("lambda_init", cold, "log_group", window, b,
                           stats=(("max_init_duration_ms", "max", "dot"), ("avg_init_duration_ms", "avg", "ring")),
                           y_title=f"init duration ({unit})", per=per, colour=colour, height=_H)
    st.caption("Timeouts per bin, per log group")
    tmo = s[s["timeouts"] > 0]
    if tmo.empty:
        st.success("No timeout in this window.")
    else:
        htmlchart.show("lambda_timeouts", tmo.rename(columns={"timeouts": "value"}), "log_group", window, b,
                       y_title="timeouts", colour=colour, height=160)


_H = 300
"""Plot height of the four paired charts, CSS pixels (the Vega-Lite charts were 380 px with their axes and legend
inside; the HTML chart's axes and legend come on top)."""


_SHORT = {"cold_starts": "cold", "avg_duration_ms": "avg", "p95_duration_ms": "p95", "max_duration_ms": "max",
          "avg_init_duration_ms": "init avg", "max_init_duration_ms": "init max", "max_memory_used_mb": "mem used",
          "memory_size_mb": "mem size"}
"""Short headers so the per-log-group table fits a 1440 px screen; each column's help has the full name."""


def _table(ds, f) -> None:
    g = lambda_health.per_log_group(ds, f).copy()  # memoised: converting units in place would compound per rerun

    def name(c: str) -> str:
        return _SHORT.get(c, c.removesuffix("_ms").removesuffix("_mb").replace("_", " "))

    def full(c: str) -> str:
        return c.removesuffix("_ms").removesuffix("_mb").replace("_", " ")

    C = htmltable.Column
    cfg: dict[str, htmltable.Column] = {"log_group": C("log_group", "log group")}
    for c in lambda_health.COUNT_COLUMNS:
        cfg[c] = C(c, name(c), _int, "right", help=full(c))
    cfg["cold_start_rate"] = C("cold_start_rate", "cold %", _pct, "right", help="cold starts / invocations")
    # one unit per column (its largest value's, said in the header): a 2-minute timeout must not turn every
    # average into "0.00 min"
    for c in (c for c in g.columns if c.endswith("_ms")):
        g[c], unit = in_unit(g[c])
        cfg[c] = C(c, f"{name(c)} ({unit})", ("{:,.0f}" if unit == "ms" else "{:,.2f}").format, "right",
                   help=f"{full(c)} ({unit})")
    for c in (c for c in g.columns if c.endswith("_mb")):
        cfg[c] = C(c, f"{name(c)} (MB)", "{:,.0f}".format, "right", help=f"{full(c)} (MB = 10^6 bytes)")
    cfg["peak_memory_pct"] = C("peak_memory_pct", "mem %", _pct, "right",
                               help="Largest 1-minute max memory used / memory size.")
    # two tables so each fits a 1440 px screen: invocations and durations, then cold starts' init and memory
    second = [c for c in g.columns if "init" in c or c.endswith(("_mb", "_pct"))]
    first = [c for c in g.columns if c not in second]
    _small_table(g[first], "lambda_groups", cfg)
    st.caption("Init duration of the cold starts and memory used against the memory size, per log group")
    _small_table(g[["log_group", *second]], "lambda_memory_groups", cfg)


def _int(v) -> str:  # rounds, not htmltable.fmt_int: the per-log-group sums here may be floats
    return f"{float(v):,.0f}"


_pct = htmltable.fmt_percent(1)

# A table of one row per log group or source: escaped HTML, not a canvas grid (five grids made this the slowest
# page to open, benchmarks/dashboard_bench.py).
_small_table = htmltable.show_frame


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
    _small_table(pd.DataFrame(rows, columns=["source", "table", "cold starts"])[["cold starts", "source", "table"]],
                 "lambda_cold", {"cold starts": htmltable.Column("cold starts", "cold starts", _int, "right")})


def _errors(ds, f) -> None:
    st.subheader("Errors")
    st.caption("Failure outcomes the emitter recorded, per log group (trail), and Powertools idempotency "
               "exceptions and metrics (library_signals). Lambda REPORT lines carry no error status for handler "
               "exceptions, so these are the errors seen from inside the handler.")
    fails = trail.failures_by_log_group(ds, f, tuple(o.value for o in FAILURE_OUTCOMES))
    left, right = st.columns(2)
    with left:
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
            _small_table(shown, "lambda_errors", {"log_group": htmltable.Column("log_group", "log group")})
    with right:
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
            _small_table(g.sort_values("events", ascending=False)[["events", "library", "log_group", "signal"]],
                         "lambda_lib_errors", {"events": htmltable.Column("events", "events", _int, "right")})
