"""Custom alarms declared in the stack config: any namespace, metric, statistic or metric math.

They go through the same path as the catalogue (:class:`~alarms.definitions.AlarmDefinition`,
validation against the API model and the cross-field rules, every export format, deploy and
backtest). Shape of one ``custom_alarms`` entry::

    - name: orders-consumer-DurationP99      # the alarm name after alarm_name_prefix
      title: Orders consumer slow             # default = name
      description: p99 duration above 5 s     # what it means and what to do (the links are added)
      severity: warning                       # critical | warning | info (default warning): picks the topics
      metric: {namespace: AWS/Lambda, name: Duration, dimensions: {FunctionName: orders-consumer},
               statistic: p99}                # Statistic value or a percentile pNN[.N] (ExtendedStatistic)
      # ... or metric math (ids lower-case; exactly the expression returns data):
      # expression: "100 * FILL(errors, 0) / invocations"
      # metrics: {errors: {namespace: AWS/Lambda, name: Errors, dimensions: {...}, statistic: Sum}, ...}
      period: 60                              # seconds
      evaluation_periods: 5
      datapoints_to_alarm: 3                  # default = evaluation_periods
      threshold: 5000
      comparison: GreaterThanThreshold        # default GreaterThanThreshold
      unit: Milliseconds                      # the threshold's unit (descriptions and tables only)
      treat_missing_data: notBreaching        # default missing (CloudWatch's default) ...
      treat_missing_reason: "..."             # ... and a reason is required when it is set
      log_group: /aws/lambda/orders-consumer  # optional: console links to the logs
      actions: [arn:aws:sns:...]              # optional: instead of the severity's topics

``namespace`` defaults to the stack's namespace. Errors are :class:`~alarms.exceptions.ConfigError`
naming the key path.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from alarms import fields as F
from alarms.constants import METRIC_ID_PATTERN
from alarms.definitions import is_percentile
from alarms.exceptions import ConfigError
from alarms.types import STATIC_COMPARISONS, ComparisonOperator, Severity, Statistic, TreatMissingData
from emitter import emf

_KEYS = {
    "name", "title", "description", "severity", "metric", "expression", "metrics", "period", "evaluation_periods",
    "datapoints_to_alarm", "threshold", "comparison", "unit", "treat_missing_data", "treat_missing_reason",
    "log_group", "actions",
}
_METRIC_KEYS = {"namespace", "name", "dimensions", "statistic"}
DEFAULT_MISSING_REASON = "not set in the stack config: CloudWatch's default"
_NAME = F.name_part(255, "an alarm name")  # API model: AlarmName 1-255
_METRIC_NAME = F.name_part(255, "a metric name")  # API model: MetricName 1-255
_EXPRESSION = F.name_part(2048, "a metric math expression")  # API model: MetricExpression 1-2048
_PROSE = F.free_text(1024)  # AlarmDescription 0-1024 (title, description, unit and reason end up there)


def _namespace(value: str) -> str | None:
    """API model: Namespace 1-255 characters, pattern ``[^:].*``, no control characters."""
    if value.startswith(":"):
        return "a namespace must not start with ':'"
    return F.name_part(255, "a namespace")(value)


@dataclass(frozen=True)
class CustomMetric:
    """One metric of a custom alarm. ``namespace`` None = the stack's namespace."""

    name: str
    statistic: str
    namespace: str | None = None
    dimensions: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CustomAlarm:
    """One ``custom_alarms`` entry, checked (see the module docstring). ``period`` in seconds."""

    name: str
    title: str
    description: str
    severity: Severity
    period: int
    evaluation_periods: int
    datapoints_to_alarm: int
    threshold: float
    comparison: ComparisonOperator
    unit: str
    treat_missing_data: TreatMissingData
    treat_missing_reason: str
    metric: CustomMetric | None = None
    expression: str | None = None
    metrics: tuple[tuple[str, CustomMetric], ...] = ()
    log_group: str | None = None
    actions: tuple[str, ...] | None = None


def parse_custom_alarms(raw: Any, at: str) -> tuple[CustomAlarm, ...]:
    """The checked ``custom_alarms`` list (empty when absent). Raises :class:`ConfigError`."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError("must be a list of custom alarms", at)
    out = [_one(item, f"{at}[{i}]") for i, item in enumerate(raw)]
    names = [a.name for a in out]
    dupes = sorted(n for n, c in Counter(names).items() if c > 1)
    if dupes:
        raise ConfigError(f"duplicate custom alarm name(s): {', '.join(dupes)}", at)
    return tuple(out)


def _one(raw: Any, at: str) -> CustomAlarm:
    if not isinstance(raw, dict):
        raise ConfigError("must be a mapping", at)
    F.no_unknown(raw, _KEYS, at)
    name = F.text(raw, "name", at, required=True, check=_NAME)
    has_metric, has_math = "metric" in raw, "expression" in raw or "metrics" in raw
    if has_metric == has_math:
        raise ConfigError("give either metric, or expression + metrics (metric math)", at)
    metric = None
    metrics: tuple[tuple[str, CustomMetric], ...] = ()
    expression = None
    if has_metric:
        metric = _metric(raw["metric"], f"{at}.metric")
    else:
        expression = F.text(raw, "expression", at, required=True, check=_EXPRESSION)
        parts = raw.get("metrics")
        if not isinstance(parts, dict) or not parts:
            raise ConfigError("must be a mapping of query id -> metric", f"{at}.metrics")
        for qid in parts:
            if not isinstance(qid, str) or not re.match(METRIC_ID_PATTERN, qid):
                raise ConfigError(f"query id {qid!r} must match {METRIC_ID_PATTERN}", f"{at}.metrics")
        metrics = tuple((qid, _metric(m, f"{at}.metrics.{qid}")) for qid, m in parts.items())
    period = _count(raw, "period", at, required=True)
    evaluation_periods = _count(raw, "evaluation_periods", at, required=True)
    datapoints = _count(raw, "datapoints_to_alarm", at, required=False, default=evaluation_periods)
    if "threshold" not in raw:
        raise ConfigError("is required (a number)", f"{at}.threshold")
    threshold = F.number(raw["threshold"], f"{at}.threshold")
    treat_raw = raw.get("treat_missing_data")
    treat = F.enum_value(TreatMissingData, treat_raw, f"{at}.treat_missing_data") if treat_raw is not None \
        else TreatMissingData.MISSING
    reason = F.text(raw, "treat_missing_reason", at, check=_PROSE)
    if treat_raw is not None and not reason:
        raise ConfigError("setting treat_missing_data needs treat_missing_reason (why that choice)", at)
    actions = F.arns(raw["actions"], f"{at}.actions") if raw.get("actions") is not None else None
    return CustomAlarm(
        name=name,
        title=F.text(raw, "title", at, default=name, check=_PROSE),
        description=F.text(raw, "description", at, default="", check=_PROSE),
        severity=F.enum_value(Severity, raw.get("severity", "warning"), f"{at}.severity"),
        period=period,
        evaluation_periods=evaluation_periods,
        datapoints_to_alarm=datapoints,
        threshold=threshold,
        comparison=_static_comparison(raw.get("comparison", ComparisonOperator.GREATER_THAN.value),
                                      f"{at}.comparison"),
        unit=F.text(raw, "unit", at, default="Count", check=_PROSE),
        treat_missing_data=treat,
        treat_missing_reason=reason or DEFAULT_MISSING_REASON,
        metric=metric,
        expression=expression,
        metrics=metrics,
        log_group=F.text(raw, "log_group", at, check=emf.check_dimension_value),
        actions=actions,
    )


def _static_comparison(value: Any, at: str) -> ComparisonOperator:
    """A static-threshold ComparisonOperator (the band operators need an anomaly-detection band, which a custom
    alarm does not declare)."""
    op = F.enum_value(ComparisonOperator, value, at)
    if op not in STATIC_COMPARISONS:
        raise ConfigError(f"{op.value} is for anomaly-detection bands; use one of: "
                          f"{', '.join(c.value for c in STATIC_COMPARISONS)}", at)
    return op


def _metric(raw: Any, at: str) -> CustomMetric:
    if not isinstance(raw, dict):
        raise ConfigError("must be a mapping (namespace, name, dimensions, statistic)", at)
    F.no_unknown(raw, _METRIC_KEYS, at)
    stat = F.text(raw, "statistic", at, required=True)
    if stat not in {s.value for s in Statistic} and not is_percentile(stat):
        raise ConfigError(f"{stat!r} is not one of: {', '.join(s.value for s in Statistic)} or a percentile "
                          "pNN[.N]", f"{at}.statistic")
    dims = raw.get("dimensions") or {}
    if not isinstance(dims, dict) or not all(isinstance(k, str) and isinstance(v, (str, int)) and
                                             not isinstance(v, bool) for k, v in dims.items()):
        raise ConfigError("must be a mapping of dimension name -> value", f"{at}.dimensions")
    for k, v in dims.items():
        if reason := emf.check_dimension_name(k) or emf.check_dimension_value(str(v)):
            raise ConfigError(reason, f"{at}.dimensions.{k}")
    return CustomMetric(name=F.text(raw, "name", at, required=True, check=_METRIC_NAME), statistic=stat,
                        namespace=F.text(raw, "namespace", at, check=_namespace),
                        dimensions=tuple((k, str(v)) for k, v in dims.items()))


def _count(raw: dict, key: str, at: str, required: bool, default: int = 0) -> int:
    """An integer >= 1 under ``key`` (``default`` when absent and not required)."""
    value = raw.get(key)
    if value is None:
        if required:
            raise ConfigError("is required", f"{at}.{key}")
        return default
    return F.count(value, f"{at}.{key}")
