"""Errors of ``idemwatch audit``: every one names what was being read and why it failed."""

from __future__ import annotations

__all__ = ["AuditError", "SuppressionError", "TemplateError"]


class AuditError(Exception):
    """Base class: the audit could not run (bad input, unreachable AWS, unknown rule id)."""


class TemplateError(AuditError):
    """A template (CloudFormation/SAM JSON or YAML, Terraform JSON) could not be read or has the wrong shape.

    The message names the file and, where known, the resource (logical id or Terraform address)."""

    def __init__(self, message: str, file: str | None = None) -> None:
        self.file = file
        super().__init__(f"{file}: {message}" if file else message)


class SuppressionError(AuditError):
    """A suppression in the stack config names an unknown rule id."""
