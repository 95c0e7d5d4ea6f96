"""What every ``idemwatch`` command shares: time/duration option types, one error style, logging, env defaults.

- **Errors** (:func:`run`): one line on stderr, ``Error: ...``; exit code 2 for usage and input errors
  (click's convention), 1 for failures (an AWS call, a collection, an internal error); never a traceback
  unless ``--verbose`` is given twice. A missing optional dependency names the extra to install.
- **Logging** (:func:`configure_logging`): configured once by the root ``--verbose``/``--quiet``; notes and
  warnings go to stderr as ``note: ...`` / ``warning: ...``.
- **Environment defaults** (:data:`ENV_DEFAULTS`, :func:`apply_env_defaults`): the options people set once read
  ``IDEMWATCH_*`` variables, for every command that has the option, without each command declaring it.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import click

from collector.timerange import TimeParseError, TimeRangeError, check_range, format_utc, parse_duration, parse_time_full

__all__ = [
    "ENV_DEFAULTS",
    "EXTRAS",
    "EXTRA_MODULES",
    "TIME",
    "apply_env_defaults",
    "configure_logging",
    "duration_option_value",
    "missing_extra_message",
    "missing_module_for",
    "require_range",
    "run",
    "time_option_value",
]

log = logging.getLogger("idemwatch.cli")

# --------------------------------------------------------------------------- time options


def time_option_value(text: str, flag: str = "time", *, now: float | None = None) -> float:
    """One time option's text -> epoch seconds (float), through :func:`collector.timerange.parse_time_full`.

    A time without a timezone is read as UTC and a ``note:`` line says so. Raises :class:`click.BadParameter`
    (exit 2) naming ``flag``."""
    try:
        parsed = parse_time_full(text, now=now)
    except TimeParseError as exc:
        raise click.BadParameter(str(exc), param_hint=flag) from None
    if parsed.assumed_utc:
        log.warning("%s %r has no timezone: read as UTC (%s)", flag, text, format_utc(parsed.epoch_s))
    return parsed.epoch_s


def duration_option_value(text: str, flag: str = "duration") -> float:
    """One duration option's text (``15m``) -> seconds (float). Raises :class:`click.BadParameter` naming ``flag``."""
    try:
        return parse_duration(text)
    except TimeParseError as exc:
        raise click.BadParameter(str(exc), param_hint=flag) from None


class TextParam(click.ParamType):
    """A click type that parses option text with ``parse(text, flag) -> float`` (a number passes as it is), e.g.
    :data:`TIME`; ``TextParam("DURATION", duration_option_value)`` gives a duration option."""

    def __init__(self, name: str, parse: Callable[[str, str], float]) -> None:
        self.name = name
        self._parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, int | float):
            return float(value)
        return self._parse(str(value), _flag(param, self.name.lower()))


def _flag(param: click.Parameter | None, default: str) -> str:
    return param.opts[0] if param is not None and param.opts else default


TIME = TextParam("TIME", time_option_value)
"""Time options: :func:`time_option_value` -> epoch seconds (float)."""



def require_range(start: float | None, end: float | None, flags: tuple[str, str] = ("--start", "--end")) -> None:
    """Refuse a reversed or empty range given as two options (epoch seconds): raises :class:`click.UsageError`
    (exit 2) naming both flags."""
    try:
        check_range(start, end)
    except TimeRangeError as exc:
        raise click.UsageError(f"{flags[0]}/{flags[1]}: {exc}") from None


# --------------------------------------------------------------------------- optional dependencies

EXTRAS: dict[str, str] = {
    "query": "collector",
    "collect": "collector",
    "dashboard": "dashboard",
    "demo": "demo",
    "alarms": "alarms",
    "audit": "alarms",
    "diagnose": "collector",
}
"""Top-level command -> the extra that installs what it needs (pyproject ``[project.optional-dependencies]``)."""

_COLLECTOR = ("pandas", "duckdb", "pyarrow", "boto3", "rich")
_ALARMS = ("pandas", "pyarrow", "boto3", "rich", "yaml")
_DASHBOARD = tuple(dict.fromkeys((*_COLLECTOR, *_ALARMS, "streamlit")))
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "collector": _COLLECTOR,
    "alarms": _ALARMS,
    "dashboard": _DASHBOARD,
    "demo": (*_DASHBOARD, "aws_lambda_powertools"),
    "powertools": ("aws_lambda_powertools",),
    "agent": ("aws_embedded_metrics",),
}
"""Extra -> the top-level modules its distributions provide: the import-name mirror of pyproject's extras (a test
compares the two), so a command can say which extra is missing before it imports anything."""

# modules of this distribution: a ModuleNotFoundError naming one of them is a broken install, not a missing extra
_OWN = ("emitter", "collector", "dashboard", "alarms")


def missing_module_for(command: str) -> str | None:
    """The first module of ``command``'s extra that cannot be found (``find_spec``; nothing is imported), or None."""
    import importlib.util

    extra = EXTRAS.get(command)
    for name in EXTRA_MODULES.get(extra, ()) if extra else ():
        if importlib.util.find_spec(name) is None:
            return name
    return None


def missing_extra_message(command: str, module: str) -> str:
    """One line naming the extra ``command`` needs, e.g. ``'idemwatch query' needs the collector extra ...``;
    ``module`` is the missing import (dotted names are cut to the top-level distribution module)."""
    extra = EXTRAS.get(command, "all")
    return (f"'idemwatch {command}' needs the {extra} extra (missing module: {module.split('.')[0]}): "
            f"pip install 'idemwatch[{extra}]'")


# --------------------------------------------------------------------------- environment defaults

ENV_DEFAULTS: dict[str, str] = {
    "--data": "IDEMWATCH_DATA",
    "--region": "IDEMWATCH_REGION",
    "--profile": "IDEMWATCH_PROFILE",
    "--config": "IDEMWATCH_CONFIG",
    "--account-id": "IDEMWATCH_ACCOUNT_ID",
}
"""Option flag -> environment variable read when the option is not given, on every command that has the flag.
Region and profile fall back to boto3's own ``AWS_REGION``/``AWS_DEFAULT_REGION``/``AWS_PROFILE`` when unset."""

_DATA_OUT_COMMANDS = frozenset({("collect", "local"), ("collect", "cloudwatch"), ("demo",)})
"""Commands whose ``--out`` is the data directory (the one ``dashboard --data`` reads): they read IDEMWATCH_DATA."""

# optional --config options (alarms validate) would change what runs when the variable is set: required only
_REQUIRED_ONLY = frozenset({"--config"})


def apply_env_defaults(cmd: click.Command, path: tuple[str, ...]) -> click.Command:
    """Give ``cmd`` (reached as ``idemwatch <path...>``) the environment defaults of :data:`ENV_DEFAULTS`; for a
    group, do the same for each subcommand when it is looked up (lazy groups included). Returns ``cmd``.

    An option that already names an ``envvar`` keeps it."""
    for p in cmd.params:
        if not isinstance(p, click.Option) or p.envvar:
            continue
        var = next((ENV_DEFAULTS[o] for o in p.opts if o in ENV_DEFAULTS), None)
        if var is None and "--out" in p.opts and path in _DATA_OUT_COMMANDS:
            var = ENV_DEFAULTS["--data"]
        if var is not None and not (set(p.opts) & _REQUIRED_ONLY and not p.required):
            p.envvar, p.show_envvar = var, True
    if isinstance(cmd, click.Group) and not getattr(cmd, "_idemwatch_env", False):
        lookup = cmd.get_command

        def get_command(ctx: click.Context, name: str) -> click.Command | None:
            sub = lookup(ctx, name)
            return apply_env_defaults(sub, (*path, name)) if sub is not None else None

        cmd.get_command = get_command  # type: ignore[method-assign]
        cmd._idemwatch_env = True  # type: ignore[attr-defined]
    return cmd


# --------------------------------------------------------------------------- logging


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at emit time (click's CliRunner swaps it per invocation)."""

    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        label = {"WARNING": "note" if record.name.startswith("idemwatch") else "warning"}.get(
            record.levelname, record.levelname.lower())
        text = f"{label}: {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def configure_logging(verbose: int, quiet: bool) -> None:
    """Configure logging once for this process: stderr, ``note:``/``warning:``/``info:`` prefixes.

    Levels for this project's loggers (``idemwatch``, ``collector``, ``dashboard``, ``alarms``): WARNING by
    default, INFO with ``-v``, DEBUG with ``-vv`` (which also shows other libraries' INFO, and tracebacks);
    ``--quiet`` shows errors only. Repeated calls replace the handler rather than adding one."""
    level = logging.ERROR if quiet else {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    handler = _StderrHandler()
    handler.setFormatter(_Formatter())
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_idemwatch", False):
            root.removeHandler(h)
    handler._idemwatch = True  # type: ignore[attr-defined]
    others = logging.ERROR if quiet else (logging.INFO if verbose >= 2 else logging.WARNING)
    own = ("idemwatch", *_OWN)

    def _level_for(record: logging.LogRecord) -> bool:
        # Other libraries' loggers may set their own level (werkzeug sets INFO on itself): the handler, not
        # the root level, decides what reaches stderr, so an in-process server's access log never mixes into
        # a command's output.
        mine = record.name.split(".", 1)[0] in own
        return record.levelno >= (level if mine else others)

    handler.addFilter(_level_for)
    root.addHandler(handler)
    root.setLevel(min(level, others))
    for name in ("idemwatch", *_OWN):
        logging.getLogger(name).setLevel(level)


# --------------------------------------------------------------------------- the one error handler


def run(invoke: Callable[[list[str] | None], Any], args: Sequence[str] | None = None,
        command_of: Callable[[], str | None] = lambda: None, verbose: Callable[[], int] = lambda: 0) -> int:
    """Run ``invoke(args)`` (a click command's ``main`` with ``standalone_mode=False``) and turn every way it can
    fail into one ``Error:`` line and an exit code (returned).

    ``command_of()`` names the top-level command being run (for the extra in a missing-dependency message);
    ``verbose()`` is the ``-v`` count (2+ prints the traceback of an unexpected error)."""
    try:
        rv = invoke(list(args) if args is not None else None)
    except _NO_ARGS_IS_HELP as exc:  # a bare group (`idemwatch`, `idemwatch alarms`): its help, as click shows it
        exc.show()
        return exc.exit_code
    except click.UsageError as exc:  # BadParameter, MissingParameter, NoSuchOption, ...
        hint = f" (see '{' '.join(['idemwatch', *_path(exc.ctx)])} --help')" if exc.ctx is not None else ""
        return _error(_one_line(exc.format_message()) + hint, 2)
    except click.ClickException as exc:
        return _error(_one_line(exc.format_message()), exc.exit_code)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.Abort:
        return _error("aborted", 1)
    except KeyboardInterrupt:
        return _error("interrupted", 130)
    except BrokenPipeError:  # `idemwatch query ... | head`
        return 0
    except SystemExit as exc:  # commands that print their own message and sys.exit(n)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else _error(str(exc.code), 1))
    except ModuleNotFoundError as exc:
        command = command_of()
        if exc.name and exc.name.split(".")[0] not in _OWN and command is not None:
            return _error(missing_extra_message(command, exc.name), 1)
        return _unexpected(exc, verbose())
    except Exception as exc:  # noqa: BLE001 - the one place that turns failures into one line
        if type(exc).__module__.split(".")[0] in ("botocore", "boto3"):
            return _error(f"AWS: {_one_line(str(exc))}", 1)
        if isinstance(exc, OSError) and exc.filename is not None:
            return _error(f"{exc.strerror or exc}: {exc.filename}", 1)
        return _unexpected(exc, verbose())
    return rv if isinstance(rv, int) else 0


_NO_ARGS_IS_HELP: type[click.UsageError] = getattr(click.exceptions, "NoArgsIsHelpError", type("_Never", (click.UsageError,), {}))
"""click >= 8.2 raises it for a group called without a command; older versions print the help themselves."""


def _path(ctx: click.Context | None) -> list[str]:
    names = []
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return list(reversed(names))


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.strip().splitlines() if part.strip())


def _error(message: str, code: int) -> int:
    click.echo(f"Error: {message}", err=True)
    return code


def _unexpected(exc: BaseException, verbose: int) -> int:
    if verbose >= 2:
        traceback.print_exception(exc, file=sys.stderr)
    tail = "" if verbose >= 2 else " (run with -vv for the traceback)"
    return _error(f"internal error: {type(exc).__name__}: {_one_line(str(exc))}{tail}", 1)
