"""[trust-surfaces] Malformed templates are one error type (MalformedTemplateError, exit 2 from ``audit static``) with
one line naming the file, the path inside it and the problem; never an internal error (exit 1 means "a check
failed" for ``audit``). Each explicit case crashed at 620890b (RecursionError, UnicodeDecodeError, AttributeError,
OverflowError); the generated ones feed ``audit static`` wrong shapes, cycles, deep nesting and odd encodings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alarms.audit.exceptions import MalformedTemplateError, TemplateError
from alarms.audit.sources import audit_paths

FN = {"Type": "AWS::Lambda::Function", "Properties": {"FunctionName": "f", "Timeout": 10}}
SAM_FN = {"Type": "AWS::Serverless::Function", "Properties": {"FunctionName": "f"}}


def _cfn(resources: dict, **top) -> dict:
    return {"AWSTemplateFormatVersion": "2010-09-09", **top, "Resources": resources}


def _deep(n: int) -> bytes:
    """A template whose FunctionName is ``n`` nested Fn::Join (3 levels of mappings and lists each), as JSON text
    (json.dumps itself cannot write 1,000 levels)."""
    value = '{"Fn::Join": ["", [' * n + '"x"' + "]]}" * n
    return ('{"Resources": {"Fn": {"Type": "AWS::Lambda::Function", "Properties": {"FunctionName": ' + value
            + "}}}}").encode()


CASES: list[tuple[str, object, str, str]] = [
    # (id, template document or raw bytes, path inside the file, problem)
    ("ref-to-itself", _cfn({"Fn": {"Type": "AWS::Lambda::Function", "Properties": {"FunctionName": {"Ref": "Fn"}}}}),
     "Resources.Fn.Properties.FunctionName", "reference cycle"),
    ("parameter-default-cycle", _cfn({"Fn": {"Type": "AWS::Lambda::Function", "Properties": {
        "FunctionName": {"Ref": "A"}}}}, Parameters={"A": {"Type": "String", "Default": {"Ref": "B"}},
                                                      "B": {"Type": "String", "Default": {"Ref": "A"}}}),
     "Parameters.A.Default", "reference cycle: Parameters.A.Default -> Parameters.B.Default -> Parameters.A.Default"),
    ("sub-cycle", _cfn({"Fn": {"Type": "AWS::Lambda::Function", "Properties": {"FunctionName": {"Fn::Sub": "${Fn}-x"}}}}),
     "Resources.Fn.Properties.FunctionName", "reference cycle"),
    ("getatt-cycle", _cfn({
        "A": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Fn::GetAtt": ["B", "QueueName"]}}},
        "B": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Fn::GetAtt": ["A", "Arn"]}}}}),
     "Resources.A.Properties.QueueName", "reference cycle"),
    ("json-1000-deep", _deep(1000), "", "nested deeper than 100 levels"),
    ("json-210-deep", _deep(70), "Resources.Fn.Properties.FunctionName.Fn::Join[1][0].Fn::Join.(...)",
     "nested deeper than 100 levels"),
    ("latin-1-byte", b"Resources:\n  Q: {Type: 'AWS::SQS::Queue', Properties: {QueueName: caf\xe9}}\n",
     "", "not UTF-8 text: byte 0xe9 at offset 69"),
    ("timeout-inf", b"Resources:\n  Fn: {Type: 'AWS::Lambda::Function', Properties: {Timeout: .inf}}\n",
     "Resources.Fn.Properties.Timeout", "must be an integer, got inf"),
    ("timeout-fraction", _cfn({"Fn": {"Type": "AWS::Lambda::Function", "Properties": {"Timeout": 1.5}}}),
     "Resources.Fn.Properties.Timeout", "must be an integer, got 1.5"),
    ("json-nan", b'{"Resources": {"Fn": {"Type": "AWS::Lambda::Function", "Properties": {"Timeout": NaN}}}}',
     "", "NaN is not a JSON number"),
    # a string, number or list where a mapping belongs
    ("resource-string", _cfn({"X": "text"}), "Resources.X", "must be a mapping, got a string"),
    ("properties-list", _cfn({"X": {"Type": "AWS::SQS::Queue", "Properties": [1]}}), "Resources.X.Properties",
     "must be a mapping, got a list"),
    ("type-list", _cfn({"X": {"Type": ["AWS::SQS::Queue"]}}), "Resources.X", "Type must be a string"),
    ("globals-string", _cfn({"Fn": SAM_FN}, Globals="x"), "Globals", "must be a mapping, got a string"),
    ("globals-function-list", _cfn({"Fn": SAM_FN}, Globals={"Function": [1]}), "Globals.Function",
     "must be a mapping, got a list"),
    ("environment-string", _cfn({"Fn": {**FN, "Properties": {"Environment": "x"}}}),
     "Resources.Fn.Properties.Environment", "must be a mapping, got a string"),
    ("variables-list", _cfn({"Fn": {**FN, "Properties": {"Environment": {"Variables": [1]}}}}),
     "Resources.Fn.Properties.Environment.Variables", "must be a mapping, got a list"),
    ("events-list", _cfn({"Fn": {**SAM_FN, "Properties": {"Events": [1]}}}), "Resources.Fn.Properties.Events",
     "must be a mapping, got a list"),
    ("event-string", _cfn({"Fn": {**SAM_FN, "Properties": {"Events": {"E": "x"}}}}),
     "Resources.Fn.Properties.Events.E", "must be a mapping, got a string"),
    ("event-properties-number", _cfn({"Fn": {**SAM_FN, "Properties": {"Events": {"E": {"Type": "SQS",
                                                                                          "Properties": 5}}}}}),
     "Resources.Fn.Properties.Events.E.Properties", "must be a mapping, got a number"),
    ("dead-letter-string", _cfn({"Fn": {**FN, "Properties": {"DeadLetterConfig": "x"}}}),
     "Resources.Fn.Properties.DeadLetterConfig", "must be a mapping, got a string"),
    ("parameters-list", _cfn({"Fn": FN}, Parameters=[1]), "Parameters", "must be a mapping, got a list"),
    ("parameter-string", _cfn({"Fn": FN}, Parameters={"P": "x"}), "Parameters.P", "must be a mapping, got a string"),
    ("destination-string", _cfn({"M": {"Type": "AWS::Lambda::EventSourceMapping",
                                       "Properties": {"FunctionName": "f", "DestinationConfig": "x"}}}),
     "Resources.M.Properties.DestinationConfig", "must be a mapping, got a string"),
    ("targets-mapping", _cfn({"R": {"Type": "AWS::Events::Rule", "Properties": {"Targets": {"Arn": "x"}}}}),
     "Resources.R.Properties.Targets", "must be a list, got a mapping"),
    ("metrics-string", _cfn({"A": {"Type": "AWS::CloudWatch::Alarm", "Properties": {"Metrics": "x"}}}),
     "Resources.A.Properties.Metrics", "must be a list, got a string"),
    ("key-schema-number", _cfn({"T": {"Type": "AWS::DynamoDB::Table", "Properties": {"KeySchema": [5]}}}),
     "Resources.T.Properties.KeySchema[0]", "must be a mapping, got a number"),
    ("tf-resource-type-string", {"resource": {"aws_lambda_function": "x"}}, "resource.aws_lambda_function",
     "must map resource names to bodies"),
    ("tf-body-string", {"resource": {"aws_lambda_function": {"f": "x"}}}, "resource.aws_lambda_function.f",
     "must be a block"),
    ("tf-environment-number", {"resource": {"aws_lambda_function": {"f": {"environment": 5}}}},
     "resource.aws_lambda_function.f.environment", "must be a block"),
    ("tf-timeout-inf", b'{"resource": {"aws_lambda_function": {"f": {"timeout": 1e400}}}}',
     "resource.aws_lambda_function.f.timeout", "must be an integer, got inf"),
    ("not-a-template", {"Foo": 1}, "", "neither a CloudFormation/SAM template"),
]


def _write(tmp_path: Path, doc: object, name: str = "t.json") -> Path:
    p = tmp_path / name
    p.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    return p


@pytest.mark.parametrize("case, doc, where, problem", CASES, ids=[c[0] for c in CASES])
def test_malformed_template_is_one_error_naming_file_path_and_problem(tmp_path, case, doc, where, problem):
    p = _write(tmp_path, doc, "t.yaml" if isinstance(doc, bytes) and not doc.startswith(b"{") else "t.json")
    with pytest.raises(MalformedTemplateError) as exc:
        audit_paths([p])
    message = str(exc.value)
    assert message.startswith(f"{p}: {where + ': ' if where else ''}") and problem in message, message
    assert "\n" not in message and exc.value.where == where


def test_yaml_nesting_is_refused(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text("Resources:\n  Q: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(MalformedTemplateError, match="nesting depth"):
        audit_paths([p])


def _cli(paths: list[Path]):
    from alarms.audit.commands import audit

    return CliRunner().invoke(audit, ["static", *map(str, paths), "--format", "json", "--fail-on", "high"])


def _check_cli(p: Path) -> None:
    """Exit 2 with one line naming the file, or a report that is a JSON document whose exit code matches it."""
    r = _cli([p])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code in (0, 1, 2), r.output
    if r.exit_code == 2:
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and str(p) in lines[0], r.stderr
        return
    doc = json.loads(r.stdout)
    counts = doc["summary"]
    assert sum(counts.values()) == len(doc["findings"]) > 0
    high_fail = [f for f in doc["findings"] if f["status"] == "fail" and f["severity"] == "high"]
    assert (r.exit_code == 1) == bool(high_fail)


@pytest.mark.parametrize("case, doc, where, problem", CASES, ids=[c[0] for c in CASES])
def test_audit_static_exits_2_with_one_line(tmp_path, case, doc, where, problem):
    p = _write(tmp_path, doc, "t.yaml" if isinstance(doc, bytes) and not doc.startswith(b"{") else "t.json")
    r = _cli([p])
    assert r.exit_code == 2 and r.exception is None or isinstance(r.exception, SystemExit), (r.output, r.exception)
    assert r.exit_code == 2
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(p) in lines[0] and problem in lines[0], r.stderr


# --------------------------------------------------------------------------- generated templates
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
_KEYS = st.sampled_from(["Type", "Properties", "FunctionName", "QueueName", "Timeout", "Environment", "Variables",
                         "Events", "Queue", "Stream", "Ref", "Fn::GetAtt", "Fn::Sub", "Fn::Join", "Fn::If",
                         "Fn::FindInMap", "RedrivePolicy", "KeySchema", "TimeToLiveSpecification", "Metrics",
                         "MetricStat", "Metric", "Dimensions", "DestinationConfig", "OnFailure", "Destination",
                         "EventSourceArn", "Targets", "Arn", "Principal", "A", "B", "Q", "Fn"])
_TYPES = st.sampled_from(["AWS::Lambda::Function", "AWS::Serverless::Function", "AWS::SQS::Queue",
                          "AWS::DynamoDB::Table", "AWS::Lambda::EventSourceMapping", "AWS::CloudWatch::Alarm",
                          "AWS::Events::Rule", "AWS::Lambda::Permission", "AWS::Lambda::EventInvokeConfig",
                          "AWS::Serverless::SimpleTable"])
_VALUES = st.recursive(_SCALARS | st.sampled_from([{"Ref": "A"}, {"Ref": "Q"}, {"Fn::GetAtt": ["A", "Arn"]},
                                                    {"Fn::Sub": "${A}-${Q.Arn}"}, {"Ref": "P"}]),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
                       max_leaves=12)
# mostly well-typed resources with odd properties, so that many examples reach the rules and give a report
_RESOURCE = st.fixed_dictionaries({"Type": st.one_of(_TYPES, _TYPES, _TYPES, _VALUES)},
                                  optional={"Properties": st.dictionaries(_KEYS, _VALUES, max_size=5) | _VALUES})
_CFN = st.fixed_dictionaries(
    {"Resources": st.dictionaries(st.sampled_from(["A", "B", "Q", "Fn"]), st.one_of(_RESOURCE, _RESOURCE, _VALUES),
                                  min_size=1,
                                  max_size=4)},
    optional={"Parameters": st.dictionaries(st.sampled_from(["P", "A"]),
                                            st.fixed_dictionaries({"Default": _VALUES}) | _VALUES, max_size=2),
              "Globals": st.fixed_dictionaries({"Function": st.dictionaries(_KEYS, _VALUES, max_size=3)}) | _VALUES,
              "Mappings": st.dictionaries(_KEYS, _VALUES, max_size=2)})
_TF = st.fixed_dictionaries({"resource": st.dictionaries(
    st.sampled_from(["aws_lambda_function", "aws_sqs_queue", "aws_dynamodb_table", "aws_lambda_event_source_mapping",
                     "aws_cloudwatch_metric_alarm", "aws_lambda_permission"]),
    st.dictionaries(st.sampled_from(["f", "q"]), st.dictionaries(_KEYS | st.sampled_from(
        ["timeout", "environment", "ttl", "hash_key", "metric_query", "redrive_policy", "function_name"]), _VALUES,
        max_size=4) | _VALUES, max_size=2) | _VALUES, min_size=1, max_size=3) | _VALUES})


def _encode(doc: object, how: str) -> bytes:
    text = json.dumps(doc, allow_nan=False)
    if how == "json":
        return text.encode()
    if how == "latin-1":
        return text.encode() + b"\n\xe9"
    if how == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if how == "deep":
        return ('{"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": '
                + "[" * 300 + "]" * 300 + "}}}}").encode()
    return text.encode("utf-16")


@settings(max_examples=1_000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                     HealthCheck.function_scoped_fixture])
@given(doc=_CFN | _TF, how=st.sampled_from(["json"] * 8 + ["latin-1", "bom", "deep", "utf-16"]))
@pytest.mark.slow
def test_generated_malformed_templates_exit_2_or_report(tmp_path_factory, doc, how):
    p = tmp_path_factory.mktemp("gen") / "t.json"
    p.write_bytes(_encode(doc, how))
    _check_cli(p)


def test_a_template_error_is_an_audit_error_the_cli_maps_to_exit_2():
    from alarms.audit.exceptions import AuditError

    assert issubclass(MalformedTemplateError, TemplateError) and issubclass(TemplateError, AuditError)
