"""Page-once composite alarms: which alarms each composite watches, who notifies, suppressors, and the
PutCompositeAlarm rules the validator holds them to."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from alarms.catalogue import build_catalogue
from alarms.composite import build_composites
from alarms.config import load_config, parse_config
from alarms.exceptions import ConfigError
from alarms.validate import validate_request, validate_requests
from alarms.violation import errors

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
ONCALL = "arn:aws:sns:us-east-1:123456789012:shop-oncall"
TICKETS = "arn:aws:sns:us-east-1:123456789012:shop-tickets"


def _demo(**composites):
    data = yaml.safe_load(DEMO.read_text())
    data["composite_alarms"].update(composites)
    cfg = parse_config(data)
    defs = build_catalogue(cfg)
    return cfg, defs, {c.name: c for c in build_composites(cfg, defs)}


def test_the_demo_composites_counted_by_hand():
    cfg = load_config(DEMO)
    defs = build_catalogue(cfg)
    comps = build_composites(cfg, defs)
    # the suppressor composite, 4 functions x (critical, warning), the service composite per severity
    assert [c.name for c in comps] == [
        "shop-Suppressor",
        *(f"shop-{f}-Composite-Critical" for f in ("orders-consumer", "ledger-stream", "create-case-api",
                                                    "payment-capture")),
        "shop-ServiceComposite-Critical",
        *(f"shop-{f}-Composite-Warning" for f in ("orders-consumer", "ledger-stream", "create-case-api",
                                                   "payment-capture")),
        "shop-ServiceComposite-Warning"]
    by = {c.name: c for c in comps}
    # orders-consumer's critical alarms: PoisonRate, RetryRate-Critical, AmbiguousCommit, IdempotencyStoreError,
    # RecordAgeMax-Critical, its queue's AgeOfOldestMessage-Critical, its DLQ's MessagesVisible, 2 EMF error alarms
    crit = by["shop-orders-consumer-Composite-Critical"]
    assert set(crit.children) == {
        "shop-orders-consumer-PoisonRate", "shop-orders-consumer-RetryRate-Critical",
        "shop-orders-consumer-AmbiguousCommit", "shop-orders-consumer-IdempotencyStoreError",
        "shop-orders-consumer-RecordAgeMax-Critical", "shop-orders-queue-AgeOfOldestMessage-Critical",
        "shop-orders-dlq-MessagesVisible", "shop-orders-consumer-EMFValidationErrors",
        "shop-orders-consumer-EMFParsingErrors"}
    assert crit.paging and crit.alarm_actions == (ONCALL,) and crit.ok_actions == (ONCALL,)
    assert (crit.suppressor, crit.wait_period, crit.extension_period) == ("shop-Suppressor", 120, 300)
    assert by["shop-Suppressor"].children == ("shop-idempotency-ThrottledRequests", "shop-MaintenanceWindow")
    assert not by["shop-Suppressor"].paging and by["shop-Suppressor"].alarm_actions == ()
    service = by["shop-ServiceComposite-Critical"]
    assert service.children == ("shop-orders-consumer-Composite-Critical", "shop-ledger-stream-Composite-Critical",
                                "shop-create-case-api-Composite-Critical", "shop-payment-capture-Composite-Critical",
                                "shop-idempotency-SystemErrors")  # the table belongs to no function
    assert not service.paging and service.alarm_actions == () and service.suppressor is None
    req = crit.to_request()
    assert req["AlarmRule"].startswith('ALARM("shop-orders-consumer-PoisonRate") OR ')
    assert errors(validate_requests([*(d.to_request() for d in defs), *(c.to_request() for c in comps)])) == []


def test_covered_alarms_notify_nobody_and_the_rest_keep_their_topics():
    cfg = load_config(DEMO)
    defs = {d.name: d for d in build_catalogue(cfg)}
    assert defs["shop-orders-consumer-PoisonRate"].alarm_actions == ()  # covered by the critical composite
    assert defs["shop-orders-consumer-PayloadConflict"].alarm_actions == ()  # ... the warning one
    assert defs["shop-idempotency-SystemErrors"].alarm_actions == (ONCALL,)  # no function: pages itself
    assert defs["shop-idempotency-ThrottledRequests"].alarm_actions == (ONCALL,)  # a suppressor: pages itself
    assert defs["shop-MaintenanceWindow"].alarm_actions == ()
    assert defs["shop-MaintenanceWindow"].treat_missing_data.value == "ignore"


def test_page_service_moves_the_topics_to_the_service_composites():
    _, defs, comps = _demo(page="service")
    assert not comps["shop-orders-consumer-Composite-Critical"].paging
    assert comps["shop-orders-consumer-Composite-Critical"].alarm_actions == ()
    page = comps["shop-ServiceComposite-Critical"]
    assert page.paging and page.alarm_actions == (ONCALL,) and page.suppressor == "shop-Suppressor"
    actions = {d.name: d.alarm_actions for d in defs}
    assert actions["shop-idempotency-SystemErrors"] == ()  # covered by the paging service composite now


def test_one_suppressor_is_used_directly_and_an_external_one_is_kept_by_name():
    _, defs, comps = _demo(suppressors=["table_throttled_requests"])
    assert "shop-Suppressor" not in comps and "shop-MaintenanceWindow" not in {d.name for d in defs}
    assert comps["shop-orders-consumer-Composite-Warning"].suppressor == "shop-idempotency-ThrottledRequests"
    arn = "arn:aws:cloudwatch:us-east-1:123456789012:alarm:ops-freeze"
    _, defs, comps = _demo(suppressors=[arn])
    crit = comps["shop-orders-consumer-Composite-Critical"]
    assert crit.suppressor == arn and crit.to_request()["ActionsSuppressor"] == arn
    found = validate_requests([*(d.to_request() for d in defs), *(c.to_request() for c in comps.values())],
                              external=[arn])
    assert errors(found) == [] and {v.rule for v in found} == {"rule.external_alarm"}


def test_suppressor_entries_are_checked():
    data = yaml.safe_load(DEMO.read_text())
    data["composite_alarms"]["suppressors"] = ["poison_rate"]
    with pytest.raises(ConfigError, match=r"composite_alarms.suppressors\[0\]: poison_rate has one alarm per function"):
        parse_config(data)
    data["composite_alarms"]["suppressors"] = ["table_throttled_requests"]
    del data["idempotency_table"]
    with pytest.raises(ConfigError, match="table_throttled_requests builds no alarm here"):
        build_catalogue(parse_config(data))
    for key, value, message in (("severities", [], "non-empty list"), ("page", "team", "not one of: function"),
                                ("wait_period", -1, "integer number of seconds >= 0"),
                                ("extension_period", 1.5, "integer number of seconds"), ("suppressor", "x", "unknown")):
        data = yaml.safe_load(DEMO.read_text())
        data["composite_alarms"][key] = value
        with pytest.raises(ConfigError, match=message):
            parse_config(data)


def test_a_composite_name_that_clashes_with_an_alarm_is_refused():
    data = yaml.safe_load(DEMO.read_text())
    data["custom_alarms"] = [{"name": "orders-consumer-Composite-Critical", "period": 60, "evaluation_periods": 1,
                              "threshold": 1, "metric": {"name": "Duration", "namespace": "AWS/Lambda",
                                                         "statistic": "Maximum"}}]
    with pytest.raises(ConfigError, match="composite alarm name.*shop-orders-consumer-Composite-Critical"):
        build_catalogue(parse_config(data))


# --------------------------------------------------------------------------- PutCompositeAlarm rules
def _composite(**kw):
    req = {"AlarmName": "c", "AlarmRule": 'ALARM("a")', "ActionsEnabled": True}
    req.update(kw)
    return req


@pytest.mark.parametrize(("change", "field", "rule"), [
    ({"AlarmRule": "ALARM(a) OR"}, "AlarmRule", "rule.syntax"),
    ({"AlarmRule": "x" * 10_241}, "AlarmRule", "model.max_length"),
    ({"AlarmRule": " OR ".join(f'ALARM("a{i}")' for i in range(101))}, "AlarmRule", "rule.children"),
    ({"AlarmRule": " OR ".join(["(TRUE)"] * 251)}, "AlarmRule", "rule.elements"),
    ({"AlarmName": "n" * 256}, "AlarmName", "model.max_length"),
    ({"AlarmName": "c", "AlarmRule": 'ALARM("c")'}, "AlarmRule", "rule.self"),
    ({"ActionsSuppressor": "a"}, "ActionsSuppressorWaitPeriod", "suppressor.period_required"),
    ({"ActionsSuppressorWaitPeriod": 60}, "ActionsSuppressorWaitPeriod", "suppressor.without_suppressor"),
    ({"ActionsSuppressor": "a", "ActionsSuppressorWaitPeriod": -1, "ActionsSuppressorExtensionPeriod": 0},
     "ActionsSuppressorWaitPeriod", "suppressor.period_negative"),
    ({"AlarmActions": [f"arn:aws:sns:us-east-1:1:t{i}" for i in range(6)]}, "AlarmActions", "model.max_length"),
    ({"Threshold": 1}, "Threshold", "model.unknown_member"),
])
def test_composite_requests_are_held_to_put_composite_alarm(change, field, rule):
    found = validate_request(_composite(**change))
    assert (field, rule) in {(v.field, v.rule) for v in found}, found


def test_the_set_checks_references_duplicates_and_cycles():
    metric = {"AlarmName": "a", "MetricName": "Errors", "Namespace": "AWS/Lambda", "Statistic": "Sum", "Period": 60,
              "EvaluationPeriods": 1, "Threshold": 0.0, "ComparisonOperator": "GreaterThanThreshold"}
    assert errors(validate_requests([metric, _composite()])) == []
    found = validate_requests([_composite(AlarmRule='ALARM("missing")')])
    assert [(v.alarm, v.field, v.rule) for v in found] == [("c", "AlarmRule", "rule.unknown_alarm")]
    found = validate_requests([metric, _composite(ActionsSuppressor="gone", ActionsSuppressorWaitPeriod=0,
                                                  ActionsSuppressorExtensionPeriod=0)])
    assert [(v.field, v.rule) for v in found] == [("ActionsSuppressor", "rule.unknown_alarm")]
    found = validate_requests([metric, _composite(), {**metric, "AlarmName": "c"}])  # one namespace for both kinds
    assert ("c", "alarm_name.duplicate") in {(v.alarm, v.rule) for v in found}
    loop = validate_requests([metric, _composite(AlarmName="x", AlarmRule='ALARM("y") OR ALARM("a")'),
                              _composite(AlarmName="y", AlarmRule='ALARM("x")')])
    assert {v.rule for v in loop} == {"rule.cycle"}
    many = [_composite(AlarmName=f"p{i}") for i in range(151)]
    assert {(v.alarm, v.rule) for v in validate_requests([metric, *many])} == {("a", "rule.parents")}


_ANY = st.recursive(st.none() | st.booleans() | st.integers(-5, 500) | st.floats(allow_nan=True) | st.text(max_size=12),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                        st.sampled_from(["severities", "page", "suppressors", "wait_period", "extension_period",
                                         "outcomes", "keys", "state", "width", "comparison", "x"]), inner, max_size=4),
                    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_ANY, _ANY, _ANY)
def test_the_new_sections_accept_or_refuse_with_a_config_error(composites, insights, anomaly):
    from alarms.settings import parse_anomaly, parse_composites, parse_insights

    for parse, value in ((parse_composites, composites), (parse_insights, insights),
                         (lambda v: parse_anomaly(v, "overrides.x.anomaly"), anomaly)):
        try:
            parse(value)
        except ConfigError:
            pass


def test_no_description_spells_the_prefixed_name_a_stack_parameter_may_change():
    """A CloudFormation or Terraform export deploys every alarm under its NamePrefix parameter, so a description (one
    string for every deployment) must not name an alarm with the export's own prefix: the maintenance window's
    set-alarm-state command names "<this alarm's name>", and composites list children after the prefix."""
    from alarms.composite import apply_composites

    cfg = load_config(DEMO)
    defs = apply_composites(cfg, build_catalogue(cfg))
    mw = next(d for d in defs if d.name == "shop-MaintenanceWindow")
    assert "--alarm-name <this alarm's name> --state-value ALARM" in mw.description
    for d in [*defs, *build_composites(cfg, defs)]:
        assert "shop-" not in d.description, d.name
