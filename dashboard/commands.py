"""``idemwatch dashboard --data DIR [--host H] [--port P] [--cloudwatch-log-group NAME | --cloudwatch-log-group-prefix P ...]``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from collector.cloudwatch.commands import cloudwatch as _collect_cloudwatch_cmd
from collector.cloudwatch.commands import parse_duration_s
from idemwatch.terminal import echo


def _collect_option(name: str, *decls: str, **overrides: Any):
    """The ``collect cloudwatch`` option ``name`` (its help, default, type, metavar) under new flag names, so the
    two commands cannot drift apart."""
    src = next(p for p in _collect_cloudwatch_cmd.params if p.name == name)
    assert isinstance(src, click.Option)
    kw: dict[str, Any] = {"multiple": src.multiple, "default": src.default, "help": src.help,
                          "metavar": src.metavar, "show_default": src.show_default}
    if not src.multiple:
        kw["type"] = src.type
    kw.update(overrides)
    return click.option(*decls, name, **kw)


_CLOUDWATCH_ONLY = ("since", "region", "profile", "endpoint_url", "refresh_every")


@click.command("dashboard")
@click.option("--data", "data_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("idemwatch-data"),
              show_default=True, help="Data directory written by `idemwatch collect` or `idemwatch demo`.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but loopback (e.g. 0.0.0.0 for a team) serves the data to "
                   "everyone who can reach it, without authentication: put an authenticating proxy in front.")
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Port to listen on (default: a free one).")
@click.option("--open-browser/--no-open-browser", default=False, show_default=True,
              help="Let streamlit open a browser tab.")
@_collect_option("log_groups", "--cloudwatch-log-group",
                 help="Collect this log group from CloudWatch Logs Insights into --data before serving, and on "
                      "demand from the sidebar (repeatable).")
@_collect_option("prefixes", "--cloudwatch-log-group-prefix",
                 help="Collect every log group whose name starts with PREFIX (repeatable), e.g. /aws/lambda/orders-.")
@_collect_option("since", "--since",
                 help="With --cloudwatch-*: start of the collected range, re-evaluated at each collection (24h = the "
                      "last 24 hours); ISO-8601 or epoch s also accepted.")
@_collect_option("region", "--region")
@_collect_option("profile", "--profile")
@_collect_option("endpoint_url", "--endpoint-url")
@click.option("--refresh-every", "refresh_every", default=None, metavar="DURATION",
              help="With --cloudwatch-*: collect again on the next page view once the data is older than this "
                   "(5m, 1h). Default: only when asked (sidebar button).")
@click.pass_context
def dashboard(ctx: click.Context, data_dir: Path, host: str, port: int | None, open_browser: bool, log_groups: tuple[str, ...],
              prefixes: tuple[str, ...], since: str, region: str | None, profile: str | None,
              endpoint_url: str | None, refresh_every: str | None) -> None:
    """Serve the dashboard over collected tables (127.0.0.1 unless --host; optionally collecting from CloudWatch
    first)."""
    from dashboard.cloudwatch_source import ENV_CLOUDWATCH_SOURCE
    from dashboard.exceptions import DashboardStartError
    from dashboard.serve import serve

    source = _source(ctx, log_groups, prefixes, since, region, profile, endpoint_url, refresh_every)
    if source is not None:
        _collect_before_serving(source, data_dir)
    elif not (data_dir / "tables").is_dir():
        echo(f"note: {data_dir} has no collected tables yet; the dashboard will show how to get data "
             f"(e.g. `idemwatch demo --out {data_dir} --no-serve`).", err=True)
    # always set: an inherited value must not turn the source on when this run did not ask for it
    env = {ENV_CLOUDWATCH_SOURCE: source.to_json() if source is not None else ""}
    try:
        rc = serve(data_dir, host=host, port=port, headless=not open_browser, env=env)
    except DashboardStartError as exc:
        raise click.ClickException(str(exc)) from exc
    ctx.exit(rc)


def _source(ctx: click.Context, log_groups, prefixes, since, region, profile, endpoint_url, refresh_every):
    from dashboard.cloudwatch_source import CloudWatchSource

    if not log_groups and not prefixes:
        given = [n for n in _CLOUDWATCH_ONLY
                 if ctx.get_parameter_source(n) not in (None, click.core.ParameterSource.DEFAULT)]
        if given:
            flags = ", ".join("--" + n.replace("_", "-") for n in given)
            raise click.UsageError(f"{flags} only apply with --cloudwatch-log-group or --cloudwatch-log-group-prefix")
        return None
    import time

    from collector.cloudwatch.commands import parse_time_s

    try:
        parse_time_s(since, time.time())
    except click.BadParameter as exc:
        raise click.BadParameter(exc.message, param_hint="--since") from None
    refresh_s = parse_duration_s(refresh_every) if refresh_every else None
    if refresh_s is not None and refresh_s <= 0:
        raise click.BadParameter("must be more than 0", param_hint="--refresh-every")
    return CloudWatchSource(log_groups=tuple(log_groups), log_group_prefixes=tuple(prefixes), since=since,
                            region=region, profile=profile, endpoint_url=endpoint_url, refresh_every_s=refresh_s)


def _collect_before_serving(source, data_dir: Path) -> None:
    """One incremental collection; a CloudWatch problem ends the command with its one-line message."""
    from collector.cloudwatch import CloudWatchCollectorError
    from dashboard.cloudwatch_source import collect_now

    _warn_other_source(data_dir)
    echo(f"collecting from CloudWatch Logs Insights: {', '.join(source.describe())} (since {source.since}) ...",
         err=True)
    try:
        m = collect_now(source, data_dir)
    except CloudWatchCollectorError as exc:
        raise click.ClickException(str(exc)) from None
    rows = sum(int(e.get("rows", 0)) for e in m["tables"].values())
    run = m["queries"]["this_run"]
    echo(f"collected {len(m['log_groups'])} log group(s): {rows:,} rows in {len(m['tables'])} tables, "
         f"{run['queries']} queries, cost ${run['cost_usd']:.4f}", err=True)
    bad = [n for n, e in m["tables"].items() if e.get("status") in ("truncated", "failed")]
    if bad:
        echo(f"warning: incomplete tables (see {data_dir / 'manifest.json'}): {', '.join(bad)}", err=True)


def _warn_other_source(data_dir: Path) -> None:
    """Say so when --data holds tables of another collector: the CloudWatch collection replaces them."""
    import json

    try:
        m = json.loads((data_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    other = m.get("source") or m.get("collector") if isinstance(m, dict) else None
    if other and other != "cloudwatch":
        echo(f"note: {data_dir} holds tables collected by `{other}`; the CloudWatch collection replaces them "
             "(use another --data directory to keep both).", err=True)
