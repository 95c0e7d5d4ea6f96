"""The three CloudWatch resources the exports write, each as the request of the API call that creates it.

A metric alarm is a ``PutMetricAlarm`` request, a composite alarm a ``PutCompositeAlarm`` request, a Contributor
Insights rule a ``PutInsightRule`` request. That request is the one representation every output renders: the CLI
file *is* the request, the CloudFormation properties and the Terraform arguments are mapped from it
(:mod:`alarms.cfn_template`, :mod:`alarms.terraform`), and the validator, ``deploy`` and the CDK construct read
it back. This module tells them apart and names what each becomes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

METRIC_ALARM = "PutMetricAlarm"
COMPOSITE_ALARM = "PutCompositeAlarm"
INSIGHT_RULE = "PutInsightRule"


@dataclass(frozen=True)
class Kind:
    """What one API kind becomes in each output."""

    operation: str
    """The CloudWatch API operation (botocore's operation name)."""
    name_member: str
    """The request member holding the resource's name."""
    cfn_type: str
    tf_type: str
    cli_folder: str
    """Folder of the CLI files below ``cli/`` ("" = ``cli/`` itself)."""
    cli_command: str
    """``aws cloudwatch <cli_command> --cli-input-json file://...``."""
    logical_suffix: str
    """Suffix of the CloudFormation logical id (:func:`alarms.naming.logical_id`)."""


KINDS: dict[str, Kind] = {
    METRIC_ALARM: Kind(METRIC_ALARM, "AlarmName", "AWS::CloudWatch::Alarm", "aws_cloudwatch_metric_alarm", "",
                       "put-metric-alarm", "Alarm"),
    COMPOSITE_ALARM: Kind(COMPOSITE_ALARM, "AlarmName", "AWS::CloudWatch::CompositeAlarm",
                          "aws_cloudwatch_composite_alarm", "composite-alarms", "put-composite-alarm", "Alarm"),
    INSIGHT_RULE: Kind(INSIGHT_RULE, "RuleName", "AWS::CloudWatch::InsightRule",
                       "aws_cloudwatch_contributor_insight_rule", "insight-rules", "put-insight-rule", "InsightRule"),
}
"""Operation -> :class:`Kind`, in deploy order (metric alarms exist before the composites that name them)."""


def kind_of(request: Mapping[str, Any]) -> str:
    """The operation ``request`` is for: ``PutInsightRule`` when it has ``RuleName`` or ``RuleDefinition``,
    ``PutCompositeAlarm`` when it has ``AlarmRule``, else ``PutMetricAlarm``."""
    if "RuleName" in request or "RuleDefinition" in request:
        return INSIGHT_RULE
    if "AlarmRule" in request:
        return COMPOSITE_ALARM
    return METRIC_ALARM


def name_of(request: Mapping[str, Any]) -> str:
    """The resource name of ``request`` ("<unnamed>" when it has none or it is not a string)."""
    name = request.get(KINDS[kind_of(request)].name_member)
    return name if isinstance(name, str) and name else "<unnamed>"
