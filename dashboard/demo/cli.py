"""``idemwatch demo``: simulate the demo fleet, collect its logs into tables, serve the dashboard."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from emitter.contract import Outcome
from idemwatch.options import TIME

from .constants import DEFAULT_DURATION_S, DEFAULT_EVENTS, DEFAULT_OUT, DEFAULT_SEED
from .faults import AntiPattern
from .simulate import LOGS_DIR, TRUTH_FILE

__all__ = ["demo"]

_COLUMNS: tuple[tuple[str, tuple[Outcome, ...]], ...] = (
    ("received", (Outcome.RECEIVED,)),
    ("succeeded", (Outcome.SUCCEEDED,)),
    ("duplicates", (Outcome.DUPLICATE_COMPLETED,)),
    ("in-progress", (Outcome.DUPLICATE_IN_PROGRESS,)),
    ("conflicts", (Outcome.PAYLOAD_CONFLICT,)),
    ("takeovers", (Outcome.STALE_CLAIM_TAKEOVER,)),
    ("retryable", (Outcome.RETRYABLE_FAILURE,)),
    ("permanent", (Outcome.PERMANENT_FAILURE,)),
    ("poison", (Outcome.POISON_MESSAGE,)),
    ("budget aborts", (Outcome.TIMEOUT_BUDGET_ABORT,)),
    ("ambiguous", (Outcome.AMBIGUOUS_COMMIT,)),
)


@click.command("demo")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_OUT, show_default=True,
              help="Data directory: logs/, demo-truth.json, tables/ and manifest.json are written here.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="RNG seed (same seed, same files).")
@click.option("--events", type=click.IntRange(min=1), default=DEFAULT_EVENTS, show_default=True,
              help="Source events over the window (orders, ledger records, API requests, payments).")
@click.option("--duration", type=click.IntRange(min=60), default=DEFAULT_DURATION_S, show_default=True,
              help="Simulated window in seconds.")
@click.option("--start", "start", type=TIME, default=None,
              help="Window start: ISO-8601 with a timezone, epoch seconds or 3h (ago). Default: the window ends at "
                   "the current minute. Fix it for byte-identical runs.")
@click.option("--no-serve", is_flag=True, help="Stop after collecting (CI, scripts).")
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Dashboard port (default: a free one).")
@click.option("--inject", "inject", multiple=True, metavar="ANTI-PATTERN",
              type=click.Choice(["all", *(a.value for a in AntiPattern)]),
              help="Build an idempotency anti-pattern into its function (repeatable; all: every one); idemwatch "
                   "diagnose must find each in exactly that function. One of: all, "
                   + ", ".join(a.value for a in AntiPattern) + ".")
def demo(out: Path, seed: int, events: int, duration: int, start: float | None, no_serve: bool, port: int | None,
         inject: tuple[str, ...]) -> None:
    """Simulate the demo fleet (four at-least-once handlers on the real emitter, with injected faults),
    collect its logs into the standard tables and serve the dashboard on 127.0.0.1."""
    from rich.console import Console

    from .simulate import run_demo

    # piped output (CI logs, scripts) gets a fixed wide table rather than rich's 80-column default
    console = Console() if sys.stdout.isatty() else Console(width=140)
    start_ms = None if start is None else round(start * 1000)
    anti_patterns = list(AntiPattern) if "all" in inject else [AntiPattern(a) for a in dict.fromkeys(inject)]
    with console.status(f"simulating {events:,} events over {duration:,} s (seed {seed})..."):
        truth = run_demo(out, seed=seed, events=events, duration_s=duration, start_ms=start_ms,
                         anti_patterns=anti_patterns)
    lines = sum(f.log_lines for f in truth.functions.values())
    console.print(f"simulated {truth.start} .. {truth.end}: {lines:,} log lines in {truth.simulate_seconds:.1f} s "
                  f"-> {out / LOGS_DIR}, ground truth -> {out / TRUTH_FILE}")

    try:
        from collector.collect import collect_local
    except ImportError as exc:  # the collector extra (duckdb, pyarrow) is not installed
        raise click.ClickException(f"cannot collect: {exc}; install the extras: pip install 'idemwatch[all]'") from exc
    t0 = time.perf_counter()
    with console.status("collecting the logs into tables..."):
        manifest = collect_local([out / LOGS_DIR], out)
    ingest = manifest.get("ingest", {})
    console.print(f"collected {ingest.get('events', 0):,} log events in {time.perf_counter() - t0:.1f} s "
                  f"(skipped {ingest.get('skipped', 0):,}) -> {out / 'tables'}")

    from alarms.audit.demo import run_demo_audit

    audit = run_demo_audit(out)["summary"]
    console.print(f"audited the demo stack template: {audit['fail']} failed, {audit['pass']} passed -> {out / 'audit.json'}")
    _print_summary(console, truth, out)
    _print_diagnosis(console, truth, out)
    if no_serve:
        return
    from dashboard.serve import serve

    click.get_current_context().exit(serve(out, port=port))


def _print_summary(console, truth, out: Path) -> None:
    from rich.table import Table

    from .compare import counts_from_tables, mismatches, truth_counts

    table = Table(title=f"demo fleet, service {truth.service!r}: ground truth (outcome records, invocations)")
    table.add_column("signal")
    for fn in truth.functions:
        table.add_column(fn, justify="right")
    table.add_column("total", justify="right")

    def row(label: str, values: list[int]) -> None:
        table.add_row(label, *(f"{v:,}" for v in values), f"{sum(values):,}")

    fts = list(truth.functions.values())
    row("invocations", [ft.invocations for ft in fts])
    row("cold starts", [ft.cold_starts for ft in fts])
    row("timeouts", [ft.timeouts for ft in fts])
    for name, outs in _COLUMNS:
        row(name, [sum(ft.outcomes.get(o.value, 0) for o in outs) for ft in fts])
    row("stuck keys", [len(ft.stuck_keys) for ft in fts])
    console.print(table)
    try:
        diff = mismatches(truth_counts(truth), counts_from_tables(out))
    except Exception as exc:  # noqa: BLE001 - a summary line, never a crash after a good collect
        console.print(f"[yellow]could not compare the tables with the ground truth: {exc}[/yellow]")
        return
    if diff:
        console.print(f"[red]tables differ from the ground truth for {len(diff)} (function, outcome) pair(s):[/red]")
        for (fn, outcome), (want, got) in diff.items():
            console.print(f"  {fn} {outcome}: injected/expected {want}, tables {got}")
    else:
        console.print("[green]the outcomes table matches the ground truth for every function and outcome[/green]")


def _print_diagnosis(console: Any, truth: Any, out: Path) -> None:
    """Run ``idemwatch diagnose`` over the collected events, save it as ``diagnose.json`` and print, per function,
    the anti-patterns built in, the rules that must find them and the rules that did."""
    from rich.table import Table

    from .compare import diagnosis_vs_truth

    try:
        rows = diagnosis_vs_truth(truth, out)
    except Exception as exc:  # noqa: BLE001 - a summary line, never a crash after a good collect
        console.print(f"[yellow]could not diagnose the collected events: {exc}[/yellow]")
        return
    table = Table(title="idemwatch diagnose against the ground truth (anti-patterns built in)")
    for col in ("function", "anti-patterns built in", "rules that must find them", "found", "match"):
        table.add_column(col)
    for r in rows:
        table.add_row(r.function, ", ".join(r.injected) or "-", ", ".join(sorted(r.expected)) or "-",
                      ", ".join(sorted(r.found)) or "-", "yes" if r.match else "[red]NO[/red]")
    console.print(table)
    bad = [r.function for r in rows if not r.match]
    if bad:
        console.print(f"[red]diagnose differs from the ground truth for {', '.join(bad)}[/red] "
                      f"-> {out / 'diagnose.json'}")
    elif truth.anti_patterns:
        console.print(f"[green]diagnose finds exactly the anti-patterns built in, in the functions they were built "
                      f"into[/green] -> {out / 'diagnose.json'}")
    else:
        console.print(f"[green]diagnose finds no anti-pattern (none is built in)[/green] -> {out / 'diagnose.json'}")
