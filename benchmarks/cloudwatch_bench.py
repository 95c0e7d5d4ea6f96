"""Benchmark of ``collect cloudwatch`` against the local fake Logs Insights server: speed at scale, bytes per collection.

Speed (one 24-hour day in 96 windows of 15 minutes, a fixed simulated latency per query): the runner side by side
with the sequential "start, then poll every second until Complete/Failed/Cancelled" loop of awswrangler's
``cloudwatch.read_logs``, on an account whose concurrent-query quota is 30 (StartQuery API reference) and enforces
StartQuery and GetQueryResults at 10 calls per second (CloudWatch Logs quotas page), under two loads of other
clients: a steady one holding 10 of the 30 slots, and a changing one (none for 5 s, 25 of 30 for the next 10 s, then
10). Variants, in an order rotated every round (``--repeat``; medians and per-round ratios): ``adaptive`` (this
collector's defaults: up to 15 queries, growing from 2, halving on quota collisions, call rates under the documented
10 TPS), ``fixed 5`` (the same runner held at 5 queries, the previous default) and ``poll loop``; then the floor
(``floor_s``, computed): a scheduler that knew the other clients' schedule and saw each query end at once, under the
same quota, at most 15 queries and StartQuery's 10 calls/s. Every run must return every event exactly once. All
times are scaled by ``--scale`` (default 0.2: 2 s of latency become 0.4 s, 10 calls/s become 50/s, on the server
and in the runner alike) so a round takes seconds; ratios do not depend on the scale while loopback round trips stay
small next to the scaled times (about 1 ms per call on the fake server).

Bytes (what a collection is billed): the standard tables over a 24-hour day, collected once per way, on two fleets of
real input shapes: ``demo`` (the demo fleet's log groups, written by the real emitter through the demo's handlers:
START/END/REPORT lines, emitter records and EMF documents, plus a Powertools function and an aws-embedded-metrics
function from ../shared/samples), and ``demo + app logs`` (the same, with each demo function also writing the real
application lines of ../shared/samples/powertools-real.jsonl and lambda-text-format.log, ``--app-log-ratio`` times the
bytes of its emitter records: the common case where the emitter's records are a small share of a function's logs).
Ways: ``separate queries`` (each standard query on its own: the collector before the shared scan), ``shared scan``,
each without and with the proposed index policy (schema_version, outcome, idempotency_key on every log group, in force
before the day), and the shared scan of the eight tables that read only emitter records (all but invocations and
library_signals, which need every event). Printed per way: bytes scanned, as a multiple of one scan of the emitter
records (the floor: the bytes of the records carrying ``schema_version``) and of all bytes, and USD at 0.005 per GB.
The tables of every way must be identical.

    .venv/bin/python benchmarks/cloudwatch_bench.py [--repeat 3] [--scale 0.1] [--events 3000] [--skip-speed]
"""

from __future__ import annotations

import argparse
import heapq
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import boto3
from botocore.config import Config

from collector.cloudwatch import Backoff, LogsInsightsRunner, PollSchedule, RunnerConfig, Window
from collector.cloudwatch.constants import DEFAULT_MAX_CONCURRENCY, GET_QUERY_RESULTS_TPS, START_QUERY_TPS
from collector.cloudwatch.runner import restrict_to_window
from collector.cloudwatch.windows import plan_windows
from tests.support.fake_logs_insights import FakeLogsInsightsServer, Faults
from tests.support.fake_logs_insights_engines import raw_events_engine

T0 = 1_767_571_200  # 2026-01-05 00:00:00 UTC
GROUP = "/aws/lambda/bench"
QUERY = "fields @timestamp, @message | sort @timestamp asc"
QUOTA = 30
SAMPLES = ROOT.parent / "shared" / "samples"


def client(url: str):
    return boto3.client("logs", endpoint_url=url, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing",
                        config=Config(retries={"total_max_attempts": 1}, max_pool_connections=32))


# ---------------------------------------------------------------------------- speed
def poll_loop(url: str, windows: list[Window], poll_s: float) -> tuple[int, Counter, dict]:
    """awswrangler.cloudwatch.read_logs per window: start_query, get_query_results, then sleep(poll) + get until the
    status is Complete, Failed or Cancelled. Sequential; a LimitExceededException or throttled call is retried after
    one poll interval (the loop itself has no retry: without it a busy account would end the run)."""
    logs = client(url)
    calls: Counter = Counter()
    rows = 0

    def call(op: str, **kw):
        while True:
            calls[op] += 1
            try:
                return getattr(logs, op)(**kw)
            except logs.exceptions.LimitExceededException:
                time.sleep(poll_s)
            except Exception as exc:  # ThrottlingException has no modelled class
                if "Throttling" not in str(exc):
                    raise
                time.sleep(poll_s)

    for w in windows:
        # same exact-bounds query as ours, so both return the same rows
        qid = call("start_query", logGroupNames=[GROUP], startTime=w.start, endTime=w.end + 1,
                   queryString=restrict_to_window(QUERY, w), limit=10_000)["queryId"]
        resp = call("get_query_results", queryId=qid)
        while resp["status"] not in ("Complete", "Failed", "Cancelled"):
            time.sleep(poll_s)
            resp = call("get_query_results", queryId=qid)
        rows += len(resp["results"])
    return rows, Counter({"StartQuery": calls["start_query"], "GetQueryResults": calls["get_query_results"]}), {}


def ours(url: str, windows: list[Window], scale: float, fixed: int | None) -> tuple[int, Counter, dict]:
    cfg = RunnerConfig(deadline_s=900 * scale, poll=PollSchedule(0.5 * scale, 1.5, 5.0 * scale),
                       backoff=Backoff(0.5 * scale, 20 * scale, 12),
                       max_starts_per_s=START_QUERY_TPS / scale, max_polls_per_s=GET_QUERY_RESULTS_TPS / scale,
                       **({"max_concurrency": fixed, "initial_concurrency": fixed} if fixed else {}))
    runner = LogsInsightsRunner(client(url), cfg)
    results = runner.run(QUERY, [GROUP], windows)
    assert all(r.status == "complete" for r in results)
    return sum(len(r.rows) for r in results), runner.api_calls, runner.report()


class Held:
    """Slots of the quota other clients hold, by real-time seconds since the server started (picklable: the server
    runs in its own process). ``steps``: ((until real-time s, held), ...); the last ``held`` holds afterwards."""

    def __init__(self, scale: float, steps: tuple[tuple[float, int], ...], after: int) -> None:
        self.scale, self.steps, self.after = scale, steps, after

    def __call__(self, t: float) -> int:
        for until, held in self.steps:
            if t < until * self.scale:
                return held
        return self.after


def floor_s(held: Held, latency_s: float, n: int, cap: int = DEFAULT_MAX_CONCURRENCY, quota: int = QUOTA,
            starts_per_s: float = START_QUERY_TPS) -> float:
    """The floor (real-time s): ``n`` queries of ``latency_s`` each, started by a scheduler that knows when the other
    clients' slots free up, starts one whenever the quota, ``cap`` and the StartQuery rate allow (the fake server's
    token bucket: one second of calls, full at first) and learns the moment each query ends (no round trip, no early
    or late poll). Greedy is optimal here: starting a query never delays another."""
    changes = [until for until, _ in held.steps]
    ends: list[float] = []
    t, tokens, last = 0.0, starts_per_s, 0.0
    for _ in range(n):
        while True:
            while ends and ends[0] <= t:
                heapq.heappop(ends)
            now_tokens = min(starts_per_s, tokens + (t - last) * starts_per_s)
            if now_tokens < 1 - 1e-9:  # (the tolerance: t + wait can round to just short of a whole token)
                t += (1 - now_tokens) / starts_per_s
            elif len(ends) < cap and len(ends) + held(t * held.scale) < quota:
                break
            else:
                t = min(ends[:1] + [c for c in changes if c > t])  # the next moment a slot may free
        tokens, last = now_tokens - 1, t
        heapq.heappush(ends, t + latency_s)
    return max(ends)


def _serve(conn, latency_s: float, faults: Faults, events: list[dict]) -> None:
    """Child process: a fake server with ``faults``; sends its URL, then its counters when told to stop."""
    with FakeLogsInsightsServer(latency_s=latency_s, engine=raw_events_engine, faults=faults) as srv:
        srv.put_events(GROUP, events)
        conn.send(srv.url)
        conn.recv()
        conn.send({"max_in_flight": srv.max_in_flight, "throttled": sum(srv.throttled.values()),
                   "limit_exceeded": srv.limit_exceeded})


def speed(args: argparse.Namespace) -> None:
    import multiprocessing as mp

    scale = args.scale
    windows = plan_windows(T0, T0 + 86400 - 1, 86400 // args.windows)
    events = [{"timestamp": (T0 + 60 * i) * 1000 + (i % 1000), "message": f"e{i}"} for i in range(1440)]
    loads = {  # real-time seconds: a quiet start, a burst of dashboards, then a steady load
        "others hold 10 of 30": Held(scale, (), 10),
        "others hold 0, then 25 of 30, then 10": Held(scale, ((5.0, 0), (15.0, 25)), 10),
    }
    variants: dict[str, Callable[[str], tuple[int, Counter, dict]]] = {
        "adaptive (max 15)": lambda url: ours(url, windows, scale, None),
        "fixed 5": lambda url: ours(url, windows, scale, 5),
        "poll loop, 1 s": lambda url: poll_loop(url, windows, 1.0 * scale),
    }
    names = list(variants)
    ctx = mp.get_context("spawn")
    for load_name, held in loads.items():
        walls: dict[str, list[float]] = {n: [] for n in names}
        ratios: dict[str, list[float]] = {n: [] for n in names}
        info: dict[str, tuple[Counter, dict, dict]] = {}
        for r in range(args.repeat):
            order = names[r % len(names):] + names[:r % len(names)]
            this_round: dict[str, float] = {}
            for name in order:
                faults = Faults(account_quota=QUOTA, held_by_others=held,
                                tps={"StartQuery": START_QUERY_TPS / scale, "GetQueryResults": GET_QUERY_RESULTS_TPS / scale})
                parent, child = ctx.Pipe()
                proc = ctx.Process(target=_serve, args=(child, args.latency * scale, faults, events), daemon=True)
                proc.start()
                try:
                    url = parent.recv()
                    t = time.perf_counter()
                    rows, calls, report = variants[name](url)
                    this_round[name] = time.perf_counter() - t
                    parent.send("stop")
                    server = parent.recv()
                finally:
                    proc.join(timeout=30)
                assert rows == len(events), (name, rows)  # every event exactly once
                info[name] = (calls, report, server)
                walls[name].append(this_round[name])
            for name in names:
                ratios[name].append(this_round["poll loop, 1 s"] / this_round[name])
        print(f"\n{load_name}: 24 h in {len(windows)} windows, {args.latency:.1f} s per query, quota {QUOTA}, "
              f"StartQuery/GetQueryResults {START_QUERY_TPS:.0f}/s each; time scale {scale}; {args.repeat} round(s)")
        print(f"{'variant':20} {'median s':>9} {'real-time s':>12} {'x poll loop':>12} {'StartQuery':>11} "
              f"{'GetQueryRes.':>13} {'peak':>5} {'collisions':>11} {'throttled':>10}")
        for name in names:
            calls, report, server = info[name]
            med = statistics.median(walls[name])
            print(f"{name:20} {med:9.2f} {med / scale:12.1f} {statistics.median(ratios[name]):11.1f}x "
                  f"{calls['StartQuery']:11d} {calls['GetQueryResults']:13d} {server['max_in_flight']:5d} "
                  f"{server['limit_exceeded']:11d} {server['throttled']:10d}")
        floor = floor_s(held, args.latency, len(windows))
        loop = statistics.median(walls["poll loop, 1 s"]) / scale
        print(f"{'floor (see floor_s)':20} {floor * scale:9.2f} {floor:12.1f} {loop / floor:11.1f}x "
              f"{len(windows):11d} {len(windows):13d} {min(DEFAULT_MAX_CONCURRENCY, len(windows)):5d} {0:11d} {0:10d}")
        adaptive = ratios["adaptive (max 15)"]
        print(f"adaptive vs poll loop, per-round ratios: {', '.join(f'{x:.1f}x' for x in adaptive)} "
              f"(last round's collector report: {info['adaptive (max 15)'][1]})")


# ---------------------------------------------------------------------------- bytes
def _export_events(path: Path) -> list[dict]:
    from tests.support.fake_logs_insights_engines import load_export_lines

    return load_export_lines(path)


def _sample_lines(name: str) -> list[str]:
    return [ln for ln in (SAMPLES / name).read_text(encoding="utf-8").splitlines() if ln.strip()]


def fleets(tmp: Path, events: int, app_ratio: float) -> dict[str, dict[str, list[dict]]]:
    """The two fleets of the module docstring: {fleet: {log group: events}} over the day T0 .. T0 + 24 h."""
    from dashboard.demo import run_demo

    run_demo(tmp / "demo", seed=7, events=events, duration_s=86400, start_ms=T0 * 1000)
    demo = {f"/aws/lambda/{p.stem}": _export_events(p) for p in sorted((tmp / "demo" / "logs").glob("*.log"))}
    # real Powertools and aws-embedded-metrics functions, replayed across the day
    for stem, src in (("powertools-fn", "powertools-real.jsonl"), ("emf-fn", "emf-library-real.jsonl")):
        lines = _sample_lines(src)
        demo[f"/aws/lambda/{stem}"] = [{"timestamp": (T0 + 30 + i * 86000 // (len(lines) * 8)) * 1000,
                                        "message": lines[i % len(lines)]} for i in range(len(lines) * 8)]
    app = [ln for ln in _sample_lines("powertools-real.jsonl") if ln.startswith("{") and '"_aws"' not in ln]
    app += [ln for ln in _sample_lines("lambda-text-format.log") if ln.startswith("[INFO]")]
    noisy = {g: list(evs) for g, evs in demo.items()}
    for g, evs in noisy.items():
        emitter = sum(len(e["message"].encode()) for e in evs if '"schema_version"' in e["message"])
        if not emitter:
            continue
        extra, i, t = [], 0, T0 * 1000
        step = 86_400_000 // max(1, int(app_ratio * emitter / (sum(len(a) for a in app) / len(app))))
        while sum(len(e["message"]) for e in extra) < app_ratio * emitter:
            extra.append({"timestamp": t, "message": app[i % len(app)]})
            i, t = i + 1, t + step
        noisy[g] = sorted(evs + extra, key=lambda e: e["timestamp"])
    return {"demo": demo, "demo + app logs": noisy}


def collect_bytes(fleet: dict[str, list[dict]], out: Path, *, combine: bool, index: bool, tables: list[str] | None,
                  scale_poll: float = 0.01) -> tuple[float, dict, float]:
    from collector.cloudwatch.collect import Clients, CollectOptions, collect_cloudwatch
    from collector.cloudwatch.index_policy import INDEX_FIELDS
    from collector.standard_queries import load_standard_queries
    from tests.support.fake_logs_insights_engines import InsightsEngine

    with FakeLogsInsightsServer(engine=InsightsEngine()) as srv:
        srv.clock = lambda: T0 + 86400 + 3600
        for g, evs in fleet.items():
            srv.put_events(g, evs)
            if index:
                srv.put_index_policy(g, list(INDEX_FIELDS), at_s=T0 - 86400)
        opts = CollectOptions(since=T0, until=T0 + 86400 - 1, log_group_prefixes=["/aws/lambda/"],
                              queries=load_standard_queries(tables), combine=combine, use_indexes=index,
                              runner=RunnerConfig(poll=PollSchedule(scale_poll, 1.5, 0.05), max_starts_per_s=0,
                                                  max_polls_per_s=0))
        t = time.perf_counter()
        m = collect_cloudwatch(out, opts, clients=Clients(logs=client(srv.url)), now=lambda: T0 + 86400 + 3600)
        wall = time.perf_counter() - t
    assert all(e["status"] == "complete" for e in m["tables"].values()), m["tables"]
    return m["queries"]["this_run"]["stats"]["bytes_scanned"], m, wall


def same_tables(a: Path, b: Path, names: list[str]) -> None:
    import pandas as pd

    for n in names:
        pd.testing.assert_frame_equal(pd.read_parquet(a / "tables" / f"{n}.parquet"),
                                      pd.read_parquet(b / "tables" / f"{n}.parquet"), obj=n)


def bytes_part(args: argparse.Namespace) -> None:
    from collector.tables import TABLES

    emitter_tables = [t for t in TABLES if t not in ("invocations", "library_signals")]
    ways = [("separate queries, no index", True, False, False, None),
            ("separate queries, index policy", True, False, True, None),
            ("shared scan, no index", True, True, False, None),
            ("shared scan, index policy", True, True, True, None),
            ("shared scan, 8 emitter tables, no index", False, True, False, emitter_tables),
            ("shared scan, 8 emitter tables, index policy", False, True, True, emitter_tables)]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for fleet_name, fleet in fleets(tmp, args.events, args.app_log_ratio).items():
            msgs = [e["message"].encode() for evs in fleet.values() for e in evs]
            all_b = sum(len(m) for m in msgs)
            emitter_b = sum(len(m) for m in msgs if b'"schema_version"' in m)
            print(f"\nbytes per collection, fleet '{fleet_name}': {len(fleet)} log groups, {len(msgs):,} events, "
                  f"{all_b / 2**20:.2f} MiB; emitter records {emitter_b / 2**20:.2f} MiB ({emitter_b / all_b:.0%})")
            print(f"{'way':46} {'MiB scanned':>12} {'x emitter':>10} {'x all':>7} {'USD':>9} {'queries':>8} "
                  f"{'wall s':>7}")
            outs: dict[str, Path] = {}
            for i, (name, all_tables, combine, index, tables) in enumerate(ways):
                out = tmp / f"{fleet_name}-{i}"
                b, m, wall = collect_bytes(fleet, out, combine=combine, index=index, tables=tables)
                outs[name] = out
                queries = m["queries"]["this_run"]["api_calls"].get("StartQuery", 0)
                print(f"{name:46} {b / 2**20:12.2f} {b / emitter_b:9.2f}x {b / all_b:6.2f}x "
                      f"{m['queries']['this_run']['cost_usd']:9.6f} {queries:8d} {wall:7.1f}")
            for name in ("separate queries, index policy", "shared scan, no index", "shared scan, index policy"):
                same_tables(outs["separate queries, no index"], outs[name], list(TABLES))
            same_tables(outs["shared scan, no index"], outs["shared scan, 8 emitter tables, index policy"],
                        emitter_tables)
            print("tables identical across the ways (every standard table)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=2.0, help="simulated query latency, unscaled seconds")
    ap.add_argument("--scale", type=float, default=0.2, help="time scale applied to latency, polls and rates")
    ap.add_argument("--windows", type=int, default=96, help="sub-windows over 24 hours")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of the speed runs (order rotated each round)")
    ap.add_argument("--events", type=int, default=3000, help="demo fleet source events over the day")
    ap.add_argument("--app-log-ratio", type=float, default=4.0,
                    help="application log bytes per emitter record byte in the 'demo + app logs' fleet")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--skip-bytes", action="store_true")
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"cloudwatch_bench {datetime.now():%Y-%m-%d %H:%M}; cpus={os.cpu_count()}; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if not args.skip_speed:
        speed(args)
    if not args.skip_bytes:
        bytes_part(args)
    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
