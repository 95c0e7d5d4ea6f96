"""Validation: the demo catalogue passes; one deliberately wrong definition per rule is rejected with
the right rule, naming the alarm and the field."""

from __future__ import annotations

import copy
from pathlib import Path

import botocore.session
import pytest
from botocore.validate import ParamValidator

from alarms.catalogue import build_catalogue
from alarms.config import load_config
from alarms.validate import validate_request, validate_requests
from alarms.violation import Violation

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"

SINGLE = {
    "AlarmName": "t-single",
    "Namespace": "Idempotency",
    "MetricName": "PayloadConflict",
    "Dimensions": [{"Name": "Service", "Value": "shop"}, {"Name": "Operation", "Value": "ProcessOrders"}],
    "Statistic": "Sum",
    "Period": 60,
    "EvaluationPeriods": 3,
    "DatapointsToAlarm": 2,
    "Threshold": 0.0,
    "ComparisonOperator": "GreaterThanThreshold",
    "TreatMissingData": "notBreaching",
}


def _stat(qid: str, name: str = "EventsReceived", period: int = 300) -> dict:
    return {"Id": qid, "ReturnData": False, "MetricStat": {
        "Metric": {"Namespace": "Idempotency", "MetricName": name, "Dimensions": [{"Name": "Service", "Value": "s"}]},
        "Period": period, "Stat": "Sum"}}


MATH = {
    "AlarmName": "t-math",
    "Metrics": [_stat("poison", "PoisonMessage"), _stat("received"),
                {"Id": "rate", "Expression": "100 * FILL(poison, 0) / received", "ReturnData": True}],
    "EvaluationPeriods": 3,
    "DatapointsToAlarm": 2,
    "Threshold": 1.0,
    "ComparisonOperator": "GreaterThanThreshold",
    "TreatMissingData": "notBreaching",
}


def _with(base: dict, **changes) -> dict:
    r = copy.deepcopy(base)
    for k, v in changes.items():
        if v is _DEL:
            r.pop(k)
        else:
            r[k] = v
    return r


_DEL = object()


def test_demo_catalogue_and_the_two_bases_are_valid():
    requests = [d.to_request() for d in build_catalogue(load_config(DEMO))]
    assert validate_requests(requests) == []
    assert validate_request(SINGLE) == [] and validate_request(MATH) == []


def _rules(req: dict) -> set[tuple[str, str, str]]:
    return {(v.alarm, v.field, v.rule) for v in validate_request(req)}


WRONG = [
    # --- cross-field rules of the issue
    ("datapoints > evaluation periods", _with(SINGLE, DatapointsToAlarm=4),
     ("t-single", "DatapointsToAlarm", "datapoints_to_alarm.le_evaluation_periods"), "must not exceed EvaluationPeriods (3)"),
    ("period not 10/20/30/60n", _with(SINGLE, Period=45),
     ("t-single", "Period", "period.valid_value"), "Period 45 s must be 10, 20, 30 or a multiple of 60"),
    ("span over 1 day with period < 1 h", _with(SINGLE, Period=300, EvaluationPeriods=289, DatapointsToAlarm=1),
     ("t-single", "EvaluationPeriods", "period.evaluation_span"), "300 x 289 = 86700 s exceeds 1 day"),
    ("span over 7 days with period >= 1 h", _with(SINGLE, Period=3600, EvaluationPeriods=169, DatapointsToAlarm=1),
     ("t-single", "EvaluationPeriods", "period.evaluation_span"), "3600 x 169 = 608400 s exceeds 7 days"),
    ("Statistic with ExtendedStatistic", _with(SINGLE, ExtendedStatistic="p99"),
     ("t-single", "ExtendedStatistic", "statistic.exclusive"), "cannot both be given"),
    ("more than 20 queries", _with(MATH, Metrics=[_stat(f"m{i}") for i in range(8)]
                                   + [{"Id": f"e{i}", "Expression": "m0", "ReturnData": False} for i in range(12)]
                                   + [{"Id": "out", "Expression": "m1", "ReturnData": True}]),
     ("t-math", "Metrics", "metrics.too_many_queries"), "21 queries; an alarm allows at most 20"),
    ("more than 10 MetricStat", _with(MATH, Metrics=[_stat(f"m{i}") for i in range(11)]
                                      + [{"Id": "out", "Expression": "m1", "ReturnData": True}]),
     ("t-math", "Metrics", "metrics.too_many_metric_stats"), "11 MetricStat queries"),
    ("two queries return data", _with(MATH, Metrics=[_stat("a") | {"ReturnData": True},
                                                     {"Id": "b", "Expression": "a * 2", "ReturnData": True}]),
     ("t-math", "Metrics", "metrics.return_data_count"), "exactly one query must return data"),
    ("ReturnData omitted counts as true", _with(MATH, Metrics=[{k: v for k, v in _stat("a").items() if k != "ReturnData"},
                                                               {"Id": "b", "Expression": "a * 2", "ReturnData": True}]),
     ("t-math", "Metrics", "metrics.return_data_count"), "got 2"),
    ("no query returns data", _with(MATH, Metrics=[_stat("a"), {"Id": "b", "Expression": "a", "ReturnData": False}]),
     ("t-math", "Metrics", "metrics.return_data_count"), "got 0"),
    ("id with an uppercase first letter", _with(MATH, Metrics=[_stat("Poison"), _stat("received"),
                                                               {"Id": "rate", "Expression": "Poison / received"}]),
     ("t-math", "Metrics[0].Id", "metrics.id_pattern"), "'Poison' must start with a lowercase letter"),
    ("id with a dash", _with(MATH, Metrics=[_stat("p-1"), {"Id": "rate", "Expression": "1"}]),
     ("t-math", "Metrics[0].Id", "metrics.id_pattern"), "^[a-z][A-Za-z0-9_]*$"),
    ("top-level metric fields beside Metrics", _with(MATH, MetricName="PoisonMessage", Period=300),
     ("t-math", "MetricName", "metrics.top_level_fields"), "cannot be given together with Metrics"),
    # --- the model: what botocore's own validate_parameters lets through (max lengths, enums)
    ("AlarmName over 255", _with(SINGLE, AlarmName="a" * 256),
     ("a" * 256, "AlarmName", "model.max_length"), "length 256 is above the maximum 255"),
    ("AlarmDescription over 1024", _with(SINGLE, AlarmDescription="d" * 1025),
     ("t-single", "AlarmDescription", "model.max_length"), "length 1025 is above the maximum 1024"),
    ("Statistic not in the enum", _with(SINGLE, Statistic="Avg"),
     ("t-single", "Statistic", "model.enum"), "'Avg' is not one of: SampleCount, Average, Sum, Minimum, Maximum"),
    ("ComparisonOperator not in the enum", _with(SINGLE, ComparisonOperator="GreaterThan"),
     ("t-single", "ComparisonOperator", "model.enum"), "'GreaterThan' is not one of"),
    ("TreatMissingData misspelt", _with(SINGLE, TreatMissingData="notbreaching"),
     ("t-single", "TreatMissingData", "treat_missing_data.enum"), "'notbreaching' is not one of: breaching"),
    ("more than 30 dimensions", _with(SINGLE, Dimensions=[{"Name": f"d{i}", "Value": "v"} for i in range(31)]),
     ("t-single", "Dimensions", "model.max_length"), "number of items 31 is above the maximum 30"),
    ("more than 5 alarm actions", _with(SINGLE, AlarmActions=[f"arn:aws:sns:us-east-1:1:t{i}" for i in range(6)]),
     ("t-single", "AlarmActions", "model.max_length"), "number of items 6 is above the maximum 5"),
    ("dimension value empty", _with(SINGLE, Dimensions=[{"Name": "Service", "Value": ""}]),
     ("t-single", "Dimensions[0].Value", "model.min_length"), "length 0 is below the minimum 1"),
    ("namespace starting with a colon", _with(SINGLE, Namespace=":Idempotency"),
     ("t-single", "Namespace", "model.pattern"), "does not match the pattern"),
    ("wrong type", _with(SINGLE, EvaluationPeriods="3"),
     ("t-single", "EvaluationPeriods", "model.type"), "must be integer"),
    ("unknown member", _with(SINGLE, Treshold=1.0),
     ("t-single", "Treshold", "model.unknown_member"), "unknown member of PutMetricAlarmInput"),
    ("missing AlarmName", _with(SINGLE, AlarmName=_DEL),
     ("<unnamed alarm>", "AlarmName", "model.required"), "is required"),
    ("MetricStat without Stat", _with(MATH, Metrics=[{"Id": "a", "ReturnData": True, "MetricStat": {
        "Metric": {"Namespace": "N", "MetricName": "M"}, "Period": 60}}]),
     ("t-math", "Metrics[0].MetricStat.Stat", "model.required"), "is required by MetricStat"),
    ("query period invalid", _with(MATH, Metrics=[_stat("a", period=90) | {"ReturnData": True}]),
     ("t-math", "Metrics[0].MetricStat.Period", "period.valid_value"), "Period 90 s"),
    # --- required for a metric alarm
    ("no statistic", _with(SINGLE, Statistic=_DEL),
     ("t-single", "Statistic", "statistic.required"), "needs Statistic or ExtendedStatistic"),
    ("no comparison", _with(SINGLE, ComparisonOperator=_DEL),
     ("t-single", "ComparisonOperator", "comparison.required"), "is required for a metric alarm"),
    ("neither metric nor metrics", _with(SINGLE, MetricName=_DEL, Namespace=_DEL, Statistic=_DEL, Period=_DEL,
                                         Dimensions=_DEL),
     ("t-single", "MetricName", "metric.missing"), "needs MetricName + Namespace, or Metrics"),
]


@pytest.mark.parametrize("label,request_,expected,message", WRONG, ids=[w[0] for w in WRONG])
def test_each_wrong_definition_is_rejected_with_the_right_message(label, request_, expected, message):
    violations = validate_request(request_)
    assert expected in {(v.alarm, v.field, v.rule) for v in violations}, violations
    hit = next(v for v in violations if (v.alarm, v.field, v.rule) == expected)
    assert message in hit.message
    assert str(hit).startswith(f"{expected[0]}: {expected[1]}: ")


def test_botocore_validate_parameters_misses_what_we_catch():
    """Why the model's maximums and enums are checked here: botocore accepts these requests."""
    shape = botocore.session.get_session().get_service_model("cloudwatch").operation_model("PutMetricAlarm").input_shape
    for req in (_with(SINGLE, AlarmName="a" * 256), _with(SINGLE, Statistic="Avg"),
                _with(SINGLE, Dimensions=[{"Name": f"d{i}", "Value": "v"} for i in range(31)])):
        assert not ParamValidator().validate(req, shape).has_errors()
        assert validate_request(req)


def test_duplicate_names_across_requests():
    v = validate_requests([SINGLE, SINGLE])
    assert v == [Violation("t-single", "AlarmName", "alarm_name.duplicate",
                           "the same AlarmName is defined twice; the second put would overwrite the first")]


def test_non_object_request():
    assert validate_request(["not", "a", "dict"])[0].rule == "model.type"  # type: ignore[arg-type]


def test_expression_referring_to_an_undefined_id():
    bad = _with(MATH, Metrics=[_stat("poison"), _stat("received"),
                               {"Id": "rate", "Expression": "100 * FILL(poisn, 0) / received", "ReturnData": True}])
    assert ("t-math", "Metrics[2].Expression", "metrics.unknown_id") in _rules(bad)
    assert "refers to poisn" in validate_request(bad)[0].message
    # function names, numbers and quoted strings are not ids
    ok = _with(MATH, Metrics=[_stat("m1"), {"Id": "e1", "Expression": "IF(m1 > 0, 1, 0) + FILL(m1, 0) * 2.5",
                                            "ReturnData": True}])
    assert validate_request(ok) == []
    search = _with(MATH, Metrics=[{"Id": "s", "Expression": "SEARCH('{AWS/Lambda,FunctionName} Errors', 'Sum', 60)",
                                   "ReturnData": True}])
    assert not [v for v in validate_request(search) if v.rule == "metrics.unknown_id"]


SILENT = [
    ("DLQ depth summed", _with(SINGLE, Namespace="AWS/SQS", MetricName="ApproximateNumberOfMessagesVisible",
                               Dimensions=[{"Name": "QueueName", "Value": "orders-dlq"}]),
     ("t-single", "Statistic", "semantic.gauge_statistic"), "alarm on Maximum; Sum multiplies it"),
    ("iterator age averaged", _with(SINGLE, Namespace="AWS/Lambda", MetricName="IteratorAge", Statistic="Average",
                                    Dimensions=[{"Name": "FunctionName", "Value": "ledger-stream"}]),
     ("t-single", "Statistic", "semantic.gauge_statistic"), "Average hides the worst value"),
    ("wrong dimension name on our metric", _with(SINGLE, Dimensions=[{"Name": "service", "Value": "shop"},
                                                                     {"Name": "Operation", "Value": "X"}]),
     ("t-single", "Dimensions", "semantic.dimension_name"), "the alarm would never get data"),
    ("our metric with a dimension set it is never published with", _with(SINGLE, Dimensions=[
        {"Name": "Operation", "Value": "X"}]),
     ("t-single", "Dimensions", "semantic.dimension_name"), "[Service, Operation] or [Service]"),
    ("wrong dimension name on an AWS metric", _with(SINGLE, Namespace="AWS/Lambda", MetricName="Errors",
                                                    Dimensions=[{"Name": "Function", "Value": "f"}]),
     ("t-single", "Dimensions", "semantic.dimension_name"), "not published with dimension(s) Function"),
    ("wrong dimension inside metric math", _with(MATH, Metrics=[
        {"Id": "a", "ReturnData": True, "MetricStat": {"Metric": {
            "Namespace": "Idempotency", "MetricName": "PoisonMessage",
            "Dimensions": [{"Name": "FunctionName", "Value": "f"}]}, "Period": 60, "Stat": "Sum"}}]),
     ("t-math", "Metrics[0].MetricStat.Metric.Dimensions", "semantic.dimension_name"), "would never get data"),
]


@pytest.mark.parametrize("label,request_,expected,message", SILENT, ids=[w[0] for w in SILENT])
def test_silent_failures_the_api_accepts_are_rejected(label, request_, expected, message):
    hit = [v for v in validate_request(request_) if (v.alarm, v.field, v.rule) == expected]
    assert hit and message in hit[0].message, validate_request(request_)


def test_valid_dimension_sets_and_unknown_metrics_pass():
    assert validate_request(_with(SINGLE, Dimensions=[{"Name": "Service", "Value": "shop"}])) == []
    assert validate_request(_with(SINGLE, Dimensions=[{"Name": "Service", "Value": "s"},
                                                      {"Name": "EventSource", "Value": "sqs"}])) == []
    assert validate_request(_with(SINGLE, MetricName="MyOwnMetric", Dimensions=[{"Name": "Anything", "Value": "x"}])) == []
