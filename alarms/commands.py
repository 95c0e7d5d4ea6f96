"""``idemwatch alarms``: export, validate, deploy and backtest CloudWatch alarms.

Exit codes: 0 success; 1 validation problems found (``validate``, ``export``, ``deploy``) or a
CloudWatch call failed; 2 bad usage or an unreadable config (click's convention).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from alarms.exceptions import AlarmsError, BacktestError, ConfigError, DeployError, ValidationFailed
from alarms.types import ExportFormat

_CONFIG = click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
                       help="Stack config file (YAML), e.g. alarms/demo-stack.yaml.")


def _load(config_path: Path):  # -> (StackConfig, list[AlarmDefinition])
    from alarms.catalogue import build_catalogue
    from alarms.config import load_config

    try:
        cfg = load_config(config_path)
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--config") from None
    return cfg, build_catalogue(cfg)


def _print_violations(exc: ValidationFailed) -> None:
    for v in exc.violations:
        click.echo(f"INVALID {v}", err=True)
    click.echo(f"{len(exc.violations)} problem(s) in {len({v.alarm for v in exc.violations})} alarm(s)", err=True)


@click.group("alarms")
def alarms() -> None:
    """CloudWatch alarms for every idempotency signal: export, validate, deploy, backtest."""


@alarms.command("list")
@_CONFIG
def list_cmd(config_path: Path) -> None:
    """Print the catalogue: one line per alarm with its condition, missing-data choice and severity."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    _, defs = _load(config_path)
    t = Table("alarm", "condition", "missing data", "severity", box=None)
    for d in defs:
        t.add_row(d.name, escape(d.condition()), d.treat_missing_data.value, d.severity.value)
    Console(width=200).print(t)
    click.echo(f"{len(defs)} alarms")


@alarms.command("export")
@_CONFIG
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder; files go to <out>/<format>/.")
@click.option("--format", "fmt", type=click.Choice([f.value for f in ExportFormat] + ["all"]), default="all",
              show_default=True, help="cli: one PutMetricAlarm JSON per alarm; cloudformation: one template; "
                                      "terraform: Terraform JSON.")
def export_cmd(config_path: Path, out: Path, fmt: str) -> None:
    """Validate the catalogue and write it as PutMetricAlarm JSON, CloudFormation or Terraform JSON."""
    from alarms.export import export

    cfg, defs = _load(config_path)
    formats = list(ExportFormat) if fmt == "all" else [ExportFormat(fmt)]
    try:
        for f in formats:
            written = export(defs, out, f, cfg.stack)
            click.echo(f"{f.value}: {len(written)} file(s), {len(defs)} alarms -> {out / f.value}")
    except ValidationFailed as exc:
        _print_violations(exc)
        sys.exit(1)


@alarms.command("validate")
@click.argument("files", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also validate the catalogue built from this stack config.")
def validate_cmd(files: tuple[Path, ...], config_path: Path | None) -> None:
    """Check exported alarm files (CLI JSON, CloudFormation, Terraform JSON, or folders of them) against the
    CloudWatch API model and its cross-field rules."""
    from alarms.validate import load_requests, validate_requests

    if not files and config_path is None:
        raise click.UsageError("give FILE... and/or --config")
    # Each FILE (or folder) and the config are checked on their own: the same alarms exported in three
    # formats are not duplicates of each other.
    groups: list[tuple[str, list]] = []
    for f in files:
        try:
            groups.append((str(f), load_requests(f)))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="FILE") from None
    if config_path is not None:
        groups.append((str(config_path), [d.to_request() for d in _load(config_path)[1]]))
    violations = []
    for source, requests in groups:
        found = validate_requests(requests)
        violations.extend(found)
        click.echo(f"{source}: {len(requests)} alarm request(s), {len(found)} problem(s)")
    if violations:
        _print_violations(ValidationFailed(violations))
        sys.exit(1)
    click.echo(f"OK: {sum(len(r) for _, r in groups)} alarm request(s) valid")


@alarms.command("deploy")
@_CONFIG
@click.option("--dry-run", is_flag=True, help="Print what would be created, updated or deleted; change nothing.")
@click.option("--prune", is_flag=True, help="Delete alarms this project manages for the stack that are no longer "
                                            "defined (never touches untagged alarms).")
@click.option("--profile", default=None, help="AWS named profile (standard boto3 credentials otherwise).")
@click.option("--region", default=None, help="AWS region.")
@click.option("--endpoint-url", default=None, help="CloudWatch endpoint (e.g. a local test server).")
def deploy_cmd(config_path: Path, dry_run: bool, prune: bool, profile: str | None, region: str | None,
               endpoint_url: str | None) -> None:
    """Create or update the stack's alarms with PutMetricAlarm (tagged as managed), optionally pruning."""
    from alarms import deploy

    cfg, defs = _load(config_path)
    try:
        client = deploy.make_client(profile, region, endpoint_url)
        p = deploy.plan(client, defs, cfg.stack, prune=prune)
        for line in p.lines():
            click.echo(line)
        if dry_run:
            click.echo("dry run: nothing changed")
            return
        deploy.apply(client, p)
        click.echo(f"applied {p.changes} change(s)")
    except ValidationFailed as exc:
        _print_violations(exc)
        sys.exit(1)
    except (DeployError, AlarmsError) as exc:
        raise click.ClickException(str(exc)) from None
    except Exception as exc:  # profile not found, no region: botocore configuration errors
        if type(exc).__module__.startswith("botocore"):
            raise click.ClickException(f"AWS: {exc}") from None
        raise


@alarms.command("backtest")
@_CONFIG
@click.option("--data", "data_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Collected history (the folder holding tables/ and manifest.json).")
@click.option("--alarm", "names", multiple=True, help="Only these alarm names (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (one object per alarm) instead of a table.")
@click.option("--extra-range", type=click.IntRange(0, 100), default=None,
              help="Datapoints retrieved per evaluation beyond EvaluationPeriods (default 2: the CloudWatch User "
                   "Guide's example retrieves 5 for 3 evaluation periods). 0 = no re-evaluation of old datapoints.")
def backtest_cmd(config_path: Path, data_dir: Path, names: tuple[str, ...], as_json: bool,
                 extra_range: int | None) -> None:
    """Evaluate each alarm on the collected history and list every interval it would have been in ALARM."""
    from alarms.backtest import run_backtest

    _, defs = _load(config_path)
    if names:
        unknown = sorted(set(names) - {d.name for d in defs})
        if unknown:
            raise click.BadParameter(f"not in the catalogue: {', '.join(unknown)}", param_hint="--alarm")
        defs = [d for d in defs if d.name in names]
    try:
        results = run_backtest(defs, data_dir, extra_range=extra_range)
    except BacktestError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps([_result_json(r) for r in results], indent=2))
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    t = Table("alarm", "condition", "periods", "missing", "ALARM intervals (UTC)", "source / note", box=None)
    for r in results:
        if r.status != "ok":
            spans = r.status.replace("_", " ")
        else:
            shown = [f"{a:%m-%d %H:%M}-{b:%H:%M}" for a, b in r.alarm_intervals[:3]]
            more = len(r.alarm_intervals) - len(shown)
            spans = ", ".join(shown) + (f" (+{more} more)" if more > 0 else "") or "-"
        t.add_row(r.definition.name, escape(r.definition.condition()), str(r.periods), str(r.missing_periods),
                  spans, escape(r.note or r.source))
    Console().print(t)
    fired = sum(1 for r in results if r.alarm_intervals)
    no_data = sum(1 for r in results if r.status != "ok")
    click.echo(f"{len(results)} alarms: {fired} would have fired, {no_data} without data in this history")


def _result_json(r) -> dict:
    return {
        "alarm": r.definition.name,
        "signal": r.definition.signal,
        "status": r.status,
        "source": r.source,
        "note": r.note,
        "periods": r.periods,
        "missing_periods": r.missing_periods,
        "states": r.state_counts,
        "alarm_intervals": [[a.isoformat(), b.isoformat()] for a, b in r.alarm_intervals],
    }
