"""Cost model of a collection (USD).

- Logs Insights: billed per GB of log data scanned (GetQueryResults ``statistics.bytesScanned``), default USD 0.005
  per GB in us-east-1 (Amazon CloudWatch pricing, "Logs" - "Analyze (Logs Insights queries)"). A query over a window
  scans every event of its log groups in that window, whatever the query filters, so the cost of one collection is
  about (bytes ingested in the range) x (number of standard queries) x price. Splitting a window adds no scan cost
  (the halves scan the same bytes once each) except for queries that ended Timeout/stopped and were re-run.
- GetMetricData: billed per metric requested, default USD 0.01 per 1,000 metrics (same pricing page, "API").
- DescribeLogGroups, StartQuery, GetQueryResults, StopQuery and DynamoDB Scan requests have no per-call charge in
  CloudWatch; the Scan consumes read capacity: 0.5 RCU per 4 KB read with eventually consistent reads.
Prices differ by Region: pass them in.
"""

from __future__ import annotations

from dataclasses import dataclass

from collector.cloudwatch.constants import BYTES_PER_GB, DEFAULT_PRICE_PER_GB_SCANNED_USD

DEFAULT_PRICE_PER_1000_METRICS_USD = 0.01


@dataclass(frozen=True)
class CostModel:
    """Prices in USD: ``price_per_gb_scanned`` (Logs Insights), ``price_per_1000_metrics`` (GetMetricData)."""

    price_per_gb_scanned: float = DEFAULT_PRICE_PER_GB_SCANNED_USD
    price_per_1000_metrics: float = DEFAULT_PRICE_PER_1000_METRICS_USD

    def insights_usd(self, bytes_scanned: float) -> float:
        """Cost of scanning ``bytes_scanned`` bytes (GB = 2^30 bytes)."""
        return bytes_scanned / BYTES_PER_GB * self.price_per_gb_scanned

    def metrics_usd(self, metrics_requested: int) -> float:
        """Cost of requesting ``metrics_requested`` metrics with GetMetricData (each MetricDataQuery counts)."""
        return metrics_requested / 1000 * self.price_per_1000_metrics
