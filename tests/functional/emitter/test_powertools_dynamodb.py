"""emitter.powertools with the real aws-lambda-powertools against DynamoDB (moto's server on 127.0.0.1, real HTTP).

Every seed scenario of issue 16, end to end, with the exact EMF sums and the log records asserted:
the same event twice, two concurrent invocations with one key, one key with another payload, a claim left behind by
a timeout and retried after its in-progress expiry, a store failure, and an SQS batch of a valid, a poison and a
retryable record; plus stream checkpointing, Powertools Logger correlation and ``idemwatch collect local`` on the
produced log file giving the same counts as the EMF sums.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("aws_lambda_powertools")

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)

from emitter import Emitter, FileSink, MemorySink
from emitter.powertools import instrument, process_partial_response, use_logger

ROOT = Path(__file__).resolve().parents[3]
ARN = "arn:aws:lambda:us-east-1:123456789012:function:orders-fn"


class Ctx:
    """The attributes of a real LambdaContext the emitter and Powertools read."""

    def __init__(self, remaining_ms: int = 30_000) -> None:
        self.aws_request_id = str(uuid.uuid4())
        self.function_name = "orders-fn"
        self.invoked_function_arn = ARN
        self.memory_limit_in_mb = 512
        self.function_version = "$LATEST"
        self.log_group_name = "/aws/lambda/orders-fn"
        self._deadline = time.monotonic() * 1000 + remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int(self._deadline - time.monotonic() * 1000))


class Out:
    def __init__(self, lines: list[str]) -> None:
        self.objs = [json.loads(line) for line in lines]
        self.emf = [o for o in self.objs if "_aws" in o]
        self.outcomes = [o for o in self.objs if "outcome" in o]

    def sum(self, metric: str) -> float:
        return sum((sum(d[metric]) if isinstance(d[metric], list) else d[metric]) for d in self.emf if metric in d)

    def counts(self) -> Counter:
        return Counter(o["outcome"] for o in self.outcomes if o["outcome"] != "cold_start")

    def metric_sums(self) -> dict[str, float]:
        from emitter.contract import Metric

        return {m.value: self.sum(m.value) for m in Metric if self.sum(m.value)}


@pytest.fixture
def ddb(aws):
    return aws("dynamodb")


@pytest.fixture
def table(ddb):
    name = f"idem-{uuid.uuid4().hex[:8]}"
    ddb.create_table(TableName=name, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
    return name


def env(ddb, table, sink, **config):
    """One execution environment: an Emitter and an instrumented DynamoDB persistence layer."""
    em = Emitter(service="orders", namespace="Shop", sink=sink)
    layer = instrument(DynamoDBPersistenceLayer(table_name=table, boto3_client=ddb), em)
    cfg = IdempotencyConfig(event_key_jmespath=config.pop("key", "order_id"), **config)
    return em, layer, cfg


def test_same_event_twice_is_a_duplicate_completed_and_runs_once(ddb, table):
    sink = MemorySink()
    em, layer, cfg = env(ddb, table, sink)
    runs = []

    @em.handler(operation="CreateOrder")
    @idempotent(persistence_store=layer, config=cfg)
    def handler(event, context):
        runs.append(event["order_id"])
        return {"ok": event["order_id"]}

    event = {"order_id": "o-1", "amount": 5}
    assert handler(event, Ctx()) == {"ok": "o-1"}
    assert handler(event, Ctx()) == {"ok": "o-1"}
    assert runs == ["o-1"]
    out = Out(sink.lines)
    assert out.counts() == Counter({"claimed": 1, "succeeded": 1, "duplicate_completed": 1})
    assert out.metric_sums() == {"EventsSucceeded": 1, "DuplicateCompleted": 1, "ColdStart": 1}
    claimed = next(o for o in out.outcomes if o["outcome"] == "claimed")
    stored = ddb.scan(TableName=table)["Items"]
    assert [claimed["idempotency_key"]] == [i["id"]["S"] for i in stored]  # Powertools' own key
    assert claimed["idempotency_key"].startswith("test-func.")
    assert claimed["idempotency_status"] == "IN_PROGRESS"
    assert abs(claimed["in_progress_expires_at_ms"] - (time.time() * 1000 + 30_000)) < 5_000
    assert claimed["function_arn"] == ARN and claimed["function_memory_size"] == 512
    assert all(d["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Shop" for d in out.emf)


def test_hashed_keys_follow_the_emitter_setting(ddb, table):
    sink = MemorySink()
    em = Emitter(service="orders", sink=sink, hash_idempotency_keys=True)
    layer = instrument(DynamoDBPersistenceLayer(table_name=table, boto3_client=ddb), em)

    @idempotent_function(data_keyword_argument="order", persistence_store=layer,
                         config=IdempotencyConfig(event_key_jmespath="order_id"))
    def create(order):
        return {"id": order["order_id"]}

    create(order={"order_id": "o-9"})
    keys = {o["idempotency_key"] for o in Out(sink.lines).outcomes}
    stored = ddb.scan(TableName=table)["Items"][0]["id"]["S"]
    from emitter.redact import KeyHasher

    assert keys == {KeyHasher(":", None)(stored)}  # Powertools' key, hashed by the emitter's rule


def test_concurrent_invocations_one_claim_one_duplicate_in_progress(ddb, table):
    sink = MemorySink()
    em_a, layer_a, cfg_a = env(ddb, table, sink)
    em_b, layer_b, cfg_b = env(ddb, table, sink)  # a second execution environment
    inside, release = threading.Event(), threading.Event()
    runs = []

    def body(event, context):
        runs.append(1)
        inside.set()
        release.wait(10)
        return {"ok": True}

    handler_a = em_a.handler(operation="CreateOrder")(idempotent(persistence_store=layer_a, config=cfg_a)(body))
    handler_b = em_b.handler(operation="CreateOrder")(idempotent(persistence_store=layer_b, config=cfg_b)(body))
    event = {"order_id": "o-2"}
    t = threading.Thread(target=handler_a, args=(event, Ctx()))
    t.start()
    assert inside.wait(10)
    with pytest.raises(IdempotencyAlreadyInProgressError):
        handler_b(event, Ctx())
    release.set()
    t.join(10)
    assert runs == [1]
    out = Out(sink.lines)
    assert out.counts() == Counter({"claimed": 1, "succeeded": 1, "duplicate_in_progress": 1})
    assert out.metric_sums() == {"EventsSucceeded": 1, "DuplicateInProgress": 1, "ColdStart": 2}
    dup = next(o for o in out.outcomes if o["outcome"] == "duplicate_in_progress")
    assert dup["retryable"] is True and dup["error_code"] == "DuplicateInProgress"


def test_same_key_other_payload_is_a_payload_conflict(ddb, table):
    sink = MemorySink()
    em, layer, cfg = env(ddb, table, sink, payload_validation_jmespath="amount")

    @em.handler(operation="CreateOrder")
    @idempotent(persistence_store=layer, config=cfg)
    def handler(event, context):
        return {"ok": True}

    handler({"order_id": "o-3", "amount": 5}, Ctx())
    with pytest.raises(IdempotencyValidationError):
        handler({"order_id": "o-3", "amount": 6}, Ctx())
    out = Out(sink.lines)
    assert out.counts() == Counter({"claimed": 1, "succeeded": 1, "payload_conflict": 1})
    assert out.metric_sums() == {"EventsSucceeded": 1, "PayloadConflict": 1, "ColdStart": 1}
    assert out.sum("PermanentFailure") == 0


class LambdaTimeout(BaseException):
    """What a Lambda timeout looks like to the code: it never returns (Powertools' except Exception skips it)."""


def test_timeout_after_claim_then_retry_after_expiry_is_a_stale_takeover(ddb, table):
    sink = MemorySink()
    em, layer, cfg = env(ddb, table, sink)
    runs = []

    @em.handler(operation="CreateOrder")
    @idempotent(persistence_store=layer, config=cfg)
    def handler(event, context):
        runs.append(1)
        if len(runs) == 1:
            raise LambdaTimeout
        return {"ok": True}

    event = {"order_id": "o-4"}
    with pytest.raises(LambdaTimeout):
        handler(event, Ctx(remaining_ms=1500))  # the claim expires 1.5 s from now (room for a loaded machine)
    item = ddb.scan(TableName=table)["Items"][0]
    assert item["status"]["S"] == "INPROGRESS"  # left behind, as after a real timeout
    with pytest.raises(IdempotencyAlreadyInProgressError):
        handler(event, Ctx())  # a retry before the expiry: still held
    time.sleep(1.65)
    assert handler(event, Ctx()) == {"ok": True}
    assert len(runs) == 2
    out = Out(sink.lines)
    assert out.counts() == Counter({"claimed": 1, "duplicate_in_progress": 1, "stale_claim_takeover": 1,
                                    "succeeded": 1})
    assert out.metric_sums() == {"DuplicateInProgress": 1, "StaleClaimTakeover": 1, "EventsSucceeded": 1,
                                 "ColdStart": 1}
    take = next(o for o in out.outcomes if o["outcome"] == "stale_claim_takeover")
    assert take["idempotency_status"] == "IN_PROGRESS" and take["in_progress_expires_at_ms"] > time.time() * 1000


def test_store_failure_is_an_idempotency_store_error(ddb):
    sink = MemorySink()
    em, layer, cfg = env(ddb, "no-such-table", sink)

    @em.handler(operation="CreateOrder")
    @idempotent(persistence_store=layer, config=cfg)
    def handler(event, context):
        return {"ok": True}

    with pytest.raises(IdempotencyPersistenceLayerError):
        handler({"order_id": "o-5"}, Ctx())
    out = Out(sink.lines)
    assert out.counts() == Counter({"store_error": 1})
    assert out.metric_sums() == {"IdempotencyStoreError": 1, "ColdStart": 1}
    err = out.outcomes[-1]
    assert err["error_code"] == "ResourceNotFoundException" and err["retryable"] is True


def sqs_event(bodies: list[dict]) -> dict:
    now = str(int(time.time() * 1000))
    return {"Records": [
        {"messageId": f"m-{i}-{b['order_id']}", "receiptHandle": "rh", "body": json.dumps(b),
         "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": now, "SenderId": "s",
                        "ApproximateFirstReceiveTimestamp": now},
         "messageAttributes": {}, "md5OfBody": "x", "eventSource": "aws:sqs",
         "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:orders", "awsRegion": "us-east-1"}
        for i, b in enumerate(bodies)]}


class BadOrder(ValueError):
    pass


def make_charge(layer, cfg, side_effects):
    """The batch tests' idempotent side effect: poison orders fail validation, flaky ones a dependency."""

    @idempotent_function(data_keyword_argument="order", persistence_store=layer, config=cfg)
    def charge(order):
        if order["kind"] == "poison":
            raise BadOrder("schema")
        if order["kind"] == "flaky":
            raise ConnectionError("inventory down")
        side_effects.append(order["order_id"])
        return {"charged": order["order_id"]}

    return charge


def make_batch_handler(em, layer, side_effects, quarantined):
    cfg = IdempotencyConfig(event_key_jmespath="order_id")
    processor = BatchProcessor(event_type=EventType.SQS)
    charge = make_charge(layer, cfg, side_effects)

    def record_handler(record):
        return charge(order=json.loads(record.body))

    @em.handler(operation="ChargeOrders")
    def handler(event, context):
        cfg.register_lambda_context(context)
        return process_partial_response(event, record_handler, processor, context, emitter=em,
                                        quarantine=lambda rec, exc: quarantined.append(rec.event_id))

    return handler


def test_sqs_batch_valid_poison_retryable(ddb, table):
    sink = MemorySink()
    em = Emitter(service="orders", sink=sink)
    layer = instrument(DynamoDBPersistenceLayer(table_name=table, boto3_client=ddb), em)
    side_effects, quarantined = [], []
    handler = make_batch_handler(em, layer, side_effects, quarantined)
    event = sqs_event([{"order_id": "a", "kind": "ok"}, {"order_id": "b", "kind": "poison"},
                       {"order_id": "c", "kind": "flaky"}])
    resp = handler(event, Ctx())
    assert resp == {"batchItemFailures": [{"itemIdentifier": "m-2-c"}]}
    assert quarantined == ["m-1-b"] and side_effects == ["a"]
    out = Out(sink.lines)
    assert out.counts() == Counter({"received": 3, "claimed": 3, "succeeded": 1, "poison_message": 1,
                                    "retryable_failure": 1, "batch_item_failure": 1})
    sums = out.metric_sums()
    sums.pop("RecordAge", None)  # milliseconds since the test built the event: one value per record
    assert sums == {"EventsReceived": 3, "EventsSucceeded": 1, "PoisonMessage": 1, "RetryableFailure": 1,
                    "BatchItemFailures": 1, "ColdStart": 1}
    assert len(next(d for d in out.emf if "RecordAge" in d)["RecordAge"]) == 3
    by_event = {(o["outcome"], o.get("event_id")) for o in out.outcomes}
    assert {("succeeded", "m-0-a"), ("poison_message", "m-1-b"), ("retryable_failure", "m-2-c"),
            ("batch_item_failure", "m-2-c")} <= by_event
    poison = next(o for o in out.outcomes if o["outcome"] == "poison_message")
    assert poison["error_code"] == "BadOrder" and poison["error_class"] == "poison"

    # the source redelivers the retryable record only; the valid one, sent again, is a replay
    sink.lines.clear()
    again = sqs_event([{"order_id": "a", "kind": "ok"}])
    assert handler(again, Ctx()) == {"batchItemFailures": []}
    assert side_effects == ["a"]
    out = Out(sink.lines)
    assert out.counts() == Counter({"received": 1, "duplicate_completed": 1})
    assert out.sum("EventsSucceeded") == 0 and out.sum("DuplicateCompleted") == 1


def test_batch_without_quarantine_reports_the_poison_record(ddb, table):
    sink = MemorySink()
    em = Emitter(service="orders", sink=sink)
    processor = BatchProcessor(event_type=EventType.SQS)

    def record_handler(record):
        if "bad" in record.body:
            raise BadOrder("x")

    event = sqs_event([{"order_id": "bad"}, {"order_id": "good"}])
    resp = process_partial_response(event, record_handler, processor, Ctx(), emitter=em)
    assert resp == {"batchItemFailures": [{"itemIdentifier": "m-0-bad"}]}
    out = Out(sink.lines)  # outside @em.handler: the call ran in its own invocation and flushed
    assert out.counts() == Counter({"received": 2, "permanent_failure": 1, "succeeded": 1, "batch_item_failure": 1})
    assert out.sum("BatchItemFailures") == 1 and out.sum("PermanentFailure") == 1


def kinesis_event(n: int) -> dict:
    import base64

    return {"Records": [
        {"kinesis": {"kinesisSchemaVersion": "1.0", "partitionKey": "p", "sequenceNumber": f"4959{i:04d}",
                     "data": base64.b64encode(json.dumps({"n": i}).encode()).decode(),
                     "approximateArrivalTimestamp": time.time()},
         "eventSource": "aws:kinesis", "eventVersion": "1.0", "eventID": f"shardId-000:4959{i:04d}",
         "eventName": "aws:kinesis:record", "awsRegion": "us-east-1",
         "eventSourceARN": "arn:aws:kinesis:us-east-1:123456789012:stream/ledger"} for i in range(n)]}


def test_stream_batch_processes_every_record_by_default_and_stops_when_asked():
    """Powertools' semantics by default (every record runs, every failure reported); stop_at_first_failure=True
    runs none after the first failure and reports them failed, as Lambda's checkpoint rule retries them anyway."""
    from emitter.powertools import BatchStopped

    sink = MemorySink()
    em = Emitter(service="ledger", sink=sink)
    processor = BatchProcessor(event_type=EventType.KinesisDataStreams)
    seen = []

    def record_handler(record):
        n = json.loads(record.kinesis.data_as_text())["n"]
        seen.append(n)
        if n == 1:
            raise ConnectionError("downstream")

    resp = process_partial_response(kinesis_event(4), record_handler, processor, Ctx(), emitter=em)
    assert resp == {"batchItemFailures": [{"itemIdentifier": "49590001"}]}
    assert seen == [0, 1, 2, 3]
    out = Out(sink.lines)
    assert out.counts() == Counter({"received": 4, "succeeded": 3, "retryable_failure": 1, "batch_item_failure": 1})

    sink.lines.clear()
    seen.clear()
    resp = process_partial_response(kinesis_event(4), record_handler, processor, Ctx(), emitter=em,
                                    stop_at_first_failure=True)
    assert seen == [0, 1]  # records 2 and 3 come again from the checkpoint: not run now
    assert resp == {"batchItemFailures": [{"itemIdentifier": "49590001"}, {"itemIdentifier": "49590002"},
                                          {"itemIdentifier": "49590003"}]}
    assert all(isinstance(e[1], BatchStopped) for e in processor.exceptions[1:])
    out = Out(sink.lines)  # records never started have no outcome but their batch item failure
    assert out.counts() == Counter({"received": 2, "succeeded": 1, "retryable_failure": 1, "batch_item_failure": 3})


def test_logger_correlation_id_is_carried(ddb, table):
    from aws_lambda_powertools import Logger

    sink = MemorySink()
    em, layer, cfg = env(ddb, table, sink)
    logger = Logger(service="orders-explicit", stream=open("/dev/null", "w"))  # noqa: SIM115 - another name: use_logger
    use_logger(em, logger)

    @logger.inject_lambda_context(correlation_id_path="headers.x_request")
    @em.handler(operation="CreateOrder")
    @idempotent(persistence_store=layer, config=cfg)
    def handler(event, context):
        return {"ok": True}

    handler({"order_id": "o-7", "headers": {"x_request": "corr-123"}}, Ctx())
    out = Out(sink.lines)
    assert {o["correlation_id"] for o in out.outcomes} == {"corr-123"}
    use_logger(em, None)


@pytest.mark.slow
def test_collect_local_tables_equal_the_emf_sums(ddb, table, tmp_path):
    """Logs produced through the integration, read by ``idemwatch collect local``: same counts as the EMF sums."""
    logs = tmp_path / "logs"
    sink = FileSink(logs / "orders-fn.log")
    em, layer, cfg = env(ddb, table, sink, payload_validation_jmespath="amount")

    @em.handler(operation="CreateOrder")
    @idempotent(persistence_store=layer, config=cfg)
    def handler(event, context):
        if event.get("fail"):
            raise ConnectionError("x")
        return {"ok": True}

    for i in range(5):
        handler({"order_id": f"o-{i}", "amount": 1}, Ctx())
    for i in range(3):
        handler({"order_id": f"o-{i}", "amount": 1}, Ctx())  # replays
    with pytest.raises(IdempotencyValidationError):
        handler({"order_id": "o-0", "amount": 2}, Ctx())
    with pytest.raises(ConnectionError):
        handler({"order_id": "o-9", "amount": 1, "fail": True}, Ctx())
    batch_layer = instrument(DynamoDBPersistenceLayer(table_name=table, boto3_client=ddb), em)
    bh = make_batch_handler(em, batch_layer, [], [])
    bh(sqs_event([{"order_id": "b-1", "kind": "ok"}, {"order_id": "b-2", "kind": "poison"},
                  {"order_id": "b-3", "kind": "flaky"}]), Ctx())
    sink.close()

    emf = Out((logs / "orders-fn.log").read_text().splitlines())
    out = tmp_path / "out"
    subprocess.run([str(ROOT / ".venv" / "bin" / "idemwatch"), "collect", "local", str(logs), "--out", str(out)],
                   check=True, capture_output=True, text=True, cwd=ROOT)
    import duckdb

    con = duckdb.connect()
    rows = con.execute("SELECT outcome, sum(events) FROM read_parquet(?) GROUP BY ALL",
                       [str(out / "tables" / "outcomes.parquet")]).fetchall()
    from emitter.contract import OUTCOME_METRIC, Outcome

    table_counts = {Outcome(o): int(n) for o, n in rows}
    metric_of = {o: m.value for o, m in OUTCOME_METRIC.items() if m is not None and m.unit.value == "Count"}
    from_tables = {metric_of[o]: n for o, n in table_counts.items() if o in metric_of and n}
    from_emf = {m: v for m, v in emf.metric_sums().items() if m not in ("RecordAge", "Redelivery")}
    assert from_tables == from_emf
    assert from_emf["DuplicateCompleted"] == 3 and from_emf["PayloadConflict"] == 1
    assert from_emf["EventsSucceeded"] == 6 and from_emf["PoisonMessage"] == 1 and from_emf["BatchItemFailures"] == 1
    assert sys.executable  # the CLI ran in the project's own environment


def test_async_batch_processor_outcomes_attach_to_their_records(ddb, table):
    """Powertools' AsyncBatchProcessor runs the record coroutines concurrently on one thread: each record's
    outcomes (the instrumented DynamoDB layer's claimed/succeeded, the batch's failure outcomes) carry its own event
    id although the records finish in another order than they started (a per-thread scope would attach them to the
    wrong record), and only the retryable record is in batchItemFailures."""
    import asyncio

    from aws_lambda_powertools.utilities.batch import AsyncBatchProcessor

    from emitter.powertools import IntegrationError, async_process_partial_response

    sink = MemorySink()
    em = Emitter(service="orders", sink=sink)
    layer = instrument(DynamoDBPersistenceLayer(table_name=table, boto3_client=ddb), em)
    cfg = IdempotencyConfig(event_key_jmespath="order_id")
    processor = AsyncBatchProcessor(event_type=EventType.SQS)
    side_effects, quarantined, finished = [], [], []
    charge = make_charge(layer, cfg, side_effects)

    async def record_handler(record):
        order = json.loads(record.body)
        await asyncio.sleep(order["delay"])  # every record has started (and entered its scope) by now
        try:
            return charge(order=order)
        finally:
            finished.append(order["order_id"])

    @em.handler(operation="ChargeOrders")
    def handler(event, context):
        cfg.register_lambda_context(context)
        return async_process_partial_response(event, record_handler, processor, context, emitter=em,
                                              quarantine=lambda rec, exc: quarantined.append(rec.event_id))

    event = sqs_event([{"order_id": "a", "kind": "ok", "delay": 0.05}, {"order_id": "b", "kind": "poison", "delay": 0.1},
                       {"order_id": "c", "kind": "flaky", "delay": 0.0}])
    resp = handler(event, Ctx())
    assert finished == ["c", "a", "b"]  # concurrent, and not in the reverse order of their start either
    assert resp == {"batchItemFailures": [{"itemIdentifier": "m-2-c"}]}
    assert quarantined == ["m-1-b"] and side_effects == ["a"]
    out = Out(sink.lines)
    assert out.counts() == Counter({"received": 3, "claimed": 3, "succeeded": 1, "poison_message": 1,
                                    "retryable_failure": 1, "batch_item_failure": 1})
    by_event = sorted((o["outcome"], o.get("event_id")) for o in out.outcomes if o["outcome"] != "cold_start")
    assert by_event == sorted([("received", "m-0-a"), ("received", "m-1-b"), ("received", "m-2-c"),
                               ("claimed", "m-0-a"), ("claimed", "m-1-b"), ("claimed", "m-2-c"),
                               ("succeeded", "m-0-a"), ("poison_message", "m-1-b"), ("retryable_failure", "m-2-c"),
                               ("batch_item_failure", "m-2-c")])
    sums = out.metric_sums()
    sums.pop("RecordAge", None)
    assert sums == {"EventsReceived": 3, "EventsSucceeded": 1, "PoisonMessage": 1, "RetryableFailure": 1,
                    "BatchItemFailures": 1, "ColdStart": 1}

    # a replay of the valid record is a duplicate_completed, still attached to its record
    sink.lines.clear()
    resp = handler(sqs_event([{"order_id": "a", "kind": "ok", "delay": 0.0}]), Ctx())
    assert resp == {"batchItemFailures": []} and side_effects == ["a"]
    out = Out(sink.lines)
    assert [(o["outcome"], o["event_id"]) for o in out.outcomes] == [("received", "m-0-a"),
                                                                     ("duplicate_completed", "m-0-a")]
    # each function takes its own processor kind
    with pytest.raises(IntegrationError, match="AsyncBatchProcessor"):
        async_process_partial_response(event, record_handler, BatchProcessor(event_type=EventType.SQS), emitter=em)
    with pytest.raises(IntegrationError, match="use async_process_partial_response"):
        process_partial_response(event, record_handler, processor, emitter=em)
