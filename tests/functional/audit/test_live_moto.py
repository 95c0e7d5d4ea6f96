"""Live audit against moto's ThreadedMotoServer on 127.0.0.1 over real HTTP.

The rule-pair stack of stack.yaml is deployed with boto3 calls written here (not derived from the template), then
``idemwatch audit live`` reads it back; the findings must be exactly the hand-written list in conftest.py, and
exactly the static audit's findings on stack.yaml (same mis-configuration -> same findings).

moto 5.2 models the mapping fields the audit reads (FunctionResponseTypes, BisectBatchOnFunctionError,
MaximumRetryAttempts, DestinationConfig), GetPolicy, EventInvokeConfig, TTL and continuous backups, but not a
function's ``DeadLetterConfig``: lambda_proxy.py, a Lambda-protocol server of our own in
front of moto, keeps it (rule IW012 reads it).
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from click.testing import CliRunner

from alarms.audit.live import read_live
from alarms.audit.rules import evaluate
from alarms.audit.sources import audit_paths
from idemwatch.aws import AwsTarget

pytestmark = pytest.mark.slow


def _zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("app.py", "def handler(e, c):\n    return None\n")
    return buf.getvalue()


def deploy(aws) -> None:
    """The stack.yaml configuration, call by call."""
    iam, lam, sqs, kin, ddb, cw, sns = (aws(s) for s in ("iam", "lambda", "sqs", "kinesis", "dynamodb",
                                                         "cloudwatch", "sns"))
    role = iam.create_role(RoleName="audit-role", AssumeRolePolicyDocument=json.dumps({"Statement": [
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}))
    role_arn = role["Role"]["Arn"]

    def queue(name: str, **attrs: str) -> str:
        url = sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]
        return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    dlq = queue("good-q-dlq")
    good_q = queue("good-q", VisibilityTimeout="60",
                   RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq, "maxReceiveCount": 5}))
    bad_q = queue("bad-q")
    failures = queue("good-stream-failures")
    topic = sns.create_topic(Name="async-good-dlq")["TopicArn"]
    for name, shards in (("good-stream", 1), ("bad-stream", 1)):
        kin.create_stream(StreamName=name, ShardCount=shards)
    stream_arn = {n: kin.describe_stream(StreamName=n)["StreamDescription"]["StreamARN"]
                  for n in ("good-stream", "bad-stream")}

    def fn(name: str, timeout: int = 3, env: dict | None = None, **kw) -> None:
        lam.create_function(FunctionName=name, Runtime="python3.12", Role=role_arn, Handler="app.handler",
                            Code={"ZipFile": _zip()}, Timeout=timeout, Environment={"Variables": env or {}}, **kw)

    fn("good-sqs", 10, {"IDEMPOTENCY_TABLE": "good-table", "IDEMWATCH_IN_PROGRESS_EXPIRY_S": "60"})
    fn("bad-sqs", 30, {"IDEMPOTENCY_TABLE": "bad-table", "IDEMWATCH_IN_PROGRESS_EXPIRY_S": "5"})
    fn("good-stream-fn", 60)
    fn("bad-stream-fn")
    fn("async-good", DeadLetterConfig={"TargetArn": topic})
    fn("async-bad")
    for name in ("async-good", "async-bad"):
        lam.add_permission(FunctionName=name, StatementId="events", Action="lambda:InvokeFunction",
                           Principal="events.amazonaws.com")
    lam.create_event_source_mapping(EventSourceArn=good_q, FunctionName="good-sqs", BatchSize=10,
                                    FunctionResponseTypes=["ReportBatchItemFailures"])
    lam.create_event_source_mapping(EventSourceArn=bad_q, FunctionName="bad-sqs")
    lam.create_event_source_mapping(EventSourceArn=stream_arn["good-stream"], FunctionName="good-stream-fn",
                                    StartingPosition="TRIM_HORIZON", FunctionResponseTypes=["ReportBatchItemFailures"],
                                    BisectBatchOnFunctionError=True, MaximumRetryAttempts=3,
                                    DestinationConfig={"OnFailure": {"Destination": failures}})
    lam.create_event_source_mapping(EventSourceArn=stream_arn["bad-stream"], FunctionName="bad-stream-fn",
                                    StartingPosition="LATEST")
    for name, key in (("good-table", "id"), ("bad-table", "key")):
        ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                         AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}],
                         KeySchema=[{"AttributeName": key, "KeyType": "HASH"}])
    ddb.update_time_to_live(TableName="good-table",
                            TimeToLiveSpecification={"AttributeName": "expiration", "Enabled": True})
    ddb.update_continuous_backups(TableName="good-table",
                                  PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    common = {"Period": 60, "EvaluationPeriods": 1, "Threshold": 0.0, "ComparisonOperator": "GreaterThanThreshold"}
    cw.put_metric_alarm(AlarmName="good-stream-IteratorAge", Namespace="AWS/Lambda", MetricName="IteratorAge",
                        Dimensions=[{"Name": "FunctionName", "Value": "good-stream-fn"}], Statistic="Maximum", **common)
    cw.put_metric_alarm(AlarmName="good-q-dlq-MessagesVisible", Namespace="AWS/SQS",
                        MetricName="ApproximateNumberOfMessagesVisible",
                        Dimensions=[{"Name": "QueueName", "Value": "good-q-dlq"}], Statistic="Maximum", **common)
    cw.put_metric_alarm(AlarmName="good-sqs-Errors", Namespace="AWS/Lambda", MetricName="Errors",
                        Dimensions=[{"Name": "FunctionName", "Value": "good-sqs"}], Statistic="Sum", **common)


def _load_proxy():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("audit_lambda_proxy", Path(__file__).with_name("lambda_proxy.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod.LambdaProxy


@pytest.fixture(scope="module")
def deployed(moto_url):
    import boto3

    proxy = _load_proxy()(moto_url)
    moto_url = proxy.url

    def aws(service: str):
        return boto3.client(service, endpoint_url=moto_url, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    deploy(aws)
    yield moto_url
    proxy.close()


def test_live_findings_are_exactly_the_expected_ones(deployed, fake_aws_env, pairs):
    inv = read_live(AwsTarget(region="us-east-1", endpoint_url=deployed))
    assert pairs.rows(evaluate(inv, pairs.options)) == pairs.expected


def test_same_misconfiguration_same_findings_live_and_static(deployed, fake_aws_env, pairs):
    live = evaluate(read_live(AwsTarget(region="us-east-1", endpoint_url=deployed)), pairs.options)
    static = evaluate(audit_paths([pairs.stack]), pairs.options)
    assert pairs.rows(live) == pairs.rows(static) == pairs.expected


def test_every_rule_fails_once_and_passes_once(pairs):
    from alarms.audit.rules import RULES

    for rule in RULES:
        if rule.id == "IW016":  # needs resources named by the config: test_expected_resources_are_found_or_fail
            continue
        statuses = sorted(s for r, _, s, _ in pairs.expected if r == rule.id)
        assert statuses == ["fail", "pass"], rule.id


def test_expected_resources_are_found_or_fail(deployed, fake_aws_env):
    """[trust-surfaces] Every function, queue and table the audit is told to expect is a finding: pass when the
    account has it, a high-severity fail when it does not (wrong Region or profile must not read as a pass)."""
    inv = read_live(AwsTarget(region="us-east-1", endpoint_url=deployed), functions=["good-sqs", "no-such-fn"],
                    tables=["good-table", "no-such-table"], queues=["good-q", "no-such-q"])
    got = sorted((f.resource, f.status.value, f.severity.value) for f in evaluate(inv) if f.rule == "IW016")
    assert got == [("good-q", "pass", "high"), ("good-sqs", "pass", "high"), ("good-table", "pass", "high"),
                   ("no-such-fn", "fail", "high"), ("no-such-q", "fail", "high"), ("no-such-table", "fail", "high")]


def test_cli_live_json_and_exit_code(deployed, fake_aws_env):
    from idemwatch.cli import main

    r = CliRunner().invoke(main, ["audit", "live", "--region", "us-east-1", "--endpoint-url", deployed,
                                  "--format", "json", "--function", "bad-sqs", "--function", "good-sqs"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    got = sorted((f["rule"], f["resource"], f["status"]) for f in doc["findings"])
    assert got == sorted([
        ("IW001", "good-q -> good-sqs", "pass"), ("IW001", "bad-q -> bad-sqs", "fail"),
        ("IW002", "good-q -> good-sqs", "pass"), ("IW002", "bad-q -> bad-sqs", "fail"),
        ("IW004", "good-q", "pass"), ("IW004", "bad-q", "fail"),
        ("IW008", "good-table", "pass"), ("IW008", "bad-table", "fail"),
        ("IW009", "good-table", "pass"), ("IW009", "bad-table", "fail"),
        ("IW010", "good-table", "pass"), ("IW010", "bad-table", "fail"),
        ("IW011", "good-sqs", "pass"), ("IW011", "bad-sqs", "fail"),
        ("IW014", "good-q-dlq", "pass"),
        ("IW016", "bad-sqs", "pass"), ("IW016", "good-sqs", "pass"),
    ])
    r = CliRunner().invoke(main, ["audit", "live", "--region", "us-east-1", "--endpoint-url", deployed,
                                  "--fail-on", "none", "--function", "good-sqs"])
    assert r.exit_code == 0, r.output


def test_access_denied_is_one_line_naming_the_action(fake_aws_env):
    """A server that denies every call: exit 2 and the IAM action in the message, not a traceback."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Deny(BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"Type": "User", "Message": "denied"}).encode()
            self.send_response(403)
            self.send_header("x-amzn-ErrorType", "AccessDeniedException")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Deny)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        from idemwatch.cli import main

        r = CliRunner().invoke(main, ["audit", "live", "--region", "us-east-1", "--endpoint-url",
                                      f"http://127.0.0.1:{srv.server_port}"])
    finally:
        srv.shutdown()
    assert r.exit_code == 2, r.output
    assert "lambda:ListFunctions" in r.stderr and "access denied" in r.stderr


def test_role_arn_is_assumed_through_sts(deployed, fake_aws_env):
    """--role-arn goes through the collector's AwsTarget (sts:AssumeRole on the same loopback endpoint)."""
    target = AwsTarget(region="us-east-1", endpoint_url=deployed,
                       role_arn="arn:aws:iam::123456789012:role/audit-role", role_session_name="idemwatch-audit")
    inv = read_live(target, functions=["good-sqs"])
    assert [f.name for f in inv.functions] == ["good-sqs"]
    assert [m.name for m in inv.mappings] == ["good-q -> good-sqs"]


def test_environment_values_never_reach_the_report(deployed, fake_aws_env):
    """Function environments may hold secrets: the audit reads them, the JSON and SARIF output must not carry them."""
    import boto3

    from alarms.audit.report import dumps
    from alarms.audit.sarif import to_sarif

    lam = boto3.client("lambda", endpoint_url=deployed, region_name="us-east-1")
    secret = "hunter2-Sup3rS3cret"
    env = lam.get_function_configuration(FunctionName="async-bad").get("Environment", {}).get("Variables", {})
    lam.update_function_configuration(FunctionName="async-bad",
                                      Environment={"Variables": {**env, "DB_PASSWORD": secret, "api_key": secret}})
    try:
        findings = evaluate(read_live(AwsTarget(region="us-east-1", endpoint_url=deployed)))
        assert secret not in dumps(findings, "live")
        assert secret not in json.dumps(to_sarif(findings))
    finally:
        lam.update_function_configuration(FunctionName="async-bad", Environment={"Variables": env})


def test_cli_live_with_stack_config(deployed, fake_aws_env, tmp_path):
    """--config: its functions are audited, its idempotency_table too, its catalogue is expected (IW015) and its
    suppressions apply (with the reason in the report)."""
    from alarms.catalogue import build_catalogue
    from alarms.config import load_config
    from idemwatch.cli import main

    cfg = tmp_path / "stack.yaml"
    cfg.write_text(
        "service: s\nidempotency_table: good-table\n"
        "functions:\n"
        "  - {name: good-sqs, operation: Good, event_source: sqs, queue: good-q, dlq: good-q-dlq}\n"
        "  - {name: async-bad, operation: Bad, event_source: eventbridge}\n"
        "suppressions:\n"
        "  - {rule: IW012, resource: async-bad, reason: events are replayed from the archive}\n", encoding="utf-8")
    n = {fn: sum(1 for d in build_catalogue(load_config(cfg)) if d.target in targets)
         for fn, targets in (("good-sqs", {"good-sqs", "good-q", "good-q-dlq"}), ("async-bad", {"async-bad"}))}
    r = CliRunner().invoke(main, ["audit", "live", "--region", "us-east-1", "--endpoint-url", deployed,
                                  "--config", str(cfg), "--format", "json"])
    assert r.exit_code == 0, r.output  # IW015 (medium) fails, IW012 (high) is suppressed: nothing at >= high
    got = {(f["rule"], f["resource"]): (f["status"], f.get("suppressed_reason")) for f in json.loads(r.stdout)["findings"]}
    assert got[("IW012", "async-bad")] == ("suppressed", "events are replayed from the archive")
    assert got[("IW008", "good-table")] == ("pass", None)  # the config's idempotency table was read
    assert {k[1] for k in got if k[0] == "IW015"} == {"good-sqs", "async-bad"}
    doc = {f["resource"]: f["message"] for f in json.loads(r.stdout)["findings"] if f["rule"] == "IW015"}
    assert doc["async-bad"].startswith(f"{n['async-bad']} of {n['async-bad']} catalogue alarms missing: s-async-bad-")
    assert doc["good-sqs"].startswith(f"{n['good-sqs']} of {n['good-sqs']} catalogue alarms missing")
    assert not any(k[1] in ("bad-sqs", "good-stream-fn") for k in got)  # only the config's functions
    r = CliRunner().invoke(main, ["audit", "live", "--region", "us-east-1", "--endpoint-url", deployed,
                                  "--config", str(cfg), "--fail-on", "medium"])
    assert r.exit_code == 1 and "2 failed check(s) at or above medium" in r.stderr


def test_iam_policy_lists_exactly_the_calls_made(deployed, fake_aws_env, monkeypatch):
    """Every API call of a live audit, recorded with botocore's before-call hook, is in IAM_ACTIONS and every
    IAM_ACTIONS entry is called (the documented policy is neither short nor padded). For these services the
    IAM action name is the API operation name."""
    from alarms.audit.live import IAM_ACTIONS

    calls: set[str] = set()
    original = AwsTarget.client

    def client(self, service, session=None, retries=3):
        c = original(self, service, session, retries)
        c.meta.events.register("before-call", lambda model, **_: calls.add(f"{service}:{model.name}"))
        return c

    monkeypatch.setattr(AwsTarget, "client", client)
    read_live(AwsTarget(region="us-east-1", endpoint_url=deployed))
    assert calls == set(IAM_ACTIONS)


def test_live_config_naming_absent_resources_fails_and_an_empty_audit_is_an_error(deployed, fake_aws_env, tmp_path):
    """[trust-surfaces] At 620890b, `audit live --config` against a Region without the config's function and table
    printed `0 fail, 0 pass, 0 unknown` and exited 0."""
    import yaml

    from alarms.audit.commands import audit

    cfg = tmp_path / "stack.yaml"
    cfg.write_text(yaml.safe_dump({"service": "shop", "idempotency_table": "idempotency", "functions": [
        {"name": "orders-consumer", "operation": "Orders", "event_source": "sqs", "queue": "orders",
         "dlq": "orders-dlq"}]}), encoding="utf-8")
    # us-west-2 of the same moto server holds nothing
    base = ["live", "--region", "us-west-2", "--endpoint-url", deployed]
    r = CliRunner().invoke(audit, [*base, "--config", str(cfg), "--format", "json"])
    assert r.exit_code == 1, (r.output, r.exception)
    doc = json.loads(r.stdout)
    assert sorted((f["rule"], f["resource"], f["status"], f["severity"]) for f in doc["findings"]) == [
        ("IW016", "idempotency", "fail", "high"), ("IW016", "orders", "fail", "high"),
        ("IW016", "orders-consumer", "fail", "high"), ("IW016", "orders-dlq", "fail", "high")]
    assert doc["summary"]["fail"] == 4
    r = CliRunner().invoke(audit, base)
    assert r.exit_code == 2, (r.output, r.exception)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "nothing to audit in aws:us-west-2" in lines[0]


def test_a_200_response_that_is_not_json_is_named_as_malformed(fake_aws_env):
    """[trust-surfaces] At 620890b: `internal error: KeyError: 'Table'`."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from alarms.audit.commands import audit

    class Garbage(BaseHTTPRequestHandler):
        def _answer(self):
            n = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(n)
            body = b"<html>captive portal</html>"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Garbage)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        r = CliRunner().invoke(audit, ["live", "--region", "us-east-1", "--endpoint-url",
                                       f"http://127.0.0.1:{srv.server_port}", "--table", "idempotency"])
    finally:
        srv.shutdown()
    assert r.exit_code == 2, (r.output, r.exception)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "malformed AWS response to Lambda ListFunctions" in lines[0], r.stderr


def test_describe_table_without_table_is_named_as_malformed():
    from alarms.audit.exceptions import MalformedResponseError
    from alarms.audit.live import _table

    class Client:
        def describe_table(self, **kw):
            return {"message": "<html>"}  # what botocore makes of a 200 body that is not JSON

    with pytest.raises(MalformedResponseError, match="dynamodb:DescribeTable returned a malformed response"):
        _table(Client(), "idempotency")
