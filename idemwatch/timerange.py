"""The one parser for every time and duration option of ``idemwatch`` (and for library callers).

A *time* is one of:

- a relative duration meaning "that long before now": ``90s``, ``15m``, ``24h``, ``7d``, ``1w``;
- epoch seconds: ``1767607200`` or ``1767607200.5`` (seconds, never milliseconds: a value above
  :data:`MAX_EPOCH_S` is refused rather than read as a date 50,000 years away);
- ISO-8601 with a timezone: ``2026-01-05T10:00:00Z``, ``2026-01-05T10:00:00.250+01:00``;
- ISO-8601 without one (``2026-01-05 10:00``, ``2026-01-05``): read as UTC, and the caller is told so
  through :attr:`ParsedTime.assumed_utc` (the CLI prints a one-line note) — never silently local time.

A *range* is inclusive at both ends, as Logs Insights' ``startTime``/``endTime`` are
(https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_StartQuery.html); a range whose
start is at or after its end is refused (:class:`TimeRangeError`): it can only return nothing, and an
empty answer with exit code 0 reads as "no problems".
"""

from __future__ import annotations

import re
import time as _time
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = [
    "DURATION_UNITS_S",
    "MAX_EPOCH_S",
    "ParsedTime",
    "TimeParseError",
    "TimeRangeError",
    "check_range",
    "format_utc",
    "parse_duration",
    "parse_time",
    "parse_time_full",
]

DURATION_UNITS_S: dict[str, int] = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
"""Seconds per duration unit (``w`` = 7 days). Months and years are not fixed lengths and are not accepted."""

MAX_EPOCH_S = 253402300799
"""9999-12-31T23:59:59Z in epoch seconds: a larger number is almost surely milliseconds typed as seconds."""

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?$")


class TimeParseError(ValueError):
    """A time or duration text that is none of the accepted forms; the message names the forms."""


class TimeRangeError(ValueError):
    """A start at or after its end (the range is reversed or empty)."""


@dataclass(frozen=True, slots=True)
class ParsedTime:
    """A parsed time: ``epoch_s`` (float, epoch **seconds**, UTC) and whether a missing timezone was read as UTC."""

    epoch_s: float
    assumed_utc: bool = False


def parse_duration(text: str) -> float:
    """``90s``, ``15m``, ``24h``, ``7d``, ``1w`` (also ``1.5h``) -> seconds (float, >= 0).

    Raises :class:`TimeParseError` for anything else (a bare number has no unit and is refused)."""
    m = _DURATION.match(text.strip().lower())
    if not m:
        raise TimeParseError(f"{text!r} is not a duration like 90s, 15m, 24h, 7d or 1w")
    return float(m.group(1)) * DURATION_UNITS_S[m.group(2)]


def parse_time_full(text: str, *, now: float | None = None) -> ParsedTime:
    """Parse one time (see the module docstring) -> :class:`ParsedTime`.

    ``now`` (epoch seconds, default ``time.time()``) anchors relative durations. Raises
    :class:`TimeParseError` naming the accepted forms."""
    t = text.strip()
    if not t:
        raise TimeParseError("empty time: expected 15m/24h/7d (ago), ISO-8601 with a timezone, or epoch seconds")
    if _DURATION.match(t.lower()):
        return ParsedTime((_time.time() if now is None else now) - parse_duration(t))
    if _NUMBER.match(t):
        v = float(t)
        if not 0 <= v <= MAX_EPOCH_S:
            raise TimeParseError(f"{text!r}: epoch seconds must be between 0 and {MAX_EPOCH_S} "
                                 "(is it milliseconds? divide by 1000)")
        return ParsedTime(v)
    iso = t[:-1] + "+00:00" if t.endswith(("Z", "z")) else t
    try:
        dt = datetime.fromisoformat(iso)
    except ValueError:
        raise TimeParseError(f"{text!r}: expected epoch seconds, ISO-8601 or a duration like 24h (ago); e.g. "
                             "1767607200, 2026-01-05T10:00:00Z, 15m, 7d") from None
    if dt.tzinfo is None:
        return ParsedTime(dt.replace(tzinfo=UTC).timestamp(), assumed_utc=True)
    return ParsedTime(dt.timestamp())


def parse_time(text: str, *, now: float | None = None) -> float:
    """Parse one time -> epoch **seconds** (float). Same forms and errors as :func:`parse_time_full`."""
    return parse_time_full(text, now=now).epoch_s


def check_range(start: float | None, end: float | None) -> None:
    """Refuse a reversed or empty range (epoch seconds; ``None`` = open on that side).

    Raises :class:`TimeRangeError` when both are given and ``start >= end``."""
    if start is not None and end is not None and start >= end:
        what = "empty (start equals end)" if start == end else "reversed (start is after end)"
        raise TimeRangeError(f"the time range is {what}: {format_utc(start)} .. {format_utc(end)}")


def format_utc(epoch_s: float) -> str:
    """Epoch seconds -> ``2026-01-05T10:00:00Z`` (milliseconds shown only when not whole)."""
    dt = datetime.fromtimestamp(epoch_s, UTC)
    text = dt.isoformat(timespec="milliseconds" if dt.microsecond else "seconds")
    return text.replace("+00:00", "Z")
