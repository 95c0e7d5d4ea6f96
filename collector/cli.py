"""The ``idemwatch`` console script: one click group, subcommands loaded lazily.

Each part owns its commands (``collector.commands``, ``dashboard.commands``,
``alarms.commands``); this root only knows where they live, so ``idemwatch --help``
does not import pandas, duckdb, streamlit or boto3.
"""

from __future__ import annotations

import importlib

import click

# name -> "module:attribute" of a click command or group
COMMANDS: dict[str, str] = {
    "query": "collector.commands:query",
    "collect": "collector.commands:collect",
    "demo": "dashboard.demo.cli:demo",
    "dashboard": "dashboard.commands:dashboard",
    "alarms": "alarms.commands:alarms",
    "audit": "alarms.audit.commands:audit",
}

_HELP = {
    "query": "Run one Logs Insights query over log files and print the result.",
    "collect": "Collect standard tables from local log files or CloudWatch.",
    "demo": "Simulate the demo fleet, collect it and serve the dashboard.",
    "dashboard": "Serve the dashboard over collected tables.",
    "alarms": "Export, validate, deploy and backtest CloudWatch alarms.",
    "audit": "Check deployed configuration and IaC templates against the at-least-once checklist.",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:  # an extra is not installed
            return _missing(cmd_name, exc)
        return getattr(module, attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help text without importing every part.
        with formatter.section("Commands"):
            formatter.write_dl([(n, _HELP[n]) for n in sorted(COMMANDS)])


def _missing(name: str, exc: ModuleNotFoundError) -> click.Command:
    @click.command(name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    def _cmd() -> None:
        raise click.ClickException(
            f"'idemwatch {name}' needs a module that is not installed ({exc.name}); "
            "install the extras: pip install 'idemwatch[all]'"
        )

    return _cmd


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="idemwatch")
def main() -> None:
    """idemwatch: observability for at-least-once AWS Lambda handlers."""


if __name__ == "__main__":  # pragma: no cover
    main()
