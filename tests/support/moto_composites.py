"""What moto's CloudWatch server (5.2) lacks for the deploy tests: PutCompositeAlarm (answered "not implemented")
and TagResource on a Contributor Insights rule (refused: moto tags only alarms, CloudWatch tags both).

The test server speaks the protocol: a composite is parsed by moto's own query parser, stored as an alarm with a
rule (moto's model keeps composite alarms that way and DescribeAlarms returns them under ``CompositeAlarms``), with
the suppressor fields DescribeAlarms documents, and tagged like PutMetricAlarm does; TagResource accepts the ARN of
an existing rule. A test double kept under ``tests/`` (never shipped); :func:`install` is idempotent.
"""

from __future__ import annotations

from typing import Any


def _put_composite_alarm(self: Any) -> Any:
    from moto.core.responses import EmptyResult

    p = self._get_params()
    alarm = self.cloudwatch_backend.put_metric_alarm(
        name=p["AlarmName"], namespace=None, metric_name=None, metric_data_queries=None, comparison_operator=None,
        evaluation_periods=None, datapoints_to_alarm=None, period=None, threshold=None, statistic=None,
        extended_statistic=None, description=p.get("AlarmDescription"), dimensions=[],
        alarm_actions=p.get("AlarmActions", []), ok_actions=p.get("OKActions", []),
        insufficient_data_actions=p.get("InsufficientDataActions", []), unit=None,
        actions_enabled=p.get("ActionsEnabled"), treat_missing_data=None, evaluate_low_sample_count_percentile=None,
        threshold_metric_id=None, rule=p["AlarmRule"], tags=p.get("Tags", []))
    alarm.alarm_rule = p["AlarmRule"]
    alarm.actions_suppressor = p.get("ActionsSuppressor")
    alarm.actions_suppressor_wait_period = p.get("ActionsSuppressorWaitPeriod")
    alarm.actions_suppressor_extension_period = p.get("ActionsSuppressorExtensionPeriod")
    return EmptyResult()


def install() -> None:
    """Teach moto's CloudWatch PutCompositeAlarm and rule tagging (in this process: ThreadedMotoServer runs here)."""
    from moto.cloudwatch.models import CloudWatchBackend
    from moto.cloudwatch.responses import CloudWatchResponse

    if not hasattr(CloudWatchResponse, "put_composite_alarm"):
        CloudWatchResponse.put_composite_alarm = _put_composite_alarm  # type: ignore[attr-defined]
    if not getattr(CloudWatchBackend.tag_resource, "_tags_rules", False):
        alarms_only = CloudWatchBackend.tag_resource

        def tag_resource(self: Any, arn: str, tags: Any) -> None:
            if any(r.rule_arn == arn for r in self.insight_rules.values()):
                self.tagger.tag_resource(arn, self.tagger.convert_dict_to_tags_input(tags))
            else:
                alarms_only(self, arn, tags)

        tag_resource._tags_rules = True  # type: ignore[attr-defined]
        CloudWatchBackend.tag_resource = tag_resource  # type: ignore[method-assign]
