"""The rule table, suppressions, SARIF 2.1.0 output and the generated docs page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alarms.audit.exceptions import SuppressionError
from alarms.audit.model import UNKNOWN, Function, Inventory, Mapping_, Queue
from alarms.audit.report import failing, to_json
from alarms.audit.rules import RULES, RULES_BY_ID, evaluate
from alarms.audit.sarif import to_sarif
from alarms.audit.types import FindingStatus, Severity
from alarms.config import ConfigError, Suppression, parse_config

ROOT = Path(__file__).resolve().parents[3]


def _sqs(vis, timeout) -> Inventory:
    return Inventory("t", functions=(Function("f", timeout_s=timeout),),
                     mappings=(Mapping_("f", "sqs", "q", function_response_types=("ReportBatchItemFailures",)),),
                     queues=(Queue("q", visibility_timeout_s=vis, dead_letter="d", max_receive_count=3), Queue("d")))


@given(vis=st.integers(0, 43_200), timeout=st.integers(1, 900))
def test_visibility_rule_against_the_aws_formula(vis, timeout):
    (f,) = [x for x in evaluate(_sqs(vis, timeout)) if x.rule == "IW001"]
    assert f.status is (FindingStatus.PASS if vis >= 6 * timeout else FindingStatus.FAIL)


def test_unknown_is_never_a_pass():
    (f,) = [x for x in evaluate(_sqs(UNKNOWN, 10)) if x.rule == "IW001"]
    assert f.status is FindingStatus.UNKNOWN
    assert failing([f], Severity.LOW) == []


@pytest.mark.parametrize("count, status, message", [
    (0, "fail", "maxReceiveCount 0 is outside 1..1000"),
    (1001, "fail", "maxReceiveCount 1001 is outside 1..1000"),
    (1000, "pass", "redrive to d after 1000 receives"),
])
def test_redrive_bounds(count, status, message):
    inv = _sqs(60, 10)
    inv = Inventory("t", inv.functions, inv.mappings, (Queue("q", 60, dead_letter="d", max_receive_count=count),
                                                       Queue("d")))
    (f,) = [x for x in evaluate(inv) if x.rule == "IW004"]
    assert (f.status.value, f.message) == (status, message)


def test_redrive_to_missing_dlq():
    inv = Inventory("t", _sqs(60, 10).functions, _sqs(60, 10).mappings,
                    (Queue("q", 60, dead_letter="gone", max_receive_count=3),))
    (f,) = [x for x in evaluate(inv) if x.rule == "IW004"]
    assert f.message == "RedrivePolicy names dead-letter queue gone, which does not exist"


def test_rule_table_shape():
    from dashboard.constants import SIGNAL_BY_KEY

    assert [r.id for r in RULES] == [f"IW{i:03d}" for i in range(1, len(RULES) + 1)]
    assert len({r.slug for r in RULES}) == len(RULES)
    for r in RULES:
        assert r.doc.startswith("https://docs.aws.amazon.com/"), r.id
        assert r.rationale.endswith(".") and "\n" not in r.rationale, r.id
        assert set(r.signals) <= set(SIGNAL_BY_KEY), r.id


def test_suppressions_from_config_and_engine():
    cfg = parse_config({"service": "s", "functions": [{"name": "f", "operation": "O", "event_source": "sqs"}],
                        "suppressions": [{"rule": "IW001", "resource": "q -> f", "reason": "short handler"}]})
    assert cfg.suppressions == (Suppression("IW001", "q -> f", "short handler"),)
    (f,) = [x for x in evaluate(_sqs(30, 10), suppressions=cfg.suppressions) if x.rule == "IW001"]
    assert (f.status, f.suppressed_reason) == (FindingStatus.SUPPRESSED, "short handler")
    assert failing([f], Severity.LOW) == []
    # a suppression never hides a pass
    (p,) = [x for x in evaluate(_sqs(60, 10), suppressions=cfg.suppressions) if x.rule == "IW001"]
    assert p.status is FindingStatus.PASS and p.suppressed_reason is None
    with pytest.raises(SuppressionError, match="unknown rule 'IW999'"):
        evaluate(_sqs(30, 10), suppressions=[Suppression("IW999", "q", "x")])


@pytest.mark.parametrize("raw, where", [
    ([{"rule": "IW001", "resource": "q"}], "suppressions[0].reason"),
    ([{"rule": "IW001", "resource": "q", "reason": "  "}], "suppressions[0].reason"),
    ([{"rule": "IW001", "resource": "q", "reason": "r", "until": 1}], "suppressions[0].until"),
    ({"rule": "IW001"}, "suppressions"),
])
def test_bad_suppressions_are_config_errors(raw, where):
    with pytest.raises(ConfigError, match=re.escape(where)):
        parse_config({"service": "s", "functions": [{"name": "f", "operation": "O", "event_source": "sqs"}],
                      "suppressions": raw})


def _check_sarif(log: dict) -> None:
    """Structural checks of SARIF 2.1.0 beyond the schema (test_sarif_against_the_sarif_schema): levels, help URIs,
    rule indexes."""
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] and isinstance(driver["rules"], list)
    ids = [r["id"] for r in driver["rules"]]
    for r in driver["rules"]:
        assert r["defaultConfiguration"]["level"] in ("none", "note", "warning", "error")
        assert r["helpUri"].startswith("https://") and r["shortDescription"]["text"]
    for res in run["results"]:
        assert res["message"]["text"]
        assert res["level"] in ("none", "note", "warning", "error")
        assert ids[res["ruleIndex"]] == res["ruleId"]
        for loc in res["locations"]:
            assert "physicalLocation" in loc or "logicalLocations" in loc
            if "physicalLocation" in loc:
                assert loc["physicalLocation"]["artifactLocation"]["uri"]
                assert loc["physicalLocation"].get("region", {"startLine": 1})["startLine"] >= 1
        for s in res.get("suppressions", []):
            assert s["kind"] in ("inSource", "external") and s["justification"]


def test_sarif_static_with_lines_and_suppression(tmp_path):
    from alarms.audit.sources import audit_paths

    p = tmp_path / "t.yaml"
    p.write_text("Resources:\n  Fn:\n    Type: AWS::Lambda::Function\n    Properties:\n      FunctionName: f\n"
                 "      Timeout: 20\n  Map:\n    Type: AWS::Lambda::EventSourceMapping\n    Properties:\n"
                 "      FunctionName: !Ref Fn\n      EventSourceArn: !GetAtt Q.Arn\n"
                 "  Q:\n    Type: AWS::SQS::Queue\n    Properties: {QueueName: q}\n", encoding="utf-8")
    findings = evaluate(audit_paths([p]), suppressions=[Suppression("IW004", "q", "no DLQ by design")])
    log = to_sarif(findings)
    _check_sarif(log)
    res = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    assert set(res) == {"IW001", "IW002", "IW004"}
    assert res["IW001"]["level"] == "error"
    assert res["IW001"]["locations"][0]["physicalLocation"] == {"artifactLocation": {"uri": str(p)},
                                                                 "region": {"startLine": 7, "startColumn": 3}}
    assert res["IW004"]["suppressions"] == [{"kind": "external", "justification": "no DLQ by design"}]
    assert res["IW004"]["locations"][0]["physicalLocation"]["region"] == {"startLine": 12, "startColumn": 3}
    json.dumps(log)  # JSON-serialisable


def test_sarif_against_the_sarif_schema():
    """The OASIS SARIF 2.1.0 schema, vendored under tests/support/sarif (its README names the source)."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "tests" / "support" / "sarif" / "sarif-schema-2.1.0.json").read_text("utf-8"))
    findings = evaluate(_sqs(30, 10))
    jsonschema.Draft4Validator(schema).validate(to_sarif(findings))


def test_json_document_shape():
    findings = evaluate(_sqs(30, 10))
    doc = to_json(findings, "t")
    # IW001 fails (30 < 60), IW014 fails (d is a DLQ without an alarm), IW002 and IW004 pass
    assert doc["summary"] == {"fail": 2, "pass": 2, "unknown": 0, "suppressed": 0}
    assert set(doc["rules"]) == {f.rule for f in findings}
    assert doc["rules"]["IW001"]["doc"] == RULES_BY_ID["IW001"].doc


def test_docs_page_is_not_stale():
    from alarms.audit.docs import refresh

    page = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    assert refresh(page) == page, "docs/audit.md is stale: run python -m alarms.audit.docs docs/audit.md"
    for r in RULES:
        assert f"| {r.id} | `{r.slug}` |" in page and r.doc in page
