"""The field index policy: ``idemwatch alarms export/deploy --index-policy`` over HTTP on 127.0.0.1.

The fake Logs Insights server holds the log groups and their index policies (PutIndexPolicy, DescribeIndexPolicies);
CloudWatch alarm calls go on to moto behind it. The oracle: the policies the server holds afterwards.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from alarms.commands import alarms
from collector.cloudwatch import index_policy as ip
from tests.support.fake_logs_insights import FakeLogsInsightsServer

STACK = """
stack: shop
service: shop
region: us-east-1
functions:
  - {name: orders-consumer, operation: ProcessOrders, event_source: sqs}
  - {name: payment-capture, operation: Capture, event_source: sqs, log_group: /custom/payments}
"""
GROUPS = ["/aws/lambda/orders-consumer", "/custom/payments"]


@pytest.fixture
def config(tmp_path):
    p = tmp_path / "stack.yaml"
    p.write_text(STACK)
    return p


def test_export_writes_a_put_index_policy_request_per_log_group(config, tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(alarms, ["export", "--config", str(config), "--out", str(out), "--format", "cli",
                                      "--index-policy"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "index-policy: 2 log group(s)" in res.output
    req = json.loads((out / "index-policy" / "cli" / "aws_lambda_orders-consumer.json").read_text())
    assert req == {"logGroupIdentifier": "/aws/lambda/orders-consumer",
                   "policyDocument": '{"Fields": ["schema_version", "outcome", "idempotency_key"]}'}
    tf = json.loads((out / "index-policy" / "terraform" / "shop-index-policy.tf.json").read_text())
    assert sorted(r["log_group_name"] for r in tf["resource"]["aws_cloudwatch_log_index_policy"].values()) == GROUPS


@pytest.mark.slow
def test_deploy_puts_the_policy_and_keeps_fields_already_indexed(config, moto_url, fake_aws_env):
    with FakeLogsInsightsServer(upstream=moto_url) as srv:
        for g in GROUPS:
            srv.put_events(g, [])
        srv.put_index_policy("/custom/payments", ["requestId", "outcome"], at_s=1_767_600_000)
        base = ["deploy", "--config", str(config), "--endpoint-url", srv.url, "--region", "us-east-1",
                "--index-policy"]
        dry = CliRunner().invoke(alarms, [*base, "--dry-run"], catch_exceptions=False)
        assert dry.exit_code == 0, dry.output
        assert srv.count("PutIndexPolicy") == 0 and srv.count("PutMetricAlarm") == 0
        assert "create    index policy /aws/lambda/orders-consumer: schema_version, outcome, idempotency_key" \
            in dry.output
        assert "update    index policy /custom/payments: requestId, outcome, schema_version, idempotency_key" \
            in dry.output
        res = CliRunner().invoke(alarms, base, catch_exceptions=False)
        assert res.exit_code == 0, res.output
        assert "index policies put: 2" in res.output
        assert srv.index_policies["/aws/lambda/orders-consumer"].fields == tuple(ip.INDEX_FIELDS)
        assert srv.index_policies["/custom/payments"].fields == ("requestId", "outcome", "schema_version",
                                                                 "idempotency_key")
        again = CliRunner().invoke(alarms, base, catch_exceptions=False)
        assert "index policies put: 0" in again.output and again.output.count("unchanged index policy") == 2


def test_plan_refuses_a_policy_past_twenty_fields(moto_url, fake_aws_env, logs_client):
    with FakeLogsInsightsServer() as srv:
        srv.put_events("/g", [])
        srv.put_index_policy("/g", [f"f{i}" for i in range(19)])
        with pytest.raises(ValueError, match="1 to 20 fields, not 22"):
            ip.plan(logs_client(srv.url), ["/g"])
