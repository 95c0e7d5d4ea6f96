"""IdempotencyMonitoring in synthesized CDK apps (aws-cdk-lib's assertions Template, in-process):

- named explicitly, its alarms, dashboard and outputs are the CloudFormation export of the same stack config,
  resource for resource, once the CDK tokens are resolved to the names CloudFormation gives them;
- with discover=True, in a stack built only from CDK constructs (no physical names), the Aspect finds every
  consumer, its queue, DLQ, stream and on-failure destination, by token;
- the synthesized templates pass ``idemwatch alarms validate`` and cfn-lint, and ``idemwatch init --from cdk.out``
  and ``idemwatch audit static`` read them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from alarms.catalogue import build_catalogue
from alarms.cfn_template import build_template, resolve
from alarms.config import load_config
from idemwatch.cli import main
from tests.support.cfn_resources import resources_by_name

pytestmark = pytest.mark.slow  # one synthesis per app for the session (conftest), several seconds each

ROOT = Path(__file__).resolve().parents[3]
DEMO_STACK = ROOT / "alarms" / "demo-stack.yaml"
REGION, ACCOUNT = "us-east-1", "123456789012"
_NAMES = ("FunctionName", "QueueName", "TableName", "Name")
_OURS = ("AWS::CloudWatch::Alarm", "AWS::CloudWatch::CompositeAlarm", "AWS::CloudWatch::InsightRule",
         "AWS::CloudWatch::Dashboard")


def _lid(stack: Any, construct: Any) -> str:
    return stack.resolve(stack.get_logical_id(construct.node.default_child))


def _tokens_to_names(value: Any, names: dict[str, str]) -> Any:
    """``Ref`` / ``Fn::GetAtt`` (name attributes) to a resource of ``names`` -> its name: what CloudFormation
    substitutes at deploy time for the tokens the construct wrote."""
    if isinstance(value, list):
        return [_tokens_to_names(v, names) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"Ref"} and value["Ref"] in names:
        return names[value["Ref"]]
    if set(value) == {"Fn::GetAtt"} and value["Fn::GetAtt"][0] in names:
        assert value["Fn::GetAtt"][1] in ("QueueName", "Name"), value
        return names[value["Fn::GetAtt"][0]]
    return {k: _tokens_to_names(v, names) for k, v in value.items()}


def test_explicit_alarms_and_dashboard_equal_the_cloudformation_export(explicit):
    doc, stack, fleet = explicit.doc, explicit.stack, explicit.fleet
    # names CloudFormation gives: the literal name properties, and the generated stream name chosen here
    names = {lid: next(res["Properties"][k] for k in _NAMES if isinstance(res.get("Properties", {}).get(k), str))
             for lid, res in doc["Resources"].items()
             if any(isinstance(res.get("Properties", {}).get(k), str) for k in _NAMES)}
    # CloudFormation generates the stream's name; the construct fits descriptions for the longest one (128
    # characters, StreamName's limit), so the export is built for a generated name of that length
    generated = ("ShopExplicit-LedgerStream" + "A1B2C3D4E5F6" * 11)[:128]
    names[_lid(stack, fleet.stream)] = generated
    ours = {lid: res for lid, res in doc["Resources"].items() if res["Type"] in _OURS}
    cdk_resources = resolve({"Resources": _tokens_to_names(ours, names)}, region=REGION,
                            account_id=ACCOUNT)["Resources"]

    config = load_config(DEMO_STACK)
    config = replace(config, functions=tuple(replace(f, stream=generated) if f.stream else f for f in config.functions))
    export = build_template(config, build_catalogue(config), dashboard=True)
    export_resources = resolve(export, region=REGION, account_id=ACCOUNT)["Resources"]

    mine, theirs = resources_by_name(cdk_resources), resources_by_name(export_resources)
    # alarms/demo-stack.yaml: 66 catalogue alarms of the four functions, queues and table, 4 + 3 anomaly bands
    # (DuplicateCompletedSurge per function, RedeliverySurge but for the API function) and MaintenanceWindow;
    # composites: 4 functions x 2 severities, a service composite per severity and the Suppressor; Contributor
    # Insights: 4 outcomes x 3 keys; the dashboard
    kinds = {"AWS::CloudWatch::Alarm": 66 + 4 + 3 + 1, "AWS::CloudWatch::CompositeAlarm": 4 * 2 + 2 + 1,
             "AWS::CloudWatch::InsightRule": 4 * 3, "AWS::CloudWatch::Dashboard": 1}
    for resources in (mine, theirs):
        assert {t: sum(r["Type"] == t for r in resources.values()) for t in kinds} == kinds
    assert sorted(mine) == sorted(theirs)
    for name in theirs:
        assert mine[name] == theirs[name], name
    body = json.loads(mine["shop-idemwatch"]["Properties"]["DashboardBody"])
    assert len(body["widgets"]) > 20
    # the same Outputs: an ARN per alarm, composite and rule, and the dashboard name
    outputs = {o["Description"] for k, o in doc["Outputs"].items() if k.startswith("Idempotency")}
    assert outputs == {o["Description"] for o in export["Outputs"].values()}


def test_explicit_tokens_are_refs_to_the_stacks_resources(explicit):
    """The generated stream name reaches dimensions and descriptions as a reference to the stream resource; a
    composite names its children and its suppressor by reference to the alarms the construct made."""
    stack, fleet, template, mon = explicit.stack, explicit.fleet, explicit.template, explicit.monitoring
    from aws_cdk import assertions

    stream_ref = {"Ref": _lid(stack, fleet.stream)}
    found = template.find_resources("AWS::CloudWatch::Alarm", {"Properties": {
        "AlarmName": "shop-ledger-stream-IteratorAge"}})
    assert len(found) == 1
    text = json.dumps(found)
    assert json.dumps(stream_ref) in text  # the Fn::Sub variable map of the description
    # a literal name stays literal; the composite covering the alarm notifies, the alarm itself nobody
    template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "AlarmName": "shop-orders-queue-AgeOfOldestMessage",
        "Dimensions": [{"Name": "QueueName", "Value": "orders-queue"}],
        "AlarmActions": assertions.Match.absent(),
        "OKActions": assertions.Match.absent(),
        "TreatMissingData": assertions.Match.any_value(),
    })
    composites = template.find_resources("AWS::CloudWatch::CompositeAlarm", {"Properties": {
        "AlarmName": "shop-orders-consumer-Composite-Warning"}})
    assert len(composites) == 1
    props = next(iter(composites.values()))["Properties"]
    assert props["AlarmActions"] == props["OKActions"] == ["arn:aws:sns:us-east-1:123456789012:shop-tickets"]
    rule, variables = props["AlarmRule"]["Fn::Sub"]
    alarm = lambda lid: {"Ref": stack.resolve(stack.get_logical_id(mon.alarms[lid]))}  # the CDK logical id
    assert rule.startswith('ALARM("${ShopOrdersConsumerPayloadConflictAlarm}") OR ')
    assert variables["ShopOrdersConsumerPayloadConflictAlarm"] == alarm("ShopOrdersConsumerPayloadConflictAlarm")
    assert props["ActionsSuppressor"] == alarm("ShopSuppressorAlarm")


def test_discovery_finds_every_consumer_by_token(discovered):
    stack, fleet, mon = discovered.stack, discovered.fleet, discovered.monitoring
    lid = lambda c: _lid(stack, c)
    got = {}
    for fn in mon.config.functions:
        got[json.dumps(stack.resolve(mon.placeholders.values[fn.name]))] = (
            fn.operation, fn.event_source.value, *(stack.resolve(mon.placeholders.values[v]) if v else None
                                                   for v in (fn.queue, fn.stream, fn.dlq)))
    expected = {
        json.dumps({"Ref": lid(fleet.orders)}): (
            "ProcessOrders", "sqs", {"Fn::GetAtt": [lid(fleet.orders_queue), "QueueName"]}, None,
            {"Fn::GetAtt": [lid(fleet.orders_dlq), "QueueName"]}),
        json.dumps({"Ref": lid(fleet.ledger)}): (
            "ApplyLedgerEntries", "kinesis", None, {"Ref": lid(fleet.stream)},
            {"Fn::GetAtt": [lid(fleet.ledger_failures), "QueueName"]}),
        json.dumps({"Ref": lid(fleet.api_fn)}): ("CreateCase", "apigateway-rest", None, None, None),
        json.dumps({"Ref": lid(fleet.payments)}): (
            "CapturePayment", "eventbridge", None, None, {"Fn::GetAtt": [lid(fleet.payment_dlq), "QueueName"]}),
    }
    assert got == expected
    assert mon.config.idempotency_table and mon.config.service == "shop"
    assert len(mon.alarms) == 66


def test_discovery_sets_the_service_the_alarms_watch(discovered):
    from aws_cdk import assertions

    discovered.template.has_resource_properties("AWS::Lambda::Function", {
        "Handler": "orders.handler",
        "Environment": {"Variables": assertions.Match.object_like({"IDEMWATCH_SERVICE": "shop",
                                                                  "IDEMWATCH_NAMESPACE": "Idempotency"})}})


@pytest.mark.parametrize("app", ["explicit", "discovered"])
def test_synthesized_templates_pass_alarms_validate_and_cfn_lint(app, request):
    synth = request.getfixturevalue(app)
    res = CliRunner().invoke(main, ["alarms", "validate", str(synth.path), "--config", str(DEMO_STACK),
                                    "--format", "json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    # explicit: the demo stack config's 74 alarms, 11 composites and 12 rules; discovered: the catalogue's 66
    requests = {"explicit": 74 + 11 + 12, "discovered": 66}[app]
    assert report["ok"] and report["sources"][0]["requests"] == requests and report["sources"][0]["warnings"] == 0
    lint = subprocess.run([str(Path(sys.executable).parent / "cfn-lint"), "--format", "json", "--", str(synth.path)],
                          capture_output=True, text=True, timeout=600, check=False)
    problems = json.loads(lint.stdout or "[]")
    assert [p for p in problems if p["Level"] == "Error"] == []
    # CDK's own resources get W3005 (a DependsOn also implied by a GetAtt); ours get nothing
    ours = [p for p in problems if p["Location"]["Path"][1].startswith("Idempotency")
            and p["Location"]["Path"][0] in ("Resources", "Outputs")]
    assert ours == []


def test_init_reads_the_cloud_assembly(discovered, tmp_path):
    out = tmp_path / "stack.yaml"
    res = CliRunner().invoke(main, ["init", "--from", str(discovered.path.parent), "--out", str(out)])
    assert res.exit_code == 0, res.output
    cfg = load_config(out)
    assert (cfg.stack, cfg.region, cfg.account_id) == ("ShopDiscovered", REGION, ACCOUNT)
    kinds = sorted((f.operation, f.event_source.value, bool(f.queue), bool(f.stream), bool(f.dlq))
                   for f in cfg.functions)
    assert kinds == [("ApplyLedgerEntries", "kinesis", False, True, True), ("CapturePayment", "eventbridge", False,
                     False, True), ("CreateCase", "apigateway-rest", False, False, False),
                     ("ProcessOrders", "sqs", True, False, True)]
    assert cfg.service == "shop"  # the IDEMWATCH_SERVICE the construct set


def test_audit_sarif_of_the_synthesized_template_points_at_logical_ids(explicit, tmp_path):
    res = CliRunner().invoke(main, ["audit", "static", str(explicit.path), "--format", "sarif", "--fail-on", "none"])
    assert res.exit_code == 0, res.output
    log = json.loads(res.stdout)
    lines = explicit.path.read_text(encoding="utf-8").splitlines()
    results = log["runs"][0]["results"]
    assert results
    for r in results:
        region = r["locations"][0]["physicalLocation"]["region"]
        logical = r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
        assert lines[region["startLine"] - 1][region["startColumn"] - 1:] == f'"{logical}": {{'
