"""Build the alarm catalogue of a stack: one :class:`AlarmDefinition` per signal, tier and target,
then the stack's custom alarms.

Metric names and dimension names of this project come from :mod:`emitter.contract`
(``Metric``, ``Dimension``; alarms use the ``[Service, Operation]`` dimension set); the AWS
ones from :mod:`alarms.constants`. Targets per signal scope: every function (this project's
metrics, Lambda Errors/Throttles, the EMF error metrics of its log group), stream functions
(IteratorAge), functions with a record age (RecordAge), source queues and DLQs, the idempotency
table when the config names one.

Tiers: a signal's base tier keeps the plain name; each extra tier (:class:`~alarms.signals.Tier`,
or one added in ``overrides.<signal>.tiers``) is ``<name>-<Severity>`` with its own threshold,
M-out-of-N and topics. Dimensions: alarms on this project's metrics use ``[Service, Operation]``
plus the function's declared default dimensions, in the order the emitter writes them
(:meth:`emitter aggregate _group_dimensions`: base set, then the custom dimensions).
Descriptions end with console links (:mod:`alarms.links`) and stay within the API's 1024
characters: when they would not, the "likely causes" and then the "first check" parts are left to
the runbook link.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from alarms import constants as C
from alarms import links as L
from alarms.composite import apply_composites, check_composite_names
from alarms.config import FunctionConfig, SignalOverride, StackConfig, TierOverride
from alarms.custom import CustomAlarm, CustomMetric
from alarms.definitions import AlarmDefinition, MetricQuery, MetricRef
from alarms.descriptions import fit_description
from alarms.exceptions import ConfigError
from alarms.signals import (
    ASYNC_SOURCES,
    CUSTOM,
    KAFKA_SOURCES,
    SIGNALS,
    STREAM_SOURCES,
    AnomalyBand,
    Scope,
    Signal,
    Tier,
)
from alarms.types import ComparisonOperator, Severity, TreatMissingData
from emitter.contract import DIMENSION_SETS, METRIC_OUTCOME, Dimension, LogKey, Metric

BAND_ID = "band"
"""Id of the ``ANOMALY_DETECTION_BAND`` query of an anomaly-detection alarm (its ``ThresholdMetricId``)."""


@dataclass(frozen=True)
class _Target:
    key: str  # name used in the alarm name
    function: FunctionConfig


def build_catalogue(config: StackConfig) -> list[AlarmDefinition]:
    """All alarm definitions for ``config``, in signal order then function order.

    Signals disabled globally, per function, or by an override ``enabled: false`` are left out.
    Alarm names are ``<prefix><target>-<Suffix>`` (target = function, queue or DLQ name) and unique.
    """
    defs: list[AlarmDefinition] = []
    for signal in SIGNALS.values():
        if signal.id in config.disabled_signals:
            continue
        for target in _targets(config, signal):
            fn = target.function
            if signal.id in fn.disabled_signals:
                continue
            ov = (config.overrides.get(signal.id) or SignalOverride()).merged(fn.overrides.get(signal.id))
            if not (ov.enabled if ov.enabled is not None else signal.enabled_by_default):
                continue
            base = _definition(config, signal, target, ov)
            defs.append(base)
            defs.extend(_tiers(config, signal, target, ov, base))
    defs.extend(_custom(config, c) for c in config.custom_alarms)
    defs = apply_composites(config, defs)
    names = [d.name for d in defs]
    clash = sorted(n for n, c in Counter(names).items() if c > 1)
    if clash:
        raise ConfigError(f"alarm name(s) defined twice: {', '.join(clash)} (a custom alarm or a tier's severity "
                          "repeats a catalogue alarm)", "custom_alarms")
    check_composite_names(config, defs)
    return defs


def _tiers(config: StackConfig, s: Signal, target: _Target, ov: SignalOverride,
           base: AlarmDefinition) -> list[AlarmDefinition]:
    """The extra tiers of ``s`` for one target: the signal's defaults merged with ``ov.tiers``."""
    defaults = {t.severity: t for t in s.tiers}
    out = []
    for severity in Severity:  # fixed order: critical, warning, info
        t_ov = ov.tiers.get(severity, TierOverride())
        t_def = defaults.get(severity)
        if t_def is None and severity not in ov.tiers or t_ov.enabled is False:
            continue
        static = float(ov.threshold if ov.threshold is not None else s.threshold)  # a band's width is no threshold
        t = t_def or Tier(severity, static, base.evaluation_periods, base.datapoints_to_alarm)
        evaluation_periods = t_ov.evaluation_periods or t.evaluation_periods
        datapoints = t_ov.datapoints_to_alarm or min(t.datapoints_to_alarm, evaluation_periods)
        tier_ov = SignalOverride(
            threshold=t_ov.threshold if t_ov.threshold is not None else t.threshold,
            period=t_ov.period or ov.period, evaluation_periods=evaluation_periods, datapoints_to_alarm=datapoints,
            severity=severity, treat_missing_data=ov.treat_missing_data, treat_missing_reason=ov.treat_missing_reason,
            anomaly=False,  # extra tiers keep their static thresholds
        )
        out.append(_definition(config, s, target, tier_ov, tier=severity, actions=t_ov.actions))
    return out


_SCOPED_SOURCES = {Scope.ASYNC_OPERATION: ASYNC_SOURCES, Scope.STREAM_FUNCTION: STREAM_SOURCES,
                   Scope.KAFKA_FUNCTION: KAFKA_SOURCES}
"""Scopes that apply to a function only for some event sources."""


def _targets(config: StackConfig, signal: Signal) -> list[_Target]:
    out: list[_Target] = []
    seen: set[str] = set()
    for fn in config.functions:
        if signal.scope in (Scope.OPERATION, Scope.FUNCTION, Scope.LOG_GROUP) or fn.event_source in _SCOPED_SOURCES.get(
                signal.scope, ()):
            out.append(_Target(fn.name, fn))
        elif signal.scope == Scope.QUEUE and fn.queue and fn.queue not in seen:
            seen.add(fn.queue)
            out.append(_Target(fn.queue, fn))
        elif signal.scope == Scope.DLQ and fn.dlq and fn.dlq not in seen:
            seen.add(fn.dlq)
            out.append(_Target(fn.dlq, fn))
        elif signal.scope == Scope.TABLE and config.idempotency_table and not out:
            out.append(_Target(config.idempotency_table, fn))
    return out


def _definition(config: StackConfig, s: Signal, target: _Target, ov: SignalOverride,
                tier: Severity | None = None, actions: tuple[str, ...] | None = None) -> AlarmDefinition:
    fn = target.function
    period = ov.period or s.period
    evaluation_periods = ov.evaluation_periods or s.evaluation_periods
    datapoints = ov.datapoints_to_alarm or (
        min(s.datapoints_to_alarm, evaluation_periods) if ov.evaluation_periods else s.datapoints_to_alarm
    )
    band = s.anomaly if ov.anomaly is None else (ov.anomaly or None)
    assert band is None or isinstance(band, AnomalyBand)
    if band is not None and ov.threshold is not None:
        raise ConfigError(f"threshold does not apply to the anomaly-detection band of {s.id}; set anomaly.width (or "
                          "anomaly: false for a static threshold)", f"overrides.{s.id}")
    threshold = float(band.width if band is not None else ov.threshold if ov.threshold is not None else s.threshold)
    severity = ov.severity or s.severity
    treat = ov.treat_missing_data or s.treat_missing_data
    reason = ov.treat_missing_reason or s.treat_missing_reason
    values = {
        "function": fn.name,
        "operation": fn.operation,
        "service": config.service,
        "queue": fn.queue or "the source queue",
        "dlq": fn.dlq or "the dead-letter queue",
        "stream": fn.stream or "the stream",
        "table": config.idempotency_table or "the idempotency table",
        "log_group": fn.log_group,
        "namespace": config.namespace,
        "threshold": _num(threshold),
    }
    name = f"{config.alarm_name_prefix}{target.key}-{s.suffix}" + (f"-{_cap(tier.value)}" if tier else "")
    metric: MetricRef | None = None
    queries: tuple[MetricQuery, ...] = ()
    if s.metric is not None:
        ns_key, metric_name = s.metric
        metric = _metric(config, fn, ns_key, metric_name)
    else:
        assert s.math is not None
        expression, parts = s.math
        # each part: (id, metric name) of this project's metrics, or (id, metric name, AWS namespace, dimensions)
        queries = tuple(
            MetricQuery(id=p[0], metric=_metric(config, fn, p[2] if len(p) > 2 else CUSTOM, p[1],
                                                extra=p[3] if len(p) > 3 else ()),
                        stat=s.statistic.value, period=period)
            for p in parts
        ) + (MetricQuery(id=s.id, expression=expression, label=s.math_label, return_data=True),)
    if band is not None:  # ANOMALY_DETECTION_BAND over the value the alarm watches; the band is the threshold
        if metric is not None:
            queries = (MetricQuery(id="m1", metric=metric, stat=s.statistic.value, period=period,
                                   label=metric.metric_name, return_data=True),)
            metric = None
        watched = next(q.id for q in queries if q.return_data)
        queries += (MetricQuery(id=BAND_ID, expression=f"ANOMALY_DETECTION_BAND({watched}, {_num(threshold)})",
                                label="Expected range (anomaly detection band)", return_data=True),)
    log_group = None if s.scope == Scope.TABLE else fn.log_group  # a table serves several functions
    links = _links(config, name, s.id, log_group, s.insights or _outcome_query(s))
    meaning = _cap(s.meaning.format(**values))
    if band is not None and s.anomaly is None:  # a static signal switched to a band: its text names a threshold
        side = {ComparisonOperator.GREATER_THAN_UPPER: "above", ComparisonOperator.LESS_THAN_LOWER: "below"}.get(
            band.comparison, "outside")
        meaning = (f"{s.title} for {fn.operation} of {fn.name}, judged by CloudWatch anomaly detection: the value "
                   f"went {side} the expected band ({_num(band.width)} standard deviations, learned from the "
                   f"metric's history) in {datapoints} of the last {evaluation_periods} {period}-second periods.")
    description = fit_description(
        [f"[{severity.value}] {s.title}. {meaning}",
         f"First check: {s.first_check.format(**values)}",
         f"Missing data: {treat.value}, because {reason.format(**values)}.",
         f"Likely causes: {s.causes.format(**values)}"],
        links, region=config.region,
    )
    if actions is None:
        actions = config.actions.get(severity, ())
    tags = (
        (C.TAG_MANAGED_BY, C.TAG_MANAGED_BY_VALUE),
        (C.TAG_STACK, config.stack),
        (C.TAG_SIGNAL, s.id),
        (C.TAG_SEVERITY, severity.value),
    ) + tuple(sorted(config.tags.items()))
    return AlarmDefinition(
        name=name,
        signal=s.id,
        title=s.title,
        severity=severity,
        target=target.key,
        description=description,
        period=period,
        evaluation_periods=evaluation_periods,
        datapoints_to_alarm=datapoints,
        threshold=threshold,
        comparison=band.comparison if band is not None else s.comparison,
        treat_missing_data=treat,
        treat_missing_reason=reason.format(**values),
        unit=s.unit,
        metric=metric,
        statistic=s.statistic.value if metric is not None else None,
        queries=queries,
        alarm_actions=actions,
        ok_actions=actions if config.notify_ok else (),
        tags=tags,
        prefix=config.alarm_name_prefix,
        log_group=log_group,
        links=links,
        tier=tier.value if tier else "",
        function="" if s.scope == Scope.TABLE else fn.name,
        threshold_metric_id=BAND_ID if band is not None else None,
    )


def _custom(config: StackConfig, c: CustomAlarm) -> AlarmDefinition:
    name = f"{config.alarm_name_prefix}{c.name}"

    def ref(m: CustomMetric) -> MetricRef:
        return MetricRef(m.namespace or config.namespace, m.name, m.dimensions)

    metric = ref(c.metric) if c.metric is not None else None
    queries: tuple[MetricQuery, ...] = ()
    if c.expression is not None:
        queries = tuple(MetricQuery(id=qid, metric=ref(m), stat=m.statistic, period=c.period) for qid, m in c.metrics)
        queries += (MetricQuery(id="result", expression=c.expression, label=c.title, return_data=True),)
    links = _links(config, name, "custom", c.log_group, None)
    actions = c.actions if c.actions is not None else config.actions.get(c.severity, ())
    description = fit_description(
        [f"[{c.severity.value}] {c.title}." + (f" {_cap(c.description)}" if c.description else ""),
         f"Missing data: {c.treat_missing_data.value}, because {c.treat_missing_reason}."],
        links, region=config.region,
    )
    tags = ((C.TAG_MANAGED_BY, C.TAG_MANAGED_BY_VALUE), (C.TAG_STACK, config.stack), (C.TAG_SIGNAL, "custom"),
            (C.TAG_SEVERITY, c.severity.value)) + tuple(sorted(config.tags.items()))
    return AlarmDefinition(
        name=name, signal="custom", title=c.title, severity=c.severity, target=c.name, description=description,
        period=c.period, evaluation_periods=c.evaluation_periods, datapoints_to_alarm=c.datapoints_to_alarm,
        threshold=c.threshold, comparison=c.comparison, treat_missing_data=TreatMissingData(c.treat_missing_data),
        treat_missing_reason=c.treat_missing_reason, unit=c.unit, metric=metric,
        statistic=c.metric.statistic if c.metric is not None else None, queries=queries,
        alarm_actions=actions, ok_actions=actions if config.notify_ok else (), tags=tags,
        prefix=config.alarm_name_prefix, log_group=c.log_group, links=links,
    )


def _links(config: StackConfig, alarm: str, signal: str, log_group: str | None,
           query: str | None) -> tuple[tuple[str, str], ...]:
    out = [("alarm", L.alarm_url(alarm, config.region))]
    if log_group:
        out.append(("logs", L.log_group_url(log_group, config.region)))
        if query:
            out.append(("query", L.logs_insights_url(query, [log_group], config.region, relative_s=3 * 3_600)))
    if signal != "custom":
        out.append(("runbook", L.runbook_url(config.runbook_url, signal)))
    return tuple(out)


def _outcome_query(s: Signal) -> str:
    """Logs Insights query over the emitter's records of the outcome ``s`` counts (every outcome for AWS metrics)."""
    names = [s.metric[1]] if s.metric is not None and s.metric[0] == CUSTOM else \
        [p[1] for p in (s.math[1] if s.math else ()) if len(p) == 2]
    outcomes = []
    for n in names:
        try:
            o = METRIC_OUTCOME.get(Metric(n))
        except ValueError:
            o = None
        if o is not None and o.value not in outcomes:
            outcomes.append(o.value)
    key = LogKey.OUTCOME.value
    if not outcomes:  # an AWS metric: what the handler recorded meanwhile
        return f"filter ispresent({key}) | stats count(*) by bin(1m), {key}"
    cond = f'{key} = "{outcomes[0]}"' if len(outcomes) == 1 else f"{key} in [" + ", ".join(
        f'"{o}"' for o in outcomes) + "]"
    return f"filter {cond} | stats count(*) by bin(1m), {LogKey.OPERATION.value}"


def _metric(config: StackConfig, fn: FunctionConfig, ns_key: str, name: str,
            extra: tuple[tuple[str, str], ...] = ()) -> MetricRef:
    if ns_key == CUSTOM:
        # Alarms use the [Service, Operation] dimension set (the first of DIMENSION_SETS) plus the function's
        # default dimensions, which the emitter appends to every set it writes.
        dim_set = DIMENSION_SETS[0]
        values = {Dimension.SERVICE.value: config.service, Dimension.OPERATION.value: fn.operation}
        return MetricRef(config.namespace, name,
                         tuple((d, values[d]) for d in dim_set) + tuple(fn.dimensions.items()))
    if ns_key == C.DYNAMODB_NAMESPACE:
        return MetricRef(ns_key, name, ((C.DYNAMODB_TABLE_DIMENSION, config.idempotency_table or ""), *extra))
    if ns_key == C.LAMBDA_NAMESPACE:
        return MetricRef(ns_key, name, ((C.LAMBDA_FUNCTION_DIMENSION, fn.name),))
    if ns_key == C.SQS_NAMESPACE:
        queue = fn.dlq if name == C.SQS_MESSAGES_VISIBLE else fn.queue
        assert queue is not None
        return MetricRef(ns_key, name, ((C.SQS_QUEUE_DIMENSION, queue),))
    if ns_key == C.LOGS_NAMESPACE:
        return MetricRef(ns_key, name, ((C.LOGS_LOG_GROUP_DIMENSION, fn.log_group),))
    raise ValueError(f"unknown namespace key {ns_key!r}")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


__all__ = ["Severity", "build_catalogue"]
