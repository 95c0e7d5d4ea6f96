"""Limits and defaults of the CloudWatch collector, each with the AWS rule it comes from."""

from __future__ import annotations

MAX_LOG_GROUPS_PER_QUERY = 50
"""StartQuery ``logGroupNames``: "You can include up to 50 log groups" (CloudWatch Logs API Reference, StartQuery)."""

ROWS_PER_PAGE = 10_000
"""GetQueryResults returns at most 10,000 rows per call (``maxItems`` max 10,000; botocore logs 2014-03-28 model)."""

MAX_QUERY_LIMIT = 100_000
"""StartQuery ``limit``: "The maximum limit is 100,000 ... by paginating with the nextToken" (botocore 1.44 model).
Older APIs (no ``nextToken`` on GetQueryResults) cap a query at 10,000 rows."""

TERMINAL_STATUSES = frozenset({"Complete", "Failed", "Cancelled", "Timeout", "Unknown"})
"""GetQueryResults ``status`` values after which the query will not change (QueryStatus enum minus Scheduled/Running)."""

RUNNING_STATUSES = frozenset({"Scheduled", "Running"})

ACCOUNT_QUERY_CONCURRENCY = 30
"""Concurrent Logs Insights queries per account: "You can have up to 30 concurrent CloudWatch Logs insights queries,
including queries that have been added to dashboards" (CloudWatch Logs API Reference, StartQuery). The console's
query-history page names 100 for some accounts; the collector never relies on either: it backs off when StartQuery
answers LimitExceededException (``adaptive.ConcurrencyLimit``)."""

DEFAULT_MAX_CONCURRENCY = 15
"""``--max-concurrency``: the most queries the collector runs at once. Half of the API reference's 30, so that on a
quiet account dashboards and people still find half the quota free before the collector has seen any collision (a
dashboard that fails to start a query is invisible to the collector; only its own LimitExceededException makes it back
off). Accounts with a raised quota (100 on the query-history page) can pass more."""

DEFAULT_INITIAL_CONCURRENCY = 2
"""Queries the collector starts with before any has started cleanly (start polite, grow while they start)."""

START_QUERY_TPS = 10.0
"""StartQuery calls per second per account and Region: "StartQuery throttle limit in transactions per second: 10",
not adjustable (CloudWatch Logs quotas, cloudwatch_limits_cwl.html). The collector's rate never exceeds it."""

GET_QUERY_RESULTS_TPS = 10.0
"""GetQueryResults calls per second per account and Region: "GetQueryResults throttle limit in transactions per
second: 10", not adjustable (same page). Polls and result pages share it."""

DESCRIBE_INDEX_POLICIES_PER_S = 5.0
"""DescribeIndexPolicies calls per second (one log group per call in botocore's model: logGroupIdentifiers min 1,
max 1). The quotas page names no rate for it; 5 is the rate it names for most Describe* operations."""

DEFAULT_QUERY_DEADLINE_S = 15 * 60.0
"""Our own deadline per query (seconds, wall clock). The service times out a query after 60 minutes; we give up much
earlier, call StopQuery (frees the concurrency slot) and split the window instead."""

DEFAULT_PRICE_PER_GB_SCANNED_USD = 0.005
"""Logs Insights query price, us-east-1 public price: USD 0.005 per GB of log data scanned (Amazon CloudWatch pricing,
Logs tab; checked 2026). Other Regions differ: pass ``--price-per-gb``."""

BYTES_PER_GB = 1024**3
"""AWS bills "GB" of data as 2^30 bytes."""

METRIC_QUERIES_PER_CALL = 500
"""GetMetricData: "You can include up to 500 MetricDataQuery structures in one call" (CloudWatch API Reference)."""

DEFAULT_METRIC_PERIOD_S = 60
"""Period of the collected CloudWatch metrics (seconds): the standard resolution of AWS/Lambda and AWS/SQS metrics."""

DEFAULT_WINDOW_S = 3600
"""Size of one collection window (seconds). Windows sit on a fixed grid (multiples of this size since the epoch) so
that incremental runs line up with earlier ones."""

BIN_S = 60
"""Bin size of the standard tables (``bin(1m)``): windows and splits of binned tables are aligned to it so that no
bin is ever split between two queries."""

DEFAULT_SETTLE_S = 300
"""A window ending less than this many seconds before now is collected but not marked complete: CloudWatch Logs
accepts events up to 2 hours late and ingestion takes seconds to minutes, so recent windows are re-queried next run."""

DEFAULT_SCAN_SEGMENTS = 4
"""Parallel Scan segments for the idempotency table (DynamoDB Scan ``Segment``/``TotalSegments``)."""
