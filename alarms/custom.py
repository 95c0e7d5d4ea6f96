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
from dataclasses import dataclass
from typing import Any

from alarms.constants import METRIC_ID_PATTERN
from alarms.exceptions import ConfigError
from alarms.types import ComparisonOperator, Severity, Statistic, TreatMissingData

PERCENTILE_PATTERN = r"^p(\d{1,2}(\.\d{1,2})?|100)$"
"""ExtendedStatistic percentiles as PutMetricAlarm takes them ("p0.0" to "p100")."""
_PERCENTILE_RE = re.compile(PERCENTILE_PATTERN)
_KEYS = {
    "name", "title", "description", "severity", "metric", "expression", "metrics", "period", "evaluation_periods",
    "datapoints_to_alarm", "threshold", "comparison", "unit", "treat_missing_data", "treat_missing_reason",
    "log_group", "actions",
}
_METRIC_KEYS = {"namespace", "name", "dimensions", "statistic"}
DEFAULT_MISSING_REASON = "not set in the stack config: CloudWatch's default"


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


def is_percentile(stat: str) -> bool:
    """Whether ``stat`` is an ExtendedStatistic percentile (``p99``, ``p99.9``)."""
    return bool(_PERCENTILE_RE.match(stat))


def parse_custom_alarms(raw: Any, at: str) -> tuple[CustomAlarm, ...]:
    """The checked ``custom_alarms`` list (empty when absent). Raises :class:`ConfigError`."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError("must be a list of custom alarms", at)
    out = [_one(item, f"{at}[{i}]") for i, item in enumerate(raw)]
    names = [a.name for a in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"duplicate custom alarm name(s): {', '.join(dupes)}", at)
    return tuple(out)


def _one(raw: Any, at: str) -> CustomAlarm:
    from alarms.config import _arns, _enum, _no_unknown, _str

    if not isinstance(raw, dict):
        raise ConfigError("must be a mapping", at)
    _no_unknown(raw, _KEYS, at)
    name = _str(raw, "name", at, required=True)
    has_metric, has_math = "metric" in raw, "expression" in raw or "metrics" in raw
    if has_metric == has_math:
        raise ConfigError("give either metric, or expression + metrics (metric math)", at)
    metric = None
    metrics: tuple[tuple[str, CustomMetric], ...] = ()
    expression = None
    if has_metric:
        metric = _metric(raw["metric"], f"{at}.metric")
    else:
        expression = _str(raw, "expression", at, required=True)
        parts = raw.get("metrics")
        if not isinstance(parts, dict) or not parts:
            raise ConfigError("must be a mapping of query id -> metric", f"{at}.metrics")
        for qid in parts:
            if not isinstance(qid, str) or not re.match(METRIC_ID_PATTERN, qid):
                raise ConfigError(f"query id {qid!r} must match {METRIC_ID_PATTERN}", f"{at}.metrics")
        metrics = tuple((qid, _metric(m, f"{at}.metrics.{qid}")) for qid, m in parts.items())
    period = _int(raw, "period", at, required=True)
    evaluation_periods = _int(raw, "evaluation_periods", at, required=True)
    datapoints = _int(raw, "datapoints_to_alarm", at) or evaluation_periods
    threshold = raw.get("threshold")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise ConfigError(f"is required and must be a number, got {threshold!r}", f"{at}.threshold")
    treat_raw = raw.get("treat_missing_data")
    treat = _enum(TreatMissingData, treat_raw, f"{at}.treat_missing_data") if treat_raw is not None \
        else TreatMissingData.MISSING
    reason = _str(raw, "treat_missing_reason", at)
    if treat_raw is not None and not reason:
        raise ConfigError("setting treat_missing_data needs treat_missing_reason (why that choice)", at)
    actions = _arns(raw["actions"], f"{at}.actions") if raw.get("actions") is not None else None
    return CustomAlarm(
        name=name,
        title=_str(raw, "title", at, default=name),
        description=_str(raw, "description", at, default=""),
        severity=_enum(Severity, raw.get("severity", "warning"), f"{at}.severity"),
        period=period,
        evaluation_periods=evaluation_periods,
        datapoints_to_alarm=datapoints,
        threshold=float(threshold),
        comparison=_enum(ComparisonOperator, raw.get("comparison", ComparisonOperator.GREATER_THAN.value),
                         f"{at}.comparison"),
        unit=_str(raw, "unit", at, default="Count"),
        treat_missing_data=treat,
        treat_missing_reason=reason or DEFAULT_MISSING_REASON,
        metric=metric,
        expression=expression,
        metrics=metrics,
        log_group=_str(raw, "log_group", at),
        actions=actions,
    )


def _metric(raw: Any, at: str) -> CustomMetric:
    from alarms.config import _no_unknown, _str

    if not isinstance(raw, dict):
        raise ConfigError("must be a mapping (namespace, name, dimensions, statistic)", at)
    _no_unknown(raw, _METRIC_KEYS, at)
    stat = _str(raw, "statistic", at, required=True)
    if stat not in {s.value for s in Statistic} and not is_percentile(stat):
        raise ConfigError(f"{stat!r} is not one of: {', '.join(s.value for s in Statistic)} or a percentile "
                          "pNN[.N]", f"{at}.statistic")
    dims = raw.get("dimensions") or {}
    if not isinstance(dims, dict) or not all(isinstance(k, str) and isinstance(v, (str, int)) and
                                             not isinstance(v, bool) for k, v in dims.items()):
        raise ConfigError("must be a mapping of dimension name -> value", f"{at}.dimensions")
    return CustomMetric(name=_str(raw, "name", at, required=True), statistic=stat,
                        namespace=_str(raw, "namespace", at),
                        dimensions=tuple((k, str(v)) for k, v in dims.items()))


def _int(raw: dict, key: str, at: str, required: bool = False) -> int | None:
    value = raw.get(key)
    if value is None:
        if required:
            raise ConfigError("is required", f"{at}.{key}")
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"must be an integer >= 1, got {value!r}", f"{at}.{key}")
    return value
