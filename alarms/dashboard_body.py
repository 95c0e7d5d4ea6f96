"""Check a CloudWatch dashboard body (the ``DashboardBody`` of PutDashboard) against its documented structure.

Source of every rule: Amazon CloudWatch API Reference, "Dashboard Body Structure and Syntax"
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/CloudWatch-Dashboard-Body-Structure.html).
Each :class:`BodyProblem` names its rule id; the ids map to the page's sections:

- ``body.*`` (Overall Structure): a JSON object with a ``widgets`` array of 0-500 widget objects;
  ``periodOverride`` is ``auto`` or ``inherit``; ``start``/``end`` strings;
- ``widget.*`` (Widgets Array Structure): ``type`` one of metric, text, log, alarm, explorer, custom;
  ``x`` integer 0-23, ``y`` integer >= 0, ``width`` integer 1-24, ``height`` integer 1-1000,
  ``x + width <= 24`` (the grid is 24 columns), ``properties`` an object;
- ``metric.*`` (Properties of a Metric Widget Object; Metric Widget: Format for Each Metric in the
  Array): ``region`` required; ``metrics`` required unless ``annotations.alarms`` is given (or ``insightRule``:
  a Contributor Insights widget, ``{"ruleName", "maxContributorCount" 1-100, "orderBy" Sum | Maximum}``, as the
  console writes it; the body structure page does not list it, GetInsightRuleReport gives the ranges); each
  entry an array ``[Namespace, MetricName, (DimensionName, DimensionValue)*, {rendering}]`` (``"."`` /
  ``"..."`` repeat the previous entry's values) or ``[{"expression": ...}]``; rendering options among
  the documented ones; at most 500 entries; ``period`` 1, 5, 10, 30 or a multiple of 60;
  ``annotations.alarms`` at most one alarm ARN; ``annotations.horizontal`` entries need ``value``;
  ``view`` one of timeSeries, singleValue, gauge, bar, pie, table;
- ``log.*`` (Properties of a Log Widget Object): ``query`` and ``region`` required; ``view`` one of
  table, timeSeries, bar, pie;
- ``alarm.*`` (Properties of an Alarm Status Widget Object): ``alarms`` an array of 1-100 alarm ARNs;
  ``sortBy`` one of default, stateUpdatedTimestamp, timestamp; ``states`` among ALARM,
  INSUFFICIENT_DATA, OK;
- ``text.*`` (Properties of a Text Widget Object): ``markdown`` required; ``background`` solid or
  transparent;
- ``explorer.*`` (Properties of a Metrics Explorer Widget Object): ``metrics`` an array of objects
  with ``metricName``, ``resourceType`` and ``stat``.

What is *not* checked: that metrics, log groups or alarms exist, Logs Insights query syntax,
variables, and custom widgets' Lambda ARNs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DOC_URL = "https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/CloudWatch-Dashboard-Body-Structure.html"
WIDGET_TYPES = ("metric", "text", "log", "alarm", "explorer", "custom")
MAX_WIDGETS = 500
GRID_COLUMNS = 24
MAX_HEIGHT = 1_000
MAX_METRICS = 500
MAX_STATUS_ALARMS = 100
MAX_CONTRIBUTORS = 100  # GetInsightRuleReport MaxContributorCount: 1-100 (the widget's maxContributorCount)
METRIC_VIEWS = ("timeSeries", "singleValue", "gauge", "bar", "pie", "table")
LOG_VIEWS = ("table", "timeSeries", "bar", "pie")
RENDERING_KEYS = {"accountId", "color", "expression", "id", "label", "period", "region", "stat", "visible", "yAxis"}
_ALARM_ARN = re.compile(r"^arn:aws[a-z-]*:cloudwatch:[a-z0-9-]+:\d{12}:alarm:.+$")


@dataclass(frozen=True)
class BodyProblem:
    """One broken rule: ``where`` (``widgets[3].properties.metrics[0]``), ``rule`` id, message."""

    where: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message} [{self.rule}]"


def validate_body(body: str | Mapping[str, Any]) -> list[BodyProblem]:
    """Every problem of a dashboard body (JSON text or the decoded object); empty list = valid. Never raises."""
    out: list[BodyProblem] = []
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError as exc:
            return [BodyProblem("<body>", "body.json", f"not JSON: {exc}")]
    if not isinstance(body, Mapping):
        return [BodyProblem("<body>", "body.object", "the body must be a JSON object")]
    widgets = body.get("widgets")
    if not isinstance(widgets, list):
        return [BodyProblem("widgets", "body.widgets_required", "the body must include a widgets array")]
    if len(widgets) > MAX_WIDGETS:
        out.append(BodyProblem("widgets", "body.widgets_count", f"{len(widgets)} widgets; at most {MAX_WIDGETS}"))
    po = body.get("periodOverride")
    if po is not None and po not in ("auto", "inherit"):
        out.append(BodyProblem("periodOverride", "body.period_override", f"{po!r} is not auto or inherit"))
    for key in ("start", "end"):
        if key in body and not isinstance(body[key], str):
            out.append(BodyProblem(key, "body.time_range", f"{key} must be a string (ISO 8601 or -PT6H)"))
    for i, w in enumerate(widgets):
        out.extend(_widget(w, f"widgets[{i}]"))
    return out


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _widget(w: Any, at: str) -> list[BodyProblem]:
    out: list[BodyProblem] = []

    def p(where: str, rule: str, msg: str) -> None:
        out.append(BodyProblem(where, rule, msg))

    if not isinstance(w, Mapping):
        return [BodyProblem(at, "widget.object", "a widget must be an object")]
    wtype = w.get("type")
    if wtype not in WIDGET_TYPES:
        p(f"{at}.type", "widget.type", f"{wtype!r} is not a widget type ({', '.join(WIDGET_TYPES)})")
    x, y = w.get("x"), w.get("y")
    width, height = w.get("width", 6), w.get("height", 6)
    if x is not None and not (_is_int(x) and 0 <= x <= GRID_COLUMNS - 1):
        p(f"{at}.x", "widget.x_range", f"x {x!r} must be an integer 0-{GRID_COLUMNS - 1}")
    if y is not None and not (_is_int(y) and y >= 0):
        p(f"{at}.y", "widget.y_range", f"y {y!r} must be an integer >= 0")
    if not (_is_int(width) and 1 <= width <= GRID_COLUMNS):
        p(f"{at}.width", "widget.width_range", f"width {width!r} must be an integer 1-{GRID_COLUMNS}")
    if not (_is_int(height) and 1 <= height <= MAX_HEIGHT):
        p(f"{at}.height", "widget.height_range", f"height {height!r} must be an integer 1-{MAX_HEIGHT}")
    if isinstance(x, int) and isinstance(width, int) and 0 <= x and 1 <= width <= GRID_COLUMNS \
            and x + width > GRID_COLUMNS:
        p(f"{at}.width", "widget.grid_overflow", f"x {x} + width {width} exceeds the {GRID_COLUMNS}-column grid")
    props = w.get("properties")
    if not isinstance(props, Mapping):
        p(f"{at}.properties", "widget.properties_required", "every widget needs a properties object")
        return out
    where = f"{at}.properties"
    if wtype == "metric":
        out.extend(_metric_props(props, where))
    elif wtype == "log":
        for key in ("query", "region"):
            if not isinstance(props.get(key), str) or not props.get(key):
                p(f"{where}.{key}", f"log.{key}_required", f"a log widget needs {key}")
        if "view" in props and props["view"] not in LOG_VIEWS:
            p(f"{where}.view", "log.view", f"{props['view']!r} is not one of {', '.join(LOG_VIEWS)}")
    elif wtype == "alarm":
        alarms = props.get("alarms")
        if not isinstance(alarms, list) or not 1 <= len(alarms) <= MAX_STATUS_ALARMS:
            p(f"{where}.alarms", "alarm.alarms_count", f"alarms must be an array of 1-{MAX_STATUS_ALARMS} alarm ARNs")
        else:
            for j, arn in enumerate(alarms):
                if not isinstance(arn, str) or not _ALARM_ARN.match(arn):
                    p(f"{where}.alarms[{j}]", "alarm.arn", f"{arn!r} is not a CloudWatch alarm ARN")
        if "sortBy" in props and props["sortBy"] not in ("default", "stateUpdatedTimestamp", "timestamp"):
            p(f"{where}.sortBy", "alarm.sort_by", f"{props['sortBy']!r} is not default, stateUpdatedTimestamp "
                                                   "or timestamp")
        states = props.get("states")
        if states is not None and (not isinstance(states, list)
                                   or any(s not in ("ALARM", "INSUFFICIENT_DATA", "OK") for s in states)):
            p(f"{where}.states", "alarm.states", "states must be among ALARM, INSUFFICIENT_DATA, OK")
    elif wtype == "text":
        if not isinstance(props.get("markdown"), str):
            p(f"{where}.markdown", "text.markdown_required", "a text widget needs markdown")
        if "background" in props and props["background"] not in ("solid", "transparent"):
            p(f"{where}.background", "text.background", "background must be solid or transparent")
    elif wtype == "explorer":
        metrics = props.get("metrics")
        if not isinstance(metrics, list) or not metrics or not all(
                isinstance(m, Mapping) and {"metricName", "resourceType", "stat"} <= set(m) for m in metrics):
            p(f"{where}.metrics", "explorer.metrics", "metrics must be objects with metricName, resourceType, stat")
    return out


def _metric_props(props: Mapping[str, Any], where: str) -> list[BodyProblem]:
    out: list[BodyProblem] = []

    def p(at: str, rule: str, msg: str) -> None:
        out.append(BodyProblem(at, rule, msg))

    if not isinstance(props.get("region"), str) or not props.get("region"):
        p(f"{where}.region", "metric.region_required", "a metric widget needs region")
    ann = props.get("annotations")
    alarms = ann.get("alarms") if isinstance(ann, Mapping) else None
    if ann is not None and not isinstance(ann, Mapping):
        p(f"{where}.annotations", "metric.annotations", "annotations must be an object")
    if alarms is not None:
        if not isinstance(alarms, list) or len(alarms) > 1:
            p(f"{where}.annotations.alarms", "metric.annotation_alarms", "at most one alarm annotation per widget")
        elif alarms and (not isinstance(alarms[0], str) or not _ALARM_ARN.match(alarms[0])):
            p(f"{where}.annotations.alarms[0]", "metric.annotation_alarms", f"{alarms[0]!r} is not an alarm ARN")
    if isinstance(ann, Mapping):
        for kind in ("horizontal", "vertical"):
            for j, a in enumerate(ann.get(kind) or []):
                if not isinstance(a, Mapping) or "value" not in a:
                    p(f"{where}.annotations.{kind}[{j}]", "metric.annotation_value", "an annotation needs value")
    rule = props.get("insightRule")
    if rule is not None:
        if not isinstance(rule, Mapping) or not isinstance(rule.get("ruleName"), str) or not rule.get("ruleName"):
            p(f"{where}.insightRule", "metric.insight_rule", "insightRule needs ruleName (a Contributor Insights rule)")
        elif "maxContributorCount" in rule and not (_is_int(rule["maxContributorCount"])
                                                    and 1 <= rule["maxContributorCount"] <= MAX_CONTRIBUTORS):
            p(f"{where}.insightRule.maxContributorCount", "metric.insight_rule",
              f"maxContributorCount must be an integer 1-{MAX_CONTRIBUTORS}")
        elif "orderBy" in rule and rule["orderBy"] not in ("Sum", "Maximum"):
            p(f"{where}.insightRule.orderBy", "metric.insight_rule", "orderBy must be Sum or Maximum")
        if props.get("metrics") is not None:
            p(f"{where}.metrics", "metric.insight_rule", "a Contributor Insights widget takes insightRule, not metrics")
    metrics = props.get("metrics")
    if metrics is None:
        if not alarms and rule is None:
            p(f"{where}.metrics", "metric.metrics_required", "metrics is required unless an alarm annotation (or a "
                                                             "Contributor Insights insightRule) is given")
    elif not isinstance(metrics, list):
        p(f"{where}.metrics", "metric.metrics_array", "metrics must be an array of arrays")
    else:
        if len(metrics) > MAX_METRICS:
            p(f"{where}.metrics", "metric.metrics_count", f"{len(metrics)} entries; at most {MAX_METRICS}")
        for j, m in enumerate(metrics):
            out.extend(_metric_entry(m, f"{where}.metrics[{j}]", first=j == 0))
    period = props.get("period")
    if period is not None and not (_is_int(period) and (period in (1, 5, 10, 30) or period % 60 == 0 and period > 0)):
        p(f"{where}.period", "metric.period", f"period {period!r} must be 1, 5, 10, 30 or a multiple of 60")
    if "view" in props and props["view"] not in METRIC_VIEWS:
        p(f"{where}.view", "metric.view", f"{props['view']!r} is not one of {', '.join(METRIC_VIEWS)}")
    return out


def _metric_entry(m: Any, at: str, first: bool) -> list[BodyProblem]:
    out: list[BodyProblem] = []
    if not isinstance(m, list) or not m:
        return [BodyProblem(at, "metric.entry_shape", "each metric must be a non-empty array")]
    render = m[-1] if isinstance(m[-1], Mapping) else None
    plain = m[:-1] if render is not None else m
    if render is not None:
        unknown = sorted(set(render) - RENDERING_KEYS)
        if unknown:
            out.append(BodyProblem(at, "metric.rendering_keys", f"unknown rendering option(s) {', '.join(unknown)}"))
    if not plain:
        if render is None or not isinstance(render.get("expression"), str):
            out.append(BodyProblem(at, "metric.entry_shape", "an entry without Namespace/MetricName must be "
                                                             "[{\"expression\": ...}]"))
        return out
    if any(isinstance(v, Mapping) for v in plain):
        out.append(BodyProblem(at, "metric.entry_shape", "the rendering-options object must be the last element"))
        return out
    if not all(isinstance(v, str) for v in plain):
        out.append(BodyProblem(at, "metric.entry_shape", "namespace, metric name and dimensions must be strings"))
        return out
    if plain[0] == "...":
        if first:
            out.append(BodyProblem(at, "metric.entry_shape", "'...' repeats the previous entry; the first has none"))
        return out
    if len(plain) < 2 or len(plain) % 2 != 0:
        out.append(BodyProblem(at, "metric.entry_shape",
                               f"expected [Namespace, MetricName, (DimensionName, DimensionValue)...], got "
                               f"{len(plain)} string(s)"))
    elif first and "." in plain[:2]:
        out.append(BodyProblem(at, "metric.entry_shape", "'.' repeats the previous entry; the first has none"))
    return out
