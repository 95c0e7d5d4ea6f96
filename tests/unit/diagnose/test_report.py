"""Diagnose output and the text it builds from data: string literals in queries (fuzzed), the rows a dashboard page
shows (hostile documents), the table and the JSON document."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from alarms.audit.types import FindingStatus, ResourceKind, Severity
from alarms.diagnose.evaluate import examples_query, ql_string
from alarms.diagnose.report import ROW_COLUMNS, finding_rows, load_diagnosis, render_table, to_json
from alarms.diagnose.rules import RULES_BY_ID
from alarms.diagnose.types import Example, Finding


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_ql_string_reads_back_as_the_same_value(text: str) -> None:
    from collector.insights.tokenizer import TokenType, tokenize

    tokens = tokenize(f"filter event_id = {ql_string(text)}")
    strings = [t for t in tokens if t.kind is TokenType.STRING]
    assert [t.value for t in strings] == [text]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=5))
def test_examples_query_with_any_ids_parses(ids: list[str]) -> None:
    from collector.insights import parse_query

    for rule in ("IW101", "IW104", "IW109"):
        q = examples_query(RULES_BY_ID[rule], '123456789012:/aws/lambda/f"n', ids, 100)
        parse_query(q)  # never a syntax error, whatever the ids hold


def _finding(status: FindingStatus, rule: str = "IW106", **kw: Any) -> Finding:
    return Finding(rule=rule, severity=Severity.HIGH, kind=ResourceKind.FUNCTION, resource="orders (ProcessOrders)",
                   status=status, message=kw.pop("message", "m"), log_group="/aws/lambda/orders",
                   account_id="000000000000", function="orders", operation="ProcessOrders", **kw)


def test_finding_rows_order_and_columns() -> None:
    found = _finding(FindingStatus.FAIL, count=2, first="2026-01-05T08:00:00.000Z", last="2026-01-05T09:00:00.000Z",
                     examples=(Example("m-1", ({"outcome": "received", "event_id": "m-1",
                                                "function_request_id": "r-1"},)),))
    doc = to_json([_finding(FindingStatus.PASS, "IW101"), _finding(FindingStatus.UNKNOWN, "IW107"), found], "src")
    rows = finding_rows(doc)
    assert [r["status"] for r in rows] == ["found", "not observable", "not found"]
    assert all(tuple(r) == ROW_COLUMNS for r in rows)
    top = rows[0]
    assert (top["rule"], top["slug"], top["count"], top["event_id"], top["function_request_id"]) == \
        ("IW106", "redelivered-during-processing", 2, "m-1", "r-1")
    assert top["related"] == ["IW001"] and top["signals"] == ["in_progress", "duplicates"]
    assert [r["status"] for r in finding_rows(doc, show_passed=False)] == ["found", "not observable"]


def test_finding_rows_survive_hostile_documents() -> None:
    hostile = {"rules": {"IW106": "not a mapping", "IW101": {"signals": [1, None, "<b>x</b>"]}},
               "findings": [None, 3, "x", {"rule": ["list"], "status": {"a": 1}, "count": "9", "examples": "no"},
                            {"rule": "IW101", "status": "fail", "count": True, "function": 5,
                             "examples": [{"records": [None, {"event_id": 7}]}]},
                            {"rule": "IW106", "status": "weird", "message": "<script>"}]}
    rows = finding_rows(hostile)
    assert len(rows) == 3
    assert {r["count"] for r in rows} == {0}  # a non-integer count is no count
    r101 = next(r for r in rows if r["rule"] == "IW101")
    assert r101["function"] == "5" and r101["event_id"] == "7" and r101["signals"] == ["<b>x</b>"]
    assert finding_rows({}) == [] and finding_rows({"findings": None}) == []


def test_load_diagnosis(tmp_path) -> None:
    assert load_diagnosis(tmp_path) is None
    (tmp_path / "diagnose.json").write_text(json.dumps({"findings": []}))
    assert load_diagnosis(tmp_path) == {"findings": []}
    (tmp_path / "diagnose.json").write_text("[]")
    import pytest

    with pytest.raises(ValueError, match="not an idemwatch diagnose JSON document"):
        load_diagnosis(tmp_path)


def test_table_names_statuses_as_diagnose_does() -> None:
    found = _finding(FindingStatus.FAIL, count=1, first="2026-01-05T08:00:00.000Z", last="2026-01-05T08:00:00.000Z",
                     examples=(Example("m-1", ({"outcome": "received"}, {"outcome": "duplicate_in_progress"})),))
    text = render_table([found, _finding(FindingStatus.UNKNOWN, "IW107", message="no permanent_failure record"),
                         _finding(FindingStatus.PASS, "IW101")])
    assert "FOUND" in text and "NOT OBSERVABLE" in text and "NOT FOUND" not in text
    assert "1 found, 1 not found, 1 not observable, 0 suppressed" in text
    assert "m-1: received, duplicate_in_progress" in text
    assert "NOT FOUND" in render_table([_finding(FindingStatus.PASS, "IW101")], show_passed=True)
