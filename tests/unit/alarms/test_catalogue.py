"""The catalogue built from the demo stack config: which alarms, on which metrics, with which settings."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from alarms.catalogue import build_catalogue
from alarms.config import load_config, parse_config
from alarms.signals import SIGNALS
from alarms.types import ComparisonOperator, Severity, TreatMissingData
from emitter.contract import DIMENSION_SETS, Metric

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
ONCALL = "arn:aws:sns:us-east-1:123456789012:shop-oncall"
TICKETS = "arn:aws:sns:us-east-1:123456789012:shop-tickets"


def _demo():
    return {d.name: d for d in build_catalogue(load_config(DEMO))}


def _demo_without_composites():
    """The demo stack as if it had no composite_alarms section: every alarm keeps its severity's topics."""
    import yaml

    data = yaml.safe_load(DEMO.read_text())
    del data["composite_alarms"]
    return {d.name: d for d in build_catalogue(parse_config(data))}


def test_alarm_count_per_signal_computed_by_hand():
    # 4 functions: orders-consumer (sqs, queue + dlq), ledger-stream (kinesis), create-case-api (API),
    # payment-capture (eventbridge, dlq); ledger-stream also has an on-failure SQS destination (dlq).
    # RecordAge: the 3 non-API sources. IteratorAge: the stream only. OffsetLag: none (no Kafka source).
    # The idempotency table (one): ThrottledRequests and SystemErrors. Critical tiers: RetryRate (4 functions),
    # RecordAgeMax (3), AgeOfOldestMessage (1 queue). The two anomaly signals the demo enables: DuplicateCompleted
    # on every function, Redelivery on the 3 functions with a queue/stream/bus source; the maintenance window (1),
    # which the composites' suppressors ask for.
    defs = _demo().values()
    counts = Counter(d.signal for d in defs if not d.tier)
    expected = {sid: 4 for sid in SIGNALS}
    expected.update(record_age_max=3, lambda_iterator_age=1, sqs_age_of_oldest_message=1, dlq_messages_visible=3,
                    table_throttled_requests=1, table_system_errors=1, redelivery_surge=3, maintenance_window=1)
    del expected["lambda_offset_lag"]
    assert counts == expected
    assert sum(expected.values()) == 66
    tiers = Counter((d.signal, d.tier) for d in defs if d.tier)
    assert tiers == {("retry_rate", "critical"): 4, ("record_age_max", "critical"): 3,
                     ("sqs_age_of_oldest_message", "critical"): 1}


def test_project_metrics_use_contract_names_and_service_operation_dimensions():
    defs = _demo()
    d = defs["shop-orders-consumer-PayloadConflict"]
    assert d.metric.namespace == "Idempotency"
    assert d.metric.metric_name == Metric.PAYLOAD_CONFLICT.value == "PayloadConflict"
    assert [n for n, _ in d.metric.dimensions] == list(DIMENSION_SETS[0]) == ["Service", "Operation"]
    assert d.metric.dimension_map == {"Service": "shop", "Operation": "ProcessOrders"}
    assert (d.statistic, d.period, d.evaluation_periods, d.datapoints_to_alarm, d.threshold) == ("Sum", 60, 1, 1, 0)
    assert d.comparison is ComparisonOperator.GREATER_THAN
    assert d.treat_missing_data is TreatMissingData.NOT_BREACHING


def test_poison_rate_is_metric_math_with_fill():
    d = _demo()["shop-ledger-stream-PoisonRate"]
    req = d.to_request()
    assert "MetricName" not in req and "Statistic" not in req and "Period" not in req
    ids = [q["Id"] for q in req["Metrics"]]
    assert ids == ["poison", "received", "poison_rate"]
    assert [q["ReturnData"] for q in req["Metrics"]] == [False, False, True]
    assert req["Metrics"][2]["Expression"] == "100 * FILL(poison, 0) / received"
    stat = req["Metrics"][0]["MetricStat"]
    assert stat["Metric"]["MetricName"] == "PoisonMessage" and stat["Stat"] == "Sum" and stat["Period"] == 300
    assert {x["Name"]: x["Value"] for x in stat["Metric"]["Dimensions"]} == {"Service": "shop",
                                                                            "Operation": "ApplyLedgerEntries"}
    assert req["Metrics"][1]["MetricStat"]["Metric"]["MetricName"] == "EventsReceived"


def test_aws_metrics_use_the_right_statistic_and_dimension():
    defs = _demo()
    dlq = defs["shop-orders-dlq-MessagesVisible"]
    assert (dlq.metric.namespace, dlq.metric.metric_name, dlq.statistic) == (
        "AWS/SQS", "ApproximateNumberOfMessagesVisible", "Maximum")  # a gauge: never Sum
    assert dlq.metric.dimension_map == {"QueueName": "orders-dlq"}
    assert defs["shop-payment-capture-dlq-MessagesVisible"].metric.dimension_map == {"QueueName": "payment-capture-dlq"}
    it = defs["shop-ledger-stream-IteratorAge"]
    assert (it.metric.namespace, it.metric.metric_name, it.statistic) == ("AWS/Lambda", "IteratorAge", "Maximum")
    assert it.metric.dimension_map == {"FunctionName": "ledger-stream"}
    age = defs["shop-orders-queue-AgeOfOldestMessage"]
    assert (age.metric.metric_name, age.statistic, age.metric.dimension_map) == (
        "ApproximateAgeOfOldestMessage", "Maximum", {"QueueName": "orders-queue"})
    for kind in ("EMFValidationErrors", "EMFParsingErrors"):
        emf = defs[f"shop-create-case-api-{kind}"]
        assert emf.metric.namespace == "AWS/Logs" and emf.metric.metric_name == kind
        assert emf.metric.dimension_map == {"LogGroupName": "/aws/lambda/create-case-api"}
        assert (emf.statistic, emf.threshold, emf.comparison.value) == ("Sum", 0, "GreaterThanThreshold")
    for fn in ("orders-consumer", "payment-capture"):
        assert defs[f"shop-{fn}-Errors"].metric.dimension_map == {"FunctionName": fn}
        assert defs[f"shop-{fn}-Throttles"].metric.metric_name == "Throttles"


def test_overrides_severity_actions_and_tags():
    defs = _demo_without_composites()
    assert defs["shop-orders-consumer-RecordAgeMax"].threshold == 120000  # global override
    pay = defs["shop-payment-capture-TimeoutBudgetAbort"]  # per-function override: warning -> critical
    assert pay.severity is Severity.CRITICAL and pay.alarm_actions == (ONCALL,) and pay.ok_actions == (ONCALL,)
    other = defs["shop-orders-consumer-TimeoutBudgetAbort"]
    assert other.severity is Severity.WARNING and other.alarm_actions == (TICKETS,)
    tags = dict(other.tags)
    assert tags == {"idemwatch:managed-by": "idemwatch", "idemwatch:stack": "shop",
                    "idemwatch:signal": "timeout_budget_abort", "idemwatch:severity": "warning",
                    "team": "shop-platform"}


def test_every_description_has_meaning_and_console_links_within_1024_characters():
    from alarms.links import decode_insights_url

    # the links open the deployment's Region: sized for the longest Region code (15 characters), twice per link
    grow = 2 * (len("us-isof-south-1") - len("us-east-1"))
    queries = 0
    for d in _demo().values():
        assert d.description.startswith(f"[{d.severity.value}] ")
        assert d.treat_missing_reason and "{" not in d.description.split(" Links: ")[0]
        regional = d.description.count("https://us-east-1.console.aws.amazon.com/")
        assert len(d.description) + regional * grow <= 1024  # AlarmDescription max length, in every Region
        links = dict(d.links)
        assert f"runbook {links['runbook']}" in d.description
        assert links["runbook"] == f"docs/platform.md#runbook-{d.signal.replace('_', '-')}"
        if d.signal.startswith("table_") or d.signal == "maintenance_window":
            assert d.log_group is None and "logs" not in links  # a table serves several functions
            continue
        assert "First check: " in d.description  # kept before the Logs Insights link
        assert f"logs {links['logs']}" in d.description
        if f"query {links['query']}" in d.description:
            queries += 1
        else:  # left out to fit: "Likely causes" and "Missing data" went first
            assert "Likely causes: " not in d.description and "Missing data: " not in d.description
        assert decode_insights_url(links["query"])["source"] == [d.log_group]
    assert queries >= 40
    d = _demo()["shop-orders-consumer-PayloadConflict"]
    detail = __import__("alarms.links", fromlist=["x"]).decode_insights_url(dict(d.links)["query"])
    assert detail["editorString"] == 'filter outcome = "payload_conflict" | stats count(*) by bin(1m), operation'
    assert (detail["start"], detail["end"], detail["timeType"]) == (-10800, 0, "RELATIVE")
    assert dict(d.links)["logs"].endswith("#logsV2:log-groups/log-group/$252Faws$252Flambda$252Forders-consumer")


def test_disable_and_evaluation_override_keep_m_of_n_consistent():
    cfg = parse_config({
        "service": "s",
        "disabled_signals": ["lambda_throttles"],
        "overrides": {"record_age_max": {"evaluation_periods": 2}, "poison_rate": {"enabled": False}},
        "functions": [{"name": "f", "operation": "O", "event_source": "sqs",
                       "disabled_signals": ["emf_parsing_errors"]}],
    })
    defs = {d.signal: d for d in build_catalogue(cfg)}
    assert "lambda_throttles" not in defs and "poison_rate" not in defs and "emf_parsing_errors" not in defs
    # default 3 of 5; evaluation periods overridden to 2 -> datapoints clamped to 2 (never more than N)
    defs = {d.signal: d for d in build_catalogue(cfg) if not d.tier}
    assert (defs["record_age_max"].evaluation_periods, defs["record_age_max"].datapoints_to_alarm) == (2, 2)
    assert defs["payload_conflict"].alarm_actions == ()  # no actions configured
    assert defs["payload_conflict"].name == "s-f-PayloadConflict"


@pytest.mark.parametrize("source,record_age,iterator_age,offset_lag", [
    ("msk", 1, 0, 1), ("self-managed-kafka", 1, 0, 1), ("activemq", 1, 0, 0), ("rabbitmq", 1, 0, 0),
    ("kinesis", 1, 1, 0), ("apigateway-rest", 0, 0, 0),
])
def test_source_scoped_alarms_per_event_source(tmp_path, source, record_age, iterator_age, offset_lag):
    """Kafka and Amazon MQ records carry their write time (RecordAge applies); Lambda publishes IteratorAge for
    Kinesis / DynamoDB Streams only and OffsetLag for Amazon MSK / self-managed Kafka only ("OffsetLag - For
    self-managed Apache Kafka and Amazon Managed Streaming for Apache Kafka (Amazon MSK) event sources",
    https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html)."""
    cfg = tmp_path / "stack.yaml"
    cfg.write_text(f"namespace: Shop\nservice: orders\nfunctions:\n"
                   f"  - {{name: fn, operation: Op, event_source: {source}, stream: orders-topic}}\n")
    counts = Counter(d.signal for d in build_catalogue(load_config(cfg)) if not d.tier)
    assert (counts["record_age_max"], counts["lambda_iterator_age"], counts["lambda_offset_lag"]) == (
        record_age, iterator_age, offset_lag)
    if offset_lag:
        lag = next(d for d in build_catalogue(load_config(cfg)) if d.signal == "lambda_offset_lag")
        api = lag.to_request()
        assert (api["Namespace"], api["MetricName"], api["Statistic"], api["Threshold"]) == (
            "AWS/Lambda", "OffsetLag", "Maximum", 10_000)
        assert api["Dimensions"] == [{"Name": "FunctionName", "Value": "fn"}]
        assert "orders-topic" in api["AlarmDescription"]
