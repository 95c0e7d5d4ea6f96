"""What moto's CloudWatch server (5.2) lacks for the deploy tests: PutCompositeAlarm (answered "not implemented"),
TagResource on a Contributor Insights rule (refused: moto tags only alarms, CloudWatch tags both), and two rules of
CloudWatch's that decide the order a deploy must keep: a composite's rule and suppressor may only name alarms that
exist, and DeleteAlarms takes "no more than one composite alarm" per call and refuses an alarm a composite names.

The test server speaks the protocol: a composite is parsed by moto's own query parser, stored as an alarm with a
rule (moto's model keeps composite alarms that way and DescribeAlarms returns them under ``CompositeAlarms``), with
the suppressor fields DescribeAlarms documents, and tagged like PutMetricAlarm does. A test double kept under
``tests/`` (never shipped); :func:`install` is idempotent.
"""

from __future__ import annotations

from typing import Any


def _named(rule: str) -> list[str]:
    from alarms.alarm_rule import alarm_name_of, parse

    return [alarm_name_of(n) for n in parse(rule).children]


def _put_composite_alarm(self: Any) -> Any:
    from moto.cloudwatch.exceptions import ValidationError
    from moto.core.responses import EmptyResult

    p = self._get_params()
    missing = [n for n in _named(p["AlarmRule"]) + ([p["ActionsSuppressor"]] if p.get("ActionsSuppressor") else [])
               if n not in self.cloudwatch_backend.alarms]
    if missing:
        raise ValidationError(f"Could not find alarm(s) {', '.join(missing)}")
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
        delete_any = CloudWatchBackend.delete_alarms

        def delete_alarms(self: Any, alarm_names: list[str]) -> None:
            from moto.cloudwatch.exceptions import ValidationError

            composites = [n for n in alarm_names if getattr(self.alarms.get(n), "rule", None) is not None]
            if len(composites) > 1:
                raise ValidationError("You can delete no more than one composite alarm at a time")
            for name, alarm in self.alarms.items():
                if alarm.rule is not None and name not in alarm_names:
                    used = set(_named(alarm.rule)) | {getattr(alarm, "actions_suppressor", None)}
                    if used & set(alarm_names):
                        raise ValidationError(f"{name} names an alarm being deleted")
            delete_any(self, alarm_names)

        CloudWatchBackend.delete_alarms = delete_alarms  # type: ignore[method-assign]
