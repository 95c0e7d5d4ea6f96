"""Time periods of ``bin()``, ``datefloor()`` and ``dateceil()``.

Units and abbreviations as documented for ``bin`` (plural ``s`` accepted on every
abbreviation longer than one character):
https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_QuerySyntax-Stats.html
"""

from __future__ import annotations

__all__ = ["FIXED_UNIT_MS", "UNIT_ALIASES", "canonical_unit"]

_BASE = {
    "ms": ("millisecond", "ms", "msec"),
    "s": ("second", "s", "sec"),
    "m": ("minute", "m", "min"),
    "h": ("hour", "h", "hr"),
    "d": ("day", "d"),
    "w": ("week", "w"),
    "mo": ("month", "mo", "mon"),
    "q": ("quarter", "q", "qtr"),
    "y": ("year", "y", "yr"),
}
UNIT_ALIASES: dict[str, str] = {}
for _canon, _names in _BASE.items():
    for _n in _names:
        UNIT_ALIASES[_n] = _canon
        if len(_n) > 1:
            UNIT_ALIASES[_n + "s"] = _canon

FIXED_UNIT_MS: dict[str, int] = {
    "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 7 * 86_400_000,
}
"""Units of fixed length (ms). Bins of these units are aligned on multiples since the epoch
(UTC); months, quarters and years follow the calendar."""


def canonical_unit(unit: str) -> str | None:
    """``"mins"`` -> ``"m"``; None when the unit is not a Logs Insights time unit."""
    return UNIT_ALIASES.get(unit) or UNIT_ALIASES.get(unit.lower())
