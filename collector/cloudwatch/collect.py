"""collect_cloudwatch: the standard tables from CloudWatch Logs Insights, plus metrics and stuck keys.

Scans: the standard queries that start with ``filter`` share one Logs Insights query per window and log-group batch
(``scan``): it returns the events any of them reads, each byte of the window is scanned once, and each table is its
standard query run by the offline engine over those events. Other queries (``--query-file`` texts that do not start
with ``filter``) run on their own, as does every query with ``combine=False`` (``--separate-queries``). When every
combined table reads only emitter records and a log group's field index policy covers a window, its scan uses
``filterIndex`` (``index_policy``) and reads only those records.

Incremental: windows lie on a fixed grid (``window_s``, default 1 hour); a window whose query completed and that ended
more than ``settle_s`` before the run is recorded complete in the manifest and never queried again (unless the query
text or the set of log groups changes). Recent windows are collected but recorded ``partial`` and re-queried next
time (CloudWatch accepts late events). Scanned events are kept per window (``scan_store``): a table computed from a
scan is recomputed from the stored events when its query changes, and ``whole`` tables (stuck_keys), whose rows
depend on every event of the run's range (``--since`` .. ``--until``), read the stored windows instead of scanning the
range again. A ``whole`` table that runs on its own is queried over the run's range on every run (see ``merge``).

``dry_run``: everything up to the queries (log groups, stored bytes, windows to scan) and an estimate of the bytes
and USD the run would scan (``cost.estimate``); nothing is queried or written.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from collector.cloudwatch import manifest as mf
from collector.cloudwatch.constants import BIN_S, DEFAULT_SETTLE_S, DEFAULT_WINDOW_S
from collector.cloudwatch.cost import CostModel, estimate
from collector.cloudwatch.exceptions import CloudWatchCollectorError
from collector.cloudwatch.index_policy import IndexCoverage, read_coverage
from collector.cloudwatch.log_groups import describe_log_groups
from collector.cloudwatch.merge import merge_frames, spec_for
from collector.cloudwatch.runner import LogsInsightsRunner, ProgressEvent, QueryJob, RunnerConfig
from collector.cloudwatch.scan import (
    EMITTER_FIELD,
    Combined,
    combine,
    evaluate,
    events_from_rows,
    filter_sha,
    scan_query,
)
from collector.cloudwatch.scan_store import SETTLED, ScanLedger, ScanPart, add_events, build_store, drop_all
from collector.cloudwatch.types import QueryStats, WindowResult
from collector.cloudwatch.windows import Window, align_range, missing, plan_windows
from collector.parquet import ConversionReport, arrow_schema, frame_from_arrow, to_arrow, write_parquet
from collector.postprocess import POST_PROCESS, split_log_identifier, stuck_key_ages
from collector.standard_queries import load_standard_queries
from collector.tables import TABLES
from idemwatch.aws import AwsTarget


@dataclass
class CollectOptions:
    """What to collect. Times are epoch seconds, inclusive; ``until`` None = now.

    ``queries``: {table: Logs Insights query} (default: the standard query files). ``window_s``: grid window size
    (multiple of 60). ``full``: ignore earlier windows (collect everything again).
    ``combine``: standard queries starting with ``filter`` share one scan per window (``scan``); False runs each
    query on its own (ten times the bytes for the standard set). ``use_indexes``: read the log groups' field index
    policies and scan covered windows with ``filterIndex``.
    ``metrics``/``idempotency``: options for ``metrics.collect_metrics`` / ``stuck_keys.scan_stuck_keys`` (None = skip).
    """

    since: int
    until: int | None = None
    log_groups: Sequence[str] = ()
    log_group_prefixes: Sequence[str] = ()
    queries: Mapping[str, str] | None = None
    window_s: int = DEFAULT_WINDOW_S
    settle_s: int = DEFAULT_SETTLE_S
    runner: RunnerConfig = field(default_factory=RunnerConfig)
    cost: CostModel = field(default_factory=CostModel)
    full: bool = False
    combine: bool = True
    use_indexes: bool = True
    metrics: Any = None
    idempotency: Any = None


@dataclass
class Clients:
    """boto3 clients used by a collection (``logs`` must have botocore retries off: the runner retries)."""

    logs: Any
    cloudwatch: Any = None
    dynamodb: Any = None

    @classmethod
    def create(cls, target: AwsTarget, need_metrics: bool = False, need_dynamodb: bool = False) -> Clients:
        session = target.session()
        return cls(
            logs=target.client("logs", session, retries=1),
            cloudwatch=target.client("cloudwatch", session) if need_metrics else None,
            dynamodb=target.client("dynamodb", session) if need_dynamodb else None,
        )


@dataclass
class _TablePlan:
    """One table of this run: its query, the windows to (re)compute, and whether a shared scan serves it."""

    name: str
    query: str
    todo: tuple[Window, ...]
    combined: bool


@dataclass
class _ScanPlan:
    """The shared scans of this run: ``needed`` {window: filter hashes some table needs there}, the windows to scan
    (``to_scan``, the rest come from stored scans), their query jobs and the index coverage read."""

    combined: Combined
    ledger: ScanLedger
    filter_shas: dict[str, str]
    filter_set: str
    needed: dict[Window, set[str]] = field(default_factory=dict)
    to_scan: list[Window] = field(default_factory=list)
    jobs: list[QueryJob] = field(default_factory=list)
    indexed: int = 0  # (window, log group) pairs scanned with filterIndex
    coverage: IndexCoverage | None = None


def collect_cloudwatch(out: Path, options: CollectOptions, target: AwsTarget | None = None, *,
                       clients: Clients | None = None, on_progress: Callable[[ProgressEvent], None] | None = None,
                       now: Callable[[], float] = time.time, dry_run: bool = False) -> dict[str, Any]:
    """Collect into ``out`` (tables/*.parquet + manifest.json) and return the manifest (see ``manifest``); with
    ``dry_run``, query and write nothing and return the plan with its estimated cost (``cost.estimate``).

    Raises CloudWatchCollectorError (a collection that cannot run as asked) and ``idemwatch.aws.AwsError``
    subclasses (missing credentials, access denied, unknown log group, throttled account, malformed query or
    response), each with a one-line message. Windows whose queries failed are recorded ``failed`` and
    collected again on the next run; the rest of the collection still completes.
    """
    if options.window_s <= 0 or options.window_s % BIN_S:
        raise CloudWatchCollectorError(f"window size must be a positive multiple of {BIN_S} s")
    started_at = mf.now_iso()
    t_now = int(now())
    clients = clients or Clients.create(target or AwsTarget(), need_metrics=options.metrics is not None,
                                        need_dynamodb=options.idempotency is not None)
    queries = dict(options.queries) if options.queries is not None else load_standard_queries()
    for name in queries:
        if name not in TABLES:
            raise CloudWatchCollectorError(f"unknown table {name!r}: not in collector/tables.py")
    group_info = describe_log_groups(clients.logs, options.log_groups, options.log_group_prefixes)
    log_groups = list(group_info)
    lg_sha = mf.sha256("\n".join(log_groups))
    start, end = align_range(options.since, options.until if options.until is not None else t_now, BIN_S)
    if end < start:
        raise CloudWatchCollectorError("the time range is empty (since is after until)")
    prev = {} if options.full else mf.load(out)
    prev_tables: dict[str, Any] = prev.get("tables", {})
    prev_range = prev.get("range") or {}
    union = Window(min(start, int(prev_range.get("start", start))), max(end, int(prev_range.get("end", end))))
    settled_before = t_now - options.settle_s

    # -------------------------------------------------------------- plan
    combined = combine(queries)[0] if options.combine else Combined({}, False)
    plans: list[_TablePlan] = []
    for name, query in queries.items():
        spec = spec_for(name)
        entry = prev_tables.get(name, {})
        if entry.get("query_sha256") != mf.sha256(query) or entry.get("log_groups_sha256") != lg_sha:
            entry = {}
            if not dry_run:
                _drop_parts(out, name)
            prev_tables.pop(name, None)
        if spec.windowed:
            # a window counts as done only while its piece exists: a run killed after dropping pieces (a changed
            # query, --full) and before writing its manifest leaves the old manifest naming pieces that are gone
            done = [w for w in mf.windows_of(entry, "complete") + mf.windows_of(entry, "truncated")
                    if mf.part_path(out, name, w).exists()]
            todo = tuple(missing(plan_windows(start, end, options.window_s), done))
        else:
            todo = (Window(start, end),)  # this run's range: bounded cost, not everything ever collected
        plans.append(_TablePlan(name, query, todo, name in combined.filters))
    ledger = ScanLedger.from_json(None if options.full else prev.get("scan"), lg_sha, out)
    if ledger.stale and not dry_run:
        drop_all(out)
    scan = _plan_scans(combined, ledger, plans, log_groups, start, end, options, clients.logs, t_now, dry_run)
    jobs = [QueryJob(p.query, tuple(log_groups), p.todo, spec_for(p.name).split_align_s) for p in plans
            if not p.combined]
    if dry_run:
        return estimate(group_info, [(p.name, p.todo) for p in plans if not p.combined],
                        [(j.windows, j.log_groups) for j in scan.jobs], sorted(combined.filters), options.cost,
                        t_now, indexed=scan.indexed)

    # -------------------------------------------------------------- run
    runner = LogsInsightsRunner(clients.logs, options.runner, on_progress=on_progress)
    all_results = runner.run_jobs(jobs + scan.jobs)
    own_results = dict(zip([p.name for p in plans if not p.combined], all_results[:len(jobs)]))
    scan_results = all_results[len(jobs):]
    scan_stats = QueryStats()
    for res in scan_results:
        for r in res:
            scan_stats.add(r.stats)
    combined_results, scan_report = _tables_from_scans(out, scan, plans, scan_results, start, end, settled_before,
                                                        _account_of(group_info))
    scan_report["stats"] = scan_stats.to_json()
    scan_report["cost_usd"] = round(options.cost.insights_usd(scan_stats.bytes_scanned), 6)

    # -------------------------------------------------------------- write
    tables_out: dict[str, Any] = {}
    total = QueryStats()
    total.add(scan_stats)
    for plan in plans:
        name = plan.name
        res = combined_results[name] if plan.combined else own_results[name]
        spec = spec_for(name)
        table = TABLES[name]
        entry = prev_tables.get(name, {})
        state = {k: mf.windows_of(entry, k) for k in ("complete", "partial", "truncated", "failed")}
        conv = ConversionReport()
        stats = QueryStats()
        dups = 0
        dropped = 0
        capped_subs: list[Window] = []
        errors: list[str] = []
        by_window: dict[Window, list[WindowResult]] = {}
        for r in res:
            by_window.setdefault(r.window, []).append(r)
            stats.add(r.stats)
        fresh: dict[Window, pd.DataFrame] = {}
        for w, parts in sorted(by_window.items()):
            raw = [row for p in parts for row in p.rows]
            if name in POST_PROCESS:
                raw, n_dropped = POST_PROCESS[name](raw)
                dropped += n_dropped
            arrow, rep = to_arrow(raw, table)
            arrow = split_log_identifier(arrow)  # @log as log_group: "account-id:log-group-name"
            conv.add(rep)
            merged = merge_frames(table, spec, [frame_from_arrow(arrow)])
            dups += merged.unmerged_duplicates
            statuses = {p.status for p in parts}
            for k, ws in list(state.items()):  # this window's new state replaces whatever overlapped it before
                state[k] = [x for x in ws if x.end < w.start or x.start > w.end]
            if "failed" in statuses:
                state["failed"].append(w)
                errors.extend(p.error for p in parts if p.error)
                continue
            if spec.windowed:
                _drop_overlapping_parts(out, name, w)
                write_parquet(merged.frame, table, mf.part_path(out, name, w))
            else:
                fresh[w] = merged.frame
            if "truncated" in statuses:
                state["truncated"].append(w)
                capped_subs.extend(x for p in parts for x in p.truncated_windows)
            elif w.end <= settled_before:
                state["complete"].append(w)
            else:
                state["partial"].append(w)
        if not plan.combined:
            total.add(stats)
        # the table = every collected piece
        if spec.windowed:
            frames = [pd.read_parquet(p) for p in sorted((out / mf.PARTS_DIR / name).glob("*.parquet"))]
            frames = [_retype(f, table) for f in frames]
        else:
            frames = list(fresh.values())
        merged_all = merge_frames(table, spec, frames) if frames or not (out / "tables" / f"{name}.parquet").exists() \
            else None
        if merged_all is not None:
            dups += merged_all.unmerged_duplicates
            data = pa.Table.from_pandas(merged_all.frame, schema=arrow_schema(table), preserve_index=False)
            if name == "stuck_keys":
                data = stuck_key_ages(data, (options.until if options.until is not None else t_now) * 1000)
            rows = write_parquet(data, table, out / "tables" / f"{name}.parquet")
        else:  # a whole-range query failed this time: keep the previous table, say so
            rows = int(entry.get("rows", 0))
        status = ("failed" if state["failed"] else "truncated" if state["truncated"]
                  else "partial" if state["partial"] else "complete")
        tables_out[name] = {
            "rows": rows, "status": status,
            "windows": {k: [[x.start, x.end] for x in sorted(v)] for k, v in state.items()},
            "queried_windows": len(plan.todo), "queries": sum(len(r.attempts) for r in res),
            "query_sha256": mf.sha256(plan.query), "log_groups_sha256": lg_sha,
            # a table of the shared scan has no query of its own: its bytes are the scan's (manifest "scan")
            "source": "scan" if plan.combined else "query",
            "conversion": conv.to_json(), "unmerged_duplicates": dups,
            "stats": (scan_stats if plan.combined else stats).to_json(),
            **({"dropped_values": dropped} if name in POST_PROCESS else {}),
            "errors": errors[:20],
            # the smallest windows still at the row limit (rows beyond the limit are missing there)
            "truncated_sub_windows": [[x.start, x.end] for x in sorted(capped_subs)][:100],
        }

    # -------------------------------------------------------------- metrics / stuck keys
    extra: dict[str, Any] = {}
    if options.metrics is not None:
        from collector.cloudwatch.metrics import collect_metrics

        extra["metrics"] = collect_metrics(clients.cloudwatch, out, options.metrics, start, end,
                                           log_groups=log_groups, cost=options.cost)
    if options.idempotency is not None:
        from collector.cloudwatch.stuck_keys import collect_stuck_keys

        extra["idempotency_table"] = collect_stuck_keys(clients.dynamodb, out, options.idempotency, now_s=t_now)

    cost_usd = options.cost.insights_usd(total.bytes_scanned)
    run_entry = {"started_at": started_at, "finished_at": mf.now_iso(), "range": [start, end],
                 "queries": sum(runner.api_calls.get(k, 0) for k in ("StartQuery",)),
                 "api_calls": dict(runner.api_calls + Counter(
                     {"DescribeIndexPolicies": scan.coverage.calls} if scan.coverage and scan.coverage.calls else {})),
                 "stats": total.to_json(), "cost_usd": round(cost_usd, 6)}
    runs = list(prev.get("runs", []))[-49:] + [run_entry]
    api_total: Counter[str] = Counter()
    stats_total = QueryStats()
    for r in runs:
        api_total.update(r.get("api_calls", {}))
        stats_total.add(QueryStats(**r.get("stats", {})))
    iso = mf.iso_from_epoch_s
    manifest: dict[str, Any] = {
        "source": "cloudwatch",
        "collector": "cloudwatch",
        "collected_at": mf.now_iso(),
        "generated_at": mf.now_iso(),
        "time_window": {"since": iso(union.start), "until": iso(union.end), "window_end":
                        iso(options.until if options.until is not None else t_now)},
        "truncated": sorted(n for n, e in tables_out.items() if e["status"] == "truncated"),
        "range": {"start": union.start, "end": union.end},
        "region": getattr(getattr(clients.logs, "meta", None), "region_name", None),
        "log_groups": log_groups,
        "window_s": options.window_s,
        "tables": tables_out,
        "queries": {
            "paginated_results": runner.paginate, "row_limit_per_query": runner.limit,
            "concurrency": runner.report(),
            "this_run": run_entry,
            "by_query": _by_query(tables_out, scan_report, options.cost),
            "all_runs": {"api_calls": dict(api_total), "stats": stats_total.to_json(),
                         "cost_usd": round(options.cost.insights_usd(stats_total.bytes_scanned), 6)},
            "price_per_gb_usd": options.cost.price_per_gb_scanned,
        },
        "scan": {**ledger.to_json(), "this_run": scan_report},
        **extra,
        "runs": runs,
    }
    mf.save(out, manifest)
    return manifest


def _plan_scans(combined: Combined, ledger: ScanLedger, plans: Sequence[_TablePlan], log_groups: Sequence[str],
                start: int, end: int, options: CollectOptions, logs: Any, now_s: int, dry_run: bool) -> _ScanPlan:
    """Which windows the combined tables need, which of them stored scans already serve, and the queries that scan
    the rest: one per window and log-group batch, with ``filterIndex`` for the groups whose index covers the window
    when every combined table reads only emitter records."""
    shas = {n: filter_sha(f) for n, f in combined.filters.items()}
    scan = _ScanPlan(combined, ledger, shas, ledger.filter_set(shas.values()))
    if not combined.filters:
        return scan
    for p in plans:
        if not p.combined:
            continue
        wins = p.todo if spec_for(p.name).windowed else plan_windows(start, end, options.window_s)
        for w in wins:
            scan.needed.setdefault(w, set()).add(shas[p.name])
    scan.to_scan = [w for w in sorted(scan.needed) if not ledger.covered(w, scan.needed[w])]
    if not scan.to_scan:
        return scan
    filters = list(combined.filters.values())
    if combined.emitter_only and options.use_indexes and not dry_run:
        scan.coverage = read_coverage(logs, log_groups)
    by_job: dict[tuple[str, tuple[str, ...]], list[Window]] = {}
    indexed_query, plain_query = scan_query(filters, indexed=True), scan_query(filters)
    for w in scan.to_scan:
        covered = [g for g in log_groups if scan.coverage and scan.coverage.covers(g, EMITTER_FIELD, w, now_s)]
        rest = [g for g in log_groups if g not in covered]
        scan.indexed += len(covered)
        if covered:
            by_job.setdefault((indexed_query, tuple(covered)), []).append(w)
        if rest:
            by_job.setdefault((plain_query, tuple(rest)), []).append(w)
    scan.jobs = [QueryJob(q, groups, tuple(ws), 1) for (q, groups), ws in by_job.items()]
    return scan


def _tables_from_scans(out: Path, scan: _ScanPlan, plans: Sequence[_TablePlan],
                       scan_results: Sequence[Sequence[WindowResult]], start: int, end: int,
                       settled_before: int, account_id: str | None) -> tuple[dict[str, list[WindowResult]],
                                                                             dict[str, Any]]:
    """Store what the scans returned (per window), then compute every combined table's windows from the scanned
    events (``account_id``: the log groups' account) with the offline engine. Returns {table: WindowResult per window, as if Logs Insights had answered the
    table's own query} and the scan section of this run's manifest."""
    by_window: dict[Window, list[WindowResult]] = {}
    for res in scan_results:
        for r in res:
            by_window.setdefault(r.window, []).append(r)
    fresh: set[Window] = set()
    failed: dict[Window, str] = {}
    bad_rows = 0
    queries = 0
    for w in scan.to_scan:
        parts = by_window.get(w, [])
        queries += sum(len(r.attempts) for r in parts)
        if any(r.status == "failed" for r in parts):
            failed[w] = "; ".join(sorted({r.error or "scan failed" for r in parts if r.status == "failed"}))
            scan.ledger.forget(out, w)
            continue
        events, bad = events_from_rows([row for r in parts for row in r.rows])
        for r in parts:
            r.rows = []  # kept on disk from here: memory holds one window's events at a time
        bad_rows += bad
        truncated = sorted(t for r in parts for t in r.truncated_windows)
        state = "truncated" if truncated else "complete" if w.end <= settled_before else "partial"
        scan.ledger.record(out, ScanPart(w, state, scan.filter_set, truncated, len(events)), events)
        fresh.add(w)
    report: dict[str, Any] = {
        "tables": sorted(scan.combined.filters), "emitter_only": scan.combined.emitter_only,
        "windows_needed": len(scan.needed), "windows_scanned": len(scan.to_scan),
        "windows_from_earlier_scans": len(scan.needed) - len(scan.to_scan), "windows_failed": len(failed),
        "queries": queries, "indexed_group_windows": scan.indexed, "bad_rows": bad_rows,
        **({"field_indexes": scan.coverage.to_json()} if scan.coverage is not None else {}),
    }
    out_results: dict[str, list[WindowResult]] = {}
    if not scan.needed:
        return {p.name: [] for p in plans if p.combined}, report

    available = {w for w, need in scan.needed.items()
                 if w in fresh or (w not in failed and scan.ledger.covered(w, need, SETTLED + ("partial",)))}
    store = build_store([], account_id)
    try:
        for w in sorted(available):
            add_events(store, scan.ledger.events(out, w, scan.needed[w]))
        for p in plans:
            if not p.combined:
                continue
            wins = p.todo if spec_for(p.name).windowed else (Window(start, end),)
            results = []
            for w in wins:
                inside = [x for x in scan.needed if w.start <= x.start and x.end <= w.end]
                lost = [x for x in inside if x not in available]
                if lost:
                    why = sorted({failed.get(x, "not scanned") for x in lost})
                    results.append(WindowResult(window=w, log_groups=(), status="failed",
                                                error=f"scan of [{w.start}, {w.end}] failed: {'; '.join(why)}"))
                    continue
                truncated = sorted(t for x in inside for t in scan.ledger.truncated_in(x))
                results.append(WindowResult(window=w, log_groups=(), rows=evaluate(store, p.query, w),
                                            status="truncated" if truncated else "complete",
                                            truncated_windows=truncated, sub_windows=[w]))
            out_results[p.name] = results
    finally:
        store.close()
    return out_results, report


def _account_of(groups: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The account of the log groups, from their ARNs (``arn:aws:logs:<region>:<account>:log-group:...``)."""
    for g in groups.values():
        parts = str(g.get("arn") or "").split(":")
        if len(parts) > 4 and parts[4].isdigit():
            return parts[4]
    return None


def _by_query(tables: Mapping[str, Any], scan_report: Mapping[str, Any], cost: CostModel) -> dict[str, Any]:
    """Bytes scanned and USD of this run per query: the shared scan (naming its tables) and each table queried on
    its own. Each byte billed appears once."""
    out: dict[str, Any] = {}
    if scan_report.get("tables"):
        out["scan"] = {"tables": scan_report["tables"], "queries": scan_report["queries"],
                       "bytes_scanned": scan_report["stats"]["bytes_scanned"], "cost_usd": scan_report["cost_usd"]}
    for name, e in tables.items():
        if e["source"] == "query":
            b = e["stats"]["bytes_scanned"]
            out[name] = {"tables": [name], "queries": e["queries"], "bytes_scanned": b,
                         "cost_usd": round(cost.insights_usd(b), 6)}
    return out


def _retype(df: pd.DataFrame, table: Any) -> pd.DataFrame:
    """Parquet read-back with the nullable dtypes ``to_frame`` produces (so pieces concatenate cleanly)."""
    return frame_from_arrow(pa.Table.from_pandas(df, schema=arrow_schema(table), preserve_index=False))


def _drop_parts(out: Path, table: str) -> None:
    d = out / mf.PARTS_DIR / table
    if d.is_dir():
        for p in d.glob("*.parquet"):
            p.unlink()


def _drop_overlapping_parts(out: Path, table: str, w: Window) -> None:
    d = out / mf.PARTS_DIR / table
    if not d.is_dir():
        return
    for p in d.glob("*.parquet"):
        try:
            other = Window.from_key(p.stem)
        except ValueError:
            continue
        if not (other.end < w.start or other.start > w.end):
            p.unlink()
