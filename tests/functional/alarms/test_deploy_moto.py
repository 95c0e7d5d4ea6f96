"""`idemwatch alarms deploy` against moto's CloudWatch server over real HTTP on 127.0.0.1.

moto accepts invalid alarms and never evaluates them: these tests prove the plumbing (diff, put,
tags, idempotence, prune scope, dry run); validation and evaluation have their own tests.
"""

from __future__ import annotations

from pathlib import Path

import boto3
import yaml
from click.testing import CliRunner

from alarms.commands import alarms

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
REGION = "us-east-1"


def _cw(endpoint):
    return boto3.client("cloudwatch", region_name=REGION, endpoint_url=endpoint)


def _deploy(endpoint, config, *extra):
    res = CliRunner().invoke(alarms, ["deploy", "--config", str(config), "--region", REGION,
                                      "--endpoint-url", endpoint, *extra])
    assert res.exit_code == 0, res.output
    return res.output


def _names(cw):
    return sorted(a["AlarmName"] for p in cw.get_paginator("describe_alarms").paginate() for a in p["MetricAlarms"])


def _config(tmp_path, mutate) -> Path:
    data = yaml.safe_load(DEMO.read_text())
    mutate(data)
    p = tmp_path / "stack.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def test_dry_run_changes_nothing(endpoint):
    out = _deploy(endpoint, DEMO, "--dry-run")
    assert "+ create shop-orders-dlq-MessagesVisible" in out
    # 74 metric alarms, 11 composite alarms, 12 Contributor Insights rules
    assert "97 to create, 0 to update, 0 to delete, 0 unchanged" in out
    assert "+ create composite shop-orders-consumer-Composite-Critical" in out
    assert "+ create rule shop-PayloadConflict-TopKeys" in out
    assert "dry run: nothing changed" in out
    assert _names(_cw(endpoint)) == []


def test_deploy_creates_tags_and_is_idempotent(endpoint):
    out = _deploy(endpoint, DEMO)
    assert "applied 97 change(s)" in out
    cw = _cw(endpoint)
    names = _names(cw)
    assert len(names) == 74 and "shop-ledger-stream-IteratorAge" in names
    alarm = cw.describe_alarms(AlarmNames=["shop-orders-dlq-MessagesVisible"])["MetricAlarms"][0]
    assert (alarm["Namespace"], alarm["MetricName"], alarm["Statistic"], alarm["Period"]) == (
        "AWS/SQS", "ApproximateNumberOfMessagesVisible", "Maximum", 60)
    assert alarm["Dimensions"] == [{"Name": "QueueName", "Value": "orders-dlq"}]
    assert alarm["TreatMissingData"] == "notBreaching"
    assert alarm.get("AlarmActions", []) == []  # a child of the page-once composite: it notifies nobody
    composite = cw.describe_alarms(AlarmNames=["shop-orders-consumer-Composite-Critical"],
                                   AlarmTypes=["CompositeAlarm"])["CompositeAlarms"][0]
    assert composite["AlarmActions"] == ["arn:aws:sns:us-east-1:123456789012:shop-oncall"]
    assert 'ALARM("shop-orders-dlq-MessagesVisible")' in composite["AlarmRule"]
    assert composite["ActionsSuppressor"] == "shop-Suppressor"
    tags = {t["Key"]: t["Value"] for t in cw.list_tags_for_resource(ResourceARN=alarm["AlarmArn"])["Tags"]}
    assert tags["idemwatch:managed-by"] == "idemwatch" and tags["idemwatch:stack"] == "shop"
    math = cw.describe_alarms(AlarmNames=["shop-orders-consumer-PoisonRate"])["MetricAlarms"][0]
    assert [q["Id"] for q in math["Metrics"]] == ["poison", "received", "poison_rate"]
    # second run: nothing to do
    out = _deploy(endpoint, DEMO)
    assert "0 to create, 0 to update, 0 to delete, 97 unchanged" in out and "applied 0 change(s)" in out


def test_changed_threshold_is_an_update_of_that_field_only(endpoint, tmp_path):
    _deploy(endpoint, DEMO)
    cfg = _config(tmp_path, lambda d: d["overrides"].update({"poison_rate": {"threshold": 2.5}}))
    out = _deploy(endpoint, cfg, "--dry-run")
    assert "~ update shop-orders-consumer-PoisonRate (AlarmDescription, Threshold)" in out
    assert "0 to create, 4 to update, 0 to delete, 93 unchanged" in out
    _deploy(endpoint, cfg)
    cw = _cw(endpoint)
    assert cw.describe_alarms(AlarmNames=["shop-orders-consumer-PoisonRate"])["MetricAlarms"][0]["Threshold"] == 2.5
    assert "97 unchanged" in _deploy(endpoint, cfg, "--dry-run")


def test_prune_deletes_only_managed_alarms_of_this_stack(endpoint, tmp_path):
    _deploy(endpoint, DEMO)
    cw = _cw(endpoint)
    base = {"Namespace": "Idempotency", "MetricName": "PayloadConflict", "Statistic": "Sum", "Period": 60,
            "EvaluationPeriods": 1, "Threshold": 0.0, "ComparisonOperator": "GreaterThanThreshold"}
    cw.put_metric_alarm(AlarmName="shop-hand-made", **base)  # same prefix, no tags: never ours
    cw.put_metric_alarm(AlarmName="other-stack-alarm", **base, Tags=[
        {"Key": "idemwatch:managed-by", "Value": "idemwatch"}, {"Key": "idemwatch:stack", "Value": "other"}])
    # remove create-case-api from the stack: its 14 alarms (8 idempotency signals without RecordAge, the
    # RetryRate critical tier, Lambda Errors + Throttles, 2 EMF error alarms, DuplicateCompletedSurge) and its 2
    # composites are no longer defined; the service composites and the 12 rules (its log group) change
    cfg = _config(tmp_path, lambda d: d.update(functions=[f for f in d["functions"] if f["name"] != "create-case-api"]))
    out = _deploy(endpoint, cfg)  # without --prune nothing is deleted, but the orphans are listed
    assert "0 to delete" in out and "14 to update" in out and "16 orphaned" in out and len(_names(cw)) == 76
    assert "! orphan shop-create-case-api-PayloadConflict (managed by idemwatch for shop" in out
    assert "! orphan composite shop-create-case-api-Composite-Critical (managed by idemwatch for shop" in out
    assert "shop-hand-made" not in out and "other-stack-alarm" not in out
    out = _deploy(endpoint, cfg, "--prune", "--dry-run")
    assert "- delete shop-create-case-api-PayloadConflict" in out and "16 to delete, 81 unchanged, 0 orphaned" in out
    assert len(_names(cw)) == 76
    out = _deploy(endpoint, cfg, "--prune")
    names = _names(cw)
    assert len(names) == 62
    assert not [a for a in cw.describe_alarms(AlarmTypes=["CompositeAlarm"])["CompositeAlarms"]
                if a["AlarmName"].startswith("shop-create-case-api-")]
    assert "shop-hand-made" in names and "other-stack-alarm" in names
    assert not [n for n in names if n.startswith("shop-create-case-api-")]


def test_unreachable_endpoint_is_a_clear_error():
    res = CliRunner().invoke(alarms, ["deploy", "--config", str(DEMO), "--region", REGION,
                                      "--endpoint-url", "http://127.0.0.1:9", "--dry-run"],
                             env={"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y",
                                  "AWS_MAX_ATTEMPTS": "1", "AWS_RETRY_MODE": "standard"})
    assert res.exit_code == 1
    assert "DescribeAlarms failed" in res.output


def test_profile_gives_credentials_and_region(endpoint, tmp_path, monkeypatch):
    config = tmp_path / "aws-config"
    config.write_text("[profile idemtest]\nregion = eu-west-1\naws_access_key_id = AKIDTEST\n"
                      "aws_secret_access_key = secret\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    res = CliRunner().invoke(alarms, ["deploy", "--config", str(DEMO), "--profile", "idemtest",
                                      "--endpoint-url", endpoint])
    assert res.exit_code == 0, res.output
    eu = boto3.client("cloudwatch", region_name="eu-west-1", endpoint_url=endpoint, aws_access_key_id="AKIDTEST",
                      aws_secret_access_key="secret")
    assert len(_names(eu)) == 74  # created in the profile's region
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    assert _names(_cw(endpoint)) == []  # nothing in us-east-1
    res = CliRunner().invoke(alarms, ["deploy", "--config", str(DEMO), "--profile", "nope", "--dry-run"])
    assert res.exit_code == 1 and "nope" in res.output


def test_a_stack_without_rules_does_not_need_describe_insight_rules(endpoint, tmp_path, monkeypatch):
    from moto.cloudwatch.exceptions import ValidationError
    from moto.cloudwatch.models import CloudWatchBackend

    def refuse(self, *a, **kw):
        raise ValidationError("User is not authorized to perform: cloudwatch:DescribeInsightRules")

    monkeypatch.setattr(CloudWatchBackend, "describe_insight_rules", refuse)
    cfg = _config(tmp_path, lambda d: d.pop("contributor_insights"))
    out = _deploy(endpoint, cfg, "--dry-run")
    assert "note: Contributor Insights rules not checked for orphans (DescribeInsightRules failed:" in out
    assert "85 to create" in out  # 74 alarms + 11 composites, no rule
    res = CliRunner().invoke(alarms, ["deploy", "--config", str(DEMO), "--region", REGION, "--endpoint-url",
                                      endpoint, "--dry-run"])
    assert res.exit_code == 1 and "DescribeInsightRules failed" in res.output  # with rules it must list them
