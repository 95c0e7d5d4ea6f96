"""Audit output: a readable table by resource, and the JSON document (also read by the dashboard page).

Static findings carry where the resource is written: ``location.line``/``column`` (1-based) in JSON, and
``file:line:column`` under the resource's name in the table (the file's name; the JSON has the path as given)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from alarms.audit.rules import RULES_BY_ID, Finding
from alarms.audit.types import FindingStatus, Severity

__all__ = ["JSON_VERSION", "failing", "render_table", "summary", "to_json", "where"]

JSON_VERSION = 1


def summary(findings: Sequence[Any]) -> dict[str, int]:
    """Count per status (every status present, 0 when none). ``findings``: the audit's, or any with a ``status``
    (``idemwatch diagnose``'s)."""
    c = Counter(f.status.value for f in findings)
    return {s.value: c.get(s.value, 0) for s in FindingStatus}


def failing(findings: Sequence[Any], fail_on: Severity | None) -> list[Any]:
    """Failed (not suppressed, not unknown) findings at or above ``fail_on``; ``None`` = never fail."""
    if fail_on is None:
        return []
    return [f for f in findings if f.status is FindingStatus.FAIL and f.severity.rank >= fail_on.rank]


def to_json(findings: Sequence[Any], source: str, rules: Mapping[str, Any] = RULES_BY_ID) -> dict[str, Any]:
    """The ``--format json`` document: ``{"version", "source", "summary", "rules", "findings"}``; ``rules`` has
    the rationale, doc URL and dashboard signals of each rule that produced a finding. ``rules``: the rule table
    by id (``idemwatch diagnose`` passes its own; any rows with ``slug``, ``severity``, ``rationale``, ``doc``,
    ``signals``)."""
    used = sorted({f.rule for f in findings})
    return {
        "version": JSON_VERSION,
        "source": source,
        "summary": summary(findings),
        "rules": {rid: {"slug": rules[rid].slug, "severity": rules[rid].severity.value,
                        "rationale": rules[rid].rationale, "doc": rules[rid].doc,
                        "signals": list(rules[rid].signals)} for rid in used},
        "findings": [f.to_dict() for f in findings],
    }


def dumps(findings: Sequence[Finding], source: str) -> str:
    return json.dumps(to_json(findings, source), indent=2, sort_keys=False)


def where(f: Finding) -> str:
    """``<file name>:<line>:<column>`` of a static finding's resource (``<file name>`` alone when the line is
    unknown); empty for live findings (their location is an ARN) and for resources not found."""
    loc = f.location
    if loc is None or loc.logical_id is None or loc.uri.startswith("arn:"):
        return ""
    text = PurePath(loc.uri).name
    if loc.line:
        text += f":{loc.line}" + (f":{loc.column}" if loc.column else "")
    return text


def render_table(findings: Sequence[Any], show_passed: bool = False, width: int = 160,
                 rules: Mapping[str, Any] = RULES_BY_ID, labels: Mapping[FindingStatus, str] | None = None) -> str:
    """Findings grouped by resource (kind, name), one row per rule, as plain text (rich, no colour); where a static
    finding's resource is written (:func:`where`) goes on the line below its name. ``rules``: the rule table by id
    (for the slugs); ``labels``: the status column's text per status (default the status value, upper case)."""
    from io import StringIO

    from rich.console import Console
    from rich.table import Table

    from idemwatch.terminal import cell

    rows = [f for f in findings if show_passed or f.status is not FindingStatus.PASS]
    rows.sort(key=lambda f: (f.kind.value, f.resource, f.rule))
    t = Table("resource", "rule", "severity", "status", "message", box=None, show_edge=False)
    last = None
    for f in rows:
        res = f"{f.kind.value} {f.resource}"
        msg = f.message + (f" [suppressed: {f.suppressed_reason}]" if f.suppressed_reason else "")
        # resource names and messages quote templates and accounts: escaped for the terminal, never markup;
        # where the resource is written goes on the line below its name
        name = cell(res)
        place = where(f) if getattr(f, "location", None) is not None else ""
        if place:
            name.append("\n")
            name.append_text(cell(place))
        status = (labels or {}).get(f.status, f.status.value).upper()
        t.add_row(name if res != last else "", f"{f.rule} {rules[f.rule].slug}", f.severity.value,
                  status, cell(msg))
        last = res
    buf = StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False)
    if rows:
        console.print(t)
    s = summary(findings)
    console.print(", ".join(f"{v} {(labels or {}).get(FindingStatus(k), k)}" for k, v in s.items()))
    return buf.getvalue()
