"""Where findings point: the line and column of a resource's logical id (Terraform resource name) in YAML and
JSON templates, through the JSON report, the table and SARIF (validated against the SARIF 2.1.0 schema)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alarms.audit.loading import key_positions
from alarms.audit.report import render_table, to_json
from alarms.audit.rules import evaluate
from alarms.audit.sarif import to_sarif
from alarms.audit.sources import audit_paths, options_from_config
from alarms.config import load_config

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = ROOT / "tests" / "support" / "sarif" / "sarif-schema-2.1.0.json"
DEMO = ROOT / "alarms" / "demo-template.yaml"


def _find(text: str, needle: str) -> tuple[int, int]:
    """(line, column), 1-based, of the first occurrence of ``needle``: the oracle, by plain text search."""
    before = text[:text.index(needle)]
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


_IDS = st.lists(st.from_regex(r"[A-Z][A-Za-z0-9]{0,20}", fullmatch=True), min_size=1, max_size=8, unique=True)


@settings(max_examples=60, deadline=None)
@given(ids=_IDS, indent=st.sampled_from([None, 1, 2, 4]), separators=st.sampled_from([(",", ":"), (", ", ": ")]))
def test_json_positions_match_a_text_search(ids, indent, separators):
    """Every logical id of a JSON template (any json.dumps layout: compact, CDK's 1-space, 4-space) is found at
    the line and column where its quoted key is written."""
    doc = {"Resources": {i: {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": i.lower()}} for i in ids}}
    text = json.dumps(doc, indent=indent, separators=separators)
    pos = key_positions(text)
    for i in ids:
        assert pos[("Resources", i)] == _find(text, f'"{i}"{separators[1]}{{')


@settings(max_examples=40, deadline=None)
@given(ids=_IDS, pad=st.integers(0, 3))
def test_yaml_positions_match_a_text_search(ids, pad):
    lines = ["# comment", "Resources:"]
    for i in ids:
        lines += [" " * (2 + pad) + f"{i}:", " " * (4 + pad) + "Type: AWS::SQS::Queue"]
    text = "\n".join(lines) + "\n"
    pos = key_positions(text)
    for i in ids:
        newline_before, _ = _find(text, f"\n{' ' * (2 + pad)}{i}:\n")
        assert pos[("Resources", i)] == (newline_before + 1, 3 + pad)


def test_positions_of_text_yaml_cannot_compose_are_empty():
    assert key_positions("{\"a\": [1, 2}") == {}
    assert key_positions("") == {}


def test_alias_bomb_positions_are_linear():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 20)]
    assert len(key_positions("\n".join(lines))) == 20


def test_terraform_list_of_resource_blocks(tmp_path):
    t = tmp_path / "t.tf.json"
    text = ('{"resource": [\n {"aws_sqs_queue": {"a": {"name": "a"}}},\n {"aws_sqs_queue": {\n'
            '   "b": {"name": "b"}}}\n]}\n')
    t.write_text(text, encoding="utf-8")
    locs = {q.name: (q.location.line, q.location.column) for q in audit_paths([t]).queues}
    assert locs == {"a": _find(text, '"a": {'), "b": _find(text, '"b": {')} == {"a": (2, 21), "b": (4, 4)}


def _demo_findings():
    cfg = load_config(ROOT / "alarms" / "demo-stack.yaml")
    return evaluate(audit_paths([DEMO]), options_from_config(cfg))


def test_demo_template_sarif_validates_and_points_at_logical_ids():
    jsonschema = pytest.importorskip("jsonschema")
    log = to_sarif(_demo_findings(), "0.1.0")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(log)
    lines = DEMO.read_text(encoding="utf-8").splitlines()
    failing = [r for r in log["runs"][0]["results"] if r["properties"]["status"] == "fail"]
    assert failing  # the demo's stream mapping has no bisect and unbounded retries (IW005, IW007)
    for r in log["runs"][0]["results"]:
        region = r["locations"][0]["physicalLocation"]["region"]
        logical = r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
        line = lines[region["startLine"] - 1]
        # the line holds the logical id as a key, starting at startColumn
        assert line[region["startColumn"] - 1:] == f"{logical}:", (r["ruleId"], line)


def test_demo_template_json_and_table_carry_the_position():
    findings = _demo_findings()
    doc = to_json(findings, str(DEMO))
    text = DEMO.read_text(encoding="utf-8")
    located = [f for f in doc["findings"] if f["resource"] == "ledger-stream -> ledger-stream"]
    line, column = _find(text, "LedgerStreamConsumer:")
    assert column == 3
    assert located and all((f["location"]["line"], f["location"]["column"]) == (line, 3) for f in located)
    assert f"demo-template.yaml:{line}:3" in render_table(findings)


def test_cdk_style_json_template_points_at_the_logical_id(tmp_path):
    """A synthesized (cdk synth) template: JSON indented by one space; the failing mapping's line is its id's."""
    doc = {"Resources": {
        "FnC4345940": {"Type": "AWS::Lambda::Function", "Properties": {"Timeout": 30}},
        "QueueA1B2": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 30}},
        "MapD3E4": {"Type": "AWS::Lambda::EventSourceMapping",
                    "Properties": {"FunctionName": {"Ref": "FnC4345940"},
                                   "EventSourceArn": {"Fn::GetAtt": ["QueueA1B2", "Arn"]}}}}}
    text = json.dumps(doc, indent=1)
    p = tmp_path / "Stack.template.json"
    p.write_text(text, encoding="utf-8")
    log = to_sarif(evaluate(audit_paths([p])))
    for r in log["runs"][0]["results"]:
        loc = r["locations"][0]
        region = loc["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"]) == _find(text, f'"{loc["logicalLocations"][0]["fullyQualifiedName"]}": {{')
