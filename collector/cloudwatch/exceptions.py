"""Errors of the CloudWatch collector itself; AWS failures are ``idemwatch.aws.AwsError`` subclasses (one line each)."""

from __future__ import annotations

from collector.exceptions import CollectError

__all__ = ["CloudWatchCollectorError"]


class CloudWatchCollectorError(CollectError):
    """A collection that cannot run as asked (an empty query, a window size off the 1-minute grid, an unknown
    table); ``str(exc)`` is a one-line explanation."""
