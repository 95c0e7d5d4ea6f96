"""Configuration: the last ``idemwatch audit`` (``<data>/audit.json``) next to the signals it explains.

Each failed finding of a rule that names dashboard signals (``alarms.audit.rules.Rule.signals``) gets those
signals' values over the selected window for the function it concerns (function -> Operation through the alarms
stack config), e.g. a visibility-timeout finding beside that function's in-progress collisions.
The audit JSON is untrusted input: shown through ``st.dataframe`` and ``ui.md_escape`` only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import diagnosis, ui, urlstate
from dashboard.compute import Filters, format_value, signal_value
from dashboard.constants import SIGNAL_BY_KEY

TITLE = "Configuration"
AUDIT_FILE = "audit.json"
"""Same name as ``alarms.audit.constants.AUDIT_JSON_FILE`` (the dashboard does not import the audit package)."""
DIAGNOSE_PAGE = "app_pages/diagnose.py"
_STATUS_ORDER = {"fail": 0, "unknown": 1, "suppressed": 2, "pass": 3}
_col = st.column_config
# the signals before the message: the explanation stays visible without scrolling the grid sideways
COLUMN_CONFIG = {
    "status": _col.TextColumn("status", width=80),
    "rule": _col.TextColumn("rule", width=60),
    "severity": _col.TextColumn("severity", width=70),
    "resource": _col.TextColumn("resource", width=150),
    "explains": _col.TextColumn("signals in window", width=160,
                                help="The dashboard signals this finding explains, for its function, in the window."),
    "evidence": _col.TextColumn("evidence", width=130,
                                help="What idemwatch diagnose found in the logs for the related evidence rules "
                                     "on the same function (the Diagnose page)."),
    "message": _col.TextColumn("message", width=230, help="Hover a cell for the whole message."),
    "doc": _col.LinkColumn("AWS doc", width=90, display_text="doc"),
}


def load_audit(data_dir: Path) -> dict[str, Any] | None:
    """The audit document, or None when the file is missing. Raises ValueError when it is not an audit JSON."""
    p = data_dir / AUDIT_FILE
    if not p.is_file():
        return None
    doc = json.loads(p.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        raise ValueError(f"{p} is not an idemwatch audit JSON document (no findings list)")  # noqa: TRY004
    return doc


def function_operations() -> dict[str, str]:
    """Function name -> Operation from the alarms stack config ($IDEMWATCH_ALARMS_CONFIG or the demo's)."""
    from dashboard.views.alarms import default_config

    path = default_config()
    if path is None:
        return {}
    try:
        from alarms.config import load_config

        return {f.name: f.operation for f in load_config(path).functions}
    except Exception:  # noqa: BLE001 - no stack config: the page still lists the findings
        return {}


def _function_of(finding: dict[str, Any], ops: dict[str, str]) -> str | None:
    res = str(finding.get("resource", ""))
    name = res.split(" -> ")[-1]
    return name if name in ops else None


def signals_in_window(ds: Any, f: Filters, operation: str, keys: Sequence[object]) -> str:
    """``In-progress collisions: 6 · Duplicates: 4``: the value of each dashboard signal in ``keys``
    (``dashboard.constants.SIGNAL_BY_KEY``; unknown keys skipped) for ``operation`` over the filters' window
    (their services and event sources kept). Also the Diagnose page's "signals in window"."""
    ff = Filters(f.start, f.end, f.services, (operation,), f.event_sources)
    parts = []
    for key in keys:
        sig = SIGNAL_BY_KEY.get(key) if isinstance(key, str) else None
        if sig is not None:
            parts.append(f"{sig.title}: {format_value(sig, signal_value(ds, sig, ff))}")
    return " · ".join(parts)


def rows(doc: dict[str, Any], ds: Any, f: Filters, ops: dict[str, str],
         diagnosed: dict[str, Any] | None = None) -> pd.DataFrame:
    """One row per finding that is not a pass, failures first; ``explains`` = signal values for the function;
    ``evidence`` = the related findings of ``diagnosed`` (the diagnose JSON, ``dashboard.diagnosis.audit_links``)."""
    rules = doc.get("rules") or {}
    out = []
    for fd, evidence in zip(doc["findings"], diagnosis.audit_links(doc, diagnosed), strict=True):
        status = str(fd.get("status", ""))
        if status == "pass":
            continue
        rule = rules.get(fd.get("rule"), {})
        fn = _function_of(fd, ops)
        explains = signals_in_window(ds, f, ops[fn], rule.get("signals", [])) \
            if status == "fail" and fn is not None else ""
        msg = str(fd.get("message", ""))
        if fd.get("suppressed_reason"):
            msg += f" (suppressed: {fd['suppressed_reason']})"
        out.append({"status": status, "rule": fd.get("rule"), "severity": fd.get("severity"),
                    "resource": f"{fd.get('kind', '')} {fd.get('resource', '')}", "message": msg,
                    "explains": explains, "evidence": evidence, "doc": rule.get("doc")})
    df = pd.DataFrame(out, columns=list(COLUMN_CONFIG))
    if not df.empty:
        df = df.sort_values(["status", "rule"], key=lambda s: s.map(_STATUS_ORDER) if s.name == "status" else s,
                            kind="stable").reset_index(drop=True)
    return df


def render() -> None:
    ctx = ui.context()
    ds, f = ctx.ds, ctx.filters
    ui.page_header(TITLE, "The last `idemwatch audit` of the stack's configuration, each failed check beside the "
                          "signals it explains for that function in the selected window.")
    try:
        doc = load_audit(ds.data_dir)
    except ValueError as exc:
        st.error(ui.md_escape(exc))
        ui.footer(TITLE)
        return
    if doc is None:
        st.info("No audit in this data directory yet. Write one with:")
        st.code(f"idemwatch audit static template.yaml --format json --out {ds.data_dir / AUDIT_FILE}\n"
                f"# or: idemwatch audit live --format json --out {ds.data_dir / AUDIT_FILE}", language="bash")
        ui.footer(TITLE)
        return
    s = doc.get("summary") or {}
    st.caption(f"source: {ui.md_escape(doc.get('source', '?'))}")
    c = st.columns(4)
    for col, k in zip(c, ("fail", "unknown", "suppressed", "pass"), strict=True):
        col.metric({"fail": "Failed", "unknown": "Unknown", "suppressed": "Suppressed", "pass": "Passed"}[k],
                   f"{int(s.get(k, 0)):,}")
    diag = diagnosis.load(ds.data_dir)
    df = rows(doc, ds, f, function_operations(), diag.doc)
    if df.empty:
        st.success("Every check passed.")
    else:
        ui.table(df, key="audit", columns=COLUMN_CONFIG,
                 shown=["status", "rule", "resource", "explains", "evidence", "message"])
    failed_signals = sorted({k for fd in doc["findings"] if fd.get("status") == "fail"
                             for k in (doc.get("rules") or {}).get(fd.get("rule"), {}).get("signals", [])
                             if k in SIGNAL_BY_KEY})
    if failed_signals:
        st.subheader("Signals the failed checks explain")
        for k in failed_signals:
            sig = SIGNAL_BY_KEY[k]
            st.page_link(sig.page, label=sig.title, query_params=urlstate.params())
    st.subheader("Evidence in the logs")
    if diag.doc is not None:
        st.caption("idemwatch diagnose judges the same handlers from their logs (the evidence column: the related "
                   "evidence rules on the same function).")
    else:
        st.caption(ui.md_escape(diag.error) if diag.error else "No diagnosis in this data directory yet.")
    st.page_link(DIAGNOSE_PAGE, label="Diagnose", query_params=urlstate.params())
    ui.footer(TITLE)
