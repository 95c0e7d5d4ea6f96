"""Stack config for platform teams: the emitter's namespace/service rule, declared default dimensions (checked
against the EMF the real emitter writes), tiers, custom alarms, idempotency-table alarms."""

from __future__ import annotations

from pathlib import Path

import pytest

from alarms.catalogue import build_catalogue
from alarms.config import load_config, parse_config
from alarms.exceptions import ConfigError
from alarms.validate import published_dimension_sets, validate_requests
from alarms.violation import errors

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
FN = {"name": "orders-consumer", "operation": "ProcessOrders", "event_source": "sqs", "queue": "orders-queue"}
ENV_NAMES = ("IDEMWATCH_NAMESPACE", "IDEMWATCH_SERVICE", "POWERTOOLS_METRICS_NAMESPACE", "POWERTOOLS_SERVICE_NAME")


@pytest.fixture()
def clean_env(monkeypatch):
    for n in ENV_NAMES:
        monkeypatch.delenv(n, raising=False)
    return monkeypatch


def _emf_documents(lines: list[str]) -> list[dict]:
    import json

    return [d for d in map(json.loads, lines) if "_aws" in d]


def test_namespace_and_service_follow_the_emitters_rule(clean_env):
    cfg = parse_config({"functions": [FN]})
    assert (cfg.namespace, cfg.service) == ("Idempotency", "service_undefined")  # Powertools' own defaults
    clean_env.setenv("POWERTOOLS_METRICS_NAMESPACE", "ShopMetrics")
    clean_env.setenv("POWERTOOLS_SERVICE_NAME", "shop")
    cfg = parse_config({"functions": [FN]})
    assert (cfg.namespace, cfg.service, cfg.stack) == ("ShopMetrics", "shop", "shop")
    clean_env.setenv("IDEMWATCH_NAMESPACE", "Idem")  # idemwatch's own variable wins over Powertools'
    assert parse_config({"functions": [FN]}).namespace == "Idem"
    assert parse_config({"namespace": "Explicit", "functions": [FN]}).namespace == "Explicit"  # the file wins


def test_alarms_for_a_powertools_configured_stack_point_where_the_emitter_writes(clean_env):
    """Run the real emitter configured the Powertools way (environment + default dimensions), capture its EMF and
    compare every directive with the exported alarms' Namespace / Dimensions for that operation."""
    from emitter import Emitter, MemorySink

    clean_env.setenv("POWERTOOLS_METRICS_NAMESPACE", "ShopMetrics")
    clean_env.setenv("POWERTOOLS_SERVICE_NAME", "shop-orders")
    sink = MemorySink()
    em = Emitter(sink=sink, dimensions={"Environment": "prod"})
    event = {"Records": [{"messageId": "m1", "body": "{}", "eventSource": "aws:sqs",
                          "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "1767607200000"}}]}

    @em.handler(operation="ProcessOrders")
    def handler(evt, ctx):
        for rec in em.records(evt):
            em.payload_conflict(rec, key="k1")

    handler(event, None)
    docs = _emf_documents(sink.lines)
    assert docs, sink.lines
    written: set[tuple[str, tuple[tuple[str, str], ...], str]] = set()  # (namespace, dims, metric)
    for doc in docs:
        for directive in doc["_aws"]["CloudWatchMetrics"]:
            for dim_set in directive["Dimensions"]:
                dims = tuple(sorted((n, doc[n]) for n in dim_set))
                for m in directive["Metrics"]:
                    written.add((directive["Namespace"], dims, m["Name"]))
    cfg = parse_config({"dimensions": {"Environment": "prod"}, "functions": [FN]})
    defs = {d.name: d for d in build_catalogue(cfg)}
    alarm = defs["shop-orders-orders-consumer-PayloadConflict"].to_request()
    key = (alarm["Namespace"], tuple(sorted((d["Name"], d["Value"]) for d in alarm["Dimensions"])),
           alarm["MetricName"])
    assert key == ("ShopMetrics", (("Environment", "prod"), ("Operation", "ProcessOrders"), ("Service", "shop-orders")),
                   "PayloadConflict")
    assert key in written, sorted(written)
    # metric-math alarms too: every MetricStat of PoisonRate is a (namespace, dims, metric) the emitter writes
    rate = defs["shop-orders-orders-consumer-PoisonRate"].to_request()
    for q in rate["Metrics"]:
        if "MetricStat" in q:
            m = q["MetricStat"]["Metric"]
            dims = tuple(sorted((d["Name"], d["Value"]) for d in m["Dimensions"]))
            assert (m["Namespace"], dims) in {(ns, ds) for ns, ds, _ in written}
    assert validate_requests([alarm, rate], published_dimension_sets(cfg)) == []


def test_validate_warns_when_the_emitter_never_publishes_the_alarms_dimension_set(clean_env):
    # the alarms were built without the default dimension the functions publish: [Service, Operation] alone is
    # never written once Environment is a default dimension, so the alarm would get no data
    plain = parse_config({"service": "shop", "functions": [FN]})
    requests = [d.to_request() for d in build_catalogue(plain) if d.signal == "payload_conflict"]
    with_dims = parse_config({"service": "shop", "dimensions": {"Environment": "prod"}, "functions": [FN]})
    found = validate_requests(requests, published_dimension_sets(with_dims))
    assert [(v.rule, v.level) for v in found] == [("semantic.dimension_unpublished", "warning")]
    assert "[Environment, Operation, Service]" in found[0].message and errors(found) == []
    # without the stack config, a set with an extra dimension is a warning, a set missing Service an error
    extra = [d.to_request() for d in build_catalogue(with_dims) if d.signal == "payload_conflict"]
    assert [v.rule for v in validate_requests(extra)] == ["semantic.dimension_unpublished"]
    broken = dict(extra[0], Dimensions=[{"Name": "Operation", "Value": "ProcessOrders"}])
    assert [(v.rule, v.level) for v in validate_requests([broken])] == [("semantic.dimension_name", "error")]


def test_function_dimensions_win_over_the_stack_and_contract_names_are_refused(clean_env):
    cfg = parse_config({"service": "s", "dimensions": {"Environment": "prod", "Team": "a"},
                        "functions": [dict(FN, dimensions={"Team": "b"})]})
    assert dict(cfg.functions[0].dimensions) == {"Environment": "prod", "Team": "b"}
    for bad, where in (({"Service": "x"}, "dimensions.Service"), ({"": "x"}, "dimensions."), ({"A": ""}, "dimensions.A")):
        with pytest.raises(ConfigError) as err:
            parse_config({"service": "s", "dimensions": bad, "functions": [FN]})
        assert err.value.path == where


def test_tiers_have_their_own_threshold_datapoints_and_topics(clean_env):
    pager, tickets, special = (f"arn:aws:sns:us-east-1:1:{n}" for n in ("pager", "tickets", "special"))
    cfg = parse_config({
        "service": "s", "actions": {"critical": [pager], "warning": [tickets]},
        "overrides": {"retry_rate": {"threshold": 4, "tiers": {"critical": {"threshold": 30, "datapoints_to_alarm": 1,
                                                                            "actions": [special]}}},
                      "payload_conflict": {"tiers": {"critical": {"threshold": 10}}},
                      "record_age_max": {"tiers": {"critical": {"enabled": False}}}},
        "functions": [FN],
    })
    defs = {d.name: d for d in build_catalogue(cfg)}
    base, crit = defs["s-orders-consumer-RetryRate"], defs["s-orders-consumer-RetryRate-Critical"]
    assert (base.threshold, base.datapoints_to_alarm, base.alarm_actions, base.tier) == (4, 3, (tickets,), "")
    assert (crit.threshold, crit.evaluation_periods, crit.datapoints_to_alarm, crit.alarm_actions, crit.tier) == \
        (30, 3, 1, (special,), "critical")
    # a tier the signal has no default for is added with the base tier's M-out-of-N
    pc = defs["s-orders-consumer-PayloadConflict-Critical"]
    assert (pc.threshold, pc.evaluation_periods, pc.datapoints_to_alarm, pc.alarm_actions) == (10, 1, 1, (pager,))
    assert "s-orders-consumer-RecordAgeMax-Critical" not in defs and "s-orders-consumer-RecordAgeMax" in defs
    assert dict(crit.tags)["idemwatch:severity"] == "critical"
    # a tier repeating the base severity is refused when the config is read, naming the tier's key path
    with pytest.raises(ConfigError, match=r"^overrides\.retry_rate\.tiers\.warning: a warning tier repeats the base"):
        parse_config({"service": "s", "functions": [FN],
                      "overrides": {"retry_rate": {"tiers": {"warning": {"threshold": 1}}}}})


CUSTOM = {
    "name": "orders-consumer-DurationP99", "title": "Orders consumer slow", "severity": "critical",
    "description": "p99 duration above 5 s", "log_group": "/aws/lambda/orders-consumer",
    "metric": {"namespace": "AWS/Lambda", "name": "Duration", "dimensions": {"FunctionName": "orders-consumer"},
               "statistic": "p99"},
    "period": 60, "evaluation_periods": 5, "datapoints_to_alarm": 3, "threshold": 5000, "unit": "Milliseconds",
    "treat_missing_data": "notBreaching", "treat_missing_reason": "no invocations, no duration",
}
CUSTOM_MATH = {
    "name": "orders-error-rate", "expression": "100 * FILL(errors, 0) / invocations",
    "metrics": {"errors": {"namespace": "AWS/Lambda", "name": "Errors", "dimensions": {"FunctionName": "f"},
                           "statistic": "Sum"},
                "invocations": {"namespace": "AWS/Lambda", "name": "Invocations", "dimensions": {"FunctionName": "f"},
                                "statistic": "Sum"}},
    "period": 300, "evaluation_periods": 3, "threshold": 2, "unit": "Percent",
}


def test_custom_alarms_are_requests_validated_like_the_catalogue(clean_env):
    cfg = parse_config({"service": "s", "actions": {"critical": ["arn:aws:sns:us-east-1:1:pager"]},
                        "custom_alarms": [CUSTOM, CUSTOM_MATH], "functions": [FN]})
    defs = {d.name: d for d in build_catalogue(cfg)}
    req = defs["s-orders-consumer-DurationP99"].to_request()
    assert req["ExtendedStatistic"] == "p99" and "Statistic" not in req
    assert (req["Namespace"], req["MetricName"], req["Threshold"], req["DatapointsToAlarm"]) == \
        ("AWS/Lambda", "Duration", 5000.0, 3)
    assert req["AlarmActions"] == ["arn:aws:sns:us-east-1:1:pager"]
    assert "logs https://console.aws.amazon.com/cloudwatch/home#logsV2:log-groups/log-group/" in req["AlarmDescription"]
    math = defs["s-orders-error-rate"].to_request()
    assert [q["Id"] for q in math["Metrics"]] == ["errors", "invocations", "result"]
    assert math["DatapointsToAlarm"] == 3 and math["TreatMissingData"] == "missing"
    assert errors(validate_requests([req, math])) == []
    # a custom alarm that breaks an API rule is caught by the same validator
    bad = parse_config({"service": "s", "functions": [FN],
                        "custom_alarms": [dict(CUSTOM, period=45, datapoints_to_alarm=9)]})
    rules = {v.rule for v in validate_requests([d.to_request() for d in build_catalogue(bad)])}
    assert {"period.valid_value", "datapoints_to_alarm.le_evaluation_periods"} <= rules


@pytest.mark.parametrize(("patch", "where", "message"), [
    ({"statistic": "Avg"}, "custom_alarms[0].metric.statistic", "is not one of"),
    ({"metric": None}, "custom_alarms[0]", "give either metric"),
    ({"threshold": "high"}, "custom_alarms[0].threshold", "must be a number"),
    ({"treat_missing_reason": None}, "custom_alarms[0]", "needs treat_missing_reason"),
    ({"colour": 1}, "custom_alarms[0].colour", "unknown key"),
    ({"period": 0}, "custom_alarms[0].period", ">= 1"),
])
def test_custom_alarm_mistakes_name_the_key(clean_env, patch, where, message):
    c = dict(CUSTOM)
    if "statistic" in patch:
        c["metric"] = dict(c["metric"], **patch)
    else:
        c.update(patch)
        c = {k: v for k, v in c.items() if v is not None}
    with pytest.raises(ConfigError) as err:
        parse_config({"service": "s", "custom_alarms": [c], "functions": [FN]})
    assert err.value.path == where and message in str(err.value)


def test_custom_alarm_name_clashing_with_the_catalogue_is_an_error(clean_env):
    with pytest.raises(ConfigError, match="defined twice"):
        build_catalogue(parse_config({"service": "s", "functions": [FN],
                                      "custom_alarms": [dict(CUSTOM, name="orders-consumer-PayloadConflict")]}))


def test_idempotency_table_alarms_sum_the_persistence_layers_operations(clean_env):
    defs = {d.signal: d for d in build_catalogue(load_config(DEMO)) if d.signal.startswith("table_")}
    req = defs["table_throttled_requests"].to_request()
    stats = [q for q in req["Metrics"] if "MetricStat" in q]
    assert [q["MetricStat"]["Metric"]["Dimensions"] for q in stats] == [
        [{"Name": "TableName", "Value": "idempotency"}, {"Name": "Operation", "Value": op}]
        for op in ("PutItem", "GetItem", "UpdateItem", "DeleteItem")]
    assert {q["MetricStat"]["Metric"]["Namespace"] for q in stats} == {"AWS/DynamoDB"}
    assert req["Metrics"][-1]["Expression"] == "FILL(put, 0) + FILL(get, 0) + FILL(update, 0) + FILL(delete, 0)"
    assert defs["table_system_errors"].severity.value == "critical"
    assert set(defs) == {"table_throttled_requests", "table_system_errors"}  # no ConditionalCheckFailed alarm
    assert not [d for d in build_catalogue(parse_config({"service": "s", "functions": [FN]}))
                if d.signal.startswith("table_")]  # no table named, no table alarms
