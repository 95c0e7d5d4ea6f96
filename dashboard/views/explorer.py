"""Events explorer: the whole trail of one idempotency key, event, correlation or request id."""

from __future__ import annotations

import streamlit as st

from dashboard import trail, ui, urlstate
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
    # substring search by default: a partial key finds its records; tick off for an exact match
    urlstate.bind("ex_partial", "substring", default=True, decode=urlstate.flag()[0], encode=urlstate.flag()[1])
    c1, c2, c3 = st.columns([2, 4, 1.3], vertical_alignment="bottom")
    field = c1.selectbox("Field", fields, key="ex_field")
    value = c2.text_input("Value", key="ex_value", placeholder="e.g. an idempotency key or a messageId")
    partial = c3.checkbox("Substring", key="ex_partial", help="Match any part of the id (case-insensitive). "
                                                            "Off: the whole id, exactly.")
    examples = stuck_keys(ds, ctx.filters)["idempotency_key"].head(5).tolist() if ctx.filters else []
    if examples and not value:
        st.caption("Keys still IN_PROGRESS in this window (copy one into the search):")
        ui.table(stuck_keys(ds, ctx.filters)[["idempotency_key", "operation", "last_status"]].head(5),
                 key="ex_examples")
    if value:
        _results(ds, field, value, partial)
    ui.footer(TITLE)


_PAGE_OF = "_ex_page_of"
"""Session key: the search (field, value, substring) the page number belongs to; a new search starts at page 1."""


def _results(ds, field: str, value: str, partial: bool) -> None:
    """The result of a search: its exact counts, one page of records (:data:`trail.PAGE_ROWS`) and, when there
    are more, the page number (in the URL as ``page``: a link opens the page its sender saw)."""
    ss = st.session_state
    decode, encode = urlstate.integer()
    page = urlstate.bind("ex_page", "page", default=1, decode=decode, encode=encode,
                         valid=lambda v: v if isinstance(v, int) and v >= 1 else urlstate.INVALID)
    search = (field, value.strip(), partial)
    if ss.get(_PAGE_OF) != search and not urlstate.url_wins():
        page = ss["ex_page"] = 1  # a new search (typed, not opened from a link) starts at its first page
    ss[_PAGE_OF] = search
    res = trail.search_page(ds, field, value, partial=partial, page=page)
    if res.page != page:  # past the last page (an old link, a number typed): the last page, shown as such
        ss["ex_page"] = res.page
    if not res.total:
        st.info(f"No trail records where {field.lower()} {'contains' if partial else 'is'} {ui.md_escape(value)}.")
        return
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Records", f"{res.total:,}")
    m2.metric("Matched directly", f"{res.matched:,}")
    m3.metric("Keys", f"{res.keys:,}")
    m4.metric("Events", f"{res.events:,}")
    if res.pages > 1:
        c1, c2 = st.columns([1, 5], vertical_alignment="bottom")
        c1.number_input(f"Page (of {res.pages:,})", min_value=1, step=1, key="ex_page")
        c2.caption(f"Showing records {res.first:,}–{res.first + len(res.rows) - 1:,} of {res.total:,} "
                   f"({trail.PAGE_ROWS:,} a page, in time order).")
    ui.table(res.rows, key="trail_rows", columns=TRAIL_COLUMNS,
             shown=["matched", "timestamp", "outcome", "idempotency_key", "operation", "attempt"])


_col = st.column_config
TRAIL_COLUMNS = {
    "matched": _col.CheckboxColumn("matched", width=70, help="The record matches the search itself (the others "
                                                            "share its key or event id)."),
    "timestamp": _col.DatetimeColumn("timestamp (UTC)", format="YYYY-MM-DD HH:mm:ss.SSS", width=175),
    "outcome": _col.TextColumn("outcome", width=140),
    "idempotency_key": _col.TextColumn("idempotency key", width=230),
    "operation": _col.TextColumn("operation", width=120),
    "attempt": _col.NumberColumn("attempt", format="%d", width=65),
}
"""The trail grid's default columns fit a 1280 px window; event id, request id, error code, message and the rest are
hidden, in the grid's column menu (the eye in its toolbar)."""
