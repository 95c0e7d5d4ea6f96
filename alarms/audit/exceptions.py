"""Errors of ``idemwatch audit``: every one names what was being read and why it failed."""

from __future__ import annotations

__all__ = ["AuditError", "EmptyAuditError", "MalformedResponseError", "MalformedTemplateError", "SuppressionError",
           "TemplateError"]


class AuditError(Exception):
    """Base class: the audit could not run (bad input, unreachable AWS, unknown rule id)."""


class TemplateError(AuditError):
    """A template (CloudFormation/SAM JSON or YAML, Terraform JSON) could not be read or has the wrong shape.

    The message names the file and, where known, the resource (logical id or Terraform address)."""

    def __init__(self, message: str, file: str | None = None) -> None:
        self.file = file
        super().__init__(f"{file}: {message}" if file else message)


class MalformedTemplateError(TemplateError):
    """A template that cannot be read as one: bytes that are not UTF-8, text that is not JSON/YAML, a value of
    the wrong shape (a string, number or list where a mapping belongs), a reference cycle (``Ref``, parameter
    defaults, ``Fn::Sub``, ``Fn::GetAtt``), nesting deeper than the audit follows, a number that is no integer.

    ``where`` is the path inside the file (``Resources.Worker.Properties.Timeout``), ``problem`` what is wrong;
    the message is one line: ``<file>: <where>: <problem>``."""

    def __init__(self, problem: str, file: str | None = None, where: str = "") -> None:
        self.problem = " ".join(problem.split())
        self.where = where
        super().__init__(f"{where}: {self.problem}" if where else self.problem, file)


class MalformedResponseError(AuditError):
    """An AWS API answered (HTTP 200) with a body that is not the documented response: unparseable JSON or a
    missing member. The message names the API action and what was missing."""


class EmptyAuditError(AuditError):
    """The audit found nothing to check (no function, mapping, queue or table, and nothing configured that could
    be missing): an empty report would read as a pass."""


class SuppressionError(AuditError):
    """A suppression in the stack config names an unknown rule id."""
