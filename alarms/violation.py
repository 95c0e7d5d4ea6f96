"""One problem found by a check of alarm requests or dashboard bodies (:mod:`alarms.validate`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Violation:
    """One problem: ``alarm`` name, ``field`` path (``Metrics[2].Id``), ``rule`` id and a message."""

    alarm: str
    field: str
    rule: str
    message: str
    level: str = "error"
    """"error" (the API refuses it or it can never get data) or "warning"."""

    def __str__(self) -> str:
        return f"{self.alarm}: {self.field}: {self.message} [{self.rule}]"


def errors(violations: Iterable[Violation]) -> list[Violation]:
    """The violations that make a request invalid (``level == "error"``)."""
    return [v for v in violations if v.level == "error"]
