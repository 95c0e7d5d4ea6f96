"""Stuck keys: idempotency keys IN_PROGRESS at the end of the selected window (current state, not events)."""

from __future__ import annotations

import streamlit as st

from dashboard import ui
from dashboard.compute import stuck_keys
from dashboard.constants import SIGNAL_BY_KEY
from dashboard.views import alarms as alarms_view

TITLE = "Stuck keys"
STUCK_MEANING = (
    "Stuck is a state, not an event: a key is listed when its latest status is IN_PROGRESS (claimed, never "
    "completed) and it was claimed at or before the end of the selected window, however long before its start. "
    "It is stuck (expired) when its IN_PROGRESS expiry passed before the window end: the handler crashed or timed "
    "out after the claim; the next delivery after the expiry takes the key over "
    f"({SIGNAL_BY_KEY['stuck'].metric.value}).")


def render() -> None:
    ctx = ui.context()
    ds, f = ctx.ds, ctx.filters
    ui.page_header(TITLE, STUCK_MEANING + " Age is measured to the end of the window.")
    only = st.toggle("Only expired (stuck)", value=False, key="stuck_only")
    allk = stuck_keys(ds, f)
    exp = int(allk["expired"].sum())
    c1, c2 = st.columns(2)
    c1.metric("Stuck (expired IN_PROGRESS)", f"{exp:,}")
    c2.metric("Still IN_PROGRESS", f"{len(allk):,}")
    df = allk[allk["expired"]] if only else allk
    if df.empty:
        st.success("No key IN_PROGRESS at the end of this window.")
    else:
        shown = df.rename(columns={"idempotency_key": "key", "last_status": "status", "in_progress_expires_at": "expiry",
                                   "last_seen": "last attempt"})[
            ["key", "service", "operation", "status", "claimed_at", "age_s", "expiry", "expired", "last attempt",
             "attempts", "last_outcome", "last_request_id"]]
        shown = shown.assign(logs=alarms_view.key_links(df))  # console: this key's records (alarms part)
        ui.table(shown, key="stuck",
                 logs=st.column_config.LinkColumn("logs", display_text="Logs Insights", width=110),
                 age_s=st.column_config.NumberColumn("age (s)", format="%.0f"),
                 claimed_at=st.column_config.DatetimeColumn("claimed at (UTC)", format="YYYY-MM-DD HH:mm:ss"))
    ui.footer(TITLE)
