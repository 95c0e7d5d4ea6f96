"""Benchmark: a 24-hour Logs Insights collection in 96 sub-windows (15 minutes each), against the local fake Logs
Insights server with a fixed simulated latency per query, side by side with the sequential
"start, then poll every second until Complete/Failed/Cancelled" loop of awswrangler's ``cloudwatch.read_logs``.

All times are scaled by ``--scale`` (default 0.1) so the run takes seconds, not minutes: a simulated query latency of
2.0 s becomes 0.2 s, the baseline's 1 s poll becomes 0.1 s, and our poll schedule (0.5 s x1.5 up to 5 s), deadline and
GetQueryResults rate limit (5/s) are scaled the same way. Ratios are unaffected by the scale as long as HTTP
round trips (~1-2 ms on loopback) stay small next to the scaled times.

    .venv/bin/python benchmarks/cloudwatch_bench.py [--latency 2.0] [--scale 0.1] [--windows 96]

Prints wall time, API calls per operation and rows for: ours (concurrency 5, default), ours (concurrency 1), the
awswrangler-style loop polling every 1 s (as the brief describes it) and every 0.2 s (the delay in the awswrangler
source we read), and the speed-up ratios. Correctness is checked: every run must return every event exactly once.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import boto3
from botocore.config import Config

from collector.cloudwatch import Backoff, LogsInsightsRunner, PollSchedule, RunnerConfig, Window
from collector.cloudwatch.runner import restrict_to_window
from collector.cloudwatch.windows import plan_windows
from tests.support.fake_logs_insights import FakeLogsInsightsServer
from tests.support.fake_logs_insights_engines import raw_events_engine

T0 = 1_767_571_200  # 2026-01-05 00:00:00 UTC
GROUP = "/aws/lambda/bench"
QUERY = "fields @timestamp, @message | sort @timestamp asc"


def client(url: str):
    return boto3.client("logs", endpoint_url=url, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing",
                        config=Config(retries={"total_max_attempts": 1}, max_pool_connections=32))


def baseline(url: str, windows: list[Window], poll_s: float) -> tuple[float, Counter, int]:
    """awswrangler.cloudwatch.read_logs per window: start_query, get_query_results, then sleep(poll) + get until the
    status is Complete, Failed or Cancelled (Timeout/Unknown would loop forever there). Sequential."""
    logs = client(url)
    calls: Counter = Counter()
    rows = 0
    t = time.perf_counter()
    for w in windows:
        # same exact-bounds query as ours, so both return the same rows
        qid = logs.start_query(logGroupNames=[GROUP], startTime=w.start, endTime=w.end + 1,
                               queryString=restrict_to_window(QUERY, w), limit=10_000)["queryId"]
        calls["StartQuery"] += 1
        resp = logs.get_query_results(queryId=qid)
        calls["GetQueryResults"] += 1
        while resp["status"] not in ("Complete", "Failed", "Cancelled"):
            time.sleep(poll_s)
            resp = logs.get_query_results(queryId=qid)
            calls["GetQueryResults"] += 1
        rows += len(resp["results"])
    return time.perf_counter() - t, calls, rows


def ours(url: str, windows: list[Window], concurrency: int, scale: float) -> tuple[float, Counter, int]:
    cfg = RunnerConfig(concurrency=concurrency, deadline_s=900 * scale,
                       poll=PollSchedule(0.5 * scale, 1.5, 5.0 * scale),
                       backoff=Backoff(0.5 * scale, 20 * scale), max_polls_per_s=5.0 / scale)
    runner = LogsInsightsRunner(client(url), cfg)
    t = time.perf_counter()
    results = runner.run(QUERY, [GROUP], windows)
    elapsed = time.perf_counter() - t
    assert all(r.status == "complete" for r in results)
    return elapsed, runner.api_calls, sum(len(r.rows) for r in results)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=2.0, help="simulated query latency, unscaled seconds")
    ap.add_argument("--scale", type=float, default=0.1, help="time scale applied to latency, polls and limits")
    ap.add_argument("--windows", type=int, default=96, help="sub-windows over 24 hours")
    args = ap.parse_args()
    window_s = 86400 // args.windows
    windows = plan_windows(T0, T0 + 86400 - 1, window_s)
    events = [{"timestamp": (T0 + 60 * i) * 1000 + (i % 1000), "message": f"e{i}"} for i in range(1440)]
    with FakeLogsInsightsServer(latency_s=args.latency * args.scale, engine=raw_events_engine) as srv:
        srv.put_events(GROUP, events)
        runs = [
            ("ours, concurrency 5 (default)", lambda: ours(srv.url, windows, 5, args.scale)),
            ("ours, concurrency 1", lambda: ours(srv.url, windows, 1, args.scale)),
            ("awswrangler-style, poll 1 s", lambda: baseline(srv.url, windows, 1.0 * args.scale)),
            ("awswrangler-style, poll 0.2 s", lambda: baseline(srv.url, windows, 0.2 * args.scale)),
        ]
        out = []
        for name, fn in runs:
            elapsed, calls, rows = fn()
            assert rows == len(events), (name, rows)  # every event exactly once
            out.append((name, elapsed, calls, rows))
    print(f"24 h in {len(windows)} windows of {window_s // 60} min; simulated latency {args.latency:.1f} s/query; "
          f"time scale {args.scale} (real-time equivalents below = measured / scale); cpus={os.cpu_count()}")
    print(f"{'run':32} {'wall s':>8} {'real-time eq. s':>16} {'StartQuery':>11} {'GetQueryResults':>16} {'rows':>6}")
    for name, elapsed, calls, rows in out:
        print(f"{name:32} {elapsed:8.2f} {elapsed / args.scale:16.1f} {calls['StartQuery']:11d} "
              f"{calls['GetQueryResults']:16d} {rows:6d}")
    ours5 = out[0][1]
    for name, elapsed, _, _ in out[1:]:
        print(f"speed-up of ours (concurrency 5) vs {name}: {elapsed / ours5:.1f}x")


if __name__ == "__main__":
    main()
