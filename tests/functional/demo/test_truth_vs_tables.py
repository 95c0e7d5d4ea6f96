"""With a fixed seed, the count of each injected fault matches what the logs and the tables report.

Two independent readings of the same run are compared with demo-truth.json:
1. the export files parsed here with plain ``json`` (no collector code), and
2. the collector's tables written by ``collect_local`` (the pipeline the dashboard reads).
Then each injected fault is tied to the outcome it must produce (a duplicate injected is a
duplicate counted), per function.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from dashboard.demo import DemoTruth, Fault, FaultRates, run_demo
from dashboard.demo.constants import FUNCTIONS, OPERATIONS
from dashboard.demo.faults import INJECTION_FAULTS
from emitter.contract import Outcome

START_MS = 1_767_600_000_000  # 2026-01-05T08:00:00Z: fixed so the run is reproducible
SEED = 11
RATES = FaultRates().scaled(3.0)  # a small run that still has every fault


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("demo")
    truth = run_demo(out, seed=SEED, events=2_000, duration_s=2 * 3600, start_ms=START_MS, rates=RATES)
    return out, truth


def _parse_logs(logs: Path) -> dict[str, dict]:
    """Per function: outcome counts, REPORT figures, redeliveries and the last status of each key."""
    res: dict[str, dict] = {}
    line_re = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (.*)$")
    for fn in FUNCTIONS:
        outcomes: Counter[str] = Counter()
        last_status: dict[str, str] = {}
        reports = cold = timeouts = redeliveries = 0
        for line in (logs / f"{fn}.log").read_text(encoding="utf-8").splitlines():
            m = line_re.match(line)
            assert m, f"not an export line: {line[:80]!r}"
            msg = m.group(2)
            if msg.startswith("REPORT RequestId: "):
                reports += 1
                cold += "\tInit Duration: " in msg
                timeouts += msg.rstrip("\t").endswith("Status: timeout")
            elif msg.startswith("{") and '"outcome"' in msg:
                d = json.loads(msg)
                outcomes[d["outcome"]] += 1
                if d["outcome"] == "received" and d.get("attempt", 1) > 1:
                    redeliveries += 1
                if d.get("idempotency_key") and d.get("idempotency_status"):
                    last_status[d["idempotency_key"]] = d["idempotency_status"]
        res[fn] = {"outcomes": outcomes, "reports": reports, "cold": cold, "timeouts": timeouts,
                   "redeliveries": redeliveries,
                   "stuck": sorted(k for k, s in last_status.items() if s == "IN_PROGRESS")}
    return res


def test_every_fault_was_injected(run) -> None:
    _, truth = run
    fired = {f for ft in truth.functions.values() for f, n in ft.injected.items() if n > 0}
    assert fired == {f.value for f in Fault} - {f.value for f in INJECTION_FAULTS}


def test_logs_report_exactly_the_ground_truth(run) -> None:
    out, truth = run
    logs = _parse_logs(out / "logs")
    for fn in FUNCTIONS:
        ft = truth.functions[fn]
        assert dict(logs[fn]["outcomes"]) == ft.outcomes, fn
        assert logs[fn]["reports"] == ft.invocations
        assert logs[fn]["cold"] == ft.cold_starts
        assert logs[fn]["timeouts"] == ft.timeouts
        assert logs[fn]["redeliveries"] == ft.redeliveries
        assert sorted(logs[fn]["stuck"]) == sorted(ft.stuck_keys), fn


def _identities(truth, counts) -> list[tuple[str, int, int]]:
    """(label, injected, counted) for every fault whose effect is exact; ``counts[(fn, outcome)]``."""
    inj = truth.injected
    stuck = {fn: len(truth.functions[fn].stuck_keys) for fn in FUNCTIONS}
    o, l, a, p = "orders-consumer", "ledger-stream", "create-case-api", "payment-capture"
    return [
        # orders-consumer (SQS)
        ("sqs duplicate delivery -> duplicate_completed",
         inj(o, Fault.SQS_DUPLICATE_DELIVERY), counts[(o, "duplicate_completed")]),
        ("sqs concurrent duplicate -> duplicate_in_progress",
         inj(o, Fault.SQS_CONCURRENT_DUPLICATE), counts[(o, "duplicate_in_progress")]),
        ("sqs throttled -> retryable_failure", inj(o, Fault.SQS_THROTTLED), counts[(o, "retryable_failure")]),
        ("sqs throttled + concurrent loser -> batch_item_failure",
         inj(o, Fault.SQS_THROTTLED) + inj(o, Fault.SQS_CONCURRENT_DUPLICATE), counts[(o, "batch_item_failure")]),
        ("sqs poison -> poison_message", inj(o, Fault.SQS_POISON), counts[(o, "poison_message")]),
        ("sqs crash -> takeover or still stuck",
         inj(o, Fault.SQS_CRASH_AFTER_CLAIM), counts[(o, "stale_claim_takeover")] + stuck[o]),
        # ledger-stream (Kinesis)
        ("stream duplicate record -> duplicate_completed",
         inj(l, Fault.STREAM_DUPLICATE_RECORD), counts[(l, "duplicate_completed")]),
        ("stream poison -> poison_message", inj(l, Fault.STREAM_POISON), counts[(l, "poison_message")]),
        ("stream crash -> takeover or still stuck",
         inj(l, Fault.STREAM_CRASH_AFTER_CLAIM), counts[(l, "stale_claim_takeover")] + stuck[l]),
        # create-case-api
        ("api client retry -> duplicate_completed", inj(a, Fault.API_CLIENT_RETRY), counts[(a, "duplicate_completed")]),
        ("api key reuse -> payload_conflict", inj(a, Fault.API_KEY_REUSE_CONFLICT), counts[(a, "payload_conflict")]),
        ("api validation -> permanent_failure", inj(a, Fault.API_VALIDATION_ERROR), counts[(a, "permanent_failure")]),
        ("api 503 -> retryable_failure", inj(a, Fault.API_DEPENDENCY_FAILURE), counts[(a, "retryable_failure")]),
        ("api crash -> takeover or still stuck",
         inj(a, Fault.API_CRASH_AFTER_CLAIM), counts[(a, "stale_claim_takeover")] + stuck[a]),
        # payment-capture
        ("payment ambiguous -> ambiguous_commit",
         inj(p, Fault.PAYMENT_AMBIGUOUS_COMMIT), counts[(p, "ambiguous_commit")]),
        ("payment budget -> timeout_budget_abort",
         inj(p, Fault.PAYMENT_TIMEOUT_BUDGET), counts[(p, "timeout_budget_abort")]),
        ("payment declined -> permanent_failure", inj(p, Fault.PAYMENT_DECLINED), counts[(p, "permanent_failure")]),
        ("payment duplicate event -> duplicate_completed",
         inj(p, Fault.PAYMENT_DUPLICATE_EVENT), counts[(p, "duplicate_completed")]),
    ]


def test_each_injected_fault_is_counted_in_the_logs(run) -> None:
    out, truth = run
    logs = _parse_logs(out / "logs")
    counts = Counter({(fn, k): v for fn in FUNCTIONS for k, v in logs[fn]["outcomes"].items()})
    bad = [(label, i, c) for label, i, c in _identities(truth, counts) if i != c]
    assert not bad, bad
    # API in-progress collisions: each double submit, plus each crashed request retried before its claim expired
    a = "create-case-api"
    assert counts[(a, "duplicate_in_progress")] >= truth.injected(a, Fault.API_DOUBLE_SUBMIT)
    # the provider charged each payment once: retries after an ambiguous commit were replays
    assert truth.provider["charges"] == counts[("payment-capture", "succeeded")]
    assert truth.provider["replays"] == truth.injected("payment-capture", Fault.PAYMENT_AMBIGUOUS_COMMIT)


@pytest.fixture(scope="module")
def tables(run):
    import duckdb

    from collector.collect import collect_local

    out, _ = run
    collect_local([out / "logs"], out)
    con = duckdb.connect()
    yield out / "tables", con
    con.close()


def _q(con, sql: str, *params):
    return con.execute(sql, list(params)).fetchall()


def test_tables_report_exactly_the_ground_truth(run, tables) -> None:
    _, truth = run
    tdir, con = tables
    by_op = {op: fn for fn, op in OPERATIONS.items()}
    rows = _q(con, "SELECT service, operation, outcome, sum(events) FROM read_parquet(?) GROUP BY ALL",
              str(tdir / "outcomes.parquet"))
    counts: Counter[tuple[str, str]] = Counter()
    for service, op, outcome, n in rows:
        assert service == "shop"
        counts[(by_op[op], outcome)] += int(n)
    expected = Counter({(fn, o): n for fn, ft in truth.functions.items() for o, n in ft.outcomes.items()})
    assert counts == expected

    bad = [(label, i, c) for label, i, c in _identities(truth, counts) if i != c]
    assert not bad, bad

    inv = {lg: (int(i), int(c), int(t)) for lg, i, c, t in _q(
        con, "SELECT log_group, sum(invocations), sum(cold_starts), sum(timeouts) FROM read_parquet(?) GROUP BY ALL",
        str(tdir / "invocations.parquet"))}
    for fn in FUNCTIONS:
        ft = truth.functions[fn]
        assert inv[f"/aws/lambda/{fn}"] == (ft.invocations, ft.cold_starts, ft.timeouts), fn

    stuck = _q(con, "SELECT idempotency_key FROM read_parquet(?) ORDER BY 1", str(tdir / "stuck_keys.parquet"))
    assert [k for (k,) in stuck] == sorted(k for ft in truth.functions.values() for k in ft.stuck_keys)

    redeliveries = _q(con, "SELECT operation, sum(events) FROM read_parquet(?) WHERE attempt > 1 GROUP BY ALL",
                      str(tdir / "attempts.parquet"))
    assert {by_op[op]: int(n) for op, n in redeliveries} == {
        fn: ft.redeliveries for fn, ft in truth.functions.items() if ft.redeliveries}

    conflicts = _q(con, "SELECT sum(conflicts) FROM read_parquet(?)", str(tdir / "conflicting_keys.parquet"))
    assert int(conflicts[0][0]) == truth.total(Outcome.PAYLOAD_CONFLICT)


def test_same_seed_same_files_byte_for_byte(run, tmp_path: Path) -> None:
    out, truth = run
    again = run_demo(tmp_path, seed=SEED, events=2_000, duration_s=2 * 3600, start_ms=START_MS, rates=RATES)
    for fn in FUNCTIONS:
        assert (tmp_path / "logs" / f"{fn}.log").read_bytes() == (out / "logs" / f"{fn}.log").read_bytes(), fn
    assert (tmp_path / "demo-truth.json").read_bytes() == (out / "demo-truth.json").read_bytes()
    assert again.functions == truth.functions
    assert DemoTruth.read(tmp_path / "demo-truth.json").functions == truth.functions  # the file round-trips


def test_another_seed_gives_other_traffic(run, tmp_path: Path) -> None:
    out, _ = run
    run_demo(tmp_path, seed=SEED + 1, events=2_000, duration_s=2 * 3600, start_ms=START_MS, rates=RATES)
    assert (tmp_path / "logs" / "orders-consumer.log").read_bytes() != (out / "logs" / "orders-consumer.log").read_bytes()
