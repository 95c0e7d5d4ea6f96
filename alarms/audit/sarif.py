"""SARIF 2.1.0 output (OASIS Static Analysis Results Interchange Format) for code-scanning tools.

One run, tool driver ``idemwatch-audit`` with every rule of the table (id, name, short/full description, help
URI = the AWS doc page, default level from the severity). One result per failed, unknown or suppressed finding:
``level`` from the severity (high=error, medium=warning, low=note; unknown findings are ``note``), a physical
location (template path, and ``region.startLine``/``startColumn``: where the resource's logical id or Terraform
resource name is written) for static audits or a logical location (the ARN) for live ones, and suppressed
findings carry ``suppressions: [{kind: external, justification}]`` (the reason from the stack config).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from alarms.audit import constants as C
from alarms.audit.rules import RULES
from alarms.audit.types import FindingStatus

__all__ = ["to_sarif"]


def to_sarif(findings: Sequence[Any], tool_version: str = "0", *, rules: Sequence[Any] = RULES,
             tool: str = "idemwatch-audit", unknown_note: str = "unknown: could not be checked") -> dict[str, Any]:
    """The SARIF log (a JSON-ready dict) for ``findings``; passes are left out. ``rules``: the rule table (every
    row becomes a ``reportingDescriptor``; ``idemwatch diagnose`` passes its own), ``tool``: the driver name,
    ``unknown_note``: what an unknown finding's message adds."""
    index = {r.id: i for i, r in enumerate(rules)}
    rules = [{
        "id": r.id, "name": r.slug,
        "shortDescription": {"text": r.rationale.split(", so ")[0].rstrip(".") + "."},
        "fullDescription": {"text": r.rationale}, "helpUri": r.doc,
        "defaultConfiguration": {"level": r.severity.sarif_level},
        "properties": {"severity": r.severity.value, "resourceKind": r.kind.value},
    } for r in rules]
    results = []
    for f in findings:
        if f.status is FindingStatus.PASS:
            continue
        res: dict[str, Any] = {
            "ruleId": f.rule, "ruleIndex": index[f.rule],
            "level": "note" if f.status is FindingStatus.UNKNOWN else f.severity.sarif_level,
            "message": {"text": f"{f.kind.value} {f.resource}: {f.message}"
                                + (f" ({unknown_note})" if f.status is FindingStatus.UNKNOWN else "")},
            "locations": [_location(f)],
            "properties": {"status": f.status.value, "resource": f.resource},
        }
        if f.status is FindingStatus.SUPPRESSED:
            res["suppressions"] = [{"kind": "external", "justification": f.suppressed_reason or ""}]
        results.append(res)
    return {
        "$schema": C.SARIF_SCHEMA_URI,
        "version": C.SARIF_VERSION,
        "runs": [{"tool": {"driver": {"name": tool, "version": tool_version,
                                      "informationUri": "https://github.com/idemwatch/idemwatch",
                                      "rules": rules}},
                  "results": results}],
    }


def _location(f: Any) -> dict[str, Any]:
    loc = f.location
    logical = {"name": f.resource, "kind": "resource",
               "fullyQualifiedName": (loc.logical_id or loc.uri) if loc else f.resource}
    if loc is None or loc.uri.startswith("arn:") or loc.logical_id is None:
        return {"logicalLocations": [logical]}
    phys: dict[str, Any] = {"artifactLocation": {"uri": loc.uri}}
    if loc.line:
        phys["region"] = {"startLine": loc.line, **({"startColumn": loc.column} if loc.column else {})}
    return {"physicalLocation": phys, "logicalLocations": [logical]}
