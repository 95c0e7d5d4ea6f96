"""Events explorer: the whole trail of one idempotency key, event, correlation or request id."""

from __future__ import annotations

import streamlit as st

from dashboard import links, trail, ui, urlstate
from dashboard.compute import stuck_keys

TITLE = "Events explorer"


def render() -> None:
    ctx = ui.context()
    ds = ctx.ds
    ui.page_header(TITLE, "Search the trail (every emitter outcome record) by idempotency key, event id, "
                          "correlation id or request id; the whole life of the matching keys and events is shown in "
                          "time order, whatever the time filter.")
    if ds.trail_path is None:
        st.warning("The trail table was not collected, so there is nothing to search.")
        ui.footer(TITLE)
        return
    trail.warm(ds)  # the id index builds while the user types
    # shareable links: ?field=<label>&q=<value>&substring=1 (query params are user input too: bound and checked)
    fields = list(trail.SEARCH_FIELDS)
    urlstate.bind("ex_field", "field", default=fields[0], decode=urlstate.choice(fields)[0],
                  encode=urlstate.choice(fields)[1], valid=urlstate.one_of(fields))
    urlstate.bind("ex_value", "q", default="", decode=urlstate.text()[0], encode=urlstate.text()[1])
    urlstate.bind("ex_partial", "substring", default=False, decode=urlstate.flag()[0], encode=urlstate.flag()[1])
    c1, c2, c3 = st.columns([2, 5, 1])
    field = c1.selectbox("Field", fields, key="ex_field")
    value = c2.text_input("Value", key="ex_value", placeholder="e.g. an idempotency key or a messageId")
    partial = c3.checkbox("Substring", key="ex_partial")
    examples = stuck_keys(ds, ctx.filters)["idempotency_key"].head(5).tolist() if ctx.filters else []
    if examples and not value:
        st.caption("Keys still IN_PROGRESS in this window (copy one into the search):")
        shown, cfg = links.explorer_links(
            stuck_keys(ds, ctx.filters)[["idempotency_key", "operation", "last_status"]].head(5))
        ui.table(shown, key="ex_examples", columns=cfg)
    if value:
        rows, truncated = trail.search(ds, field, value, partial=partial)
        if rows.empty:
            st.info(f"No trail records where {field.lower()} {'contains' if partial else 'is'} "
                    f"{ui.md_escape(value)}.")
        else:
            keys = rows["idempotency_key"].dropna().nunique()
            events = rows["event_id"].dropna().nunique()
            m1, m2, m3, m4 = st.columns(4)
            m1.metric("Records", f"{len(rows):,}")
            m2.metric("Matched directly", f"{int(rows['matched'].sum()):,}")
            m3.metric("Keys", f"{keys:,}")
            m4.metric("Events", f"{events:,}")
            if truncated:
                st.warning(f"Showing the first {trail.MAX_TRAIL_ROWS:,} records only; narrow the search.")
            shown, cfg = links.explorer_links(rows, {"timestamp": ui.TRAIL_TIME})
            ui.table(shown, key="trail_rows", columns=cfg)
    ui.footer(TITLE)
