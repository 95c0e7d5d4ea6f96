"""``idemwatch audit``: check deployed configuration (live, boto3) and IaC templates (CloudFormation/SAM, Terraform
JSON) against the at-least-once handler checklist.

Both sources produce one normalized :class:`~alarms.audit.model.Inventory`; one rule table
(:data:`~alarms.audit.rules.RULES`) and one engine (:func:`~alarms.audit.rules.evaluate`) turn it into findings::

    from alarms.audit import audit_paths, evaluate
    inv = audit_paths([Path("template.yaml")])
    findings = evaluate(inv)
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "RULES",
    "AuditError",
    "AuditOptions",
    "Finding",
    "Inventory",
    "Rule",
    "audit_paths",
    "evaluate",
    "options_from_config",
    "read_cfn",
    "read_live",
    "read_tf",
    "to_json",
    "to_sarif",
]

_WHERE = {
    "RULES": "alarms.audit.rules", "AuditOptions": "alarms.audit.rules", "Finding": "alarms.audit.rules",
    "Rule": "alarms.audit.rules", "evaluate": "alarms.audit.rules",
    "AuditError": "alarms.audit.exceptions", "Inventory": "alarms.audit.model",
    "audit_paths": "alarms.audit.sources", "options_from_config": "alarms.audit.sources",
    "read_cfn": "alarms.audit.static_cfn", "read_tf": "alarms.audit.static_tf", "read_live": "alarms.audit.live",
    "to_json": "alarms.audit.report", "to_sarif": "alarms.audit.sarif",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'alarms.audit' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
