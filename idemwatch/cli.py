"""The ``idemwatch`` console script: one click group whose commands come from one table, loaded lazily.

Each part owns its commands (``collector.commands``, ``dashboard.commands``, ``alarms.commands``, ...); this root
knows only :data:`COMMANDS` (name, help line, the extra it needs, where it lives), so ``idemwatch --help`` imports
no pandas, DuckDB, Streamlit or boto3, and adding a command is one row. What every command shares is applied here
once: the one error handler (:mod:`idemwatch.errors`), logging (:mod:`idemwatch.logs`), environment defaults
(:mod:`idemwatch.options`) and the missing-extra check (:mod:`idemwatch.extras`).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click

from idemwatch.errors import run
from idemwatch.extras import PARTS, missing_extra_message, missing_module
from idemwatch.logs import configure_logging
from idemwatch.options import apply_env_defaults

__all__ = ["COMMANDS", "Command", "main", "shadowed_parts"]


@dataclass(frozen=True)
class Command:
    """One top-level command: ``name``, its ``help`` line in ``idemwatch --help``, the pyproject ``extra`` it needs
    (None: the base install) and ``target``, the ``"module:attribute"`` of its click command or group."""

    name: str
    help: str
    extra: str | None
    target: str


COMMANDS: tuple[Command, ...] = (
    Command("alarms", "Export, validate, deploy and backtest CloudWatch alarms.", "alarms", "alarms.commands:alarms"),
    Command("audit", "Check deployed configuration and IaC templates against the at-least-once checklist.", "alarms",
            "alarms.audit.commands:audit"),
    Command("bundle", "Write the emitter alone as a Lambda layer zip or directory.", None, "collector.bundle:bundle"),
    Command("collect", "Collect standard tables from local log files or CloudWatch.", "collector",
            "collector.commands:collect"),
    Command("dashboard", "Serve the dashboard over collected tables.", "dashboard", "dashboard.commands:dashboard"),
    Command("diagnose", "Find idempotency anti-patterns in collected logs, with the records that prove them.",
            "collector", "alarms.diagnose.commands:diagnose"),
    Command("demo", "Simulate the demo fleet, collect it and serve the dashboard.", "demo", "dashboard.demo.cli:demo"),
    Command("init", "Write the alarms stack config from a CloudFormation/SAM/Terraform template or cdk.out.", "alarms",
            "alarms.stack_init.commands:init"),
    Command("query", "Run one Logs Insights query over log files and print the result.", "collector",
            "collector.commands:query"),
)
"""Every top-level command, in the order ``idemwatch --help`` lists them."""

_BY_NAME = {c.name: c for c in COMMANDS}
_state: dict[str, Any] = {"command": None, "verbose": 0}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [c.name for c in COMMANDS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = _BY_NAME.get(cmd_name)
        if command is None:
            return None
        _state["command"] = command
        shadowed = shadowed_parts()  # before importing: a shadowing package would fail or run instead
        if shadowed:
            raise click.ClickException(
                f"idemwatch's top-level packages are shadowed: {', '.join(shadowed)} instead of "
                f"{Path(__file__).resolve().parent.parent}; install idemwatch in its own virtualenv "
                "(see docs/install.md)")
        absent = missing_module(command.extra)  # the command's extra is not (fully) installed
        if absent is not None:
            return _missing(command, absent)
        module_name, attr = command.target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:  # a dependency outside the extra's list
            if (exc.name or "").split(".")[0] in PARTS:
                raise
            return _missing(command, exc.name or "?")
        return apply_env_defaults(getattr(module, attr), (cmd_name,))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help text without importing every part.
        with formatter.section("Commands"):
            formatter.write_dl([(c.name, c.help) for c in COMMANDS])


def _missing(command: Command, module: str) -> click.Command:
    """A stand-in for a command whose extra is missing: whatever its arguments (--help included), one line."""

    @click.command(command.name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                                   "help_option_names": []})
    def _cmd() -> NoReturn:
        raise click.ClickException(missing_extra_message(command.name, command.extra, module))

    return _cmd


def _missing_extra(module: str) -> str | None:
    command = _state["command"]
    return None if command is None else missing_extra_message(command.name, command.extra, module)


def shadowed_parts() -> list[str]:
    """The top-level packages of idemwatch (:data:`idemwatch.extras.PARTS`) that would be imported from another
    folder than this one: another distribution (or a local folder on sys.path) shadows them.

    Returns one description per shadowed part, empty when the install is sound. Uses ``find_spec`` only: no part
    is imported."""
    home = Path(__file__).resolve().parent.parent
    found = []
    for name in PARTS:
        spec = importlib.util.find_spec(name)
        origin = Path(spec.origin).resolve() if spec is not None and spec.origin else None
        if origin is None or origin.parent.parent != home:
            found.append(f"'{name}' from {origin.parent if origin else 'nowhere (not installed)'}")
    return found


class _Root(_LazyGroup):
    """The root group: its ``main`` (what the console script and click's CliRunner call) runs the one error
    handler (:func:`idemwatch.errors.run`) instead of click's own multi-line error output."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        _state.update(command=None, verbose=0)
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        sys.exit(run(lambda a: super(_Root, self).main(a, "idemwatch", complete_var, standalone_mode=False, **extra),
                     args, missing_extra=_missing_extra, verbose=lambda: _state["verbose"]))


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
