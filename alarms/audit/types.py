"""Enumerations of the audit: rule severity, finding status, resource kind, output format."""

from __future__ import annotations

from enum import Enum

__all__ = ["FindingStatus", "OutputFormat", "ResourceKind", "Severity"]


class Severity(str, Enum):
    """How bad a failed rule is; ``--fail-on`` compares against this order (high > medium > low)."""

    HIGH = "high"  # duplicates, lost messages or a blocked consumer follow directly
    MEDIUM = "medium"  # a failure will be slow to see or to recover from
    LOW = "low"  # hygiene: recovery and diagnosis are harder

    @property
    def rank(self) -> int:
        return {"high": 3, "medium": 2, "low": 1}[self.value]

    @property
    def sarif_level(self) -> str:
        """SARIF 2.1.0 ``result.level`` (error | warning | note)."""
        return {"high": "error", "medium": "warning", "low": "note"}[self.value]


class FindingStatus(str, Enum):
    """Outcome of one rule on one resource. ``unknown``: a value the check needs could not be resolved
    (a template parameter without a default, an ``Fn::If``, a Terraform expression) - never counted as a pass."""

    FAIL = "fail"
    PASS = "pass"
    UNKNOWN = "unknown"
    SUPPRESSED = "suppressed"


class ResourceKind(str, Enum):
    FUNCTION = "function"
    MAPPING = "event-source-mapping"
    QUEUE = "queue"
    TABLE = "table"
    EXPECTED = "expected-resource"  # named by the stack config, --function or --table, not found by the source


class OutputFormat(str, Enum):
    TABLE = "table"
    JSON = "json"
    SARIF = "sarif"
