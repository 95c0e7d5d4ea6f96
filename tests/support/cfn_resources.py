"""Resolved CloudFormation resources keyed by the name CloudWatch knows them by, for comparing two templates
(the CDK construct's and the export's) resource for resource whatever their logical ids."""

from __future__ import annotations

from typing import Any


def resources_by_name(resources: dict[str, Any]) -> dict[str, Any]:
    """``resources`` (logical id -> resolved resource) by AlarmName (metric and composite alarms), RuleName
    (Contributor Insights rules) or DashboardName; a name met twice fails the calling test."""
    out: dict[str, Any] = {}
    for res in resources.values():
        props = res["Properties"]
        name = props.get("AlarmName") or props.get("RuleName") or props["DashboardName"]
        assert name not in out, name
        out[name] = res
    return out
