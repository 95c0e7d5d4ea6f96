"""The alarm definition: one CloudWatch metric alarm, with the reasoning behind each setting.

An :class:`AlarmDefinition` is what the catalogue builds, the exporters render, the deployer
sends and the backtest evaluates. :meth:`AlarmDefinition.to_request` gives the exact
PutMetricAlarm request (API field names), which is also the ``--cli-input-json`` file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from alarms.types import ComparisonOperator, Severity, TreatMissingData

PERCENTILE_PATTERN = r"^p(\d{1,2}(\.\d{1,2})?|100)$"
"""ExtendedStatistic percentiles as PutMetricAlarm takes them ("p0.0" to "p100")."""
_PERCENTILE_RE = re.compile(PERCENTILE_PATTERN)


def is_percentile(stat: str) -> bool:
    """Whether ``stat`` is an ExtendedStatistic percentile (``p99``, ``p99.9``)."""
    return bool(_PERCENTILE_RE.match(stat))


@dataclass(frozen=True)
class MetricRef:
    """A CloudWatch metric: namespace, name and dimensions ((name, value), ...) in request order."""

    namespace: str
    metric_name: str
    dimensions: tuple[tuple[str, str], ...] = ()

    def to_api(self) -> dict[str, Any]:
        """``Metric`` structure of the API: ``{"Namespace", "MetricName", "Dimensions": [{"Name", "Value"}]}``."""
        return {
            "Namespace": self.namespace,
            "MetricName": self.metric_name,
            "Dimensions": [{"Name": n, "Value": v} for n, v in self.dimensions],
        }

    @property
    def dimension_map(self) -> dict[str, str]:
        return dict(self.dimensions)


@dataclass(frozen=True)
class MetricQuery:
    """One ``MetricDataQuery`` of a metric-math alarm: either ``metric`` + ``stat`` or ``expression``.

    ``period`` (seconds) applies to ``metric`` queries. Exactly one query of an alarm has
    ``return_data=True``: the expression the threshold is compared with.
    """

    id: str
    metric: MetricRef | None = None
    stat: str | None = None
    period: int | None = None
    expression: str | None = None
    label: str | None = None
    return_data: bool = False

    def to_api(self) -> dict[str, Any]:
        q: dict[str, Any] = {"Id": self.id}
        if self.metric is not None:
            q["MetricStat"] = {"Metric": self.metric.to_api(), "Period": self.period, "Stat": self.stat}
        if self.expression is not None:
            q["Expression"] = self.expression
        if self.label is not None:
            q["Label"] = self.label
        q["ReturnData"] = self.return_data
        return q


@dataclass(frozen=True)
class AlarmDefinition:
    """One alarm of the catalogue.

    Either ``metric`` + ``statistic`` (single-metric alarm) or ``queries`` (metric math) is set.
    Units: ``period`` in seconds; ``threshold`` in the metric's unit (``unit``: "Milliseconds",
    "Seconds", "Count" or "Percent" for the rate expressions).
    """

    name: str
    signal: str  # catalogue signal id, e.g. "payload_conflict"
    title: str
    severity: Severity
    target: str  # the function, queue or log group the alarm watches
    description: str  # meaning, likely causes, first thing to check, missing-data choice
    period: int
    evaluation_periods: int
    datapoints_to_alarm: int
    threshold: float
    comparison: ComparisonOperator
    treat_missing_data: TreatMissingData
    treat_missing_reason: str
    unit: str
    metric: MetricRef | None = None
    statistic: str | None = None
    queries: tuple[MetricQuery, ...] = ()
    alarm_actions: tuple[str, ...] = ()
    ok_actions: tuple[str, ...] = ()
    insufficient_data_actions: tuple[str, ...] = ()
    tags: tuple[tuple[str, str], ...] = field(default=())
    prefix: str = ""
    """The stack's alarm name prefix ``name`` starts with (exports turn it into a parameter)."""
    log_group: str | None = None
    """The log group the console links and dashboard widgets of this alarm point at (None: none)."""
    links: tuple[tuple[str, str], ...] = ()
    """(label, URL) console links, also written at the end of ``description``."""
    tier: str = ""
    """"" for a signal's base tier, else the severity of the extra tier (its name ends with it)."""
    function: str = ""
    """The function of the stack config this alarm belongs to (its own alarms, and those of its queue and DLQ);
    "" for the idempotency table's and the custom alarms."""
    threshold_metric_id: str | None = None
    """Anomaly-detection alarm: the id of the query holding ``ANOMALY_DETECTION_BAND(...)`` (``ThresholdMetricId``);
    ``threshold`` is then the band's width in standard deviations and no ``Threshold`` is sent."""

    @property
    def is_anomaly(self) -> bool:
        """Whether the alarm compares with an anomaly-detection band instead of a static threshold."""
        return self.threshold_metric_id is not None

    @property
    def is_math(self) -> bool:
        return bool(self.queries)

    @property
    def m_of_n(self) -> str:
        return f"{self.datapoints_to_alarm} of {self.evaluation_periods} x {self.period}s"

    def condition(self) -> str:
        """Human form of the condition, e.g. ``Sum(PayloadConflict) > 0 for 1 of 1 x 60s`` (an anomaly alarm:
        ``Sum(DuplicateCompleted) above the band of 2 standard deviations for 3 of 3 x 300s``)."""
        if self.threshold_metric_id is not None:
            q = next(q for q in self.queries if q.return_data and q.id != self.threshold_metric_id)
            what = q.expression or (f"{q.stat}({q.metric.metric_name})" if q.metric is not None else q.id)
            side = {ComparisonOperator.GREATER_THAN_UPPER: "above", ComparisonOperator.LESS_THAN_LOWER: "below"}.get(
                self.comparison, "outside")
            return f"{what} {side} the band of {_num(self.threshold)} standard deviations for {self.m_of_n}"
        symbol = {
            ComparisonOperator.GREATER_THAN: ">",
            ComparisonOperator.GREATER_THAN_OR_EQUAL: ">=",
            ComparisonOperator.LESS_THAN: "<",
            ComparisonOperator.LESS_THAN_OR_EQUAL: "<=",
        }[self.comparison]
        if self.metric is not None:
            what = f"{self.statistic}({self.metric.metric_name})"
        else:
            what = next(q.expression or q.id for q in self.queries if q.return_data)
        return f"{what} {symbol} {_num(self.threshold)} {self.unit} for {self.m_of_n}"

    def to_request(self) -> dict[str, Any]:
        """The PutMetricAlarm request (boto3 keyword arguments / ``--cli-input-json`` document)."""
        req = alarm_request_head(self.name, self.description, self.ok_actions, self.alarm_actions,
                                 self.insufficient_data_actions)
        if self.metric is not None:
            req.update(self.metric.to_api())
            # a percentile goes to ExtendedStatistic (PutMetricAlarm: "p0.0 to p100")
            req["ExtendedStatistic" if is_percentile(self.statistic or "") else "Statistic"] = self.statistic
            req["Period"] = self.period
        else:
            req["Metrics"] = [q.to_api() for q in self.queries]
        req["EvaluationPeriods"] = self.evaluation_periods
        req["DatapointsToAlarm"] = self.datapoints_to_alarm
        if self.threshold_metric_id is None:
            req["Threshold"] = float(self.threshold)
        else:  # the band is the threshold (PutMetricAlarm: "ThresholdMetricId ... ANOMALY_DETECTION_BAND")
            req["ThresholdMetricId"] = self.threshold_metric_id
        req["ComparisonOperator"] = self.comparison.value
        req["TreatMissingData"] = self.treat_missing_data.value
        req["Tags"] = [{"Key": k, "Value": v} for k, v in self.tags]
        return req


def alarm_request_head(name: str, description: str, ok_actions: tuple[str, ...], alarm_actions: tuple[str, ...],
                       insufficient_data_actions: tuple[str, ...] = ()) -> dict[str, Any]:
    """The members PutMetricAlarm and PutCompositeAlarm requests begin with, in this order (exports are byte-stable):
    AlarmName, AlarmDescription, ActionsEnabled (always true), OKActions, AlarmActions, InsufficientDataActions."""
    return {
        "AlarmName": name,
        "AlarmDescription": description,
        "ActionsEnabled": True,
        "OKActions": list(ok_actions),
        "AlarmActions": list(alarm_actions),
        "InsufficientDataActions": list(insufficient_data_actions),
    }


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))
