"""Diagnose benchmark: ``idemwatch diagnose`` over a collected data directory beside ``collect local``'s table phase
over the same events, as ratios from one interleaved run ([diagnose] target: diagnose within 2x the table phase at
1M events).

Input shapes (each about ``--events`` log events, collected once with ``collect_local``; ``--data`` keeps them):

- ``bench``: ``collector_bench.generate``, the collector benchmark's mix (START/END/REPORT, emitter records with
  random keys and attempts, EMF documents): many keys completed twice, so IW104/IW105 rows and example lookups;
- ``demo``: the demo fleet's real handler traces (four functions, default faults), scaled to the size (events and
  window grow together, so the rates stay the demo's);
- ``injected``: the same with every anti-pattern built in (``--inject all``; filter-log-events JSON with log
  streams): seven findings, each with its example lookup.

Per round, in a fresh process each and in alternating order (``table phase``, ``diagnose``, then the other way),
every shape runs:

- ``tables``: what ``collect_local`` does after the ingest: ``_retain_block_memory``, ``_prepare_tables_phase``,
  ``TABLE_WORKERS`` cursors, hardening, ``write_standard_tables`` (every standard table to Parquet in a scratch
  folder) over the shape's ``events.duckdb``;
- ``diagnose``: ``open_data_dir`` (read-only) + ``diagnose`` (every rule, examples) + close.

Prints wall and CPU time (user + system of the process, DuckDB's threads included) per shape, the medians over rounds
and the median of each round's diagnose/tables ratio; the load average before and after (the machine is shared).

Run: ``.venv/bin/python benchmarks/diagnose_bench.py [--events 1000000] [--rounds 3] [--shapes bench,demo,injected]
[--data /tmp/diagnose-bench]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

LINES_PER_DEMO_EVENT = 6.6
"""Log events the demo writes per source event (default run: 66,000 lines for 10,000 events)."""
DEMO_EVENTS_PER_HOUR = 10_000 / 3
"""The default demo's rate (10,000 source events over 3 h), kept when it is scaled."""

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
kind, data, scratch = sys.argv[2], sys.argv[3], sys.argv[4]
from pathlib import Path

def cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime

info = {}
if kind == "tables":
    import collector.collect as collect
    from collector.ingest import EventStore
    from collector.insights.sql import harden_connection
    from collector.local_tables import TABLE_WORKERS, write_standard_tables
    from collector.standard_queries import load_standard_queries
    queries = load_standard_queries()
    store = EventStore(Path(data) / collect.EVENTS_DB, memory_limit=collect.DEFAULT_MEMORY_LIMIT)
    collect._retain_block_memory(store.connection)
    c, t = cpu(), time.perf_counter()
    collect._prepare_tables_phase(store.connection)
    workers = store.cursors(TABLE_WORKERS)
    harden_connection(store.connection)
    tables, _ = write_standard_tables(store, Path(scratch), queries, None, None, workers=workers)
    info["rows"] = sum(t_["rows"] for t_ in tables.values())
else:
    from alarms.diagnose.evaluate import diagnose
    from alarms.diagnose.sources import open_data_dir
    c, t = cpu(), time.perf_counter()
    source = open_data_dir(Path(data))
    try:
        findings = diagnose(source)
    finally:
        source.close()
    info["found"] = sorted(f"{f.resource}: {f.rule}" for f in findings if f.status.value == "fail")
info["wall"] = time.perf_counter() - t
info["cpu"] = cpu() - c
print(json.dumps(info))
"""


def prepare(shape: str, n: int, data: Path) -> Path:
    """The collected data directory of ``shape`` at about ``n`` events (made once; reused when present)."""
    out = data / f"{shape}-{n}"
    if (out / "manifest.json").is_file():
        return out
    from collector.collect import collect_local

    out.mkdir(parents=True, exist_ok=True)
    if shape == "bench":
        from collector_bench import generate

        logs = out / "logs"
        logs.mkdir(exist_ok=True)
        generate(logs / "orders-bench.log", n, "export")
    else:
        from dashboard.demo import run_demo
        from dashboard.demo.faults import AntiPattern

        events = max(1_000, round(n / LINES_PER_DEMO_EVENT))
        run_demo(out, seed=7, events=events, duration_s=max(3_600, round(events / DEMO_EVENTS_PER_HOUR * 3600)),
                 start_ms=1_767_600_000_000, anti_patterns=list(AntiPattern) if shape == "injected" else ())
    manifest = collect_local([out / "logs"], out)
    print(f"  {shape}: {manifest['ingest']['events']:,} events collected into {out}", flush=True)
    return out


def child(kind: str, data: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="diagnose-bench-") as scratch:
        p = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), kind, str(data), scratch],
                           capture_output=True, text=True, check=False,
                           env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    if p.returncode != 0:
        raise SystemExit(f"{kind} over {data} failed:\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shapes", default="bench,demo,injected")
    ap.add_argument("--data", type=Path, default=None, help="Keep the collected inputs here and reuse them.")
    args = ap.parse_args()
    keep = args.data is not None
    data = args.data or Path(tempfile.mkdtemp(prefix="diagnose-bench-"))
    data.mkdir(parents=True, exist_ok=True)
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    print(f"preparing {', '.join(shapes)} at {args.events:,} events (load average {load()})", flush=True)
    dirs = {s: prepare(s, args.events, data) for s in shapes}
    runs: dict[tuple[str, str], list[dict]] = {(s, k): [] for s in shapes for k in ("tables", "diagnose")}
    print(f"running {args.rounds} interleaved rounds (load average {load()})", flush=True)
    for r in range(args.rounds):
        for s in shapes:
            for kind in (("tables", "diagnose") if r % 2 == 0 else ("diagnose", "tables")):
                res = child(kind, dirs[s])
                runs[(s, kind)].append(res)
                print(f"  round {r + 1} {s:8s} {kind:8s} wall {res['wall']:6.2f} s  cpu {res['cpu']:6.2f} s",
                      flush=True)
    print(f"\nload average after: {load()}  (2 shared cores: medians and ratios from the same rounds)")
    print(f"{'shape':9s} {'tables wall':>12s} {'diagnose wall':>14s} {'ratio (median of rounds)':>26s} "
          f"{'tables cpu':>11s} {'diagnose cpu':>13s} {'cpu ratio':>10s}  found")
    for s in shapes:
        t, d = runs[(s, "tables")], runs[(s, "diagnose")]
        ratio = statistics.median(b["wall"] / a["wall"] for a, b in zip(t, d, strict=True))
        cpu_ratio = statistics.median(b["cpu"] / a["cpu"] for a, b in zip(t, d, strict=True))
        wall_t, wall_d = statistics.median(x["wall"] for x in t), statistics.median(x["wall"] for x in d)
        print(f"{s:9s} {wall_t:10.2f} s {wall_d:12.2f} s"
              f" {ratio:25.2f}x {statistics.median(x['cpu'] for x in t):9.2f} s"
              f" {statistics.median(x['cpu'] for x in d):11.2f} s {cpu_ratio:9.2f}x  {len(d[-1]['found'])} "
              f"({', '.join(d[-1]['found'][:8])}{', ...' if len(d[-1]['found']) > 8 else ''})")
    if not keep:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
