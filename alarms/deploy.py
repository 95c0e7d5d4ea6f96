"""Provision alarm definitions with boto3: diff against ``DescribeAlarms``, put, tag, prune.

- **plan**: the alarms of the stack that CloudWatch does not have (create), has with different
  settings (update, with the changed fields), has as defined (unchanged); with ``prune``, the
  alarms this project manages for the same stack (tags ``idemwatch:managed-by = idemwatch`` and
  ``idemwatch:stack = <stack>``) that are no longer defined (delete). Alarms without those tags
  are never deleted, whatever their name.
- **apply**: ``PutMetricAlarm`` per create/update (idempotent: same request, same alarm);
  ``TagResource`` after an update, because PutMetricAlarm ignores ``Tags`` when the alarm
  already exists (API reference); ``DeleteAlarms`` in chunks of 100 for the prune.

- **orphans**: managed alarms (and dashboards carrying the managed marker for the stack) that are
  no longer defined are always listed in the plan; they are deleted only with ``prune``.
- **dashboard**: with a body, ``PutDashboard`` when CloudWatch's body differs (compared as JSON).

The client comes from the one session builder, ``idemwatch.aws.AwsTarget`` (``--profile``, ``--region``,
``--endpoint-url``, ``--role-arn``; its docstring gives the Region rule).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from alarms import constants as C
from alarms.console_dashboard import MANAGED_MARKER
from alarms.definitions import AlarmDefinition
from alarms.exceptions import DeployError, ValidationFailed
from alarms.validate import validate_requests
from alarms.violation import errors

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
    orphans: list[str] = field(default_factory=list)
    """Managed alarms of the stack no longer defined (listed always; in ``delete`` only with prune)."""
    dashboard: str | None = None
    dashboard_body: str | None = None
    dashboard_action: str = ""  # "create" | "update" | "unchanged" | "" (no dashboard)
    orphan_dashboards: list[str] = field(default_factory=list)
    delete_dashboards: list[str] = field(default_factory=list)

    @property
    def changes(self) -> int:
        dash = 1 if self.dashboard_action in ("create", "update") else 0
        return len(self.create) + len(self.update) + len(self.delete) + dash + len(self.delete_dashboards)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per alarm/dashboard: ``kind`` (alarm | dashboard), ``name``, ``action`` (create | update |
        unchanged | delete | orphan), ``fields`` (changed fields of an update)."""
        out: list[dict[str, Any]] = [{"kind": "alarm", "name": n, "action": "create", "fields": []}
                                     for n in self.create]
        out += [{"kind": "alarm", "name": n, "action": "update", "fields": f} for n, f in self.update.items()]
        out += [{"kind": "alarm", "name": n, "action": "unchanged", "fields": []} for n in self.unchanged]
        out += [{"kind": "alarm", "name": n, "action": "delete" if n in self.delete else "orphan", "fields": []}
                for n in self.orphans]
        if self.dashboard_action:
            out.append({"kind": "dashboard", "name": self.dashboard, "action": self.dashboard_action, "fields": []})
        out += [{"kind": "dashboard", "name": n, "action": "delete" if n in self.delete_dashboards else "orphan",
                 "fields": []} for n in self.orphan_dashboards]
        return out

    def lines(self) -> list[str]:
        """Human summary, one line per alarm that changes (and each orphan), then the counts."""
        out = [f"+ create {n}" for n in self.create]
        out += [f"~ update {n} ({', '.join(f)})" for n, f in self.update.items()]
        out += [f"- delete {n}" for n in self.delete]
        kept = [n for n in self.orphans if n not in self.delete]
        out += [f"! orphan {n} (managed by idemwatch for {self.stack}, no longer defined; --prune deletes it)"
                for n in kept]
        if self.dashboard_action in ("create", "update"):
            out.append(f"{'+' if self.dashboard_action == 'create' else '~'} {self.dashboard_action} dashboard "
                       f"{self.dashboard}")
        out += [f"- delete dashboard {n}" for n in self.delete_dashboards]
        out += [f"! orphan dashboard {n} (--prune deletes it)" for n in self.orphan_dashboards
                if n not in self.delete_dashboards]
        out.append(f"{len(self.create)} to create, {len(self.update)} to update, {len(self.delete)} to delete, "
                   f"{len(self.unchanged)} unchanged, {len(kept)} orphaned")
        return out


def plan(client: Any, definitions: Sequence[AlarmDefinition], stack: str, prune: bool = False,
         dashboard: tuple[str, str] | None = None) -> DeployPlan:
    """Compare ``definitions`` (and ``dashboard`` = (name, body JSON text)) with what CloudWatch has. Raises
    :class:`ValidationFailed` first if any definition is invalid and :class:`DeployError` when an API call fails."""
    requests = {d.name: d.to_request() for d in definitions}
    violations = errors(validate_requests(requests.values()))
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
    p.orphans = [n for n in managed_alarm_names(client, stack) if n not in requests]
    if prune:
        p.delete = list(p.orphans)
    if dashboard is not None:
        p.dashboard, p.dashboard_body = dashboard
        current = _get_dashboard(client, p.dashboard)
        p.dashboard_action = "create" if current is None else (
            "unchanged" if json.loads(current) == json.loads(p.dashboard_body) else "update")
        p.orphan_dashboards = [n for n in managed_dashboards(client, stack) if n != p.dashboard]
        if prune:
            p.delete_dashboards = list(p.orphan_dashboards)
    return p


def managed_dashboards(client: Any, stack: str) -> list[str]:
    """Dashboards whose body carries the managed marker of ``stack`` (PutDashboard takes no tags), sorted."""
    want = f"idemwatch:stack={stack}`"
    out = []
    try:
        for page in client.get_paginator("list_dashboards").paginate():
            for entry in page.get("DashboardEntries", []):
                body = _get_dashboard(client, entry["DashboardName"]) or ""
                if MANAGED_MARKER in body and want in body:
                    out.append(entry["DashboardName"])
    except DeployError:
        raise
    except Exception as exc:
        raise DeployError(f"listing dashboards failed: {exc}") from exc
    return sorted(out)


def _get_dashboard(client: Any, name: str) -> str | None:
    try:
        return client.get_dashboard(DashboardName=name)["DashboardBody"]
    except Exception as exc:
        code = getattr(exc, "response", {}).get("Error", {}).get("Code", "")
        if code in ("ResourceNotFound", "ResourceNotFoundException", "DashboardNotFoundError"):
            return None
        raise DeployError(f"GetDashboard {name} failed: {exc}") from exc


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
        if p.dashboard_action in ("create", "update"):
            res = client.put_dashboard(DashboardName=p.dashboard, DashboardBody=p.dashboard_body)
            bad = res.get("DashboardValidationMessages") or []
            if bad:
                raise DeployError(f"PutDashboard {p.dashboard}: {bad}")
        if p.delete_dashboards:
            client.delete_dashboards(DashboardNames=p.delete_dashboards)
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
