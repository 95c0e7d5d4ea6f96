"""Overview: one tile per signal with the change against the previous window, and the
per-operation health table."""

from __future__ import annotations

import streamlit as st

from dashboard import ui
from dashboard.compute import format_delta, format_value, health_table, tiles
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
    "max_record_age_ms": _count("max record age (ms)", format="%.0f"),
}


def render() -> None:
    ctx = ui.context()
    ds, f = ctx.ds, ctx.filters
    ui.page_header(TITLE, "Idempotency health of at-least-once handlers. Δ = change against the previous window "
                          "of the same length (shown when the collected data covers it); red means worse. Stuck keys is a state "
                          "at the end of the window (no Δ).")
    ts = tiles(ds, f, SIGNALS)
    for row in (ts[:4], ts[4:]):
        cols = st.columns(4)
        for col, t in zip(cols, row):
            with col:
                flat = t.delta is not None and abs(t.delta) < 1e-12
                # an increase is bad for every signal (inverse colours); no change is grey without an arrow
                st.metric(t.signal.title, format_value(t.signal, t.value), format_delta(t.signal, t.delta),
                          delta_color="off" if flat else "inverse", delta_arrow="off" if flat else "auto",
                          help=STUCK_MEANING if t.signal.kind is SignalKind.STUCK else t.signal.description,
                          border=True)
                st.page_link(t.signal.page, label="Details")
    st.subheader("Health per operation")
    h = health_table(ds, f)
    if h.empty:
        st.info("No emitter records in this window and filter selection.")
    else:
        ui.table(h, key="health", **HEALTH_COLUMN_CONFIG)
    ui.footer(TITLE)
