"""The exports a platform team includes: the parameterised CloudFormation template deployed to moto's server over
HTTP with parameter values substituted, the dashboard read back equal to the export, and the Terraform module
(``terraform validate`` with the provider from a local mirror when terraform is on this machine)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import boto3
import pytest
from click.testing import CliRunner

from alarms.cfn_template import requests_from_cloudformation, resolve
from alarms.kinds import name_of
from alarms.terraform import evaluate, requests_from_terraform
from alarms.tf_module import resolve_module
from idemwatch.cli import main

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
EXPORTED = ROOT / "alarms" / "exported"
TEMPLATE = EXPORTED / "cloudformation" / "shop-alarms.json"
PAGER = "arn:aws:sns:eu-central-1:444455556666:platform-pager"


def test_template_has_parameters_conditions_and_outputs():
    t = json.loads(TEMPLATE.read_text())
    # info: the maintenance window, which notifies nobody unless an info topic is given
    assert set(t["Parameters"]) == {"NamePrefix", "Namespace", "CriticalAlarmActions", "CriticalOkActions",
                                    "WarningAlarmActions", "WarningOkActions", "InfoAlarmActions", "InfoOkActions"}
    assert t["Parameters"]["CriticalAlarmActions"] == {
        "Type": "CommaDelimitedList", "Default": "arn:aws:sns:us-east-1:123456789012:shop-oncall",
        "Description": "SNS topic ARNs notified on ALARM by critical alarms (empty: none)."}
    alarms = {k: v for k, v in t["Resources"].items() if v["Type"] == "AWS::CloudWatch::Alarm"}
    kinds = {}
    for v in t["Resources"].values():
        kinds[v["Type"]] = kinds.get(v["Type"], 0) + 1
    assert kinds == {"AWS::CloudWatch::Alarm": 74, "AWS::CloudWatch::CompositeAlarm": 11,
                     "AWS::CloudWatch::InsightRule": 12, "AWS::CloudWatch::Dashboard": 1}
    assert len(t["Outputs"]) == 98  # one ARN per alarm, composite and rule + the dashboard name
    p = alarms["ShopOrdersConsumerPayloadConflictAlarm"]["Properties"]
    assert p["AlarmName"] == {"Fn::Sub": "${NamePrefix}orders-consumer-PayloadConflict"}
    assert p["Namespace"] == {"Ref": "Namespace"}
    assert "AlarmActions" not in p  # a child of the warning composite of orders-consumer: it notifies nobody
    c = t["Resources"]["ShopOrdersConsumerCompositeWarningAlarm"]["Properties"]
    assert c["AlarmActions"] == {"Fn::If": ["HasWarningAlarmActions", {"Ref": "WarningAlarmActions"},
                                            {"Ref": "AWS::NoValue"}]}
    assert 'ALARM("${ShopOrdersConsumerPayloadConflictAlarm}")' in c["AlarmRule"]["Fn::Sub"]
    assert c["ActionsSuppressor"] == {"Ref": "ShopSuppressorAlarm"}
    assert t["Outputs"]["ShopOrdersConsumerPayloadConflictAlarmArn"]["Value"] == {
        "Fn::GetAtt": ["ShopOrdersConsumerPayloadConflictAlarm", "Arn"]}
    dash = t["Resources"]["IdemwatchDashboard"]["Properties"]
    assert dash["DashboardName"] == {"Fn::Sub": "${NamePrefix}idemwatch"}
    assert "${AWS::Region}" in dash["DashboardBody"]["Fn::Sub"] and "123456789012" not in dash["DashboardBody"]["Fn::Sub"]


def test_parameterised_template_deploys_to_moto_with_values_substituted(endpoint, tmp_path):
    params = {"NamePrefix": "team-a-", "Namespace": "ShopMetrics", "CriticalAlarmActions": PAGER,
              "CriticalOkActions": "", "WarningAlarmActions": "", "WarningOkActions": ""}
    template = json.loads(TEMPLATE.read_text())
    requests = requests_from_cloudformation(template, params, region="eu-central-1")
    assert len(requests) == 97
    cw = boto3.client("cloudwatch", region_name="eu-central-1", endpoint_url=endpoint)
    for r in requests:  # in template order: the alarms a composite names exist before it
        if "AlarmRule" in r:
            cw.put_composite_alarm(**r)
        elif "RuleName" in r:
            cw.put_insight_rule(**r)
        else:
            cw.put_metric_alarm(**r)
    resolved = resolve(template, params, region="eu-central-1", account_id="444455556666")
    dash = resolved["Resources"]["IdemwatchDashboard"]["Properties"]
    cw.put_dashboard(DashboardName=dash["DashboardName"], DashboardBody=dash["DashboardBody"])

    got = {a["AlarmName"]: a for p in cw.get_paginator("describe_alarms").paginate() for a in p["MetricAlarms"]}
    assert len(got) == 74 and all(n.startswith("team-a-") for n in got)
    composites = {a["AlarmName"]: a for a in cw.describe_alarms(AlarmTypes=["CompositeAlarm"])["CompositeAlarms"]}
    page = composites["team-a-orders-consumer-Composite-Critical"]  # the composite pages, with the new prefix
    assert page["AlarmActions"] == [PAGER] and page.get("OKActions", []) == []
    assert 'ALARM("team-a-orders-consumer-PoisonRate")' in page["AlarmRule"]
    assert page["ActionsSuppressor"] == "team-a-Suppressor"
    rules = {r["Name"]: r for r in cw.describe_insight_rules()["InsightRules"]}
    assert len(rules) == 12 and "team-a-PayloadConflict-TopKeys" in rules
    poison = got["team-a-orders-consumer-PoisonRate"]  # critical, math: namespace inside every MetricStat
    assert poison.get("AlarmActions", []) == [] and poison.get("OKActions", []) == []
    assert {q["MetricStat"]["Metric"]["Namespace"] for q in poison["Metrics"] if "MetricStat" in q} == {"ShopMetrics"}
    # console links follow the region the template is deployed in
    assert "https://eu-central-1.console.aws.amazon.com/" in poison["AlarmDescription"]
    assert "us-east-1.console" not in poison["AlarmDescription"]
    conflict = got["team-a-orders-consumer-PayloadConflict"]  # warning: empty topics -> no actions at all
    assert conflict["Namespace"] == "ShopMetrics" and conflict.get("AlarmActions", []) == []
    assert got["team-a-orders-consumer-Errors"]["Namespace"] == "AWS/Lambda"  # AWS namespaces untouched
    body = json.loads(cw.get_dashboard(DashboardName="team-a-idemwatch")["DashboardBody"])
    arns = {a for w in body["widgets"] if w["type"] == "alarm" for a in w["properties"]["alarms"]}
    assert arns == {f"arn:aws:cloudwatch:eu-central-1:444455556666:alarm:{n}" for n in (*got, *composites)}
    assert {m[0] for w in body["widgets"] if w["type"] == "metric" for m in w["properties"].get("metrics", [])
            if isinstance(m[0], str)} == {"ShopMetrics", "AWS/Lambda", "AWS/SQS", "AWS/Logs", "AWS/DynamoDB"}
    assert {w["properties"]["insightRule"]["ruleName"] for w in body["widgets"]
            if "insightRule" in w["properties"]} == set(rules)


@pytest.mark.slow  # deploys the whole demo stack and its dashboard to moto
def test_deploy_puts_the_dashboard_equal_to_the_export(endpoint):
    # the config's region and account are moto's default ones: the deployed body is the exported file
    res = CliRunner().invoke(main, ["alarms", "deploy", "--config", str(DEMO), "--region", "us-east-1",
                                    "--endpoint-url", endpoint, "--dashboard"])
    assert res.exit_code == 0, res.output
    assert "+ create dashboard shop-idemwatch" in res.output
    cw = boto3.client("cloudwatch", region_name="us-east-1", endpoint_url=endpoint)
    got = json.loads(cw.get_dashboard(DashboardName="shop-idemwatch")["DashboardBody"])
    assert got == json.loads((EXPORTED / "dashboard" / "shop-dashboard.json").read_text())
    # an old dashboard of this stack (carrying the marker) is an orphan: listed, deleted only with --prune
    cw.put_dashboard(DashboardName="shop-old-idemwatch", DashboardBody=json.dumps(got))
    cw.put_dashboard(DashboardName="someone-else", DashboardBody=json.dumps({"widgets": []}))
    res = CliRunner().invoke(main, ["alarms", "deploy", "--config", str(DEMO), "--region", "us-east-1",
                                    "--endpoint-url", endpoint, "--dashboard", "--dry-run"])
    assert "! orphan dashboard shop-old-idemwatch (--prune deletes it)" in res.output
    assert "someone-else" not in res.output
    res = CliRunner().invoke(main, ["alarms", "deploy", "--config", str(DEMO), "--region", "us-east-1",
                                    "--endpoint-url", endpoint, "--dashboard", "--prune"])
    assert res.exit_code == 0, res.output
    names = sorted(d["DashboardName"] for d in cw.list_dashboards()["DashboardEntries"])
    assert names == ["shop-idemwatch", "someone-else"]


def test_terraform_module_describes_the_same_alarms_as_the_flat_file():
    module = EXPORTED / "terraform-module"
    main_doc = json.loads((module / "main.tf.json").read_text())
    variables = json.loads((module / "variables.tf.json").read_text())
    flat = requests_from_terraform(evaluate(json.loads((EXPORTED / "terraform" / "shop-alarms.tf.json").read_text())))
    via_module = requests_from_terraform(resolve_module(main_doc, variables, region="us-east-1"))
    def same(r: dict) -> dict:  # an empty action list (the module's variable default) is no action, as omitted
        return {k: v for k, v in r.items() if v != []}

    assert len(flat) == 97
    assert sorted(map(same, flat), key=name_of) == sorted(map(same, via_module), key=name_of)
    other = requests_from_terraform(resolve_module(main_doc, variables, {"name_prefix": "x-", "namespace": "N",
                                                                         "critical_alarm_actions": [PAGER]},
                                               region="eu-central-1"))
    poison = next(r for r in other if r.get("AlarmName") == "x-orders-consumer-PoisonRate")
    page = next(r for r in other if r.get("AlarmName") == "x-orders-consumer-Composite-Critical")
    assert page["AlarmActions"] == [PAGER] and 'ALARM("x-orders-consumer-PoisonRate")' in page["AlarmRule"]
    assert page["ActionsSuppressor"] == "x-Suppressor"
    assert "x-PayloadConflict-TopKeys" in {r.get("RuleName") for r in other}
    assert "https://eu-central-1.console.aws.amazon.com/cloudwatch/home?region=eu-central-1#logsV2:" in \
        poison["AlarmDescription"] and "us-east-1" not in poison["AlarmDescription"]
    assert {q["MetricStat"]["Metric"]["Namespace"] for q in poison["Metrics"] if "MetricStat" in q} == {"N"}
    assert set(json.loads((module / "outputs.tf.json").read_text())["output"]) == {
        "alarm_arns", "alarm_names", "composite_alarm_arns", "insight_rule_arns", "dashboard_name"}


PLUGINS = Path(os.environ.get("IDEMWATCH_TF_PLUGIN_DIR", "/opt/tf-plugins"))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("terraform") is None or not PLUGINS.is_dir(),
                    reason="terraform and a local provider mirror are not on this machine")
def test_terraform_validate_accepts_the_module_and_the_flat_file(tmp_path):
    for name, src in (("module", EXPORTED / "terraform-module"), ("flat", EXPORTED / "terraform")):
        work = tmp_path / name
        shutil.copytree(src, work)
        env = {**os.environ, "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
        init = subprocess.run(["terraform", "init", "-backend=false", "-input=false", f"-plugin-dir={PLUGINS}"],
                              check=False, cwd=work, capture_output=True, text=True, timeout=600, env=env)
        assert init.returncode == 0, init.stdout + init.stderr
        val = subprocess.run(["terraform", "validate", "-json"], check=False, cwd=work, capture_output=True,
                             text=True, timeout=600, env=env)
        doc = json.loads(val.stdout)
        assert doc["valid"] is True and doc["error_count"] == 0, doc
    # and validate does check our arguments: a broken copy fails
    broken = tmp_path / "module"
    main_doc = json.loads((broken / "main.tf.json").read_text())
    first = next(iter(main_doc["resource"]["aws_cloudwatch_metric_alarm"].values()))
    first["comparison_operator"] = 5
    first["no_such_argument"] = True
    (broken / "main.tf.json").write_text(json.dumps(main_doc))
    val = subprocess.run(["terraform", "validate", "-json"], check=False, cwd=broken, capture_output=True, text=True,
                         timeout=600)
    doc = json.loads(val.stdout)
    assert doc["valid"] is False and any("no_such_argument" in d.get("summary", "") + d.get("detail", "")
                                         for d in doc["diagnostics"]), doc


@pytest.mark.slow
def test_cfn_lint_is_clean_on_a_template_with_every_feature(tmp_path):
    """Info severity, no OK topics, an explicit tier topic, default dimensions, percentile and metric-math custom
    alarms, the table alarms and the dashboard: cfn-lint passes and every format validates."""
    import sys

    stack = Path(__file__).with_name("rich-stack.yaml")
    res = CliRunner().invoke(main, ["alarms", "export", "--config", str(stack), "--out", str(tmp_path), "--dashboard"])
    assert res.exit_code == 0, res.output
    template = tmp_path / "cloudformation" / "pay-alarms.json"
    lint = subprocess.run([str(Path(sys.executable).parent / "cfn-lint"), "--", str(template)], check=False,
                          capture_output=True, text=True, timeout=600)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    t = json.loads(template.read_text())
    assert set(t["Parameters"]) >= {"InfoAlarmActions", "CriticalOkActions"}
    tier = t["Resources"]["PayCapturePayloadConflictCriticalAlarm"]["Properties"]
    assert tier["AlarmActions"] == ["arn:aws:sns:eu-west-1:111122223333:special"]  # explicit: literal
    res = CliRunner().invoke(main, ["alarms", "validate", *(str(tmp_path / f) for f in (
        "cli", "cloudformation", "terraform", "terraform-module", "dashboard")), "--config", str(stack)])
    assert res.exit_code == 0 and "0 warning(s)" in res.output, res.output
