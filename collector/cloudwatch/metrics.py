"""CloudWatch metrics beside the query tables: GetMetricData into ``tables/cloudwatch_metrics.parquet``.

Collected (period 60 s by default):
- ``AWS/Lambda`` per FunctionName (from ``/aws/lambda/<name>`` log groups or ``functions``): IteratorAge (Maximum),
  Errors (Sum), Throttles (Sum), Duration (Average, Maximum).
- ``AWS/SQS`` per QueueName: ApproximateAgeOfOldestMessage (Maximum) for ``queues``; ApproximateNumberOfMessagesVisible
  (Maximum) for ``dlqs``.
- this project's namespace (default ``emitter.contract.NAMESPACE_DEFAULT``): every metric ListMetrics finds there,
  with every dimension set it was published with; Count metrics as Sum, Milliseconds metrics as Average and Maximum.

Limits handled: at most 500 MetricDataQuery per GetMetricData call (CloudWatch API Reference, GetMetricData), results
followed through ``NextToken`` (a call returns at most 100,800 datapoints); ListMetrics paginated.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from collector.cloudwatch.constants import DEFAULT_METRIC_PERIOD_S, METRIC_QUERIES_PER_CALL
from collector.cloudwatch.cost import CostModel
from collector.parquet import to_arrow, write_parquet
from collector.tables import Table
from emitter.contract import METRIC_UNITS, NAMESPACE_DEFAULT, Metric, Unit
from idemwatch.aws import translate

METRICS_TABLE = Table(
    "cloudwatch_metrics",
    (("time", "TIMESTAMP"), ("namespace", "VARCHAR"), ("metric_name", "VARCHAR"), ("dimensions", "VARCHAR"),
     ("stat", "VARCHAR"), ("period_s", "BIGINT"), ("value", "DOUBLE")),
    "GetMetricData datapoints: one row per metric, statistic and period start (UTC). dimensions = JSON object of "
    "dimension name -> value, keys sorted.",
)

LAMBDA_METRICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("IteratorAge", ("Maximum",)), ("Errors", ("Sum",)), ("Throttles", ("Sum",)), ("Duration", ("Average", "Maximum")),
)


@dataclass(frozen=True)
class MetricSpec:
    """One metric + statistic to fetch. ``dimensions``: ((name, value), ...)."""

    namespace: str
    metric_name: str
    dimensions: tuple[tuple[str, str], ...]
    stat: str


@dataclass
class MetricsOptions:
    """``functions``: Lambda function names (added to those derived from /aws/lambda/ log groups);
    ``queues``/``dlqs``: SQS queue names; ``namespace``: this project's namespace (None = skip);
    ``period_s``: datapoint period (multiple of 60)."""

    functions: Sequence[str] = ()
    queues: Sequence[str] = ()
    dlqs: Sequence[str] = ()
    namespace: str | None = NAMESPACE_DEFAULT
    period_s: int = DEFAULT_METRIC_PERIOD_S
    extra: Sequence[MetricSpec] = field(default_factory=tuple)


def function_names(log_groups: Sequence[str]) -> list[str]:
    """Lambda function names of ``/aws/lambda/<name>`` log groups."""
    return sorted({g.split("/aws/lambda/", 1)[1] for g in log_groups if g.startswith("/aws/lambda/")})


def _own_stats(metric_name: str) -> tuple[str, ...]:
    try:
        unit = METRIC_UNITS[Metric(metric_name)]
    except ValueError:
        return ("Sum",)
    return ("Average", "Maximum") if unit == Unit.MILLISECONDS else ("Sum",)


def list_namespace_metrics(client: Any, namespace: str) -> list[MetricSpec]:
    """Every (metric, dimension set) published in ``namespace`` (ListMetrics, paginated), with its statistics."""
    out: list[MetricSpec] = []
    try:
        for page in client.get_paginator("list_metrics").paginate(Namespace=namespace):
            for m in page.get("Metrics", []):
                dims = tuple(sorted((d["Name"], d["Value"]) for d in m.get("Dimensions", [])))
                out.extend(MetricSpec(namespace, m["MetricName"], dims, s) for s in _own_stats(m["MetricName"]))
    except Exception as exc:
        raise translate(exc, action="cloudwatch:ListMetrics", resource=namespace) from exc
    return sorted(set(out), key=lambda s: (s.metric_name, s.dimensions, s.stat))


def plan_metrics(client: Any, options: MetricsOptions, log_groups: Sequence[str]) -> list[MetricSpec]:
    specs: list[MetricSpec] = []
    for fn in sorted(set(function_names(log_groups)) | set(options.functions)):
        for name, stats in LAMBDA_METRICS:
            specs.extend(MetricSpec("AWS/Lambda", name, (("FunctionName", fn),), s) for s in stats)
    specs.extend(MetricSpec("AWS/SQS", "ApproximateAgeOfOldestMessage", (("QueueName", q),), "Maximum")
                 for q in options.queues)
    specs.extend(MetricSpec("AWS/SQS", "ApproximateNumberOfMessagesVisible", (("QueueName", q),), "Maximum")
                 for q in options.dlqs)
    if options.namespace:
        specs.extend(list_namespace_metrics(client, options.namespace))
    specs.extend(options.extra)
    return specs


def get_metric_data(client: Any, specs: Sequence[MetricSpec], start: int, end: int, period_s: int,
                    calls: dict[str, int] | None = None) -> list[dict[str, str | None]]:
    """Datapoints of ``specs`` over ``[start, end]`` (epoch s, inclusive) as rows of strings (METRICS_TABLE columns).

    Sends the specs in chunks of at most 500 MetricDataQuery per call and follows ``NextToken`` within each chunk.
    ``calls`` (optional) counts GetMetricData requests. Raises ``idemwatch.aws.AwsError`` (translated AWS errors).
    """
    rows: list[dict[str, str | None]] = []
    t0 = datetime.fromtimestamp(start, tz=UTC)
    t1 = datetime.fromtimestamp(end + 1, tz=UTC)  # GetMetricData EndTime is exclusive
    for offset in range(0, len(specs), METRIC_QUERIES_PER_CALL):
        chunk = specs[offset:offset + METRIC_QUERIES_PER_CALL]
        queries = [{
            "Id": f"m{i}",
            "MetricStat": {"Metric": {"Namespace": s.namespace, "MetricName": s.metric_name,
                                      "Dimensions": [{"Name": k, "Value": v} for k, v in s.dimensions]},
                           "Period": period_s, "Stat": s.stat},
            "ReturnData": True,
        } for i, s in enumerate(chunk)]
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {"MetricDataQueries": queries, "StartTime": t0, "EndTime": t1,
                                      "ScanBy": "TimestampAscending"}
            if token:
                kwargs["NextToken"] = token
            try:
                resp = client.get_metric_data(**kwargs)
            except Exception as exc:
                raise translate(exc, action="cloudwatch:GetMetricData") from exc
            if calls is not None:
                calls["GetMetricData"] = calls.get("GetMetricData", 0) + 1
            for res in resp.get("MetricDataResults", []):
                s = chunk[int(res["Id"][1:])]
                dims = json.dumps(dict(s.dimensions), sort_keys=True, separators=(",", ":"))
                for ts, value in zip(res.get("Timestamps", []), res.get("Values", [])):
                    rows.append({"time": str(round(ts.timestamp() * 1000)), "namespace": s.namespace,
                                 "metric_name": s.metric_name, "dimensions": dims, "stat": s.stat,
                                 "period_s": str(period_s), "value": repr(float(value))})
            token = resp.get("NextToken")
            if not token:
                break
    return rows


def collect_metrics(client: Any, out: Path, options: MetricsOptions, start: int, end: int, *,
                    log_groups: Sequence[str] = (), cost: CostModel | None = None) -> dict[str, Any]:
    """Write ``<out>/tables/cloudwatch_metrics.parquet`` for ``[start, end]``; returns the manifest section."""
    cost = cost or CostModel()
    specs = plan_metrics(client, options, log_groups)
    calls: dict[str, int] = {}
    rows = get_metric_data(client, specs, start, end, options.period_s, calls) if specs else []
    table, report = to_arrow(rows, METRICS_TABLE)
    n = write_parquet(table, METRICS_TABLE, out / "tables" / f"{METRICS_TABLE.name}.parquet")
    return {"table": METRICS_TABLE.name, "metrics_requested": len(specs), "datapoints": n,
            "api_calls": calls, "conversion": report.to_json(), "period_s": options.period_s,
            "cost_usd": round(cost.metrics_usd(len(specs)), 6)}
