"""One page per signal: time series, breakdowns by service/operation/event source/error
code, and the top offenders (keys and event ids)."""

from __future__ import annotations

import streamlit as st

from dashboard import trail, ui
from dashboard.compute import (
    attempt_distribution,
    breakdown,
    error_codes,
    format_value,
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
            ui.chart(ui.bar_series(df, "operation", (f.start, f.end), b, percent=sig.kind is SignalKind.RATE, stacked=sig.kind is SignalKind.COUNT,
                                   y_title="poison rate" if sig.kind is SignalKind.RATE else "events"), key="series")
        st.caption(f"bin: {int(b.total_seconds() // 60)} min")

    st.subheader("Breakdown")
    has_codes = sig.outcome is not None and sig.kind is not SignalKind.AGE
    options = [d[0] for d in DIMENSIONS] + (["error_code"] if has_codes else [])
    names = dict(DIMENSIONS) | {"error_code": "Error code"}
    # one breakdown at a time (a segmented control, not tabs: every tab's content would be
    # rendered on each rerun, and each table is a canvas grid the browser must build)
    by = st.segmented_control("By", options, default=options[0], format_func=lambda v: names[v], key="bd_by",
                              required=True, label_visibility="collapsed") or options[0]
    if by == "error_code":
        ec = error_codes(ds, sig.outcome.value, f)  # type: ignore[union-attr]
        if ec.empty:
            st.caption(f"No error codes recorded for {sig.outcome.value} in this window.")  # type: ignore[union-attr]
        else:
            ui.table(ec, key="codes")
    else:
        bd = breakdown(ds, sig, f, by)
        value = "max_ms" if sig.kind is SignalKind.AGE else "rate" if sig.kind is SignalKind.RATE else "events"
        if bd.empty:
            st.caption("nothing in this window")
        else:
            top = float(bd[value].max())
            fmt = "percent" if value == "rate" else "%.0f"
            ui.table(bd, key=f"bdt_{by}", **{value: st.column_config.ProgressColumn(
                value, min_value=0.0, max_value=top if top > 0 else 1.0, format=fmt)})

    st.subheader("Top offenders")
    if sig.kind is SignalKind.AGE:
        st.caption("Received records with the largest record age (IteratorAge per record).")
        ui.table(trail.top_record_ages(ds, f), key="top_age")
    else:
        _offenders(ds, sig, f)
    if sig.key == "retries":
        st.subheader("Delivery attempts")
        st.caption("Received records per delivery attempt number, whole collection window (the attempts table has "
                   "no time column).")
        ui.table(attempt_distribution(ds, f), key="attempts")
    ui.footer(sig.title)


def _offenders(ds, sig: Signal, f) -> None:
    if ds.trail_path is None:
        st.caption("The trail table was not collected: no per-key detail.")
        return
    keys = trail.top_keys(ds, sig.outcome.value, f)  # type: ignore[union-attr]
    k, e = st.columns(2)
    with k:
        st.caption("Idempotency keys")
        ui.table(keys, key="top_keys")
    with e:
        st.caption("Event ids")
        ui.table(trail.top_event_ids(ds, sig.outcome.value, f), key="top_events")  # type: ignore[union-attr]
    if len(keys):
        # selectbox options are plain text (never markdown), so untrusted keys are safe here
        pick = st.selectbox("Trail of a top key", [None, *keys["idempotency_key"].tolist()], key="offender_pick",
                            format_func=lambda v: "choose a key to see its whole trail" if v is None else str(v))
        if pick is not None:
            rows, _ = trail.search(ds, "Idempotency key", pick)
            ui.table(rows, key="offender_trail",
                     timestamp=st.column_config.DatetimeColumn("timestamp (UTC)", format="YYYY-MM-DD HH:mm:ss.SSS"))
    if sig.outcome is Outcome.PAYLOAD_CONFLICT:
        from dashboard.compute import filter_frame

        ck = filter_frame(ds, "conflicting_keys", f, time_col="last_seen")
        st.caption(f"Conflicting keys (conflicting_keys table, last seen in window): top {TOP_N} of {len(ck):,}")
        ui.table(ck.sort_values(["conflicts", "idempotency_key"], ascending=[False, True]).head(TOP_N),
                 key="conflicting")


def _age_series(ds, f) -> None:
    import plotly.graph_objects as go

    df, b = record_age_series(ds, f)
    if df.empty:
        st.info("No record age in this window (only stream/queue records with a sent/arrival time carry one).")
        return
    fig = go.Figure()
    for col, name in (("max_ms", "max"), ("p95_ms", "p95 (max of 1-min p95)"), ("p50_ms", "p50 (weighted)")):
        fig.add_trace(go.Scatter(x=ui._py(df["time"]), y=ui._py(df[col]), name=name, mode="lines+markers"))
    fig.update_layout(height=320, margin={"l": 10, "r": 10, "t": 10, "b": 10}, yaxis_title="record age (ms)",
                      xaxis_title="time (UTC)", xaxis_range=[f.start.isoformat(), f.end.isoformat()])
    ui.chart(fig, key="series")
    st.caption(f"bin: {int(b.total_seconds() // 60)} min · only max is exact after re-binning 1-minute percentiles")
