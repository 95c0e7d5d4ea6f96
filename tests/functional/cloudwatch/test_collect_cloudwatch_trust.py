"""A CloudWatch collection that failed says so: non-zero exit when a table is incomplete (``--allow-partial``
accepts it), and ``--deadline`` bounds the whole run, stopping queries still running (fake Logs Insights server over
real HTTP on 127.0.0.1, queries that fail or never finish)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cloudwatch import Backoff, PollSchedule, RunnerConfig
from collector.cloudwatch.commands import cloudwatch, incomplete_tables
from collector.cloudwatch.runner import DEADLINE_EXCEEDED, OVERALL_DEADLINE, LogsInsightsRunner
from collector.cloudwatch.windows import Window
from tests.support.fake_logs_insights import FakeLogsInsightsServer, Faults
from tests.support.fake_logs_insights_engines import format_ts, trail_engine

T0 = 1_767_607_200  # 2026-01-05 10:00:00 UTC
GROUP = "/aws/lambda/orders"
QUERY = "fields @timestamp | filter ispresent(outcome)"  # the trail engine ignores the text


def _put(srv: FakeLogsInsightsServer, seconds: int) -> None:
    srv.put_events(GROUP, [{"timestamp": (T0 + i) * 1000, "message": json.dumps(
        {"timestamp": format_ts((T0 + i) * 1000), "outcome": "received", "service": "orders"})}
        for i in range(seconds)])


def _args(tmp_path: Path, srv: FakeLogsInsightsServer, *extra: str) -> list[str]:
    q = tmp_path / "trail.insights"
    q.write_text(QUERY)
    return ["--log-group", GROUP, "--since", str(T0), "--until", str(T0 + 3 * 3600 - 1), "--out", str(tmp_path / "o"),
            "--table", "trail", "--query-file", f"trail={q}", "--endpoint-url", srv.url, "--region", "us-east-1", "--no-progress", *extra]


@pytest.mark.slow  # every query of a collection fails after its retries, then again with --allow-partial
def test_every_query_failed_exits_non_zero_with_one_line_and_allow_partial_accepts(tmp_path):
    with FakeLogsInsightsServer(engine=trail_engine, latency_s=0.0,
                                faults=Faults(terminal_statuses=["Failed"] * 1000)) as srv:
        _put(srv, 3 * 3600)
        res = CliRunner().invoke(cloudwatch, _args(tmp_path, srv, "--query-timeout", "1m"))
        assert res.exit_code == 1, res.output
        last = res.output.strip().splitlines()[-1]
        assert last.startswith("Error: incomplete: trail (failed);") and "--allow-partial" in last
        m = json.loads((tmp_path / "o" / "manifest.json").read_text())
        assert incomplete_tables(m) == {"trail": "failed"}
        res = CliRunner().invoke(cloudwatch, _args(tmp_path, srv, "--allow-partial"))
        assert res.exit_code == 0, res.output


def test_a_complete_collection_exits_zero(tmp_path):
    with FakeLogsInsightsServer(engine=trail_engine, latency_s=0.0) as srv:
        _put(srv, 3 * 3600)
        res = CliRunner().invoke(cloudwatch, _args(tmp_path, srv))
    assert res.exit_code == 0, res.output
    assert incomplete_tables(json.loads((tmp_path / "o" / "manifest.json").read_text())) == {}


def test_deadline_stops_hanging_queries_and_starts_no_more(tmp_path):
    """Every query hangs: with --deadline the run ends, every started query was stopped (StopQuery), and the table
    is reported failed (before: 239 StartQuery/StopQuery pairs over 170 s for one hour; no end for three)."""
    with FakeLogsInsightsServer(engine=trail_engine, faults=Faults(hang_first_n=10**6)) as srv:
        _put(srv, 3 * 3600)
        res = CliRunner().invoke(cloudwatch, _args(tmp_path, srv, "--deadline", "2s", "--concurrency", "2"))
        ops = [op for op, _ in srv.calls]
        stopped_all = all(q.stopped for q in srv.queries.values())
    assert res.exit_code == 1 and "trail (failed)" in res.output.strip().splitlines()[-1]
    assert ops.count("StartQuery") == 2  # the two in flight; the third window is never started
    assert ops.count("StopQuery") == ops.count("StartQuery") and stopped_all
    m = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert m["tables"]["trail"]["windows"]["failed"] == [[T0 + h * 3600, T0 + h * 3600 + 3599] for h in range(3)]
    assert any(OVERALL_DEADLINE in e for e in m["tables"]["trail"]["errors"])


def test_runner_overall_deadline_on_a_simulated_clock(logs_client):
    """Same rule, deterministic time: a clock that advances only when the runner sleeps."""
    now = [0.0]

    def sleep(s: float) -> None:
        now[0] += max(s, 0.001)

    with FakeLogsInsightsServer(engine=trail_engine, faults=Faults(hang_first_n=10**6)) as srv:
        _put(srv, 60)
        cfg = RunnerConfig(max_concurrency=1, deadline_s=900.0, overall_deadline_s=30.0, poll=PollSchedule(1.0, 1.5, 5.0),
                           backoff=Backoff(0.005, 0.02), max_polls_per_s=0, max_starts_per_s=0)
        runner = LogsInsightsRunner(logs_client(srv.url), cfg, sleep=sleep, clock=lambda: now[0])
        res = runner.run(QUERY, [GROUP], [Window(T0, T0 + 59), Window(T0 + 60, T0 + 119)])
    assert [r.status for r in res] == ["failed", "failed"]
    assert [a.status for a in res[0].attempts] == [DEADLINE_EXCEEDED]  # stopped at 30 s, not at its own 900 s
    assert res[1].attempts == [] and res[1].error == f"not started: {OVERALL_DEADLINE}"
    assert runner.api_calls["StartQuery"] == 1 == runner.api_calls["StopQuery"]
    assert 30.0 <= now[0] < 36.0  # simulated seconds: the budget plus at most one poll step
