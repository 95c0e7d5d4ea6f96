"""One representation, every output: metric alarms, composite alarms and Contributor Insights rules are their API
requests, and the CLI files, the CloudFormation templates and the Terraform files all read back to those requests
(hostile names included)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from alarms.catalogue import build_catalogue
from alarms.cfn_template import build_template, requests_from_cloudformation, to_cloudformation
from alarms.composite import build_composites
from alarms.config import load_config, parse_config
from alarms.exceptions import ConfigError
from alarms.export import export
from alarms.insight_rules import build_insight_rules
from alarms.kinds import COMPOSITE_ALARM, INSIGHT_RULE, METRIC_ALARM, kind_of, name_of
from alarms.terraform import evaluate, requests_from_terraform, to_terraform
from alarms.tf_module import build_module, resolve_module
from alarms.validate import load_requests, validate_requests
from alarms.violation import errors

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
EXPORTED = ROOT / "alarms" / "exported"


def _requests(cfg):
    defs = build_catalogue(cfg)
    return defs, [json.loads(json.dumps(x.to_request())) for x in (*defs, *build_composites(cfg, defs),
                                                                   *build_insight_rules(cfg))]


def _canonical(requests):
    """Requests compared as sets: empty lists dropped, name-keyed maps (dimensions, tags) sorted."""
    def norm(x):
        if isinstance(x, dict):
            return {k: norm(v) for k, v in x.items() if v != []}
        if isinstance(x, list):
            items = [norm(v) for v in x]
            if items and all(isinstance(v, dict) and set(v) in ({"Name", "Value"}, {"Key", "Value"}) for v in items):
                return sorted(items, key=json.dumps)
            return items
        return x
    return sorted((norm(r) for r in requests), key=lambda r: (kind_of(r), name_of(r)))


def test_every_kind_reads_back_from_every_output():
    cfg = load_config(DEMO)
    defs, want = _requests(cfg)
    assert [sum(kind_of(r) == k for r in want) for k in (METRIC_ALARM, COMPOSITE_ALARM, INSIGHT_RULE)] == [74, 11, 12]
    plain_cfn = requests_from_cloudformation(json.loads(json.dumps(to_cloudformation(want, "shop"))))
    plain_tf = requests_from_terraform(evaluate(json.loads(json.dumps(to_terraform(want)))))
    template = requests_from_cloudformation(json.loads(json.dumps(build_template(cfg, defs))))
    module = build_module(cfg, defs)
    via_module = requests_from_terraform(resolve_module(module["main.tf.json"], module["variables.tf.json"],
                                                        region="us-east-1"))
    cli = load_requests(EXPORTED / "cli")
    for got in (plain_cfn, plain_tf, template, via_module, cli):
        assert _canonical(got) == _canonical(want)


def test_composites_name_their_children_by_reference_in_the_templates():
    cfg = load_config(DEMO)
    defs = build_catalogue(cfg)
    t = build_template(cfg, defs)["Resources"]
    rule = t["ShopOrdersConsumerCompositeCriticalAlarm"]["Properties"]["AlarmRule"]["Fn::Sub"]
    refs = re.findall(r'ALARM\("\$\{(\w+)\}"\)', rule)
    assert refs and all(t[r]["Type"] == "AWS::CloudWatch::Alarm" for r in refs)  # CloudFormation creates them first
    service = t["ShopServiceCompositeCriticalAlarm"]["Properties"]["AlarmRule"]["Fn::Sub"]
    assert "${ShopOrdersConsumerCompositeCriticalAlarm}" in service  # a composite of composites
    main = build_module(cfg, defs)["main.tf.json"]["resource"]["aws_cloudwatch_composite_alarm"]
    block = main["shop_orders_consumer_composite_critical"]
    assert block["actions_suppressor"] == [{"alarm": "${aws_cloudwatch_composite_alarm.shop_suppressor.alarm_name}",
                                            "wait_period": 120, "extension_period": 300}]
    assert "${aws_cloudwatch_metric_alarm.shop_orders_consumer_poison_rate.alarm_name}" in block["alarm_rule"]


HOSTILE = ["${file(/etc/hostname)}", "%{ if true }x%{ endif }", "${AWS::Region}", "$${x}"]
_LIVE = re.compile(r"\$\{(var\.[a-z_]+|data\.[a-z_.]+|aws_cloudwatch_[a-z_]+\.[a-z0-9_]+\.[a-z_]+)\}")


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_names_stay_literal_in_composites_and_rules(tmp_path, hostile):
    cfg = parse_config({
        "service": "shop", "region": "eu-west-1", "account_id": "123456789012",
        "actions": {"critical": ["arn:aws:sns:eu-west-1:123456789012:pager"]},
        "functions": [{"name": f"fn-{hostile}"[:60], "operation": "Op", "event_source": "sqs",
                       "log_group": f"/aws/lambda/lg-{hostile}"[:80]}],
        "composite_alarms": {"suppressors": ["maintenance_window"]}, "contributor_insights": {"keys": ["event_source"]}})
    defs, want = _requests(cfg)
    assert errors(validate_requests(want)) == []
    export(defs, tmp_path, "terraform", cfg.stack, cfg, dashboard=True)
    export(defs, tmp_path, "cloudformation", cfg.stack, cfg, dashboard=True)
    for f in sorted((tmp_path / "terraform").glob("*.json")) + sorted((tmp_path / "terraform-module").glob("*.json")):
        if f.name == "variables.tf.json":
            continue
        text = json.dumps(json.loads(f.read_text()))
        live = _LIVE.sub("", text.replace("$${", "").replace("%%{", ""))
        assert "${" not in live and "%{" not in live, f.name
    for folder in ("terraform", "terraform-module", "cloudformation"):
        assert _canonical(load_requests(tmp_path / folder, "eu-west-1")) == _canonical(want)


def test_a_name_an_alarm_rule_cannot_quote_is_a_config_error():
    cfg = parse_config({"service": "shop", "composite_alarms": {},
                        "functions": [{"name": 'fn-"x"', "operation": "Op", "event_source": "sqs",
                                       "log_group": "/aws/lambda/fn"}]})
    with pytest.raises(ConfigError, match="holds a double quote, which an AlarmRule cannot reference"):
        build_catalogue(cfg)


def test_the_cli_composite_files_in_file_order_name_only_alarms_put_before_them():
    from alarms.alarm_rule import parse

    existing = {json.loads(f.read_text())["AlarmName"] for f in (EXPORTED / "cli").glob("*.json")}
    files = sorted((EXPORTED / "cli" / "composite-alarms").glob("*.json"))
    assert len(files) == 11
    for f in files:  # as `for f in cli/composite-alarms/*.json; do aws cloudwatch put-composite-alarm ...` runs them
        req = json.loads(f.read_text())
        named = set(parse(req["AlarmRule"]).children) | ({req["ActionsSuppressor"]} if "ActionsSuppressor" in req
                                                         else set())
        assert named <= existing, (f.name, named - existing)
        existing.add(req["AlarmName"])


def test_a_stack_templates_references_read_as_the_names_the_audit_reads():
    """A stack template's alarm whose dimension is a ``Ref`` to a Kinesis stream, a queue and a function reads as
    each resource's name property (the stream's ``StreamName`` too), as the audit's static reader names them."""
    from alarms.audit.static_cfn import _Resolver

    others = {
        "Stream": {"Type": "AWS::Kinesis::Stream", "Properties": {"StreamName": "orders-stream", "ShardCount": 1}},
        "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "orders-queue"}},
        "Fn": {"Type": "AWS::Lambda::Function", "Properties": {"FunctionName": "orders-fn"}},
        "Unnamed": {"Type": "AWS::SQS::Queue", "Properties": {}},
    }
    alarm = {"Type": "AWS::CloudWatch::Alarm", "Properties": {
        "AlarmName": "a", "Namespace": "AWS/Kinesis", "MetricName": "GetRecords.IteratorAgeMilliseconds",
        "Statistic": "Maximum", "Period": 60, "EvaluationPeriods": 1, "Threshold": 1,
        "ComparisonOperator": "GreaterThanThreshold",
        "Dimensions": [{"Name": "StreamName", "Value": {"Ref": "Stream"}}, {"Name": "Q", "Value": {"Ref": "Queue"}},
                       {"Name": "F", "Value": {"Ref": "Fn"}}, {"Name": "U", "Value": {"Ref": "Unnamed"}}]}}
    template = {"Resources": {"Alarm": alarm, **others}}
    (req,) = requests_from_cloudformation(template)
    assert [d["Value"] for d in req["Dimensions"]] == ["orders-stream", "orders-queue", "orders-fn", "Unnamed"]
    audit = _Resolver(template, "t.json")
    assert [audit.name(k) for k in others] == ["orders-stream", "orders-queue", "orders-fn", "Unnamed"]
