"""Typing of all-string results, merging of windowed pieces, backoff, cost, CLI time parsing."""

from __future__ import annotations

import click
import pandas as pd
import pytest

from collector.cloudwatch.adaptive import AdaptiveRate, ConcurrencyLimit, DurationEstimate
from collector.cloudwatch.backoff import Backoff, PollSchedule
from collector.cloudwatch.commands import parse_duration_s, parse_time_s
from collector.cloudwatch.cost import CostModel
from collector.cloudwatch.merge import merge_frames, spec_for
from collector.parquet import parse_timestamp_ms, to_frame
from collector.tables import TABLES


def test_timestamp_forms_to_epoch_ms():
    assert parse_timestamp_ms("2026-01-05 10:20:01.123") == 1_767_608_401_123
    assert parse_timestamp_ms("2026-01-05T10:20:01.123Z") == 1_767_608_401_123
    assert parse_timestamp_ms("2026-01-05 10:20:01") == 1_767_608_401_000
    assert parse_timestamp_ms("1767608401123") == 1_767_608_401_123
    with pytest.raises(ValueError):
        parse_timestamp_ms("yesterday")


def test_all_string_row_typed_like_tables_py_and_bad_values_counted():
    rows = [
        {"idempotency_key": "k1", "service": "orders", "operation": "Pay", "last_status": "IN_PROGRESS",
         "claimed_at": "2026-01-05 10:00:00.000", "attempts": "3", "age_s": "12.5", "expired": "true", "@ptr": "x"},
        {"idempotency_key": "k2", "attempts": "2.5", "expired": "maybe", "claimed_at": "soon"},
    ]
    df, report = to_frame(rows, TABLES["stuck_keys"])
    assert list(df.columns) == list(TABLES["stuck_keys"].column_names)
    assert df.attempts.tolist()[0] == 3 and pd.isna(df.attempts.iloc[1])
    assert df.expired.iloc[0] is True or bool(df.expired.iloc[0]) is True
    assert df.claimed_at.iloc[0] == pd.Timestamp("2026-01-05T10:00:00Z")
    assert df.age_s.iloc[0] == 12.5 and pd.isna(df.in_progress_expires_at.iloc[0])
    assert report.bad_values == {"attempts": 1, "expired": 1, "claimed_at": 1}
    assert report.extra_fields == {"@ptr": 1} and report.rows == 2


def _outcomes(rows):
    return to_frame([dict(zip(("time", "service", "operation", "event_source", "outcome", "events"), r))
                     for r in rows], TABLES["outcomes"])[0]


def test_binned_pieces_from_two_log_group_batches_are_summed():
    a = _outcomes([("2026-01-05 10:00:00.000", "s", "op", "sqs", "received", "2"),
                   ("2026-01-05 10:01:00.000", "s", "op", "sqs", "received", "1")])
    b = _outcomes([("2026-01-05 10:00:00.000", "s", "op", "sqs", "received", "5")])
    out = merge_frames(TABLES["outcomes"], spec_for("outcomes"), [a, b]).frame
    assert out.events.tolist() == [7, 1]
    assert out.time.tolist() == [pd.Timestamp("2026-01-05T10:00Z"), pd.Timestamp("2026-01-05T10:01Z")]


def test_regroup_conflicting_keys_sum_min_max():
    t = TABLES["conflicting_keys"]
    mk = lambda r: to_frame([dict(zip(t.column_names, r))], t)[0]
    a = mk(("k", "s", "op", "2", "2026-01-05 10:00:00.000", "2026-01-05 10:10:00.000"))
    b = mk(("k", "s", "op", "3", "2026-01-05 09:00:00.000", "2026-01-05 10:05:00.000"))
    out = merge_frames(t, spec_for("conflicting_keys"), [a, b]).frame
    assert out.conflicts.tolist() == [5]
    assert out.first_seen.iloc[0] == pd.Timestamp("2026-01-05T09:00Z")
    assert out.last_seen.iloc[0] == pd.Timestamp("2026-01-05T10:10Z")


def test_non_summable_duplicates_are_counted_not_hidden():
    t = TABLES["record_age"]
    row = ("2026-01-05 10:00:00.000", "s", "op", "sqs", "3", "1", "2", "3")
    mk = lambda: to_frame([dict(zip(t.column_names, row))], t)[0]
    res = merge_frames(t, spec_for("record_age"), [mk(), mk()])
    assert res.unmerged_duplicates == 1 and len(res.frame) == 2


def test_split_granularity_per_table():
    assert spec_for("trail").split_align_s == 1 and spec_for("outcomes").split_align_s == 60
    assert spec_for("stuck_keys").split_align_s is None and not spec_for("stuck_keys").windowed
    assert spec_for("not-a-table").kind == "whole"


def test_backoff_full_jitter_bounds_and_poll_schedule():
    b = Backoff(base_s=0.5, max_s=20.0)
    assert b.delay(0, lambda: 0.999999) < 0.5 and b.delay(3, lambda: 1.0) == 4.0 and b.delay(10, lambda: 1.0) == 20.0
    assert b.delay(5, lambda: 0.0) == 0.0
    d = PollSchedule(0.5, 1.5, 2.0).delays()
    assert [next(d) for _ in range(5)] == [0.5, 0.75, 1.125, 1.6875, 2.0]


def test_adaptive_rate_spaces_calls_and_halves_on_throttling():
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    rate = AdaptiveRate(10.0, step=0.0, clock=lambda: now[0], sleep=sleep)
    assert rate.rate == 10.0  # starts at the documented TPS
    for _ in range(15):  # a full bucket (one second of calls: 10), then one call every 0.1 s
        rate.acquire()
    assert now[0] == pytest.approx(0.5) and len(slept) == 5
    rate.throttled()
    rate.throttled()
    assert rate.rate == 2.5 and rate.throttles == 2
    grow = AdaptiveRate(10.0)
    for _ in range(100):
        grow.succeeded()
    assert grow.rate == 10.0  # never above the quota


def test_adaptive_rate_regrows_in_the_same_number_of_calls_at_any_time_scale():
    """Growth is a fraction of the maximum (1/40 per clean call): from half back to the quota in 20 clean calls, at
    10 calls/s (0.25 per call) as at 50 calls/s (1.25 per call: the benchmark's x0.2 time scale)."""
    for maximum, after_4 in ((10.0, 6.0), (50.0, 30.0)):
        rate = AdaptiveRate(maximum)
        rate.throttled()
        assert rate.rate == maximum / 2
        for _ in range(4):
            rate.succeeded()
        assert rate.rate == pytest.approx(after_4)  # 5 + 4 x 0.25, 25 + 4 x 1.25
        for _ in range(15):
            rate.succeeded()
        assert rate.rate < maximum
        rate.succeeded()
        assert rate.rate == pytest.approx(maximum)  # the 20th clean call


def test_concurrency_limit_slow_start_then_halves_then_one_per_round():
    lim = ConcurrencyLimit(maximum=15, initial=2)
    assert lim.limit == 2
    for _ in range(6):
        lim.started_cleanly()
    assert lim.limit == 8  # slow start: +1 per clean start
    epoch = lim.acquire()
    lim.release()
    lim.collided(epoch)
    assert lim.limit == 4 and lim.collisions == 1
    lim.collided(epoch)  # another start of the same moment: one signal, not a second halving
    assert lim.limit == 4 and lim.collisions == 2
    for _ in range(3):  # after a collision: 1/limit per clean start (one per round)...
        lim.started_cleanly()
    assert lim.limit == 4
    lim.started_cleanly()  # ...until a whole round (4 starts) passed without one: slow start again
    assert lim.limit == 5
    lim.started_cleanly()
    assert lim.limit == 6
    for _ in range(200):
        lim.started_cleanly()
    assert lim.limit == 15  # never above the maximum
    for _ in range(10):
        lim.collided(lim.acquire())
        lim.release()
    assert lim.limit == 1  # never below one


def test_concurrency_limit_blocks_at_the_limit_and_gives_up_on_request():
    lim = ConcurrencyLimit(maximum=3, initial=1)
    assert lim.acquire() == 0
    assert lim.acquire(give_up=lambda: True, poll_s=0.001) is None  # the one slot is held
    lim.release()
    assert lim.acquire() == 0 and lim.peak == 1


def test_first_poll_follows_the_median_duration_but_not_below_what_queries_needed():
    est = DurationEstimate(floor_s=0.5, cap_s=5.0)
    assert est.first_poll_s() == 0.5
    for d in (2.0, 2.2, 1.8, 9.0):
        est.add(d)
    assert est.first_poll_s() == pytest.approx(0.9 * 2.1)
    est.add(2.9, last_running_s=1.95)  # polled too early: it was still running at 1.95 s
    assert est.first_poll_s() == pytest.approx(1.05 * 1.95)
    for _ in range(30):
        est.add(60.0)
    assert est.first_poll_s() == 5.0


def test_second_poll_goes_at_the_typical_duration():
    est = DurationEstimate(floor_s=0.5, cap_s=5.0)
    assert est.second_poll_s(0.5, 0.5) is None  # no estimate yet: the caller's schedule goes on
    for d in (2.0, 2.2, 1.8, 9.0):  # typical duration: the median upper bound, 2.1
        est.add(d)
    assert est.second_poll_s(1.89, 1.89) == pytest.approx(0.21)  # the 0.9 x 2.1 probe missed: look again at 2.1
    assert est.second_poll_s(2.5, 2.5) == pytest.approx(0.625)  # aimed past 2.1 (lower bounds): a quarter later
    assert est.second_poll_s(2.1, 1.2) == 0.5  # nothing ahead, a quarter of 1.2 is below the floor
    for _ in range(30):
        est.add(60.0)
    assert est.second_poll_s(5.0, 5.0) == 5.0  # 55 s ahead, at most cap_s


def test_cost_model_per_gb_scanned():
    c = CostModel()
    assert c.insights_usd(2 * 1024**3) == pytest.approx(0.01)  # 2 GB x $0.005
    assert CostModel(price_per_gb_scanned=0.0076).insights_usd(1024**3) == pytest.approx(0.0076)
    assert c.metrics_usd(1500) == pytest.approx(0.015)


def test_cli_time_parsing():
    assert parse_duration_s("24h") == 86400 and parse_duration_s("15m") == 900 and parse_duration_s("1w") == 604800
    assert parse_time_s("2h", now=10_000.0) == 2800
    assert parse_time_s("1767607200", now=0) == 1_767_607_200
    assert parse_time_s("2026-01-05T10:00:00Z", now=0) == 1_767_607_200
    assert parse_time_s("2026-01-05T10:00:00", now=0) == 1_767_607_200  # no offset = UTC
    with pytest.raises(click.BadParameter):
        parse_duration_s("soon")


def test_export_lines_loader_for_the_try_it_server(tmp_path):
    from tests.support.fake_logs_insights_engines import load_export_lines

    p = tmp_path / "orders.log"
    p.write_text("orphan\n2026-01-05T10:00:00.250Z START RequestId: r1\nnot a line\n"
                 "2026-01-05T10:00:01.000Z {\"a\": 1}\n")
    evs = load_export_lines(p)
    # the ingest's export-to-S3 framing: a line without the timestamp prefix continues the event before it; one
    # before the first timestamped line has no time and is left out
    assert [(e["timestamp"], e["message"]) for e in evs] == [(1_767_607_200_250, "START RequestId: r1\nnot a line"),
                                                              (1_767_607_201_000, '{"a": 1}')]
