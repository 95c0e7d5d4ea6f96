"""Errors of ``idemwatch diagnose``: every one names what was being read and why it failed."""

from __future__ import annotations

__all__ = ["DiagnoseError", "SourceError"]


class DiagnoseError(Exception):
    """Base class: the diagnosis could not run (unreadable data, a failed Logs Insights query, bad options)."""


class SourceError(DiagnoseError):
    """The evidence source could not be read: a data directory without collected events, log files that do not
    exist, a data directory another ``collect local`` is writing, or a CloudWatch query that failed."""
