"""Readers of stack config fields: each checks one value and raises :class:`~alarms.exceptions.ConfigError`
naming its key path (``functions[1].queue``), never a second error type.

Shared by :mod:`alarms.config` and :mod:`alarms.custom`. Text that ends up in a PutMetricAlarm request is held
to the limits of the API model botocore ships (``cloudwatch``, ``PutMetricAlarm``; AlarmName 1-255
characters, TagKey 1-128, TagValue 0-256, "can't contain ASCII control characters") and dimension values,
metric names and namespaces to the emitter's EMF rules (:mod:`emitter.emf`), which follow the same model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from alarms.exceptions import ConfigError

CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")
"""ASCII control characters: the API reference of PutMetricAlarm says alarm names "can't contain" them, and
dimension names and values do not support them."""
_TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""Control characters in free text (titles, descriptions): line feed and tab are allowed there."""


def no_unknown(d: dict, allowed: set[str], at: str) -> None:
    """Raise when ``d`` has a key outside ``allowed`` (the first unknown key is named in the path)."""
    unknown = sorted(str(k) for k in d if k not in allowed)
    if unknown:
        where = f"{at}.{unknown[0]}" if at else unknown[0]
        raise ConfigError(f"unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})", where)


def text(d: dict, key: str, at: str, required: bool = False, default: str | None = None,
         check: Callable[[str], str | None] | None = None) -> Any:
    """``d[key]``: a non-empty string, ``default`` when absent (``ConfigError`` when ``required``). ``check``
    returns the reason the string is refused (e.g. :func:`emitter.emf.check_dimension_value`), or None."""
    here = f"{at}.{key}" if at else key
    value = d.get(key)
    if value is None:
        if required:
            raise ConfigError("is required", here)
        return default
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"must be a non-empty string, got {_short(value)}", here)
    if check is not None and (reason := check(value)):
        raise ConfigError(reason, here)
    return value


def name_part(max_chars: int, what: str) -> Callable[[str], str | None]:
    """A check for text that becomes (part of) an API name or tag of at most ``max_chars`` characters (the API
    model's length) with no ASCII control character."""

    def check(value: str) -> str | None:
        if CONTROL_CHARACTERS.search(value):
            return f"{what} must not contain control characters (CloudWatch refuses them)"
        if len(value) > max_chars:
            return f"{what} has {len(value)} characters; CloudWatch allows at most {max_chars}"
        return None

    return check


def free_text(max_chars: int) -> Callable[[str], str | None]:
    """A check for prose (titles, descriptions): at most ``max_chars`` characters, no control character other
    than line feed and tab."""

    def check(value: str) -> str | None:
        if _TEXT_CONTROL.search(value):
            return "must not contain control characters (other than line feed and tab)"
        if len(value) > max_chars:
            return f"has {len(value)} characters; at most {max_chars}"
        return None

    return check


def enum_value(enum: Any, value: Any, at: str) -> Any:
    """``enum(value)``, or ``ConfigError`` listing the valid values."""
    try:
        return enum(value)
    except ValueError:
        raise ConfigError(f"{_short(value)} is not one of: {', '.join(e.value for e in enum)}", at) from None


def arns(raw: Any, at: str) -> tuple[str, ...]:
    """A list of SNS topic ARNs (a single string is a list of one), each at most 1024 characters (the API
    model's ResourceName) without control characters."""
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(a, str) and a for a in raw):
        raise ConfigError("must be a list of ARNs", at)
    check = name_part(1024, "an action ARN")
    for a in raw:
        if not a.startswith("arn:"):
            raise ConfigError(f"{_short(a)} is not an ARN", at)
        if reason := check(a):
            raise ConfigError(reason, at)
    return tuple(raw)


def number(value: Any, at: str) -> float:
    """A finite number (int or float, not bool). JSON has no NaN or Infinity and CloudWatch compares against a
    finite threshold, so ``.nan``, ``.inf`` and ``1.0e+400`` (infinite once read) are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"must be a number, got {_short(value)}", at)
    if not math.isfinite(value):
        raise ConfigError(f"must be a finite number, got {value!r}", at)
    return float(value)


def count(value: Any, at: str) -> int:
    """An integer >= 1 (periods in seconds, evaluation periods, datapoints)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"must be an integer >= 1, got {_short(value)}", at)
    return value


def _short(value: Any) -> str:
    """``repr`` of a refused value, cut to stay one readable line."""
    r = repr(value)
    return r if len(r) <= 80 else r[:77] + "..."
