"""Cost model of a collection (USD), and the estimate ``--dry-run`` prints before any query runs.

- Logs Insights: billed per GB of log data scanned (GetQueryResults ``statistics.bytesScanned``), default USD 0.005
  per GB in us-east-1 (Amazon CloudWatch pricing, "Logs" - "Analyze (Logs Insights queries)"). A query over a window
  scans every event of its log groups in that window, whatever the query filters, unless a field index lets it skip
  events (``filterIndex``: ``index_policy``). The standard queries share one scan per window (``scan``), so a
  collection scans about (bytes ingested in the range) x price once; each query that runs on its own scans the range
  again. Splitting a window adds no scan cost (the halves scan the same bytes once each) except for queries that
  ended Timeout/stopped and were re-run.
- GetMetricData: billed per metric requested, default USD 0.01 per 1,000 metrics (same pricing page, "API").
- DescribeLogGroups, DescribeIndexPolicies, StartQuery, GetQueryResults, StopQuery and DynamoDB Scan requests have no
  per-call charge in CloudWatch; the Scan consumes read capacity: 0.5 RCU per 4 KB read with eventually consistent
  reads.
Prices differ by Region: pass them in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from collector.cloudwatch.constants import BYTES_PER_GB, DEFAULT_PRICE_PER_GB_SCANNED_USD
from collector.cloudwatch.windows import Window

DEFAULT_PRICE_PER_1000_METRICS_USD = 0.01

MIN_RATE_SPAN_S = 3600
"""Stored bytes are spread over at least an hour (a log group created a minute ago is not read as a torrent)."""


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


def bytes_per_second(group: Mapping[str, Any], now_s: float) -> tuple[float, float]:
    """(estimated bytes ingested per second, epoch s the group's data starts) of one DescribeLogGroups entry: its
    ``storedBytes`` spread evenly over the time it covers, from ``creationTime`` (epoch ms) or, with a retention
    (``retentionInDays``), the last that many days, whichever is shorter; at least ``MIN_RATE_SPAN_S``."""
    created = float(group.get("creationTime", 0)) / 1000.0
    begin = created
    if group.get("retentionInDays"):
        begin = max(begin, now_s - float(group["retentionInDays"]) * 86400)
    span = max(MIN_RATE_SPAN_S, now_s - begin)
    return float(group.get("storedBytes", 0)) / span, created


def window_bytes(groups: Mapping[str, Mapping[str, Any]], names: Sequence[str], w: Window, now_s: float) -> float:
    """Estimated bytes of log groups ``names`` in window ``w`` (epoch s, inclusive): each group's rate over the part
    of ``w`` between its creation and now."""
    total = 0.0
    for n in names:
        rate, created = bytes_per_second(groups[n], now_s)
        lo, hi = max(w.start, created), min(w.end + 1, now_s)
        total += rate * max(0.0, hi - lo)
    return total


def estimate(groups: Mapping[str, Mapping[str, Any]], own: Sequence[tuple[str, Sequence[Window]]],
             scans: Sequence[tuple[Sequence[Window], Sequence[str]]], scan_tables: Sequence[str], cost: CostModel,
             now_s: float, indexed: int = 0) -> dict[str, Any]:
    """What a run would scan and cost, before any query: per query (the shared scan over its windows and log-group
    batches, each table queried on its own over its windows and every log group) and in total, from
    ``DescribeLogGroups`` (``groups``: name -> entry) and the windows planned. An estimate: ``storedBytes`` is spread
    evenly over the group's life (``bytes_per_second``), and field indexes (scans that skip events) are not counted,
    so an indexed scan costs at most this."""
    names = list(groups)
    by_query: dict[str, Any] = {}
    if scan_tables:
        b = sum(window_bytes(groups, batch, w, now_s) for wins, batch in scans for w in wins)
        by_query["scan"] = {"tables": list(scan_tables), "windows": len({w for wins, _ in scans for w in wins}),
                            "bytes_scanned": round(b), "cost_usd": round(cost.insights_usd(b), 6)}
    for name, wins in own:
        b = sum(window_bytes(groups, names, w, now_s) for w in wins)
        by_query[name] = {"tables": [name], "windows": len(wins), "bytes_scanned": round(b),
                          "cost_usd": round(cost.insights_usd(b), 6)}
    total = sum(q["bytes_scanned"] for q in by_query.values())
    return {"dry_run": True, "log_groups": len(names),
            "stored_bytes": int(sum(float(g.get("storedBytes", 0)) for g in groups.values())),
            "by_query": by_query, "total": {"bytes_scanned": total, "cost_usd": round(cost.insights_usd(total), 6)},
            "price_per_gb_usd": cost.price_per_gb_scanned,
            "basis": "DescribeLogGroups storedBytes spread evenly over each log group's retained time; "
                     "indexed scans (field indexes) not counted" + (f" ({indexed} group-windows)" if indexed else "")}
