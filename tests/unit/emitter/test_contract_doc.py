"""emitter/CONTRACT.md agrees with emitter/contract.py (and the emitter's outcome table)."""

from __future__ import annotations

import re
from pathlib import Path

from emitter.constants import WarningCode
from emitter.contract import (
    METRIC_DESCRIPTIONS,
    OUTCOME_METRIC,
    ErrorClass,
    EventSource,
    IdempotencyStatus,
    LogKey,
    Metric,
    Outcome,
)
from emitter.log_records import OUTCOME_SPEC as _OUTCOME_SPEC

DOC = (Path(__file__).resolve().parents[3] / "emitter" / "CONTRACT.md").read_text()


def table(header_first_cell: str) -> list[list[str]]:
    """Rows of the markdown table whose header starts with ``| <header_first_cell> |``."""
    lines = DOC.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header_first_cell} |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip().strip("`") for c in line.strip().strip("|").split("|")])
    return rows


def test_metrics_table():
    rows = table("Metric")
    assert [r[0] for r in rows] == [m.value for m in Metric]
    assert {r[0]: r[1] for r in rows} == {m.value: m.unit.value for m in Metric}
    assert {r[0]: r[2] for r in rows} == {m.value: METRIC_DESCRIPTIONS[m] for m in Metric}


def test_outcomes_table():
    rows = table("Outcome")
    assert [r[0] for r in rows] == [o.value for o in Outcome]
    for r in rows:
        o = Outcome(r[0])
        m = OUTCOME_METRIC[o]
        assert r[1] == (m.value if m else "—")
        level, status, retryable, error_class, code, _ = _OUTCOME_SPEC[o]
        assert r[2:] == [level, status or "—", "—" if retryable is None else str(retryable).lower(),
                         error_class or "—", code or "—"]


def test_log_keys_table():
    rows = table("Key")
    assert [r[0] for r in rows] == [k.value for k in LogKey]


def test_value_tables():
    assert [r[0] for r in table("idempotency_status")] == [s.value for s in IdempotencyStatus]
    assert [r[0] for r in table("error_class")] == [c.value for c in ErrorClass]
    assert [r[0] for r in table("event_source")] == [s.value for s in EventSource]
    assert {r[0] for r in table("Warning code")} == WarningCode.ALL


def test_dimensions_table():
    assert [r[0] for r in table("Dimension")] == ["Service", "Operation", "EventSource"]
    assert re.search(r"`Idempotency` by default", DOC)


def test_exception_outcome_table():
    from emitter.classify import POWERTOOLS_IDEMPOTENCY
    from emitter.contract import EXCEPTION_OUTCOME

    rows = table("Exception (Powertools idempotency)")
    assert {r[0]: r[1] for r in rows} == {k: v.value for k, v in EXCEPTION_OUTCOME.items()}
    for name, _, cls_code in rows:
        cls, code = POWERTOOLS_IDEMPOTENCY[name]
        assert cls_code == f"{cls.value} / {code}"
