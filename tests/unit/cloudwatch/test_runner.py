"""LogsInsightsRunner over real HTTP against the fake Logs Insights server on 127.0.0.1.

The oracle is the list of events put into the server: every event of the queried range must come back exactly once,
whatever splits, pages, retries and faults happened on the way.
"""

from __future__ import annotations

import itertools

import boto3
import pytest
from botocore.config import Config

from collector.cloudwatch import LogsInsightsRunner, Window
from collector.cloudwatch.runner import DEADLINE_EXCEEDED, batches, supports_result_pagination
from idemwatch.aws import AccessDeniedError, MissingCredentialsError, NotFoundError, ThrottledError
from tests.support.fake_logs_insights import FakeLogsInsightsServer, Faults
from tests.support.fake_logs_insights_engines import raw_events_engine

T0 = 1_767_607_200  # 2026-01-05 10:00:00 UTC
GROUP = "/aws/lambda/orders"


def events(n: int, per_second: int, start: int = T0) -> list[dict]:
    """n events, per_second of them in each second, message = "e<i>"."""
    return [{"timestamp": (start + i // per_second) * 1000 + (i % per_second) % 1000, "message": f"e{i}"}
            for i in range(n)]


def messages(result) -> list[str]:
    return [r["@message"] for r in result.rows]


@pytest.fixture
def server():
    with FakeLogsInsightsServer(engine=raw_events_engine) as srv:
        yield srv


def test_pagination_detected_from_installed_botocore(logs_client, server):
    # botocore 1.44's GetQueryResults has nextToken / maxItems (up to 100,000 rows per query)
    assert supports_result_pagination(logs_client(server.url)) is True


def test_old_api_cap_splits_window_no_event_lost_or_doubled(logs_client, fast_config, server):
    server.faults.no_pagination = True
    evs = events(25_000, 20)  # 1,250 seconds of events, 20 per second
    server.put_events(GROUP, evs)
    runner = LogsInsightsRunner(logs_client(server.url), fast_config(paginate=False))
    [res] = runner.run("fields @timestamp, @message", [GROUP], [Window(T0, T0 + 3599)])
    got = messages(res)
    assert len(got) == 25_000 and set(got) == {e["message"] for e in evs}
    assert res.status == "complete"
    # every capped window was split into [a, m], [m + 1, b]: the sub-windows tile the hour exactly
    subs = res.sub_windows
    assert subs[0].start == T0 and subs[-1].end == T0 + 3599
    assert all(b.start == a.end + 1 for a, b in itertools.pairwise(subs))
    assert runner.limit == 10_000 and all(a.rows < 10_000 for a in res.attempts if a.status == "Complete"
                                           and not a.capped)


def test_pagination_reads_all_pages_of_one_query(logs_client, fast_config, server):
    evs = events(25_000, 20)
    server.put_events(GROUP, evs)
    runner = LogsInsightsRunner(logs_client(server.url), fast_config())
    [res] = runner.run("fields @timestamp, @message", [GROUP], [Window(T0, T0 + 3599)])
    assert sorted(messages(res)) == sorted(e["message"] for e in evs)
    [attempt] = res.attempts
    assert (attempt.pages, attempt.rows, attempt.capped) == (3, 25_000, False)  # 10,000 + 10,000 + 5,000
    assert runner.api_calls["StartQuery"] == 1


def test_permit_goes_back_before_the_result_pages_are_read(logs_client, fast_config, server):
    # a Complete query holds no slot of the account's quota (the fake server counts only running ones), so reading
    # its pages must not keep another query from starting
    server.put_events(GROUP, events(25_000, 20))
    runner = LogsInsightsRunner(logs_client(server.url), fast_config(max_concurrency=1))
    held_at_page_reads: list[int] = []
    call = runner._call

    def spy(op, **kwargs):
        if op == "GetQueryResults" and "nextToken" in kwargs:
            held_at_page_reads.append(runner.concurrency._held)
        return call(op, **kwargs)

    runner._call = spy
    [res] = runner.run("fields @timestamp, @message", [GROUP], [Window(T0, T0 + 3599)])
    assert len(res.rows) == 25_000 and held_at_page_reads == [0, 0]  # pages 2 and 3, no permit held
    assert runner.concurrency._held == 0  # and released exactly once


def test_events_on_split_boundaries_counted_once(logs_client, fast_config, server):
    server.faults.no_pagination = True
    # 10,000 events in [T0, T0+99] force one split at T0+50; put extra events at 49.999 s and 50.000 s
    evs = events(10_000, 100)
    edge = [{"timestamp": (T0 + 49) * 1000 + 999, "message": "left-edge"},
            {"timestamp": (T0 + 50) * 1000, "message": "right-edge"}]
    server.put_events(GROUP, evs + edge)
    runner = LogsInsightsRunner(logs_client(server.url), fast_config(paginate=False))
    [res] = runner.run("fields @message", [GROUP], [Window(T0, T0 + 99)])
    got = messages(res)
    assert got.count("left-edge") == 1 and got.count("right-edge") == 1 and len(got) == 10_002
    assert res.sub_windows == [Window(T0, T0 + 49), Window(T0 + 50, T0 + 99)]


def test_capped_second_is_flagged_truncated_not_complete(logs_client, fast_config, server):
    server.faults.no_pagination = True
    server.put_events(GROUP, events(550, 550) + events(5, 1, start=T0 + 5))  # 550 in the first second: unsplittable
    runner = LogsInsightsRunner(logs_client(server.url), fast_config(paginate=False, limit=500))
    [res] = runner.run("fields @message", [GROUP], [Window(T0, T0 + 9)])
    assert res.status == "truncated"
    assert res.truncated_windows == [Window(T0, T0)]
    assert len(res.rows) == 500 + 5


def test_binned_split_stays_on_minute_boundaries(logs_client, fast_config, server):
    server.faults.no_pagination = True
    server.put_events(GROUP, events(1_200, 5))  # 240 s
    runner = LogsInsightsRunner(logs_client(server.url), fast_config(paginate=False, limit=500))
    [res] = runner.run("fields @message", [GROUP], [Window(T0, T0 + 599)], split_align_s=60)
    assert len(res.rows) == 1_200 and len(res.sub_windows) > 2
    assert all(w.start % 60 == 0 and (w.end + 1) % 60 == 0 for w in res.sub_windows)


def test_faults_survived_limit_exceeded_throttling_partial_timeout_unknown(logs_client, fast_config):
    faults = Faults(limit_exceeded_first_n=3, throttle_get_first_n=2, partial_polls=2,
                    terminal_statuses=["Timeout", "Unknown"])
    with FakeLogsInsightsServer(engine=raw_events_engine, faults=faults) as srv:
        evs = events(3_000, 1)  # one event per second over 50 minutes
        srv.put_events(GROUP, evs)
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config())
        [res] = runner.run("fields @message", [GROUP], [Window(T0, T0 + 3599)])
        assert sorted(messages(res)) == sorted(e["message"] for e in evs)  # partial rows never leaked in
        assert res.status == "complete"
        statuses = [a.status for a in res.attempts]
        # 1st query: Timeout -> split in two; one half (whichever started first): Unknown -> retried; both complete
        assert statuses[0] == "Timeout" and sorted(statuses[1:]) == ["Complete", "Complete", "Unknown"]
        assert res.sub_windows == [Window(T0, T0 + 1799), Window(T0 + 1800, T0 + 3599)]
        assert srv.count("StartQuery") == 3 + 4  # 3 rejected with LimitExceededException, then 4 queries


def test_stop_query_called_on_deadline(logs_client, fast_config):
    with FakeLogsInsightsServer(engine=raw_events_engine, faults=Faults(hang_first_n=1)) as srv:
        evs = events(600, 1)
        srv.put_events(GROUP, evs)
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config(deadline_s=0.3))
        [res] = runner.run("fields @message", [GROUP], [Window(T0, T0 + 599)])
        first = res.attempts[0]
        assert first.status == DEADLINE_EXCEEDED
        stops = [body["queryId"] for op, body in srv.calls if op == "StopQuery"]
        assert stops == [first.query_id] and srv.queries[first.query_id].stopped
        assert sorted(messages(res)) == sorted(e["message"] for e in evs)  # the halves completed it


def test_concurrency_cap_holds_and_is_used(logs_client, fast_config):
    with FakeLogsInsightsServer(engine=raw_events_engine, latency_s=0.08) as srv:
        srv.put_events(GROUP, events(100, 1))
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config(max_concurrency=5))
        windows = [Window(T0 + 60 * i, T0 + 60 * i + 59) for i in range(20)]
        results = runner.run("fields @message", [GROUP], windows)
        assert sum(len(r.rows) for r in results) == 100
        assert srv.max_in_flight == 5  # never more than the cap, and the cap was reached


def test_shared_account_quota_limit_exceeded_is_retried(logs_client, fast_config):
    # other users hold the quota: only 2 queries may run at once though we would run 5
    with FakeLogsInsightsServer(engine=raw_events_engine, latency_s=0.03, faults=Faults(account_quota=2)) as srv:
        srv.put_events(GROUP, events(120, 1))
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config(max_concurrency=5,
                                    backoff=__import__("collector.cloudwatch").cloudwatch.Backoff(0.01, 0.05, 50)))
        results = runner.run("fields @message", [GROUP], [Window(T0 + 10 * i, T0 + 10 * i + 9) for i in range(12)])
        assert sum(len(r.rows) for r in results) == 120 and all(r.status == "complete" for r in results)
        assert srv.max_in_flight <= 2 and srv.count("StartQuery") > 12


def test_failed_after_retries_is_reported_failed(logs_client, fast_config):
    with FakeLogsInsightsServer(engine=raw_events_engine, faults=Faults(terminal_statuses=["Failed"] * 3)) as srv:
        srv.put_events(GROUP, events(10, 1))
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config(max_retries=2))
        [res] = runner.run("fields @message", [GROUP], [Window(T0, T0 + 59)])
        assert res.status == "failed" and "Failed" in res.error and res.rows == []


def test_more_than_50_log_groups_are_batched(logs_client, fast_config, server):
    groups = [f"/aws/lambda/fn-{i:03d}" for i in range(120)]
    for i, g in enumerate(groups):
        server.put_events(g, [{"timestamp": (T0 + i) * 1000, "message": g}])
    runner = LogsInsightsRunner(logs_client(server.url), fast_config())
    results = runner.run("fields @message", groups, [Window(T0, T0 + 3599)])
    assert [len(r.log_groups) for r in results] == [50, 50, 20]
    assert sorted(m for r in results for m in messages(r)) == groups
    assert all(len(body["logGroupNames"]) <= 50 for op, body in server.calls if op == "StartQuery")
    assert batches(groups)[2][0] == "/aws/lambda/fn-100"


def test_unknown_log_group_is_a_clear_error(logs_client, fast_config, server):
    runner = LogsInsightsRunner(logs_client(server.url), fast_config())
    with pytest.raises(NotFoundError, match="log group not found: /aws/lambda/nope"):
        runner.run("fields @message", ["/aws/lambda/nope"], [Window(T0, T0 + 59)])


def test_access_denied_names_the_iam_action(logs_client, fast_config):
    with FakeLogsInsightsServer(engine=raw_events_engine, faults=Faults(deny_operations={"StartQuery"})) as srv:
        srv.put_events(GROUP, events(1, 1))
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config())
        with pytest.raises(AccessDeniedError, match="logs:StartQuery"):
            runner.run("fields @message", [GROUP], [Window(T0, T0 + 59)])


def test_throttled_account_gives_up_with_clear_error(logs_client, fast_config):
    with FakeLogsInsightsServer(engine=raw_events_engine, faults=Faults(limit_exceeded_first_n=10**6)) as srv:
        srv.put_events(GROUP, events(1, 1))
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config())
        with pytest.raises(ThrottledError, match="LimitExceededException"):
            runner.run("fields @message", [GROUP], [Window(T0, T0 + 59)])
        assert srv.count("StartQuery") == 1 + 6  # first try + backoff.max_attempts retries


def test_missing_credentials_is_a_clear_error(fast_config, server, monkeypatch):
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(k)
    client = boto3.session.Session().client("logs", endpoint_url=server.url, region_name="us-east-1",
                                            config=Config(retries={"total_max_attempts": 1}))
    runner = LogsInsightsRunner(client, fast_config())
    with pytest.raises(MissingCredentialsError, match="no AWS credentials"):
        runner.run("fields @message", [GROUP], [Window(T0, T0 + 59)])
    assert server.calls == []  # nothing was sent unsigned


def test_window_filter_is_prepended_after_comments():
    from collector.cloudwatch.runner import restrict_to_window

    q = "# Table: x\n\nfilter ispresent(outcome)\n| stats count(*) as n by bin(1m)"
    assert restrict_to_window(q, Window(60, 119)).splitlines() == [
        "# Table: x", "", "filter toMillis(@timestamp) <= 119999", "| filter ispresent(outcome)",
        "| stats count(*) as n by bin(1m)"]


def test_millisecond_boundaries_with_the_offline_engine(logs_client, fast_config):
    """The service compares endTime at the millisecond (aws/aws-sdk#280); so does the offline engine. Events at
    .000 and .999 of every split second must come back exactly once."""
    from tests.support.fake_logs_insights_engines import InsightsEngine

    with FakeLogsInsightsServer(engine=InsightsEngine(), faults=Faults(no_pagination=True)) as srv:
        evs = [{"timestamp": (T0 + s) * 1000 + ms, "message": f"s{s}-{ms}"} for s in range(120) for ms in (0, 1, 500, 999)]
        srv.put_events(GROUP, evs)
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config(limit=50, paginate=False))
        [res] = runner.run("fields @timestamp, @message | sort @timestamp asc", [GROUP], [Window(T0, T0 + 119)])
        assert sorted(messages(res)) == sorted(e["message"] for e in evs)
        assert len(res.sub_windows) > 8  # 480 events / 50-row limit: many splits, each at a second boundary
        sent = [body for op, body in srv.calls if op == "StartQuery"]
        assert all(b["endTime"] == int(b["queryString"].split("<= ")[1].split("\n")[0]) // 1000 + 1 for b in sent)


# ------------------------------------------------------------------ adaptive concurrency and call rates
def test_quota_collisions_back_off_and_every_event_comes_back_once(logs_client, fast_config):
    """The account quota is 6 and other clients hold 4 of it: at most 2 of ours can run although we may run 8.
    StartQuery collides (LimitExceededException), the limit halves and the windows still all complete."""
    faults = Faults(account_quota=6, held_by_others=4)
    with FakeLogsInsightsServer(engine=raw_events_engine, latency_s=0.05, faults=faults) as srv:
        evs = events(240, 1)
        srv.put_events(GROUP, evs)
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config(
            max_concurrency=8, backoff=__import__("collector.cloudwatch").cloudwatch.Backoff(0.01, 0.05, 50)))
        results = runner.run("fields @message", [GROUP], [Window(T0 + 10 * i, T0 + 10 * i + 9) for i in range(24)])
        assert sorted(m for r in results for m in messages(r)) == sorted(e["message"] for e in evs)
        assert all(r.status == "complete" for r in results)
        assert srv.max_in_flight <= 2  # the quota held: 2 free slots, never more of ours running
        report = runner.report()
        assert report["quota_collisions"] == srv.limit_exceeded >= 1
        assert srv.count("StartQuery") == 24 + srv.limit_exceeded
        assert report["final_concurrency_limit"] <= 4  # halved below what it had grown to


def test_concurrency_grows_to_the_maximum_on_a_quiet_account(logs_client, fast_config):
    with FakeLogsInsightsServer(engine=raw_events_engine, latency_s=0.1, faults=Faults(account_quota=30)) as srv:
        srv.put_events(GROUP, events(300, 1))
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config(max_concurrency=12, initial_concurrency=2))
        results = runner.run("fields @message", [GROUP], [Window(T0 + 10 * i, T0 + 10 * i + 9) for i in range(30)])
        assert sum(len(r.rows) for r in results) == 300
        assert srv.limit_exceeded == 0 and runner.report()["quota_collisions"] == 0
        assert runner.concurrency.peak == 12 and srv.max_in_flight <= 12  # grew from 2 to the maximum, not past it


def test_tps_throttling_slows_the_calls_down_and_loses_nothing(logs_client, fast_config):
    """StartQuery and GetQueryResults each allowed 5 calls/s; ours start at 80/s: the server answers
    ThrottlingException, the rates halve, every window completes."""
    faults = Faults(tps={"StartQuery": 5.0, "GetQueryResults": 5.0})
    with FakeLogsInsightsServer(engine=raw_events_engine, latency_s=0.02, faults=faults) as srv:
        evs = events(100, 1)
        srv.put_events(GROUP, evs)
        cfg = fast_config(max_concurrency=10, max_starts_per_s=80.0, max_polls_per_s=80.0,
                          backoff=__import__("collector.cloudwatch").cloudwatch.Backoff(0.01, 0.1, 50))
        runner = LogsInsightsRunner(logs_client(srv.url), cfg)
        results = runner.run("fields @message", [GROUP], [Window(T0 + 10 * i, T0 + 10 * i + 9) for i in range(10)])
        assert sorted(m for r in results for m in messages(r)) == sorted(e["message"] for e in evs)
        throttled = runner.report()["throttled"]
        assert srv.throttled.get("StartQuery", 0) >= 1
        assert throttled == {"StartQuery": srv.throttled.get("StartQuery", 0),
                             "GetQueryResults": srv.throttled.get("GetQueryResults", 0)}
        assert runner.rates["StartQuery"].rate < 40.0  # halved from the 80/s it started at


def test_calls_stay_within_the_configured_rates(logs_client, fast_config):
    """Rates capped at 8 calls/s against a server allowing 10/s: never throttled (the margin absorbs
    the spacing that loopback delays can squeeze out of calls sent 1/8 s apart)."""
    faults = Faults(tps={"StartQuery": 10.0, "GetQueryResults": 10.0})
    with FakeLogsInsightsServer(engine=raw_events_engine, latency_s=0.05, faults=faults) as srv:
        srv.put_events(GROUP, events(120, 1))
        cfg = fast_config(max_concurrency=10, max_starts_per_s=8.0, max_polls_per_s=8.0)
        runner = LogsInsightsRunner(logs_client(srv.url), cfg)
        results = runner.run("fields @message", [GROUP], [Window(T0 + 10 * i, T0 + 10 * i + 9) for i in range(12)])
        assert sum(len(r.rows) for r in results) == 120
        assert srv.throttled == {} and runner.report()["throttled"] == {"StartQuery": 0, "GetQueryResults": 0}


def test_retried_start_that_gets_in_grows_the_limit(logs_client, fast_config):
    """Both first StartQuery calls collide: the limit halves once (2 -> 1; the second collision is of the same
    moment). Each retry the quota then accepts is a clean start: the first ends a clean round of 1 (slow start
    again, 1 -> 2), the second adds one more (2 -> 3). Counting only first tries left it at 1."""
    with FakeLogsInsightsServer(engine=raw_events_engine, faults=Faults(limit_exceeded_first_n=2)) as srv:
        srv.put_events(GROUP, events(20, 1))
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config(max_concurrency=4, initial_concurrency=2))
        results = runner.run("fields @message", [GROUP], [Window(T0, T0 + 9), Window(T0 + 10, T0 + 19)])
        assert sum(len(r.rows) for r in results) == 20
        assert srv.limit_exceeded == 2 and srv.count("StartQuery") == 4
        report = runner.report()
        assert report["quota_collisions"] == 2 and report["final_concurrency_limit"] == 3


class _SleepClock:
    """One clock for the runner and the fake server, advanced only by the runner's sleeps (which do not sleep): the
    query's latency passes when the runner has slept that long, so the poll times are exact whatever the machine's
    load adds to the loopback round trips."""

    def __init__(self) -> None:
        self.now, self.slept = 0.0, []

    def clock(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s


def test_a_first_poll_that_came_early_is_followed_by_one_at_the_typical_duration(logs_client, fast_config):
    """Three queries took 1.5 s: the next is polled first at 0.9 x 1.5 = 1.35 s (still running: the server needs
    1.5 s), then at 1.5 s, 0.15 s later, and found complete. The quarter rule waited max(0.1, 1.35 / 4) = 0.3375 s."""
    from collector.cloudwatch import PollSchedule

    t = _SleepClock()
    with FakeLogsInsightsServer(engine=raw_events_engine, latency_s=1.5, monotonic=t.clock) as srv:
        srv.put_events(GROUP, events(10, 1))
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config(poll=PollSchedule(0.1, 1.5, 5.0)),
                                    sleep=t.sleep, clock=t.clock)
        for _ in range(3):
            runner.durations.add(1.5)
        [res] = runner.run("fields @message", [GROUP], [Window(T0, T0 + 9)])
        assert len(res.rows) == 10
        assert t.slept == [pytest.approx(1.35), pytest.approx(0.15)] and srv.count("GetQueryResults") == 2


def test_before_any_estimate_a_query_is_polled_on_the_schedule(logs_client, fast_config):
    """No query completed yet: polls at 0.1 s, then 1.5 x longer each time (0.15, 0.225): sent at 0.1, 0.25 and
    0.475 s, the last after the server's 0.4 s. (The quarter rule re-polled after 0.1 s: 0.1, 0.2, 0.35, 0.575.)"""
    from collector.cloudwatch import PollSchedule

    t = _SleepClock()
    with FakeLogsInsightsServer(engine=raw_events_engine, latency_s=0.4, monotonic=t.clock) as srv:
        srv.put_events(GROUP, events(10, 1))
        runner = LogsInsightsRunner(logs_client(srv.url), fast_config(poll=PollSchedule(0.1, 1.5, 5.0)),
                                    sleep=t.sleep, clock=t.clock)
        [res] = runner.run("fields @message", [GROUP], [Window(T0, T0 + 9)])
        assert len(res.rows) == 10
        assert t.slept == [pytest.approx(0.1), pytest.approx(0.15), pytest.approx(0.225)]
        assert srv.count("GetQueryResults") == 3
