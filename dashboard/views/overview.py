"""Overview: one tile per signal with the change against the previous window, and the
per-operation health table."""

from __future__ import annotations

import streamlit as st

from dashboard import ui
from dashboard.compute import format_delta, format_value, health_table, tiles
from dashboard.constants import SIGNALS

TITLE = "Overview"


def render() -> None:
    ctx = ui.context()
    ds, f = ctx.ds, ctx.filters
    ui.page_header(TITLE, "Idempotency health of at-least-once handlers. Δ = change against the previous window "
                          "of the same length (shown when the collected data covers it); red means worse.")
    ts = tiles(ds, f, SIGNALS)
    for row in (ts[:4], ts[4:]):
        cols = st.columns(4)
        for col, t in zip(cols, row):
            with col:
                flat = t.delta is not None and abs(t.delta) < 1e-12
                # an increase is bad for every signal (inverse colours); no change is grey without an arrow
                st.metric(t.signal.title, format_value(t.signal, t.value), format_delta(t.signal, t.delta),
                          delta_color="off" if flat else "inverse", delta_arrow="off" if flat else "auto",
                          help=t.signal.description, border=True)
                st.page_link(t.signal.page, label="Details")
    st.subheader("Health per operation")
    h = health_table(ds, f)
    if h.empty:
        st.info("No emitter records in this window and filter selection.")
    else:
        ui.table(h, key="health",
                 health=st.column_config.TextColumn("health", help="CRITICAL: stuck keys, ambiguous commits or poison "
                                                    "rate >= 1%. WARNING: conflicts, timeout-budget aborts, store "
                                                    "errors or retry rate >= 5%."),
                 poison_rate=st.column_config.NumberColumn("poison rate", format="percent"),
                 retry_rate=st.column_config.NumberColumn("retry rate", format="percent"),
                 max_record_age_ms=st.column_config.NumberColumn("max record age (ms)", format="%.0f"))
    ui.footer(TITLE)
