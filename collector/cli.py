"""The ``idemwatch`` console script: one click group, subcommands loaded lazily.

Each part owns its commands (``collector.commands``, ``dashboard.commands``,
``alarms.commands``); this root only knows where they live, so ``idemwatch --help``
does not import pandas, duckdb, streamlit or boto3. What every command shares (the one
error style, logging, environment defaults, time options) is in ``collector.cli_support``
and applied here once, not in each command.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import click

from collector.cli_support import (
    apply_env_defaults,
    configure_logging,
    missing_extra_message,
    missing_module_for,
    run,
)

# name -> "module:attribute" of a click command or group
COMMANDS: dict[str, str] = {
    "query": "collector.commands:query",
    "collect": "collector.commands:collect",
    "demo": "dashboard.demo.cli:demo",
    "dashboard": "dashboard.commands:dashboard",
    "alarms": "alarms.commands:alarms",
    "audit": "alarms.audit.commands:audit",
    "diagnose": "alarms.diagnose.commands:diagnose",
    "bundle": "collector.bundle:bundle",
}

_HELP = {
    "query": "Run one Logs Insights query over log files and print the result.",
    "collect": "Collect standard tables from local log files or CloudWatch.",
    "demo": "Simulate the demo fleet, collect it and serve the dashboard.",
    "dashboard": "Serve the dashboard over collected tables.",
    "alarms": "Export, validate, deploy and backtest CloudWatch alarms.",
    "audit": "Check deployed configuration and IaC templates against the at-least-once checklist.",
    "diagnose": "Find idempotency anti-patterns in collected logs, with the records that prove them.",
    "bundle": "Write the emitter alone as a Lambda layer zip or directory.",
}

_PARTS = ("emitter", "collector", "dashboard", "alarms")
_state = {"command": None, "verbose": 0}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        _state["command"] = cmd_name
        shadowed = shadowed_parts()  # before importing: a shadowing package would fail or run instead
        if shadowed:
            raise click.ClickException(
                f"idemwatch's top-level packages are shadowed: {', '.join(shadowed)} instead of "
                f"{Path(__file__).resolve().parent.parent}; install idemwatch in its own virtualenv "
                "(see docs/install.md)")
        absent = missing_module_for(cmd_name)  # the command's extra is not (fully) installed
        if absent is not None:
            return _missing(cmd_name, absent)
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:  # a dependency outside the extra's list
            if (exc.name or "").split(".")[0] in _PARTS:
                raise
            return _missing(cmd_name, exc.name or "?")
        return apply_env_defaults(getattr(module, attr), (cmd_name,))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help text without importing every part.
        with formatter.section("Commands"):
            formatter.write_dl([(n, _HELP.get(n, "")) for n in sorted(COMMANDS)])


def _missing(name: str, module: str) -> click.Command:
    """A stand-in for a command whose extra is missing: whatever its arguments (--help included), one line."""

    @click.command(name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                           "help_option_names": []})
    def _cmd() -> None:
        raise click.ClickException(missing_extra_message(name, module))

    return _cmd


def shadowed_parts() -> list[str]:
    """The top-level packages of idemwatch (emitter, collector, dashboard, alarms) that would be imported from
    another folder than this one: another distribution (or a local folder on sys.path) shadows them.

    Returns one description per shadowed part, empty when the install is sound. Uses ``find_spec`` only: no
    part is imported (about 1 ms)."""
    home = Path(__file__).resolve().parent.parent
    found = []
    for name in _PARTS:
        spec = importlib.util.find_spec(name)
        origin = Path(spec.origin).resolve() if spec is not None and spec.origin else None
        if origin is None or origin.parent.parent != home:
            found.append(f"'{name}' from {origin.parent if origin else 'nowhere (not installed)'}")
    return found


class _Root(_LazyGroup):
    """The root group: its ``main`` (what the console script and click's CliRunner call) runs the one error
    handler (:func:`collector.cli_support.run`) instead of click's own multi-line error output."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[override]
        _state.update(command=None, verbose=0)
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        sys.exit(run(lambda a: super(_Root, self).main(a, "idemwatch", complete_var,
                                                       standalone_mode=False, **extra),
                     args, command_of=lambda: _state["command"], verbose=lambda: _state["verbose"]))


@click.group(cls=_Root, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="idemwatch")
@click.option("-v", "--verbose", count=True, help="More output on stderr: -v info, -vv debug and tracebacks.")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr (no notes or warnings).")
def main(verbose: int, quiet: bool) -> None:
    """idemwatch: observability for at-least-once AWS Lambda handlers.

    Times: 15m/24h/7d (ago), ISO-8601 with a timezone, or epoch seconds. Exit codes: 0 ok, 1 failure, 2 bad
    usage or input. Environment: IDEMWATCH_DATA, IDEMWATCH_REGION, IDEMWATCH_PROFILE, IDEMWATCH_CONFIG."""
    if verbose and quiet:
        raise click.UsageError("--verbose and --quiet exclude each other")
    _state["verbose"] = verbose
    configure_logging(verbose, quiet)


if __name__ == "__main__":  # pragma: no cover
    main()
