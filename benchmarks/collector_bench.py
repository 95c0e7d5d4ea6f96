"""Collector benchmark: ``collect local`` (ingest + every standard table written) beside the physical floors, at
several sizes, before and after, as ratios from one interleaved run.

Generates N realistic log events per size (``generate``: one event per line as the Lambda runtime writes them with
the emitter: ``START``, emitter outcome records, the emitter's EMF document, ``END`` and a ``REPORT`` line per
invocation, and on a cold start Powertools Metrics' ``ColdStart`` document, as a handler that also runs Powertools
Metrics with ``capture_cold_start_metric`` writes it).
For each size it runs, each in a fresh process (so peak RSS is that run's own high-water mark; bytecode compiled
beforehand, ``compile_tree``), interleaved, in an order that changes every round (``round_order``):

- ``after``: ``collector.collect.collect_local`` of this tree (on-disk events database, DuckDB memory limit);
- ``before``: the same call from the tree of ``--before-commit`` (default the start commit of [collector-core],
  extracted with ``git archive``); skipped with ``--no-before``;
- ``floor``: DuckDB materialising the contract columns the standard tables filter and group on (``read_json`` with
  14 explicit columns into a table: timestamp, service, operation, event_source, outcome, idempotency key/status,
  attempt, record age, error code/class, request id, event id, expiry): the stricter proxy earlier stops measured
  the [collector-core] target against, after the issue's own measurement (10 such columns);
- ``floor_all``: DuckDB materialising every field the standard queries read (``floor_statements``: the fields come
  from the query texts, ``collector.insights.query_references``), each the cheapest way DuckDB knows: the JSON
  fields by ``read_json`` with typed columns, and ``@message`` (the line, ZSTD as the events table keeps it),
  ``@log``, ``@type`` and the ``REPORT`` numbers by one ``read_csv`` pass into a second table. It adds what
  ``floor`` leaves out (``schema_version``, which every standard query filters on; ``@message``, read by
  library_signals and invocations; trail's ``message``, ``correlation_id``, ``remaining_time_ms``; the ``REPORT``
  fields): what any engine must at least do to answer them, with no line numbers, timestamp rules, counts or
  bookkeeping. This is the floor the [collector-core] issue defines ("DuckDB materialising the same columns the
  standard tables need"); both ratios are printed;
- ``count``: a ``count(*)`` scan of the lines (``read_csv``), the old yardstick: it parses nothing.

``--bomb-mib M`` adds a gzip bomb: one ``.log.gz`` of M MiB of repeated log lines, ingested by ``after`` (and
``before`` with ``--bomb-before``: it needs about 6x M of memory), reporting peak RSS.

With ``--repeat`` above 1 it also prints, for each tree against each floor, the median (and range) over rounds of
that round's ratio (``paired_ratios``): both runs of a round meet the same state of the shared machine, so the paired
median moves less with slow spells than the ratio of the two whole-run medians (the machine slows the short floor
and the long collection by different amounts).

Targets ([collector-core]): after within 4x (goal 3x) of the fair floor (``floor_all``) at 1M; peak at 3M <= peak at 1M + 25% and < 1 GB;
3M/1M time within 3.3x. Run: ``.venv/bin/python benchmarks/collector_bench.py [--sizes 100000,1000000,3000000] [--repeat 3]
[--data-dir /tmp/bench-data]`` (``--repeat``: medians of interleaved rounds; ``--data-dir``: keep and reuse the inputs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from emitter.contract import LogKey

LOG_GROUP = "/aws/lambda/orders-bench"
T0_MS = 1767607200000  # 2026-01-05T10:00:00Z


def _iso(ms: int) -> str:
    s, m = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{m:03d}Z"


def generate(path: Path, n: int, fmt: str, seed: int = 7) -> int:
    """Write ``n`` events to ``path``, one per line (``fmt`` ``"export"``: each after its ``<ISO-8601> `` time, as
    an export-to-S3 object), from ``log_shapes.invocations``; returns ``n``. The other shapes: ``log_shapes``."""
    from log_shapes import invocations

    with open(path, "w", encoding="utf-8", buffering=8 << 20) as out:
        out.writelines(f"{_iso(ts)} {msg}\n" if fmt == "export" else msg + "\n"
                       for ts, _, msg, _ in invocations(n, text=False, seed=seed))
    return n


_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
kind, path, out = sys.argv[2], sys.argv[3], sys.argv[4]
t = time.perf_counter()
info = {}
if kind == "collect":
    from collector.collect import collect_local
    m = collect_local([path], out)
    info["events"] = m["ingest"]["events"]
    info["tables_s"] = sum(t_["query_seconds"] for t_ in m["tables"].values())
    info["by_reason"] = m["ingest"]["by_reason"]
else:
    import duckdb
    con = duckdb.connect(out + ".duckdb")
    con.execute("SET enable_progress_bar = false")  # it would print to stdout on long scans
    if kind in ("floor", "floor_all"):
        for sql, extra in json.loads(sys.argv[5])[kind]:  # $1: the log file, then the statement's own parameters
            con.execute(sql, [path, *extra] if "$1" in sql else None).fetchall()
        info["events"] = con.execute("SELECT count(*) FROM t").fetchall()[0][0]
    else:
        info["events"] = con.execute("SELECT count(*) FROM read_csv($1, columns={'line': 'VARCHAR'}, delim=chr(1), "
                                     "quote='', escape='', header=false, auto_detect=false)", [path]).fetchall()[0][0]
info["seconds"] = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_SELF)
info["cpu_s"] = ru.ru_utime + ru.ru_stime
info["peak_mb"] = ru.ru_maxrss / 1024
print(json.dumps(info))
"""

FLOOR_COLUMNS = {k.value: "VARCHAR" for k in (
    LogKey.TIMESTAMP, LogKey.SERVICE, LogKey.OPERATION, LogKey.EVENT_SOURCE, LogKey.OUTCOME, LogKey.IDEMPOTENCY_KEY,
    LogKey.IDEMPOTENCY_STATUS, LogKey.ERROR_CODE, LogKey.ERROR_CLASS, LogKey.FUNCTION_REQUEST_ID, LogKey.EVENT_ID)}
FLOOR_COLUMNS.update({LogKey.ATTEMPT.value: "BIGINT", LogKey.RECORD_AGE_MS.value: "DOUBLE",
                        LogKey.IN_PROGRESS_EXPIRES_AT_MS.value: "BIGINT"})

FLOOR_NUMBER_TYPES = {LogKey.ATTEMPT.value: "BIGINT", LogKey.RECORD_AGE_MS.value: "DOUBLE",
                      LogKey.IN_PROGRESS_EXPIRES_AT_MS.value: "BIGINT", LogKey.REMAINING_TIME_MS.value: "DOUBLE",
                      "_aws.Timestamp": "DOUBLE"}
"""The floor's type of the numeric fields the standard queries read (the contract's numbers; EMF's epoch ms); every
other JSON field is VARCHAR."""


def _sql_text(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def floor_statements(log_group: str = LOG_GROUP, queries: Iterable[str] | None = None, shape: str = "json-lines"
                     ) -> dict[str, list[tuple[str, list]]]:
    """The statements each floor runs, ``{"floor": [(sql, params after $1), ...], "floor_all": [...]}`` (``$1``: the
    log file); each leaves its rows in table ``t``. ``floor_all`` materialises every field ``query_references`` finds
    in ``queries`` (default: the standard queries' texts); ValueError names a field it has no rule for (a new ``@``
    field: add its rule here). ``shape`` (``log_shapes.SHAPES``): for a shape that is not JSON lines, ``floor_all``
    reads the messages the cheapest way DuckDB reads that container (``log_shapes.message_sql``: the prefix split off
    by a regular expression, the CSV or JSON document read by DuckDB's readers) and parses each with one
    ``json_transform`` into the same typed fields."""
    from collector.ingest.derive import REPORT_FIELDS
    from collector.insights import query_references
    from collector.standard_queries import load_standard_queries

    fields: list[str] = []
    for text in (load_standard_queries().values() if queries is None else queries):
        fields += [f for f in query_references(text).fields_read if f not in fields]
    json_cols: dict[str, object] = {LogKey.TIMESTAMP.value: "VARCHAR"}  # @timestamp: the record's own time
    line_cols = {"@message": ("VARCHAR USING COMPRESSION zstd", "line")}
    for f in fields:
        if f in ("@timestamp", "@message"):
            continue
        if f == "@log":
            line_cols[f] = ("VARCHAR", _sql_text(log_group))
        elif f == "@type":
            line_cols[f] = ("VARCHAR", ("CASE WHEN starts_with(line, 'REPORT RequestId: ') THEN 'REPORT' "
                                       "WHEN starts_with(line, 'START RequestId: ') THEN 'START' "
                                       "WHEN starts_with(line, 'END RequestId: ') THEN 'END' END"))
        elif f in REPORT_FIELDS:
            line_cols[f] = ("DOUBLE", (f"CASE WHEN starts_with(line, 'REPORT RequestId: ') THEN "
                                      f"TRY_CAST(regexp_extract(line, {_sql_text(REPORT_FIELDS[f][0])}, 1) AS DOUBLE) END"))
        elif f.startswith("@"):
            raise ValueError(f"the floor has no rule for the field {f!r} a standard query reads")
        else:
            top, _, sub = f.partition(".")
            kind = FLOOR_NUMBER_TYPES.get(f, "VARCHAR")
            if sub:
                nested = json_cols.setdefault(top, {})
                if not isinstance(nested, dict):
                    raise ValueError(f"the floor reads {top!r} both whole and as {f!r}")
                nested[sub] = kind
            else:
                json_cols[f] = kind
    types = {k: v if isinstance(v, str) else "STRUCT(" + ", ".join(f'"{a}" {b}' for a, b in v.items()) + ")"
             for k, v in json_cols.items()}
    reader = ("read_csv($1, columns={'line': 'VARCHAR'}, delim=chr(1), quote='', escape='', header=false, "
              "auto_detect=false)")
    from log_shapes import message_sql

    messages = message_sql(shape)
    if messages is not None:
        struct = json.dumps(json_cols)
        cols = ", ".join(f'{e.replace("line", "msg")} AS "{c}"' for c, (_, e) in line_cols.items())
        parse = f"CASE WHEN starts_with(msg, '{{') THEN TRY(json_transform(msg, {_sql_text(struct)})) END"
        return {"floor_all": [(f"CREATE TABLE t AS SELECT {cols}, {parse} AS j FROM ({messages})", [])],
                "floor": []}
    return {
        "floor_all": [
            (("CREATE TABLE j AS SELECT * FROM read_json($1, format='newline_delimited', columns=$2, "
             "ignore_errors=true)"), [types]),
            ("CREATE TABLE t (" + ", ".join(f'"{c}" {t}' for c, (t, _) in line_cols.items()) + ")", []),
            (f"INSERT INTO t SELECT {', '.join(e for _, e in line_cols.values())} FROM {reader}", []),
        ],
        "floor": [(("CREATE TABLE t AS SELECT * FROM read_json($1, format='newline_delimited', columns=$2, "
                     "ignore_errors=true)"), [FLOOR_COLUMNS])],
    }


CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The children's environment: this one with bytecode caching on. With ``PYTHONDONTWRITEBYTECODE`` set (as on
some machines) every child would compile the collector's source anew (about 60 ms at each start), which no
installed copy does after its first run; the installed packages (DuckDB, pyarrow, the standard library) have their
bytecode already."""


def compile_tree(tree: Path) -> None:
    """Compile ``tree``'s ``collector`` and ``emitter`` to bytecode (their ``__pycache__``), so that every measured
    run, the first one too, loads them as a second run of an installed copy does."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "collector", "emitter"], cwd=str(tree), env=CHILD_ENV,
                   check=True, stdout=subprocess.DEVNULL)


def run_child(tree: Path, kind: str, path: Path, out: Path, shape: str = "json-lines") -> dict:
    """One measurement in a fresh interpreter (environment ``CHILD_ENV``); returns its JSON line (seconds, peak_mb,
    events...)."""
    if kind != "collect" and shape == "export-s3-gz":
        path = Path(f"{path}/*.gz")  # DuckDB's readers take the objects by a glob
    args = [sys.executable, "-c", _CHILD, str(tree), kind, str(path), str(out),
            json.dumps(floor_statements(shape=shape))]
    done = subprocess.run(args, capture_output=True, text=True, cwd=str(tree), env=CHILD_ENV, check=False)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:200]}
    last = done.stdout.strip().splitlines()[-1]
    return json.loads(last[last.index('{"'):])  # after any progress output on the same line


def before_tree(commit: str, dest: Path) -> Path:
    """The repository at ``commit`` (collector + emitter only), extracted with ``git archive``."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "collector", "emitter"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def write_bomb(path: Path, mib: int) -> None:
    import gzip

    line = (json.dumps({"level": "INFO", "timestamp": "2026-01-05T10:00:00.000Z", "service": "orders",
                        "outcome": "received", "schema_version": "1"}) + "\n").encode()
    block = line * (1024 * 1024 // len(line))
    with gzip.open(path, "wb", compresslevel=9) as fh:
        for _ in range(mib):
            fh.write(block)


def _median_run(runs: list[dict]) -> dict:
    """One variant's runs as one: the median of each figure (an error when any run failed)."""
    import statistics

    failed = [r for r in runs if "error" in r]
    if failed:
        return failed[0]
    return {**runs[0], **{k: statistics.median(r[k] for r in runs) for k in ("seconds", "cpu_s", "peak_mb")}}


def paired_ratios(runs: dict[str, list[dict]], a: str, b: str, key: str = "seconds") -> list[float]:
    """``a``'s figure over ``b``'s in each round (``runs``: label -> one run per round, in round order), rounds where
    either failed left out: the ratio pair by pair, whose median holds when the machine's speed drifts between
    rounds (both runs of a round meet the same spell), unlike the ratio of the two whole-run medians."""
    return [x[key] / y[key] for x, y in zip(runs[a], runs[b], strict=True) if key in x and key in y and y[key]]


def _fmt(r: dict) -> str:
    if "error" in r:
        return f"error: {r['error']}"
    return f"{r['seconds']:7.2f} s ({r['cpu_s']:5.1f} cpu) {r['peak_mb']:5.0f} MB"


def round_order(labels: list[str], round_: int) -> list[str]:
    """The order of the variants in round ``round_`` (0-based): row ``round_`` of a Williams design (a Latin square
    balanced for what ran just before). Over ``n = len(labels)`` rounds every variant runs once in every slot; over
    ``n`` rounds for an even ``n`` and ``2n`` for an odd one (the second ``n`` mirrored), every variant also runs
    right after every other one equally often. Why: a run is slowed by what the run before it left behind (the
    kernel still writing back the database it wrote, about 0.6 GB at 1M events); a fixed order, or a plain rotation
    of one (which keeps each variant's predecessor), would charge that to the same variant every round.
    Source: E. J. Williams, "Experimental designs balanced for the estimation of residual effects of treatments",
    Australian Journal of Scientific Research, A 2 (1949)."""
    n = len(labels)
    first = [0] + [(j + 1) // 2 if j % 2 else n - j // 2 for j in range(1, n)]  # 0, 1, n-1, 2, n-2, ...
    row = [labels[(x + round_) % n] for x in first]
    return row[::-1] if n % 2 and (round_ // n) % 2 else row


def main_formats(shapes: list[str], sizes: list[int], repeat: int, data_dir: str | None,
                 collect_only: bool = False) -> None:
    """The format axis: for each shape of ``log_shapes`` and each size, ``collect local`` and ``floor_all`` of the same
    file, interleaved (alternating order by round), each in a fresh process; prints per shape and size the medians of
    time and peak RSS, and the median of the per-round ratio. ``collect_only``: no floor (a peak-RSS run)."""
    import statistics

    from log_shapes import write_shape

    tmp = Path(tempfile.mkdtemp(prefix="idemwatch-collector-formats-"))
    compile_tree(ROOT)
    table = []
    try:
        for n in sizes:
            for shape in shapes:
                base = Path(data_dir) if data_dir else tmp
                base.mkdir(parents=True, exist_ok=True)
                suffix = {"filter-log-events": ".json", "console-csv": ".csv", "export-s3-gz": ""}.get(shape, ".log")
                path = base / f"{shape}-{n}{suffix}"
                if not path.exists():
                    t = time.perf_counter()
                    write_shape(path, n, shape)
                    print(f"generated {shape} {n:,} events in {time.perf_counter() - t:.0f} s", flush=True)
                runs: dict[str, list[dict]] = {"collect": [], "floor_all": []}
                for round_ in range(max(repeat, 1)):
                    order = ["collect", "floor_all"] if round_ % 2 == 0 else ["floor_all", "collect"]
                    if collect_only:
                        order = ["collect"]
                    for kind in order:
                        out = tmp / f"out-{kind}"
                        r = run_child(ROOT, kind, path, out, shape)
                        shutil.rmtree(out, ignore_errors=True)
                        Path(f"{out}.duckdb").unlink(missing_ok=True)
                        runs[kind].append(r)
                        print(f"  {n:>9,} {shape:24s} {kind:9s} {_fmt(r)}  events {r.get('events')}", flush=True)
                c = _median_run(runs["collect"])
                f = _median_run(runs["floor_all"]) if runs["floor_all"] else {"error": "not run"}
                ratios = paired_ratios(runs, "collect", "floor_all") if runs["floor_all"] else []
                table.append((shape, n, c, f, statistics.median(ratios) if ratios else None))
                if not data_dir:
                    shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nformat axis (medians of {repeat} interleaved round(s); ratio: median of the per-round ratios); "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'format':24s} {'events':>10} {'collect s':>10} {'floor_all s':>12} {'ratio':>6} {'peak MB':>8}")
    for shape, n, c, f, ratio in table:
        cs = f"{c['seconds']:.2f}" if "seconds" in c else c.get("error", "?")[:40]
        fs = f"{f['seconds']:.2f}" if "seconds" in f else f.get("error", "?")[:40]
        rs = f"{ratio:.2f}x" if ratio else "-"
        pk = f"{c['peak_mb']:.0f}" if "peak_mb" in c else "-"
        print(f"{shape:24s} {n:>10,} {cs:>10} {fs:>12} {rs:>6} {pk:>8}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,1000000,3000000", help="comma-separated event counts")
    ap.add_argument("--before-commit", default="346a573", help="the tree to compare with (default: the start of "
                    "this round of [collector-core])")
    ap.add_argument("--no-before", action="store_true")
    ap.add_argument("--bomb-mib", type=int, default=0, help="also ingest a gzip bomb of this many MiB (e.g. 1024)")
    ap.add_argument("--bomb-before", action="store_true", help="the bomb through the before tree too (~6x memory)")
    ap.add_argument("--repeat", type=int, default=1, help="interleaved rounds of every variant per size; the table "
                    "shows each variant's median (seconds, CPU and peak taken separately). In ``round_order``: with "
                    "the 5 variants every slot is balanced after 5 rounds and every predecessor after 10 (4 variants, "
                    "--no-before: both after 4)")
    ap.add_argument("--data-dir", help="keep the generated files here and reuse them on later runs (same generator and "
                    "seed: delete them after changing generate())")
    ap.add_argument("--collect-only", action="store_true", help="with --formats: collect local only (peak RSS)")
    ap.add_argument("--formats", default="", help="comma-separated log shapes (log_shapes.SHAPES) or 'all': the "
                    "format axis, collect local against floor_all of the same file per shape and size")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x]
    if args.formats:
        from log_shapes import SHAPES

        shapes = list(SHAPES) if args.formats == "all" else args.formats.split(",")
        main_formats(shapes, sizes, args.repeat, args.data_dir, args.collect_only)
        return
    tmp = Path(tempfile.mkdtemp(prefix="idemwatch-collector-bench-"))
    trees = {"after": ROOT}
    if not args.no_before:
        trees["before"] = before_tree(args.before_commit, tmp / "before-tree")
    for tree in trees.values():
        compile_tree(tree)
    results: dict[int, dict[str, dict]] = {}
    paired: dict[int, dict[str, list[dict]]] = {}
    for n in sizes:
        path = (Path(args.data_dir) if args.data_dir else tmp) / f"orders-bench-{n}.jsonl"
        if args.data_dir and path.is_file():
            print(f"reusing {path} ({path.stat().st_size / 1e6:.0f} MB)", flush=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            t = time.perf_counter()
            written = generate(path, n, "jsonl")
            print(f"generated {written:,} events, {path.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - t:.0f} s",
                  flush=True)
        runs: dict[str, list[dict]] = {}
        labels = ["count", "floor", "floor_all", *trees]
        for round_ in range(max(args.repeat, 1)):
            for label in round_order(labels, round_):  # interleaved: every variant on the same file, one after another
                kind = "collect" if label in trees else label
                r = run_child(trees.get(label, ROOT), kind, path, tmp / f"out-{label}-{n}")
                shutil.rmtree(tmp / f"out-{label}-{n}", ignore_errors=True)
                Path(f"{tmp / f'out-{label}-{n}'}.duckdb").unlink(missing_ok=True)
                runs.setdefault(label, []).append(r)
                print(f"  {n:>9,} {label:7s} {_fmt(r)}", flush=True)
        results[n] = {label: _median_run(rs) for label, rs in runs.items()}
        paired[n] = runs
        if not args.data_dir:
            path.unlink()
    print("\nside by side (seconds, peak RSS; ratios to the 14-column floor of the same size"
          + (f"; medians of {args.repeat} interleaved rounds)" if args.repeat > 1 else ")"))
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; cpu = user + system seconds of the process")
    print(f"{'events':>10} {'count scan':>30} {'floor':>30} " + " ".join(f"{k:>40}" for k in trees))
    for n, row in results.items():
        floor = row["floor"].get("seconds")
        cells = []
        for k in trees:
            r = row[k]
            ratio = f"{r['seconds'] / floor:4.1f}x" if floor and "seconds" in r else "  - "
            cpu = f"{r['cpu_s'] / row['floor']['cpu_s']:4.1f}x cpu" if floor and "cpu_s" in r else ""
            cells.append(f"{_fmt(r):>30} {ratio} {cpu}")
        print(f"{n:>10,} {_fmt(row['count']):>30} {_fmt(row['floor']):>30} " + " ".join(cells))
    if args.repeat > 1:
        import statistics

        print("paired: the median (min-max) over rounds of each round's ratio of wall times")
        for n, runs_n in paired.items():
            cells = []
            for k in trees:
                for fl in ("floor", "floor_all"):
                    r = paired_ratios(runs_n, k, fl)
                    if r:
                        cells.append(f"{k}/{fl} {statistics.median(r):4.2f}x ({min(r):4.2f}-{max(r):4.2f})")
            print(f"{n:>10,}   " + ", ".join(cells))
    print("against floor_all (every field the standard queries read, @message included: the issue's fair floor):")
    for n, row in results.items():
        fa = row["floor_all"]
        ratios = [f"{k} {row[k]['seconds'] / fa['seconds']:4.1f}x ({row[k]['cpu_s'] / fa['cpu_s']:4.1f}x cpu)"
                  for k in trees if "seconds" in row[k] and "seconds" in fa]
        print(f"{n:>10,} {_fmt(fa):>30}   " + ", ".join(ratios))
    if len(results) >= 2:
        ns = sorted(results)
        a, b = results[ns[-2]], results[ns[-1]]
        for k in trees:
            if "seconds" in a[k] and "seconds" in b[k]:
                print(f"{k}: {ns[-1]:,}/{ns[-2]:,} events: time x{b[k]['seconds'] / a[k]['seconds']:.2f}, "
                      f"peak RSS x{b[k]['peak_mb'] / a[k]['peak_mb']:.2f}")
    if args.bomb_mib:
        bomb = tmp / "bomb.log.gz"
        write_bomb(bomb, args.bomb_mib)
        print(f"\ngzip bomb: {bomb.stat().st_size / 1e6:.1f} MB expanding to {args.bomb_mib} MiB")
        for k, tree in trees.items():
            if k == "before" and not args.bomb_before:
                continue
            r = run_child(tree, "collect", bomb, tmp / f"out-bomb-{k}")
            print(f"  {k:7s} {_fmt(r)}  {r.get('events', 0):,} events, reasons {r.get('by_reason', {})}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
