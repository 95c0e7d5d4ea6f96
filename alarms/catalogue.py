"""Build the alarm catalogue of a stack: one :class:`AlarmDefinition` per signal and target.

Metric names and dimension names of this project come from :mod:`emitter.contract`
(``Metric``, ``Dimension``; alarms use the ``[Service, Operation]`` dimension set); the AWS
ones from :mod:`alarms.constants`. Targets per signal scope: every function (this project's
metrics, Lambda Errors/Throttles, the EMF error metrics of its log group), stream functions
(IteratorAge), functions with a record age (RecordAge), source queues and DLQs.
"""

from __future__ import annotations

from dataclasses import dataclass

from alarms import constants as C
from alarms.config import FunctionConfig, SignalOverride, StackConfig
from alarms.definitions import AlarmDefinition, MetricQuery, MetricRef
from alarms.signals import ASYNC_SOURCES, CUSTOM, SIGNALS, STREAM_SOURCES, Scope, Signal
from alarms.types import Severity
from emitter.contract import DIMENSION_SETS, Dimension


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
            if ov.enabled is False:
                continue
            defs.append(_definition(config, signal, target, ov))
    names = [d.name for d in defs]
    assert len(names) == len(set(names)), "alarm names must be unique"
    return defs


def _targets(config: StackConfig, signal: Signal) -> list[_Target]:
    out: list[_Target] = []
    seen: set[str] = set()
    for fn in config.functions:
        if signal.scope in (Scope.OPERATION, Scope.FUNCTION, Scope.LOG_GROUP) or signal.scope == Scope.ASYNC_OPERATION and fn.event_source in ASYNC_SOURCES or signal.scope == Scope.STREAM_FUNCTION and fn.event_source in STREAM_SOURCES:
            out.append(_Target(fn.name, fn))
        elif signal.scope == Scope.QUEUE and fn.queue and fn.queue not in seen:
            seen.add(fn.queue)
            out.append(_Target(fn.queue, fn))
        elif signal.scope == Scope.DLQ and fn.dlq and fn.dlq not in seen:
            seen.add(fn.dlq)
            out.append(_Target(fn.dlq, fn))
    return out


def _definition(config: StackConfig, s: Signal, target: _Target, ov: SignalOverride) -> AlarmDefinition:
    fn = target.function
    period = ov.period or s.period
    evaluation_periods = ov.evaluation_periods or s.evaluation_periods
    datapoints = ov.datapoints_to_alarm or (
        min(s.datapoints_to_alarm, evaluation_periods) if ov.evaluation_periods else s.datapoints_to_alarm
    )
    threshold = float(ov.threshold if ov.threshold is not None else s.threshold)
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
    description = (
        f"[{severity.value}] {s.title}. {_cap(s.meaning.format(**values))} "
        f"Likely causes: {s.causes.format(**values)} "
        f"First check: {s.first_check.format(**values)} "
        f"Missing data: {treat.value}, because {reason.format(**values)}."
    )
    metric: MetricRef | None = None
    queries: tuple[MetricQuery, ...] = ()
    if s.metric is not None:
        ns_key, name = s.metric
        metric = _metric(config, fn, ns_key, name)
    else:
        assert s.math is not None
        expression, parts = s.math
        queries = tuple(
            MetricQuery(id=qid, metric=_metric(config, fn, CUSTOM, name), stat=s.statistic.value, period=period)
            for qid, name in parts
        ) + (MetricQuery(id=s.id, expression=expression, label=s.math_label, return_data=True),)
    actions = config.actions.get(severity, ())
    tags = (
        (C.TAG_MANAGED_BY, C.TAG_MANAGED_BY_VALUE),
        (C.TAG_STACK, config.stack),
        (C.TAG_SIGNAL, s.id),
        (C.TAG_SEVERITY, severity.value),
    ) + tuple(sorted(config.tags.items()))
    return AlarmDefinition(
        name=f"{config.alarm_name_prefix}{target.key}-{s.suffix}",
        signal=s.id,
        title=s.title,
        severity=severity,
        target=target.key,
        description=description,
        period=period,
        evaluation_periods=evaluation_periods,
        datapoints_to_alarm=datapoints,
        threshold=threshold,
        comparison=s.comparison,
        treat_missing_data=treat,
        treat_missing_reason=reason.format(**values),
        unit=s.unit,
        metric=metric,
        statistic=s.statistic.value if metric is not None else None,
        queries=queries,
        alarm_actions=actions,
        ok_actions=actions if config.notify_ok else (),
        tags=tags,
    )


def _metric(config: StackConfig, fn: FunctionConfig, ns_key: str, name: str) -> MetricRef:
    if ns_key == CUSTOM:
        # Alarms use the [Service, Operation] dimension set: the first of DIMENSION_SETS.
        dim_set = DIMENSION_SETS[0]
        values = {Dimension.SERVICE.value: config.service, Dimension.OPERATION.value: fn.operation}
        return MetricRef(config.namespace, name, tuple((d, values[d]) for d in dim_set))
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
