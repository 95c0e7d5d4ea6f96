"""Anomaly-detection alarms: a catalogue option per signal (band width, side, evaluation), the PutMetricAlarm shape
with ThresholdMetricId, the rules the validator holds them to, and the backtest saying plainly it cannot evaluate
them."""

from __future__ import annotations

import pytest

from alarms.backtest import run_backtest
from alarms.catalogue import build_catalogue
from alarms.config import parse_config
from alarms.exceptions import ConfigError
from alarms.validate import validate_request
from tests.support.alarm_tables import minute, write_tables


def _cfg(**overrides):
    return parse_config({"service": "shop", "functions": [{"name": "f", "operation": "Op", "event_source": "sqs"}],
                         "overrides": overrides})


def _defs(**overrides):
    return {d.signal: d for d in build_catalogue(_cfg(**overrides)) if not d.tier}


def test_the_anomaly_signals_are_off_until_enabled_and_then_bands():
    assert "duplicate_completed_surge" not in _defs()
    d = _defs(duplicate_completed_surge={"enabled": True})["duplicate_completed_surge"]
    req = d.to_request()
    assert "Threshold" not in req and req["ThresholdMetricId"] == "band"
    assert req["ComparisonOperator"] == "GreaterThanUpperThreshold"
    assert req["Metrics"] == [
        {"Id": "m1", "MetricStat": {"Metric": {"Namespace": "Idempotency", "MetricName": "DuplicateCompleted",
                                               "Dimensions": [{"Name": "Service", "Value": "shop"},
                                                              {"Name": "Operation", "Value": "Op"}]},
                                    "Period": 300, "Stat": "Sum"},
         "Label": "DuplicateCompleted", "ReturnData": True},
        {"Id": "band", "Expression": "ANOMALY_DETECTION_BAND(m1, 2)",
         "Label": "Expected range (anomaly detection band)", "ReturnData": True}]
    assert (req["EvaluationPeriods"], req["DatapointsToAlarm"], req["TreatMissingData"]) == (3, 3, "notBreaching")
    assert d.condition() == "Sum(DuplicateCompleted) above the band of 2 standard deviations for 3 of 3 x 300s"
    assert validate_request(req) == []


def test_any_signal_takes_a_band_with_its_width_side_and_evaluation():
    d = _defs(record_age_max={"anomaly": {"width": 3, "comparison": "outside"}, "evaluation_periods": 4,
                              "datapoints_to_alarm": 2})["record_age_max"]
    req = d.to_request()
    assert req["Metrics"][1]["Expression"] == "ANOMALY_DETECTION_BAND(m1, 3)"
    assert req["ComparisonOperator"] == "LessThanLowerOrGreaterThanUpperThreshold"
    assert (req["EvaluationPeriods"], req["DatapointsToAlarm"]) == (4, 2)
    assert "judged by CloudWatch anomaly detection" in d.description and "60000" not in d.description
    assert validate_request(req) == []
    # the extra tier keeps its static threshold
    tier = next(x for x in build_catalogue(_cfg(record_age_max={"anomaly": True}))
                if x.signal == "record_age_max" and x.tier == "critical")
    assert tier.to_request()["Threshold"] == 600_000 and "ThresholdMetricId" not in tier.to_request()
    # a math signal: the band is over the expression
    rate = _defs(retry_rate={"anomaly": True})["retry_rate"].to_request()
    assert [q["Id"] for q in rate["Metrics"]] == ["retryable", "received", "retry_rate", "band"]
    assert rate["Metrics"][3]["Expression"] == "ANOMALY_DETECTION_BAND(retry_rate, 2)"
    assert validate_request(rate) == []
    # switched off again: the static threshold
    assert "Threshold" in _defs(duplicate_completed_surge={"enabled": True, "anomaly": False})[
        "duplicate_completed_surge"].to_request()


@pytest.mark.parametrize(("override", "message"), [
    ({"anomaly": {"width": 0}}, "number of standard deviations > 0"),
    ({"anomaly": {"comparison": "sideways"}}, "'sideways' is not one of: above, below, outside"),
    ({"anomaly": "yes"}, "must be true, false or {width, comparison}"),
    ({"anomaly": True, "threshold": 5}, "threshold does not apply to the anomaly-detection band"),
])
def test_bad_anomaly_settings_name_the_key(override, message):
    with pytest.raises(ConfigError, match=message):
        build_catalogue(_cfg(record_age_max=override))


def _band_request(**change):
    req = _defs(duplicate_completed_surge={"enabled": True})["duplicate_completed_surge"].to_request()
    req.update(change)
    return req


@pytest.mark.parametrize(("change", "field", "rule"), [
    ({"Threshold": 2.0}, "Threshold", "threshold.exclusive"),
    ({"ComparisonOperator": "GreaterThanThreshold"}, "ComparisonOperator", "anomaly.comparison"),
    ({"ThresholdMetricId": "nope"}, "ThresholdMetricId", "anomaly.band_missing"),
    ({"ThresholdMetricId": "m1"}, "ThresholdMetricId", "anomaly.band_expression"),
])
def test_band_requests_are_held_to_put_metric_alarm(change, field, rule):
    assert (field, rule) in {(v.field, v.rule) for v in validate_request(_band_request(**change))}


def test_band_width_and_return_data_and_a_band_operator_without_band():
    req = _band_request()
    req["Metrics"][1]["Expression"] = "ANOMALY_DETECTION_BAND(m1, 0)"
    assert "anomaly.band_width" in {v.rule for v in validate_request(req)}
    req = _band_request()
    req["Metrics"][1]["ReturnData"] = False
    assert "anomaly.band_return_data" in {v.rule for v in validate_request(req)}
    static = _defs()["payload_conflict"].to_request()
    static["ComparisonOperator"] = "GreaterThanUpperThreshold"
    assert ("ComparisonOperator", "anomaly.band_missing") in {(v.field, v.rule) for v in validate_request(static)}


def test_the_backtest_skips_bands_by_name_and_says_why(tmp_path):
    op = ("shop", "Op", "sqs")
    write_tables(tmp_path, {"outcomes": [(minute(i), *op, "duplicate_completed", 5) for i in range(30)]})
    defs = [d for d in build_catalogue(_cfg(duplicate_completed_surge={"enabled": True}))
            if d.signal == "duplicate_completed_surge"]
    (r,) = run_backtest(defs, tmp_path)
    assert r.status == "skipped" and r.alarm_intervals == [] and len(r.timeline) == 0
    assert "cannot be reproduced offline, so no approximation is shown" in r.note


def test_the_band_width_may_be_left_to_its_default():
    req = _band_request()
    req["Metrics"][1]["Expression"] = "ANOMALY_DETECTION_BAND(m1)"  # 2 standard deviations
    assert validate_request(req) == []
