"""Dashboard speed in a real browser: navigation -> fully rendered Overview, and page switches.

Two data sets:
- demo: a seeded demo run (run_demo + collect_local) when those parts are installed; otherwise
  the hand-made sample tables of the dashboard tests (said in the output).
- 1M: tables synthesized directly (not through the emitter/collector, which would take
  minutes) from 1,000,000 emitter outcome records with realistic cardinality: 24 h, 4 services
  x 2 operations, 6 event sources, ~330k idempotency keys (~3 records each), a realistic outcome mix, per-minute
  bins. The trail table holds all 1,000,000 records; the aggregate tables are derived from
  it with DuckDB exactly as the standard queries define them.

"Fully rendered" = the page's last element (the footer caption) is on screen, no element is
stale (Streamlit marks elements of the previous run ``data-stale``), the app is not running,
every chart has drawn its marks (plotly's SVG; for an older ``--before`` checkout also Vega-Lite's SVG or canvas and the
HTML charts), every table grid its canvas and every tile sparkline its SVG, and no element
still shows the skeleton Streamlit draws while its frontend component loads (before these two were checked, the
Overview counted as rendered while its tiles were still skeletons). Times are wall-clock from the action in the browser.

The first chart page of a tab is timed twice: right after the Overview has rendered (the page switch rounds) and
after ``READ_S`` seconds on the Overview (a tab evaluates a chart library's chunk once, on its first chart: plotly's
on the Overview's tile trends in this tree; in older checkouts, Vega's on the first chart page).

Explorer substring search is timed twice: in the browser (type a substring, tick "Substring", until the
trail table is drawn) and on the server alone (``dashboard.trail`` search without its cache, median of
``--rounds`` runs), beside the physical floor: one DuckDB scan of the searched columns of the Parquet
file counting the substring matches (what any search must at least read).

With ``--before DIR`` (a checkout of another version, e.g. ``git archive fe735d5 | tar -x -C DIR``), the 1M-event
set is measured on both versions at once, each started by its own ``dashboard/serve.py``, rounds interleaved,
and the after/before ratios are printed (median of the per-round ratios: both saw the same load).

With ``--reruns N``, the Overview's server render time (its footer) is also read over N reruns per version (the
versions taking turns), and its median / p90 / p99 / max printed: a full garbage collection landing inside a run
shows in the tail, not the median.

Every browser figure has its floor beside it: the same Streamlit, started with the same options
(``dashboard.serve.streamlit_command``), serving a bare two-page app (one ``st.caption`` a page, :data:`FLOOR_APP`),
timed the same way in the same rounds: a new tab's warm load of its first page (the Overview's floor) and a switch
between its two pages (the page switch's floor). What the dashboard costs is its figure minus the floor; what no
change to the dashboard can remove is the floor (the Streamlit frontend's own bundle, websocket and first render).

Targets (issue 34): Overview <= 1.5 s warm, page switch <= 0.4 s, explorer search <= 0.5 s on the 1M-event tables.
Plotly's first load in a tab is reported separately, on the floor app: its third page draws one small plotly figure,
and a new tab's switch to it, against the switch to a bare page, is what loading and evaluating plotly's chunk costs
once per tab (every tab's first figure pays it; the Overview's tile trends are that first figure).

    .venv/bin/python benchmarks/dashboard_bench.py [--events 1000000] [--rounds 3] [--skip-demo] [--before DIR]
                                                   [--reruns 40] [--screenshot dashboard/assets/overview.png]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

BENCH_TREE_ENV = "IDEMWATCH_BENCH_TREE"
"""Set by the benchmark for its ``--server-search`` child: the checkout whose packages it imports."""
ROOT = Path(os.environ.get(BENCH_TREE_ENV) or Path(__file__).resolve().parents[1]).resolve()
sys.path.insert(0, str(ROOT))

from collector.insights.constants import DEFAULT_ACCOUNT_ID
from collector.tables import TABLES
from dashboard.serve import APP_PATH, DashboardServer, streamlit_command
from emitter.contract import ErrorClass, EventSource, IdempotencyStatus, Outcome

TARGET_OVERVIEW_S = 1.5
TARGET_SWITCH_S = 0.4
TARGET_SEARCH_S = 0.5
READ_S = 5.0
"""Seconds a person spends on the Overview before opening the first chart page (the second Duplicates figure)."""
SEARCH_TEXT = "rders#1234"
"""A substring of the synthetic keys (``ProcessOrders#1234``, ``ReconcileOrders#12345``, ...): a search a person
types when they remember part of a key."""
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]
NAV = '[data-testid="stSidebarNav"] a'
RENDERED = re.compile(r"rendered in (\d+) ms")

# ----------------------------------------------------------------------------- synthetic 1M tables
OPS = [  # service, operation, event source
    ("orders", "ProcessOrders", EventSource.SQS.value), ("orders", "ReconcileOrders", EventSource.EVENTBRIDGE.value),
    ("ledger", "ApplyLedgerEntries", EventSource.KINESIS.value), ("ledger", "ProjectBalances", EventSource.DYNAMODB.value),
    ("cases", "CreateCase", EventSource.API_GATEWAY_REST.value), ("cases", "UpdateCase", EventSource.API_GATEWAY_HTTP.value),
    ("payments", "CapturePayment", EventSource.EVENTBRIDGE.value), ("payments", "RefundPayment", EventSource.SQS.value),
]
MIX = [  # outcome, share of records (sums to 1)
    (Outcome.RECEIVED, 0.300), (Outcome.CLAIMED, 0.270), (Outcome.SUCCEEDED, 0.262),
    (Outcome.DUPLICATE_COMPLETED, 0.040), (Outcome.DUPLICATE_IN_PROGRESS, 0.008), (Outcome.PAYLOAD_CONFLICT, 0.002),
    (Outcome.STALE_CLAIM_TAKEOVER, 0.001), (Outcome.RETRYABLE_FAILURE, 0.030), (Outcome.PERMANENT_FAILURE, 0.005),
    (Outcome.POISON_MESSAGE, 0.003), (Outcome.TIMEOUT_BUDGET_ABORT, 0.002), (Outcome.AMBIGUOUS_COMMIT, 0.0005),
    (Outcome.SIDE_EFFECT_STARTED, 0.030), (Outcome.BATCH_ITEM_FAILURE, 0.0395), (Outcome.STORE_ERROR, 0.0005),
    (Outcome.COLD_START, 0.006),
]
CODES = {  # failure outcome -> (error codes, error class)
    Outcome.RETRYABLE_FAILURE: (["Throttled", "ServiceUnavailable", "ProvisionedThroughputExceeded"],
                                ErrorClass.RETRYABLE),
    Outcome.PERMANENT_FAILURE: (["ValidationError", "NotFound"], ErrorClass.PERMANENT),
    Outcome.POISON_MESSAGE: (["SchemaError", "DeserializationError"], ErrorClass.POISON),
    Outcome.TIMEOUT_BUDGET_ABORT: (["TimeoutBudget"], ErrorClass.RETRYABLE),
    Outcome.STORE_ERROR: (["ConditionalCheckFailed", "StoreUnavailable"], ErrorClass.RETRYABLE),
}


def _sql_list(values: list[str]) -> str:
    return "[" + ", ".join(f"'{v}'" for v in values) + "]"


def synthesize(out: Path, n: int, seed: int = 7) -> Path:
    """Write <out>/tables/*.parquet + manifest.json from ``n`` synthetic outcome records."""
    (out / "tables").mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"SELECT setseed({(seed % 100) / 100})")
    ops = ", ".join(f"({i}, '{s}', '{o}', '{e}')" for i, (s, o, e) in enumerate(OPS))
    con.execute(f"CREATE TABLE ops(i INT, service VARCHAR, operation VARCHAR, event_source VARCHAR); "
                f"INSERT INTO ops VALUES {ops}")
    cum, acc = [], 0.0
    for oc, share in MIX:
        acc += share
        cum.append((oc.value, acc))
    case = "CASE " + " ".join(f"WHEN u < {c:.6f} THEN '{o}'" for o, c in cum) + f" ELSE '{MIX[0][0].value}' END"
    codes = "CASE outcome " + " ".join(
        f"WHEN '{o.value}' THEN list_element({_sql_list(c)}, 1 + CAST(floor(random() * {len(c)}) AS INT))"
        for o, (c, _) in CODES.items()) + " ELSE NULL END"
    classes = "CASE outcome " + " ".join(f"WHEN '{o.value}' THEN '{k.value}'" for o, (_, k) in CODES.items()) + \
        " ELSE NULL END"
    status = (f"CASE outcome WHEN '{Outcome.CLAIMED.value}' THEN '{IdempotencyStatus.IN_PROGRESS.value}' "
              f"WHEN '{Outcome.STALE_CLAIM_TAKEOVER.value}' THEN '{IdempotencyStatus.IN_PROGRESS.value}' "
              f"WHEN '{Outcome.RECEIVED.value}' THEN NULL ELSE '{IdempotencyStatus.COMPLETED.value}' END")
    con.execute(f"""
        CREATE TABLE trail AS
        WITH r AS (
            SELECT range AS seq, random() AS u, CAST(floor(random() * {len(OPS)}) AS INT) AS op,
                   CAST(floor(random() * {max(1, n // 3 // len(OPS))}) AS BIGINT) AS k,
                   -- diurnal-ish load: more traffic mid-window
                   TIMESTAMP '2026-01-05 00:00:00' + to_milliseconds(CAST(floor(86400000 *
                       (0.5 + 0.5 * sin(random() * 6.283) * 0.2 + (random() - 0.5) * 0.8)) AS BIGINT)) AS ts
            FROM range({n}))
        SELECT ts AS timestamp, '/aws/lambda/' || ops.service || '-' || lower(ops.operation) AS log_group,
               ops.service, ops.operation, ops.event_source, {case} AS outcome,
               ops.operation || '#' || CAST(k AS VARCHAR) AS idempotency_key,
               CAST(NULL AS VARCHAR) AS idempotency_status,
               'evt-' || CAST(k AS VARCHAR) AS event_id, 'corr-' || CAST(k // 4 AS VARCHAR) AS correlation_id,
               'req-' || CAST(seq // 10 AS VARCHAR) AS function_request_id,
               CAST(1 + (CASE WHEN random() < 0.06 THEN 1 ELSE 0 END) + (CASE WHEN random() < 0.01 THEN 1 ELSE 0 END)
                    AS BIGINT) AS attempt,
               CAST(NULL AS VARCHAR) AS error_code,
               CASE WHEN ops.event_source IN ('sqs', 'kinesis', 'dynamodb') THEN
                    round(exp(random() * 9) + CASE WHEN hour(ts) BETWEEN 14 AND 15 THEN random() * 600000 ELSE 0 END)
               END AS record_age_ms,
               CAST(NULL AS DOUBLE) AS remaining_time_ms, '' AS message
        FROM r JOIN ops ON ops.i = r.op""")
    con.execute(f"UPDATE trail SET idempotency_status = {status}, error_code = {codes}")
    con.execute(f"UPDATE trail SET record_age_ms = NULL WHERE outcome <> '{Outcome.RECEIVED.value}'")
    con.execute("UPDATE trail SET message = '{\"outcome\":\"' || outcome || '\"}'")
    bin_ = "time_bucket(INTERVAL 1 minute, timestamp)"
    rec = Outcome.RECEIVED.value
    queries = {
        "outcomes": f"SELECT {bin_} AS time, service, operation, event_source, outcome, count(*) AS events "
                    f"FROM trail GROUP BY ALL",
        "record_age": f"SELECT {bin_} AS time, service, operation, event_source, count(*) AS records, "
                      f"quantile_cont(record_age_ms, 0.5) AS p50_ms, quantile_cont(record_age_ms, 0.95) AS p95_ms, "
                      f"max(record_age_ms) AS max_ms FROM trail WHERE outcome = '{rec}' AND record_age_ms IS NOT NULL "
                      f"GROUP BY ALL",
        "attempts": f"SELECT service, operation, event_source, attempt, count(*) AS events FROM trail "
                    f"WHERE outcome = '{rec}' GROUP BY ALL",
        "rates": f"""SELECT {bin_} AS time, service, operation,
                        count(*) FILTER (WHERE outcome = '{rec}') AS received,
                        count(*) FILTER (WHERE outcome = '{rec}' AND attempt > 1) AS redeliveries,
                        count(*) FILTER (WHERE outcome = '{Outcome.RETRYABLE_FAILURE.value}') AS retryable_failures,
                        count(*) FILTER (WHERE outcome = '{Outcome.POISON_MESSAGE.value}') AS poison_messages,
                        retryable_failures / nullif(received, 0) AS retry_rate,
                        poison_messages / nullif(received, 0) AS poison_rate
                     FROM trail GROUP BY ALL""",
        "stuck_keys": f"""SELECT idempotency_key, any_value(service) AS service, any_value(operation) AS operation,
                        '{IdempotencyStatus.IN_PROGRESS.value}' AS last_status, '{Outcome.CLAIMED.value}' AS last_outcome,
                        max(timestamp) AS claimed_at, max(timestamp) AS last_seen,
                        max(timestamp) + INTERVAL 5 minute AS in_progress_expires_at, count(*) AS attempts,
                        any_value(function_request_id) AS last_request_id,
                        epoch(TIMESTAMP '2026-01-06 00:00:00' - max(timestamp)) AS age_s,
                        max(timestamp) + INTERVAL 5 minute < TIMESTAMP '2026-01-06 00:00:00' AS expired
                     FROM trail WHERE outcome = '{Outcome.CLAIMED.value}' AND hash(idempotency_key) % 1000 = 0
                     GROUP BY idempotency_key""",
        "conflicting_keys": f"""SELECT idempotency_key, any_value(service) AS service, any_value(operation) AS operation,
                        count(*) AS conflicts, min(timestamp) AS first_seen, max(timestamp) AS last_seen
                     FROM trail WHERE outcome = '{Outcome.PAYLOAD_CONFLICT.value}' GROUP BY idempotency_key
                     ORDER BY conflicts DESC""",
        "error_codes": f"SELECT {bin_} AS time, service, operation, outcome, error_code, "
                       f"{classes} AS error_class, count(*) AS events FROM trail "
                       f"WHERE error_code IS NOT NULL GROUP BY ALL",
        "invocations": f"""SELECT {bin_} AS time, log_group, count(DISTINCT function_request_id) AS invocations,
                        count(*) FILTER (WHERE outcome = '{Outcome.COLD_START.value}') AS cold_starts, 0 AS timeouts,
                        120.0 AS avg_duration_ms, 480.0 AS p95_duration_ms, 2900.0 AS max_duration_ms,
                        96.0 AS max_memory_used_mb,
                        CASE WHEN cold_starts > 0 THEN 180.0 END AS avg_init_duration_ms,
                        CASE WHEN cold_starts > 0 THEN 240.0 END AS max_init_duration_ms,
                        128.0 AS memory_size_mb FROM trail GROUP BY ALL""",
        "library_signals": "SELECT * FROM (SELECT TIMESTAMP '2026-01-05' AS time, '' AS log_group, '' AS library, "
                           "'' AS signal, 0.0 AS events) WHERE false",
        "trail": "SELECT * FROM trail ORDER BY timestamp",
    }
    counts = {}
    for name, sql in queries.items():
        have = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM ({sql})").fetchall()}
        # account_id is split from @log by the collector; the synthetic rows are all of the offline default account
        cols = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' if c in have else
                         f"CAST('{DEFAULT_ACCOUNT_ID}' AS {t}) AS \"{c}\"" for c, t in TABLES[name].columns)
        path = out / "tables" / f"{name}.parquet"
        con.execute(f"COPY (SELECT {cols} FROM ({sql})) TO '{path}' (FORMAT parquet)")
        counts[name] = con.execute(f"SELECT count(*) FROM '{path}'").fetchone()[0]
    con.close()
    (out / "manifest.json").write_text(json.dumps({"collected_at": "2026-01-06T00:00:00Z",
                                                   "sources": [f"synthetic {n:,} outcome records"],
                                                   "row_counts": counts}))
    return out


# ----------------------------------------------------------------------------- data sets
def demo_data(tmp: Path) -> tuple[Path, str]:
    try:
        from collector.collect import collect_local
        from dashboard.demo import run_demo

        out = tmp / "demo"
        run_demo(out, seed=7)
        collect_local([out / "logs"], out)
        return out, "seeded demo run (seed 7, default size)"
    except Exception as exc:  # noqa: BLE001 - fall back, and say so in the output
        spec = importlib.util.spec_from_file_location("sample", ROOT / "tests/unit/dashboard/sample_tables.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        return mod.write_data_dir(tmp / "sample"), f"hand-made sample tables (demo unavailable: {exc})"


# ----------------------------------------------------------------------------- the floor
FLOOR_APP = {
    "app.py": "import streamlit as st\n"
              "st.set_page_config(page_title='floor', layout='wide')\n"
              "st.navigation([st.Page('a.py', title='Overview', default=True),\n"
              "               st.Page('b.py', title='Other', url_path='other'),\n"
              "               st.Page('c.py', title='Plotly', url_path='plotly')]).run()\n",
    # the footer text the dashboard's pages end with (ui.footer), so wait_page reads both alike
    "a.py": "import streamlit as st\nst.caption('idemwatch · Overview · rendered in 0 ms')\n",
    "b.py": "import streamlit as st\nst.caption('idemwatch · Other · rendered in 0 ms')\n",
    "c.py": "import plotly.graph_objects as go\nimport streamlit as st\n"
            "st.plotly_chart(go.Figure(go.Scatter(x=[0, 1, 2], y=[1, 3, 2])), height=60)\n"
            "st.caption('idemwatch · Plotly · rendered in 0 ms')\n",
}
"""The floor: a bare Streamlit app of two pages, one caption each (no data, no sidebar, no component), and a third
page with one small plotly figure (plotly's first load in a tab)."""


class FloorServer(DashboardServer):
    """:data:`FLOOR_APP` served by ``streamlit run`` with the dashboard's own options (this checkout's
    ``streamlit_command``, the app path swapped), in ``app_dir``."""

    def __init__(self, app_dir: Path) -> None:
        super().__init__(app_dir)
        self.app_dir = app_dir

    def start(self) -> FloorServer:
        self.app_dir.mkdir(parents=True, exist_ok=True)
        for name, text in FLOOR_APP.items():
            (self.app_dir / name).write_text(text)
        cmd = [str(self.app_dir / "app.py") if c == str(APP_PATH) else c
               for c in streamlit_command(self.host, self.port, self.headless)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(self.app_dir))
        self._wait_healthy()
        return self


def floor_round(page_factory, url: str, res: dict) -> None:
    """One round on the floor app: a new tab's warm load of its first page, then a switch to the other page and
    back (both kept)."""
    page = page_factory()
    t = time.perf_counter()
    page.goto(url + "/")
    wait_page(page, "Overview")
    res["overview"].append(time.perf_counter() - t)
    for title in ("Other", "Overview"):
        t = time.perf_counter()
        page.locator(NAV, has_text=re.compile(f"^{re.escape(title)}$")).click()
        wait_page(page, title)
        res["switch"].append(time.perf_counter() - t)
    t = time.perf_counter()
    page.locator(NAV, has_text=re.compile("^Plotly$")).click()
    wait_page(page, "Plotly")
    res.setdefault("plotly_first", []).append(time.perf_counter() - t)
    page.close()


# ----------------------------------------------------------------------------- browser timing
_SETTLED = """(charts_too = true) => {
  const stale = document.querySelectorAll('[data-stale="true"]').length;
  const running = document.querySelector('[data-testid="stStatusWidget"]');
  // a chart's container arrives with the script's output; the chart draws later: Plotly (a lazily loaded chunk) its
  // .main-svg, Vega (st.vega_lite_chart) its marks: an SVG with the scene group, or the canvas it paints (Streamlit
  // switches a chart of more than 2,000 marks to canvas)
  const vegaDrawn = c => !!c.querySelector('svg.marks > g, canvas.marks[width]:not([width="0"])');
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"], '
                                               + '.st-key-series, .st-key-alarm_timeline')];
  // a server-drawn chart (dashboard.htmlchart) arrives drawn: its HTML box .idw-chart
  const drawn = !charts_too || charts.every(c => c.querySelector('.main-svg, .idw-chart') || vegaDrawn(c));
  const grids = [...document.querySelectorAll('[data-testid="stDataFrame"]')].every(g => g.querySelector('canvas'));
  // an element whose frontend component is still loading shows a skeleton; a tile's sparkline draws its SVG later
  const skeletons = [...document.querySelectorAll('[data-testid="stSkeleton"]')]
    .filter(k => charts_too || !k.closest('[data-testid="stPlotlyChart"], [class*="st-key-spark-"]')).length;
  const sparks = [...document.querySelectorAll('[data-testid="stMetricChart"]')].every(c => c.querySelector('svg'));
  // the Overview's sparklines are SVG images (st.image): each decoded
  const images = [...document.querySelectorAll('[data-testid="stImage"] img')].every(i => i.complete && i.naturalWidth > 0);
  return stale === 0 && !running && drawn && grids && skeletons === 0 && sparks && images;
}"""


def wait_page(page, title: str, timeout_ms: int = 120_000, charts: bool = True) -> int:
    """Wait for the page's footer and a settled DOM (``charts``: every chart drawn too); return the server-side
    render ms from the footer."""
    loc = page.get_by_text(f"idemwatch · {title} · rendered in")
    loc.wait_for(timeout=timeout_ms)
    page.wait_for_function(_SETTLED, arg=charts, timeout=timeout_ms, polling="raf")
    m = RENDERED.search(loc.inner_text())
    return int(m.group(1)) if m else -1


def nav_titles(page) -> list[str]:
    """Titles of every page in the sidebar navigation, Overview excluded (whatever pages the app has)."""
    return [t.strip() for t in page.locator(NAV).all_inner_texts() if t.strip() != "Overview"]


def search_in_browser(page, url: str, text: str) -> float:
    """Seconds from pressing Enter in the explorer's value box (Substring ticked) to the drawn trail table."""
    page.goto(url + "/explorer")
    wait_page(page, "Events explorer")
    if not page.locator(".st-key-ex_partial input").first.is_checked():  # on by default since issue 34
        page.locator(".st-key-ex_partial label").first.click()
        page.wait_for_function(_SETTLED, timeout=120_000, polling="raf")
    box = page.locator(".st-key-ex_value input")
    box.fill(text)
    t = time.perf_counter()
    box.press("Enter")
    # the drawn trail table, or the "no trail records" note when nothing matches
    page.wait_for_function("""() => document.querySelector('.st-key-table-trail_rows canvas')
        || document.querySelector('[data-testid="stAlertContentInfo"]')""", timeout=120_000, polling="raf")
    wait_page(page, "Events explorer")
    return time.perf_counter() - t


def search_on_server(data_dir: Path, text: str, rounds: int, tree: Path = ROOT) -> dict:
    """The explorer's substring search without its result caches (the id index built), and the floor: one DuckDB scan counting
    matches in the searched columns (median seconds). Another checkout's search runs in a child process with
    that checkout first on its import path (this script, ``--server-search``)."""
    if tree != ROOT:
        out = subprocess.run([sys.executable, __file__, "--server-search", str(data_dir), "--rounds", str(rounds)],
                             env={**os.environ, BENCH_TREE_ENV: str(tree)}, capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    from dashboard import trail
    from dashboard.data import load_dataset

    ds = load_dataset(data_dir)
    cols = trail.SEARCH_FIELDS["Any id"]
    # what the explorer page calls (its first page where it pages the result), every result cache emptied first
    page = getattr(trail, "search_page", trail.search)
    # the result caches: functools.lru_cache (older checkouts) or st.cache_data; not the id index nor the log groups
    keep = {"_log_group_map", "_hot_db"}
    caches = [getattr(f, "cache_clear", None) or f.clear for name, f in vars(trail).items()
              if name not in keep and (hasattr(f, "cache_clear") or type(f).__name__ == "CachedFunc")]
    trail._hot_db(ds.trail_path, ds.fingerprint)  # the id index, built when the page opens
    times, floor = [], []
    path = str(ds.trail_path).replace("'", "''")
    cond = " OR ".join(f"contains(lower({c}), ?)" for c in cols)
    for _ in range(rounds):
        for clear in caches:
            clear()
        t = time.perf_counter()
        page(ds, "Any id", text, partial=True)
        times.append(time.perf_counter() - t)
        con = duckdb.connect()
        t = time.perf_counter()
        con.execute(f"SELECT count(*) FROM read_parquet('{path}') WHERE {cond}", [text.lower()] * len(cols)).fetchone()
        floor.append(time.perf_counter() - t)
        con.close()
    return {"server": statistics.median(times), "floor": statistics.median(floor)}


def _round(page_factory, url: str, r: int, res: dict, screenshot: Path | None, search: bool) -> None:
    """One round on one dashboard: a new tab's Overview, every page in turn, back to the Overview, the explorer
    search (rounds > 0), then a new tab that reads the Overview ``READ_S`` before opening the first chart page.
    Round 0 is a first visit (empty HTTP cache, the server imports and loads the tables): only its Overview is
    kept, as the cold figure."""
    page = page_factory()
    t = time.perf_counter()
    page.goto(url + "/")
    ms = wait_page(page, "Overview", charts=False)
    dt = time.perf_counter() - t
    wait_page(page, "Overview")
    if r > 0:
        res.setdefault("overview_charts", []).append(time.perf_counter() - t)
    if r == 0:
        res["overview_cold"], res["overview_cold_server"] = dt, ms
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=False)
    else:
        res["overview"].append(dt)
        res["overview_server"].append(ms)
    if not res["switch"]:
        res["switch"] = {t: [] for t in nav_titles(page)}
    titles = list(res["switch"])
    for title in titles + ["Overview"]:
        t = time.perf_counter()
        page.locator(NAV, has_text=re.compile(f"^{re.escape(title)}$")).click()
        ms = wait_page(page, title)
        dt = time.perf_counter() - t
        if r > 0 and title != "Overview":
            res["switch"][title].append(dt)
            res["switch_server"].append(ms)
    if search and r > 0:
        res.setdefault("search_browser", []).append(search_in_browser(page, url, f"{SEARCH_TEXT}{r}"))
    page.close()
    if r > 0:  # a person who reads the Overview for READ_S before opening the first chart page
        page = page_factory()
        page.goto(url + "/")
        wait_page(page, "Overview")
        time.sleep(READ_S)  # the scenario's reading time, not a wait for the app
        t = time.perf_counter()
        page.locator(NAV, has_text=re.compile(f"^{re.escape(titles[0])}$")).click()
        wait_page(page, titles[0])
        res.setdefault("first_chart_after_read", []).append(time.perf_counter() - t)
        page.close()


def rerun_renders(ctxs, urls: list[str], n: int) -> list[list[int]]:
    """The Overview's server render ms (its footer) over ``n`` reruns per dashboard, each rerun a switch back from
    the first other page, the dashboards taking turns: the spread shows a garbage collection landing in a run."""
    pages = []
    for ctx, url in zip(ctxs, urls):
        page = ctx.new_page()
        page.goto(url + "/")
        wait_page(page, "Overview")
        pages.append((page, nav_titles(page)[0]))
    out: list[list[int]] = [[] for _ in urls]
    for r in range(n):
        for i in range(len(urls)) if r % 2 == 0 else reversed(range(len(urls))):
            page, other = pages[i]
            for title in (other, "Overview"):
                page.locator(NAV, has_text=re.compile(f"^{re.escape(title)}$")).click()
                ms = wait_page(page, title)
            out[i].append(ms)
    for page, _ in pages:
        page.close()
    return out


def _pct(values: list[int], q: float) -> int:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def _server(tree: Path, data_dir: Path):
    """A dashboard server of the checkout ``tree`` started the way that checkout starts it: its own
    ``dashboard/serve.py`` (its streamlit options), its packages first on the child's import path."""
    if tree == ROOT:
        return DashboardServer(data_dir)
    spec = importlib.util.spec_from_file_location("before_dashboard_serve", tree / "dashboard" / "serve.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod.DashboardServer(data_dir, env={"PYTHONPATH": str(tree)})


def measure(browser, data_dir: Path, rounds: int, screenshot: Path | None, search: bool = False,
            trees: tuple[Path, ...] = (ROOT,), reruns: int = 0) -> list[dict]:
    """Time the dashboard of every checkout in ``trees`` (this one, and a before tree with ``--before``) over
    ``data_dir``: one server and one browser context each, rounds interleaved (round r runs them in turn, the
    order reversed every other round), so a busy machine slows them alike; the floor app (:class:`FloorServer`)
    takes its turn in every round too. One result per tree, each with the floor's figures under ``bare``."""
    load_before = os.getloadavg()[0]
    results: list[dict] = []
    servers = []
    floor = {"overview": [], "switch": []}
    floor_srv = None
    try:
        floor_srv = FloorServer(data_dir.parent / f"floor-app-{data_dir.name}").start()
        floor_ctx = browser.new_context(viewport={"width": 1440, "height": 1000})
        for tree in trees:
            t0 = time.perf_counter()
            servers.append(_server(tree, data_dir).start())
            results.append({"overview": [], "overview_server": [], "switch": {}, "switch_server": [],
                            "server_start_s": time.perf_counter() - t0, "tree": tree})
        # one browser context per app: round 0 is a first visit, later rounds are new tabs of a returning user
        ctxs = [browser.new_context(viewport={"width": 1440, "height": 1000}) for _ in trees]
        for r in range(rounds + 1):
            order = range(len(trees)) if r % 2 == 0 else reversed(range(len(trees)))
            for i in order:
                _round(ctxs[i].new_page, servers[i].url, r, results[i], screenshot if i == 0 else None, search)
            if r == 0:  # a first visit, as for the dashboards: not kept
                floor_round(floor_ctx.new_page, floor_srv.url, {"overview": [], "switch": []})
            else:
                floor_round(floor_ctx.new_page, floor_srv.url, floor)
        if reruns:
            for res, ms in zip(results, rerun_renders(ctxs, [s.url for s in servers], reruns)):
                res["reruns"] = ms
        for c in ctxs:
            c.close()
        floor_ctx.close()
    finally:
        for srv in servers:
            srv.stop()
        if floor_srv is not None:
            floor_srv.stop()
    for res in results:
        res["bare"] = floor
        if search:
            res.update(search_on_server(data_dir, SEARCH_TEXT, rounds, res["tree"]))
        res["load"] = (load_before, os.getloadavg()[0])
    return results


def report(label: str, source: str, res: dict) -> None:
    med = statistics.median
    ov = med(res["overview"])
    switches = {t: med(v) for t, v in res["switch"].items()}
    worst = max(switches.items(), key=lambda kv: kv[1])
    allsw = [x for v in res["switch"].values() for x in v]
    print(f"\n== {label}: {source}")
    print(f"   server start (streamlit healthy)     {res['server_start_s']:7.2f} s")
    print(f"   Overview, cold (first session)       {res['overview_cold']:7.2f} s   (server render "
          f"{res['overview_cold_server']} ms)")
    fo, fs = med(res["bare"]["overview"]), med(res["bare"]["switch"])
    print(f"   Overview, warm (median)              {ov:7.2f} s   target {TARGET_OVERVIEW_S:.1f} s  "
          f"ratio {ov / TARGET_OVERVIEW_S:5.2f}x of target   (server render {med(res['overview_server']):.0f} ms)   "
          f"floor {fo:.2f} s, {ov / fo:4.2f}x of floor")
    if res.get("overview_charts"):
        oc = med(res["overview_charts"])
        print(f"   Overview, warm, its charts drawn too {oc:7.2f} s   (+{oc - ov:.2f} s: the tab's first charts, "
              "plotly's chunk loaded and evaluated once per tab)")
    print(f"   page switch, median over pages       {med(allsw):7.2f} s   target {TARGET_SWITCH_S:.1f} s  "
          f"ratio {med(allsw) / TARGET_SWITCH_S:5.2f}x of target   (server render {med(res['switch_server']):.0f} ms)   "
          f"floor {fs:.2f} s, {med(allsw) / fs:4.2f}x of floor")
    print(f"   page switch, slowest page (median)   {worst[1]:7.2f} s   ({worst[0]})  "
          f"ratio {worst[1] / TARGET_SWITCH_S:5.2f}x of target   floor {fs:.2f} s")
    print(f"   floor: a bare Streamlit app (one caption a page), same rounds: warm load {fo:.2f} s, page switch "
          f"{fs:.2f} s (median of {len(res['bare']['overview'])} loads, {len(res['bare']['switch'])} switches)")
    if res["bare"].get("plotly_first"):
        fp = med(res["bare"]["plotly_first"])
        print(f"   plotly's first load in a tab (floor app: a switch to one small figure) {fp:.2f} s, "
              f"{fp - fs:+.2f} s against a bare switch")
        # the issue reports plotly's once-per-tab load separately: the Overview is the first plotly page of its tab
        print(f"   Overview, warm, less plotly's first load {ov - (fp - fs):7.2f} s   target {TARGET_OVERVIEW_S:.1f} s  "
              f"(the Overview's {ov:.2f} s minus the {fp - fs:.2f} s a tab's first figure costs on the floor app)")
    first = next(iter(res["switch"]))  # the first chart page of a tab loads the chart library's JS chunk
    rest = [x for t, v in res["switch"].items() if t != first for x in v]
    print(f"   page switch, median without {first:<11} {med(rest):7.2f} s   ratio {med(rest) / TARGET_SWITCH_S:5.2f}x "
          f"of target   ({first}: the first chart page after the Overview)")
    if "first_chart_after_read" in res:
        fc = med(res["first_chart_after_read"])
        print(f"   {first} after {READ_S:.0f} s on the Overview  {fc:7.2f} s   ratio {fc / TARGET_SWITCH_S:5.2f}x of target   "
              f"(a person who read the Overview first)")
    for t, v in switches.items():
        print(f"      {t:<24} {v:6.2f} s   {v / fs:5.2f}x of floor")
    if "search_browser" in res:
        sb, ss, fl = med(res["search_browser"]), res["server"], res["floor"]
        print(f"   explorer substring search, browser   {sb:7.2f} s   target {TARGET_SEARCH_S:.1f} s  "
              f"ratio {sb / TARGET_SEARCH_S:5.2f}x of target   (floor of a rerun: the page switch's, {fs:.2f} s)")
        print(f"   explorer substring search, server    {ss:7.2f} s   floor (one DuckDB scan of the searched columns) "
              f"{fl:.2f} s   ratio {ss / fl:5.2f}x of floor")
    if res.get("reruns"):
        v = res["reruns"]
        print(f"   Overview server render, {len(v)} reruns  median {med(v):.0f} ms  p90 {_pct(v, 0.9)} ms  "
              f"p99 {_pct(v, 0.99)} ms  max {max(v)} ms")
    print(f"   machine: {os.cpu_count()} CPUs, 1-min load average {res['load'][0]:.1f} before, "
          f"{res['load'][1]:.1f} after the run")


def _tree_label(tree: Path) -> str:
    return "after (this checkout)" if tree == ROOT else f"before ({tree})"


def compare(after: dict, before: dict) -> None:
    """after / before, as the median over rounds of each round's ratio (the two ran in the same round, one
    after the other, so they saw the same load)."""
    med = statistics.median

    def ratio(a: list[float], b: list[float]) -> str:
        return f"{med(x / y for x, y in zip(a, b)):5.2f}x" if a and b else "    -"

    def per_round(res: dict) -> list[float]:  # each round's median page switch
        return [med(v[r] for v in res["switch"].values()) for r in range(len(res["overview"]))]

    print("\n== after / before, median of the per-round ratios (< 1: after is faster)")
    print(f"   Overview, warm                       {ratio(after['overview'], before['overview'])}   "
          f"(medians {med(after['overview']):.2f} s / {med(before['overview']):.2f} s; without plotly's first load)")
    if after.get("overview_charts") and before.get("overview_charts"):
        print(f"   Overview, warm, charts drawn too     {ratio(after['overview_charts'], before['overview_charts'])}   "
              f"(medians {med(after['overview_charts']):.2f} s / {med(before['overview_charts']):.2f} s)")
    print(f"   page switch, median over pages       {ratio(per_round(after), per_round(before))}   "
          f"(medians {med(per_round(after)):.2f} s / {med(per_round(before)):.2f} s)")
    for t in after["switch"]:
        if t in before["switch"]:
            print(f"      {t:<24} {ratio(after['switch'][t], before['switch'][t])}")
    if after.get("reruns") and before.get("reruns"):
        a, b = after["reruns"], before["reruns"]
        print(f"   Overview server render over reruns   median {med(a):.0f} / {med(b):.0f} ms, p90 {_pct(a, 0.9)} / "
              f"{_pct(b, 0.9)} ms, p99 {_pct(a, 0.99)} / {_pct(b, 0.99)} ms, max {max(a)} / {max(b)} ms (after / before)")
    if "search_browser" in after and "search_browser" in before:
        print(f"   explorer substring search, browser   {ratio(after['search_browser'], before['search_browser'])}   "
              f"(medians {med(after['search_browser']):.2f} s / {med(before['search_browser']):.2f} s)")
        print(f"   explorer substring search, server    {after['server'] / before['server']:5.2f}x   "
              f"(medians {after['server']:.2f} s / {before['server']:.2f} s, not interleaved)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--screenshot", type=Path, default=None, help="save the demo Overview (cold load) here")
    ap.add_argument("--skip-demo", action="store_true")
    ap.add_argument("--before", type=Path, default=None,
                    help="a checkout of the version to compare with (e.g. `git archive fe735d5 | tar -x -C DIR`): "
                         "the 1M-event set is measured on both, rounds interleaved, with after/before ratios")
    ap.add_argument("--reruns", type=int, default=0,
                    help="also time the Overview's server render over this many reruns per version (1M set)")
    ap.add_argument("--server-search", type=Path, default=None, help=argparse.SUPPRESS)  # the child of a --before run
    args = ap.parse_args(argv)
    if args.server_search is not None:
        print(json.dumps(search_on_server(args.server_search, SEARCH_TEXT, args.rounds)))
        return 0
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium") or "/usr/bin/chromium"
    tmp = Path(tempfile.mkdtemp(prefix="dash-bench-"))
    try:
        sets = []
        if not args.skip_demo:
            t = time.perf_counter()
            d, src = demo_data(tmp)
            sets.append(("demo", d, src + f"; built in {time.perf_counter() - t:.1f} s", args.screenshot))
        t = time.perf_counter()
        big = synthesize(tmp / "big", args.events)
        rows = json.loads((big / "manifest.json").read_text())["row_counts"]
        src = (f"synthetic tables from {args.events:,} outcome records (built in {time.perf_counter() - t:.1f} s; "
               f"rows: " + ", ".join(f"{k} {v:,}" for k, v in rows.items()) + ")")
        sets.append((f"{args.events:,} events", big, src, None))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
            for label, d, src, shot in sets:
                trees = (ROOT, args.before.resolve()) if d is big and args.before else (ROOT,)
                results = measure(browser, d, args.rounds, shot, search=d is big, trees=trees,
                                  reruns=args.reruns if d is big else 0)
                for res in results:
                    report(label if len(results) == 1 else f"{label}, {_tree_label(res['tree'])}", src, res)
                if len(results) == 2:
                    compare(*results)
            browser.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
