"""Stuck keys: idempotency keys IN_PROGRESS at the end of the selected window (current state, not events),
and the idempotency table's own view of them when it was scanned (DynamoDB)."""

from __future__ import annotations

import streamlit as st

from dashboard import sources, ui, urlstate
from dashboard.compute import format_ms, stuck_keys
from dashboard.constants import SIGNAL_BY_KEY
from dashboard.views import alarms as alarms_view

TITLE = "Stuck keys"
STUCK_MEANING = (
    "Stuck is a state, not an event: a key is listed when its latest status is IN_PROGRESS (claimed, never "
    "completed) and it was claimed at or before the end of the selected window, however long before its start. "
    "It is stuck (expired) when its IN_PROGRESS expiry passed before the window end: the handler crashed or timed "
    "out after the claim; the next delivery after the expiry takes the key over "
    f"({SIGNAL_BY_KEY['stuck'].metric.value}).")
_col = st.column_config


def render() -> None:
    ctx = ui.context()
    ds, f = ctx.ds, ctx.filters
    ui.page_header(TITLE, STUCK_MEANING + " Age is measured to the end of the window.")
    urlstate.bind("stuck_only", "expired", default=False, decode=urlstate.flag()[0], encode=urlstate.flag()[1])
    only = st.toggle("Only expired (stuck)", key="stuck_only")
    allk = stuck_keys(ds, f)
    exp = int(allk["expired"].sum())
    scanned = sources.table_stuck_count(ds)
    c1, c2, c3 = st.columns(3)
    c1.metric("Stuck (expired IN_PROGRESS)", f"{exp:,}", help="Source: idemwatch emitter (stuck_keys table).")
    c2.metric("Still IN_PROGRESS", f"{len(allk):,}", help="Source: idemwatch emitter (stuck_keys table).")
    c3.metric("Stuck in the idempotency table", "–" if scanned is None else f"{scanned:,}",
              help=f"Source: {sources.STUCK_SCAN_LABEL} (idempotency_table_stuck table, state at scan time; "
                   "`idemwatch collect cloudwatch --idempotency-table NAME`).")
    df = allk[allk["expired"]] if only else allk
    st.subheader("From the emitter's records")
    if df.empty:
        st.success("No key IN_PROGRESS at the end of this window.")
    else:
        shown = df.assign(age=[format_ms(s * 1000) for s in df["age_s"]]).rename(columns={
            "idempotency_key": "key", "last_status": "status", "in_progress_expires_at": "expiry",
            "last_seen": "last attempt"})[
            ["age", "key", "service", "operation", "expired", "claimed_at", "expiry", "status", "last attempt",
             "attempts", "last_outcome", "last_request_id", "age_s"]]
        shown = shown.assign(logs=alarms_view.key_links(df))  # console: this key's records (alarms part)
        ui.table(shown, key="stuck", shown=["age", "key", "operation", "expired", "claimed_at", "logs"],
                 columns={
            "key": _col.TextColumn("key", width=280),
            "operation": _col.TextColumn("operation", width=130),
            "expired": _col.CheckboxColumn("expired", width=70),
            "age": _col.TextColumn("age", pinned=True, help="Window end - claim time (oldest first)."),
            "age_s": _col.NumberColumn("age (s)", format="%.0f"),
            "logs": _col.LinkColumn("logs", display_text="Logs Insights", width=110),
            "claimed_at": _col.DatetimeColumn("claimed at (UTC)", format="YYYY-MM-DD HH:mm:ss", width=150),
            "expiry": _col.DatetimeColumn("expiry (UTC)", format="YYYY-MM-DD HH:mm:ss"),
            "last attempt": _col.DatetimeColumn("last attempt (UTC)", format="YYYY-MM-DD HH:mm:ss")})
    _scan(ds)
    ui.footer(TITLE)


def _scan(ds) -> None:
    """The DynamoDB scan's stuck records, when the idempotency table was scanned."""
    st.subheader("From the idempotency table (DynamoDB scan)")
    if sources.table_stuck_count(ds) is None:
        st.caption("Not scanned. `idemwatch collect cloudwatch --idempotency-table NAME` reads the table (read-only "
                   "Scan) and lists records still IN_PROGRESS past their in-progress expiry: Powertools "
                   "idempotency tables need no code change.")
        return
    t = sources.table_stuck(ds)
    if t.empty:
        st.success("No record stuck in the idempotency table at scan time.")
        return
    shown = t.assign(overdue=[format_ms(s * 1000) for s in t["overdue_s"]])
    shown = shown[["overdue", "idempotency_key", "status", "in_progress_expires_at", "record_expires_at",
                   "ttl_passed", "overdue_s"]]
    ui.table(shown, key="table_stuck", columns={
        "overdue": _col.TextColumn("overdue", pinned=True, help="Scan time - in-progress expiry."),
        "overdue_s": _col.NumberColumn("overdue (s)", format="%.0f"),
        "in_progress_expires_at": _col.DatetimeColumn("in-progress expiry (UTC)", format="YYYY-MM-DD HH:mm:ss"),
        "record_expires_at": _col.DatetimeColumn("TTL (UTC)", format="YYYY-MM-DD HH:mm:ss"),
        "ttl_passed": _col.CheckboxColumn("TTL passed", help="TTL passed, DynamoDB has not deleted it yet.")})
