"""``idemwatch diagnose``: the at-least-once checklist judged from the collected evidence.

One source per run: a data directory (``--data``, default ``idemwatch-data``: ``collect local``'s events, else
the ``trail`` table ``collect cloudwatch`` wrote), log files (``PATHS``), or CloudWatch Logs Insights
(``--log-group`` / ``--log-group-prefix``). Exit codes as ``idemwatch audit``: 0 nothing found at or above
``--fail-on``, 1 at least one finding there (not observable never fails), 2 the diagnosis could not run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from alarms.audit.commands import FAIL_ON
from alarms.audit.types import OutputFormat
from collector.cloudwatch.constants import DEFAULT_MAX_CONCURRENCY
from idemwatch.errors import InputError
from idemwatch.options import TIME, TextParam, duration_option_value, require_range

__all__ = ["diagnose"]

DURATION = TextParam("DURATION", duration_option_value)


@click.command("diagnose")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--data", "data_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("idemwatch-data"),
              show_default=True, help="Data directory collected by 'collect local' (its events) or 'collect "
                                      "cloudwatch' (its trail table).")
@click.option("--log-group", "log_groups", multiple=True, metavar="NAME",
              help="Query this CloudWatch log group instead (repeatable).")
@click.option("--log-group-prefix", "prefixes", multiple=True, metavar="PREFIX",
              help="Query every CloudWatch log group starting with PREFIX instead (repeatable).")
@click.option("--start", type=TIME, default=None,
              help="Inclusive start: 15m/24h/7d ago, ISO-8601 or epoch s (CloudWatch default: 24h; else all).")
@click.option("--end", type=TIME, default=None, help="Inclusive end: same forms as --start (default: now / all).")
@click.option("--format", "fmt", type=click.Choice([o.value for o in OutputFormat]), default="table",
              show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report here instead of stdout (e.g. DATA/diagnose.json for the dashboard).")
@click.option("--fail-on", type=click.Choice(FAIL_ON), default="high", show_default=True,
              help="Exit 1 when an anti-pattern of this severity or higher is found (none: always exit 0).")
@click.option("--show-passed", is_flag=True, help="Table format: list the rules that found nothing too.")
@click.option("--examples", type=click.IntRange(0, 50), default=3, show_default=True,
              help="Proving events, keys or invocations shown per finding, with their records.")
@click.option("--min-redelivery-gap", type=DURATION, default="1s", show_default=True,
              help="IW106: a redelivery this long after the first receive can be a visibility timeout expiry.")
@click.option("--min-shard-failures", type=click.IntRange(min=2), default=3, show_default=True,
              help="IW108: failed deliveries of one stream record that make it a blocking poison record.")
@click.option("--safe-budget-ms", type=click.FloatRange(min=0, min_open=True), default=None,
              help="IW109: remaining time (ms) below which a side effect must not start (default: the budget "
                   "the function's timeout_budget_abort records state).")
@click.option("--key-hash-salt", envvar="IDEMWATCH_KEY_HASH_SALT", default=None, show_envvar=True,
              help="HMAC salt for the idempotency keys in the report (as the emitter's key_hash_salt).")
@click.option("--account-id", default=None, help="Log files: the 12-digit account of @log (default 000000000000).")
@click.option("--profile", default=None, help="CloudWatch: AWS profile.")
@click.option("--region", default=None, help="CloudWatch: AWS Region.")
@click.option("--endpoint-url", default=None, help="CloudWatch: endpoint URL (a test server).")
@click.option("--role-arn", default=None, help="CloudWatch: IAM role to assume.")
@click.option("--max-concurrency", "--concurrency", "concurrency", type=click.IntRange(1, 100),
              default=DEFAULT_MAX_CONCURRENCY,
              show_default=True, help="CloudWatch: most Logs Insights queries in flight at once (adaptive, as "
                                      "collect cloudwatch's --max-concurrency).")
@click.pass_context
def diagnose(ctx: click.Context, paths: tuple[Path, ...], data_dir: Path, log_groups: tuple[str, ...],
             prefixes: tuple[str, ...], start: float | None, end: float | None, fmt: str, out: Path | None,
             fail_on: str, show_passed: bool, examples: int, min_redelivery_gap: float, min_shard_failures: int,
             safe_budget_ms: float | None, key_hash_salt: str | None, account_id: str | None, profile: str | None,
             region: str | None, endpoint_url: str | None, role_arn: str | None, concurrency: int) -> None:
    """Find each idempotency anti-pattern in the collected logs, with the records that prove it.

    Each rule of the at-least-once checklist (idemwatch diagnose --show-passed lists them) reads the emitter's
    outcome records through its own Logs Insights query, and reports per function and operation: found (with
    counts, first and last occurrence and example records), not found, or not observable (and why)."""
    from alarms.audit.commands import emit_report
    from alarms.diagnose.evaluate import diagnose as run_diagnosis
    from alarms.diagnose.exceptions import DiagnoseError
    from alarms.diagnose.report import render_table, to_json, to_sarif
    from alarms.diagnose.types import DiagnoseOptions

    cloud = bool(log_groups or prefixes)
    explicit_data = ctx.get_parameter_source("data_dir") is click.core.ParameterSource.COMMANDLINE
    if sum([bool(paths), cloud, explicit_data]) > 1:
        raise click.UsageError("give one source: PATHS, --data DIR, or --log-group/--log-group-prefix")
    require_range(start, end)
    options = DiagnoseOptions(min_redelivery_gap_ms=round(min_redelivery_gap * 1000),
                              min_shard_failures=min_shard_failures, safe_budget_ms=safe_budget_ms,
                              examples=examples, key_hash_salt=key_hash_salt)
    try:
        if cloud:
            source: Any = _cloudwatch(log_groups, prefixes, start, end, profile, region, endpoint_url, role_arn,
                                      concurrency)
        elif paths:
            from alarms.diagnose.sources import open_log_files

            source = open_log_files(paths, start, end, account_id=account_id)
        else:
            from alarms.diagnose.sources import open_data_dir

            source = open_data_dir(data_dir, start, end)
        try:
            findings = run_diagnosis(source, options)
        finally:
            source.close()
    except DiagnoseError as exc:
        raise InputError(str(exc)) from None
    except ValueError as exc:  # the account id of log files
        raise click.BadParameter(str(exc), param_hint="--account-id") from None
    except Exception as exc:  # AWS errors arrive translated (idemwatch.aws.translate), collection errors named
        from collector.cloudwatch.exceptions import CloudWatchCollectorError
        from idemwatch.aws import AwsError

        if isinstance(exc, (AwsError, CloudWatchCollectorError)):
            raise InputError(str(exc)) from None
        raise
    if fmt == OutputFormat.JSON.value:
        text = json.dumps(to_json(findings, source.description, options), indent=2)
    elif fmt == OutputFormat.SARIF.value:
        from importlib.metadata import version

        text = json.dumps(to_sarif(findings, version("idemwatch")), indent=2)
    else:
        text = f"{source.description}\n" + render_table(findings, show_passed=show_passed)
    emit_report(findings, text, out, fail_on, what="anti-pattern finding(s)")


def _cloudwatch(log_groups: tuple[str, ...], prefixes: tuple[str, ...], start: float | None, end: float | None,
                profile: str | None, region: str | None, endpoint_url: str | None, role_arn: str | None,
                concurrency: int) -> Any:
    from alarms.diagnose.sources import cloudwatch_source
    from collector.cloudwatch.runner import RunnerConfig
    from idemwatch.aws import AwsTarget

    now = time.time()
    lo = int(start) if start is not None else int(now) - 86_400
    hi = int(end) if end is not None else int(now)
    target = AwsTarget(profile=profile, region=region, endpoint_url=endpoint_url, role_arn=role_arn,
                       role_session_name="idemwatch-diagnose")
    client = target.client("logs", retries=1)
    return cloudwatch_source(client, log_groups, prefixes, start=lo, end=hi,
                             config=RunnerConfig(max_concurrency=concurrency))
