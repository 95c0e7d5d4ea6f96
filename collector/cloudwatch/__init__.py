"""Collector on AWS: Logs Insights at scale, CloudWatch metrics, and stuck keys from the idempotency table.

Runs the standard Logs Insights queries (collector/queries/*.insights) against CloudWatch Logs with boto3 and writes
the same standard tables as the offline collector, plus CloudWatch metric datapoints and the idempotency table's
stuck IN_PROGRESS records. Imports boto3 lazily through its submodules.
"""

from __future__ import annotations

from collector.cloudwatch.backoff import Backoff, PollSchedule
from collector.cloudwatch.exceptions import (
    AccessDeniedError,
    CloudWatchCollectorError,
    LogGroupNotFoundError,
    MissingCredentialsError,
    QueryFailedError,
    TableNotFoundError,
    ThrottledError,
)
from collector.cloudwatch.runner import LogsInsightsRunner, QueryJob, RunnerConfig
from collector.cloudwatch.session import AwsTarget
from collector.cloudwatch.types import QueryAttempt, QueryStats, WindowResult
from collector.cloudwatch.windows import Window

__all__ = [
    "AccessDeniedError",
    "AwsTarget",
    "Backoff",
    "CloudWatchCollectorError",
    "LogGroupNotFoundError",
    "LogsInsightsRunner",
    "MissingCredentialsError",
    "PollSchedule",
    "QueryAttempt",
    "QueryFailedError",
    "QueryJob",
    "QueryStats",
    "RunnerConfig",
    "TableNotFoundError",
    "ThrottledError",
    "Window",
    "WindowResult",
]
