"""Generated parts of docs/audit.md: the rule table (from :data:`~alarms.audit.rules.RULES`) and the IAM policy
(from :data:`~alarms.audit.live.IAM_ACTIONS`). ``python -m alarms.audit.docs docs/audit.md`` rewrites them in
place between their ``<!-- ...:begin -->`` / ``<!-- ...:end -->`` markers; a test fails when the page is stale."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from alarms.audit.live import IAM_ACTIONS
from alarms.audit.rules import RULES

__all__ = ["iam_policy", "refresh", "rules_table"]


def rules_table() -> str:
    """The Markdown rule table: id, name, severity, resource kind, rationale, source."""
    lines = ["| id | rule | severity | checks | rationale | source |", "| --- | --- | --- | --- | --- | --- |"]
    for r in RULES:
        lines.append(f"| {r.id} | `{r.slug}` | {r.severity.value} | {r.kind.value} | {r.rationale} | "
                     f"[{r.doc.split('/')[-1].split('#')[0]}]({r.doc}) |")
    return "\n".join(lines)


def iam_policy() -> str:
    """The read-only IAM policy the live audit needs, as a JSON code block."""
    doc = {"Version": "2012-10-17", "Statement": [{"Sid": "IdemwatchAuditReadOnly", "Effect": "Allow",
                                                    "Action": sorted(IAM_ACTIONS), "Resource": "*"}]}
    return "```json\n" + json.dumps(doc, indent=2) + "\n```"


def refresh(text: str) -> str:
    """``text`` with both generated sections replaced by the current ones."""
    for name, body in (("rules", rules_table()), ("iam", iam_policy())):
        pat = re.compile(rf"(<!-- {name}:begin -->\n).*?(<!-- {name}:end -->)", re.DOTALL)
        found = pat.search(text)
        if found is None:
            raise ValueError(f"markers <!-- {name}:begin/end --> not found")
        start, end = found.span()
        head = text[:start] + f"<!-- {name}:begin -->\n"
        text = head + body + "\n" + f"<!-- {name}:end -->" + text[end:]
    return text


if __name__ == "__main__":  # pragma: no cover
    p = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/audit.md")
    p.write_text(refresh(p.read_text(encoding="utf-8")), encoding="utf-8")
