"""collect_cloudwatch: the standard tables from CloudWatch Logs Insights, plus metrics and stuck keys.

Incremental: windows lie on a fixed grid (``window_s``, default 1 hour); a window whose query completed and that ended
more than ``settle_s`` before the run is recorded complete in the manifest and never queried again (unless the query
text or the set of log groups changes). Recent windows are collected but recorded ``partial`` and re-queried next
time (CloudWatch accepts late events). ``whole`` tables (stuck_keys) are re-queried on every run over that run's range
(``--since`` .. ``--until``), because their rows depend on every event of the range (see ``merge``); keeping the range
of the run (not everything ever collected) keeps their scan cost bounded.
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
from collector.cloudwatch.cost import CostModel
from collector.cloudwatch.exceptions import CloudWatchCollectorError
from collector.cloudwatch.log_groups import discover_log_groups
from collector.cloudwatch.merge import merge_frames, spec_for
from collector.cloudwatch.runner import LogsInsightsRunner, ProgressEvent, QueryJob, RunnerConfig
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


def collect_cloudwatch(out: Path, options: CollectOptions, target: AwsTarget | None = None, *,
                       clients: Clients | None = None, on_progress: Callable[[ProgressEvent], None] | None = None,
                       now: Callable[[], float] = time.time) -> dict[str, Any]:
    """Collect into ``out`` (tables/*.parquet + manifest.json) and return the manifest (see ``manifest``).

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
    log_groups = discover_log_groups(clients.logs, options.log_groups, options.log_group_prefixes)
    lg_sha = mf.sha256("\n".join(log_groups))
    start, end = align_range(options.since, options.until if options.until is not None else t_now, BIN_S)
    if end < start:
        raise CloudWatchCollectorError("the time range is empty (since is after until)")
    prev = {} if options.full else mf.load(out)
    prev_tables: dict[str, Any] = prev.get("tables", {})
    prev_range = prev.get("range") or {}
    union = Window(min(start, int(prev_range.get("start", start))), max(end, int(prev_range.get("end", end))))

    # -------------------------------------------------------------- plan
    jobs: list[QueryJob] = []
    names: list[str] = []
    for name, query in queries.items():
        if name not in TABLES:
            raise CloudWatchCollectorError(f"unknown table {name!r}: not in collector/tables.py")
        spec = spec_for(name)
        entry = prev_tables.get(name, {})
        if entry.get("query_sha256") != mf.sha256(query) or entry.get("log_groups_sha256") != lg_sha:
            entry = {}
            _drop_parts(out, name)
            prev_tables.pop(name, None)
        if spec.windowed:
            done = mf.windows_of(entry, "complete") + mf.windows_of(entry, "truncated")
            todo = tuple(missing(plan_windows(start, end, options.window_s), done))
        else:
            todo = (Window(start, end),)  # this run's range: bounded cost, not everything ever collected
        names.append(name)
        jobs.append(QueryJob(query, tuple(log_groups), todo, spec.split_align_s))

    # -------------------------------------------------------------- run
    runner = LogsInsightsRunner(clients.logs, options.runner, on_progress=on_progress)
    results = runner.run_jobs(jobs)

    # -------------------------------------------------------------- write
    tables_out: dict[str, Any] = {}
    total = QueryStats()
    settled_before = t_now - options.settle_s
    for name, job, res in zip(names, jobs, results):
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
            "queried_windows": len(job.windows), "queries": sum(len(r.attempts) for r in res),
            "query_sha256": mf.sha256(job.query), "log_groups_sha256": lg_sha,
            "conversion": conv.to_json(), "unmerged_duplicates": dups, "stats": stats.to_json(),
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
                 "api_calls": dict(runner.api_calls), "stats": total.to_json(), "cost_usd": round(cost_usd, 6)}
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
            "all_runs": {"api_calls": dict(api_total), "stats": stats_total.to_json(),
                         "cost_usd": round(options.cost.insights_usd(stats_total.bytes_scanned), 6)},
            "price_per_gb_usd": options.cost.price_per_gb_scanned,
        },
        **extra,
        "runs": runs,
    }
    mf.save(out, manifest)
    return manifest


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
