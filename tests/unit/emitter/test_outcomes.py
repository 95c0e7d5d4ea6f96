"""Every outcome call writes exactly one log record and counts its metric; every contract metric is produced."""

from __future__ import annotations

import pytest

from emitter import (
    Classification,
    ErrorClass,
    ErrorClassifier,
    EventRecord,
    EventSource,
    IdempotencyStatus,
    Metric,
    Outcome,
    TimeoutBudgetExceeded,
)
from emitter.contract import LOG_KEYS, OUTCOME_METRIC


class Ctx:
    """A LambdaContext look-alike with a remaining time that goes down by 100 ms per call."""

    aws_request_id = "c6af9ac6-7b61-11e6-9a41-93e812345678"
    function_name = "orders-fn"

    def __init__(self, remaining: int = 5000) -> None:
        self.remaining = remaining

    def get_remaining_time_in_millis(self) -> int:
        self.remaining -= 100
        return self.remaining


def rec(i: int = 1, attempt: int = 1, age: float | None = 10.0) -> EventRecord:
    return EventRecord(event_id=f"m-{i}", event_source=EventSource.SQS, attempt=attempt, record_age_ms=age)


CALLS = [
    ("claimed", Outcome.CLAIMED, {"expires_at_ms": 1_767_608_461_000}),
    ("succeeded", Outcome.SUCCEEDED, {}),
    ("duplicate_completed", Outcome.DUPLICATE_COMPLETED, {}),
    ("duplicate_in_progress", Outcome.DUPLICATE_IN_PROGRESS, {}),
    ("payload_conflict", Outcome.PAYLOAD_CONFLICT, {}),
    ("stale_claim_takeover", Outcome.STALE_CLAIM_TAKEOVER, {"expires_at_ms": 1_767_608_461_000}),
    ("retryable_failure", Outcome.RETRYABLE_FAILURE, {"error_code": "Throttled"}),
    ("permanent_failure", Outcome.PERMANENT_FAILURE, {"error_code": "ValidationError"}),
    ("poison_message", Outcome.POISON_MESSAGE, {"error_code": "SchemaMismatch"}),
    ("ambiguous_commit", Outcome.AMBIGUOUS_COMMIT, {"side_effect_ref": "ch_123"}),
    ("side_effect_started", Outcome.SIDE_EFFECT_STARTED, {"side_effect_ref": "ch_123"}),
    ("store_error", Outcome.STORE_ERROR, {"error_code": "ProvisionedThroughputExceededException"}),
]


@pytest.mark.parametrize("method,outcome,kwargs", CALLS)
def test_each_outcome_call_writes_one_record_and_its_metric(make, read, method, outcome, kwargs):
    em, sink = make()
    with em.invocation(Ctx(), operation="ProcessOrders", cold_start=False):
        getattr(em, method)(rec(), key="acme:k-1", **kwargs)
    out = read(sink)
    assert len(out.outcomes) == 1
    r = out.outcomes[0]
    assert r["outcome"] == outcome.value
    assert r["idempotency_key"] == "acme:k-1"
    assert r["event_id"] == "m-1" and r["event_source"] == "sqs" and r["attempt"] == 1
    assert r["function_request_id"] == Ctx.aws_request_id and r["function_name"] == "orders-fn"
    assert r["operation"] == "ProcessOrders" and r["service"] == "orders" and r["schema_version"] == "1"
    assert r["cold_start"] is False
    assert set(r) <= set(LOG_KEYS) | {"required_time_ms"}
    for k, v in kwargs.items():
        key = "in_progress_expires_at_ms" if k == "expires_at_ms" else k
        assert r[key] == v
    metric = OUTCOME_METRIC[outcome]
    if metric is None:
        assert out.emf == []
    elif metric is Metric.REMAINING_TIME_AT_SIDE_EFFECT:
        assert r["remaining_time_ms"] == 4900  # first call of get_remaining_time_in_millis
        assert out.metric_values(metric.value) == [4900]
        assert out.emf[0]["_aws"]["CloudWatchMetrics"][0]["Metrics"] == [{"Name": metric.value, "Unit": "Milliseconds"}]
    else:
        assert out.metric_sum(metric.value, Service="orders", Operation="ProcessOrders") == 1
    assert out.warnings == []


def test_statuses_and_flags(make, read):
    em, sink = make()
    em.claimed(rec(), key="k")
    em.succeeded(rec(), key="k")
    em.duplicate_in_progress(rec(), key="k")
    em.payload_conflict(rec(), key="k")
    em.retryable_failure(rec(), key="k", idempotency_status=IdempotencyStatus.DELETED)
    em.succeeded(rec())  # no key: no status
    out = read(sink)
    st = [o.get("idempotency_status") for o in out.outcomes]
    assert st == ["IN_PROGRESS", "COMPLETED", "IN_PROGRESS", None, "DELETED", None]
    assert out.outcomes[3]["retryable"] is False and out.outcomes[3]["error_class"] == "permanent"
    assert out.outcomes[4]["retryable"] is True and out.outcomes[4]["error_class"] == "retryable"
    assert [o["level"] for o in out.outcomes] == ["INFO", "INFO", "WARNING", "WARNING", "WARNING", "INFO"]


def test_record_key_defaults_to_the_records_idempotency_key(make, read):
    em, sink = make()
    r = EventRecord(event_id="req-1", event_source=EventSource.API_GATEWAY_HTTP, idempotency_key="globex:abc",
                    correlation_id="corr-9")
    em.succeeded(r)
    (o,) = read(sink).outcomes
    assert o["idempotency_key"] == "globex:abc" and o["correlation_id"] == "corr-9"


def test_received_metrics_redelivery_and_record_age(make, read):
    em, sink = make()
    for i, (attempt, age) in enumerate([(1, 5), (2, 700), (5, None), (1, 0)]):
        em.record_outcome(Outcome.RECEIVED, rec(i, attempt, age))
    em.flush()
    out = read(sink)
    assert out.metric_sum(Metric.EVENTS_RECEIVED.value) == 4
    assert out.metric_sum(Metric.REDELIVERY.value) == 2
    assert out.metric_values(Metric.RECORD_AGE.value) == [5, 700, 0]
    assert [o.get("record_age_ms") for o in out.outcomes] == [5, 700, None, 0]


def test_batch_item_failures(make, read, load_event):
    em, sink = make()
    recs = em.records(load_event("sqs_standard")) + em.records(load_event("dynamodb"))
    resp = em.batch_item_failures([recs[1], recs[2], "explicit-id", recs[1]])
    assert resp == {"batchItemFailures": [
        {"itemIdentifier": "2e1424d4-f796-459a-8184-9c92662be6da"},
        {"itemIdentifier": "4421584500000000017450439091"},
        {"itemIdentifier": "explicit-id"},
    ]}
    em.flush()
    out = read(sink)
    assert out.count("batch_item_failure") == 3
    assert out.metric_sum(Metric.BATCH_ITEM_FAILURES.value) == 3
    assert [w["idemwatch_warning"] for w in out.warnings] == ["duplicate_item_identifier"]


def test_batch_item_without_identifier_fails_the_whole_batch(make, read):
    em, sink = make()
    resp = em.batch_item_failures([EventRecord(event_id=None), None])
    assert resp == {"batchItemFailures": [{"itemIdentifier": ""}]}
    out = read(sink)
    assert out.warnings[0]["idemwatch_warning"] == "missing_item_identifier"
    assert len(out.warnings[0]["idemwatch_dropped"]) == 3  # two missing ids + one duplicate ""


def test_empty_batch_item_failures(make, read):
    em, sink = make()
    assert em.batch_item_failures([]) == {"batchItemFailures": []}
    assert read(sink).lines == []


def test_check_time_budget(make, read):
    em, sink = make()
    assert em.check_time_budget(1000) is None  # no context: unknown, not checked
    with em.invocation(Ctx(remaining=3100), operation="Op", cold_start=False):
        assert em.check_time_budget(1000) == 3000
        with pytest.raises(TimeoutBudgetExceeded) as ei:
            em.check_time_budget(2950, rec(), key="k")
        assert ei.value.retryable is True and ei.value.remaining_ms == 2900 and ei.value.required_ms == 2950
        c = em.failure(ei.value, rec(), key="k")  # not recorded twice
        assert c == Classification(ErrorClass.RETRYABLE, "TimeoutBudgetExceeded", True)
    out = read(sink)
    assert out.count("timeout_budget_abort") == 1 and len(out.outcomes) == 1
    o = out.outcomes[0]
    assert o["remaining_time_ms"] == 2900 and o["required_time_ms"] == 2950 and o["retryable"] is True
    assert out.metric_sum(Metric.TIMEOUT_BUDGET_ABORT.value) == 1


def test_check_time_budget_with_dict_context_and_clock(make, read, clock):
    em, sink = make()
    with em.invocation({"aws_request_id": "r", "deadline_ms": clock[0] + 800}, operation="Op", cold_start=False):
        assert em.check_time_budget(500) == 800
        clock[0] += 400
        with pytest.raises(TimeoutBudgetExceeded):
            em.check_time_budget(500)
    with em.invocation({"aws_request_id": "r2", "remaining_time_ms": 1000}, operation="Op", cold_start=False):
        clock[0] += 250
        assert em.remaining_time_ms() == 750


def test_failure_classification_writes_the_outcome(make, read):
    class Throttle(Exception):
        def __init__(self):
            self.response = {"Error": {"Code": "ThrottlingException"}, "ResponseMetadata": {"HTTPStatusCode": 400}}

    em, sink = make(classifier=ErrorClassifier(poison_after_attempts=5))
    c1 = em.failure(ValueError("card 4111111111111111 invalid"), rec())
    c2 = em.failure(Throttle(), rec())
    c3 = em.failure(Throttle(), rec(attempt=5))
    c4 = em.failure(RuntimeError("boom"), rec())
    assert c1 == Classification(ErrorClass.PERMANENT, "ValueError", False)
    assert c2 == Classification(ErrorClass.RETRYABLE, "ThrottlingException", True)
    assert c3 == Classification(ErrorClass.POISON, "ThrottlingException", False)
    assert c4 == Classification(ErrorClass.RETRYABLE, "RuntimeError", True)
    em.flush()
    out = read(sink)
    assert [o["outcome"] for o in out.outcomes] == ["permanent_failure", "retryable_failure", "poison_message",
                                                    "retryable_failure"]
    assert [o["error_code"] for o in out.outcomes] == ["ValueError", "ThrottlingException", "ThrottlingException",
                                                       "RuntimeError"]
    assert "4111111111111111" not in "".join(out.lines)  # exception messages are never logged
    assert out.metric_sum("RetryableFailure") == 2 and out.metric_sum("PermanentFailure") == 1
    assert out.metric_sum("PoisonMessage") == 1


def test_all_contract_metrics_can_be_produced(make, read, clock):
    """One invocation touching every metric of the contract: each appears in the EMF output."""
    em, sink = make()
    ev = {"Records": [{"eventSource": "aws:sqs", "messageId": "m1", "attributes": {
        "ApproximateReceiveCount": "2", "SentTimestamp": str(clock[0] - 30)}}]}

    @em.handler(operation="All")
    def handler(event, context):
        (r,) = em.records(event)
        for method, _, kwargs in CALLS:
            getattr(em, method)(r, key="k", **kwargs)
        em.check_time_budget(1, r)
        em.batch_item_failures([r])
        return "ok"

    assert handler(ev, Ctx()) == "ok"
    out = read(sink)
    produced = {m["Name"] for d in out.emf for m in d["_aws"]["CloudWatchMetrics"][0]["Metrics"]}
    assert produced == {m.value for m in Metric} - {Metric.TIMEOUT_BUDGET_ABORT.value}
    with pytest.raises(TimeoutBudgetExceeded), em.invocation(Ctx(remaining=50), operation="All"):
        em.check_time_budget(1000)
    assert read(sink).metric_sum(Metric.TIMEOUT_BUDGET_ABORT.value) == 1


def test_record_outcome_generic_form_and_unknown_outcome(make, read):
    em, sink = make()
    em.record_outcome("succeeded", "evt-1", key="k", tenant_id="acme")
    em.record_outcome("no_such_outcome")
    out = read(sink)
    assert out.outcomes[0]["event_id"] == "evt-1" and out.outcomes[0]["tenant_id"] == "acme"
    assert out.warnings[0]["idemwatch_warning"] == "invalid_property"
    assert len(out.outcomes) == 1


def test_operation_override_per_call(make, read):
    em, sink = make()
    with em.invocation(None, operation="A", cold_start=False):
        em.succeeded(rec())
        em.succeeded(rec(), operation="B")
    out = read(sink)
    assert [o["operation"] for o in out.outcomes] == ["A", "B"]
    assert out.metric_sum("EventsSucceeded", Operation="A") == 1
    assert out.metric_sum("EventsSucceeded", Operation="B") == 1


def test_event_source_dimension(make, read, load_event):
    em, sink = make(event_source_dimension=True)

    @em.handler(operation="Mixed")
    def handler(event, context):
        em.records(event)

    handler(load_event("kinesis"), None)
    out = read(sink)
    (doc,) = [d for d in out.emf if "EventsReceived" in d]
    assert doc["EventSource"] == "kinesis"
    assert doc["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [
        ["Service", "Operation"], ["Service"], ["Service", "EventSource"]]
    assert doc["EventsReceived"] == 2


def test_custom_metric_and_dimension(make, read):
    em, sink = make(dimensions={"Environment": "prod"})
    em.add_metric("PaymentLatency", 12.5, unit="Milliseconds", resolution=1)
    em.add_metric("PaymentLatency", 7, unit="Milliseconds", resolution=1)
    em.add_metric("Batches", 1)
    em.flush()
    (doc,) = read(sink).emf
    assert doc["PaymentLatency"] == [12.5, 7] and doc["Batches"] == 1 and doc["Environment"] == "prod"
    d = doc["_aws"]["CloudWatchMetrics"][0]
    assert {"Name": "PaymentLatency", "Unit": "Milliseconds", "StorageResolution": 1} in d["Metrics"]
    assert d["Dimensions"] == [["Service", "Operation", "Environment"], ["Service", "Environment"]]


def test_set_timestamp(make, read, clock):
    em, sink = make()
    em.set_timestamp(clock[0] - 60_000)
    em.succeeded()
    em.flush()
    em.succeeded()
    em.flush()
    out = read(sink)
    assert [d["_aws"]["Timestamp"] for d in out.emf] == [clock[0] - 60_000, clock[0]]


def test_timestamps_follow_the_injected_clock(make, read, clock):
    em, sink = make()
    clock[0] = 1_767_608_401_007  # 2026-01-05T10:20:01.007Z
    em.succeeded()
    em.flush()
    out = read(sink)
    assert out.outcomes[0]["timestamp"] == "2026-01-05T10:20:01.007Z"
    assert out.emf[0]["_aws"]["Timestamp"] == 1_767_608_401_007


def test_namespace_and_service_from_environment(monkeypatch, read):
    from emitter import Emitter, MemorySink

    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "Fallback")
    monkeypatch.setenv("IDEMWATCH_NAMESPACE", "Shop/Orders")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "payments")
    sink = MemorySink()
    em = Emitter(sink=sink)
    assert em.namespace == "Shop/Orders" and em.service == "payments"
    monkeypatch.delenv("IDEMWATCH_NAMESPACE")
    assert Emitter(sink=sink).namespace == "Fallback"
    monkeypatch.delenv("POWERTOOLS_METRICS_NAMESPACE")
    monkeypatch.delenv("POWERTOOLS_SERVICE_NAME")
    em = Emitter(sink=sink)
    assert em.namespace == "Idempotency" and em.service == "service_undefined"


def test_xray_trace_id_from_environment(make, read, monkeypatch):
    monkeypatch.setenv("_X_AMZN_TRACE_ID", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
    em, sink = make()
    with em.invocation(Ctx(), operation="Op", cold_start=False):
        em.succeeded()
    assert read(sink).outcomes[0]["xray_trace_id"] == "1-5759e988-bd862e3fe1be46a994272793"


def test_classifier_rules():
    class Custom(Exception):
        pass

    class Powertools(Exception):
        pass

    Powertools.__name__ = "IdempotencyValidationError"
    clf = ErrorClassifier(overrides={"Custom": ErrorClass.POISON},
                          rules=[lambda e: Classification(ErrorClass.PERMANENT, "Rule", False)
                                 if isinstance(e, KeyError) else None])
    assert clf(Custom()).error_class is ErrorClass.POISON
    assert clf(KeyError("x")) == Classification(ErrorClass.PERMANENT, "Rule", False)
    assert clf(Powertools()) == Classification(ErrorClass.PERMANENT, "PayloadConflict", False)
    assert clf(TimeoutError()) == Classification(ErrorClass.RETRYABLE, "TimeoutError", True)
    five = type("E", (Exception,), {"response": {"Error": {"Code": "Weird"}, "ResponseMetadata": {"HTTPStatusCode": 503}}})
    assert clf(five()).error_class is ErrorClass.RETRYABLE
    four = type("E", (Exception,), {"response": {"Error": {"Code": "AccessDenied"}, "ResponseMetadata": {"HTTPStatusCode": 403}}})
    assert clf(four()) == Classification(ErrorClass.PERMANENT, "AccessDenied", False)
    assert ErrorClassifier(default=ErrorClass.PERMANENT)(RuntimeError()).error_class is ErrorClass.PERMANENT


def test_classifier_on_real_botocore_client_error():
    from botocore.exceptions import ClientError

    clf = ErrorClassifier()
    throttled = ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "x"},
                             "ResponseMetadata": {"HTTPStatusCode": 400}}, "PutItem")
    cond = ClientError({"Error": {"Code": "ConditionalCheckFailedException", "Message": "x"},
                        "ResponseMetadata": {"HTTPStatusCode": 400}}, "PutItem")
    assert clf(throttled) == Classification(ErrorClass.RETRYABLE, "ProvisionedThroughputExceededException", True)
    assert clf(cond) == Classification(ErrorClass.PERMANENT, "ConditionalCheckFailedException", False)


def test_received_of_a_hand_made_record_with_unusual_values(make, read):
    """``received()`` and ``record_outcome(RECEIVED, ...)`` write the same record: a float age as it is, a nested
    detail sanitized to JSON, a bool detail as a JSON bool."""
    em, sink = make()
    r = EventRecord(event_id="e", event_source=EventSource.SQS, attempt=2, record_age_ms=12.5,
                    details={"nested": {"a": 1}, "flag": True})
    em.record_outcome(Outcome.RECEIVED, r)
    em.received(r)
    em.flush()
    out = read(sink)
    assert out.lines[0] == out.lines[1]
    assert out.outcomes[0]["nested"] == {"a": 1} and out.outcomes[0]["flag"] is True
    assert out.outcomes[0]["record_age_ms"] == 12.5 and out.outcomes[0]["attempt"] == 2
    assert out.metric_sum("EventsReceived") == 2 and out.metric_sum("Redelivery") == 2
    assert out.metric_values("RecordAge") == [12.5, 12.5]


@pytest.mark.parametrize("sample,count", [("sqs_standard", 2), ("sqs_fifo", 1), ("kinesis", 2), ("dynamodb", 2),
                                          ("sns", 1), ("eventbridge", 1), ("apigw_rest", 1), ("apigw_http", 1),
                                          ("alb", 1), ("s3_unknown", 1)])
def test_records_writes_one_received_record_per_record(make, read, load_event, sample, count):
    em, sink = make(redact_keys={"queue"})
    with em.invocation(Ctx(), operation="Op", cold_start=False):
        recs = em.records(load_event(sample))
    out = read(sink)
    assert len(recs) == count and out.count("received") == count and out.warnings == []
    assert [o.get("event_id") for o in out.outcomes] == [r.event_id for r in recs]
    assert all(o.get("queue", "***REDACTED***") == "***REDACTED***" for o in out.outcomes)
    assert out.metric_sum("EventsReceived") == count
