"""Collector ingest benchmark: ingest + every standard query vs a raw DuckDB scan and pandas, as ratios.

Generates N realistic log events (default 1,000,000) to a temp file, one event per line as the Lambda
runtime writes them with the emitter: per invocation ``START``, emitter outcome records (``received``,
``claimed``, ``succeeded`` / ``duplicate_completed`` / ``retryable_failure`` / ``poison_message`` /
``payload_conflict`` ..., keys from ``emitter.contract.LogKey``), one EMF document, ``END`` and a tab-separated
``REPORT`` line (every 8th a cold start with ``Init Duration``; 1 in 200 ``Status: timeout``). Then prints:

1. ingest time (``EventStore.ingest_path``: sniff, split, JSON parse, Lambda fields, hot columns, timestamps);
2. time of all standard queries (every ``collector/queries/*.insights``, no row cap), twice: compiled SQL
   straight to Arrow (``prepare_query``, what ``collect_local`` writes as Parquet) and through
   ``collector.insights.run_query`` (Python rows); skipped with a note when those modules are absent;
3. peak memory (RSS high-water mark of this process after 1, and after 2, before the alternatives run);
4. side by side: a raw DuckDB ``read_json`` scan of the same file with explicit columns (the practical floor)
   and ``pandas.read_json(lines=True)``; pandas runs on ``--pandas-sample`` lines and is scaled linearly to N
   (printed as such) unless ``--pandas-sample 0`` asks for the whole file.

Target (issue 3): ingest + all standard queries within 2x the raw scan; peak memory under 1.5 GB.

Run: ``.venv/bin/python benchmarks/collector_bench.py [--events 1000000] [--format jsonl|export]
[--pandas-sample 100000]``
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from emitter.contract import (
    IdempotencyStatus,
    LogKey,
    Metric,
    Outcome,
)

LOG_GROUP = "/aws/lambda/orders-bench"
T0_MS = 1767607200000  # 2026-01-05T10:00:00Z


def _iso(ms: int) -> str:
    s, m = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{m:03d}Z"


def generate(path: Path, n: int, fmt: str, seed: int = 7) -> int:
    """Write about ``n`` events to ``path``; returns the exact number of events written."""
    import random

    rnd = random.Random(seed)
    K = LogKey
    outcomes = [Outcome.SUCCEEDED, Outcome.SUCCEEDED, Outcome.SUCCEEDED, Outcome.DUPLICATE_COMPLETED,
                Outcome.DUPLICATE_IN_PROGRESS, Outcome.RETRYABLE_FAILURE, Outcome.PAYLOAD_CONFLICT,
                Outcome.POISON_MESSAGE, Outcome.TIMEOUT_BUDGET_ABORT, Outcome.AMBIGUOUS_COMMIT]
    ops = ["ProcessOrders", "CapturePayment", "ProjectLedger"]
    written = 0
    ts = T0_MS
    inv = 0
    buf = io.StringIO()
    with open(path, "w", encoding="utf-8") as out:
        while written < n:
            inv += 1
            rid = f"{rnd.getrandbits(32):08x}-{rnd.getrandbits(16):04x}-4{rnd.getrandbits(12):03x}-" \
                  f"a{rnd.getrandbits(12):03x}-{rnd.getrandbits(48):012x}"
            op = ops[inv % 3]
            cold = inv % 8 == 1
            lines: list[tuple[int, str]] = [(ts, f"START RequestId: {rid} Version: $LATEST")]
            base = {K.LEVEL.value: "INFO", K.SERVICE.value: "orders", K.OPERATION.value: op,
                    K.FUNCTION_NAME.value: "orders-bench", K.FUNCTION_REQUEST_ID.value: rid,
                    K.EVENT_SOURCE.value: "sqs", K.SCHEMA_VERSION.value: "1"}
            counts: dict[str, int] = {}
            for r in range(2):
                ts += rnd.randint(1, 5)
                key = f"order-{rnd.randint(1, 200_000)}"
                attempt = 1 if rnd.random() < 0.9 else rnd.randint(2, 4)
                ev_id = f"{rnd.getrandbits(64):016x}"
                rec = dict(base, **{K.MESSAGE.value: "received", K.TIMESTAMP.value: _iso(ts),
                                    K.OUTCOME.value: Outcome.RECEIVED.value, K.EVENT_ID.value: ev_id,
                                    K.ATTEMPT.value: attempt, K.RECORD_AGE_MS.value: rnd.randint(5, 90_000),
                                    K.IDEMPOTENCY_KEY.value: key})
                lines.append((ts, json.dumps(rec, separators=(",", ":"))))
                counts[Metric.EVENTS_RECEIVED.value] = counts.get(Metric.EVENTS_RECEIVED.value, 0) + 1
                ts += rnd.randint(1, 5)
                rec = dict(base, **{K.MESSAGE.value: "claimed", K.TIMESTAMP.value: _iso(ts),
                                    K.OUTCOME.value: Outcome.CLAIMED.value, K.EVENT_ID.value: ev_id,
                                    K.IDEMPOTENCY_KEY.value: key,
                                    K.IDEMPOTENCY_STATUS.value: IdempotencyStatus.IN_PROGRESS.value,
                                    K.IN_PROGRESS_EXPIRES_AT_MS.value: ts + 60_000})
                lines.append((ts, json.dumps(rec, separators=(",", ":"))))
                ts += rnd.randint(2, 40)
                o = rnd.choice(outcomes)
                extra = {}
                if o in (Outcome.RETRYABLE_FAILURE, Outcome.POISON_MESSAGE):
                    extra = {K.ERROR_CODE.value: rnd.choice(["Throttled", "ValidationError", "Timeout"]),
                             K.ERROR_CLASS.value: "retryable" if o is Outcome.RETRYABLE_FAILURE else "poison",
                             K.LEVEL.value: "ERROR"}
                status = IdempotencyStatus.COMPLETED.value if o in (Outcome.SUCCEEDED, Outcome.DUPLICATE_COMPLETED) \
                    else IdempotencyStatus.DELETED.value if o is Outcome.RETRYABLE_FAILURE else None
                rec = dict(base, **{K.MESSAGE.value: o.value, K.TIMESTAMP.value: _iso(ts), K.OUTCOME.value: o.value,
                                    K.EVENT_ID.value: ev_id, K.IDEMPOTENCY_KEY.value: key, **extra})
                if status:
                    rec[K.IDEMPOTENCY_STATUS.value] = status
                lines.append((ts, json.dumps(rec, separators=(",", ":"))))
                m = {Outcome.SUCCEEDED: Metric.EVENTS_SUCCEEDED, Outcome.DUPLICATE_COMPLETED: Metric.DUPLICATE_COMPLETED,
                     Outcome.DUPLICATE_IN_PROGRESS: Metric.DUPLICATE_IN_PROGRESS,
                     Outcome.RETRYABLE_FAILURE: Metric.RETRYABLE_FAILURE, Outcome.PAYLOAD_CONFLICT: Metric.PAYLOAD_CONFLICT,
                     Outcome.POISON_MESSAGE: Metric.POISON_MESSAGE, Outcome.TIMEOUT_BUDGET_ABORT: Metric.TIMEOUT_BUDGET_ABORT,
                     Outcome.AMBIGUOUS_COMMIT: Metric.AMBIGUOUS_COMMIT}[o].value
                counts[m] = counts.get(m, 0) + 1
            ts += 1
            emf = {"_aws": {"Timestamp": ts, "CloudWatchMetrics": [{
                "Namespace": "Idempotency", "Dimensions": [["Service", "Operation"], ["Service"]],
                "Metrics": [{"Name": k, "Unit": "Count"} for k in counts]}]},
                "Service": "orders", "Operation": op, **counts}
            lines.append((ts, json.dumps(emf, separators=(",", ":"))))
            ts += 1
            lines.append((ts, f"END RequestId: {rid}"))
            dur = rnd.uniform(3, 900)
            timeout = inv % 200 == 0
            if timeout:
                dur = 3000.0
            report = (f"REPORT RequestId: {rid}\tDuration: {dur:.2f} ms\tBilled Duration: {int(dur) + 1} ms\t"
                      f"Memory Size: 256 MB\tMax Memory Used: {rnd.randint(60, 120)} MB\t")
            if cold:
                report += f"Init Duration: {rnd.uniform(150, 400):.2f} ms\t"
            if timeout:
                report += "Status: timeout"
            lines.append((ts, report))
            ts += rnd.randint(5, 60)
            for t, msg in lines[: n - written]:
                buf.write(f"{_iso(t)} {msg}\n" if fmt == "export" else msg + "\n")
            written += min(len(lines), n - written)
            if buf.tell() > 8 << 20:
                out.write(buf.getvalue())
                buf = io.StringIO()
        out.write(buf.getvalue())
    return written


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--format", choices=["jsonl", "export"], default="jsonl",
                    help="jsonl: one JSON/text event per line (read_json can scan it); export: export-to-S3 lines")
    ap.add_argument("--pandas-sample", type=int, default=100_000,
                    help="lines pandas reads (scaled to --events); 0 = the whole file")
    ap.add_argument("--keep", type=Path, default=None, help="write the generated file here and keep it")
    args = ap.parse_args()

    tmpdir = tempfile.TemporaryDirectory(prefix="idemwatch-bench-")
    path = args.keep or Path(tmpdir.name) / ("orders-bench.log" if args.format == "export" else "orders-bench.jsonl")
    t = time.perf_counter()
    n = generate(path, args.events, args.format)
    size_mb = path.stat().st_size / 1e6
    print(f"generated {n:,} events, {size_mb:.0f} MB ({args.format}) in {time.perf_counter() - t:.1f} s: {path}")
    rss_before = peak_rss_mb()

    from collector.ingest import EventStore

    gc.collect()
    store = EventStore()
    t = time.perf_counter()
    report = store.ingest_path(path, log_group=LOG_GROUP)
    ingest_s = time.perf_counter() - t
    print(f"ingest                     {ingest_s:7.3f} s   {report.events:,} events, skipped {report.skipped}, "
          f"repaired {report.repaired}, by reason {report.by_reason}")

    peak_ingest = peak_rss_mb()
    queries_s = arrow_s = None
    qdir = ROOT / "collector" / "queries"
    try:
        from collector.insights import run_query
        from collector.insights.engine import prepare_query
    except ImportError:
        run_query = prepare_query = None
    files = sorted(qdir.glob("*.insights")) if qdir.is_dir() else []
    if run_query is None or not files:
        print("standard queries           skipped: collector.insights or collector/queries/*.insights not present")
    else:
        # as collect_local runs them: compiled SQL straight to Arrow (what it writes as Parquet)
        t = time.perf_counter()
        for f in files:
            con, compiled = prepare_query(store, f.read_text(), None, None, limit_cap=None)
            con.sql(compiled.sql, params=list(compiled.params)).to_arrow_table()
        arrow_s = time.perf_counter() - t
        print(f"standard queries -> Arrow  {arrow_s:7.3f} s   ({len(files)} queries, compiled SQL to Arrow tables)")
        t = time.perf_counter()
        per = []
        for f in files:
            q0 = time.perf_counter()
            res = run_query(store, f.read_text(), limit_cap=None)
            per.append((f.stem, time.perf_counter() - q0, len(res.rows)))
            del res
        queries_s = time.perf_counter() - t
        print(f"standard queries run_query {queries_s:7.3f} s   (QueryResult with Python rows) "
              + ", ".join(f"{name} {s:.2f}s/{rows} rows" for name, s, rows in per))
    peak = peak_rss_mb()
    print(f"peak RSS                   {peak_ingest:7.0f} MB after ingest, {peak:.0f} MB after the queries "
          f"(generator alone: {rss_before:.0f} MB; target < 1500 MB)")
    store.close()
    del store
    gc.collect()

    import duckdb

    con = duckdb.connect()
    cols = {k.value: t for k, t in ((LogKey.TIMESTAMP, "VARCHAR"), (LogKey.LEVEL, "VARCHAR"),
                                     (LogKey.SERVICE, "VARCHAR"), (LogKey.OPERATION, "VARCHAR"),
                                     (LogKey.OUTCOME, "VARCHAR"), (LogKey.IDEMPOTENCY_KEY, "VARCHAR"),
                                     (LogKey.IDEMPOTENCY_STATUS, "VARCHAR"), (LogKey.ATTEMPT, "BIGINT"),
                                     (LogKey.RECORD_AGE_MS, "DOUBLE"), (LogKey.ERROR_CODE, "VARCHAR"))}
    if args.format == "jsonl":
        t = time.perf_counter()
        raw_rows = con.execute(
            "SELECT count(*) FROM read_json($1, format='newline_delimited', columns=$2, ignore_errors=true)",
            [str(path), cols]).fetchall()[0][0]
        raw_s = time.perf_counter() - t
        raw_note = f"{raw_rows:,} JSON rows (text lines skipped by ignore_errors)"
    else:  # export lines are not JSON: the floor is the same read as lines
        t = time.perf_counter()
        raw_rows = con.execute("SELECT count(*), sum(strlen(line)) FROM read_csv($1, columns={'line': 'VARCHAR'}, "
                               "delim=chr(1), quote='', escape='', header=false, auto_detect=false)",
                               [str(path)]).fetchall()[0][0]
        raw_s = time.perf_counter() - t
        raw_note = f"{raw_rows:,} lines via read_csv (export lines are not JSON)"
    print(f"raw DuckDB scan            {raw_s:7.3f} s   {raw_note}")

    import pandas as pd

    sample = args.pandas_sample if 0 < args.pandas_sample < n else n
    with open(path, encoding="utf-8") as fh:
        msgs = (line if args.format == "jsonl" else line.split(" ", 1)[1] for _, line in zip(range(sample), fh))
        head = "".join(m for m in msgs if m.startswith("{"))
    t = time.perf_counter()
    df = pd.read_json(io.StringIO(head), lines=True)
    pandas_s = (time.perf_counter() - t) * n / sample
    scaled = f"measured on {sample:,} lines (their JSON messages), scaled x{n / sample:.1f}" if sample < n \
        else "whole file (JSON messages)"
    print(f"pandas.read_json(lines)    {pandas_s:7.3f} s   {len(df):,} rows read; {scaled}")

    q_best = arrow_s if arrow_s is not None else 0.0
    total = ingest_s + q_best
    print()
    print(f"ingest + standard queries  {total:7.3f} s = {total / raw_s:5.1f}x raw DuckDB scan (target <= 2x); "
          f"pandas.read_json alone / this = {pandas_s / total:.2f}x")
    print(f"ingest alone               {ingest_s:7.3f} s = {ingest_s / raw_s:5.1f}x raw DuckDB scan; "
          f"pandas.read_json / ingest = {pandas_s / ingest_s:.2f}x")
    if arrow_s is not None and queries_s is not None:
        print(f"standard queries           {arrow_s:7.3f} s to Arrow = {arrow_s / raw_s:5.1f}x raw scan; "
              f"{queries_s:.3f} s through run_query (Python rows) = {queries_s / raw_s:5.1f}x")
    print(f"peak RSS                   {peak_ingest:7.0f} MB after ingest ({'under' if peak_ingest < 1500 else 'OVER'} "
          f"1.5 GB), {peak:.0f} MB after run_query results ({'under' if peak < 1500 else 'OVER'})")
    tmpdir.cleanup()


if __name__ == "__main__":
    main()
