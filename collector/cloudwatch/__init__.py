"""Collector on AWS: Logs Insights at scale, CloudWatch metrics, and stuck keys from the idempotency table.

Runs the standard Logs Insights queries (collector/queries/*.insights) against CloudWatch Logs with boto3 and writes
the same standard tables as the offline collector, plus CloudWatch metric datapoints and the idempotency table's
stuck IN_PROGRESS records. Sessions, clients and AWS errors are ``idemwatch.aws``'s (``AwsTarget``, ``AwsError``).
"""

from __future__ import annotations

from collector.cloudwatch.backoff import Backoff, PollSchedule
from collector.cloudwatch.collect import Clients, CollectOptions, collect_cloudwatch
from collector.cloudwatch.cost import CostModel
from collector.cloudwatch.exceptions import CloudWatchCollectorError
from collector.cloudwatch.metrics import METRICS_TABLE, MetricsOptions
from collector.cloudwatch.runner import LogsInsightsRunner, QueryJob, RunnerConfig
from collector.cloudwatch.stuck_keys import PRESETS, STUCK_TABLE, IdempotencySchema, StuckKeysOptions, schema_from
from collector.cloudwatch.types import QueryAttempt, QueryStats, WindowResult
from collector.cloudwatch.windows import Window
from collector.standard_queries import load_standard_queries

__all__ = [
    "METRICS_TABLE",
    "PRESETS",
    "STUCK_TABLE",
    "Backoff",
    "Clients",
    "CloudWatchCollectorError",
    "CollectOptions",
    "CostModel",
    "IdempotencySchema",
    "LogsInsightsRunner",
    "MetricsOptions",
    "PollSchedule",
    "QueryAttempt",
    "QueryJob",
    "QueryStats",
    "RunnerConfig",
    "StuckKeysOptions",
    "Window",
    "WindowResult",
    "collect_cloudwatch",
    "load_standard_queries",
    "schema_from",
]
