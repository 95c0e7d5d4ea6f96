"""Options every ``idemwatch`` command shares: time and duration option types, and environment defaults.

- **Times and durations** (:data:`TIME`, :func:`time_option_value`, :func:`duration_option_value`,
  :func:`require_range`): parsed by :mod:`idemwatch.timerange`; a bad value is a ``click.BadParameter`` naming the
  flag (exit 2).
- **Environment defaults** (:data:`ENV_DEFAULTS`, :func:`apply_env_defaults`): the options people set once read
  ``IDEMWATCH_*`` variables, for every command that has the option, without each command declaring it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import click

from idemwatch.timerange import TimeParseError, TimeRangeError, check_range, format_utc, parse_duration, parse_time_full

__all__ = [
    "DURATION",
    "ENV_DEFAULTS",
    "TIME",
    "TextParam",
    "apply_env_defaults",
    "duration_option_value",
    "require_range",
    "time_option_value",
]

log = logging.getLogger("idemwatch.options")

# --------------------------------------------------------------------------- time options


def time_option_value(text: str, flag: str = "time", *, now: float | None = None) -> float:
    """One time option's text -> epoch seconds (float), through :func:`idemwatch.timerange.parse_time_full`.

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
    :data:`TIME` and :data:`DURATION`."""

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

DURATION = TextParam("DURATION", duration_option_value)
"""Duration options: :func:`duration_option_value` -> seconds (float)."""


def require_range(start: float | None, end: float | None, flags: tuple[str, str] = ("--start", "--end")) -> None:
    """Refuse a reversed or empty range given as two options (epoch seconds): raises :class:`click.UsageError`
    (exit 2) naming both flags."""
    try:
        check_range(start, end)
    except TimeRangeError as exc:
        raise click.UsageError(f"{flags[0]}/{flags[1]}: {exc}") from None


# --------------------------------------------------------------------------- environment defaults

ENV_DEFAULTS: dict[str, str] = {
    "--data": "IDEMWATCH_DATA",
    "--region": "IDEMWATCH_REGION",
    "--profile": "IDEMWATCH_PROFILE",
    "--config": "IDEMWATCH_CONFIG",
    "--account-id": "IDEMWATCH_ACCOUNT_ID",
}
"""Option flag -> environment variable read when the option is not given, on every command that has the flag.
Unset, Region and profile follow :class:`idemwatch.aws.AwsTarget` (``AWS_REGION``, then botocore's own chain)."""

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

        cmd.get_command = get_command  # type: ignore[method-assign, assignment]
        cmd._idemwatch_env = True  # type: ignore[attr-defined]
    return cmd
