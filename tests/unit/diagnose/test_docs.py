"""docs/diagnose.md says what the code does: every rule's id, name, severity and checklist line in the rule table
(verbatim from alarms/diagnose/rules.py) with its own section, and the demo's anti-pattern table as
dashboard/demo/faults.ANTI_PATTERNS has it."""

from __future__ import annotations

from pathlib import Path

from alarms.diagnose.rules import RULES
from dashboard.demo.faults import ANTI_PATTERNS

PAGE = Path(__file__).resolve().parents[3] / "docs" / "diagnose.md"


def _rows(text: str, header: str) -> list[list[str]]:
    """The rows of the Markdown table whose header line starts with ``header``."""
    lines = text[text.index(header):].splitlines()[2:]
    end = next((i for i, ln in enumerate(lines) if not ln.startswith("|")), len(lines))
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[:end]]


def test_rule_table_and_sections_match_the_rules() -> None:
    text = PAGE.read_text(encoding="utf-8")
    rows = {r[0]: r for r in _rows(text, "| id | rule | severity |")}
    assert set(rows) == {r.id for r in RULES}
    for r in RULES:
        assert rows[r.id][1:4] == [f"`{r.slug}`", r.severity.value, r.checklist], r.id
        assert f"### {r.id} {r.slug}\n\n**Checklist:** {r.checklist}\n" in text, r.id


def test_anti_pattern_table_matches_the_demo() -> None:
    rows = {r[0].strip("`"): r for r in _rows(PAGE.read_text(encoding="utf-8"), "| anti-pattern | function |")}
    assert set(rows) == {a.value for a in ANTI_PATTERNS}
    assert {inj.rule for inj in ANTI_PATTERNS.values()} <= {r.id for r in RULES}
    for a, inj in ANTI_PATTERNS.items():
        assert rows[a.value][1:] == [inj.function, inj.change, inj.rule], a
