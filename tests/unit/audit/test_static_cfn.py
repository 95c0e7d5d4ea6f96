"""Static audit of real-shaped SAM / CloudFormation YAML: intrinsic tags, Globals, event shorthands, and values
that cannot be resolved statically reported as unknown (never as a pass)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alarms.audit.exceptions import TemplateError
from alarms.audit.model import UNKNOWN, is_unknown
from alarms.audit.rules import evaluate
from alarms.audit.sources import audit_paths
from alarms.audit.static_cfn import load_template

SAM = """\
AWSTemplateFormatVersion: 2010-09-09
Transform: AWS::Serverless-2016-10-31
Parameters:
  Env: {Type: String, Default: prod}
  QueueTimeout: {Type: Number}          # no default: unknown until deploy time
Conditions:
  IsProd: !Equals [!Ref Env, prod]
Mappings:
  Sizes: {prod: {Batch: 10}}
Globals:
  Function:
    Timeout: 20
    Environment:
      Variables:
        IDEMPOTENCY_TABLE: !Ref Table
Resources:
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: !Sub "${Env}-worker"
      Environment:
        Variables: {IDEMWATCH_IN_PROGRESS_EXPIRY_S: !If [IsProd, "60", "10"]}
      Events:
        Jobs:
          Type: SQS
          Properties:
            Queue: !GetAtt Jobs.Arn
            BatchSize: !FindInMap [Sizes, !Ref Env, Batch]
            FunctionResponseTypes: [ReportBatchItemFailures]
        Feed:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt Table.StreamArn
            StartingPosition: LATEST
            BisectBatchOnFunctionError: true
            MaximumRecordAgeInSeconds: 3600
        Nightly:
          Type: Schedule
          Properties: {Schedule: rate(1 day)}
  Jobs:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Join ["-", [!Ref Env, jobs]]
      VisibilityTimeout: !Ref QueueTimeout
      RedrivePolicy: {deadLetterTargetArn: !GetAtt JobsDlq.Arn, maxReceiveCount: 3}
  JobsDlq:
    Type: AWS::SQS::Queue
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "${Env}-idempotency"
      KeySchema: [{AttributeName: id, KeyType: HASH}]
      AttributeDefinitions: [{AttributeName: id, AttributeType: S}]
      StreamSpecification: {StreamViewType: NEW_IMAGE}
      TimeToLiveSpecification: {AttributeName: ttl, Enabled: true}
"""


@pytest.fixture()
def sam(tmp_path: Path) -> Path:
    p = tmp_path / "template.yaml"
    p.write_text(SAM, encoding="utf-8")
    return p


def test_intrinsics_resolve_to_names(sam):
    inv = audit_paths([sam])
    (fn,) = inv.functions
    assert fn.name == "prod-worker" and fn.timeout_s == 20 and fn.async_invoked is True
    assert fn.environment["IDEMPOTENCY_TABLE"] == "prod-idempotency"  # Globals merged, !Sub resolved
    assert is_unknown(fn.environment["IDEMWATCH_IN_PROGRESS_EXPIRY_S"])  # !If
    sqs, ddb = inv.mappings
    assert (sqs.source_kind, sqs.source, sqs.batch_size) == ("sqs", "prod-jobs", 10)  # !Join, !FindInMap
    assert (ddb.source_kind, ddb.source, ddb.bisect, ddb.max_record_age_s) == ("dynamodb", "prod-idempotency",
                                                                              True, 3600)
    jobs = inv.queue("prod-jobs")
    assert jobs is not None and is_unknown(jobs.visibility_timeout_s) and jobs.dead_letter == "JobsDlq"
    assert inv.idempotency_tables == {"prod-idempotency"}


def test_findings_with_unknowns(sam):
    got = {(f.rule, f.resource): (f.status.value, f.message) for f in evaluate(audit_paths([sam]))}
    assert got == {
        ("IW001", "prod-jobs -> prod-worker"): ("unknown", ("VisibilityTimeout or the function Timeout could not "
                                                           "be resolved statically")),
        ("IW002", "prod-jobs -> prod-worker"): ("pass", "FunctionResponseTypes has ReportBatchItemFailures"),
        ("IW003", "prod-idempotency -> prod-worker"): ("fail", ("FunctionResponseTypes lacks ReportBatchItemFailures:"
                                                               " one failed record retries the whole batch")),
        ("IW004", "prod-jobs"): ("pass", "redrive to JobsDlq after 3 receives"),
        ("IW005", "prod-idempotency -> prod-worker"): ("pass", "BisectBatchOnFunctionError is true"),
        ("IW006", "prod-idempotency -> prod-worker"): ("fail", ("no DestinationConfig.OnFailure: records discarded "
                                                               "after the retry limit are lost without trace")),
        ("IW007", "prod-idempotency -> prod-worker"): ("pass", ("MaximumRetryAttempts -1, MaximumRecordAgeInSeconds "
                                                               "3600")),
        ("IW008", "prod-idempotency"): ("fail", ("TTL attribute is 'ttl', the idempotency records expire on "
                                                "'expiration'")),
        ("IW009", "prod-idempotency"): ("pass", "partition key 'id'"),
        ("IW010", "prod-idempotency"): ("fail", "point-in-time recovery disabled"),
        ("IW011", "prod-worker"): ("unknown", ("IDEMWATCH_IN_PROGRESS_EXPIRY_S or Timeout could not be resolved "
                                              "statically")),
        ("IW012", "prod-worker"): ("fail", ("invoked asynchronously without an on-failure destination or DLQ: events "
                                           "that fail their retries are dropped")),
        ("IW013", "prod-idempotency -> prod-worker"): ("unknown", "no alarm information (pass --alarms-template)"),
        ("IW014", "JobsDlq"): ("unknown", "no alarm information (pass --alarms-template)"),
    }


def test_expiry_attr_option_changes_the_ttl_verdict(sam):
    from alarms.audit.rules import AuditOptions

    f = [x for x in evaluate(audit_paths([sam]), AuditOptions(expiry_attr="ttl")) if x.rule == "IW008"]
    assert [(x.status.value, x.message) for x in f] == [("pass", "TTL enabled on 'ttl'")]


def test_yaml_loader_tags_and_dates(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text("AWSTemplateFormatVersion: 2010-09-09\nA: !GetAtt X.Arn\nB: !Sub [\"${a}\", {a: 1}]\n"
                 "C: !Ref Y\nD: !Base64 abc\nE: !Condition C1\n", encoding="utf-8")
    assert load_template(p) == {"AWSTemplateFormatVersion": "2010-09-09", "A": {"Fn::GetAtt": ["X", "Arn"]},
                                "B": {"Fn::Sub": ["${a}", {"a": 1}]}, "C": {"Ref": "Y"}, "D": {"Fn::Base64": "abc"},
                                "E": {"Condition": "C1"}}


def test_json_template_and_line_numbers(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{\n  "Resources": {\n    "Q": {\n      "Type": "AWS::SQS::Queue",\n'
                 '      "Properties": {"QueueName": "q"}\n    }\n  }\n}\n', encoding="utf-8")
    (q,) = audit_paths([p]).queues
    assert q.name == "q" and q.location.logical_id == "Q" and q.location.line == 3


@pytest.mark.parametrize("text, message", [
    ("[1, 2]", "mapping at the top level"),
    ("Resources: [\n", "not valid YAML at line 2"),
    ("Foo: 1\n", "neither a CloudFormation"),
    ("Resources:\n  X: 3\n", "Resources.X: must be a mapping, got a number"),
])
def test_bad_templates_are_clear_errors(tmp_path, text, message):
    p = tmp_path / "bad.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(TemplateError, match=message):
        audit_paths([p])


def test_unknown_has_no_truth_value():
    with pytest.raises(TypeError):
        bool(UNKNOWN)


def test_terraform_expressions_are_unknown(tmp_path):
    p = tmp_path / "main.tf.json"
    p.write_text(json.dumps({"resource": {
        "aws_sqs_queue": {"q": {"name": "q", "visibility_timeout_seconds": "${var.vis}",
                                "redrive_policy": "${jsonencode({deadLetterTargetArn = aws_sqs_queue.d.arn})}"},
                          "d": {"name": "d"}},
        "aws_lambda_function": {"f": {"function_name": "f", "timeout": 5}},
        "aws_lambda_event_source_mapping": {"m": {"event_source_arn": "${aws_sqs_queue.q.arn}",
                                                  "function_name": "${aws_lambda_function.f.arn}",
                                                  "function_response_types": "${var.types}"}}}}))
    got = {(f.rule, f.resource): f.status.value for f in evaluate(audit_paths([p]))}
    assert got == {("IW001", "q -> f"): "unknown", ("IW002", "q -> f"): "unknown", ("IW004", "q"): "unknown"}


def test_alias_bomb_is_refused_quickly(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 12)]
    p = tmp_path / "bomb.yaml"
    p.write_text("Resources: {}\n" + "\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(TemplateError, match="YAML aliases are not accepted"):
        audit_paths([p])


def test_huge_template_reads_every_resource(tmp_path):
    n = 2000
    res = {}
    for i in range(n):
        res[f"F{i}"] = {"Type": "AWS::Lambda::Function", "Properties": {"FunctionName": f"f{i}", "Timeout": 10}}
        res[f"Q{i}"] = {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"q{i}", "VisibilityTimeout": 60 + i % 2}}
        res[f"M{i}"] = {"Type": "AWS::Lambda::EventSourceMapping",
                        "Properties": {"FunctionName": {"Ref": f"F{i}"}, "EventSourceArn": {"Fn::GetAtt": [f"Q{i}", "Arn"]}}}
    p = tmp_path / "big.json"
    p.write_text(json.dumps({"Resources": res}), encoding="utf-8")
    inv = audit_paths([p])
    assert (len(inv.functions), len(inv.queues), len(inv.mappings)) == (n, n, n)
    iw001 = [f for f in evaluate(inv) if f.rule == "IW001"]
    assert len(iw001) == n and all(f.status.value == "pass" for f in iw001)


def test_locations_point_at_the_resource(tmp_path):
    y = tmp_path / "t.yaml"
    y.write_text("Parameters:\n  Q:\n    Type: String\nResources:\n  Q:\n    Type: AWS::SQS::Queue\n", encoding="utf-8")
    assert audit_paths([y]).queues[0].location.line == 5  # the resource, not the parameter of the same name
    t = tmp_path / "t.tf.json"
    t.write_text('{"resource": {\n  "aws_kinesis_stream": {\n    "x": {"name": "s"}\n  },\n'
                 '  "aws_sqs_queue": {\n    "x": {\n      "name": "q"\n    }\n  }\n}}\n', encoding="utf-8")
    (q,) = audit_paths([t]).queues
    assert (q.location.logical_id, q.location.line) == ("aws_sqs_queue.x", 6)
