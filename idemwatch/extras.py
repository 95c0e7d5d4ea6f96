"""Optional dependencies: which top-level modules each extra provides, and the one line naming a missing extra."""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRA_MODULES", "PARTS", "missing_extra_message", "missing_module"]

PARTS = ("idemwatch", "emitter", "collector", "dashboard", "alarms")
"""The top-level packages of this distribution: a ModuleNotFoundError naming one of them is a broken install, not a
missing extra."""

_COLLECTOR = ("pandas", "duckdb", "pyarrow", "boto3", "rich")
_ALARMS = ("pandas", "pyarrow", "boto3", "rich", "yaml", "ruamel")
_DASHBOARD = tuple(dict.fromkeys((*_COLLECTOR, *_ALARMS, "streamlit", "plotly")))
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "collector": _COLLECTOR,
    "alarms": _ALARMS,
    "dashboard": _DASHBOARD,
    "demo": (*_DASHBOARD, "aws_lambda_powertools"),
    "powertools": ("aws_lambda_powertools",),
    "agent": ("aws_embedded_metrics",),
    "cdk": ("aws_cdk", "constructs", "yaml", "ruamel"),
}
"""Extra -> the top-level modules its distributions provide: the import-name mirror of pyproject's
``[project.optional-dependencies]`` (a test compares the two), so a command can say which extra is missing before
it imports anything."""


def missing_module(extra: str | None) -> str | None:
    """The first module of ``extra`` that cannot be found (``find_spec``: nothing is imported), or None (also for
    ``extra=None``, the base install)."""
    for name in EXTRA_MODULES.get(extra, ()) if extra else ():
        if importlib.util.find_spec(name) is None:
            return name
    return None


def missing_extra_message(command: str, extra: str | None, module: str) -> str:
    """One line naming the extra ``command`` needs, e.g. ``'idemwatch query' needs the collector extra (missing
    module: rich): pip install 'idemwatch[collector]'``; ``module`` is the missing import (a dotted name is cut to
    its top-level module). ``extra=None`` names ``all``."""
    extra = extra or "all"
    return (f"'idemwatch {command}' needs the {extra} extra (missing module: {module.split('.')[0]}): "
            f"pip install 'idemwatch[{extra}]'")
