"""Provision the stack with boto3: metric alarms, composite alarms and Contributor Insights rules; diff, put,
tag, prune.

- **plan**: the resources of the stack that CloudWatch does not have (create), has with different settings
  (update, with the changed fields), has as defined (unchanged); with ``prune``, the ones this project manages for
  the same stack (tags ``idemwatch:managed-by = idemwatch`` and ``idemwatch:stack = <stack>``) that are no longer
  defined (delete). Resources without those tags are never deleted, whatever their name. Alarms are compared with
  ``DescribeAlarms`` (MetricAlarms, CompositeAlarms), rules with ``DescribeInsightRules``.
- **apply**: ``PutMetricAlarm``, then ``PutCompositeAlarm`` (children first: a rule may only name alarms that
  exist), then ``PutInsightRule``, per create/update (idempotent: same request, same resource); ``TagResource``
  after an update, because the Put calls ignore ``Tags`` when the resource already exists (API reference); the
  prune deletes rules, then composites one per ``DeleteAlarms`` call and parents first ("no more than one composite
  alarm" per call; a child cannot go while a composite names it), then metric alarms in chunks of 100.
- **orphans**: managed resources (and dashboards carrying the managed marker for the stack) that are no longer
  defined are always listed in the plan; they are deleted only with ``prune``. DescribeInsightRules gives no ARN, so
  a rule's tags are read at the ARN built from the account of the alarms.
- **dashboard**: with a body, ``PutDashboard`` when CloudWatch's body differs (compared as JSON).

The client comes from the one session builder, ``idemwatch.aws.AwsTarget`` (``--profile``, ``--region``,
``--endpoint-url``, ``--role-arn``; its docstring gives the Region rule).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from alarms import alarm_rule
from alarms import constants as C
from alarms.console_dashboard import MANAGED_MARKER
from alarms.exceptions import DeployError, ValidationFailed
from alarms.kinds import COMPOSITE_ALARM, INSIGHT_RULE, METRIC_ALARM, kind_of
from alarms.validate import validate_requests
from alarms.violation import errors

# Fields compared between the desired request and what CloudWatch describes, per kind.
_COMPARED = {
    METRIC_ALARM: ("AlarmDescription", "ActionsEnabled", "OKActions", "AlarmActions", "InsufficientDataActions",
                   "MetricName", "Namespace", "Statistic", "ExtendedStatistic", "Dimensions", "Period", "Unit",
                   "EvaluationPeriods", "DatapointsToAlarm", "Threshold", "ThresholdMetricId", "ComparisonOperator",
                   "TreatMissingData", "Metrics"),
    COMPOSITE_ALARM: ("AlarmDescription", "ActionsEnabled", "OKActions", "AlarmActions", "InsufficientDataActions",
                      "AlarmRule", "ActionsSuppressor", "ActionsSuppressorWaitPeriod",
                      "ActionsSuppressorExtensionPeriod"),
    INSIGHT_RULE: ("RuleDefinition", "RuleState"),
}
_DEFAULTS: dict[str, Any] = {
    "ActionsEnabled": True, "OKActions": [], "AlarmActions": [], "InsufficientDataActions": [], "Dimensions": [],
    "TreatMissingData": "missing", "Metrics": [],
}
_DESCRIBE_CHUNK = 100  # DescribeAlarms AlarmNames: at most 100 names
_DELETE_CHUNK = 100  # DeleteAlarms: at most 100 names, "no more than one composite alarm"
_ALARM_TYPE = {METRIC_ALARM: "MetricAlarm", COMPOSITE_ALARM: "CompositeAlarm"}
_DESCRIBED = {METRIC_ALARM: "MetricAlarms", COMPOSITE_ALARM: "CompositeAlarms"}


@dataclass
class DeployPlan:
    """What ``apply`` would do. ``update`` maps name -> changed field names; ``kinds`` maps every name of the plan
    to its API kind (``PutMetricAlarm``, ``PutCompositeAlarm``, ``PutInsightRule``)."""

    stack: str
    create: list[str] = field(default_factory=list)
    update: dict[str, list[str]] = field(default_factory=dict)
    unchanged: list[str] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    arns: dict[str, str] = field(default_factory=dict)  # existing resources' ARNs (for re-tagging updates)
    orphans: list[str] = field(default_factory=list)
    """Managed alarms, composites and rules of the stack no longer defined (listed always; in ``delete`` only with
    prune)."""
    kinds: dict[str, str] = field(default_factory=dict)
    orphan_rules: dict[str, str] = field(default_factory=dict)
    """Orphaned composite alarm name -> its rule (to delete parents before children)."""
    notes: list[str] = field(default_factory=list)
    """What the plan could not check, one line each (printed with the plan)."""
    dashboard: str | None = None
    dashboard_body: str | None = None
    dashboard_action: str = ""  # "create" | "update" | "unchanged" | "" (no dashboard)
    orphan_dashboards: list[str] = field(default_factory=list)
    delete_dashboards: list[str] = field(default_factory=list)

    @property
    def changes(self) -> int:
        dash = 1 if self.dashboard_action in ("create", "update") else 0
        return len(self.create) + len(self.update) + len(self.delete) + dash + len(self.delete_dashboards)

    def _kind(self, name: str) -> str:
        return {COMPOSITE_ALARM: "composite", INSIGHT_RULE: "rule"}.get(self.kinds.get(name, METRIC_ALARM), "alarm")

    def rows(self) -> list[dict[str, Any]]:
        """One dict per resource: ``kind`` (alarm | composite | rule | dashboard), ``name``, ``action`` (create |
        update | unchanged | delete | orphan), ``fields`` (changed fields of an update)."""
        out: list[dict[str, Any]] = [{"kind": self._kind(n), "name": n, "action": "create", "fields": []}
                                     for n in self.create]
        out += [{"kind": self._kind(n), "name": n, "action": "update", "fields": f} for n, f in self.update.items()]
        out += [{"kind": self._kind(n), "name": n, "action": "unchanged", "fields": []} for n in self.unchanged]
        out += [{"kind": self._kind(n), "name": n, "action": "delete" if n in self.delete else "orphan",
                 "fields": []} for n in self.orphans]
        if self.dashboard_action:
            out.append({"kind": "dashboard", "name": self.dashboard, "action": self.dashboard_action, "fields": []})
        out += [{"kind": "dashboard", "name": n, "action": "delete" if n in self.delete_dashboards else "orphan",
                 "fields": []} for n in self.orphan_dashboards]
        return out

    def lines(self) -> list[str]:
        """Human summary, one line per resource that changes (and each orphan), then the counts."""
        def what(n: str) -> str:
            kind = self._kind(n)
            return n if kind == "alarm" else f"{kind} {n}"

        out = [f"+ create {what(n)}" for n in self.create]
        out += [f"~ update {what(n)} ({', '.join(f)})" for n, f in self.update.items()]
        out += [f"- delete {what(n)}" for n in self.delete]
        kept = [n for n in self.orphans if n not in self.delete]
        out += [f"! orphan {what(n)} (managed by idemwatch for {self.stack}, no longer defined; --prune deletes it)"
                for n in kept]
        if self.dashboard_action in ("create", "update"):
            out.append(f"{'+' if self.dashboard_action == 'create' else '~'} {self.dashboard_action} dashboard "
                       f"{self.dashboard}")
        out += [f"- delete dashboard {n}" for n in self.delete_dashboards]
        out += [f"! orphan dashboard {n} (--prune deletes it)" for n in self.orphan_dashboards
                if n not in self.delete_dashboards]
        out += [f"note: {n}" for n in self.notes]
        out.append(f"{len(self.create)} to create, {len(self.update)} to update, {len(self.delete)} to delete, "
                   f"{len(self.unchanged)} unchanged, {len(kept)} orphaned")
        return out


def plan(client: Any, definitions: Sequence[Any], stack: str, prune: bool = False,
         dashboard: tuple[str, str] | None = None, external: Sequence[str] = ()) -> DeployPlan:
    """Compare ``definitions`` (metric alarms, then composite alarms children first, then Contributor Insights
    rules: anything with ``name`` and ``to_request()``) and ``dashboard`` (name, body JSON text) with what CloudWatch
    has. ``external``: alarms the composites may name that this stack does not define. Raises
    :class:`ValidationFailed` first if any request is invalid and :class:`DeployError` when an API call fails or an
    alarm and a rule share a name."""
    requests = {d.name: d.to_request() for d in definitions}
    if len(requests) != len(definitions):
        raise DeployError("an alarm and a Contributor Insights rule share a name; deploy keeps one plan per name")
    violations = errors(validate_requests(requests.values(), external=external))
    if violations:
        raise ValidationFailed(violations)
    kinds = {name: kind_of(r) for name, r in requests.items()}
    existing: dict[str, dict[str, Any]] = {}
    for kind in (METRIC_ALARM, COMPOSITE_ALARM):
        existing.update(_describe(client, [n for n, k in kinds.items() if k == kind], kind))
    p = DeployPlan(stack=stack, requests=requests, kinds=kinds)
    try:
        rules = _describe_rules(client)
    except DeployError as exc:
        if INSIGHT_RULE in kinds.values():
            raise
        # a stack without rules must not need cloudwatch:DescribeInsightRules; say what was not checked
        rules = {}
        p.notes.append(f"Contributor Insights rules not checked for orphans ({exc})")
    account = _account_of(existing.values())
    for name, req in requests.items():
        kind = kinds[name]
        have = rules.get(name) if kind == INSIGHT_RULE else existing.get(name)
        if have is None:
            p.create.append(name)
            continue
        changed = diff_fields(req, have, kind)
        arn = have.get("AlarmArn") or (_rule_arn(client, account, name) if account else None)
        if arn:
            p.arns[name] = arn
        if changed:
            p.update[name] = changed
        else:
            p.unchanged.append(name)
    alarms, composite_rules = managed_alarms(client, stack)
    account = account or _account_of({"AlarmArn": a} for a in alarms.values())
    p.orphans = [n for n in alarms if n not in requests]
    p.orphan_rules = {n: r for n, r in composite_rules.items() if n not in requests}
    for n in p.orphans:
        p.kinds[n] = COMPOSITE_ALARM if n in composite_rules else METRIC_ALARM
    if account:
        for name in managed_rules(client, stack, rules, account):
            if name not in requests:
                p.orphans.append(name)
                p.kinds[name] = INSIGHT_RULE
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


_PUT = {METRIC_ALARM: "put_metric_alarm", COMPOSITE_ALARM: "put_composite_alarm", INSIGHT_RULE: "put_insight_rule"}


def apply(client: Any, p: DeployPlan) -> None:
    """Carry out ``p``: put created/updated resources (metric alarms, then composites in the order given, then
    rules), re-tag updated ones (the Put calls ignore Tags on an existing resource: API reference), delete pruned
    rules, then pruned composites one per call, parents first (DeleteAlarms takes "no more than one composite
    alarm"), then pruned metric alarms in chunks of 100."""
    try:
        changed = p.create + list(p.update)
        for kind in (METRIC_ALARM, COMPOSITE_ALARM, INSIGHT_RULE):
            for name in changed:
                if p.kinds[name] == kind:
                    getattr(client, _PUT[kind])(**p.requests[name])
        for name in p.update:
            tags = p.requests[name].get("Tags") or []
            if tags and name in p.arns:
                client.tag_resource(ResourceARN=p.arns[name], Tags=tags)
        gone_rules = [n for n in p.delete if p.kinds.get(n) == INSIGHT_RULE]
        if gone_rules:
            client.delete_insight_rules(RuleNames=gone_rules)
        for name in _parents_first([n for n in p.delete if p.kinds.get(n) == COMPOSITE_ALARM], p.orphan_rules):
            client.delete_alarms(AlarmNames=[name])
        metric = [n for n in p.delete if p.kinds.get(n, METRIC_ALARM) == METRIC_ALARM]
        for i in range(0, len(metric), _DELETE_CHUNK):
            client.delete_alarms(AlarmNames=metric[i: i + _DELETE_CHUNK])
        if p.dashboard_action in ("create", "update"):
            res = client.put_dashboard(DashboardName=p.dashboard, DashboardBody=p.dashboard_body)
            bad = res.get("DashboardValidationMessages") or []
            if bad:
                raise DeployError(f"PutDashboard {p.dashboard}: {bad}")
        if p.delete_dashboards:
            client.delete_dashboards(DashboardNames=p.delete_dashboards)
    except DeployError:
        raise
    except Exception as exc:  # botocore ClientError / EndpointConnectionError / NoCredentialsError
        raise DeployError(f"CloudWatch call failed: {exc}") from exc


def _parents_first(names: Sequence[str], rules: Mapping[str, str]) -> list[str]:
    """``names`` (composite alarms) ordered so that a composite comes before every composite its rule names."""
    left = list(names)
    out: list[str] = []
    while left:
        named = set()
        for n in left:
            try:
                named |= set(alarm_rule.parse(rules.get(n, "FALSE")).children)
            except alarm_rule.RuleSyntaxError:
                pass
        free = [n for n in left if n not in named] or left[:1]  # a cycle: CloudWatch needs a rule change first
        out += free
        left = [n for n in left if n not in free]
    return out


def managed_alarms(client: Any, stack: str) -> tuple[dict[str, str], dict[str, str]]:
    """(alarm name -> ARN, composite name -> its rule) of the metric and composite alarms tagged as managed by this
    project for ``stack``, sorted by name."""
    found: dict[str, str] = {}
    rules: dict[str, str] = {}
    try:
        for page in client.get_paginator("describe_alarms").paginate(AlarmTypes=["MetricAlarm", "CompositeAlarm"]):
            for key in ("MetricAlarms", "CompositeAlarms"):
                for alarm in page.get(key, []):
                    if _managed(client, alarm["AlarmArn"], stack):
                        found[alarm["AlarmName"]] = alarm["AlarmArn"]
                        if key == "CompositeAlarms":
                            rules[alarm["AlarmName"]] = alarm.get("AlarmRule", "")
    except Exception as exc:
        raise DeployError(f"listing alarms failed: {exc}") from exc
    return dict(sorted(found.items())), rules


def managed_alarm_names(client: Any, stack: str) -> list[str]:
    """Names of the metric and composite alarms tagged as managed by this project for ``stack``, sorted."""
    return list(managed_alarms(client, stack)[0])


def managed_rules(client: Any, stack: str, rules: Mapping[str, Any], account: tuple[str, str, str]) -> list[str]:
    """Names of the Contributor Insights rules (of ``rules``, from DescribeInsightRules) tagged as managed by this
    project for ``stack``, sorted. DescribeInsightRules returns no ARN: it is built from the partition, Region and
    account of the alarms (``account``)."""
    try:
        return sorted(n for n in rules if _managed(client, _rule_arn(client, account, n), stack))
    except Exception as exc:
        raise DeployError(f"listing Contributor Insights rules failed: {exc}") from exc


def _managed(client: Any, arn: str, stack: str) -> bool:
    kv = {t["Key"]: t["Value"] for t in client.list_tags_for_resource(ResourceARN=arn).get("Tags", [])}
    return kv.get(C.TAG_MANAGED_BY) == C.TAG_MANAGED_BY_VALUE and kv.get(C.TAG_STACK) == stack


def _account_of(described: Iterable[Mapping[str, Any]]) -> tuple[str, str, str] | None:
    """(partition, Region, account) from the first alarm ARN among ``described``."""
    for a in described:
        parts = str(a.get("AlarmArn", "")).split(":")
        if len(parts) > 5 and parts[0] == "arn":
            return parts[1], parts[3], parts[4]
    return None


def _rule_arn(client: Any, account: tuple[str, str, str] | None, name: str) -> str:
    partition, region, acct = account or ("aws", client.meta.region_name, "")
    return f"arn:{partition}:cloudwatch:{region}:{acct}:insight-rule/{name}"


def diff_fields(desired: Mapping[str, Any], existing: Mapping[str, Any], kind: str = METRIC_ALARM) -> list[str]:
    """Field names whose desired value differs from what CloudWatch describes (defaults applied): a DescribeAlarms
    entry for alarms, a DescribeInsightRules entry for rules (``Definition``/``State`` there)."""
    if kind == INSIGHT_RULE:
        existing = {"RuleDefinition": existing.get("Definition"), "RuleState": existing.get("State")}
    changed = []
    for f in _COMPARED[kind]:
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
    if field_name == "RuleDefinition":
        try:
            return json.loads(value)
        except (TypeError, ValueError):
            return value
    if field_name == "ActionsSuppressor":
        return alarm_rule.alarm_name_of(str(value))
    return value


def _norm_query(q: Mapping[str, Any]) -> tuple:
    stat = q.get("MetricStat")
    stat_key = None
    if stat:
        m = stat.get("Metric", {})
        stat_key = (m.get("Namespace"), m.get("MetricName"), tuple(_norm("Dimensions", m.get("Dimensions") or [])),
                    stat.get("Period"), stat.get("Stat"), stat.get("Unit"))
    return (q.get("Id"), stat_key, q.get("Expression"), q.get("Label"), q.get("ReturnData", True) is not False)


def _describe(client: Any, names: Iterable[str], kind: str = METRIC_ALARM) -> dict[str, dict[str, Any]]:
    names = list(names)
    found: dict[str, dict[str, Any]] = {}
    try:
        for i in range(0, len(names), _DESCRIBE_CHUNK):
            chunk = names[i: i + _DESCRIBE_CHUNK]
            for page in client.get_paginator("describe_alarms").paginate(AlarmNames=chunk,
                                                                         AlarmTypes=[_ALARM_TYPE[kind]]):
                for alarm in page.get(_DESCRIBED[kind], []):
                    found[alarm["AlarmName"]] = alarm
    except Exception as exc:
        raise DeployError(f"DescribeAlarms failed: {exc}") from exc
    return found


def _describe_rules(client: Any) -> dict[str, dict[str, Any]]:
    """Every Contributor Insights rule of the account and Region (DescribeInsightRules, followed page by page)."""
    found: dict[str, dict[str, Any]] = {}
    token: str | None = None
    try:
        while True:
            page = client.describe_insight_rules(**({"NextToken": token} if token else {}))
            for rule in page.get("InsightRules", []):
                found[rule["Name"]] = rule
            token = page.get("NextToken")
            if not token:
                return found
    except Exception as exc:
        raise DeployError(f"DescribeInsightRules failed: {exc}") from exc
