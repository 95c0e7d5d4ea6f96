"""Check PutMetricAlarm requests before anything is deployed.

Two layers, each violation naming the alarm and the field:

1. **The API model botocore ships** (``botocore`` ``cloudwatch`` service model, operation
   ``PutMetricAlarm``): required members, unknown members, types, string/list length min *and
   max*, integer min/max, enum values and patterns. botocore's own ``validate_parameters``
   checks only minimums, so maximums and enums are read from the shapes' metadata here.
2. **Cross-field rules the API enforces** (PutMetricAlarm API reference and the CloudWatch
   User Guide): DatapointsToAlarm <= EvaluationPeriods; Period 10, 20, 30 or a multiple of 60;
   Period x EvaluationPeriods <= 1 day when Period < 1 hour, else <= 7 days; Statistic and
   ExtendedStatistic never together; metric math with at most 20 queries, at most 10 of them
   MetricStat, exactly one returning data, ids matching ``^[a-z][A-Za-z0-9_]*$`` (unique, and every
   id an expression uses defined), and no top-level metric fields beside ``Metrics``; TreatMissingData and
   EvaluateLowSampleCountPercentile values (free strings in the model, enumerated in the
   reference).
3. **Silent failures the API accepts**: a gauge (SQS queue depth or age, Lambda IteratorAge) on
   a statistic other than Maximum; a dimension set the metric is never published with (this
   project's metrics: the sets in :data:`emitter.contract.DIMENSION_SETS`; AWS metrics: their
   documented dimensions) -- such an alarm never gets data and sits in INSUFFICIENT_DATA.
   With the emitter configuration of the stack (:func:`published_dimension_sets`: the default
   dimensions each function declares, which the emitter appends to every set it writes), a set
   that configuration never publishes is a **warning** (``semantic.dimension_unpublished``,
   ``level="warning"``): e.g. ``[Service, Operation]`` while the function also publishes
   ``Environment``.

Warnings are reported but do not make a request invalid (:func:`alarms.violation.errors` filters them out).
Numbers must be finite (``model.finite``: JSON has no NaN or Infinity, and CloudWatch never compares a
datapoint with one), and names must hold no ASCII control character (``model.control_characters``: the
model's documentation of AlarmName, Dimension Name and Value: "can't contain ASCII control characters").
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from alarms import alarm_rule
from alarms import constants as C
from alarms.cfn_template import requests_from_cloudformation
from alarms.fields import CONTROL_CHARACTERS
from alarms.insight_rules import check_rule_body
from alarms.kinds import COMPOSITE_ALARM, INSIGHT_RULE, KINDS, METRIC_ALARM, kind_of, name_of
from alarms.regions import DEFAULT_REGION, longest_region
from alarms.terraform import evaluate, requests_from_terraform
from alarms.tf_module import resolve_module
from alarms.types import BAND_COMPARISONS
from alarms.violation import Violation
from emitter.contract import DIMENSION_SETS, EVENT_SOURCE_DIMENSION_SET, Dimension, Metric

_ID_RE = re.compile(C.METRIC_ID_PATTERN)
_BAND = re.compile(r"ANOMALY_DETECTION_BAND\(\s*([a-z][A-Za-z0-9_]*)\s*(?:,\s*(\d+(?:\.\d+)?)\s*)?\)")
"""ANOMALY_DETECTION_BAND(<query id>[, <standard deviations>]) (metric math; the width defaults to 2)."""
BAND_OPERATORS = tuple(c.value for c in BAND_COMPARISONS)
MAX_COMPOSITES_PER_ALARM = 150  # PutCompositeAlarm: "Any single alarm can be included in ... as many as 150"
_WORD_RE = re.compile(r"(?<![A-Za-z0-9_.])[a-z][A-Za-z0-9_]*(?![A-Za-z0-9_(])")
_NO_CONTROL_SHAPES = frozenset({"AlarmName", "DimensionName", "DimensionValue"})
"""String shapes whose model documentation says they cannot hold ASCII control characters."""


PublishedSets = Mapping[str, frozenset[tuple[str, ...]]]
"""Operation dimension value -> the dimension-name sets (sorted tuples) its emitter publishes."""


def published_dimension_sets(config: Any) -> PublishedSets:
    """What the emitter of each function of ``config`` (a :class:`~alarms.config.StackConfig`) publishes:
    every set of :data:`emitter.contract.DIMENSION_SETS` (and the EventSource set) with the function's
    default dimensions appended, as the emitter writes them (emitter.aggregate ``_group_dimensions``)."""
    out: dict[str, set[tuple[str, ...]]] = {}
    for fn in config.functions:
        extra = tuple(fn.dimensions)
        out.setdefault(fn.operation, set()).update(
            tuple(sorted((*base, *extra))) for base in (*DIMENSION_SETS, EVENT_SOURCE_DIMENSION_SET))
    return {op: frozenset(sets) for op, sets in out.items()}


@lru_cache(maxsize=4)
def _input_shape(operation: str = METRIC_ALARM) -> Any:
    import botocore.session  # boto3's, an optional dependency (the alarms extra)

    model = botocore.session.get_session().get_service_model("cloudwatch")
    return model.operation_model(operation).input_shape


def validate_request(request: Mapping[str, Any], published: PublishedSets | None = None) -> list[Violation]:
    """All violations of one request (empty list = valid), warnings included: a PutMetricAlarm, PutCompositeAlarm
    or PutInsightRule request (:func:`alarms.kinds.kind_of`). ``published``: the stack's
    :func:`published_dimension_sets` (None = unknown). Never raises on bad input."""
    if not isinstance(request, Mapping):
        return [Violation("<unnamed alarm>", "<request>", "model.type", "the request must be a JSON object")]
    kind = kind_of(request)
    name = name_of(request)
    alarm = name if name != "<unnamed>" else ("<unnamed rule>" if kind == INSIGHT_RULE else "<unnamed alarm>")
    out: list[Violation] = []
    _check_shape(request, _input_shape(kind), "", alarm, out)
    if kind == METRIC_ALARM:
        out.extend(_cross_field(request, alarm))
        out.extend(_semantic(request, alarm, published))
    elif kind == COMPOSITE_ALARM:
        out.extend(_composite(request, alarm))
    else:
        out.extend(Violation(alarm, field, rule, message)
                   for field, rule, message in check_rule_body(request.get("RuleDefinition")))
    return out


def validate_requests(requests: Iterable[Mapping[str, Any]], published: PublishedSets | None = None,
                      external: Iterable[str] = ()) -> list[Violation]:
    """Violations (and warnings) of many requests, plus what only the set shows: a name defined twice (metric and
    composite alarms share one namespace, rules have their own); a composite naming an alarm none of the requests
    defines (PutCompositeAlarm fails unless it exists: an error, a warning for a name in ``external``, alarms the
    stack config says exist in the account); composites that name each other in a cycle; an alarm named by more
    than 150 composites (PutCompositeAlarm: "as many as 150")."""
    out: list[Violation] = []
    seen: dict[str, set[str]] = {"alarm": set(), "rule": set()}
    composites: dict[str, tuple[list[str], str | None]] = {}
    for req in requests:
        out.extend(validate_request(req, published))
        if not isinstance(req, Mapping):
            continue
        kind = kind_of(req)
        name = req.get(KINDS[kind].name_member)
        if isinstance(name, str):
            space = "rule" if kind == INSIGHT_RULE else "alarm"
            if name in seen[space]:
                member = KINDS[kind].name_member
                out.append(Violation(name, member, f"{'rule' if space == 'rule' else 'alarm'}_name.duplicate",
                                     f"the same {member} is defined twice; the second put would overwrite the first"))
            seen[space].add(name)
        if kind == COMPOSITE_ALARM and isinstance(name, str):
            composites[name] = _references(req)
    out.extend(_composite_references(composites, seen["alarm"], set(external)))
    return out


# --------------------------------------------------------------------------- model layer
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "long": (int,),
    "double": (int, float),
    "float": (int, float),
    "boolean": (bool,),
    "list": (list, tuple),
    "structure": (dict,),
    "map": (dict,),
}


def _check_shape(value: Any, shape: Any, path: str, alarm: str, out: list[Violation]) -> None:
    here = path or "<request>"
    type_name = shape.type_name
    expected = _PY_TYPES.get(type_name)
    if expected is not None:
        is_bool = isinstance(value, bool)
        if not isinstance(value, expected) or (is_bool and type_name != "boolean"):
            out.append(Violation(alarm, here, "model.type",
                                 f"must be {type_name} (shape {shape.name}), got {type(value).__name__} {value!r}"[:300]))
            return
    meta = shape.metadata
    if type_name == "string":
        _bounds(len(value), meta, here, alarm, out, "length")
        enum = meta.get("enum")
        if enum and value not in enum:
            out.append(Violation(alarm, here, "model.enum", f"{value!r} is not one of: {', '.join(enum)}"))
        pattern = meta.get("pattern")
        if pattern and not re.fullmatch(pattern, value, flags=re.DOTALL):
            out.append(Violation(alarm, here, "model.pattern", f"{value!r} does not match the pattern {pattern!r}"))
        if shape.name in _NO_CONTROL_SHAPES and CONTROL_CHARACTERS.search(value):
            out.append(Violation(alarm, here, "model.control_characters",
                                 f"{value!r} holds an ASCII control character, which {shape.name} cannot"[:300]))
    elif type_name in ("double", "float") and not math.isfinite(value):
        out.append(Violation(alarm, here, "model.finite", f"must be a finite number, got {value!r}"))
    elif type_name in ("integer", "long", "double", "float"):
        _bounds(value, meta, here, alarm, out, "value")
    elif type_name == "list":
        _bounds(len(value), meta, here, alarm, out, "items")
        for i, item in enumerate(value):
            _check_shape(item, shape.member, f"{path}[{i}]", alarm, out)
    elif type_name == "structure":
        members = shape.members
        for key in value:
            if key not in members:
                out.append(Violation(alarm, f"{path}.{key}" if path else key, "model.unknown_member",
                                     f"unknown member of {shape.name}"))
        for req in shape.required_members:
            if req not in value:
                out.append(Violation(alarm, f"{path}.{req}" if path else req, "model.required",
                                     f"is required by {shape.name}"))
        if meta.get("union"):
            present = [k for k in value if k in members]
            if len(present) != 1:
                out.append(Violation(alarm, here, "model.union",
                                     f"exactly one member of {shape.name} must be set, got {present}"))
        for key, item in value.items():
            if key in members:
                _check_shape(item, members[key], f"{path}.{key}" if path else key, alarm, out)


def _bounds(n: float, meta: Mapping[str, Any], here: str, alarm: str, out: list[Violation], what: str) -> None:
    lo, hi = meta.get("min"), meta.get("max")
    label = {"length": "length", "items": "number of items", "value": "value"}[what]
    rule_lo = "model.min_value" if what == "value" else "model.min_length"
    rule_hi = "model.max_value" if what == "value" else "model.max_length"
    if lo is not None and n < lo:
        out.append(Violation(alarm, here, rule_lo, f"{label} {n} is below the minimum {lo}"))
    if hi is not None and n > hi:
        out.append(Violation(alarm, here, rule_hi, f"{label} {n} is above the maximum {hi}"))


# --------------------------------------------------------------------------- cross-field layer
def _cross_field(r: Mapping[str, Any], alarm: str) -> list[Violation]:
    out: list[Violation] = []

    def v(field: str, rule: str, message: str) -> None:
        out.append(Violation(alarm, field, rule, message))

    ev = r.get("EvaluationPeriods")
    dta = r.get("DatapointsToAlarm")
    is_int = lambda x: isinstance(x, int) and not isinstance(x, bool)
    if "EvaluationCriteria" not in r:  # PromQL alarms are the only ones without these
        if ev is None:
            v("EvaluationPeriods", "evaluation_periods.required", "is required for a metric alarm")
        if r.get("ComparisonOperator") is None:
            v("ComparisonOperator", "comparison.required", "is required for a metric alarm")
        if r.get("Threshold") is None and r.get("ThresholdMetricId") is None:
            v("Threshold", "threshold.required", "is required unless ThresholdMetricId (anomaly band) is given")
    if isinstance(ev, int) and isinstance(dta, int) and is_int(ev) and is_int(dta) and dta > ev:
        v("DatapointsToAlarm", "datapoints_to_alarm.le_evaluation_periods",
          f"DatapointsToAlarm ({dta}) must not exceed EvaluationPeriods ({ev})")

    treat = r.get("TreatMissingData")
    if isinstance(treat, str) and treat not in C.TREAT_MISSING_VALUES:
        v("TreatMissingData", "treat_missing_data.enum",
          f"{treat!r} is not one of: {', '.join(C.TREAT_MISSING_VALUES)}")
    low = r.get("EvaluateLowSampleCountPercentile")
    if isinstance(low, str) and low not in C.LOW_SAMPLE_COUNT_VALUES:
        v("EvaluateLowSampleCountPercentile", "low_sample_count.enum",
          f"{low!r} is not one of: {', '.join(C.LOW_SAMPLE_COUNT_VALUES)}")

    if "Statistic" in r and "ExtendedStatistic" in r:
        v("ExtendedStatistic", "statistic.exclusive", "Statistic and ExtendedStatistic cannot both be given")

    band_id = r.get("ThresholdMetricId")
    comparison = r.get("ComparisonOperator")
    if band_id is not None:
        if "Threshold" in r:
            v("Threshold", "threshold.exclusive", "Threshold and ThresholdMetricId (an anomaly band) cannot both be "
              "given")
        if comparison not in BAND_OPERATORS:
            v("ComparisonOperator", "anomaly.comparison", f"an anomaly-band alarm compares with one of "
              f"{', '.join(BAND_OPERATORS)}, not {comparison!r}")
        band = next((q for q in r.get("Metrics") or [] if isinstance(q, Mapping) and q.get("Id") == band_id), None)
        if band is None:
            v("ThresholdMetricId", "anomaly.band_missing", f"{band_id!r} is not the Id of a query of Metrics")
        else:
            m = _BAND.fullmatch(str(band.get("Expression", "")).strip())
            if m is None:
                v("ThresholdMetricId", "anomaly.band_expression", f"query {band_id!r} must be "
                  "ANOMALY_DETECTION_BAND(<id>, <standard deviations>)")
            elif m.group(2) is not None and not float(m.group(2)) > 0:
                v("ThresholdMetricId", "anomaly.band_width", "the band's width must be > 0 standard deviations")
            if band.get("ReturnData", True) is False:
                v("ThresholdMetricId", "anomaly.band_return_data", f"query {band_id!r} must return data (ReturnData "
                  "true): the alarm compares with it")
    elif comparison in BAND_OPERATORS:
        v("ComparisonOperator", "anomaly.band_missing", f"{comparison} needs ThresholdMetricId (an "
          "ANOMALY_DETECTION_BAND query)")

    periods: list[tuple[str, Any]] = []
    metrics = r.get("Metrics")
    if metrics is not None:
        top = [f for f in C.SINGLE_METRIC_FIELDS if f in r]
        for f in top:
            v(f, "metrics.top_level_fields", f"{f} cannot be given together with Metrics (metric math alarm)")
        if isinstance(metrics, (list, tuple)):
            out.extend(_metric_math(metrics, alarm, periods, band_id if isinstance(band_id, str) else None))
    elif "EvaluationCriteria" not in r:
        if "MetricName" not in r:
            v("MetricName", "metric.missing", "a metric alarm needs MetricName + Namespace, or Metrics")
        if "Statistic" not in r and "ExtendedStatistic" not in r and "MetricName" in r:
            v("Statistic", "statistic.required", "a single-metric alarm needs Statistic or ExtendedStatistic")
        if "Period" not in r and "MetricName" in r:
            v("Period", "period.required", "a single-metric alarm needs Period")
        periods.append(("Period", r.get("Period")))

    for field, p in periods:
        if is_int(p) and p not in C.HIGH_RESOLUTION_PERIODS and p % 60 != 0:
            v(field, "period.valid_value", f"Period {p} s must be 10, 20, 30 or a multiple of 60")
    alarm_period = max((p for _, p in periods if is_int(p)), default=None)
    if alarm_period is not None and is_int(ev):
        span = alarm_period * ev
        limit = C.ONE_DAY_S if alarm_period < C.ONE_HOUR_S else C.SEVEN_DAYS_S
        if span > limit:
            which = "1 day (Period < 1 hour)" if limit == C.ONE_DAY_S else "7 days (Period >= 1 hour)"
            v("EvaluationPeriods", "period.evaluation_span",
              f"Period x EvaluationPeriods = {alarm_period} x {ev} = {span} s exceeds {which}")
    return out


def _metric_math(metrics: list | tuple, alarm: str, periods: list[tuple[str, Any]],
                 band_id: str | None = None) -> list[Violation]:
    out: list[Violation] = []

    def v(field: str, rule: str, message: str) -> None:
        out.append(Violation(alarm, field, rule, message))

    if len(metrics) > C.MAX_METRIC_QUERIES:
        v("Metrics", "metrics.too_many_queries", f"{len(metrics)} queries; an alarm allows at most {C.MAX_METRIC_QUERIES}")
    stats = [q for q in metrics if isinstance(q, Mapping) and "MetricStat" in q]
    if len(stats) > C.MAX_METRIC_STATS:
        v("Metrics", "metrics.too_many_metric_stats",
          f"{len(stats)} MetricStat queries; an alarm allows at most {C.MAX_METRIC_STATS}")
    # an anomaly alarm returns its band too (the PutMetricAlarm example: both ReturnData true)
    returning = [i for i, q in enumerate(metrics) if isinstance(q, Mapping) and q.get("ReturnData", True) is not False
                 and (band_id is None or q.get("Id") != band_id)]
    if len(returning) != 1:
        v("Metrics", "metrics.return_data_count",
          f"exactly one query must return data (ReturnData true or omitted), got {len(returning)}"
          + (f" (Metrics{returning})" if returning else "") + (" besides the anomaly band" if band_id else ""))
    ids: list[str] = []
    expressions: list[tuple[int, str]] = []
    for i, q in enumerate(metrics):
        if not isinstance(q, Mapping):
            continue
        qid = q.get("Id")
        if isinstance(qid, str):
            if not _ID_RE.match(qid):
                v(f"Metrics[{i}].Id", "metrics.id_pattern",
                  f"{qid!r} must start with a lowercase letter and hold only letters, digits and _ "
                  f"({C.METRIC_ID_PATTERN})")
            if qid in ids:
                v(f"Metrics[{i}].Id", "metrics.duplicate_id", f"{qid!r} is used by two queries")
            ids.append(qid)
        has_stat, has_expr = "MetricStat" in q, "Expression" in q
        if has_stat == has_expr:
            v(f"Metrics[{i}]", "metrics.query_shape", "each query needs exactly one of MetricStat or Expression")
        stat = q.get("MetricStat")
        if isinstance(stat, Mapping):
            periods.append((f"Metrics[{i}].MetricStat.Period", stat.get("Period")))
        if isinstance(q.get("Expression"), str):
            expressions.append((i, q["Expression"]))
    for i, expr in expressions:
        # Function names are upper case and ids start lower case, so a lower-case word outside quotes is an id.
        unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", expr)
        unknown = sorted({w for w in _WORD_RE.findall(unquoted) if w not in ids})
        if unknown:
            v(f"Metrics[{i}].Expression", "metrics.unknown_id",
              f"refers to {', '.join(unknown)}, which no query of this alarm defines")
    return out


# --------------------------------------------------------------------------- composite alarms
def _composite(r: Mapping[str, Any], alarm: str) -> list[Violation]:
    """PutCompositeAlarm's rules beyond the model: the AlarmRule grammar and its limits (at most 100 child alarms
    and 500 elements, at least one child, TRUE or FALSE), and the suppressor's periods, which "are required only
    when ActionsSuppressor is specified" (and mean nothing without it)."""
    out: list[Violation] = []

    def v(field: str, rule: str, message: str, level: str = "error") -> None:
        out.append(Violation(alarm, field, rule, message, level))

    text = r.get("AlarmRule")
    if isinstance(text, str) and text.strip():
        try:
            parsed = alarm_rule.parse(text)
        except alarm_rule.RuleSyntaxError as exc:
            v("AlarmRule", "rule.syntax", str(exc))
        else:
            if len(parsed.children) > alarm_rule.MAX_CHILDREN:
                v("AlarmRule", "rule.children", f"{len(parsed.children)} child alarms; a rule allows at most "
                  f"{alarm_rule.MAX_CHILDREN}")
            if parsed.elements > alarm_rule.MAX_ELEMENTS:
                v("AlarmRule", "rule.elements", f"{parsed.elements} elements (child alarms, TRUE/FALSE, parenthesis "
                  f"pairs); a rule allows at most {alarm_rule.MAX_ELEMENTS}")
            if parsed.mixed_and_or:
                v("AlarmRule", "rule.precedence", "AND and OR are mixed without parentheses; their precedence is "
                  "not documented: add parentheses", level="warning")
            if r.get("AlarmName") in parsed.children:
                v("AlarmRule", "rule.self", "the rule names the composite itself")
    suppressor = "ActionsSuppressor" in r
    for field in ("ActionsSuppressorWaitPeriod", "ActionsSuppressorExtensionPeriod"):
        if suppressor and field not in r:
            v(field, "suppressor.period_required", "is required with ActionsSuppressor")
        if not suppressor and field in r:
            v(field, "suppressor.without_suppressor", "is only for a composite with an ActionsSuppressor")
        value = r.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            v(field, "suppressor.period_negative", f"must be >= 0 seconds, got {value}")
    return out


def _references(r: Mapping[str, Any]) -> tuple[list[str], str | None]:
    """(the alarm names a composite's rule names, its suppressor's name or None); no names for an unreadable
    rule (its syntax error is reported by :func:`_composite`)."""
    try:
        children = list(alarm_rule.parse(str(r.get("AlarmRule", ""))).children)
    except alarm_rule.RuleSyntaxError:
        children = []
    sup = r.get("ActionsSuppressor")
    return children, alarm_rule.alarm_name_of(sup) if isinstance(sup, str) and sup else None


def _composite_references(composites: Mapping[str, tuple[list[str], str | None]], defined: set[str],
                          external: set[str]) -> list[Violation]:
    out: list[Violation] = []
    external_names = {alarm_rule.alarm_name_of(x) for x in external}
    used: dict[str, int] = {}

    def check(composite: str, field: str, child: str) -> None:
        if child in defined:
            return
        if child in external_names:
            out.append(Violation(composite, field, "rule.external_alarm", f"{child!r} is not defined here; the stack "
                                 "config says it exists in the account (PutCompositeAlarm fails otherwise)",
                                 level="warning"))
        else:
            out.append(Violation(composite, field, "rule.unknown_alarm", f"{child!r} is not defined by the files "
                                 "validated together, and PutCompositeAlarm refuses a rule or suppressor naming an "
                                 "alarm that does not exist"))

    for name, (children, suppressor) in composites.items():
        for child in children:
            used[child] = used.get(child, 0) + 1
            check(name, "AlarmRule", child)
        if suppressor is not None:
            check(name, "ActionsSuppressor", suppressor)
    for child, count in used.items():
        if count > MAX_COMPOSITES_PER_ALARM:
            out.append(Violation(child, "AlarmName", "rule.parents", f"named by {count} composite alarms; an alarm can "
                                 f"be in the rules of at most {MAX_COMPOSITES_PER_ALARM}"))
    # composites naming each other in a cycle: CloudWatch stops evaluating them and none of them can be deleted
    graph = {n: [c for c in children if c in composites] for n, (children, _) in composites.items()}
    state: dict[str, int] = {}

    def visit(n: str, path: list[str]) -> None:
        state[n] = 1
        for c in graph[n]:
            if state.get(c) == 1:
                out.append(Violation(n, "AlarmRule", "rule.cycle", "composite alarms name each other in a cycle: "
                                     + " -> ".join(path[path.index(c):] + [c])))
            elif c not in state:
                visit(c, path + [c])
        state[n] = 2

    for n in graph:
        if n not in state:
            visit(n, [n])
    return out


# --------------------------------------------------------------------------- semantic layer
# Alarms the API accepts but that fail silently (the list): a gauge summed over a period, an age
# alarm on a statistic that hides the worst shard, a dimension name the metric is never published with.
_GAUGES_MAX_ONLY = {
    (C.SQS_NAMESPACE, C.SQS_MESSAGES_VISIBLE): "a queue-depth gauge",
    (C.SQS_NAMESPACE, C.SQS_AGE_OF_OLDEST_MESSAGE): "an age gauge",
    (C.LAMBDA_NAMESPACE, C.LAMBDA_ITERATOR_AGE): "the iterator age (the oldest record of the batch)",
    (C.LAMBDA_NAMESPACE, C.LAMBDA_OFFSET_LAG): "the Kafka offset lag (records behind the topic's newest)",
}
_AWS_DIMENSIONS = {
    (C.LAMBDA_NAMESPACE, None): {"FunctionName", "Resource", "ExecutedVersion"},
    (C.SQS_NAMESPACE, None): {C.SQS_QUEUE_DIMENSION},
    (C.DYNAMODB_NAMESPACE, None): {C.DYNAMODB_TABLE_DIMENSION, C.DYNAMODB_OPERATION_DIMENSION,
                                   "GlobalSecondaryIndexName", "StreamLabel", "ReceivingRegion"},
    (C.LOGS_NAMESPACE, C.LOGS_EMF_VALIDATION_ERRORS): {C.LOGS_LOG_GROUP_DIMENSION},
    (C.LOGS_NAMESPACE, C.LOGS_EMF_PARSING_ERRORS): {C.LOGS_LOG_GROUP_DIMENSION},
}


def _semantic(r: Mapping[str, Any], alarm: str, published: PublishedSets | None = None) -> list[Violation]:
    out: list[Violation] = []
    if "MetricName" in r:
        out.extend(_semantic_metric(r.get("Namespace"), r.get("MetricName"), r.get("Dimensions"),
                                    r.get("Statistic"), "", alarm, published))
    metrics = r.get("Metrics")
    if isinstance(metrics, (list, tuple)):
        for i, q in enumerate(metrics):
            stat = q.get("MetricStat") if isinstance(q, Mapping) else None
            metric = stat.get("Metric") if isinstance(stat, Mapping) else None
            if isinstance(metric, Mapping):
                out.extend(_semantic_metric(metric.get("Namespace"), metric.get("MetricName"),
                                            metric.get("Dimensions"), stat.get("Stat"),  # type: ignore[union-attr]
                                            f"Metrics[{i}].MetricStat.", alarm, published))
    return out


def _semantic_metric(namespace: Any, name: Any, dimensions: Any, stat: Any, prefix: str,
                     alarm: str, published: PublishedSets | None = None) -> list[Violation]:
    out: list[Violation] = []
    if not isinstance(namespace, str) or not isinstance(name, str):
        return out
    stat_field = f"{prefix}Stat" if prefix else "Statistic"
    what = _GAUGES_MAX_ONLY.get((namespace, name))
    if what and stat in ("SampleCount", "Average", "Sum", "Minimum"):
        out.append(Violation(alarm, stat_field, "semantic.gauge_statistic",
                             f"{namespace} {name} is {what}: alarm on Maximum; {stat} "
                             + ("multiplies it by the number of samples" if stat == "Sum" else "hides the worst value")))
    names = tuple(d.get("Name") for d in dimensions if isinstance(d, Mapping)) if isinstance(dimensions, list) else ()
    dim_field = f"{prefix}Metric.Dimensions" if prefix else "Dimensions"
    if namespace.startswith("AWS/"):
        allowed = _AWS_DIMENSIONS.get((namespace, name)) or _AWS_DIMENSIONS.get((namespace, None))
        wrong = [n for n in names if allowed is not None and n not in allowed]
        if wrong:
            out.append(Violation(alarm, dim_field, "semantic.dimension_name",
                                 f"{namespace} {name} is not published with dimension(s) {', '.join(map(str, wrong))} "
                                 f"(valid: {', '.join(sorted(allowed or ()))}); the alarm would never get data"))
    else:
        try:
            Metric(name)
        except ValueError:
            return out
        base_sets = (*DIMENSION_SETS, EVENT_SOURCE_DIMENSION_SET)
        have = tuple(sorted(str(n) for n in names))
        contract_dims = {d.value for d in Dimension}
        extras = [n for n in have if n not in contract_dims]
        core = tuple(n for n in have if n in contract_dims)
        if core not in {tuple(sorted(s)) for s in base_sets}:
            sets = " or ".join("[" + ", ".join(s) + "]" for s in base_sets)
            out.append(Violation(alarm, dim_field, "semantic.dimension_name",
                                 f"{name} is published with the dimension sets {sets} (plus the emitter's "
                                 f"default dimensions), not [{', '.join(map(str, names))}]; the alarm would "
                                 "never get data"))
            return out
        if published is not None:
            op = next((d.get("Value") for d in dimensions if isinstance(d, Mapping)
                       and d.get("Name") == Dimension.OPERATION.value), None) if isinstance(dimensions, list) else None
            sets_of_op = published.get(op) if isinstance(op, str) else None
            if sets_of_op is None:
                sets_of_op = frozenset().union(*published.values()) if published else frozenset()
            if have not in sets_of_op:
                shown = " or ".join("[" + ", ".join(s) + "]" for s in sorted(sets_of_op))
                out.append(Violation(alarm, dim_field, "semantic.dimension_unpublished",
                                     f"the emitter configuration of this stack publishes {name} with {shown}, never "
                                     f"with [{', '.join(have)}] (declare the function's default dimensions under "
                                     "`dimensions:` in the stack config); the alarm would get no data",
                                     level="warning"))
        elif extras:
            out.append(Violation(alarm, dim_field, "semantic.dimension_unpublished",
                                 f"[{', '.join(have)}] is published only by an emitter with the default dimension(s) "
                                 f"{', '.join(extras)} (Emitter(dimensions=...)); check with --config",
                                 level="warning"))
    return out


# --------------------------------------------------------------------------- files
def load_requests(path: str | Path, region: str = DEFAULT_REGION) -> list[dict[str, Any]]:
    """The API requests in one exported file: a ``--cli-input-json`` document (PutMetricAlarm, PutCompositeAlarm or
    PutInsightRule), a CloudFormation template (its alarm, composite alarm and Contributor Insights rule resources,
    resolved with the parameters' defaults in ``region``) or Terraform JSON (its alarm, composite alarm and
    contributor insight rule resources, read as Terraform evaluates them; a module with its variables' defaults in
    ``region``). A directory yields every ``*.json`` below it, sorted. Raises ``ValueError`` naming the file when it
    is none of these, is not UTF-8 JSON, or holds ``NaN``/``Infinity`` (not JSON).
    """
    p = Path(path)
    if p.is_dir():
        out: list[dict[str, Any]] = []
        for f in sorted(p.rglob("*.json")):
            out.extend(load_requests(f, region))
        return out
    doc = _read_json(p)
    try:
        if isinstance(doc, dict) and "Resources" in doc:
            return requests_from_cloudformation(doc, region=region)
        if isinstance(doc, dict) and "resource" in doc:
            variables = p.parent / "variables.tf.json"
            if variables.is_file():  # a module: its variables' defaults give the values
                return requests_from_terraform(resolve_module(doc, _read_json(variables), region=region))
            return requests_from_terraform(evaluate(doc))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"{p}: cannot read its alarms ({type(exc).__name__}: {exc})") from None
    if isinstance(doc, dict) and ("widgets" in doc or set(doc) <= {"terraform", "variable", "output", "data"}):
        return []  # a dashboard body (checked by dashboard_body.validate_body) or module plumbing
    if isinstance(doc, dict) and ("AlarmName" in doc or "RuleName" in doc):
        return [doc]
    raise ValueError(f"{p}: neither an alarm or rule request, a CloudFormation template nor Terraform JSON")


def validate_file(path: str | Path, published: PublishedSets | None = None, external: Iterable[str] = ()
                  ) -> tuple[list[dict[str, Any]], list[Violation]]:
    """(requests, violations) of one exported file or folder, read as AWS would get it in every Region that matters.

    Templates take the Region of their deployment (``${AWS::Region}``, ``data.aws_region.current``), so what they
    send depends on it: the file is read for the default Region and for the longest Region code of botocore's
    partition data (:func:`alarms.regions.longest_region`), and a problem that only the longer code causes is
    reported with ``(in <region>)`` after its message. Raises ``ValueError`` as :func:`load_requests`."""
    requests = load_requests(path)
    found = validate_requests(requests, published, external)
    longest = longest_region()
    in_longest = load_requests(path, longest)
    if in_longest != requests:
        known = {(v.alarm, v.field, v.rule) for v in found}
        found += [Violation(v.alarm, v.field, v.rule, f"{v.message} (in {longest})", v.level)
                  for v in validate_requests(in_longest, published, external)
                  if (v.alarm, v.field, v.rule) not in known]
    return requests, found


def _read_json(p: Path) -> Any:
    """The JSON document in ``p``; ``ValueError`` naming the file when unreadable, not UTF-8, not JSON, or
    holding NaN/Infinity (Python's json accepts them; JSON, CloudWatch and Terraform do not)."""
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        return json.loads(p.read_text(encoding="utf-8"), parse_constant=refuse)
    except (OSError, ValueError, RecursionError) as exc:
        raise ValueError(f"{p}: not a readable JSON file ({exc})") from None
