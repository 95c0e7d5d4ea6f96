"""Errors raised by the ingest."""

from __future__ import annotations


class IngestError(Exception):
    """A file or event batch cannot be ingested at all (unreadable, not a log format).

    Individual bad lines never raise: they are counted in ``IngestReport.by_reason``.
    """


class UnknownFormatError(IngestError):
    """The file matches none of the supported formats (e.g. a binary file)."""
