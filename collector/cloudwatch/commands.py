"""``idemwatch collect cloudwatch``: the standard tables from CloudWatch Logs Insights (+ metrics, stuck keys)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from collector.cloudwatch.constants import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_PRICE_PER_GB_SCANNED_USD,
    DEFAULT_QUERY_DEADLINE_S,
    DEFAULT_SCAN_SEGMENTS,
    DEFAULT_WINDOW_S,
)
from idemwatch.options import duration_option_value, require_range, time_option_value
from idemwatch.terminal import cell, echo


def parse_duration_s(text: str, flag: str = "duration") -> int:
    """``90s``, ``15m``, ``24h``, ``7d``, ``1w`` -> whole seconds (``idemwatch.timerange``). Raises click.BadParameter
    naming ``flag``."""
    return int(duration_option_value(text, flag))


def parse_time_s(text: str, now: float, flag: str = "--since") -> int:
    """A time option (``idemwatch.timerange`` forms; durations count back from ``now``) -> epoch seconds (int).
    Raises click.BadParameter naming ``flag``."""
    return int(time_option_value(text, flag, now=now))


@click.command("cloudwatch")
@click.option("--log-group", "log_groups", multiple=True, metavar="NAME", help="Log group to query (repeatable).")
@click.option("--log-group-prefix", "prefixes", multiple=True, metavar="PREFIX",
              help="Query every log group whose name starts with PREFIX (repeatable), e.g. /aws/lambda/orders-.")
@click.option("--since", default="24h", show_default=True, help="Start: duration ago (24h, 7d), ISO-8601 or epoch s.")
@click.option("--until", default=None, help="End (inclusive): same forms as --since; default now.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Data directory: tables/*.parquet and manifest.json are written here.")
@click.option("--table", "tables", multiple=True, help="Only these standard tables (repeatable); default all.")
@click.option("--query-file", "query_files", multiple=True, metavar="TABLE=PATH",
              help="Use the Logs Insights query in PATH for TABLE instead of the standard one (repeatable).")
@click.option("--metrics/--no-metrics", default=False, help="Also collect CloudWatch metrics (GetMetricData).")
@click.option("--namespace", default=None,
              help="This project's metric namespace (default: $IDEMWATCH_NAMESPACE, $POWERTOOLS_METRICS_NAMESPACE, "
                   "else Idempotency).")
@click.option("--queue", "queues", multiple=True, help="SQS queue for ApproximateAgeOfOldestMessage (repeatable).")
@click.option("--dlq", "dlqs", multiple=True, help="SQS DLQ for ApproximateNumberOfMessagesVisible (repeatable).")
@click.option("--idempotency-table", default=None, metavar="TABLE", help="DynamoDB idempotency table to scan.")
@click.option("--schema", type=click.Choice(["powertools", "record"]), default="powertools", show_default=True,
              help="Attribute preset of the idempotency table.")
@click.option("--key-attr", default=None, help="Override: idempotency key attribute.")
@click.option("--status-attr", default=None, help="Override: status attribute.")
@click.option("--in-progress-value", default=None, help="Override: status value of a claimed record.")
@click.option("--expiry-attr", default=None, help="Override: in-progress expiry attribute.")
@click.option("--expiry-unit", type=click.Choice(["ms", "s"]), default=None, help="Override: unit of the expiry.")
@click.option("--segments", default=DEFAULT_SCAN_SEGMENTS, show_default=True, help="Parallel Scan segments.")
@click.option("--max-concurrency", "--concurrency", "max_concurrency", type=click.IntRange(1, 100),
              default=DEFAULT_MAX_CONCURRENCY, show_default=True,
              help="Most Logs Insights queries in flight at once. The collector starts with 2, grows while queries "
                   "start and halves when the account's quota (30 concurrent queries, shared with dashboards and "
                   "people) is full; the default leaves half of it to them.")
@click.option("--window", "window", default=f"{DEFAULT_WINDOW_S // 3600}h", show_default=True,
              help="Collection window size (multiple of 1m); capped windows are split further.")
@click.option("--query-timeout", default=f"{int(DEFAULT_QUERY_DEADLINE_S // 60)}m", show_default=True,
              help="Our deadline per query; StopQuery is called and the window split when it passes.")
@click.option("--price-per-gb", type=float, default=DEFAULT_PRICE_PER_GB_SCANNED_USD, show_default=True,
              help="Logs Insights price in USD per GB scanned (us-east-1 public price by default).")
@click.option("--full", is_flag=True, help="Ignore earlier runs in --out and collect every window again.")
@click.option("--separate-queries", is_flag=True,
              help="Run every standard query in Logs Insights on its own instead of one shared scan per window "
                   "(about ten times the bytes scanned; the tables are the same).")
@click.option("--field-indexes/--no-field-indexes", "field_indexes", default=True, show_default=True,
              help="Read the log groups' field index policies and scan indexed windows with filterIndex "
                   "(needs logs:DescribeIndexPolicies; without it the scans read every event).")
@click.option("--dry-run", is_flag=True,
              help="Print the windows to scan and the estimated bytes and USD (from DescribeLogGroups stored bytes "
                   "and the range); run no query, write nothing.")
@click.option("--deadline", default=None, metavar="DURATION",
              help="Bound the wall time of all Logs Insights queries (e.g. 10m): queries still running then are "
                   "stopped and their windows recorded failed.")
@click.option("--allow-partial", is_flag=True,
              help="Exit 0 even when a table is incomplete (a window failed or stayed truncated).")
@click.option("--profile", default=None, help="AWS profile (standard boto3 credential chain otherwise).")
@click.option("--region", default=None, help="AWS Region.")
@click.option("--endpoint-url", default=None, help="Endpoint URL (LocalStack, a test server).")
@click.option("--role-arn", default=None, help="IAM role to assume (e.g. to read another account).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def cloudwatch(log_groups, prefixes, since, until, out, tables, query_files, metrics, namespace, queues, dlqs, idempotency_table,
               schema, key_attr, status_attr, in_progress_value, expiry_attr, expiry_unit, segments, max_concurrency,
               window, query_timeout, price_per_gb, full, separate_queries, field_indexes, dry_run, deadline,
               allow_partial, profile, region, endpoint_url, role_arn, no_progress) -> None:
    """Collect the standard tables from CloudWatch Logs Insights into OUT (incremental)."""
    from collector.cloudwatch.collect import CollectOptions
    from collector.cloudwatch.cost import CostModel
    from collector.cloudwatch.metrics import MetricsOptions
    from collector.cloudwatch.runner import RunnerConfig
    from collector.cloudwatch.stuck_keys import StuckKeysOptions, schema_from
    from collector.exceptions import CollectError
    from collector.standard_queries import load_standard_queries
    from emitter.contract import resolve_namespace
    from idemwatch.aws import AwsError, AwsTarget

    if not log_groups and not prefixes:
        raise click.UsageError("give --log-group NAME or --log-group-prefix PREFIX")
    now = time.time()
    window_s = parse_duration_s(window, "--window")
    since_s, until_s = parse_time_s(since, now), parse_time_s(until, now, "--until") if until else None
    require_range(since_s, until_s if until_s is not None else now, ("--since", "--until"))
    opts = CollectOptions(
        since=since_s, until=until_s,
        log_groups=log_groups, log_group_prefixes=prefixes, window_s=window_s, full=full,
        combine=not separate_queries, use_indexes=field_indexes,
        runner=RunnerConfig(max_concurrency=max_concurrency, deadline_s=float(parse_duration_s(query_timeout, "--query-timeout")),
                            overall_deadline_s=float(parse_duration_s(deadline, "--deadline")) if deadline else None),
        cost=CostModel(price_per_gb_scanned=price_per_gb),
        metrics=MetricsOptions(queues=queues, dlqs=dlqs, namespace=resolve_namespace(namespace)) if metrics else None,
        idempotency=StuckKeysOptions(idempotency_table, schema_from(
            schema, key_attr=key_attr, status_attr=status_attr, in_progress_value=in_progress_value,
            in_progress_expiry_attr=expiry_attr, in_progress_expiry_unit=expiry_unit), segments=segments)
        if idempotency_table else None,
    )
    target = AwsTarget(profile=profile, region=region, endpoint_url=endpoint_url, role_arn=role_arn)
    try:
        overrides = dict(_query_file(q) for q in query_files)
        if tables:
            wanted = [t for t in tables if t not in overrides]
            opts.queries = load_standard_queries(wanted) if wanted else {}
        else:
            try:
                opts.queries = load_standard_queries()
            except CollectError:
                if not overrides:
                    raise
                opts.queries = {}
        opts.queries.update(overrides)
        if dry_run:
            from collector.cloudwatch.collect import collect_cloudwatch

            _dry_run_summary(collect_cloudwatch(out, opts, target, dry_run=True))
            return
        manifest = _run_with_progress(out, opts, target, show=not no_progress)
    except (CollectError, AwsError) as exc:
        raise click.ClickException(str(exc)) from None
    _summary(manifest, out)
    bad = incomplete_tables(manifest)
    if bad and not allow_partial:
        raise click.ClickException(
            "incomplete: " + ", ".join(f"{n} ({s})" for n, s in bad.items())
            + "; tables hold what was collected, the next run retries (--allow-partial accepts this)")


def incomplete_tables(manifest: dict) -> dict[str, str]:
    """``{table: status}`` of the tables a collection left incomplete (a window ``failed``, or ``truncated``: rows
    beyond the row limit missing). ``partial`` (recent windows, re-queried next run) is not incomplete."""
    return {n: e["status"] for n, e in manifest["tables"].items() if e["status"] in ("failed", "truncated")}


def _query_file(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise click.BadParameter(f"{spec!r}: expected TABLE=PATH", param_hint="--query-file")
    try:
        return name, Path(path).read_text()
    except OSError as exc:
        raise click.BadParameter(f"cannot read {path}: {exc.strerror}", param_hint="--query-file") from None


def _run_with_progress(out: Path, opts, target, show: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from collector.cloudwatch.collect import collect_cloudwatch

    if not show:
        return collect_cloudwatch(out, opts, target)
    with Progress(TextColumn("[bold]Logs Insights[/]"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[note]}"), TimeElapsedColumn(), transient=False) as progress:
        task = progress.add_task("queries", total=0, note="")
        counts = {"split": 0, "retry": 0, "throttled": 0, "running": 0}

        def on_progress(ev) -> None:
            if ev.kind == "planned":
                progress.update(task, total=(progress.tasks[0].total or 0) + ev.n)
            elif ev.kind == "split":
                counts["split"] += 1
                progress.update(task, total=(progress.tasks[0].total or 0) + 1)  # one task became two
            elif ev.kind == "done":
                progress.advance(task)
            elif ev.kind in counts:
                counts[ev.kind] += 1
            note = f"splits {counts['split']}  retries {counts['retry']}  throttled {counts['throttled']}"
            progress.update(task, note=note)

        return collect_cloudwatch(out, opts, target, on_progress=on_progress)


def _summary(manifest: dict[str, Any], out: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    t = Table(title=cell(f"CloudWatch collection -> {out}"))
    for c in ("table", "rows", "status", "from"):
        t.add_column(c, justify="right" if c == "rows" else "left")
    for name, e in manifest["tables"].items():
        t.add_row(cell(name), str(e["rows"]), cell(e["status"]),
                  "shared scan" if e.get("source") == "scan" else f"own query ({e['queries']})")
    console.print(t)
    q = manifest["queries"]
    price = q["price_per_gb_usd"]
    _cost_table(console, "Logs Insights this run", q.get("by_query", {}), q["this_run"]["stats"]["bytes_scanned"],
                q["this_run"]["cost_usd"], "queries")
    echo(f"API calls: {q['this_run']['api_calls']}  |  cost this run: ${q['this_run']['cost_usd']:.4f} "
         f"(at ${price}/GB scanned)  |  all runs kept: ${q['all_runs']['cost_usd']:.4f}")
    conc = q.get("concurrency") or {}
    if conc:
        echo(f"concurrency: peak {conc['peak_concurrency']} of at most {conc['max_concurrency']}, "
             f"{conc['quota_collisions']} quota collision(s), throttled {conc['throttled']}")
    scan = manifest.get("scan", {}).get("this_run", {})
    for note in (scan.get("field_indexes") or {}).get("notes", []):
        echo(f"note: {note}")
    if scan.get("bad_rows"):
        echo(f"warning: {scan['bad_rows']} scanned row(s) without a readable @timestamp, @message or @log were left "
             "out of the tables (manifest scan.this_run.bad_rows)")
    if "metrics" in manifest:
        m = manifest["metrics"]
        echo(f"metrics: {m['metrics_requested']} requested, {m['datapoints']} datapoints")
    if "idempotency_table" in manifest:
        s = manifest["idempotency_table"]
        echo(f"idempotency table {s['dynamodb_table']}: {s['scanned']} scanned, {s['in_progress']} IN_PROGRESS, "
             f"{s['stuck']} stuck")


def _cost_table(console: Any, title: str, by_query: dict[str, Any], total_bytes: float, total_usd: float,
                count: str) -> None:
    """Bytes scanned and USD per query (the shared scan names its tables) and the total."""
    from rich.table import Table

    t = Table(title=title)
    for c in ("query", "tables", count, "GB scanned", "USD"):
        t.add_column(c, justify="left" if c in ("query", "tables") else "right")
    for name, e in by_query.items():
        tables = e["tables"]
        t.add_row(cell(name), cell(", ".join(tables) if name == "scan" else ""), str(e.get(count, "")),
                  f"{e['bytes_scanned'] / 2**30:.4f}", f"{e['cost_usd']:.4f}")
    t.add_row("total", "", "", f"{total_bytes / 2**30:.4f}", f"{total_usd:.4f}")
    console.print(t)


def _dry_run_summary(plan: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console()
    _cost_table(console, "Estimate (dry run: nothing queried)", plan["by_query"], plan["total"]["bytes_scanned"],
                plan["total"]["cost_usd"], "windows")
    echo(f"{plan['log_groups']} log group(s), {plan['stored_bytes'] / 2**30:.3f} GB stored; at "
         f"${plan['price_per_gb_usd']}/GB scanned. Basis: {plan['basis']}.")
