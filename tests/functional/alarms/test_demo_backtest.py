"""Backtest of the demo stack's alarms on a real demo run: simulate -> export-format logs -> collect -> backtest.

Oracle: outcome counts parsed straight from the log files (dashboard.demo.compare.counts_from_logs, no
collector involved). Every count alarm's timeline must add up to those counts, and each "> 0 for 1 of 1"
alarm must fire exactly when its outcome happened at all.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from alarms import build_catalogue, load_config, run_backtest
from emitter.contract import METRIC_OUTCOME, Metric

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
COUNT_SIGNALS = {
    "payload_conflict": Metric.PAYLOAD_CONFLICT,
    "ambiguous_commit": Metric.AMBIGUOUS_COMMIT,
    "stale_claim_takeover": Metric.STALE_CLAIM_TAKEOVER,
    "timeout_budget_abort": Metric.TIMEOUT_BUDGET_ABORT,
    "idempotency_store_error": Metric.IDEMPOTENCY_STORE_ERROR,
    "duplicate_in_progress_sustained": Metric.DUPLICATE_IN_PROGRESS,
}
ONE_OF_ONE = ("payload_conflict", "ambiguous_commit", "stale_claim_takeover", "timeout_budget_abort")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    from collector.collect import collect_local
    from dashboard.demo import run_demo
    from dashboard.demo.compare import counts_from_logs

    out = tmp_path_factory.mktemp("demo")
    run_demo(out, seed=7, events=1500, duration_s=3600)
    collect_local([out / "logs"], out)
    defs = build_catalogue(load_config(DEMO))
    return {r.definition.name: r for r in run_backtest(defs, out)}, counts_from_logs(out / "logs")


def test_count_alarm_timelines_add_up_to_the_logged_outcomes(demo_run):
    results, counts = demo_run
    cfg = load_config(DEMO)
    checked = 0
    for fn in cfg.functions:
        for signal, metric in COUNT_SIGNALS.items():
            r = next(r for r in results.values() if r.definition.signal == signal and r.definition.target == fn.name)
            assert r.status == "ok", (r.definition.name, r.note)
            total = sum(v for v in r.timeline["value"] if not math.isnan(v))
            assert total == counts.get((fn.name, METRIC_OUTCOME[metric].value), 0), r.definition.name
            checked += 1
    assert checked == 24


def test_one_of_one_alarms_fire_exactly_when_the_outcome_happened(demo_run):
    results, counts = demo_run
    fired_any = 0
    for r in results.values():
        if r.definition.signal in ONE_OF_ONE:
            happened = counts.get((r.definition.target, METRIC_OUTCOME[COUNT_SIGNALS[r.definition.signal]].value), 0)
            assert bool(r.alarm_intervals) == (happened > 0), r.definition.name
            fired_any += bool(r.alarm_intervals)
    assert fired_any > 0  # the demo injects conflicts, stuck keys and ambiguous commits


def test_every_alarm_has_a_result_and_aws_only_metrics_say_no_data(demo_run):
    results, _ = demo_run
    assert len(results) == 74
    assert results["shop-orders-consumer-DuplicateCompletedSurge"].status == "skipped"  # anomaly band: by name
    assert "cannot be reproduced offline" in results["shop-orders-consumer-DuplicateCompletedSurge"].note
    assert results["shop-orders-dlq-MessagesVisible"].status == "no_data"
    assert results["shop-orders-consumer-PoisonRate"].status == "ok"
    assert results["shop-orders-consumer-Errors"].source == "invocations.timeouts"
