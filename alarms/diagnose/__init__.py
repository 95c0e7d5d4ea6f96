"""``idemwatch diagnose``: the at-least-once handler checklist judged from evidence.

``idemwatch audit`` checks what configuration shows; diagnose reads the trail of emitter outcome records (and Lambda
``REPORT`` lines) for each anti-pattern: a key derived from the delivery, a side effect before the claim, a record
completed before its side effect, deduplication kept in memory, a replay that outlived its record, a redelivery
while the first delivery still runs, permanent failures retried, a poison record blocking its shard, a side effect
started without enough time left. One rule table (:data:`~alarms.diagnose.rules.RULES`), each rule's evidence
written in Logs Insights QL, run by the project's one engine offline or by CloudWatch Logs Insights::

    from alarms.diagnose import diagnose, open_data_dir
    source = open_data_dir(Path("idemwatch-data"))
    try:
        findings = diagnose(source)   # found / not found / not observable, per rule and function/operation
    finally:
        source.close()
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "RULES",
    "DiagnoseError",
    "DiagnoseOptions",
    "Finding",
    "Rule",
    "cloudwatch_source",
    "diagnose",
    "diagnose_data_dir",
    "finding_rows",
    "load_diagnosis",
    "open_data_dir",
    "open_log_files",
    "to_json",
    "to_sarif",
]

_WHERE = {
    "RULES": "alarms.diagnose.rules", "Rule": "alarms.diagnose.rules",
    "DiagnoseError": "alarms.diagnose.exceptions",
    "DiagnoseOptions": "alarms.diagnose.types", "Finding": "alarms.diagnose.types",
    "diagnose": "alarms.diagnose.evaluate", "diagnose_data_dir": "alarms.diagnose.evaluate",
    "cloudwatch_source": "alarms.diagnose.sources", "open_data_dir": "alarms.diagnose.sources",
    "open_log_files": "alarms.diagnose.sources",
    "finding_rows": "alarms.diagnose.report", "load_diagnosis": "alarms.diagnose.report",
    "to_json": "alarms.diagnose.report", "to_sarif": "alarms.diagnose.report",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'alarms.diagnose' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
