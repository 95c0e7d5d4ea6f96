"""One page per signal: time series, breakdowns by service/operation/event source/error
code, and the top offenders (keys and event ids)."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, sources, trail, ui, urlstate
from dashboard.compute import (
    breakdown,
    colour_map,
    duration_unit,
    error_codes,
    filter_frame,
    format_value,
    in_unit,
    outcome_totals,
    record_age_series,
    redeliveries,
    signal_value,
    timeseries,
)
from dashboard.constants import SIGNAL_BY_KEY, TOP_N, Signal, SignalKind
from emitter.contract import METRIC_DESCRIPTIONS, Metric, Outcome

_col = st.column_config

DIMENSIONS = (("service", "Service"), ("operation", "Operation"), ("event_source", "Event source"))


def render(key: str) -> None:
    sig = SIGNAL_BY_KEY[key]
    ctx = ui.context()
    ds, f = ctx.ds, ctx.filters
    ui.page_header(sig.title, f"{sig.metric.value}: {sig.description}")
    total = signal_value(ds, sig, f)
    c1, c2 = st.columns(2)
    c1.metric(sig.title + " in window", format_value(sig, total), help=sig.description)
    if sig.kind is SignalKind.RATE:
        t = outcome_totals(ds, f)
        c2.metric("Poison messages / received", f"{t[Outcome.POISON_MESSAGE.value]:,} / {t[Outcome.RECEIVED.value]:,}",
                  help="Records in the window.")
    elif sig.key == "retries":
        c2.metric(f"Redeliveries in window ({Metric.REDELIVERY.value})", f"{redeliveries(ds, f):,}",
                  help=METRIC_DESCRIPTIONS[Metric.REDELIVERY])

    st.subheader("Over time")
    if sig.kind is SignalKind.AGE:
        _age_series(ds, f)
    else:
        df, b = timeseries(ds, sig, f)
        if df.empty or df["value"].fillna(0).sum() == 0:
            st.info(f"No {sig.counted} records in this window.")
        else:
            rate = sig.kind is SignalKind.RATE
            ui.chart(charts.series(df, "operation", (f.start, f.end), b, kind="percent" if rate else "count",
                                   stacked=not rate, colours=colour_map(ds, "operation"),
                                   y_title="poison rate (%)" if rate else f"{sig.title.lower()} (count)"),
                     key="series")
        st.caption(f"bin: {int(b.total_seconds() // 60)} min · source: idemwatch emitter (outcomes table) · drag "
                   "across the chart to zoom the time range")
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
        ec = error_codes(ds, sig.counted, f)
        if ec.empty:
            st.caption(f"No error codes recorded for {sig.counted} in this window.")
        else:
            ui.table(ec[["events", "error_code", "error_class"]], key="codes",
                     columns={"events": _col.NumberColumn("events", format="localized", width="small"),
                              "error_code": _col.TextColumn("error code"), "error_class": "error class"})
    else:
        bd = breakdown(ds, sig, f, by)
        if bd.empty:
            st.caption("Nothing in this window.")
        else:
            _breakdown_table(bd, sig, by)

    st.subheader("Top offenders")
    if sig.kind is SignalKind.AGE:
        st.caption("Received records of stream and queue sources with the largest record age (IteratorAge per "
                   "record) in the window.")
        ages = trail.top_record_ages(ds, f)
        if ages.empty:
            st.caption("No record age in this window.")
        else:
            converted, unit = in_unit(ages["record_age_ms"])
            ui.table(ages.assign(record_age_ms=converted), key="top_age",
                     columns={"record_age_ms": _col.NumberColumn(f"record age ({unit})",
                                                                 format="%.0f" if unit == "ms" else "%.3f", width=100),
                              "timestamp": _col.DatetimeColumn("timestamp (UTC)", format="YYYY-MM-DD HH:mm:ss",
                                                               width=150),
                              "operation": _col.TextColumn("operation", width=150),
                              "event_source": _col.TextColumn("event source", width=100),
                              # a Kinesis or DynamoDB Streams sequence number is up to 56 digits
                              "event_id": _col.TextColumn("event id", width=400)},
                     shown=["record_age_ms", "timestamp", "operation", "event_id"])
    else:
        _offenders(ds, sig, f)
    if sig.key == "retries":
        st.subheader("Delivery attempts")
        st.caption("Received records per delivery attempt number in the window (from the trail).")
        att = trail.attempts(ds, f)
        if att.empty:
            st.caption("No received record with an attempt number in this window.")
        else:
            ui.table(att, key="attempts", columns={"attempt": _col.NumberColumn("attempt", format="%d"),
                                                   "received": _col.NumberColumn("received", format="localized")})
    ui.footer(sig.title)


OFFENDER_COLUMNS = {
    "idempotency_key": _col.TextColumn("idempotency key", width=330),
    "event_id": _col.TextColumn("event id", width=300),
    "operation": _col.TextColumn("operation", width=150),
    "events": _col.NumberColumn("events", format="localized", width=70, help="Records of this outcome in the window."),
    "conflicts": _col.NumberColumn("conflicts", format="localized", width=80),
    "max_attempt": _col.NumberColumn("max attempt", format="localized", width=90),
    "first_seen": _col.DatetimeColumn("first seen (UTC)", format="YYYY-MM-DD HH:mm:ss"),
    "last_seen": _col.DatetimeColumn("last seen (UTC)", format="YYYY-MM-DD HH:mm:ss"),
    "event_source": _col.TextColumn("event source", width=130),
}


def _offenders(ds, sig: Signal, f) -> None:
    if ds.trail_path is None:
        st.caption("The trail table was not collected: no per-key detail.")
        return
    keys = trail.top_keys(ds, sig.counted, f)
    st.caption(f"Idempotency keys with the most {sig.counted} records in the window (top {TOP_N}; a key "
               "opens its trail in the Events explorer)")
    if keys.empty:
        st.caption(f"No key with {sig.counted} records in this window.")
    else:
        ui.table(keys, key="top_keys", columns=OFFENDER_COLUMNS,
                 shown=["idempotency_key", "events", "operation", "last_seen"])
    st.caption(f"Event ids with the most {sig.counted} records in the window (top {TOP_N})")
    ev = trail.top_event_ids(ds, sig.counted, f)
    if ev.empty:
        st.caption(f"No event with {sig.counted} records in this window.")
    else:
        ui.table(ev, key="top_events", columns=OFFENDER_COLUMNS,
                 shown=["event_id", "events", "max_attempt", "operation", "event_source"])
    if sig.outcome is Outcome.PAYLOAD_CONFLICT:
        ck = filter_frame(ds, "conflicting_keys", f, time_col="last_seen")
        shown_n = min(TOP_N, len(ck))
        st.caption(f"Conflicting keys last seen in the window (conflicting_keys table): the {shown_n:,} with the most "
                   f"conflicts of {len(ck):,}" if len(ck) > TOP_N else
                   f"Conflicting keys last seen in the window (conflicting_keys table): {len(ck):,}")
        if not ck.empty:
            top = ck.sort_values(["conflicts", "idempotency_key"], ascending=[False, True]).head(TOP_N)
            ui.table(top, key="conflicting", columns=OFFENDER_COLUMNS,
                     shown=["idempotency_key", "conflicts", "operation", "last_seen"])


def _breakdown_table(bd, sig: Signal, by: str) -> None:
    names = dict(DIMENSIONS)
    cfg: dict = {by: _col.TextColumn(names[by].lower())}
    if sig.kind is SignalKind.AGE:
        converted, unit = in_unit(bd["max_ms"])
        bd = bd.assign(max_ms=converted)
        top = float(bd["max_ms"].max()) or 1.0
        cfg["max_ms"] = _col.ProgressColumn(f"max record age ({unit})", format="%.1f", min_value=0, max_value=top)
        cfg["records"] = _col.NumberColumn("records", format="localized")
        ui.table(bd[["max_ms", by, "records"]], key=f"bdt_{by}", columns=cfg)
    elif sig.kind is SignalKind.RATE:
        top = float(bd["rate"].max()) or 1.0
        cfg["rate"] = _col.ProgressColumn("poison rate", format="percent", min_value=0, max_value=top)
        cfg["events"] = _col.NumberColumn("poison messages", format="localized")
        cfg["received"] = _col.NumberColumn("received", format="localized")
        ui.table(bd[["rate", by, "events", "received"]], key=f"bdt_{by}", columns=cfg)
    else:
        top = float(bd["events"].max()) or 1.0
        cfg["events"] = _col.ProgressColumn("events", format="localized", min_value=0, max_value=top)
        ui.table(bd[["events", by]], key=f"bdt_{by}", columns=cfg)


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
        ui.chart(charts.series(lib, "library", (f.start, f.end), b, y_title="events (count)", height=220,
                               colours=colour_map(ds, "library")), key="series_library")


AGE_STATS = {"max_ms": "max", "p95_ms": "p95 (max of 1-min p95)", "p50_ms": "p50 (weighted)"}
"""Record-age statistics of the iterator-age chart: column -> legend label."""


def _age_series(ds, f) -> None:
    df, b = record_age_series(ds, f)
    if df.empty:
        st.info("No iterator age in this window: only records of stream and queue sources (SQS, Kinesis, DynamoDB "
                "Streams, Kafka, MQ) with a sent or arrival time carry one.")
        return
    unit, per = duration_unit(float(df["max_ms"].max()))  # the tile shows the max in this unit too
    # one series per statistic (coloured, the legend names it), so the statistic is the chart's "series"
    long = df.melt(id_vars=["time"], value_vars=list(AGE_STATS), var_name="statistic")
    long["statistic"] = long["statistic"].map(AGE_STATS)
    long["value"] = long["value"] / per
    ui.chart(charts.series(long, "statistic", (f.start, f.end), b, kind="number", stacked=False,
                           y_title=f"record age ({unit})"), key="series")
    st.caption(f"bin: {int(b.total_seconds() // 60)} min · only max is exact after re-binning 1-minute percentiles")
