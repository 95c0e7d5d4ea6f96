"""``idemwatch audit``: ``static`` (templates) and ``live`` (boto3) subcommands.

Exit codes: 0 no failed finding at or above ``--fail-on``; 1 at least one (suppressed and unknown findings
never fail); 2 the audit could not run (unreadable template or config, AWS error, unknown rule in a
suppression). Both end with one ``Error:`` line (``idemwatch.errors``); the table goes through the terminal
sanitiser (resource names come from templates and accounts).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from alarms.audit.types import OutputFormat, Severity
from idemwatch.errors import InputError
from idemwatch.terminal import echo

FAIL_ON = ("high", "medium", "low", "none")
"""``--fail-on`` choices: a severity (that one or higher fails the command), or ``none`` (never)."""


def _common(f: Callable) -> Callable:
    for opt in reversed([
        click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Alarms stack config: catalogue alarms expected per function, idempotency_table, "
                          "suppressions."),
        click.option("--format", "fmt", type=click.Choice([o.value for o in OutputFormat]), default="table",
                     show_default=True),
        click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Write the report here instead of stdout."),
        click.option("--fail-on", type=click.Choice(FAIL_ON), default="high", show_default=True,
                     help="Exit 1 when a rule of this severity or higher fails (none: always exit 0)."),
        click.option("--show-passed", is_flag=True, help="Table format: list passing checks too."),
        click.option("--table", "tables", multiple=True, help="Also audit this DynamoDB table as an idempotency table."),
        click.option("--key-attr", default="id", show_default=True, help="Idempotency record partition key."),
        click.option("--expiry-attr", default="expiration", show_default=True,
                     help="Idempotency record TTL attribute."),
    ]):
        f = opt(f)
    return f


@click.group("audit")
def audit() -> None:
    """Check Lambda/SQS/stream/DynamoDB/alarm configuration against the at-least-once handler checklist."""


@audit.command("static")
@click.argument("templates", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--alarms-template", "alarm_templates", multiple=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A template holding the alarms (e.g. alarms/exported/cloudformation/shop-alarms.json).")
@_common
def static_cmd(templates: tuple[Path, ...], alarm_templates: tuple[Path, ...], **kw: Any) -> None:
    """Audit CloudFormation/SAM templates (JSON or YAML) and Terraform JSON files before deploying."""
    from alarms.audit.sources import audit_paths

    _run(lambda cfg: audit_paths([*templates, *alarm_templates]), **kw)


@audit.command("live")
@click.option("--profile", default=None, help="AWS profile (default: the standard credential chain).")
@click.option("--region", default=None, help="AWS Region (default: AWS_REGION / the profile's).")
@click.option("--role-arn", default=None, help="Assume this role first (cross-account audit).")
@click.option("--endpoint-url", default=None, hidden=True, help="Endpoint for every service (test servers).")
@click.option("--function", "functions", multiple=True, help="Audit only these functions (default: all, or the "
                                                             "stack config's).")
@_common
def live_cmd(profile: str | None, region: str | None, role_arn: str | None, endpoint_url: str | None,
             functions: tuple[str, ...], **kw: Any) -> None:
    """Audit the deployed account with read-only calls (the IAM policy is in docs/audit.md)."""
    from alarms.audit.live import read_live
    from idemwatch.aws import AwsTarget

    target = AwsTarget(profile=profile, region=region, endpoint_url=endpoint_url, role_arn=role_arn,
                       role_session_name="idemwatch-audit")

    def read(cfg: Any) -> Any:
        fns = functions or (tuple(f.name for f in cfg.functions) if cfg is not None else ())
        tables = (*kw["tables"], *([cfg.idempotency_table] if cfg is not None and cfg.idempotency_table else []))
        queues = [q for f in cfg.functions for q in (f.queue, f.dlq) if q] if cfg is not None else []
        return read_live(target, functions=fns, tables=tables, queues=queues)

    _run(read, **kw)


def _run(read: Callable[[Any], Any], config_path: Path | None, fmt: str, out: Path | None, fail_on: str,
         show_passed: bool, tables: tuple[str, ...], key_attr: str, expiry_attr: str) -> None:
    """Load the config, read the inventory (``read(config)``), evaluate, write the report, set the exit code."""
    from alarms.audit.exceptions import AuditError
    from alarms.audit.report import dumps, render_table
    from alarms.audit.rules import evaluate
    from alarms.audit.sarif import to_sarif
    from alarms.audit.sources import options_from_config, with_config_tables
    from alarms.exceptions import AlarmsError
    from idemwatch.aws import AwsError

    try:
        cfg = None
        if config_path is not None:
            from alarms.config import load_config

            cfg = load_config(config_path)
        inv = read(cfg)
        inv = with_config_tables(inv, [*tables, *([cfg.idempotency_table] if cfg and cfg.idempotency_table else [])])
        findings = evaluate(inv, options_from_config(cfg, key_attr=key_attr, expiry_attr=expiry_attr),
                            cfg.suppressions if cfg else ())
    except (AuditError, AlarmsError, AwsError) as exc:  # AWS errors arrive translated (idemwatch.aws.translate)
        raise InputError(str(exc)) from None  # exit 2: the audit could not run, so 1 always means a check failed
    if fmt == OutputFormat.JSON.value:
        text = dumps(findings, inv.source)
    elif fmt == OutputFormat.SARIF.value:
        from importlib.metadata import version

        text = json.dumps(to_sarif(findings, version("idemwatch")), indent=2)
    else:
        text = render_table(findings, show_passed=show_passed)
    emit_report(findings, text, out, fail_on)


def emit_report(findings: Sequence[Any], text: str, out: Path | None, fail_on: str,
                what: str = "failed check(s)") -> None:
    """Write the report ``text`` to ``out`` (its folder created) or stdout, then exit 1 when a failed finding is
    at or above ``fail_on`` (a :data:`FAIL_ON` choice; ``report.failing``), saying how many ``what`` on stderr.
    Shared by ``idemwatch audit`` and ``idemwatch diagnose``."""
    from alarms.audit.report import failing

    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    else:
        echo(text.rstrip("\n"), newlines=True)
    bad = failing(findings, None if fail_on == "none" else Severity(fail_on))
    if bad:
        raise click.ClickException(f"{len(bad)} {what} at or above {fail_on}")
