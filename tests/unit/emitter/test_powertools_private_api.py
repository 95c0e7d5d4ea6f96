"""The Powertools internals ``emitter.powertools`` relies on, checked against the installed aws-lambda-powertools.

pyproject pins ``aws-lambda-powertools>=3,<4``; a 3.x release that renames a parameter, a method or an attribute
used here fails the test that names it, before any user sees an integration that silently records nothing.
"""

from __future__ import annotations

import inspect

import pytest

pytest.importorskip("aws_lambda_powertools")
pytest.importorskip("redis")  # Powertools' cache layer module imports it (dev extra)

from aws_lambda_powertools.utilities.batch import base as batch_base
from aws_lambda_powertools.utilities.idempotency import base as handler_base
from aws_lambda_powertools.utilities.idempotency import exceptions as E
from aws_lambda_powertools.utilities.idempotency.persistence import base as layer_base
from aws_lambda_powertools.utilities.idempotency.persistence import datarecord
from aws_lambda_powertools.utilities.idempotency.persistence.dynamodb import DynamoDBPersistenceLayer
from aws_lambda_powertools.utilities.idempotency.persistence.redis import RedisCachePersistenceLayer

from emitter.powertools import constants as PC

BASE = layer_base.BasePersistenceLayer

# (class, method, parameter names after self): what the wrappers receive and pass on, and how they read it
SIGNATURES = [
    (BASE, "get_record", ["data"]),
    (BASE, "_get_record", ["idempotency_key"]),
    (BASE, "_put_record", ["data_record"]),
    (BASE, "_update_record", ["data_record"]),
    (BASE, "_delete_record", ["data_record"]),
    (DynamoDBPersistenceLayer, "_put_record", ["data_record"]),
    (DynamoDBPersistenceLayer, "_get_record", ["idempotency_key"]),
    (DynamoDBPersistenceLayer, "_update_record", ["data_record"]),
    (DynamoDBPersistenceLayer, "_delete_record", ["data_record"]),
    (RedisCachePersistenceLayer, "_put_record", ["data_record"]),
    (RedisCachePersistenceLayer, "_get_record", ["idempotency_key"]),
    (RedisCachePersistenceLayer, "_update_record", ["data_record"]),
    (RedisCachePersistenceLayer, "_delete_record", ["data_record"]),
    (datarecord.DataRecord, "__init__", ["idempotency_key", "status", "expiry_timestamp",
                                         "in_progress_expiry_timestamp", "response_data", "payload_hash", "sort_key"]),
    (E.IdempotencyItemAlreadyExistsError, "__init__", ["args", "old_data_record"]),
    (batch_base.BatchProcessor, "_process_record", ["record"]),
]


@pytest.mark.parametrize(("cls", "name", "params"), SIGNATURES, ids=[f"{c.__name__}.{n}" for c, n, _ in SIGNATURES])
def test_private_method_signature(cls, name, params):
    method = cls.__dict__.get(name)
    assert method is not None, f"Powertools {cls.__module__}.{cls.__name__}.{name} is gone; emitter.powertools uses it"
    got = [p for p in inspect.signature(method).parameters if p != "self"]
    assert got == params, (f"Powertools changed the signature of {cls.__name__}.{name}: {got}, "
                           f"emitter.powertools relies on {params}")


def test_the_wrapped_methods_are_the_ones_checked():
    checked = {n for c, n, _ in SIGNATURES if c is BASE}
    assert set(PC.WRAPPED_METHODS) | {"_get_record"} == checked


@pytest.mark.parametrize("caller, call", [
    # keyword arguments, as the wrappers read them (``data_record=``; the probe passes ``idempotency_key=``)
    (BASE.save_inprogress, "self._put_record(data_record=data_record)"),
    (BASE.save_success, "self._update_record(data_record=data_record)"),
    (BASE.delete_record, "self._delete_record(data_record=data_record)"),
    (BASE.get_record, "self._get_record(idempotency_key=idempotency_key)"),
    # get_record is called while the failed claim's exception is handled (the wrapper reads sys.exc_info())
    (handler_base.IdempotencyHandler._process_idempotency, "exc.old_data_record or self._get_idempotency_record()"),
    (handler_base.IdempotencyHandler._get_idempotency_record, "self.persistence_store.get_record(data=self.data)"),
    # the cache layer reads the record it may overwrite through self._get_record (detect_takeover="observe")
    (RedisCachePersistenceLayer._put_in_progress_record, "self._get_record(data_record.idempotency_key)"),
    # the batch integration maps a record handler's argument to its record through the data class's raw dict
    (batch_base.BatchProcessor._process_record, "self.handler(record=data"),
])
def test_how_powertools_calls_the_wrapped_methods(caller, call):
    assert call in inspect.getsource(caller), f"Powertools' {caller.__qualname__} no longer does `{call}`"


def test_data_record_and_status_names():
    assert dict(datarecord.STATUS_CONSTANTS) == {"INPROGRESS": PC.STATUS_INPROGRESS,
                                                 "COMPLETED": PC.STATUS_COMPLETED, "EXPIRED": PC.STATUS_EXPIRED}
    rec = datarecord.DataRecord("k", status="INPROGRESS", expiry_timestamp=1, in_progress_expiry_timestamp=2)
    assert (rec._status, rec.expiry_timestamp, rec.in_progress_expiry_timestamp) == ("INPROGRESS", 1, 2), \
        "DataRecord._status / expiry_timestamp / in_progress_expiry_timestamp renamed"
    assert handler_base.MAX_RETRIES == 2, "IdempotencyHandler.handle retries: the docs say 3 attempts"


def test_dynamodb_layer_attributes():
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    layer = DynamoDBPersistenceLayer(table_name="t", boto3_client=client)
    assert layer.client is client, "DynamoDBPersistenceLayer.client renamed (the ReturnValues hooks register on it)"
    assert layer.status_attr == "status", "DynamoDBPersistenceLayer.status_attr renamed (read from the old item)"


def test_batch_processor_bookkeeping_attributes():
    from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

    p = BatchProcessor(event_type=EventType.SQS)
    for name in ("exceptions", "fail_messages", "success_messages"):
        assert isinstance(getattr(p, name), list), f"BatchProcessor.{name} renamed"
    raw = {"messageId": "m"}
    assert SQSRecord(raw).raw_event is raw, "event source data classes no longer keep the record dict as raw_event"
