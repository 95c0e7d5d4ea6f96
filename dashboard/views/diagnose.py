"""Diagnose: the last ``idemwatch diagnose`` (``<data>/diagnose.json``) beside the signals it explains.

Each finding (found / not observable / not found, per rule and function/operation) with the values of the dashboard
signals its rule explains for that operation in the selected window, and the audit's static findings of the rules
it relates to on the same function (``audit.json``, the Configuration page). The picked finding's evidence records
follow; their event ids and request ids open the Events explorer in this tab with the time range and filters kept.
Loading and the frames are ``dashboard.diagnosis``; this module only lays them out. The diagnosis is untrusted
input: shown through ``st.dataframe`` and ``ui.md_escape`` only.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboard import diagnosis, ui, urlstate
from dashboard.constants import SIGNAL_BY_KEY
from dashboard.views.configuration import load_audit, signals_in_window

TITLE = "Diagnose"
PAGE = "app_pages/diagnose.py"
CONFIGURATION_PAGE = "app_pages/configuration.py"
_col = st.column_config
# the default columns fit a 1280 px window beside the sidebar; the rest are in the grid's column menu
COLUMN_CONFIG: dict[str, Any] = {
    "id": _col.TextColumn("finding", width=240),
    "status": _col.TextColumn("status", width=95, help="found: the anti-pattern is in the logs; not observable: "
                                                        "too little evidence to tell (the message says what is "
                                                        "missing), never a pass; not found: the evidence was there "
                                                        "and shows no instance."),
    "rule": _col.TextColumn("rule ↗", width=60, help="Click a rule to show that finding's evidence below."),
    "severity": _col.TextColumn("severity", width=60),
    "function": _col.TextColumn("function", width=130),
    "operation": _col.TextColumn("operation", width=120),
    "count": _col.NumberColumn("count", width=55, format="%d",
                               help="Proving events, keys, messages or invocations (the rule's entity)."),
    "first": _col.TextColumn("first (UTC)", width=175),
    "last": _col.TextColumn("last (UTC)", width=175),
    "explains": _col.TextColumn("signals in window", width=160,
                                help="The dashboard signals this finding explains, for its operation, in the "
                                     "selected window."),
    "message": _col.TextColumn("message", width=250, help="Hover a cell for the whole message."),
    "checklist": _col.TextColumn("checklist item", width=300, help="The handler checklist line the rule tests."),
    "static": _col.TextColumn("static checks", width=160,
                              help="The audit's findings (configuration) of the related rules on this function "
                                   "(the Configuration page)."),
    "doc": _col.LinkColumn("doc", width=60, display_text="doc"),
}
SHOWN = ["status", "rule", "severity", "function", "count", "explains", "message"]
EVIDENCE_CONFIG: dict[str, Any] = {
    "example": _col.TextColumn("example", width=130, help="The proving event id, key (hashed) or request id."),
    "time": _col.TextColumn("time (UTC)", width=170),
    "outcome": _col.TextColumn("outcome", width=120),
    "event_id": {"label": "event id", "width": 160},
    "function_request_id": {"label": "request id", "width": 160},
    "attempt": _col.NumberColumn("attempt", width=60, format="%d"),
    "key_hash": _col.TextColumn("key (hashed)", width=200,
                                help="Hashed as the emitter's hash_idempotency_keys hashes keys; the trail may hold "
                                     "the key in clear, so search by event id or request id."),
}
EVIDENCE_SHOWN = ["example", "time", "outcome", "event_id", "function_request_id", "attempt"]


def render() -> None:
    ctx = ui.context()
    ds, f = ctx.ds, ctx.filters
    ui.page_header(TITLE, "The last `idemwatch diagnose`: each anti-pattern of the at-least-once handler checklist "
                          "judged from the collected logs, per function and operation, beside the signals it "
                          "explains in the selected window, with the records that prove it.")
    diag = diagnosis.load(ds.data_dir)
    if diag.error is not None:
        st.error(ui.md_escape(diag.error))
        st.caption("Write it again with:")
        st.code(diagnosis.command(ds.data_dir), language="bash")
        ui.footer(TITLE)
        return
    if diag.doc is None:
        st.info("No diagnosis in this data directory yet. Write one with:")
        st.code(diagnosis.command(ds.data_dir), language="bash")
        ui.footer(TITLE)
        return
    doc = diag.doc
    st.caption(f"source: {ui.md_escape(doc.get('source', '?'))} · {ui.md_escape(diag.path)} · the diagnosis covers "
               "what it read, whatever the time filter; the signals are the selected window's.")
    for problem in diagnosis.problems(doc):
        st.warning(ui.md_escape(problem))
    counts = diagnosis.status_counts(doc)
    for col, (status, label) in zip(st.columns(4), diagnosis.STATUSES.items(), strict=True):
        col.metric(label.capitalize(), f"{counts.get(status, 0):,}")
    decode, encode = urlstate.flag()
    urlstate.bind("dg_passed", "passed", default=False, decode=decode, encode=encode)
    show_passed = st.toggle("Show rules that found nothing", key="dg_passed",
                            help="Not found: the evidence was there and shows no instance of the anti-pattern.")
    df = _with_context(diagnosis.findings(doc, show_passed), doc, ds, f)
    if not counts.get("fail"):
        st.success("No anti-pattern found." + (" Some rules could not observe theirs: see why below."
                                                if counts.get("unknown") else ""))
    if df.empty:
        ui.footer(TITLE)
        return
    ui.table(df, key="diagnose", columns=COLUMN_CONFIG, shown=SHOWN,
             links={"rule": lambda row: (PAGE, urlstate.params(finding=[row["id"]]))})
    _evidence(doc, df, ds, f)
    ui.footer(TITLE)


def _with_context(df: pd.DataFrame, doc: dict[str, Any], ds: Any, f: Any) -> pd.DataFrame:
    """Add ``explains`` (signal values of a found finding's operation in the window) and ``static`` (related audit
    findings on its function)."""
    try:
        audit = load_audit(ds.data_dir)
    except ValueError:  # the Configuration page reports a broken audit.json; here it only costs the column
        audit = None
    df["explains"] = [signals_in_window(ds, f, r.operation, r.signals.split(", ")) if r.status == "found" else ""
                      for r in df.itertuples()]
    df["static"] = [diagnosis.related_audit(audit, doc, r.rule, r.function) for r in df.itertuples()]
    return df


def _evidence(doc: dict[str, Any], df: pd.DataFrame, ds: Any, f: Any) -> None:
    st.subheader("Evidence")
    ids = df["id"].tolist()
    found = df.index[df["status"] == "found"].tolist()
    decode, encode = urlstate.choice(ids)
    urlstate.bind("dg_finding", "finding", default=ids[found[0] if found else 0], decode=decode, encode=encode,
                  valid=urlstate.one_of(ids))
    pick = st.selectbox("Finding", ids, key="dg_finding",
                        help="Or click a rule in the table above.")
    row = df.loc[df["id"] == pick].iloc[0]
    st.markdown(f"**{ui.md_escape(row['rule'])} {ui.md_escape(row['slug'])}** · {ui.md_escape(row['status'])} · "
                f"severity {ui.md_escape(row['severity'])} · {ui.md_escape(row['function'])} "
                f"({ui.md_escape(row['operation'])})")
    if row["checklist"]:
        st.caption(f"Checklist: {ui.md_escape(row['checklist'])}")
    st.markdown(ui.md_escape(row["message"]))
    if row["first"]:
        st.caption(f"{int(row['count']):,} from {ui.md_escape(row['first'])} to {ui.md_escape(row['last'])} (UTC)")
    links = [SIGNAL_BY_KEY[k] for k in row["signals"].split(", ") if k in SIGNAL_BY_KEY]
    if links or row["related"]:
        cols = st.columns(len(links) + (1 if row["related"] else 0))
        for col, sig in zip(cols, links, strict=False):
            col.page_link(sig.page, label=f"{sig.title} of {ui.md_escape(row['operation'])}",
                          query_params=urlstate.params(operation=[str(row["operation"])]))
        if row["related"]:
            cols[-1].page_link(CONFIGURATION_PAGE, label="Configuration checks", query_params=urlstate.params(),
                               help=f"Static checks of the related audit rules: {ui.md_escape(row['static'])}")
    ev, skipped = diagnosis.evidence(doc, str(row["rule"]), str(row["function"]), str(row["operation"]))
    if skipped:
        st.warning(f"{skipped:,} example(s) or record(s) of this finding are not objects and cannot be shown.")
    if ev.empty:
        if row["status"] == "found":
            st.info("This finding carries no example records (diagnose --examples 0).")
        return
    n = ev["example"].nunique()
    st.caption(f"{n:,} of {int(row['count']):,} proving entities shown with their records (diagnose --examples N); "
               "a click on an event id or request id opens its whole trail in the Events explorer.")
    ui.table(ev, key="evidence", columns=EVIDENCE_CONFIG, shown=EVIDENCE_SHOWN)
