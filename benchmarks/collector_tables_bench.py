"""Standard tables benchmark: each table's time and CPU as ``collect local`` writes it, this tree against the tree of
``--before-commit``, interleaved, over one ingested events database.

Generates N events with ``collector_bench.generate`` (the same generator and mix as the collector benchmark),
ingests them once with this tree's ``collect_local`` (that run's tables are not measured), and then, for each round,
runs ``local_tables.write_standard_tables`` one table at a time in a fresh process per tree (before, after, before,
...), on its own copy of the database, at the memory limit the tables phase runs with. CPU is user + system of the
whole process over the table (DuckDB's threads included): on a shared machine it moves far less than wall time.
Prints per table the medians and the median of the per-round after/before CPU ratios, and the totals.

Run: ``.venv/bin/python benchmarks/collector_tables_bench.py [--events 1000000] [--rounds 5]
[--before-commit 49fddf4] [--tables stuck_keys,trail] [--data DIR]`` (``--data``: keep the generated file and the
ingested database there and reuse them on the next run).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from collector_bench import before_tree, generate

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
import collector.local_tables as lt
import collector.collect as collect
from collector.collect import load_standard_queries
from collector.ingest import EventStore
from collector.insights.sql import harden_connection
from collector.tables import TABLES

def cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime

store = EventStore(sys.argv[2], memory_limit=sys.argv[4])
# the table phase's settings as collect_local makes them (a tree before _prepare_tables_phase: its memory limit only)
(getattr(collect, "_prepare_tables_phase", None) or collect._limit_tables_memory)(store.connection)
harden_connection(store.connection)
queries = load_standard_queries()
out = Path(sys.argv[3])
every = dict(TABLES)
result = {}
for name in sys.argv[5].split(","):
    lt.TABLES = {name: every[name]}
    c, t = cpu(), time.perf_counter()
    info, _ = lt.write_standard_tables(store, out, queries, None, None)
    result[name] = {"wall": time.perf_counter() - t, "cpu": cpu() - c, "rows": info[name]["rows"]}
print(json.dumps(result))
"""


def _run(tree: Path, db: Path, out: Path, memory: str, tables: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(tree), str(db), str(out), memory, ",".join(tables)],
                          capture_output=True, text=True, cwd=str(tree), check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--before-commit", default="49fddf4")
    ap.add_argument("--tables", default="", help="comma-separated tables (default: all)")
    ap.add_argument("--memory-limit", default="512MB", help="the collection's limit (tables run at its fraction)")
    ap.add_argument("--data", default="", help="directory keeping the generated file and ingested database")
    args = ap.parse_args()
    from collector.collect import collect_local
    from collector.tables import TABLES

    tables = [t for t in args.tables.split(",") if t] or list(TABLES)
    tmp = Path(tempfile.mkdtemp(prefix="idemwatch-tables-bench-"))
    data = Path(args.data) if args.data else tmp
    data.mkdir(parents=True, exist_ok=True)
    source = data / f"orders-{args.events}.jsonl"
    db = data / f"events-{args.events}.duckdb"
    try:
        if not db.is_file():
            if not source.is_file():
                print(f"generated {generate(source, args.events, 'jsonl'):,} events", flush=True)
            collect_local([source], tmp / "ingest", memory_limit=args.memory_limit)
            shutil.copyfile(tmp / "ingest" / "events.duckdb", db)
        trees = {"before": before_tree(args.before_commit, tmp / "before-tree"), "after": ROOT}
        copies = {}
        for label in trees:  # each tree its own copy: an older tree may upgrade the layout in place
            copies[label] = tmp / f"{label}.duckdb"
            shutil.copyfile(db, copies[label])
        runs: dict[str, list[dict]] = {k: [] for k in trees}
        for r in range(args.rounds):
            for label, tree in trees.items():
                runs[label].append(_run(tree, copies[label], tmp / f"out-{label}", args.memory_limit, tables))
            print(f"round {r + 1}/{args.rounds} done", flush=True)
        print(f"\n{args.events:,} events, {args.rounds} interleaved rounds, before = {args.before_commit}; "
              "cpu = user + system seconds of the process (DuckDB threads included)")
        print(f"{'table':18s} {'rows':>9s} {'before cpu':>11s} {'after cpu':>10s} {'after/before':>13s} "
              f"{'before wall':>12s} {'after wall':>11s}")
        tot = {"before": 0.0, "after": 0.0}
        for name in tables:
            med = {k: statistics.median(x[name]["cpu"] for x in v) for k, v in runs.items()}
            wall = {k: statistics.median(x[name]["wall"] for x in v) for k, v in runs.items()}
            ratio = statistics.median(a[name]["cpu"] / b[name]["cpu"] for a, b in zip(runs["after"], runs["before"]))
            for k in tot:
                tot[k] += med[k]
            print(f"{name:18s} {runs['after'][0][name]['rows']:>9,} {med['before']:10.3f}s {med['after']:9.3f}s "
                  f"{ratio:12.2f}x {wall['before']:11.3f}s {wall['after']:10.3f}s")
        print(f"{'all':18s} {'':>9s} {tot['before']:10.3f}s {tot['after']:9.3f}s {tot['after'] / tot['before']:12.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
