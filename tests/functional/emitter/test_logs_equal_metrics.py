"""For the same traffic, counts derived from the log records equal the EMF metric counts.

A seeded random fleet of invocations (every sample event shape, every outcome, failures, partial batches,
exceptions escaping the handler, worker threads) writes to a file exactly as the Lambda runtime would ship stdout.
The file is then read back twice, independently: once counting log records by ``outcome`` (what a Logs Insights
``stats count(*) by outcome`` gives), once summing EMF metric values (what CloudWatch would extract).
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from emitter import Emitter, FileSink, Metric, Outcome, TimeoutBudgetExceeded
from emitter.contract import OUTCOME_METRIC, Unit
from emitter.emf import validate_document

EVENTS = Path(__file__).resolve().parents[2] / "unit" / "emitter" / "events"
SAMPLES = sorted(p.stem for p in EVENTS.glob("*.json"))


class Ctx:
    def __init__(self, i: int, remaining: int) -> None:
        self.aws_request_id = f"req-{i}"
        self.function_name = "orders-fn"
        self._remaining = remaining

    def get_remaining_time_in_millis(self) -> int:
        self._remaining -= 37
        return self._remaining


def simulate(path: Path, seed: int, event_source_dimension: bool) -> None:
    rng = random.Random(seed)
    em = Emitter(service="orders", sink=FileSink(path), event_source_dimension=event_source_dimension)

    def process(r) -> bool:
        """Returns True when the record failed (goes to batchItemFailures)."""
        roll = rng.random()
        key = f"t{rng.randint(1, 3)}:k{rng.randint(1, 40)}"
        if roll < 0.35:
            em.claimed(r, key=key, expires_at_ms=1)
            em.side_effect_started(r, key=key, side_effect_ref="ref")
            em.succeeded(r, key=key)
        elif roll < 0.45:
            em.duplicate_completed(r, key=key)
        elif roll < 0.5:
            em.duplicate_in_progress(r, key=key)
            return True
        elif roll < 0.55:
            em.payload_conflict(r, key=key)
        elif roll < 0.6:
            em.stale_claim_takeover(r, key=key, expires_at_ms=2)
            em.succeeded(r, key=key)
        elif roll < 0.7:
            em.failure(rng.choice([TimeoutError(), ValueError(), RuntimeError(), KeyError()]), r, key=key)
            return True
        elif roll < 0.75:
            em.poison_message(r, key=key, error_code="Schema")
        elif roll < 0.8:
            try:
                em.check_time_budget(rng.choice([10, 10_000_000]), r, key=key)
                em.ambiguous_commit(r, key=key, side_effect_ref="ref")
            except TimeoutBudgetExceeded as exc:
                em.failure(exc, r, key=key)  # recorded once only
                return True
        elif roll < 0.85:
            em.store_error(r, key=key, error_code="Throttled")
            return True
        else:
            em.retryable_failure(r, key=key, error_code="Dependency")
            return True
        return False

    for i in range(120):
        sample = json.loads((EVENTS / f"{rng.choice(SAMPLES)}.json").read_text())
        threaded = rng.random() < 0.2
        crash = rng.random() < 0.1

        @em.handler(operation=rng.choice(["ProcessOrders", "CapturePayment"]))
        def handler(event, context):
            recs = em.records(event)  # every sample: batches (Records, Kafka, Amazon MQ) and single events
            if threaded:
                with ThreadPoolExecutor(3) as pool:
                    failed = [r for r, bad in zip(recs, pool.map(process, recs)) if bad]
            else:
                failed = [r for r in recs if process(r)]
            if crash:
                raise RuntimeError("handler crashed")
            return em.batch_item_failures(failed)

        try:
            handler(sample, Ctx(i, rng.randint(200, 15_000)))
        except RuntimeError:
            pass
    em.sink.close()


def derive(path: Path):
    """(counts from logs, sums from EMF) keyed by (operation, metric name)."""
    log_counts: Counter = Counter()
    log_values: dict = defaultdict(list)
    emf_sums: Counter = Counter()
    emf_values: dict = defaultdict(list)
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        if "_aws" in obj:
            assert validate_document(line) == []
            op = obj["Operation"]
            for m in obj["_aws"]["CloudWatchMetrics"][0]["Metrics"]:
                v = obj[m["Name"]]
                vals = v if isinstance(v, list) else [v]
                if m["Unit"] == Unit.COUNT.value:
                    emf_sums[(op, m["Name"])] += sum(vals)
                else:
                    emf_values[(op, m["Name"])].extend(vals)
            continue
        if "outcome" not in obj:
            continue
        op, outcome = obj["operation"], Outcome(obj["outcome"])
        metric = OUTCOME_METRIC[outcome]
        if metric is Metric.REMAINING_TIME_AT_SIDE_EFFECT:
            if "remaining_time_ms" in obj:
                log_values[(op, metric.value)].append(obj["remaining_time_ms"])
        elif metric is not None:
            log_counts[(op, metric.value)] += 1
        if outcome is Outcome.RECEIVED:
            if obj["attempt"] > 1:
                log_counts[(op, Metric.REDELIVERY.value)] += 1
            if "record_age_ms" in obj:
                log_values[(op, Metric.RECORD_AGE.value)].append(obj["record_age_ms"])
    return log_counts, log_values, emf_sums, emf_values


@pytest.mark.parametrize("seed,esd", [(1, False), (2, True), (3, False)])
def test_log_counts_equal_metric_counts(tmp_path, seed, esd):
    path = tmp_path / "orders-fn.log"
    simulate(path, seed, esd)
    log_counts, log_values, emf_sums, emf_values = derive(path)
    assert log_counts == emf_sums
    assert {k: sorted(v) for k, v in log_values.items()} == {k: sorted(v) for k, v in emf_values.items()}
    # the traffic really exercised the contract: every metric shows up
    seen = {name for _, name in emf_sums} | {name for _, name in emf_values}
    assert seen == {m.value for m in Metric}
    assert sum(emf_sums.values()) > 300


def test_logs_insights_counts_equal_metric_counts(tmp_path):
    """Same equality, with the collector's offline Logs Insights engine as the log reader (an independent
    implementation of `stats count(*) by outcome`)."""
    from collector.ingest import EventStore
    from collector.insights import run_query

    path = tmp_path / "orders-fn.log"
    simulate(path, 5, False)
    lines = path.read_text().splitlines()
    events = [{"timestamp": 1_767_608_400_000 + i, "message": line, "logStreamName": "2026/01/05/[$LATEST]abc",
               "ingestionTime": 1_767_608_400_500 + i, "eventId": str(i)} for i, line in enumerate(lines)]
    store = EventStore()
    report = store.ingest_events(events, "/aws/lambda/orders-fn")
    assert report.events == len(lines) and report.skipped == 0
    res = run_query(store, "filter ispresent(outcome) | stats count(*) as n by operation, outcome")
    from_insights = Counter()
    for op, outcome, n in res.rows:
        metric = OUTCOME_METRIC[Outcome(outcome)]
        if metric is not None and metric.unit is Unit.COUNT:
            from_insights[(op, metric.value)] += n
    res = run_query(store, "filter outcome = 'received' and attempt > 1 | stats count(*) as n by operation")
    for op, n in res.rows:
        from_insights[(op, Metric.REDELIVERY.value)] += n
    _, _, emf_sums, _ = derive(path)
    assert from_insights == emf_sums
