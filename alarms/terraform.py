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

from alarms.naming import tf_name

TF_ALARM_TYPE = "aws_cloudwatch_metric_alarm"
REQUIRED_PROVIDERS = {"aws": {"source": "hashicorp/aws", "version": ">= 5.0"}}

# API member -> Terraform argument (aws provider, aws_cloudwatch_metric_alarm)
_TF_TOP = {
    "AlarmName": "alarm_name",
    "AlarmDescription": "alarm_description",
    "ActionsEnabled": "actions_enabled",
    "OKActions": "ok_actions",
    "AlarmActions": "alarm_actions",
    "InsufficientDataActions": "insufficient_data_actions",
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
_TOKENS = re.compile(r"(\$\$\{|%%\{|\$\{var\.[A-Za-z0-9_]+\})")


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
            out.append(str(vals[m.group(1)]) if m else {"$${": "${", "%%{": "%{"}.get(part, part))
        return "".join(out)

    return walk(doc)


def to_terraform(requests: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Terraform JSON with one ``aws_cloudwatch_metric_alarm`` per PutMetricAlarm request, every string escaped
    (:func:`escape`). Raises ``ValueError`` for a request member without a Terraform argument or two alarms
    with one resource name."""
    alarms: dict[str, Any] = {}
    for r in requests:
        body: dict[str, Any] = {}
        for key, value in r.items():
            if isinstance(value, list) and not value:
                continue
            if key in _TF_TOP:
                body[_TF_TOP[key]] = value
            elif key == "Dimensions":
                body["dimensions"] = {d["Name"]: d["Value"] for d in value}
            elif key == "Tags":
                body["tags"] = {t["Key"]: t["Value"] for t in value}
            elif key == "Metrics":
                body["metric_query"] = [_tf_query(q) for q in value]
            else:
                raise ValueError(f"{r.get('AlarmName')}: no Terraform argument for {key}")
        name = tf_name(r["AlarmName"])
        if name in alarms:
            raise ValueError(f"two alarms map to the Terraform name {name}")
        alarms[name] = escape(body)
    return {"terraform": {"required_providers": REQUIRED_PROVIDERS}, "resource": {TF_ALARM_TYPE: alarms}}


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
    """The PutMetricAlarm requests of the ``aws_cloudwatch_metric_alarm`` resources of an *evaluated*
    Terraform JSON document (:func:`evaluate` first: escapes undone, variables put in). An argument without an
    API member is passed on as it is, so the validator reports it as an unknown member."""
    top_back = {v: k for k, v in _TF_TOP.items()}
    query_back = {v: k for k, v in _TF_QUERY.items()}
    metric_back = {v: k for k, v in _TF_METRIC.items()}
    out = []
    for body in ((doc.get("resource") or {}).get(TF_ALARM_TYPE) or {}).values():
        r: dict[str, Any] = {}
        for key, value in body.items():
            if key in top_back:
                r[top_back[key]] = value
            elif key == "dimensions":
                r["Dimensions"] = [{"Name": k, "Value": v} for k, v in value.items()]
            elif key == "tags":
                r["Tags"] = [{"Key": k, "Value": v} for k, v in value.items()]
            elif key == "metric_query":
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
