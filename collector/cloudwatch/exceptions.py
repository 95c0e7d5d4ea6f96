"""Errors of the CloudWatch collector. Each carries a one-line message fit for the CLI (no traceback)."""

from __future__ import annotations

from collector.exceptions import CollectError


class CloudWatchCollectorError(CollectError):
    """Base class: something the user can act on; ``str(exc)`` is a one-line explanation."""


class MissingCredentialsError(CloudWatchCollectorError):
    """No AWS credentials were found (env, profile, SSO, instance role...)."""


class AccessDeniedError(CloudWatchCollectorError):
    """The caller lacks an IAM permission; the message names the action."""


class LogGroupNotFoundError(CloudWatchCollectorError):
    """A named log group does not exist, or a prefix matched no log group."""


class ThrottledError(CloudWatchCollectorError):
    """The account kept throttling (LimitExceededException / ThrottlingException) after every retry."""


class QueryFailedError(CloudWatchCollectorError):
    """A Logs Insights query ended Failed / Cancelled, or StartQuery rejected it (MalformedQueryException)."""


class TableNotFoundError(CloudWatchCollectorError):
    """The idempotency DynamoDB table does not exist."""
