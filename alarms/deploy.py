"""Provision alarm definitions with boto3: diff against ``DescribeAlarms``, put, tag, prune.

- **plan**: the alarms of the stack that CloudWatch does not have (create), has with different
  settings (update, with the changed fields), has as defined (unchanged); with ``prune``, the
  alarms this project manages for the same stack (tags ``idemwatch:managed-by = idemwatch`` and
  ``idemwatch:stack = <stack>``) that are no longer defined (delete). Alarms without those tags
  are never deleted, whatever their name.
- **apply**: ``PutMetricAlarm`` per create/update (idempotent: same request, same alarm);
  ``TagResource`` after an update, because PutMetricAlarm ignores ``Tags`` when the alarm
  already exists (API reference); ``DeleteAlarms`` in chunks of 100 for the prune.

Credentials, region and endpoint are standard boto3 (``--profile``, ``--region``,
``--endpoint-url`` on the command line).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from alarms import constants as C
from alarms.definitions import AlarmDefinition
from alarms.exceptions import DeployError, ValidationFailed
from alarms.validate import validate_requests

# Fields compared between the desired request and DescribeAlarms' MetricAlarms entry.
_COMPARED = (
    "AlarmDescription", "ActionsEnabled", "OKActions", "AlarmActions", "InsufficientDataActions", "MetricName",
    "Namespace", "Statistic", "ExtendedStatistic", "Dimensions", "Period", "Unit", "EvaluationPeriods",
    "DatapointsToAlarm", "Threshold", "ComparisonOperator", "TreatMissingData", "Metrics",
)
_DEFAULTS: dict[str, Any] = {
    "ActionsEnabled": True, "OKActions": [], "AlarmActions": [], "InsufficientDataActions": [], "Dimensions": [],
    "TreatMissingData": "missing", "Metrics": [],
}
_DESCRIBE_CHUNK = 100  # DescribeAlarms AlarmNames: at most 100 names
_DELETE_CHUNK = 100  # DeleteAlarms: at most 100 names


@dataclass
class DeployPlan:
    """What ``apply`` would do. ``update`` maps alarm name -> changed field names."""

    stack: str
    create: list[str] = field(default_factory=list)
    update: dict[str, list[str]] = field(default_factory=dict)
    unchanged: list[str] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    arns: dict[str, str] = field(default_factory=dict)  # existing alarms' ARNs (for re-tagging updates)

    @property
    def changes(self) -> int:
        return len(self.create) + len(self.update) + len(self.delete)

    def lines(self) -> list[str]:
        """Human summary, one line per alarm that changes, then the counts."""
        out = [f"+ create {n}" for n in self.create]
        out += [f"~ update {n} ({', '.join(f)})" for n, f in self.update.items()]
        out += [f"- delete {n}" for n in self.delete]
        out.append(f"{len(self.create)} to create, {len(self.update)} to update, {len(self.delete)} to delete, "
                   f"{len(self.unchanged)} unchanged")
        return out


def make_client(profile: str | None = None, region: str | None = None, endpoint_url: str | None = None) -> Any:
    """A boto3 CloudWatch client from the standard credential chain (optionally a named profile)."""
    import boto3

    session = boto3.Session(profile_name=profile, region_name=region)
    return session.client("cloudwatch", endpoint_url=endpoint_url)


def plan(client: Any, definitions: Sequence[AlarmDefinition], stack: str, prune: bool = False) -> DeployPlan:
    """Compare ``definitions`` with what CloudWatch has. Raises :class:`ValidationFailed` first if any
    definition is invalid and :class:`DeployError` when an API call fails."""
    requests = {d.name: d.to_request() for d in definitions}
    violations = validate_requests(requests.values())
    if violations:
        raise ValidationFailed(violations)
    existing = _describe(client, list(requests))
    p = DeployPlan(stack=stack, requests=requests)
    for name, req in requests.items():
        have = existing.get(name)
        if have is None:
            p.create.append(name)
            continue
        changed = diff_fields(req, have)
        p.arns[name] = have["AlarmArn"]
        if changed:
            p.update[name] = changed
        else:
            p.unchanged.append(name)
    if prune:
        p.delete = [n for n in managed_alarm_names(client, stack) if n not in requests]
    return p


def apply(client: Any, p: DeployPlan) -> None:
    """Carry out ``p``: put created/updated alarms, re-tag updated ones, delete pruned ones."""
    try:
        for name in p.create + list(p.update):
            client.put_metric_alarm(**p.requests[name])
        for name in p.update:
            tags = p.requests[name].get("Tags") or []
            if tags:
                client.tag_resource(ResourceARN=p.arns[name], Tags=tags)
        for i in range(0, len(p.delete), _DELETE_CHUNK):
            client.delete_alarms(AlarmNames=p.delete[i: i + _DELETE_CHUNK])
    except Exception as exc:  # botocore ClientError / EndpointConnectionError / NoCredentialsError
        raise DeployError(f"CloudWatch call failed: {exc}") from exc


def managed_alarm_names(client: Any, stack: str) -> list[str]:
    """Names of metric alarms tagged as managed by this project for ``stack``, sorted."""
    out = []
    try:
        for page in client.get_paginator("describe_alarms").paginate(AlarmTypes=["MetricAlarm"]):
            for alarm in page.get("MetricAlarms", []):
                tags = client.list_tags_for_resource(ResourceARN=alarm["AlarmArn"]).get("Tags", [])
                kv = {t["Key"]: t["Value"] for t in tags}
                if kv.get(C.TAG_MANAGED_BY) == C.TAG_MANAGED_BY_VALUE and kv.get(C.TAG_STACK) == stack:
                    out.append(alarm["AlarmName"])
    except Exception as exc:
        raise DeployError(f"listing alarms failed: {exc}") from exc
    return sorted(out)


def diff_fields(desired: Mapping[str, Any], existing: Mapping[str, Any]) -> list[str]:
    """Field names whose desired value differs from the DescribeAlarms entry (defaults applied)."""
    changed = []
    for f in _COMPARED:
        if _norm(f, desired.get(f, _DEFAULTS.get(f))) != _norm(f, existing.get(f, _DEFAULTS.get(f))):
            changed.append(f)
    return changed


def _norm(field_name: str, value: Any) -> Any:
    if value is None:
        return _DEFAULTS.get(field_name)
    if field_name == "Dimensions":
        return sorted((d["Name"], d["Value"]) for d in value)
    if field_name in ("OKActions", "AlarmActions", "InsufficientDataActions"):
        return sorted(value)
    if field_name == "Threshold":
        return float(value)
    if field_name == "Metrics":
        return [_norm_query(q) for q in value]
    return value


def _norm_query(q: Mapping[str, Any]) -> tuple:
    stat = q.get("MetricStat")
    stat_key = None
    if stat:
        m = stat.get("Metric", {})
        stat_key = (m.get("Namespace"), m.get("MetricName"), tuple(_norm("Dimensions", m.get("Dimensions") or [])),
                    stat.get("Period"), stat.get("Stat"), stat.get("Unit"))
    return (q.get("Id"), stat_key, q.get("Expression"), q.get("Label"), q.get("ReturnData", True) is not False)


def _describe(client: Any, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    names = list(names)
    found: dict[str, dict[str, Any]] = {}
    try:
        for i in range(0, len(names), _DESCRIBE_CHUNK):
            chunk = names[i: i + _DESCRIBE_CHUNK]
            for page in client.get_paginator("describe_alarms").paginate(AlarmNames=chunk,
                                                                         AlarmTypes=["MetricAlarm"]):
                for alarm in page.get("MetricAlarms", []):
                    found[alarm["AlarmName"]] = alarm
    except Exception as exc:
        raise DeployError(f"DescribeAlarms failed: {exc}") from exc
    return found
