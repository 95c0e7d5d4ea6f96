"""Diagnose output: the JSON document, the readable table and SARIF, each through the audit's writer
(``alarms.audit.report``, ``alarms.audit.sarif``) with diagnose's rule table; and :func:`finding_rows`, the table a
dashboard page shows.

The JSON document is the audit's (``{"version", "source", "summary", "rules", "findings"}``) with more per rule
(``checklist``, ``threshold``, ``query``, ``related`` audit rules) and per finding (``label``, function, operation,
``count``, ``first``/``last``, ``truncated``, ``examples`` with their records).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from alarms.audit.report import render_table as audit_table
from alarms.audit.report import to_json as audit_json
from alarms.audit.sarif import to_sarif as audit_sarif
from alarms.diagnose.rules import RULES, RULES_BY_ID
from alarms.diagnose.types import STATUS_LABELS, DiagnoseOptions, Finding, FindingStatus

__all__ = ["DIAGNOSE_JSON_FILE", "finding_rows", "load_diagnosis", "render_table", "to_json", "to_sarif"]

DIAGNOSE_JSON_FILE = "diagnose.json"
"""File name of the diagnosis in a data directory (the demo writes it next to ``audit.json``)."""
ROW_COLUMNS = ("status", "rule", "slug", "severity", "function", "operation", "count", "first", "last", "message",
               "checklist", "signals", "related", "event_id", "function_request_id", "doc")
"""Columns of :func:`finding_rows`, in order."""


def to_json(findings: Sequence[Finding], source: str, options: DiagnoseOptions | None = None) -> dict[str, Any]:
    """The ``--format json`` document (see the module docstring). ``options``: the thresholds used, recorded under
    ``options``."""
    from dataclasses import asdict


    doc = audit_json(findings, source, RULES_BY_ID)
    doc["tool"] = "idemwatch diagnose"
    for rid, entry in doc["rules"].items():
        r = RULES_BY_ID[rid]
        entry.update(checklist=r.checklist, threshold=r.threshold, entity=r.entity_label, query=r.query,
                     related=list(r.related))
    if options is not None:
        doc["options"] = {k: v for k, v in asdict(options).items() if k != "key_hash_salt"}
    return doc


def render_table(findings: Sequence[Finding], show_passed: bool = False, width: int = 160) -> str:
    """The readable report: one row per rule and function (not found ones only with ``show_passed``), statuses
    named found / not found / not observable; then, per found finding, its first examples."""

    text = audit_table(findings, show_passed=show_passed, width=width, rules=RULES_BY_ID, labels=STATUS_LABELS)
    lines = []
    for f in findings:
        if f.status is not FindingStatus.FAIL:
            continue
        span = f" from {f.first} to {f.last}" if f.first else ""
        lines.append(f"{f.rule} {f.resource}: {f.count}{'+' if f.truncated else ''} "
                     f"{RULES_BY_ID[f.rule].entity_label}(s){span}")
        for ex in f.examples:
            outcomes = ", ".join(str(r.get("outcome")) for r in ex.records[:8])
            more = f", ... ({len(ex.records)} records)" if len(ex.records) > 8 else ""
            lines.append(f"  {ex.entity}: {outcomes}{more}")
    if lines:
        text += "\nexamples (idempotency keys hashed as the emitter hashes them):\n" + "\n".join(lines) + "\n"
    return text


def to_sarif(findings: Sequence[Finding], tool_version: str = "0") -> dict[str, Any]:
    """The SARIF 2.1.0 log: the audit's writer with diagnose's rules, driver ``idemwatch-diagnose``, a not
    observable finding as a ``note`` that says so."""

    return audit_sarif(findings, tool_version, rules=RULES, tool="idemwatch-diagnose", unknown_note="not observable")


def load_diagnosis(data_dir: Path) -> dict[str, Any] | None:
    """The diagnose JSON document saved in ``data_dir`` (:data:`DIAGNOSE_JSON_FILE`), or None when there is none.

    Raises:
        ValueError: the file is not a diagnose JSON document (no findings list), or not JSON.
    """
    p = Path(data_dir) / DIAGNOSE_JSON_FILE
    if not p.is_file():
        return None
    doc = json.loads(p.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        raise ValueError(f"{p} is not an idemwatch diagnose JSON document (no findings list)")  # noqa: TRY004
    return doc


_ORDER = {"fail": 0, "unknown": 1, "suppressed": 2, "pass": 3}


def _text(v: Any) -> str:
    return "" if v is None else str(v)


def finding_rows(doc: Mapping[str, Any], show_passed: bool = True) -> list[dict[str, Any]]:
    """The diagnosis as rows a page shows beside the signals they explain: one dict per finding (columns
    :data:`ROW_COLUMNS`), found first, then not observable, then not found; within a status by function, operation,
    rule. ``event_id`` / ``function_request_id`` hold the first example's ids (a dashboard links them into the
    Events explorer); ``signals`` and ``related`` are lists (dashboard signal keys, audit rule ids).

    ``doc`` is untrusted (a file in the data directory): values are turned into text or numbers here, unknown rule
    ids keep empty rule columns, a finding that is not a mapping is skipped. Dashboard-free: the page calls it."""
    rules = _mapping(doc.get("rules"))
    out: list[dict[str, Any]] = []
    orders: list[tuple[int, str, str, str]] = []
    for fd in doc.get("findings") or []:
        if not isinstance(fd, Mapping):
            continue
        status = _text(fd.get("status"))
        if status == "pass" and not show_passed:
            continue
        rule = _mapping(rules.get(_text(fd.get("rule"))))
        examples = fd.get("examples") if isinstance(fd.get("examples"), list) else []
        first = _mapping(examples[0] if examples else None)
        recs = [r for r in (first.get("records") or []) if isinstance(r, Mapping)]
        count = fd.get("count")
        orders.append((_ORDER.get(status, 9), _text(fd.get("function")), _text(fd.get("operation")),
                       _text(fd.get("rule"))))
        out.append({
            "status": STATUS_LABELS.get(FindingStatus(status), status) if status in _ORDER else status,
            "rule": _text(fd.get("rule")), "slug": _text(rule.get("slug")), "severity": _text(fd.get("severity")),
            "function": _text(fd.get("function")), "operation": _text(fd.get("operation")),
            "count": count if isinstance(count, int) and not isinstance(count, bool) else 0,
            "first": _text(fd.get("first")), "last": _text(fd.get("last")), "message": _text(fd.get("message")),
            "checklist": _text(rule.get("checklist")),
            "signals": [_text(s) for s in rule.get("signals") or [] if isinstance(s, str)],
            "related": [_text(s) for s in rule.get("related") or [] if isinstance(s, str)],
            "event_id": next((_text(r.get("event_id")) for r in recs if r.get("event_id")), ""),
            "function_request_id": next((_text(r.get("function_request_id")) for r in recs
                                         if r.get("function_request_id")), ""),
            "doc": _text(rule.get("doc")),
        })
    return [row for _, row in sorted(zip(orders, out, strict=True), key=lambda pair: pair[0])]


def _mapping(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}
