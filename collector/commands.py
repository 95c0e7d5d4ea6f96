"""Click commands of the collector: ``idemwatch query`` and ``idemwatch collect local``.

``idemwatch collect cloudwatch`` lives in ``collector.cloudwatch.commands:cloudwatch`` and is
loaded only when used (it needs boto3).
"""

from __future__ import annotations

import csv
import importlib
import io
import json
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

import click

from collector.ingest.constants import MAX_DECOMPRESSED_BYTES
from collector.insights.constants import DEFAULT_ACCOUNT_ID
from idemwatch.errors import InputError
from idemwatch.options import TIME, require_range
from idemwatch.terminal import cell, echo, safe

__all__ = ["collect", "query"]


def _account_id(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from collector.insights.log_identifier import check_account_id

    try:
        return check_account_id(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


_ACCOUNT_ID = click.option(
    "--account-id", default=DEFAULT_ACCOUNT_ID, show_default=True, callback=_account_id, metavar="ID",
    help="12-digit account of the files' events: @log is '<account-id>:<log group>', as on CloudWatch "
         "(default: all zeros = unknown account).")



def _cell(value: Any) -> str:
    from collector.insights import format_timestamp

    if value is None:
        return ""
    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@click.command("query")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True,
              help="Output format. json: an array of row objects (Logs Insights result format).")
@click.option("--start", type=TIME, default=None,
              help="Inclusive start: 15m/24h/7d ago, ISO-8601 (2026-01-05T10:00:00Z) or epoch seconds.")
@click.option("--end", type=TIME, default=None, help="Inclusive end: same forms as --start.")
@click.option("--log-group", default=None, help="Log group for the events (default: derived from each file name).")
@_ACCOUNT_ID
@click.option("--strict-fields", is_flag=True,
              help="A field the query reads that no scanned event has is an error (exit 2), not a warning.")
@click.argument("query_text", metavar="QUERY")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
def query(fmt: str, start: float | None, end: float | None, log_group: str | None, account_id: str,
          strict_fields: bool, query_text: str, files: tuple[Path, ...]) -> None:
    """Run one Logs Insights QUERY over log FILE(s) and print the result.

    FILES are files or directories (read recursively). Any of the ingest formats (JSON lines,
    Lambda text/JSON format, filter-log-events output, console CSV, export-to-S3), plain or
    gzip. Without --start/--end, all events. At most 10,000 rows, as on CloudWatch. A field the
    query reads that none of the scanned events has is named on standard error with the closest
    present name (the result is unchanged). Exit code 2 on a query error, an input that is not a
    log file, or such a field with --strict-fields.
    """
    from collector.insights import QueryError, compile_query, missing_fields, run_query

    require_range(start, end)
    try:  # fail on a bad query before reading any file
        compile_query(query_text)
    except QueryError as exc:
        raise InputError(f"query: {exc}") from None
    from collector.ingest import EventStore, IngestError

    store = EventStore(account_id=account_id)
    skipped = 0
    for f in files:
        try:
            report = store.ingest_path(f, log_group=log_group)
        except IngestError as exc:  # e.g. a binary file named on the command line
            raise InputError(str(exc)) from None
        skipped += int(getattr(report, "skipped", 0))
    try:
        result = run_query(store, query_text, start=start, end=end)
        missing = missing_fields(store, query_text, start=start, end=end)
    except QueryError as exc:
        raise InputError(f"query: {exc}") from None
    if missing and strict_fields:
        raise InputError(f"query: {missing[0].message} (--strict-fields)")
    for field in missing:
        echo(f"warning: {field.message}", err=True)
    if skipped:
        click.echo(f"note: {skipped} input line(s) could not be read as log events (skipped)", err=True)
    if fmt == "json":
        click.echo(json.dumps(result.to_records_json(), ensure_ascii=False, indent=2))
    elif fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(result.columns)
        for row in result.rows:
            w.writerow([_cell(v) for v in row])
        click.echo(buf.getvalue(), nl=False)
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(show_lines=False, header_style="bold")
        for c in result.columns:
            table.add_column(cell(c), overflow="fold")
        for row in result.rows:  # log messages and fields are whatever the logs hold: printed escaped
            table.add_row(*[cell(_cell(v)) for v in row])
        console = Console(width=max(80, Console().width))
        console.print(table)
        console.print(f"{len(result.rows)} row(s)", style="dim")


class _CollectGroup(click.Group):
    """``local`` here; ``cloudwatch`` imported from collector.cloudwatch.commands only when used (it needs boto3)."""

    _LAZY: ClassVar[dict[str, str]] = {"cloudwatch": "collector.cloudwatch.commands"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self._LAZY))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self._LAZY:
            command: click.Command = getattr(importlib.import_module(self._LAZY[cmd_name]), cmd_name)
            return command
        return super().get_command(ctx, cmd_name)


@click.group("collect", cls=_CollectGroup)
def collect() -> None:
    """Collect the standard tables from local log files or CloudWatch."""


@collect.command("local")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output directory: tables/*.parquet + manifest.json.")
@click.option("--since", type=TIME, default=None, help="Inclusive window start: 15m/24h/7d ago, ISO-8601 or epoch s.")
@click.option("--until", type=TIME, default=None, help="Inclusive window end: same forms as --since.")
@click.option("--memory-limit", default=None, metavar="SIZE",
              help="DuckDB memory limit, e.g. 1GB (default $IDEMWATCH_MEMORY_LIMIT, else 512MB); it spills to disk "
                   "beyond it.")
@click.option("--max-decompressed-bytes", type=click.IntRange(min=1), default=MAX_DECOMPRESSED_BYTES,
              show_default=True, help="Decompressed bytes kept per gzip file; the rest is not read (counted).")
@_ACCOUNT_ID
def local(paths: tuple[Path, ...], out: Path, since: float | None, until: float | None, memory_limit: str | None,
          max_decompressed_bytes: int, account_id: str) -> None:
    """Ingest log files/directories at PATH(s) and write every standard table under --out.

    Collecting again into the same --out only adds new data (unchanged files are skipped,
    appended files contribute their new lines)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
    from rich.table import Table

    from collector.collect import CollectError, collect_local

    require_range(since, until, ("--since", "--until"))
    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[item]}", markup=False), console=console, transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(stage: str, item: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total, item="")
            bar.update(tasks[stage], completed=done, item=safe(Path(item).name))  # file names are anyone's

        try:
            manifest = collect_local(list(paths), out, since=since, until=until, progress=progress,
                                     memory_limit=memory_limit, max_decompressed_bytes=max_decompressed_bytes,
                                     account_id=account_id)
        except CollectError as exc:
            raise click.ClickException(str(exc)) from exc
    run, ingest = manifest["this_run"], manifest["ingest"]
    echo(f"sources: {run['new']} new, {run['appended']} appended, {run['replaced']} replaced, "
         f"{run['unchanged']} unchanged; events added: {run['events_added']}; "
         f"skipped lines (all sources): {ingest['skipped']}")
    formats = Counter(s["format"] for s in manifest["sources"] if s.get("format"))  # why a source was slow or bare
    if formats:
        echo("sources read as: " + ", ".join(f"{n} {f}" for f, n in sorted(formats.items())))
    if run.get("skipped_entries"):
        echo("directory entries not read: " + ", ".join(f"{n} {k}" for k, n in run["skipped_entries"].items()))
    t = Table("table", "rows", header_style="bold")
    for name, info in manifest["tables"].items():
        t.add_row(cell(name), str(info["rows"]))
    Console().print(t)
    echo(f"wrote {out / 'tables'} and {out / 'manifest.json'}")
