"""Backtest on hand-written collector tables; every expected timeline is computed by hand in the comments."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from alarms import build_catalogue, load_config, run_backtest
from alarms.backtest import compile_expression
from alarms.exceptions import BacktestError
from alarms.types import TreatMissingData
from tests.support.alarm_tables import minute, write_tables

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
A, O, I = "ALARM", "OK", "INSUFFICIENT_DATA"
OP = ("shop", "ProcessOrders", "sqs")


@pytest.fixture(scope="module")
def defs():
    return {d.name: d for d in build_catalogue(load_config(DEMO))}


def _received(minutes):
    return [(minute(i), *OP, "received", 100) for i in minutes]


def _one(defn, data_dir):
    [r] = run_backtest([defn], data_dir)
    return r


def test_sum_over_5_minute_periods_and_reevaluation_after_the_metric_stops(tmp_path, defs):
    # TimeoutBudgetAbort: Sum > 0, 1 of 1 x 300 s, notBreaching, evaluation range 3 periods.
    # Bins: minute 1 -> 2, minute 3 -> 1 (period 10:00 = 3), minute 12 -> 4 (period 10:10 = 4); window 40 minutes.
    rows = _received(range(40)) + [(minute(1), *OP, "timeout_budget_abort", 2),
                                   (minute(3), *OP, "timeout_budget_abort", 1),
                                   (minute(12), *OP, "timeout_budget_abort", 4)]
    write_tables(tmp_path, {"outcomes": rows})
    r = _one(defs["shop-orders-consumer-TimeoutBudgetAbort"], tmp_path)
    values = [None if math.isnan(v) else v for v in r.timeline["value"]]
    assert values == [3, None, 4, None, None, None, None, None]
    # Windows of 3 (oldest first): p0 --X ALARM; p1 -X- (1 real: X) ALARM; p2 X-X ALARM; p3 -X- ALARM;
    # p4 X-- ALARM (CloudWatch keeps re-evaluating the last real datapoint); p5 --- notBreaching OK; p6, p7 OK.
    assert list(r.timeline["state"]) == [A, A, A, A, A, O, O, O]
    assert r.alarm_intervals == [(minute(0), minute(25))]
    assert list(r.timeline["period_start"]) == [pd.Timestamp(minute(5 * i)) for i in range(8)]
    assert r.source == "outcomes[outcome=timeout_budget_abort].events"
    assert (r.periods, r.missing_periods, r.state_counts) == (8, 6, {"OK": 3, "ALARM": 5, "INSUFFICIENT_DATA": 0})


# minutes 0..9 of PayloadConflict with threshold 1 (value 1 is not breaching):
#   minute: 0  1  2  3  4  5  6  7  8  9
#   value:  -  2  -  3  -  -  1  -  -  -     marks: - X - X - - 0 - - -
# Same marks as tests/unit/alarms/test_evaluation.py (2 of 3, range 5), so the same hand-computed states.
TREATMENTS = {
    TreatMissingData.NOT_BREACHING: [O, O, O, A, A, A, O, O, O, O],
    TreatMissingData.BREACHING: [A] * 10,
    TreatMissingData.MISSING: [I, I, I, A, A, A, O, O, O, O],
    TreatMissingData.IGNORE: [I, I, I, A, A, A, O, O, O, O],
}


@pytest.mark.parametrize("treat", list(TREATMENTS))
def test_missing_data_under_each_treatment(tmp_path, defs, treat):
    rows = _received(range(10)) + [(minute(1), *OP, "payload_conflict", 2), (minute(3), *OP, "payload_conflict", 3),
                                   (minute(6), *OP, "payload_conflict", 1)]
    write_tables(tmp_path, {"outcomes": rows})
    d = dataclasses.replace(defs["shop-orders-consumer-PayloadConflict"], threshold=1, evaluation_periods=3,
                            datapoints_to_alarm=2, treat_missing_data=treat)
    r = _one(d, tmp_path)
    assert [None if math.isnan(v) else v for v in r.timeline["value"]] == [None, 2, None, 3, None, None, 1,
                                                                           None, None, None]
    assert list(r.timeline["state"]) == TREATMENTS[treat]


def test_ignore_keeps_alarm_where_missing_goes_insufficient(tmp_path, defs):
    # 3 of 3, minutes 0-2 breaching then nothing (received keeps flowing so the window is 8 minutes).
    rows = _received(range(8)) + [(minute(i), *OP, "payload_conflict", 1) for i in range(3)]
    write_tables(tmp_path, {"outcomes": rows})
    base = dataclasses.replace(defs["shop-orders-consumer-PayloadConflict"], evaluation_periods=3,
                               datapoints_to_alarm=3)
    ignore = _one(dataclasses.replace(base, treat_missing_data=TreatMissingData.IGNORE), tmp_path)
    missing = _one(dataclasses.replace(base, treat_missing_data=TreatMissingData.MISSING), tmp_path)
    # hand-computed in tests/unit/alarms/test_evaluation.py::test_timeline_ignore_keeps_state_without_evidence
    assert list(ignore.timeline["state"]) == [I, I, A, A, A, A, A, A]
    assert list(missing.timeline["state"]) == [I, I, A, A, A, A, A, I]
    assert missing.alarm_intervals == [(minute(2), minute(7))]
    assert ignore.alarm_intervals == [(minute(2), minute(8))]  # still ALARM at the end of the history


def test_poison_rate_metric_math_with_fill(tmp_path, defs):
    # received 100/minute for 30 minutes = 500 per 5-minute period. Poison per period: 10, 0 (no rows), 6, 5, 20, 10
    # rate = 100 * FILL(poison, 0) / received = 2.0, 0.0, 1.2, 1.0, 4.0, 2.0   (> 1 breaches: X 0 X 0 X X)
    poison = {0: 10, 11: 6, 17: 5, 20: 15, 24: 5, 29: 10}
    rows = _received(range(30)) + [(minute(m), *OP, "poison_message", n) for m, n in poison.items()]
    write_tables(tmp_path, {"outcomes": rows})
    r = _one(defs["shop-orders-consumer-PoisonRate"], tmp_path)
    assert list(r.timeline["value"]) == pytest.approx([2.0, 0.0, 1.2, 1.0, 4.0, 2.0])
    # 2 of 3, range 5, notBreaching: p0 ----X OK; p1 ---X0 OK; p2 --X0X -> X0X ALARM; p3 -X0X0 -> 0X0 OK;
    # p4 X0X0X -> X0X ALARM; p5 0X0XX -> 0XX ALARM
    assert list(r.timeline["state"]) == [O, O, A, O, A, A]
    assert r.alarm_intervals == [(minute(10), minute(15)), (minute(20), minute(30))]
    assert "poison=outcomes[outcome=poison_message].events" in r.source


def test_rate_is_missing_when_nothing_was_received(tmp_path, defs):
    # received only in minutes 0-4; minutes 5-14 carry only a poison row at minute 7 (no received -> missing rate)
    rows = _received(range(5)) + [(minute(7), *OP, "poison_message", 3), (minute(14), *OP, "claimed", 1)]
    write_tables(tmp_path, {"outcomes": rows})
    r = _one(defs["shop-orders-consumer-PoisonRate"], tmp_path)
    assert [None if math.isnan(v) else v for v in r.timeline["value"]] == [0.0, None, None]


def test_record_age_maximum_and_other_operations_ignored(tmp_path, defs):
    ra = [(minute(i), *OP, 10, 5.0, 9.0, mx) for i, mx in enumerate([100.0, 130_000.0, 125_000.0, 90.0, 121_000.0])]
    ra.append((minute(0), "shop", "CreateCase", "apigateway-rest", 1, 1.0, 1.0, 999_999.0))  # other operation
    write_tables(tmp_path, {"record_age": ra})
    r = _one(defs["shop-orders-consumer-RecordAgeMax"], tmp_path)  # Maximum > 120000, 3 of 5, range 7
    assert list(r.timeline["value"]) == [100.0, 130_000.0, 125_000.0, 90.0, 121_000.0]
    # marks 0 X X 0 X: p0..p3 fewer than 5 real, notBreaching fill -> at most 2 X -> OK; p4 0XX0X -> 3 X -> ALARM
    assert list(r.timeline["state"]) == [O, O, O, O, A]
    assert r.source == "record_age.max_ms"


def test_lambda_errors_from_invocation_timeouts(tmp_path, defs):
    inv = [(minute(i), "/aws/lambda/orders-consumer", "000000000000", 5, 0, t, 10.0, 20.0, 30.0, 64.0, None, None,
            128.0) for i, t in enumerate([0, 0, 1, 1, 1, 0, 0, 0, 0, 0])]
    inv.append((minute(3), "/aws/lambda/ledger-stream", "000000000000", 5, 0, 9, 1.0, 1.0, 1.0, 1.0, None, None, 128.0))
    write_tables(tmp_path, {"invocations": inv})
    r = _one(defs["shop-orders-consumer-Errors"], tmp_path)  # Sum > 0, 3 of 5, range 7
    assert list(r.timeline["value"]) == [0, 0, 1, 1, 1, 0, 0, 0, 0, 0]
    # p4: last 5 real 0 0 1 1 1 -> ALARM; p5 0 1 1 1 0 ALARM; p6 1 1 1 0 0 ALARM; p7 1 1 0 0 0 OK
    assert list(r.timeline["state"]) == [O, O, O, O, A, A, A, O, O, O]
    assert r.alarm_intervals == [(minute(4), minute(7))]
    assert r.source == "invocations.timeouts" and "lower bound" in r.note


def test_aws_metrics_without_a_table_report_no_data(tmp_path, defs):
    write_tables(tmp_path, {"outcomes": _received(range(3))})
    for name in ("shop-orders-dlq-MessagesVisible", "shop-ledger-stream-IteratorAge",
                 "shop-orders-consumer-EMFValidationErrors", "shop-orders-consumer-Throttles"):
        r = _one(defs[name], tmp_path)
        assert r.status == "no_data" and r.note.startswith("no data in this history")
        assert list(r.timeline.columns) == ["period_start", "value", "state"] and len(r.timeline) == 0
        assert r.alarm_intervals == []


def test_manifest_range_sets_the_window(tmp_path, defs):
    write_tables(tmp_path, {"outcomes": _received(range(3)) + [(minute(1), *OP, "ambiguous_commit", 1)]})
    (tmp_path / "manifest.json").write_text(json.dumps({"range": {"start": int(minute(0).timestamp()),
                                                                  "end": int(minute(9).timestamp()) + 59}}))
    r = _one(defs["shop-orders-consumer-AmbiguousCommit"], tmp_path)  # 1 of 1 x 60 s, range 3
    assert len(r.timeline) == 10
    # minute 1 breaches; re-evaluated while it stays in the 3-datapoint range (minutes 1-3); OK from minute 4
    assert list(r.timeline["state"]) == [O, A, A, A, O, O, O, O, O, O]


def test_unsupported_statistic_is_reported_not_guessed(tmp_path, defs):
    write_tables(tmp_path, {"outcomes": _received(range(3))})
    d = dataclasses.replace(defs["shop-orders-consumer-PayloadConflict"], statistic="Average")
    r = _one(d, tmp_path)
    assert r.status == "unsupported" and "only Sum can be rebuilt" in r.note


def test_bad_history_directories(tmp_path, defs):
    with pytest.raises(BacktestError, match="does not exist"):
        run_backtest(list(defs.values())[:1], tmp_path / "nowhere")
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "outcomes.parquet").write_bytes(b"not parquet")
    with pytest.raises(BacktestError, match="outcomes.parquet: cannot read the table"):
        run_backtest(list(defs.values())[:1], tmp_path)


def test_metric_math_evaluator():
    f = compile_expression("100 * FILL(p, 0) / r")
    assert f({"p": None, "r": 50.0}) == 0.0
    assert f({"p": 5.0, "r": 50.0}) == 10.0
    assert f({"p": 5.0, "r": None}) is None
    assert f({"p": 5.0, "r": 0.0}) is None  # division by zero: no datapoint
    assert compile_expression("-(a - b) + 2")({"a": 1.0, "b": 4.0}) == 5.0
    with pytest.raises(ValueError, match="not supported"):
        compile_expression("METRICS()")
    with pytest.raises(ValueError, match="unknown id"):
        compile_expression("a / b")({"a": 1.0})
    with pytest.raises(ValueError, match="cannot parse"):
        compile_expression("a /")



def _cw_row(i, namespace, name, dims, stat, value, period=60):
    return (minute(i), namespace, name, json.dumps(dims, sort_keys=True, separators=(",", ":")), stat, period, value)


def test_cloudwatch_metrics_table_feeds_aws_metrics(tmp_path, defs):
    # DLQ depth (Maximum per minute) as GetMetricData returned it: 0 0 3 2 0; alarm Maximum > 0, 1 of 1, range 3
    dlq = [_cw_row(i, "AWS/SQS", "ApproximateNumberOfMessagesVisible", {"QueueName": "orders-dlq"}, "Maximum", v)
           for i, v in enumerate([0, 0, 3, 2, 0])]
    other = [_cw_row(2, "AWS/SQS", "ApproximateNumberOfMessagesVisible", {"QueueName": "ledger-stream-failures"},
                     "Maximum", 50)]
    write_tables(tmp_path, {"cloudwatch_metrics": dlq + other})
    r = _one(defs["shop-orders-dlq-MessagesVisible"], tmp_path)
    assert r.status == "ok" and r.source == "cloudwatch_metrics[ApproximateNumberOfMessagesVisible Maximum 60s]"
    assert list(r.timeline["value"]) == [0, 0, 3, 2, 0]
    assert list(r.timeline["state"]) == [O, O, A, A, O]  # 5 real datapoints: always the latest one decides
    assert r.alarm_intervals == [(minute(2), minute(4))]


def test_cloudwatch_datapoints_win_over_log_counts(tmp_path, defs):
    dims = {"Operation": "ProcessOrders", "Service": "shop"}
    write_tables(tmp_path, {
        "outcomes": _received(range(5)) + [(minute(1), *OP, "payload_conflict", 1)],
        "cloudwatch_metrics": [_cw_row(3, "Idempotency", "PayloadConflict", dims, "Sum", 2.0)],
    })
    r = _one(defs["shop-orders-consumer-PayloadConflict"], tmp_path)
    assert r.source == "cloudwatch_metrics[PayloadConflict Sum 60s]"
    assert [None if math.isnan(v) else v for v in r.timeline["value"]] == [None, None, None, 2.0, None]


def test_coarser_cloudwatch_granularity_is_unsupported(tmp_path, defs):
    rows = [_cw_row(0, "AWS/Lambda", "IteratorAge", {"FunctionName": "ledger-stream"}, "Maximum", 1.0, period=300)]
    write_tables(tmp_path, {"cloudwatch_metrics": rows})
    r = _one(defs["shop-ledger-stream-IteratorAge"], tmp_path)  # a 60 s alarm
    assert r.status == "unsupported" and "collected at 300 s, which does not divide the alarm period 60 s" in r.note


def test_extra_range_zero_stops_reevaluating_old_datapoints(tmp_path, defs):
    # Same data as the first test; with no extra range a 1-of-1 alarm only sees the newest period:
    # values 3, -, 4, -, -, ... -> ALARM, OK (missing -> notBreaching), ALARM, OK ...
    rows = _received(range(40)) + [(minute(1), *OP, "timeout_budget_abort", 2),
                                   (minute(3), *OP, "timeout_budget_abort", 1),
                                   (minute(12), *OP, "timeout_budget_abort", 4)]
    write_tables(tmp_path, {"outcomes": rows})
    [r] = run_backtest([defs["shop-orders-consumer-TimeoutBudgetAbort"]], tmp_path, extra_range=0)
    assert list(r.timeline["state"]) == [A, O, A, O, O, O, O, O]
    assert r.alarm_intervals == [(minute(0), minute(5)), (minute(10), minute(15))]
