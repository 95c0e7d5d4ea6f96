"""The dashboard-body validator against "Dashboard Body Structure and Syntax" (CloudWatch API Reference): the
page's own example and the exported body are accepted; each malformed body is rejected naming the rule."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from alarms.catalogue import build_catalogue
from alarms.composite import build_composites
from alarms.config import load_config
from alarms.console_dashboard import MANAGED_MARKER, build_body, concrete
from alarms.dashboard_body import validate_body
from alarms.insight_rules import build_insight_rules

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
ARN = "arn:aws:cloudwatch:us-east-1:123456789012:alarm:shop-x"

# The example of the page's "Overall Structure" section, verbatim.
DOC_EXAMPLE = {
    "start": "-PT6H", "periodOverride": "inherit",
    "widgets": [
        {"type": "metric", "x": 0, "y": 0, "width": 12, "height": 6,
         "properties": {"metrics": [["AWS/EC2", "CPUUtilization", "InstanceId", "i-012345"]], "period": 300,
                        "stat": "Average", "region": "us-east-1", "title": "EC2 Instance CPU", "liveData": False,
                        "legend": {"position": "right"}}},
        {"type": "text", "x": 0, "y": 7, "width": 3, "height": 3, "properties": {"markdown": "Hello world"}},
    ],
}


def _metric(**props):
    base = {"metrics": [["AWS/Lambda", "Errors", "FunctionName", "f"]], "region": "us-east-1"}
    base.update(props)
    return {"widgets": [{"type": "metric", "x": 0, "y": 0, "width": 6, "height": 6, "properties": base}]}


def _widget(**fields):
    w = {"type": "text", "x": 0, "y": 0, "width": 6, "height": 6, "properties": {"markdown": "m"}}
    w.update(fields)
    return {"widgets": [w]}


def test_the_documented_example_and_variants_are_accepted():
    assert validate_body(DOC_EXAMPLE) == []
    assert validate_body(json.dumps(DOC_EXAMPLE)) == []
    assert validate_body({"widgets": []}) == []  # "that array can be empty"
    ok = [
        _metric(metrics=[["AWS/Lambda", "Errors", "FunctionName", "f", {"stat": "Sum", "label": "e"}],
                         ["...", "g"], [{"expression": "m1 * 2", "id": "e1"}]]),
        _metric(metrics=None, annotations={"alarms": [ARN]}),  # an alarm annotation without metrics
        {"widgets": [{"type": "log", "x": 0, "y": 0, "width": 24, "height": 6,
                      "properties": {"query": "SOURCE '/aws/lambda/f' | stats count(*)", "region": "eu-west-1",
                                     "view": "table"}}]},
        {"widgets": [{"type": "alarm", "x": 0, "y": 0, "width": 24, "height": 3,
                      "properties": {"alarms": [ARN], "sortBy": "stateUpdatedTimestamp", "states": ["ALARM"]}}]},
        {"widgets": [{"type": "explorer", "x": 0, "y": 0, "width": 24, "height": 6,
                      "properties": {"metrics": [{"metricName": "CPUUtilization", "resourceType": "AWS::EC2::Instance",
                                                  "stat": "Average"}], "region": "us-east-1"}}]},
    ]
    for body in ok:
        body = json.loads(json.dumps(body).replace('"metrics": null, ', ""))
        assert validate_body(body) == [], body


MALFORMED = [
    ("not JSON", "{widgets: [", "body.json"),
    ("no widgets array", {"start": "-PT6H"}, "body.widgets_required"),
    ("periodOverride value", {**DOC_EXAMPLE, "periodOverride": "always"}, "body.period_override"),
    ("unknown widget type", _widget(type="graph"), "widget.type"),
    ("width > 24", _widget(width=25), "widget.width_range"),
    ("width 0", _widget(width=0), "widget.width_range"),
    ("height > 1000", _widget(height=1001), "widget.height_range"),
    ("x out of the grid", _widget(x=24), "widget.x_range"),
    ("negative y", _widget(y=-1), "widget.y_range"),
    ("x + width beyond 24 columns", _widget(x=20, width=6), "widget.grid_overflow"),
    ("no properties", {"widgets": [{"type": "text", "x": 0, "y": 0}]}, "widget.properties_required"),
    ("missing region", _metric(region=None), "metric.region_required"),
    ("no metrics and no alarm annotation", _metric(metrics=None), "metric.metrics_required"),
    ("metrics entry is a string", _metric(metrics=["AWS/Lambda Errors"]), "metric.entry_shape"),
    ("odd dimension list", _metric(metrics=[["AWS/Lambda", "Errors", "FunctionName"]]), "metric.entry_shape"),
    ("rendering object not last", _metric(metrics=[["AWS/Lambda", {"stat": "Sum"}, "Errors"]]), "metric.entry_shape"),
    ("unknown rendering option", _metric(metrics=[["AWS/Lambda", "Errors", {"colour": "#f00"}]]),
     "metric.rendering_keys"),
    ("'...' in the first entry", _metric(metrics=[["...", "f"]]), "metric.entry_shape"),
    ("two alarm annotations", _metric(annotations={"alarms": [ARN, ARN + "2"]}), "metric.annotation_alarms"),
    ("annotation without value", _metric(annotations={"horizontal": [{"label": "x"}]}), "metric.annotation_value"),
    ("metric period 45", _metric(period=45), "metric.period"),
    ("metric view", _metric(view="line"), "metric.view"),
    ("log widget without query", {"widgets": [{"type": "log", "properties": {"region": "us-east-1"}}]},
     "log.query_required"),
    ("log widget without region", {"widgets": [{"type": "log", "properties": {"query": "stats count(*)"}}]},
     "log.region_required"),
    ("alarm widget with a non-ARN", {"widgets": [{"type": "alarm", "properties": {"alarms": ["my-alarm"]}}]},
     "alarm.arn"),
    ("alarm widget with 101 alarms", {"widgets": [{"type": "alarm", "properties": {"alarms": [ARN] * 101}}]},
     "alarm.alarms_count"),
    ("alarm widget state", {"widgets": [{"type": "alarm", "properties": {"alarms": [ARN], "states": ["FIRING"]}}]},
     "alarm.states"),
    ("text without markdown", _widget(properties={"text": "hi"}), "text.markdown_required"),
    ("explorer metric shape", {"widgets": [{"type": "explorer", "properties": {"metrics": [{"metricName": "x"}]}}]},
     "explorer.metrics"),
    ("501 widgets", {"widgets": [_widget()["widgets"][0]] * 501}, "body.widgets_count"),
]


@pytest.mark.parametrize(("what", "body", "rule"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_bodies_are_rejected_naming_the_rule(what, body, rule):
    if isinstance(body, dict):
        body = json.loads(json.dumps(body).replace('"region": null, ', "").replace('"metrics": null, ', "")
                          .replace(', "region": null', ""))
    problems = validate_body(body)
    assert rule in {p.rule for p in problems}, (what, problems)


def test_the_exported_dashboard_is_valid_and_carries_the_alarms():
    cfg = load_config(DEMO)
    defs = build_catalogue(cfg)
    composites = build_composites(cfg, defs)
    rules = build_insight_rules(cfg)
    body = build_body(cfg, defs, concrete(cfg), composites, rules)
    assert validate_body(body) == []
    arns = {a for w in body["widgets"] if w["type"] == "alarm" for a in w["properties"]["alarms"]}
    # every alarm of the stack, composites included, is on an alarm-status widget, named by its ARN in the config's
    # region/account
    assert arns == {f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{d.name}" for d in (*defs, *composites)}
    # one Contributor Insights widget per rule, as the console writes it
    contributors = [w["properties"]["insightRule"] for w in body["widgets"] if "insightRule" in w["properties"]]
    assert contributors == [{"maxContributorCount": 10, "orderBy": "Sum", "ruleName": r.name} for r in rules]
    assert len(contributors) == 12
    metric = [w for w in body["widgets"] if w["type"] == "metric" and "annotations" in w["properties"]]
    annotated = {w["properties"]["annotations"]["alarms"][0].rsplit(":", 1)[1] for w in metric}
    # every base alarm is graphed with its alarm annotation, but the maintenance window (set by hand, no data)
    assert {d.name for d in defs if not d.tier and d.signal != "maintenance_window"} <= annotated
    # tiers are horizontal annotations on their base alarm's widget
    rr = next(w for w in metric if w["properties"]["annotations"]["alarms"][0].endswith(":shop-orders-consumer-RetryRate"))
    assert rr["properties"]["annotations"]["horizontal"] == [{"value": 25.0, "label": "critical > 25"}]
    logs = [w for w in body["widgets"] if w["type"] == "log"]
    assert len(logs) == 2 * len(cfg.functions)
    assert logs[0]["properties"]["query"].startswith("SOURCE '/aws/lambda/orders-consumer' | filter ")
    assert MANAGED_MARKER in body["widgets"][0]["properties"]["markdown"]
    # ConditionalCheckFailedRequests is graphed as context, never alarmed on
    assert not [d for d in defs if "ConditionalCheckFailed" in json.dumps(d.to_request())]
    assert any("ConditionalCheckFailedRequests" in json.dumps(w) for w in metric + [
        w for w in body["widgets"] if w["type"] == "metric"])


def test_validator_never_raises_on_hostile_shapes():
    for body in (None, 3, [], {"widgets": None}, {"widgets": [None, 1, "x", {"type": None, "properties": []}]},
                 {"widgets": [{"type": "metric", "properties": {"metrics": [[], [None], [{}]], "annotations": 5}}]},
                 copy.deepcopy(DOC_EXAMPLE) | {"start": 5}):
        assert isinstance(validate_body(body), list)
