"""Render alarm definitions as files: AWS CLI requests, a CloudFormation template, Terraform JSON.

- ``cli``: ``<out>/cli/<AlarmName>.json``, one PutMetricAlarm request each, for
  ``aws cloudwatch put-metric-alarm --cli-input-json file://<file>``;
- ``cloudformation``: ``<out>/cloudformation/<stack>-alarms.json``, ``AWS::CloudWatch::Alarm``
  resources (property names are the API's); with the stack config, a template an existing stack
  includes (Parameters, Conditions, Outputs, optional dashboard: :mod:`alarms.cfn_template`);
- ``terraform``: ``<out>/terraform/<stack>-alarms.tf.json``, ``aws_cloudwatch_metric_alarm``
  resources in Terraform's JSON syntax (``metric_query`` blocks for metric math); with the stack
  config also the module ``<out>/terraform-module/`` (:mod:`alarms.tf_module`);
- ``dashboard`` (``--dashboard``): ``<out>/dashboard/<stack>-dashboard.json``, the PutDashboard body
  (``aws cloudwatch put-dashboard --dashboard-name <prefix>idemwatch --dashboard-body file://...``).

Every definition is validated first (:mod:`alarms.validate`); nothing is written when one fails.
Output is deterministic (same config -> byte-identical files), so the committed exports can be
checked for staleness. The inverse mappings (``requests_from_*``) let ``validate`` read any of
the three formats.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from alarms.constants import TAG_MANAGED_BY
from alarms.definitions import AlarmDefinition
from alarms.exceptions import ValidationFailed
from alarms.types import ExportFormat
from alarms.validate import errors, validate_requests

CFN_ALARM_TYPE = "AWS::CloudWatch::Alarm"
TF_ALARM_TYPE = "aws_cloudwatch_metric_alarm"

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


def render(definitions: Sequence[AlarmDefinition], fmt: ExportFormat | str, stack: str,
           config: Any = None, dashboard: bool = False) -> dict[str, str]:
    """Relative path (``<format>/<file>``) -> file text for ``definitions``. ``config`` (the
    :class:`~alarms.config.StackConfig`) makes the CloudFormation template parameterised and adds the
    Terraform module; ``dashboard`` adds the console dashboard (needs ``config``). Raises
    :class:`ValidationFailed` (alarms or dashboard body)."""
    fmt = ExportFormat(fmt)
    requests = [d.to_request() for d in definitions]
    violations = errors(validate_requests(requests))
    if violations:
        raise ValidationFailed(violations)
    if dashboard and config is None:
        raise ValueError("the console dashboard needs the stack config")
    if fmt is ExportFormat.CLI:
        return {f"cli/{_file_safe(r['AlarmName'])}.json": _dump(r) for r in requests}
    if fmt is ExportFormat.CLOUDFORMATION:
        if config is None:
            return {f"cloudformation/{stack}-alarms.json": _dump(to_cloudformation(requests, stack))}
        from alarms.cfn_template import build_template

        return {f"cloudformation/{stack}-alarms.json": _dump(build_template(config, definitions, dashboard))}
    if fmt is ExportFormat.DASHBOARD:
        if config is None:
            raise ValueError("the console dashboard needs the stack config")
        return {f"dashboard/{stack}-dashboard.json": _dump(dashboard_body(config, definitions))}
    files = {f"terraform/{stack}-alarms.tf.json": _dump(to_terraform(requests))}
    if config is not None:
        from alarms.tf_module import build_module

        files.update({f"terraform-module/{name}": _dump(doc)
                      for name, doc in build_module(config, definitions, dashboard).items()})
    return files


def dashboard_body(config: Any, definitions: Sequence[AlarmDefinition], region: str | None = None,
                   account_id: str | None = None) -> dict[str, Any]:
    """The checked console dashboard body for ``region``/``account_id`` (default: the config's).
    Raises :class:`ValidationFailed` when the body breaks the documented structure, ``ValueError``
    without a region or account id."""
    from alarms.console_dashboard import build_body, concrete
    from alarms.dashboard_body import validate_body
    from alarms.validate import Violation

    body = build_body(config, definitions, concrete(config, region, account_id))
    problems = validate_body(body)
    if problems:
        raise ValidationFailed([Violation("<dashboard>", p.where, p.rule, p.message) for p in problems])
    return body


def export(
    definitions: Sequence[AlarmDefinition], out: str | Path, fmt: ExportFormat | str, stack: str,
    config: Any = None, dashboard: bool = False,
) -> list[Path]:
    """Write the files of :func:`render` under ``out`` and return their paths.

    Earlier exports of alarms no longer defined (``*.json`` files in the format's folder that
    carry this project's managed-by tag) are removed; other files are left alone.
    """
    files = render(definitions, fmt, stack, config, dashboard)
    out = Path(out)
    written: list[Path] = []
    for rel, text in files.items():
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        written.append(p)
    folder = out / ExportFormat(fmt).value
    keep = {out / rel for rel in files}
    for old in folder.glob("*.json"):
        if old not in keep and TAG_MANAGED_BY in old.read_text(encoding="utf-8", errors="replace"):
            old.unlink()
    return written


# --------------------------------------------------------------------------- CloudFormation
def to_cloudformation(requests: Iterable[Mapping[str, Any]], stack: str) -> dict[str, Any]:
    """A template with one ``AWS::CloudWatch::Alarm`` per request (logical id from the alarm name)."""
    resources: dict[str, Any] = {}
    for r in requests:
        props = {k: v for k, v in r.items() if not (isinstance(v, list) and not v)}
        logical = _logical_id(r["AlarmName"])
        if logical in resources:
            raise ValueError(f"two alarms map to the logical id {logical}")
        resources[logical] = {"Type": CFN_ALARM_TYPE, "Properties": props}
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": f"idemwatch alarms for stack {stack} (generated by `idemwatch alarms export`; do not edit)",
        "Resources": resources,
    }


def requests_from_cloudformation(template: Mapping[str, Any], parameters: Mapping[str, Any] | None = None,
                                 region: str = "us-east-1") -> list[dict[str, Any]]:
    """The PutMetricAlarm requests of a template's ``AWS::CloudWatch::Alarm`` resources (other types skipped).
    A parameterised template is resolved first (``parameters`` over the defaults: :func:`alarms.cfn_template.resolve`)."""
    from alarms.cfn_template import is_parameterised, resolve

    if is_parameterised(template) or parameters:
        template = resolve(template, parameters, region=region)
    out = []
    for res in (template.get("Resources") or {}).values():
        if isinstance(res, Mapping) and res.get("Type") == CFN_ALARM_TYPE:
            out.append(dict(res.get("Properties") or {}))
    return out


# --------------------------------------------------------------------------- Terraform
def to_terraform(requests: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Terraform JSON with one ``aws_cloudwatch_metric_alarm`` per request."""
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
        name = _tf_name(r["AlarmName"])
        if name in alarms:
            raise ValueError(f"two alarms map to the Terraform name {name}")
        alarms[name] = body
    return {
        "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": ">= 5.0"}}},
        "resource": {TF_ALARM_TYPE: alarms},
    }


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
    """The PutMetricAlarm requests of Terraform JSON ``aws_cloudwatch_metric_alarm`` resources."""
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
                                  "Dimensions": [{"Name": k, "Value": v} for k, v in (m.get("dimensions") or {}).items()]}
                        stat = {metric_back[k]: v for k, v in m.items() if k in ("period", "stat", "unit")}
                        rq["MetricStat"] = {"Metric": metric, **stat}
                    queries.append(rq)
                r["Metrics"] = queries
            else:
                r[key] = value  # unknown argument: the validator reports it as an unknown member
        out.append(r)
    return out


# --------------------------------------------------------------------------- helpers
def _dump(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _file_safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def _logical_id(name: str) -> str:
    parts = re.split(r"[^A-Za-z0-9]+", name)
    return "".join(p[:1].upper() + p[1:] for p in parts if p) + "Alarm"


def _tf_name(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    s = re.sub(r"[^A-Za-z0-9_]+", "_", s).strip("_").lower()
    return s if s[:1].isalpha() else f"alarm_{s}"
