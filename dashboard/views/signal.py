"""One page per signal: time series, breakdowns by service/operation/event source/error
code, and the top offenders (keys and event ids)."""

from __future__ import annotations

import streamlit as st

from dashboard import htmlchart, htmltable, links, sources, trail, ui, urlstate
from dashboard.compute import (
    attempt_distribution,
    breakdown,
    colour_map,
    duration_unit,
    error_codes,
    format_ms,
    format_value,
    in_unit,
    record_age_series,
    redeliveries,
    signal_value,
    timeseries,
)
from dashboard.constants import SIGNAL_BY_KEY, TOP_N, Signal, SignalKind
from emitter.contract import Outcome

DIMENSIONS = (("service", "Service"), ("operation", "Operation"), ("event_source", "Event source"))


def render(key: str) -> None:
    sig = SIGNAL_BY_KEY[key]
    ctx = ui.context()
    ds, f = ctx.ds, ctx.filters
    ui.page_header(sig.title, f"{sig.metric.value}: {sig.description}")
    total = signal_value(ds, sig, f)
    c1, c2 = st.columns(2)
    c1.metric(sig.title + " in window", format_value(sig, total))
    if sig.kind is SignalKind.RATE:
        from dashboard.compute import outcome_totals

        t = outcome_totals(ds, f)
        c2.metric("Poison messages / received", f"{t[Outcome.POISON_MESSAGE.value]:,} / {t[Outcome.RECEIVED.value]:,}")
    elif sig.key == "retries":
        c2.metric("Redeliveries (attempt > 1)", f"{redeliveries(ds, f):,}")

    st.subheader("Over time")
    if sig.kind is SignalKind.AGE:
        _age_series(ds, f)
    else:
        df, b = timeseries(ds, sig, f)
        if df.empty or df["value"].fillna(0).sum() == 0:
            st.info(f"No {sig.outcome.value} records in this window.")  # type: ignore[union-attr]
        else:
            rate = sig.kind is SignalKind.RATE
            htmlchart.show("series", df, "operation", (f.start, f.end), b, kind="percent" if rate else "count",
                           stacked=not rate, colour=colour_map(ds, "operation"),
                           y_title="poison rate" if rate else "events")
        st.caption(f"bin: {int(b.total_seconds() // 60)} min · source: idemwatch emitter (outcomes table)")
        _other_sources(ds, sig, f, b)

    st.subheader("Breakdown")
    has_codes = sig.outcome is not None and sig.kind is not SignalKind.AGE
    options = [d[0] for d in DIMENSIONS] + (["error_code"] if has_codes else [])
    names = dict(DIMENSIONS) | {"error_code": "Error code"}
    # one breakdown at a time (a segmented control, not tabs: every tab's content would be
    # rendered on each rerun, and each table is a canvas grid the browser must build)
    urlstate.bind("bd_by", "by", default=options[0], decode=urlstate.choice(options)[0],
                  encode=urlstate.choice(options)[1], valid=urlstate.one_of(options))
    by = st.segmented_control("By", options, format_func=lambda v: names[v], key="bd_by",
                              required=True, label_visibility="collapsed") or options[0]
    if by == "error_code":
        ec = error_codes(ds, sig.outcome.value, f)  # type: ignore[union-attr]
        if ec.empty:
            st.caption(f"No error codes recorded for {sig.outcome.value} in this window.")  # type: ignore[union-attr]
        else:
            _small_table(ec[["events", "error_code", "error_class"]], "codes")
    else:
        bd = breakdown(ds, sig, f, by)
        value = "max_ms" if sig.kind is SignalKind.AGE else "rate" if sig.kind is SignalKind.RATE else "events"
        if bd.empty:
            st.caption("nothing in this window")
        else:
            label, fmt = value, (htmltable.fmt_percent(2) if value == "rate" else htmltable.fmt_int)
            if value == "max_ms":
                converted, unit = in_unit(bd["max_ms"])
                bd = bd.assign(max_ms=converted)
                label, fmt = f"max record age ({unit})", ("{:,.0f}" if unit == "ms" else "{:,.1f}").format
            top = float(bd[value].max())
            _small_table(bd, f"bdt_{by}", **{value: htmltable.Column(value, label, fmt, "right",
                                                                     bar=top if top > 0 else 1.0)})

    st.subheader("Top offenders")
    if sig.kind is SignalKind.AGE:
        st.caption("Received records with the largest record age (IteratorAge per record).")
        ages = trail.top_record_ages(ds, f)
        ages = ages[["record_age_ms", *[c for c in ages.columns if c != "record_age_ms"]]]
        # each age in its own unit ("1.1 min", "900 ms"): one unit for the column showed small ages as 0.0 min
        _small_table(ages, "top_age", record_age_ms=htmltable.Column("record_age_ms", "record age", format_ms,
                                                                     "right", help="Record age (IteratorAge)."))
    else:
        _offenders(ds, sig, f)
    if sig.key == "retries":
        st.subheader("Delivery attempts")
        st.caption("Received records per delivery attempt number, whole collection window (the attempts table has "
                   "no time column).")
        _small_table(attempt_distribution(ds, f), "attempts")
    ui.footer(sig.title)


def _offenders(ds, sig: Signal, f) -> None:
    if ds.trail_path is None:
        st.caption("The trail table was not collected: no per-key detail.")
        return
    keys = trail.top_keys(ds, sig.outcome.value, f)  # type: ignore[union-attr]
    k, e = st.columns(2)
    with k:
        st.caption("Idempotency keys (a key opens its trail in the Events explorer)")
        _small_table(_counts_first(keys, "events"), "top_keys")
    with e:
        st.caption("Event ids")
        ev = trail.top_event_ids(ds, sig.outcome.value, f)  # type: ignore[union-attr]
        _small_table(_counts_first(ev, "events", "max_attempt"), "top_events")
    if len(keys):
        options = [None, *keys["idempotency_key"].tolist()]
        urlstate.bind("offender_pick", "key", default=None, decode=urlstate.choice(options)[0],
                      encode=urlstate.choice(options)[1], valid=urlstate.one_of(options))
        # selectbox options are plain text (never markdown), so untrusted keys are safe here
        pick = st.selectbox("Trail of a top key", options, key="offender_pick",
                            format_func=lambda v: "choose a key to see its whole trail" if v is None else str(v))
        if pick is not None:
            rows, _ = trail.search(ds, "Idempotency key", pick)
            _linked_table(rows, "offender_trail", timestamp=ui.TRAIL_TIME)
    if sig.outcome is Outcome.PAYLOAD_CONFLICT:
        from dashboard.compute import filter_frame

        ck = filter_frame(ds, "conflicting_keys", f, time_col="last_seen")
        st.caption(f"Conflicting keys (conflicting_keys table, last seen in window): top {TOP_N} of {len(ck):,}")
        top = ck.sort_values(["conflicts", "idempotency_key"], ascending=[False, True]).head(TOP_N)
        _small_table(_counts_first(top, "conflicts"), "conflicting")


def _counts_first(df, *counts: str):
    """Count columns first: a narrow window shows what ranks the row before the (long) id."""
    return df[[*counts, *[c for c in df.columns if c not in counts]]]


def _small_table(df, key: str, **overrides: htmltable.Column) -> None:
    """A table of at most a few dozen rows (breakdowns, top offenders): escaped HTML (``dashboard.htmltable``), ids
    linked into the Events explorer. The data grid would make the browser build a canvas grid per table: on a
    signal page with three of them, about a third of a page switch (``benchmarks/dashboard_bench.py``)."""
    htmltable.show_frame(df, key, overrides)


def _linked_table(df, key: str, **column_config) -> None:
    shown, cfg = links.explorer_links(df, column_config)
    ui.table(shown, key=key, columns=cfg)


def _other_sources(ds, sig: Signal, f, b) -> None:
    """The same outcome from Powertools / EMF libraries (library_signals), as its own chart: never added to the
    emitter's counts."""
    if sig.outcome is None:
        return
    readings = sources.readings(ds, sig.outcome.value, f)
    if not readings:
        return
    st.markdown("**The same signal from other sources**")
    st.caption(" · ".join(f"{ui.md_escape(r.source)} metrics: {r.value:,.0f}" for r in readings)
               + " (library_signals table: what Powertools / EMF libraries emit with no code change)")
    lib, _ = sources.library_series(ds, sig.outcome.value, f, b)
    if len(lib):
        htmlchart.show("series_library", lib, "library", (f.start, f.end), b, y_title="events", height=180,
                       colour=colour_map(ds, "library"))


AGE_STATS = {"max_ms": "max", "p95_ms": "p95 (max of 1-min p95)", "p50_ms": "p50 (weighted)"}
"""Record-age statistics of the iterator-age chart: column -> legend label."""


def _age_series(ds, f) -> None:
    df, b = record_age_series(ds, f)
    if df.empty:
        st.info("No record age in this window (only stream/queue records with a sent/arrival time carry one).")
        return
    unit, per = duration_unit(float(df["max_ms"].max()))  # the tile shows the max in this unit too
    # one series per statistic (coloured, the legend names it), so the statistic is the chart's "series"
    long = df.melt(id_vars=["time"], value_vars=list(AGE_STATS), var_name="statistic")
    long["statistic"] = long["statistic"].map(AGE_STATS)
    long["value"] = long["value"] / per
    htmlchart.show("series", long, "statistic", (f.start, f.end), b, kind="number", stacked=False,
                   y_title=f"record age ({unit})")
    st.caption(f"bin: {int(b.total_seconds() // 60)} min · only max is exact after re-binning 1-minute percentiles")
