"""``idemwatch alarms``: export, validate, deploy and backtest CloudWatch alarms.

Exit codes: 0 success; 1 validation problems found (``validate``, ``export``, ``deploy``) or a
CloudWatch call failed; 2 bad usage or an unreadable config (click's convention). Errors are click exceptions
(one ``Error:`` line from ``idemwatch.errors``); names from the stack config and from CloudWatch are printed through
the terminal sanitiser (``idemwatch.terminal``).

``--format table|json`` is the same on ``list``, ``validate``, ``backtest`` and ``deploy``
(``deploy --dry-run --format json`` prints the plan): ``table`` for people (fits 80 columns, names
never cut), ``json`` for scripts (one document on stdout).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from alarms.exceptions import AlarmsError, BacktestError, ConfigError, ValidationFailed
from alarms.types import ExportFormat
from idemwatch.options import TIME, require_range
from idemwatch.terminal import echo, safe

_CONFIG = click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
                       help="Stack config file (YAML), e.g. alarms/demo-stack.yaml.")


def _load(config_path: Path) -> tuple[Any, list[Any]]:
    """The stack config at ``config_path`` and its catalogue; an unreadable config is a ``--config`` error (exit 2)."""
    from alarms.catalogue import build_catalogue
    from alarms.config import load_config

    try:
        cfg = load_config(config_path)
        return cfg, build_catalogue(cfg)  # a custom alarm whose name clashes with a catalogue alarm: ConfigError
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--config") from None


def _print_violations(violations: Sequence[Any]) -> None:
    """One line per violation on stderr: ``INVALID <alarm>: <field>: <message>`` (``WARNING`` for warnings)."""
    for v in violations:
        echo(f"{'WARNING' if v.level == 'warning' else 'INVALID'} {v}", err=True)


def _fail(violations: Sequence[Any]) -> NoReturn:
    """Print ``violations`` and end the command with exit code 1: ``Error: N problem(s) in M alarm(s)``."""
    _print_violations(violations)
    bad = [v for v in violations if v.level != "warning"]
    raise click.ClickException(f"{len(bad)} problem(s) in {len({v.alarm for v in bad})} alarm(s)")


_INDEX_POLICY = click.option("--index-policy", is_flag=True,
                             help="Also the field index policy of the functions' log groups (schema_version, outcome, "
                                  "idempotency_key; keeps fields already indexed): cheaper Logs Insights collection. "
                                  "See docs/cloudwatch.md.")


_FORMAT = click.option("--format", "out_format", type=click.Choice(["table", "json"]), default="table",
                       show_default=True, help="table: for people (80 columns); json: one document for scripts.")


def _width() -> int:
    import shutil

    return shutil.get_terminal_size((80, 24)).columns


def _blocks(rows: list[tuple[str, list[str]]]) -> None:
    """Print ``(name, detail lines)`` as blocks: the name whole on its own line (never cut, so two names never
    look alike), the details indented and wrapped to the terminal width."""
    width = max(_width(), 40)
    for name, details in rows:
        echo(name)
        for line in details:
            click.echo(textwrap.fill(safe(line), width=width, initial_indent="  ", subsequent_indent="    ",
                                     break_long_words=True, break_on_hyphens=False))


@click.group("alarms")
def alarms() -> None:
    """CloudWatch alarms for every idempotency signal: export, validate, deploy, backtest."""


@alarms.command("list")
@_CONFIG
@_FORMAT
def list_cmd(config_path: Path, out_format: str) -> None:
    """Print the catalogue: one entry per alarm with its condition, missing-data choice and severity; then the
    composite alarms with their children and suppressor, and the Contributor Insights rules."""
    from alarms.composite import build_composites
    from alarms.insight_rules import build_insight_rules

    cfg, defs = _load(config_path)
    composites, rules = build_composites(cfg, defs), build_insight_rules(cfg)
    if out_format == "json":
        click.echo(json.dumps(
            [{"alarm": d.name, "kind": "metric", "signal": d.signal, "tier": d.tier or "base",
              "severity": d.severity.value, "target": d.target, "condition": d.condition(),
              "treat_missing_data": d.treat_missing_data.value, "links": dict(d.links)} for d in defs]
            + [{"alarm": c.name, "kind": "composite", "severity": c.severity.value, "target": c.target,
                "scope": c.scope, "paging": c.paging, "rule": c.rule, "suppressor": c.suppressor} for c in composites]
            + [{"rule": r.name, "kind": "insight_rule", "outcome": r.outcome, "key": r.key, "state": r.state,
                "log_groups": list(r.log_groups)} for r in rules], indent=2))
        return
    _blocks([(d.name, [(f"{d.severity.value}{' tier' if d.tier else ''} | {d.condition()} | missing data: "
                       f"{d.treat_missing_data.value}")]) for d in defs]
            + [(c.name, [f"{c.severity.value} composite ({'pages' if c.paging else 'notifies nobody'}) | any of "
                         f"{len(c.children)} alarms" + (f" | suppressor {c.suppressor}" if c.suppressor else "")])
               for c in composites]
            + [(r.name, [(f"Contributor Insights rule | {r.outcome} records by {r.key} | {len(r.log_groups)} log "
                         "group(s)")]) for r in rules])
    click.echo(f"{len(defs)} alarms" + (f", {len(composites)} composite alarms" if composites else "")
               + (f", {len(rules)} Contributor Insights rules" if rules else ""))


@alarms.command("export")
@_CONFIG
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder; files go to <out>/<format>/.")
@click.option("--format", "fmt", type=click.Choice([f.value for f in ExportFormat if f is not ExportFormat.DASHBOARD]
                                                   + ["all"]), default="all",
              show_default=True, help="cli: one PutMetricAlarm JSON per alarm; cloudformation: one template with "
                                      "Parameters and Outputs; terraform: Terraform JSON and a module.")
@click.option("--dashboard", is_flag=True, help="Also write the CloudWatch console dashboard: the PutDashboard body "
                                                "(<out>/dashboard/) and the dashboard resource in the CloudFormation "
                                                "template and the Terraform module. Needs region and account_id in "
                                                "the stack config.")
@_INDEX_POLICY
def export_cmd(config_path: Path, out: Path, fmt: str, dashboard: bool, index_policy: bool) -> None:
    """Validate the catalogue and write it as PutMetricAlarm JSON, CloudFormation or Terraform JSON."""
    from alarms.cfn_template import check_limits
    from alarms.composite import build_composites
    from alarms.export import export
    from alarms.insight_rules import build_insight_rules

    cfg, defs = _load(config_path)
    formats: list[ExportFormat] = ([f for f in ExportFormat if f is not ExportFormat.DASHBOARD] if fmt == "all"
                                   else [ExportFormat(fmt)])
    if dashboard:
        formats.append(ExportFormat.DASHBOARD)
    try:
        composites, rules = build_composites(cfg, defs), build_insight_rules(cfg)
        if ExportFormat.CLOUDFORMATION in formats:  # fail on a CloudFormation quota before any file is written
            check_limits(len(defs) + len(composites) + len(rules), dashboard)
        what = f"{len(defs)} alarms" + (f", {len(composites)} composite alarms" if composites else "") + (
            f", {len(rules)} Contributor Insights rules" if rules else "")
        for f in formats:
            written = export(defs, out, f, cfg.stack, cfg, dashboard)
            echo(f"{f.value}: {len(written)} file(s), {what} -> {out / f.value}")
        if index_policy:  # the collector's field index policy (collector.cloudwatch.index_policy)
            from collector.cloudwatch.index_policy import render

            for rel, text in render([fn.log_group for fn in cfg.functions], cfg.stack).items():
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                (out / rel).write_text(text, encoding="utf-8")
            echo(f"index-policy: {len(cfg.functions)} log group(s) -> {out / 'index-policy'}")
    except ValidationFailed as exc:
        _fail(exc.violations)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


@alarms.command("validate")
@click.argument("files", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also validate the catalogue built from this stack config, and check every alarm's dimensions "
                   "against what the config's emitters publish.")
@_FORMAT
def validate_cmd(files: tuple[Path, ...], config_path: Path | None, out_format: str) -> None:
    """Check exported alarm files (CLI JSON, CloudFormation, Terraform JSON, or folders of them) against the
    CloudWatch API model and its cross-field rules; dashboard bodies against the documented body structure."""
    from alarms.dashboard_body import validate_body
    from alarms.validate import Violation, published_dimension_sets, validate_file, validate_requests

    if not files and config_path is None:
        raise click.UsageError("give FILE... and/or --config")
    # Each FILE (or folder) and the config are checked on their own: the same alarms exported in three
    # formats are not duplicates of each other.
    groups: list[tuple[str, list, list]] = []
    published = None
    cfg_requests = None
    external: tuple[str, ...] = ()
    if config_path is not None:
        from alarms.composite import build_composites
        from alarms.export import external_alarms
        from alarms.insight_rules import build_insight_rules

        cfg, cfg_defs = _load(config_path)
        published = published_dimension_sets(cfg)
        external = external_alarms(cfg, cfg_defs)
        try:
            cfg_requests = [x.to_request() for x in (*cfg_defs, *build_composites(cfg, cfg_defs),
                                                     *build_insight_rules(cfg))]
        except ConfigError as exc:
            raise click.BadParameter(str(exc), param_hint="--config") from None
    bodies: list[tuple[str, list]] = []
    for f in files:
        try:
            groups.append((str(f), *validate_file(f, published, external)))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="FILE") from None
        for body_file in ([f] if f.is_file() else sorted(f.rglob("*.json"))):
            try:
                doc = json.loads(body_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(doc, dict) and "widgets" in doc:
                bodies.append((str(body_file), [Violation("<dashboard>", p.where, p.rule, p.message)
                                                for p in validate_body(doc)]))
    if cfg_requests is not None:
        groups.append((str(config_path), cfg_requests, validate_requests(cfg_requests, published, external)))
    found_all = []
    summary = []
    for source, requests, found in groups:
        found_all.extend(found)
        summary.append({"source": source, "requests": len(requests),
                        "problems": sum(1 for v in found if v.level == "error"),
                        "warnings": sum(1 for v in found if v.level == "warning")})
    for source, found in bodies:
        found_all.extend(found)
        summary.append({"source": source, "dashboard_widgets": True, "problems": len(found), "warnings": 0})
    bad = [v for v in found_all if v.level == "error"]
    if out_format == "json":
        click.echo(json.dumps({"ok": not bad, "sources": summary,
                               "violations": [{"alarm": v.alarm, "field": v.field, "rule": v.rule,
                                               "message": v.message, "level": v.level} for v in found_all]},
                              indent=2))
        if bad:  # the document is the whole answer: ok false, exit code 1
            click.get_current_context().exit(1)
        return
    for s in summary:
        what = "dashboard body" if s.get("dashboard_widgets") else f"{s['requests']} request(s)"
        echo(f"{s['source']}: {what}, {s['problems']} problem(s), {s['warnings']} warning(s)")
    if bad:
        _fail(found_all)
    _print_violations(found_all)
    click.echo(f"OK: {sum(len(r) for _, r, _ in groups)} request(s) valid"
               + (f", {len(found_all)} warning(s)" if found_all else ""))


@alarms.command("deploy")
@_CONFIG
@click.option("--dry-run", is_flag=True, help="Print what would be created, updated or deleted; change nothing.")
@click.option("--prune", is_flag=True, help="Delete alarms (and dashboards) this project manages for the stack that "
                                            "are no longer defined (never touches untagged alarms). Without it they "
                                            "are listed as orphans.")
@click.option("--dashboard", is_flag=True, help="Also put the CloudWatch console dashboard (region from the session, "
                                                "account from STS GetCallerIdentity).")
@click.option("--profile", default=None, help="AWS named profile (standard boto3 credentials otherwise).")
@click.option("--region", default=None, help="AWS region (else $AWS_REGION, else botocore's AWS_DEFAULT_REGION or "
                                             "the profile's region).")
@click.option("--role-arn", default=None, help="IAM role to assume (STS AssumeRole) for the CloudWatch calls.")
@click.option("--endpoint-url", default=None, help="CloudWatch (and STS) endpoint, e.g. a local test server.")
@_FORMAT
@_INDEX_POLICY
def deploy_cmd(config_path: Path, dry_run: bool, prune: bool, dashboard: bool, profile: str | None,
               region: str | None, role_arn: str | None, endpoint_url: str | None, out_format: str,
               index_policy: bool) -> None:
    """Create or update the stack's alarms, composite alarms and Contributor Insights rules (tagged as managed),
    optionally pruning; with ``--index-policy``, the collector's field index policy on the functions' log groups."""
    from alarms import deploy
    from alarms.composite import build_composites
    from alarms.export import external_alarms
    from alarms.insight_rules import build_insight_rules
    from idemwatch.aws import AwsError, AwsTarget

    cfg, defs = _load(config_path)
    target = AwsTarget(profile=profile, region=region, endpoint_url=endpoint_url, role_arn=role_arn,
                       role_session_name="idemwatch-alarms-deploy")
    try:
        session = target.session()
        client = target.client("cloudwatch", session)
        dash = None
        if dashboard:
            from alarms.console_dashboard import body_json, dashboard_name
            from alarms.export import dashboard_body

            body = dashboard_body(cfg, defs, session.region_name, target.account_id(session))
            dash = (dashboard_name(cfg.alarm_name_prefix), body_json(body))
        p = deploy.plan(client, [*defs, *build_composites(cfg, defs), *build_insight_rules(cfg)], cfg.stack,
                        prune=prune, dashboard=dash, external=external_alarms(cfg, defs))
        if index_policy:  # the collector's field index policy (collector.cloudwatch.index_policy)
            from collector.cloudwatch import index_policy as ip

            logs = target.client("logs", session)
            changes = ip.plan(logs, [fn.log_group for fn in cfg.functions])
            for c in changes:
                echo(c.line(), err=out_format == "json")
            if not dry_run:
                echo(f"index policies put: {ip.apply(logs, changes)}", err=out_format == "json")
        if out_format == "json":
            doc = {"stack": cfg.stack, "dry_run": dry_run, "items": p.rows(), "notes": p.notes,
                   "counts": {"create": len(p.create), "update": len(p.update), "unchanged": len(p.unchanged),
                              "delete": len(p.delete), "orphaned": len(p.orphans) - len(p.delete)}}
            if not dry_run:
                deploy.apply(client, p)
                doc["applied"] = p.changes
            click.echo(json.dumps(doc, indent=2))
            return
        for line in p.lines():
            echo(line)
        if dry_run:
            click.echo("dry run: nothing changed")
            return
        deploy.apply(client, p)
        click.echo(f"applied {p.changes} change(s)")
    except ValidationFailed as exc:
        _fail(exc.violations)
    except (AlarmsError, AwsError) as exc:
        raise click.ClickException(str(exc)) from None


@alarms.command("backtest")
@_CONFIG
@click.option("--data", "data_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Collected history (the folder holding tables/ and manifest.json).")
@click.option("--alarm", "names", multiple=True, help="Only these alarm names, metric or composite (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@_FORMAT
@click.option("--extra-range", type=click.IntRange(0, 100), default=None,
              help="Datapoints retrieved per evaluation beyond EvaluationPeriods (default 2: the CloudWatch User "
                   "Guide's example retrieves 5 for 3 evaluation periods). 0 = no re-evaluation of old datapoints.")
def backtest_cmd(config_path: Path, data_dir: Path, names: tuple[str, ...], as_json: bool, out_format: str,
                 extra_range: int | None) -> None:
    """Evaluate each alarm (every tier) on the collected history: last state, transitions, time in ALARM; then
    each composite alarm from its children's timelines: when it would have notified, and when its suppressor
    would have held it back. Anomaly-detection alarms are skipped by name (CloudWatch's model is not reproducible
    offline)."""
    from alarms.backtest import run_backtest
    from alarms.composite import build_composites
    from alarms.composite_backtest import SUPPRESSED_ALARM, SUPPRESSED_EXTENSION, SUPPRESSED_WAIT, backtest_composites

    cfg, defs = _load(config_path)
    composites = build_composites(cfg, defs)
    if names:
        unknown = sorted(set(names) - {d.name for d in defs} - {c.name for c in composites})
        if unknown:
            raise click.BadParameter(f"not in the catalogue: {', '.join(unknown)}", param_hint="--alarm")
    run_all = not names or any(c.name in names for c in composites)  # a composite needs all its children
    try:
        results = run_backtest(defs if run_all else [d for d in defs if d.name in names], data_dir,
                               extra_range=extra_range)
    except BacktestError as exc:
        raise click.ClickException(str(exc)) from None
    comp_results = backtest_composites(composites, results) if composites and run_all else []
    if names:
        results = [r for r in results if r.definition.name in names]
        comp_results = [c for c in comp_results if c.definition.name in names]
    if as_json or out_format == "json":
        click.echo(json.dumps([_result_json(r) for r in results] + [_composite_json(c) for c in comp_results],
                              indent=2))
        return
    rows = []
    for r in results:
        d = r.definition
        if r.status != "ok":
            rows.append((d.name, [f"{d.severity.value} | {d.condition()}",
                                  f"backtest: {r.status.replace('_', ' ')}: {r.note or r.source}"]))
            continue
        rows.append((d.name, [
            f"{d.severity.value} | {d.condition()}",
            (f"last {r.last_state} | {len(r.transitions())} transition(s) | ALARM {_duration(r.time_in_alarm_s)} | "
            f"{r.periods} periods, {r.missing_periods} missing"),
            f"in ALARM (UTC): {_spans(r.alarm_intervals)}",
        ] + ([f"note: {r.note}"] if r.note else [])))
    for c in comp_results:
        cd = c.definition
        role = "pages" if cd.paging else "notifies nobody"
        sup = (f" | suppressor {cd.suppressor} (wait {cd.wait_period} s, extension {cd.extension_period} s)"
               if cd.suppressor else "")
        alarm_s = c.time_in_alarm_s
        acts = [str(a) for a in c.timeline["actions"]] if len(c.timeline) else []
        waited = sum(1 for a in acts if a == SUPPRESSED_WAIT)
        held = sum(1 for a in acts if a in (SUPPRESSED_ALARM, SUPPRESSED_EXTENSION))
        notified = ", ".join(f"{t:%m-%d %H:%M}" for t in c.notifications[:5]) + (
            f" (+{len(c.notifications) - 5} more)" if len(c.notifications) > 5 else "")
        rows.append((cd.name, [
            f"{cd.severity.value} composite ({role}) | any of {len(cd.children)} alarms{sup}",
            f"last {c.last_state} | ALARM {_duration(alarm_s)} | in ALARM (UTC): {_spans(c.alarm_intervals)}",
        ] + ([(f"notifications (UTC): {notified or 'none'} | {waited} step(s) waiting for the suppressor, {held} "
               "suppressed")] if cd.paging else []) + ([f"note: {c.note}"] if c.note else [])))
    _blocks(rows)
    fired = sum(1 for r in results if r.alarm_intervals)
    no_data = sum(1 for r in results if r.status in ("no_data", "unsupported"))
    skipped = sum(1 for r in results if r.status == "skipped")
    in_alarm = sum(1 for r in results if r.last_state == "ALARM")
    pages = sum(len(c.notifications) for c in comp_results)
    click.echo(textwrap.fill(
        f"{len(results)} alarms: {fired} would have fired, {in_alarm} in ALARM at the end, {no_data} without data in "
        "this history" + (f", {skipped} anomaly-detection alarm(s) skipped (not reproducible offline)" if skipped
                          else "")
        + (f"; {len(comp_results)} composite alarms: {pages} notification(s) in all" if comp_results else ""),
        width=max(_width(), 40)))


@alarms.command("contributors")
@_CONFIG
@click.option("--data", "data_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Collected history (the folder holding tables/trail.parquet).")
@click.option("--rule", "rule_names", multiple=True, help="Only these Contributor Insights rules (repeatable).")
@click.option("--start", type=TIME, default=None, help="Window start (ISO 8601, epoch seconds or a duration ago "
                                                       "such as 2h); default: the first record.")
@click.option("--end", type=TIME, default=None, help="Window end, exclusive (same forms); default: after the last "
                                                     "record.")
@click.option("--top", type=click.IntRange(1, 100), default=10, show_default=True,
              help="Contributors per rule (GetInsightRuleReport's MaxContributorCount: 1-100).")
@_FORMAT
def contributors_cmd(config_path: Path, data_dir: Path, rule_names: tuple[str, ...], start: float | None,
                     end: float | None, top: int, out_format: str) -> None:
    """Replay the stack's Contributor Insights rules on the collected trail: the top contributors (idempotency
    keys, tenants, event sources) each rule would show for the window, ranked by count."""
    from alarms.contributors import replay_rules
    from alarms.insight_rules import build_insight_rules

    cfg, _ = _load(config_path)
    rules = build_insight_rules(cfg)
    if not rules:
        raise click.BadParameter("the stack config has no contributor_insights section", param_hint="--config")
    if rule_names:
        unknown = sorted(set(rule_names) - {r.name for r in rules})
        if unknown:
            raise click.BadParameter(f"not a rule of this stack: {', '.join(unknown)}", param_hint="--rule")
        rules = [r for r in rules if r.name in rule_names]
    require_range(start, end)
    try:
        results = replay_rules(rules, data_dir, start, end, top)
    except BacktestError as exc:
        raise click.ClickException(str(exc)) from None
    if out_format == "json":
        click.echo(json.dumps([{"rule": r.rule.name, "outcome": r.rule.outcome, "key": r.rule.key,
                                "status": r.status, "note": r.note, "matched": r.matched, "unique": r.unique,
                                "start_s": r.start_s, "end_s": r.end_s,
                                "contributors": [{"keys": list(c.keys), "count": c.count} for c in r.contributors]}
                               for r in results], indent=2))
        return
    rows = []
    for r in results:
        if r.status != "ok":
            rows.append((r.rule.name, [f"{r.status.replace('_', ' ')}: {r.note}"]))
            continue
        lines = [f"{r.matched} matching record(s), {r.unique} contributor(s); top {min(top, r.unique)}:"]
        lines += [f"{c.count:>6}  {' | '.join(c.keys)}" for c in r.contributors]
        rows.append((r.rule.name, lines))
    _blocks(rows)


def _spans(intervals: Sequence[Any]) -> str:
    shown = [f"{a:%m-%d %H:%M}-{b:%H:%M}" for a, b in intervals[:3]]
    more = len(intervals) - len(shown)
    return ", ".join(shown) + (f" (+{more} more)" if more > 0 else "") if shown else "never"


def _composite_json(c: Any) -> dict:
    d = c.definition
    return {
        "alarm": d.name,
        "kind": "composite",
        "scope": d.scope,
        "severity": d.severity.value,
        "paging": d.paging,
        "children": list(d.children),
        "suppressor": d.suppressor,
        "backtest": "ok" if len(c.timeline) else "no_data",
        "last_state": c.last_state,
        "time_in_alarm_s": c.time_in_alarm_s,
        "alarm_intervals": [[a.isoformat(), b.isoformat()] for a, b in c.alarm_intervals],
        "notifications": [t.isoformat() for t in c.notifications],
        "unknown_children": c.unknown_children,
        "note": c.note,
    }


def _duration(seconds: int) -> str:
    if seconds < 3600:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def _result_json(r) -> dict:
    return {
        "alarm": r.definition.name,
        "kind": "metric",
        "signal": r.definition.signal,
        "tier": r.definition.tier or "base",
        "severity": r.definition.severity.value,
        "backtest": r.status,
        "last_state": r.last_state,
        "transitions": [{"time": t.isoformat(), "from": a, "to": b} for t, a, b in r.transitions()],
        "time_in_alarm_s": r.time_in_alarm_s,
        "source": r.source,
        "note": r.note,
        "periods": r.periods,
        "missing_periods": r.missing_periods,
        "states": r.state_counts,
        "alarm_intervals": [[a.isoformat(), b.isoformat()] for a, b in r.alarm_intervals],
    }
