"""Demo fleet benchmark: the default ``idemwatch demo`` size against its one-minute budget, in one run.

Prints, side by side:
1. ``run_demo`` at the default size (simulated events, log lines, seconds) and, as the named
   alternative, the same number of emitter outcome records written by a bare ``Emitter`` into a
   ``DiscardSink`` (no simulator, no store): the ratio is the simulator's overhead over the
   emitter's own cost;
2. ``collect_local`` over the demo's logs (when the collector is installed);
3. simulate + collect against the 60 s budget the README promises on a 2-core machine.

Run: ``.venv/bin/python benchmarks/demo_bench.py [--events N]``
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def _bare_emitter(records: int) -> float:
    from emitter import DiscardSink, Emitter

    em = Emitter(service="shop", sink=DiscardSink())
    t0 = time.perf_counter()
    done = 0

    @em.handler(operation="ProcessOrders")
    def handler(event, context):
        nonlocal done
        for rec in em.records(event):
            em.claimed(rec, key=f"k-{done}", expires_at_ms=1)
            em.succeeded(rec, key=f"k-{done}")
            done += 3

    event = {"Records": [{"messageId": "m", "body": "{}", "eventSource": "aws:sqs",
                          "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "0"}}]}
    while done < records:
        handler(event, None)
    return time.perf_counter() - t0


def main() -> None:
    from dashboard.demo import run_demo
    from dashboard.demo.constants import DEFAULT_DURATION_S, DEFAULT_EVENTS

    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=DEFAULT_EVENTS)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        t0 = time.perf_counter()
        truth = run_demo(out, seed=7, events=args.events, duration_s=DEFAULT_DURATION_S)
        sim_s = time.perf_counter() - t0
        lines = sum(f.log_lines for f in truth.functions.values())
        outcome_records = sum(sum(f.outcomes.values()) for f in truth.functions.values())
        invocations = sum(f.invocations for f in truth.functions.values())
        bare_s = _bare_emitter(outcome_records)
        print(f"run_demo: {args.events:,} source events, {invocations:,} invocations, {lines:,} log lines, "
              f"{outcome_records:,} outcome records in {sim_s:.2f} s ({lines / sim_s:,.0f} lines/s)")
        print(f"bare Emitter -> DiscardSink, {outcome_records:,} outcome records: {bare_s:.2f} s "
              f"(simulator / bare emitter = {sim_s / bare_s:.1f}x)")
        try:
            from collector.collect import collect_local
        except ImportError as exc:
            print(f"collect_local: not available ({exc})")
            collect_s = None
        else:
            t0 = time.perf_counter()
            collect_local([out / "logs"], out)
            collect_s = time.perf_counter() - t0
            print(f"collect_local: {collect_s:.2f} s ({lines / collect_s:,.0f} lines/s)")
        total = sim_s + (collect_s or 0.0)
        print(f"simulate + collect: {total:.2f} s vs the 60 s budget = {total / 60:.2f}x of budget")


if __name__ == "__main__":
    main()
