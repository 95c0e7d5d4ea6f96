"""The demo's audit step: the static audit of the demo stack template (alarms/demo-template.yaml, with the
exported alarms and alarms/demo-stack.yaml), written as JSON next to the collected tables for the dashboard's
Configuration page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from alarms.audit.constants import AUDIT_JSON_FILE
from alarms.audit.report import to_json
from alarms.audit.rules import evaluate
from alarms.audit.sources import audit_paths, options_from_config, with_config_tables
from alarms.config import load_config

__all__ = ["DEMO_TEMPLATE", "run_demo_audit"]

_ALARMS = Path(__file__).resolve().parent.parent
DEMO_TEMPLATE = _ALARMS / "demo-template.yaml"
DEMO_CONFIG = _ALARMS / "demo-stack.yaml"
DEMO_ALARMS = _ALARMS / "exported" / "cloudformation" / "shop-alarms.json"


def run_demo_audit(out_dir: Path) -> dict[str, Any]:
    """Audit the demo template and write ``<out_dir>/audit.json`` (the ``--format json`` document).
    Returns that document. Raises :class:`~alarms.audit.exceptions.AuditError` on an unreadable template."""
    cfg = load_config(DEMO_CONFIG)
    inv = audit_paths([DEMO_TEMPLATE, DEMO_ALARMS])
    inv = with_config_tables(inv, [cfg.idempotency_table] if cfg.idempotency_table else [])
    doc = to_json(evaluate(inv, options_from_config(cfg), cfg.suppressions),
                  source=f"{DEMO_TEMPLATE.name} + {DEMO_ALARMS.name}")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / AUDIT_JSON_FILE).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return doc
