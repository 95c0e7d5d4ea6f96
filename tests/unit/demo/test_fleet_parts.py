"""Small parts of the fleet: fault-rate validation, the scheduler, SQS redrive, arrival times."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from dashboard.demo.faults import Fault, FaultPlan, FaultRates
from dashboard.demo.fleet import FUNCTION_CONFIGS, IN_PROGRESS_LOCK_MS, Fleet, FleetConfig, Scheduler, _arrivals, _Copy
from dashboard.demo.handlers import FACTORIES
from dashboard.demo.handlers.common import Deps
from dashboard.demo.logs import FunctionLog, iso_ms
from dashboard.demo.runtime import FunctionPool
from dashboard.demo.store import SqliteIdempotencyStore
from dashboard.demo.truth import FunctionTruth, Tally

T0 = 1_767_600_000_000


def test_fault_rates_are_validated() -> None:
    with pytest.raises(ValueError, match="within 0..1"):
        FaultRates(api_client_retry=1.5)
    with pytest.raises(ValueError, match="integer >= 1"):
        FaultRates(sqs_poison_every=0)
    with pytest.raises(ValueError, match=r"payment_\* fault rates sum to 1.100 > 1"):
        FaultRates(payment_ambiguous_commit=0.5, payment_timeout_budget=0.5, payment_declined=0.1,
                   payment_duplicate_event=0.0)
    r = FaultRates().scaled(2.0)
    assert r.sqs_throttled == pytest.approx(2 * FaultRates().sqs_throttled)
    assert r.sqs_poison_every == FaultRates().sqs_poison_every  # periods are not rates
    assert r.api_crash_client_gives_up == FaultRates().api_crash_client_gives_up


def test_fault_plan_fires_once_per_arm_and_counts() -> None:
    plan = FaultPlan()
    plan.arm("m-1", Fault.SQS_THROTTLED)
    assert plan.armed("m-1", Fault.SQS_THROTTLED)
    assert plan.fire("orders-consumer", "m-1", Fault.SQS_THROTTLED) is True
    assert plan.fire("orders-consumer", "m-1", Fault.SQS_THROTTLED) is False
    plan.arm("m-2", Fault.SQS_DUPLICATE_DELIVERY)
    assert plan.take("m-2", Fault.SQS_DUPLICATE_DELIVERY) is True  # consumed, not counted
    assert dict(plan.injected["orders-consumer"]) == {"sqs_throttled": 1}


def test_scheduler_runs_in_time_then_insertion_order_and_reports_leftovers() -> None:
    s, seen = Scheduler(), []
    s.at(20, "b", lambda t: seen.append(("b", t)))
    s.at(10, "a", lambda t: seen.append(("a1", t)))
    s.at(10, "a", lambda t: (seen.append(("a2", t)), s.at(15, "c", lambda u: seen.append(("c", u)))))
    s.at(99, "late", lambda t: seen.append(("late", t)))
    left = s.run(until_ms=50)
    assert seen == [("a1", 10), ("a2", 10), ("c", 15), ("b", 20)]
    assert left == {"late": 1}


def test_arrivals_are_sorted_seeded_and_honour_the_burst() -> None:
    a = _arrivals(random.Random(1), 1_000, T0, 3_600_000, 0.0, burst=(0.5, 0.6, 0.4))
    b = _arrivals(random.Random(1), 1_000, T0, 3_600_000, 0.0, burst=(0.5, 0.6, 0.4))
    assert a == b and a == sorted(a) and len(a) == 1_000
    assert all(T0 <= t < T0 + 3_600_000 for t in a)
    in_burst = sum(1 for t in a if T0 + 1_800_000 <= t < T0 + 2_160_000)
    assert in_burst >= 400  # 400 burst arrivals plus the wave's share of that 10 % of the window


def test_sqs_redrives_to_the_dlq_after_max_receive_count(tmp_path: Path) -> None:
    store = SqliteIdempotencyStore(tmp_path / "s.sqlite3")
    deps = Deps(store=store, plan=FaultPlan(), lock_ms=dict(IN_PROGRESS_LOCK_MS))
    fn = "orders-consumer"
    log, truth, tally = FunctionLog(fn), FunctionTruth(), Tally()
    pools = {f: FunctionPool(FUNCTION_CONFIGS[f], 1, log if f == fn else FunctionLog(f),
                             truth if f == fn else FunctionTruth(), tally, FACTORIES[f], deps)
             for f in FUNCTION_CONFIGS}
    fleet = Fleet(FleetConfig(seed=1, events=1, start_ms=T0, duration_s=3600), deps, pools)
    body = '{"order_id": "o-1", "items": []}'
    fleet.sqs.send(T0, _Copy("m-1", body, T0, receive_count=5))  # already received maxReceiveCount times
    fleet.sqs.send(T0, _Copy("m-2", body.replace("o-1", "o-2"), T0))
    fleet.sched.run(T0 + 10_000)
    assert deps.dlq["orders-dlq"] == 1
    assert truth.invocations == 1
    assert tally.counts[fn]["received"] == 1  # only m-2 reached the handler
    assert store.get("orders-consumer#order-o-2").status == "COMPLETED"
    assert iso_ms(T0) == "2026-01-05T08:00:00.000Z"
    store.close()
