"""Logs Insights engine benchmark: figures side by side with the named alternatives, as ratios.

Generates N emitter-shaped events (received/claimed/succeeded/... records with the contract's
keys, plus REPORT lines) straight into a DuckDB ``events`` table (the ingest is measured by the
ingest's own benchmark), then times:

1. every standard table as collect_local writes it (query + typed Parquet export), with fields
   read from ``@json`` and with hot fields materialised as columns;
2. the outcomes table three ways: the engine, a hand-written DuckDB SQL statement over the same
   table (the practical floor), and pandas (``json.loads`` per line + ``groupby``, the usual
   notebook approach);
3. the compiler alone (parse + SQL generation) on the standard queries and the published query
   texts of tests/unit/insights/published_queries.json, beside the tokenizer alone (its floor);
4. AWS's text logs (default-format VPC flow log records, as a file of bare records): the ingest with
   field discovery beside DuckDB reading the same lines (its floor), and the documented "top byte
   transfers" query on the discovered fields beside a hand-written split of the lines.

Run: ``.venv/bin/python benchmarks/insights_bench.py [--events 1000000] [--sections tables,outcomes,compile,vended]``
(``--sections``: only those parts; ``tables`` alone, copied into an older tree, compares two trees' query time).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

try:  # the hot fields the ingest materialises as columns
    from collector.ingest import HOT_FIELDS as HOT
except ImportError:  # pragma: no cover
    HOT = ("outcome", "service", "operation", "event_source", "idempotency_key", "idempotency_status",
           "schema_version", "attempt", "record_age_ms")


def build(con, n: int, hot: tuple[str, ...]) -> None:
    from collector.insights.compiler import EVENT_COLUMN_TYPES

    cols = list(EVENT_COLUMN_TYPES.items()) + [(h, "JSON") for h in hot]
    con.execute("CREATE OR REPLACE TABLE events (" + ", ".join(f'"{c}" {t}' for c, t in cols) + ")")
    outcomes = "['received','claimed','succeeded','duplicate_completed','retryable_failure','poison_message'," \
               "'payload_conflict','duplicate_in_progress']"
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE gen AS
        SELECT i, 1767607200000 + i * 7 AS ts,
               {outcomes}[CAST(1 + (hash(i) % 8) AS BIGINT)] AS outcome,
               'svc' || (i % 3) AS service, 'Op' || (i % 5) AS operation,
               'k' || (hash(i * 31) % (greatest({n} // 4, 1))) AS ikey,
               1 + (hash(i * 7) % 3) AS attempt, (hash(i * 13) % 5000) AS age
        FROM range({n}) t(i)""")
    doc = ("json_object('level','INFO','message','x','service',service,'operation',operation,'schema_version','1',"
           "'outcome',outcome,'event_source','sqs','idempotency_key',ikey,"
           "'idempotency_status', CASE outcome WHEN 'claimed' THEN 'IN_PROGRESS' WHEN 'succeeded' THEN 'COMPLETED' END,"
           "'attempt',attempt,'record_age_ms',age,'error_code', CASE WHEN outcome LIKE '%failure' THEN 'Throttled' END,"
           "'in_progress_expires_at_ms', CASE outcome WHEN 'claimed' THEN ts + 60000 END)")
    hot_sql = "".join(", json_extract(j, '$." + ".".join(f'"{p}"' for p in h.split(".")) + "')" for h in hot)
    named = ", ".join(f'"{c}"' for c in ("@timestamp", "@message", "@logStream", "@log", "@ingestionTime", "@seq",
                                         "@json", *hot))
    con.execute(f"""
        INSERT INTO events ({named}) SELECT ts, CAST(j AS VARCHAR), 'stream', '/aws/lambda/bench', ts, i, j{hot_sql}
        FROM (SELECT *, {doc} AS j FROM gen)""")
    # one REPORT line per 10 events
    con.execute("""
        INSERT INTO events ("@timestamp", "@message", "@log", "@type", "@duration", "@maxMemoryUsed", "@seq")
        SELECT ts + 1, 'REPORT RequestId: x' || i || '\tDuration: 12.0 ms', '/aws/lambda/bench', 'REPORT',
               (hash(i) % 900) / 3.0, 70e6, i + 1000000000 FROM gen WHERE i % 10 = 0""")


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def compile_figures(standard: list[str], rounds: int = 7) -> None:
    """Median microseconds per query of compile_query vs tokenize (interleaved rounds)."""
    import statistics

    from collector.insights import QueryError, compile_query
    from collector.insights.tokenizer import tokenize

    corpus = ROOT / "tests" / "unit" / "insights" / "published_queries.json"
    published = [q["query"] for q in json.loads(corpus.read_text(encoding="utf-8"))["queries"]]
    for label, texts in (("standard queries", standard), ("published texts", published)):
        ok = []
        for t in texts:
            try:
                compile_query(t)
                ok.append(t)
            except QueryError:
                pass
        comp, tok = [], []
        for _ in range(rounds):
            c, _ = timed(lambda ok=ok: [compile_query(t) for t in ok])
            k, _ = timed(lambda ok=ok: [tokenize(t) for t in ok])
            comp.append(c / len(ok) * 1e6)
            tok.append(k / len(ok) * 1e6)
        c, k = statistics.median(comp), statistics.median(tok)
        print(f"\ncompile ({label}, {len(ok)} texts): {c:8.0f} us/query   tokenize only {k:6.0f} us/query   "
              f"compile/tokenize = {c / k:.1f}x")


def vended_figures(n: int, tmp: Path) -> None:
    """Ingest and query time of ``n`` VPC flow log records (collector.ingest.vended) beside their floors."""
    import duckdb

    from collector.ingest import EventStore
    from collector.insights import run_query

    path = tmp / "flow.log"
    with path.open("w", encoding="ascii") as fh:
        for i in range(n):
            start = 1767607200 + i // 50
            fh.write(f"2 123456789012 eni-0a1b2c3d4e5f6{i % 7:04d} 10.0.{i % 13}.{i % 251} 10.1.{i % 5}.{i % 17} "
                     f"{1024 + i % 60000} 443 6 {1 + i % 40} {60 + i % 9000} {start} {start + 60} "
                     f"{'ACCEPT' if i % 9 else 'REJECT'} OK\n")
    store = EventStore()
    ingest_t, _ = timed(lambda: store.ingest_path(path, log_group="/vpc/flow-logs"))
    floor = duckdb.connect()
    read_t, _ = timed(lambda: floor.execute(
        f"CREATE TABLE lines AS SELECT line FROM read_csv('{path}', columns = {{'line': 'VARCHAR'}}, delim = chr(1), "
        "quote = '', escape = '', header = false, auto_detect = false)").fetchall())
    q = "stats sum(bytes) as bytesTransferred by srcAddr, dstAddr | sort bytesTransferred desc | limit 15"
    query_t, res = timed(lambda: run_query(store, q))
    hand = ("SELECT p[4] AS src, p[5] AS dst, sum(CAST(p[10] AS BIGINT)) AS b FROM "
            "(SELECT string_split(line, ' ') AS p FROM lines) GROUP BY ALL ORDER BY b DESC LIMIT 15")
    hand_t, rows = timed(lambda: floor.execute(hand).fetchall())
    assert [r[2] for r in rows] == [r[2] for r in res.rows], "the engine's top transfers differ from the split's"
    print(f"\nVPC flow log records ({n:,}, default format):")
    print(f"  ingest with discovery       {ingest_t:7.3f} s   DuckDB reading the lines {read_t:7.3f} s   "
          f"ingest/read = {ingest_t / read_t:.1f}x")
    print(f"  top byte transfers (engine) {query_t:7.3f} s   hand-written split       {hand_t:7.3f} s   "
          f"engine/hand = {query_t / hand_t:.1f}x")


def main() -> None:
    from types import SimpleNamespace

    import duckdb

    from collector.local_tables import write_standard_tables
    from collector.standard_queries import load_standard_queries

    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--sections", default="tables,outcomes,compile,vended",
                    help="comma-separated parts to run: tables, outcomes (needs tables), compile, vended")
    args = ap.parse_args()
    sections = set(args.sections.split(","))
    queries = load_standard_queries()
    print(f"events: {args.events:,} emitter records + {args.events // 10:,} REPORT lines")
    results = {}
    tmp = Path(tempfile.mkdtemp(prefix="idemwatch-bench-"))
    for label, hot in (("@json only", ()), ("hot columns", HOT)) if sections & {"tables", "outcomes"} else ():
        db = SimpleNamespace(connection=duckdb.connect(str(tmp / f"events-{len(hot)}.duckdb")), table="events")
        con = db.connection
        build(con, args.events, hot)
        # what collect_local does after ingest: every standard table written as Parquet
        total, (info, _) = timed(lambda db=db, hot=hot: write_standard_tables(db, tmp / f"out-{len(hot)}", queries, None, None))
        results[label] = (total, info, con)
        print(f"\nall standard tables written (collect_local path), {label}: {total:.2f} s total")
        for name, i in info.items():
            print(f"  {name:18s} {i['query_seconds']:7.3f} s  {i['rows']:>9,} rows")

    if "outcomes" in sections:
        outcome_figures(results, queries, args.events)
    if "tables" in sections:
        j, h = results["@json only"][0], results["hot columns"][0]
        print(f"\nall standard tables: @json only {j:.2f} s vs hot columns {h:.2f} s  (@json/hot = {j / h:.2f}x)")
    if "compile" in sections:
        compile_figures(list(queries.values()))
    if "vended" in sections:
        vended_figures(args.events, tmp)
    shutil.rmtree(tmp, ignore_errors=True)


def outcome_figures(results: dict, queries: dict, n_events: int) -> None:
    """The outcomes table by the engine, by hand-written DuckDB SQL and by pandas."""
    import pandas as pd

    from collector.insights import run_query

    con = results["hot columns"][2]
    engine_t, res = timed(lambda: run_query(con, queries["outcomes"], limit_cap=None))
    sql = """SELECT epoch_ms((("@timestamp") // 60000) * 60000) AS time, service->>'$' AS service,
                    operation->>'$' AS operation, event_source->>'$' AS event_source, outcome->>'$' AS outcome,
                    count(*) AS events
             FROM events WHERE schema_version IS NOT NULL AND outcome IS NOT NULL GROUP BY ALL"""
    raw_t, raw = timed(lambda: con.execute(sql).fetchall())
    assert len(raw) == len(res.rows), (len(raw), len(res.rows))
    n_pandas = min(n_events, 200_000)
    messages = [r[0] for r in con.execute('SELECT "@message" FROM events ORDER BY "@seq" LIMIT $1',
                                          [n_pandas]).fetchall()]

    def pandas_outcomes():
        rows = []
        for m in messages:
            try:
                d = json.loads(m)
            except ValueError:
                continue
            if "schema_version" in d and "outcome" in d:
                rows.append(d)
        df = pd.DataFrame(rows)
        df["time"] = pd.to_datetime(df.get("timestamp", 0), utc=True, errors="coerce")
        return df.groupby(["service", "operation", "event_source", "outcome"]).size()

    pandas_t, _ = timed(pandas_outcomes)
    pandas_scaled = pandas_t * n_events / n_pandas
    print("\noutcomes table (hot columns):")
    print(f"  engine (run_query)          {engine_t:7.3f} s   1.00x")
    print(f"  hand-written DuckDB SQL     {raw_t:7.3f} s   engine/handwritten = {engine_t / raw_t:.2f}x")
    print(f"  pandas json.loads+groupby   {pandas_scaled:7.3f} s   (measured on {n_pandas:,}, scaled) "
          f"pandas/engine = {pandas_scaled / engine_t:.1f}x")


if __name__ == "__main__":
    main()
