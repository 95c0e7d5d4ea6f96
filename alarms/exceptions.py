"""Errors raised by the alarms package. All derive from :class:`AlarmsError`."""

from __future__ import annotations

from alarms.violation import Violation


class AlarmsError(Exception):
    """Base class of every error this package raises on purpose."""


class ConfigError(AlarmsError):
    """The stack config file is unreadable or wrong. ``path`` is the dotted key path (``functions[1].queue``)."""

    def __init__(self, message: str, path: str = "", file: str | None = None) -> None:
        self.path = path
        self.file = file
        where = f"{file}: " if file else ""
        at = f"{path}: " if path else ""
        super().__init__(f"{where}{at}{message}")


class ValidationFailed(AlarmsError):
    """One or more alarm requests break the CloudWatch API model or its cross-field rules."""

    def __init__(self, violations: list[Violation]) -> None:
        self.violations = violations
        lines = "\n".join(f"  {v}" for v in violations)
        super().__init__(f"{len(violations)} alarm definition problem(s):\n{lines}")


class DeployError(AlarmsError):
    """A CloudWatch API call made by ``deploy`` failed."""


class BacktestError(AlarmsError):
    """The history directory cannot be read (missing tables directory, unreadable parquet)."""
