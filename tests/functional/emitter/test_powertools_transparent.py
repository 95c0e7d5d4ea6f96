"""Instrumenting Powertools changes nothing a Powertools user can observe: one regression test per defect of issue 33
(each fails on 620890b), with the real aws-lambda-powertools and DynamoDB on moto's server over 127.0.0.1."""

from __future__ import annotations

import json
import time
import uuid
import warnings
from collections import Counter
from unittest import mock

import pytest

pytest.importorskip("aws_lambda_powertools")

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.batch import process_partial_response as pt_process_partial_response
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyInconsistentStateError,
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
    IdempotencyKeyError,
    IdempotencyPersistenceLayerError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from emitter import Emitter, MemorySink
from emitter import powertools as integration
from emitter.powertools import instrument, process_partial_response


class Ctx:
    aws_request_id = "r-1"
    function_name = "orders-fn"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def outcomes(sink: MemorySink) -> list[dict]:
    return [o for o in map(json.loads, sink.lines) if o.get("outcome") not in (None, "cold_start")]


def counts(sink: MemorySink) -> Counter:
    return Counter(o["outcome"] for o in outcomes(sink))


@pytest.fixture
def table(aws):
    ddb = aws("dynamodb")
    name = f"idem-{uuid.uuid4().hex[:8]}"
    ddb.create_table(TableName=name, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
    return ddb, name


class MyLayer(DynamoDBPersistenceLayer):
    """A user's own subclass, as in a user's code base."""


def create_order(layer):
    @idempotent_function(data_keyword_argument="order", persistence_store=layer,
                         config=IdempotencyConfig(event_key_jmespath="order_id"))
    def create(order):
        return {"created": order["order_id"]}

    return create


# --------------------------------------------------------------------------- any client object
class WrappedClient:
    """A client wrapper (tracing, retries, another SDK layer): the DynamoDB calls Powertools makes, nothing else."""

    def __init__(self, client) -> None:
        self._client = client
        self.calls: list[str] = []

    def __getattr__(self, name):
        if name in ("put_item", "get_item", "update_item", "delete_item"):
            self.calls.append(name)
            return getattr(self._client, name)
        raise AttributeError(name)


def test_a_client_without_botocore_events_works_and_warns_once(table):
    ddb, name = table
    client = WrappedClient(ddb)
    sink = MemorySink()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layer = instrument(DynamoDBPersistenceLayer(table_name=name, boto3_client=client), Emitter(sink=sink))
    assert [w.category for w in caught] == [integration.IntegrationWarning]
    assert "detect_takeover='read'" in str(caught[0].message)
    create = create_order(layer)
    assert create(order={"order_id": "o-1"}) == {"created": "o-1"}
    assert create(order={"order_id": "o-1"}) == {"created": "o-1"}
    assert client.calls == ["put_item", "update_item", "put_item"]  # no request of idemwatch's own
    assert counts(sink) == Counter({"claimed": 1, "succeeded": 1, "duplicate_completed": 1})


# --------------------------------------------------------------------------- class-level patches reach the instance
def test_a_store_failure_patched_on_the_class_raises_as_bare(table):
    ddb, name = table
    sink = MemorySink()
    bare = create_order(MyLayer(table_name=name, boto3_client=ddb))
    instrumented = create_order(instrument(MyLayer(table_name=name, boto3_client=ddb), Emitter(sink=sink)))
    for create in (bare, instrumented):
        with (mock.patch.object(MyLayer, "_put_record", side_effect=ConnectionError("store down")) as put,
              pytest.raises(IdempotencyPersistenceLayerError)):
            create(order={"order_id": "o-2"})
        assert put.call_count == 1
        assert put.call_args == mock.call(data_record=mock.ANY)  # called unbound, as the class attribute
    err = outcomes(sink)
    assert [(o["outcome"], o["error_code"]) for o in err] == [("store_error", "ConnectionError")]
    assert ddb.scan(TableName=name)["Count"] == 0


def test_subclass_overrides_and_later_patches_act_as_bare(table):
    ddb, name = table
    seen: list[str] = []

    class Audited(MyLayer):
        def _update_record(self, data_record):
            seen.append(data_record.status)
            return super()._update_record(data_record)

    sink = MemorySink()
    layer = instrument(Audited(table_name=name, boto3_client=ddb), Emitter(sink=sink))
    create = create_order(layer)
    create(order={"order_id": "o-3"})
    assert seen == ["COMPLETED"]
    # a patch made after instrument(), autospec'd (bound as a method), is what the instance calls
    with (mock.patch.object(Audited, "_update_record", autospec=True, side_effect=OSError("late")) as upd,
          pytest.raises(IdempotencyPersistenceLayerError)):
        create(order={"order_id": "o-4"})
    assert upd.call_args.args[0] is layer
    assert counts(sink) == Counter({"claimed": 2, "succeeded": 1, "store_error": 1})


# --------------------------------------------------------------------------- batch semantics are Powertools'
def kinesis_event(kinds: list[str]) -> dict:
    import base64

    return {"Records": [
        {"kinesis": {"kinesisSchemaVersion": "1.0", "partitionKey": "p", "sequenceNumber": f"4959{i:04d}",
                     "data": base64.b64encode(json.dumps({"n": i, "kind": k}).encode()).decode(),
                     "approximateArrivalTimestamp": 1_700_000_000.0},
         "eventSource": "aws:kinesis", "eventVersion": "1.0", "eventID": f"shardId-000:4959{i:04d}",
         "eventName": "aws:kinesis:record", "awsRegion": "us-east-1",
         "eventSourceARN": "arn:aws:kinesis:us-east-1:123456789012:stream/ledger"} for i, k in enumerate(kinds)]}


def ddb_stream_event(kinds: list[str]) -> dict:
    return {"Records": [
        {"eventID": f"e{i}", "eventName": "INSERT", "eventVersion": "1.1", "eventSource": "aws:dynamodb",
         "awsRegion": "us-east-1",
         "dynamodb": {"ApproximateCreationDateTime": 1_700_000_000, "Keys": {"id": {"S": f"k{i}"}},
                      "NewImage": {"id": {"S": f"k{i}"}, "kind": {"S": k}}, "SequenceNumber": f"{100 + i}",
                      "SizeBytes": 26, "StreamViewType": "NEW_IMAGE"},
         "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2024"} for i, k in enumerate(kinds)]}


def kind_of(record) -> str:
    if hasattr(record, "kinesis"):
        return json.loads(record.kinesis.data_as_text())["kind"]
    return record.dynamodb.new_image["kind"]


@pytest.mark.parametrize(("event_type", "make"), [(EventType.KinesisDataStreams, kinesis_event),
                                                  (EventType.DynamoDBStreams, ddb_stream_event)])
def test_streams_process_every_record_as_powertools_does(event_type, make):
    results = []
    for process in (pt_process_partial_response, process_partial_response):
        calls: list[str] = []

        def handler(record, calls=calls):
            calls.append(kind_of(record))
            if kind_of(record) == "fail":
                raise ConnectionError("downstream")

        kw = {"emitter": Emitter(sink=MemorySink())} if process is process_partial_response else {}
        resp = process(make(["ok", "fail", "ok", "fail"]), handler, BatchProcessor(event_type=event_type), Ctx(), **kw)
        raised = None
        try:
            process(make(["fail", "fail"]), handler, BatchProcessor(event_type=event_type), Ctx(), **kw)
        except BatchProcessingError as exc:
            raised = (type(exc), exc.msg, [type(e[1]) for e in exc.child_exceptions])
        results.append((resp, calls, raised))
    assert results[0] == results[1]
    resp, calls, raised = results[1]
    assert calls == ["ok", "fail", "ok", "fail", "fail", "fail"] and len(resp["batchItemFailures"]) == 2
    assert raised is not None and raised[2] == [ConnectionError, ConnectionError]


def sqs_event(n: int) -> dict:
    return {"Records": [{"messageId": f"m{i}", "receiptHandle": "h", "body": "{}", "md5OfBody": "x",
                         "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "1700000000000",
                                        "SenderId": "s", "ApproximateFirstReceiveTimestamp": "1700000000000"},
                         "messageAttributes": {}, "eventSource": "aws:sqs",
                         "eventSourceARN": "arn:aws:sqs:us-east-1:1:q", "awsRegion": "us-east-1"} for i in range(n)]}


def test_a_process_record_set_on_the_processor_is_used_and_kept():
    processor = BatchProcessor(event_type=EventType.SQS)
    own_calls = []
    original = processor._process_record

    def my_process_record(record):
        own_calls.append(record["messageId"])
        return original(record)

    processor._process_record = my_process_record
    sink = MemorySink()
    resp = process_partial_response(sqs_event(2), lambda record: None, processor, Ctx(), emitter=Emitter(sink=sink))
    assert resp == {"batchItemFailures": []}
    assert own_calls == ["m0", "m1"]
    assert processor._process_record is my_process_record  # still there after the call
    assert counts(sink) == Counter({"received": 2, "succeeded": 2})


# --------------------------------------------------------------------------- an outcome for every state
class ExistsLayer(BasePersistenceLayer):
    """A user's own layer whose claim condition is only "the key does not exist" (no in-progress expiry)."""

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[str, DataRecord] = {}

    def _get_record(self, idempotency_key):
        if idempotency_key not in self.items:
            raise IdempotencyItemNotFoundError
        return self.items[idempotency_key]

    def _put_record(self, data_record):
        if data_record.idempotency_key in self.items:
            raise IdempotencyItemAlreadyExistsError(old_data_record=self.items[data_record.idempotency_key])
        self.items[data_record.idempotency_key] = data_record

    def _update_record(self, data_record):
        self.items[data_record.idempotency_key] = data_record

    def _delete_record(self, data_record):
        self.items.pop(data_record.idempotency_key, None)


def test_an_in_progress_record_past_its_expiry_is_recorded_at_each_attempt():
    sink = MemorySink()
    em = Emitter(sink=sink)
    layer = instrument(ExistsLayer(), em)
    cfg = IdempotencyConfig(event_key_jmespath="order_id")

    @em.handler(operation="CreateOrder")
    @idempotent(persistence_store=layer, config=cfg)
    def handler(event, context):
        return {"ok": True}

    layer.configure(cfg, f"{handler.__wrapped__.__module__}.{handler.__wrapped__.__qualname__}")
    key = layer._get_hashed_idempotency_key({"order_id": "o-5"})
    now = time.time()
    layer.items[key] = DataRecord(key, status="INPROGRESS", expiry_timestamp=int(now) + 3600,
                                  in_progress_expiry_timestamp=int(now * 1000) - 1000)  # its holder timed out
    with pytest.raises(IdempotencyInconsistentStateError):
        handler({"order_id": "o-5"}, Ctx())
    recs = outcomes(sink)
    # Powertools tries 3 times (MAX_RETRIES = 2); the escaping exception is not recorded a 4th time
    assert [(o["outcome"], o["error_code"], o["idempotency_key"]) for o in recs] == [
        ("store_error", "IdempotencyInconsistentState", key)] * 3


def test_a_missing_key_with_raise_on_no_idempotency_key_is_a_permanent_failure():
    sink = MemorySink()
    em = Emitter(sink=sink)
    from emitter.powertools import InMemoryPersistenceLayer

    layer = instrument(InMemoryPersistenceLayer(), em)

    @em.handler(operation="CreateOrder")
    @idempotent(persistence_store=layer, config=IdempotencyConfig(event_key_jmespath="order_id",
                                                                  raise_on_no_idempotency_key=True))
    def handler(event, context):
        return {"ok": True}

    with pytest.raises(IdempotencyKeyError):
        handler({"other": 1}, Ctx())
    assert [(o["outcome"], o["error_code"], o["error_class"]) for o in outcomes(sink)] == [
        ("permanent_failure", "IdempotencyKeyMissing", "permanent")]


# --------------------------------------------------------------------------- ReturnValues, visible
def test_return_values_on_the_claim_is_seen_by_a_stubber():
    import boto3
    from botocore.stub import ANY, Stubber

    client = boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    layer = instrument(DynamoDBPersistenceLayer(table_name="orders", boto3_client=client), Emitter(sink=MemorySink()))
    create = create_order(layer)
    with Stubber(client) as stub:
        stub.add_response("put_item", {}, {"TableName": "orders", "Item": ANY, "ConditionExpression": ANY,
                                           "ExpressionAttributeNames": ANY, "ExpressionAttributeValues": ANY,
                                           "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                                           "ReturnValues": "ALL_OLD"})  # the documented difference, visible
        stub.add_response("update_item", {}, {"TableName": "orders", "Key": ANY, "UpdateExpression": ANY,
                                              "ExpressionAttributeNames": ANY, "ExpressionAttributeValues": ANY})
        assert create(order={"order_id": "o-6"}) == {"created": "o-6"}
        stub.assert_no_pending_responses()


# --------------------------------------------------------------------------- processors the handler never sees
def test_fifo_and_model_failures_keep_powertools_response_and_are_counted():
    """SqsFifoPartialProcessor short-circuits the records after a failure (never started: no outcome but their batch
    item failure); a model= that rejects a record fails it before the handler (received + its failure)."""
    from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor
    from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
    from pydantic import field_validator

    def handler(record):
        if json.loads(record.body if isinstance(record.body, str) else "{}").get("fail"):
            raise ConnectionError("downstream")

    event = sqs_event(4)
    event["Records"][1]["body"] = '{"fail": true}'
    bare = pt_process_partial_response(copy_event(event), handler, SqsFifoPartialProcessor(), Ctx())
    sink = MemorySink()
    ours = process_partial_response(copy_event(event), handler, SqsFifoPartialProcessor(), Ctx(),
                                    emitter=Emitter(sink=sink))
    assert ours == bare == {"batchItemFailures": [{"itemIdentifier": f"m{i}"} for i in (1, 2, 3)]}
    assert counts(sink) == Counter({"received": 2, "succeeded": 1, "retryable_failure": 1, "batch_item_failure": 3})

    class Order(SqsRecordModel):
        @field_validator("body")
        @classmethod
        def not_empty(cls, v: str) -> str:
            if v == "{}":
                raise ValueError("empty order")
            return v

    event = sqs_event(3)
    event["Records"][0]["body"] = '{"id": 1}'
    event["Records"][2]["body"] = '{"id": 3}'
    results = []
    for process in (pt_process_partial_response, process_partial_response):
        sink = MemorySink()
        kw = {"emitter": Emitter(sink=sink)} if process is process_partial_response else {}
        results.append(process(copy_event(event), lambda record: None,
                               BatchProcessor(event_type=EventType.SQS, model=Order), Ctx(), **kw))
    assert results[0] == results[1] == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
    recs = outcomes(sink)
    assert Counter(o["outcome"] for o in recs) == Counter({"received": 3, "succeeded": 2, "permanent_failure": 1,
                                                           "batch_item_failure": 1})
    assert {(o["outcome"], o["event_id"]) for o in recs if o["outcome"] != "received"} == {
        ("succeeded", "m0"), ("succeeded", "m2"), ("permanent_failure", "m1"), ("batch_item_failure", "m1")}


def copy_event(event: dict) -> dict:
    return json.loads(json.dumps(event))


def test_async_batches_behave_as_powertools():
    from aws_lambda_powertools.utilities.batch import AsyncBatchProcessor
    from aws_lambda_powertools.utilities.batch import async_process_partial_response as pt_async

    from emitter.powertools import async_process_partial_response

    results = []
    for process in (pt_async, async_process_partial_response):
        calls: list[str] = []

        async def handler(record, lambda_context, calls=calls):
            calls.append(record.message_id)
            if record.message_id in ("m1", "m3"):
                raise ConnectionError("downstream")
            return lambda_context.function_name

        kw = {"emitter": Emitter(sink=MemorySink())} if process is async_process_partial_response else {}
        resp = process(sqs_event(4), handler, AsyncBatchProcessor(event_type=EventType.SQS), Ctx(), **kw)
        with pytest.raises(BatchProcessingError) as all_failed:
            process({"Records": sqs_event(4)["Records"][1:4:2]}, handler, AsyncBatchProcessor(event_type=EventType.SQS),
                    Ctx(), **kw)
        results.append((resp, calls, all_failed.value.msg))
    assert results[0] == results[1]
    assert results[1][0] == {"batchItemFailures": [{"itemIdentifier": "m1"}, {"itemIdentifier": "m3"}]}


def test_a_record_unlike_powertools_own_is_counted_not_raised():
    """A layer of one's own returning a record whose in-progress expiry is a string: Powertools' own comparison then
    fails where Powertools makes it, exactly as bare; the integration's bookkeeping counts its error instead."""
    from emitter.constants import WarningCode

    results, ems = [], []
    for instrumented in (False, True):
        layer = ExistsLayer()
        if instrumented:
            ems.append(Emitter(sink=MemorySink()))
            instrument(layer, ems[-1])
        create = create_order(layer)
        create(order={"order_id": "o-7"})  # COMPLETED
        rec = next(iter(layer.items.values()))
        rec._status, rec.in_progress_expiry_timestamp = "INPROGRESS", "soon"
        try:
            create(order={"order_id": "o-7"})
        except Exception as exc:  # noqa: BLE001 - what a user sees, whatever it is
            results.append((type(exc).__name__, str(exc)))
    assert results[0] == results[1] and results[0][0] == "TypeError"
    assert ems[0].warnings.get(WarningCode.INTERNAL_ERROR) == 1
