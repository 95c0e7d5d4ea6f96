"""emitter.powertools on layers other than DynamoDB (the shipped in-memory BasePersistenceLayer standing for a user's
own layer, real Powertools), the
single-event record scope, key naming, and set-up errors."""

from __future__ import annotations

import json
import time
from collections import Counter

import pytest

pytest.importorskip("aws_lambda_powertools")

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError

from emitter import Emitter, MemorySink
from emitter.powertools import (
    InMemoryPersistenceLayer,
    IntegrationError,
    instrument,
    process_partial_response,
    record_scope,
)


class Ctx:
    aws_request_id = "r-1"
    function_name = "fn"

    def __init__(self, remaining_ms: int = 30_000) -> None:
        self._deadline = time.monotonic() * 1000 + remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int(self._deadline - time.monotonic() * 1000))


class Stop(BaseException):
    """A timeout: Powertools' ``except Exception`` does not release the claim."""


def outcomes(sink):
    return Counter(json.loads(line).get("outcome") for line in sink.lines if '"outcome"' in line) - Counter(
        {"cold_start": 10**6})


def test_own_layer_takeover_observed_in_its_claim():
    """The in-memory layer reads the record it may overwrite during its claim (as the cache layer does): the default
    "observe" mode sees the IN_PROGRESS record it overwrote, with no extra read."""
    sink = MemorySink()
    em = Emitter(service="s", sink=sink)
    layer = instrument(InMemoryPersistenceLayer(), em)
    calls = []

    @em.handler(operation="Op")
    @idempotent(persistence_store=layer, config=IdempotencyConfig(event_key_jmespath="id"))
    def handler(event, context):
        calls.append(1)
        if len(calls) == 1:
            raise Stop
        return {"ok": True}

    with pytest.raises(Stop):
        handler({"id": "x"}, Ctx(remaining_ms=100))
    with pytest.raises(IdempotencyAlreadyInProgressError):
        handler({"id": "x"}, Ctx())
    time.sleep(0.15)
    assert handler({"id": "x"}, Ctx()) == {"ok": True}
    assert handler({"id": "x"}, Ctx()) == {"ok": True}
    assert outcomes(sink) == Counter({"claimed": 1, "duplicate_in_progress": 1, "stale_claim_takeover": 1,
                                      "succeeded": 1, "duplicate_completed": 1})
    out = [json.loads(line) for line in sink.lines]
    assert sum(d.get("DuplicateInProgress", 0) for d in out if "_aws" in d) == 1  # the wrapper did not add one


def test_probe_off_and_callable_detection():
    sink = MemorySink()
    em = Emitter(service="s", sink=sink)
    layer = instrument(InMemoryPersistenceLayer(), em, detect_takeover=False)
    fn = idempotent_function(data_keyword_argument="d", persistence_store=layer,
                             config=IdempotencyConfig(event_key_jmespath="id"))(lambda d: d)
    fn(d={"id": 1})
    assert layer.reads == 1 and outcomes(sink) == Counter({"claimed": 1, "succeeded": 1})  # the claim's own read

    sink2 = MemorySink()
    em2 = Emitter(service="s", sink=sink2)
    layer2 = instrument(InMemoryPersistenceLayer(), em2, detect_takeover=lambda lay, record: True)
    idempotent_function(data_keyword_argument="d", persistence_store=layer2,
                        config=IdempotencyConfig(event_key_jmespath="id"))(lambda d: d)(d={"id": 1})
    assert layer2.reads == 1 and outcomes(sink2) == Counter({"stale_claim_takeover": 1, "succeeded": 1})

    sink3 = MemorySink()
    layer3 = instrument(InMemoryPersistenceLayer(), Emitter(service="s", sink=sink3), detect_takeover="read")
    idempotent_function(data_keyword_argument="d", persistence_store=layer3,
                        config=IdempotencyConfig(event_key_jmespath="id"))(lambda d: d)(d={"id": 1})
    assert layer3.reads == 2 and outcomes(sink3) == Counter({"claimed": 1, "succeeded": 1})  # + the probe


def test_record_scope_and_log_key_for_a_single_event_handler():
    sink = MemorySink()
    em = Emitter(service="s", sink=sink)
    layer = instrument(InMemoryPersistenceLayer(), em, log_key=lambda k: "orders#" + k.rsplit("#", 1)[1][:6])
    cfg = IdempotencyConfig(event_key_jmespath="headers.key")

    @idempotent_function(data_keyword_argument="request", persistence_store=layer, config=cfg)
    def create(request):
        return {"id": 1}

    @em.handler(operation="CreateCase")
    def handler(event, context):
        rec = em.record_for(event)
        with record_scope(rec) as scope:
            create(request=event)
        assert scope.terminal
        return {"statusCode": 201}

    event = {"httpMethod": "POST", "resource": "/cases", "headers": {"key": "k1"},
             "requestContext": {"requestId": "req-abc", "requestTimeEpoch": int(time.time() * 1000)}}
    handler(event, Ctx())
    recs = [json.loads(line) for line in sink.lines if '"outcome"' in line]
    claimed = next(r for r in recs if r["outcome"] == "claimed")
    assert claimed["event_id"] == "req-abc" and claimed["event_source"] == "apigateway-rest"
    assert claimed["idempotency_key"].startswith("orders#") and len(claimed["idempotency_key"]) == 13


def test_setup_errors_are_clear():
    em = Emitter(service="s", sink=MemorySink())
    with pytest.raises(IntegrationError, match="BasePersistenceLayer"):
        instrument(object(), em)
    layer = instrument(InMemoryPersistenceLayer(), em)
    assert instrument(layer, em) is layer  # idempotent
    with pytest.raises(IntegrationError, match="another Emitter"):
        instrument(layer, Emitter(service="t", sink=MemorySink()))
    with pytest.raises(IntegrationError, match="detect_takeover"):
        instrument(InMemoryPersistenceLayer(), em, detect_takeover="sometimes")
    with pytest.raises(IntegrationError, match="DynamoDBPersistenceLayer"):
        instrument(InMemoryPersistenceLayer(), em, detect_takeover="return_values")
    with pytest.raises(IntegrationError, match="BatchProcessor"):
        process_partial_response({"Records": []}, lambda r: r, object(), emitter=em)


def test_quarantine_that_fails_keeps_the_record_in_failures():
    sink = MemorySink()
    em = Emitter(service="s", sink=sink)

    def bad_quarantine(rec, exc):
        raise OSError("dlq down")

    def handler(record):
        raise ValueError("bad")

    now = str(int(time.time() * 1000))
    event = {"Records": [{"messageId": f"m{i}", "receiptHandle": "h", "body": "{}", "md5OfBody": "x",
                          "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": now},
                          "messageAttributes": {}, "eventSource": "aws:sqs",
                          "eventSourceARN": "arn:aws:sqs:us-east-1:1:q", "awsRegion": "us-east-1"} for i in range(2)]}
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    resp = process_partial_response(event, handler, processor, Ctx(), emitter=em, quarantine=bad_quarantine)
    assert resp == {"batchItemFailures": [{"itemIdentifier": "m0"}, {"itemIdentifier": "m1"}]}
    assert outcomes(sink) == Counter({"received": 2, "permanent_failure": 2, "batch_item_failure": 2})
