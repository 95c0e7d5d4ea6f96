"""Terraform JSON syntax for ``aws_cloudwatch_metric_alarm``: the API member -> argument mapping, both ways, and
the escaping of literal text.

In Terraform's JSON syntax every string where an expression is expected is a string *template*: ``${...}`` is
an interpolation and ``%{...}`` a directive, in object keys too ("JSON Configuration Syntax", Terraform
documentation). A literal ``${`` is written ``$${`` and a literal ``%{`` is written ``%%{``, so every string that
comes from the stack config passes through :func:`escape` (:func:`to_terraform` escapes the whole document)
and a function named ``${file("/etc/hostname")}`` stays a name. :func:`evaluate` is the inverse the validator
uses: it undoes the escapes and puts in the module's variables, which is what Terraform passes to the provider.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from alarms import alarm_rule
from alarms.kinds import COMPOSITE_ALARM, INSIGHT_RULE, KINDS, METRIC_ALARM, kind_of, name_of
from alarms.naming import tf_name

TF_ALARM_TYPE = KINDS[METRIC_ALARM].tf_type
TF_COMPOSITE_TYPE = KINDS[COMPOSITE_ALARM].tf_type
TF_INSIGHT_RULE_TYPE = KINDS[INSIGHT_RULE].tf_type
REQUIRED_PROVIDERS = {"aws": {"source": "hashicorp/aws", "version": ">= 5.0"}}

# API member -> Terraform argument (aws provider): the members both kinds of alarm share, then aws_cloudwatch_metric_alarm
_TF_ALARM = {
    "AlarmName": "alarm_name",
    "AlarmDescription": "alarm_description",
    "ActionsEnabled": "actions_enabled",
    "OKActions": "ok_actions",
    "AlarmActions": "alarm_actions",
    "InsufficientDataActions": "insufficient_data_actions",
}
_TF_TOP = {
    **_TF_ALARM,
    "Namespace": "namespace",
    "MetricName": "metric_name",
    "Statistic": "statistic",
    "ExtendedStatistic": "extended_statistic",
    "Period": "period",
    "Unit": "unit",
    "EvaluationPeriods": "evaluation_periods",
    "DatapointsToAlarm": "datapoints_to_alarm",
    "Threshold": "threshold",
    "ThresholdMetricId": "threshold_metric_id",
    "ComparisonOperator": "comparison_operator",
    "TreatMissingData": "treat_missing_data",
    "EvaluateLowSampleCountPercentile": "evaluate_low_sample_count_percentiles",
}
_TF_QUERY = {"Id": "id", "Expression": "expression", "Label": "label", "ReturnData": "return_data",
             "Period": "period", "AccountId": "account_id"}
_TF_METRIC = {"MetricName": "metric_name", "Namespace": "namespace", "Period": "period", "Stat": "stat",
              "Unit": "unit"}
_VAR = re.compile(r"\$\{var\.([A-Za-z0-9_]+)\}")
_REF = re.compile(r"\$\{([a-z0-9_]+\.[A-Za-z0-9_-]+\.[a-z_]+)\}")
_TOKENS = re.compile(r"(\$\$\{|%%\{|\$\{var\.[A-Za-z0-9_]+\}|\$\{[a-z0-9_]+\.[A-Za-z0-9_-]+\.[a-z_]+\})")


def escape(value: Any) -> Any:
    """``value`` with every string in it (object keys included) made literal for a Terraform template:
    ``${`` -> ``$${``, ``%{`` -> ``%%{``. Numbers, booleans and None are returned unchanged."""
    if isinstance(value, str):
        return value.replace("${", "$${").replace("%{", "%%{")
    if isinstance(value, Mapping):
        return {escape(k): escape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [escape(v) for v in value]
    return value


def evaluate(doc: Any, values: Mapping[str, Any] | None = None, region: str | None = None,
             region_expression: str = "") -> Any:
    """``doc`` as Terraform would pass it to the provider, for the expressions this project writes: a string
    that is exactly ``${var.<name>}`` becomes the variable's value (of any type), ``${var.<name>}`` inside a
    string its text, ``region_expression`` inside a string ``region`` (when given), and ``$${`` / ``%%{``
    become ``${`` / ``%{``. Other interpolations are left as they are. Raises ``KeyError`` for a variable
    ``values`` does not hold."""
    vals = dict(values or {})
    names: dict[str, str] = {}  # "<type>.<resource>.<name attribute>" -> the resource's evaluated name

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            return {walk(k): walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        if not isinstance(x, str):
            return x
        whole = _VAR.fullmatch(x)
        if whole:
            return vals[whole.group(1)]
        if region is not None and region_expression:
            x = x.replace(region_expression, region)
        out = []
        for part in _TOKENS.split(x):
            m = _VAR.fullmatch(part)
            r = _REF.fullmatch(part)
            if m:
                out.append(str(vals[m.group(1)]))
            elif r and r.group(1) in names:
                out.append(names[r.group(1)])
            else:
                out.append({"$${": "${", "%%{": "%{"}.get(part, part))
        return "".join(out)

    resources = doc.get("resource") if isinstance(doc, Mapping) else None
    for kind, spec in KINDS.items():  # names first: a composite's rule refers to them
        attribute = _NAME_ATTRIBUTE[kind]
        for resource, body in ((resources or {}).get(spec.tf_type) or {}).items():
            if isinstance(body, Mapping) and isinstance(body.get(attribute), str):
                names[f"{spec.tf_type}.{resource}.{attribute}"] = walk(body[attribute])
    return walk(doc)


_TF_COMPOSITE = {**_TF_ALARM, "AlarmRule": "alarm_rule"}  # aws_cloudwatch_composite_alarm
_TF_SUPPRESSOR = {"ActionsSuppressor": "alarm", "ActionsSuppressorWaitPeriod": "wait_period",
                  "ActionsSuppressorExtensionPeriod": "extension_period"}
_TF_RULE = {"RuleName": "rule_name", "RuleState": "rule_state", "RuleDefinition": "rule_definition"}
_TOP = {METRIC_ALARM: _TF_TOP, COMPOSITE_ALARM: _TF_COMPOSITE, INSIGHT_RULE: _TF_RULE}
"""API member -> Terraform argument per kind (aws provider 5.x: aws_cloudwatch_metric_alarm,
aws_cloudwatch_composite_alarm with its actions_suppressor block, aws_cloudwatch_contributor_insight_rule)."""
_NAME_ATTRIBUTE = {METRIC_ALARM: "alarm_name", COMPOSITE_ALARM: "alarm_name", INSIGHT_RULE: "rule_name"}


def reference(kind: str, resource: str) -> str:
    """The Terraform expression of the name of resource ``resource`` of ``kind`` (e.g.
    ``${aws_cloudwatch_metric_alarm.x.alarm_name}``): naming a resource makes Terraform create it first."""
    return f"${{{KINDS[kind].tf_type}.{resource}.{_NAME_ATTRIBUTE[kind]}}}"


def to_terraform(requests: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Terraform JSON with one resource per request (``aws_cloudwatch_metric_alarm``, ``aws_cloudwatch_composite_alarm``,
    ``aws_cloudwatch_contributor_insight_rule``), every string escaped (:func:`escape`); a composite names the
    alarms of the document by reference (:func:`reference`). Raises ``ValueError`` for a request member without a
    Terraform argument or two resources with one name."""
    requests = list(requests)
    names = {(kind_of(r), name_of(r)): tf_name(name_of(r)) for r in requests}
    blocks: dict[str, dict[str, Any]] = {}
    for r in requests:
        kind = kind_of(r)
        body = arguments(r, names)
        name = names[kind, name_of(r)]
        alarms = blocks.setdefault(KINDS[kind].tf_type, {})
        if name in alarms:
            raise ValueError(f"two resources map to the Terraform name {name}")
        alarms[name] = body
    return {"terraform": {"required_providers": REQUIRED_PROVIDERS},
            "resource": {KINDS[k].tf_type: blocks[KINDS[k].tf_type] for k in KINDS if KINDS[k].tf_type in blocks}}


def arguments(r: Mapping[str, Any], names: Mapping[tuple[str, str], str]) -> dict[str, Any]:
    """The escaped Terraform arguments of one request; ``names``: (kind, resource name) -> Terraform name of the
    resources a composite may reference."""
    kind = kind_of(r)
    top = _TOP[kind]
    body: dict[str, Any] = {}
    refs = {name: reference(k, tf) for (k, name), tf in names.items() if k in (METRIC_ALARM, COMPOSITE_ALARM)}
    suppressor: dict[str, Any] = {}
    for key, value in r.items():
        if isinstance(value, list) and not value:
            continue
        if key == "AlarmRule" and kind == COMPOSITE_ALARM and isinstance(value, str):
            body["alarm_rule"] = alarm_rule.rewrite(value, refs.get, escape)
        elif key in _TF_SUPPRESSOR and kind == COMPOSITE_ALARM:
            ref = refs.get(alarm_rule.alarm_name_of(value)) if key == "ActionsSuppressor" else None
            suppressor[_TF_SUPPRESSOR[key]] = ref if ref is not None else escape(value)
        elif key in top:
            body[top[key]] = escape(value)
        elif key == "Dimensions" and kind == METRIC_ALARM:
            body["dimensions"] = escape({d["Name"]: d["Value"] for d in value})
        elif key == "Tags":
            body["tags"] = escape({t["Key"]: t["Value"] for t in value})
        elif key == "Metrics" and kind == METRIC_ALARM:
            body["metric_query"] = escape([_tf_query(q) for q in value])
        else:
            raise ValueError(f"{name_of(r)}: no Terraform argument for {key}")
    if suppressor:
        body["actions_suppressor"] = [suppressor]
    # the arguments in the order of the request's members (the suppressor block where its first member was)
    return body


def _tf_query(q: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {_TF_QUERY[k]: v for k, v in q.items() if k in _TF_QUERY}
    stat = q.get("MetricStat")
    if stat:
        metric = stat["Metric"]
        m: dict[str, Any] = {"metric_name": metric["MetricName"], "namespace": metric["Namespace"],
                             "period": stat["Period"], "stat": stat["Stat"]}
        if stat.get("Unit"):
            m["unit"] = stat["Unit"]
        if metric.get("Dimensions"):
            m["dimensions"] = {d["Name"]: d["Value"] for d in metric["Dimensions"]}
        out["metric"] = m
    return out


def requests_from_terraform(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The API requests of the metric alarm, composite alarm and Contributor Insights rule resources of an
    *evaluated* Terraform JSON document (:func:`evaluate` first: escapes undone, variables and references put in).
    An argument without an API member is passed on as it is, so the validator reports it as an unknown member."""
    query_back = {v: k for k, v in _TF_QUERY.items()}
    metric_back = {v: k for k, v in _TF_METRIC.items()}
    sup_back = {v: k for k, v in _TF_SUPPRESSOR.items()}
    out = []
    resources = doc.get("resource") or {}
    for kind, spec in KINDS.items():
        top_back = {v: k for k, v in _TOP[kind].items()}
        for body in (resources.get(spec.tf_type) or {}).values():
            r: dict[str, Any] = {}
            for key, value in body.items():
                if key in top_back:
                    r[top_back[key]] = value
                elif key == "dimensions" and kind == METRIC_ALARM:
                    r["Dimensions"] = [{"Name": k, "Value": v} for k, v in value.items()]
                elif key == "tags":
                    r["Tags"] = [{"Key": k, "Value": v} for k, v in value.items()]
                elif key == "actions_suppressor" and kind == COMPOSITE_ALARM and isinstance(value, list) and value:
                    r.update({sup_back.get(k, k): v for k, v in value[0].items()})
                elif key == "metric_query" and kind == METRIC_ALARM:
                    queries = []
                    for q in value:
                        rq: dict[str, Any] = {query_back[k]: v for k, v in q.items() if k in query_back}
                        if "metric" in q:
                            m = q["metric"]
                            metric = {"Namespace": m.get("namespace"), "MetricName": m.get("metric_name"),
                                      "Dimensions": [{"Name": k, "Value": v}
                                                     for k, v in (m.get("dimensions") or {}).items()]}
                            stat = {metric_back[k]: v for k, v in m.items() if k in ("period", "stat", "unit")}
                            rq["MetricStat"] = {"Metric": metric, **stat}
                        queries.append(rq)
                    r["Metrics"] = queries
                else:
                    r[key] = value
            out.append(r)
    return out
