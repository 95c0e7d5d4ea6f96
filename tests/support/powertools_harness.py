"""Differential harness for ``emitter.powertools``: the same Powertools handlers and events run bare and instrumented.

A *world* is one execution of a sequence of steps against one store: two execution environments (A and B, each
with its own persistence layer over the shared store, its own ``@idempotent`` handler and batch processors), a
fake clock patched into Powertools' (and the integration's) ``datetime`` so that both runs see identical
timestamps, and recorders of everything a Powertools user can observe:

- each step's return value or exception (type, message, causes), the handler bodies that ran, the warnings issued
  (category, message and the file/line they name);
- every request the layers send (DynamoDB: the API parameters botocore serializes; the cache layer: every client
  call), and the stored items after the last step.

Stores: DynamoDB on moto's server over HTTP (``DynamoStore``), Powertools' cache persistence layer over a
Redis-like client object (``FakeRedis``: get/set/delete with TTL on the fake clock), and the integration's
in-memory layer. Each layer class is a user's subclass (``Latency``) whose ``_put_record`` lets time pass after a
claim finds its key taken, when a step asks for it (how an in-progress expiry passes during a request).

``oracle_counts`` derives the outcomes an instrumented world must record from what Powertools did (an
independent oracle: it reads only the bare-observable trace and the store before each claim attempt).
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import importlib
import json
import re
import types
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.batch import process_partial_response as pt_process_partial_response
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency import exceptions as E
from aws_lambda_powertools.utilities.idempotency.persistence.cache import CachePersistenceLayer
from botocore.exceptions import ClientError

from emitter import Emitter, MemorySink
from emitter.powertools import InMemoryPersistenceLayer, instrument, process_partial_response

T0 = 1_800_000_000.0
"""The fake clock's start (epoch s)."""

CLOCK_MODULES = (
    "aws_lambda_powertools.utilities.idempotency.base",
    "aws_lambda_powertools.utilities.idempotency.persistence.base",
    "aws_lambda_powertools.utilities.idempotency.persistence.datarecord",
    "aws_lambda_powertools.utilities.idempotency.persistence.dynamodb",
    "aws_lambda_powertools.utilities.idempotency.persistence.redis",
    "emitter.powertools.idempotency",
    "emitter.powertools.memory",
)
"""Every module that reads the clock on the idempotency path, as ``dt.datetime.now()``."""


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def advance(self, ms: int) -> None:
        self.now += ms / 1000


@contextlib.contextmanager
def patched_clock(clock: FakeClock):
    """``dt.datetime.now()`` reads ``clock`` in every module of CLOCK_MODULES (fails if one reads it otherwise)."""

    class FakeDatetime(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime.datetime.fromtimestamp(clock.now, tz)

    fake = types.SimpleNamespace(datetime=FakeDatetime, timedelta=datetime.timedelta, date=datetime.date,
                                 timezone=datetime.timezone)
    with contextlib.ExitStack() as stack:
        for name in CLOCK_MODULES:
            mod = importlib.import_module(name)
            assert getattr(mod, "dt", None) is datetime, f"{name} no longer imports datetime as dt"
            stack.enter_context(mock.patch.object(mod, "dt", fake))
        yield


class Ctx:
    """The LambdaContext attributes Powertools and the emitter read; the remaining time is fixed."""

    function_name = "orders-fn"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:orders-fn"
    memory_limit_in_mb = 512
    aws_request_id = "req-1"

    def __init__(self, remaining_ms: int) -> None:
        self.remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


class LambdaTimeout(BaseException):
    """A Lambda timeout as the code sees it: it never returns (Powertools' ``except Exception`` lets it through)."""


# --------------------------------------------------------------------------- stores
class Latency:
    """A user's subclass: after a claim that finds its key taken, ``latency_ms`` pass (once) on the clock."""

    harness_clock: FakeClock
    latency: list[int]  # shared by the world's layers: [ms] (0: none)
    before_put: Any = None  # the oracle's probe (instrumented worlds): the stored status before each claim attempt

    def _put_record(self, data_record):
        if self.before_put is not None:
            self.before_put(data_record.idempotency_key)
        try:
            return super()._put_record(data_record)  # type: ignore[misc]
        except E.IdempotencyItemAlreadyExistsError:
            if self.latency[0]:
                self.harness_clock.advance(self.latency[0])
                self.latency[0] = 0
            raise


class HarnessDynamo(Latency, DynamoDBPersistenceLayer):
    pass


with warnings.catch_warnings():  # subclassing the cache layer warns of its old name (the same class)
    warnings.simplefilter("ignore", DeprecationWarning)

    class HarnessCache(Latency, CachePersistenceLayer):
        pass


HarnessMemory = type("HarnessMemory", (Latency, type(InMemoryPersistenceLayer())), {})


class FakeRedis:
    """A Redis-like client object for Powertools' cache layer (its ``CacheClientProtocol``: get / set with ``ex``
    and ``nx`` / delete), keys expiring on the fake clock. Records every call."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.data: dict[str, tuple[Any, float | None]] = {}
        self.calls: list[tuple[Any, ...]] = []

    def _live(self, name: str) -> tuple[Any, float | None] | None:
        v = self.data.get(name)
        if v is not None and v[1] is not None and v[1] <= self.clock.now:
            del self.data[name]
            return None
        return v

    def get(self, name):
        self.calls.append(("get", name))
        v = self._live(name)
        return None if v is None else v[0]

    def set(self, name, value, ex=None, nx=False, **kwargs):
        self.calls.append(("set", name, value, ex, nx, tuple(sorted(kwargs.items()))))
        if ex is not None and ex <= 0:
            raise ValueError("invalid expire time in 'set' command")  # what a Redis server answers
        if nx and self._live(name) is not None:
            return None
        self.data[name] = (value, None if ex is None else self.clock.now + ex)
        return True

    def delete(self, *names):
        self.calls.append(("delete", *names))
        return sum(self.data.pop(n, None) is not None for n in names)

    def snapshot(self) -> dict[str, Any]:
        return {k: (v[0], v[1]) for k in sorted(self.data) if (v := self._live(k)) is not None}


class DynamoStore:
    """Two moto tables (one per run kind) and a key prefix per world, so worlds never share an item."""

    def __init__(self, session, url: str) -> None:
        from botocore.config import Config

        self.session = session
        self.url = url
        self.config = Config(retries={"total_max_attempts": 1})
        self.admin = self.client()
        self.tables = {}
        for kind in ("bare", "instrumented"):
            name = f"idem-{kind}"
            self.admin.create_table(TableName=name, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                                    AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                                    BillingMode="PAY_PER_REQUEST")
            self.tables[kind] = name

    def client(self):
        return self.session.client("dynamodb", endpoint_url=self.url, region_name="us-east-1", config=self.config)


# --------------------------------------------------------------------------- one run
@dataclass
class Call:
    """One idempotent call: its key (order id, or None without one), whether the body ran, the result."""

    key: str | None
    ran: bool = False
    result: tuple[Any, ...] = ()
    status_before: str | None = None  # the stored raw status of the key at the call's last claim attempt (oracle)
    batch: bool = False  # a batch record's call (process_partial_response ran it)


@dataclass
class World:
    store: str  # "dynamodb" | "cache" | "memory"
    config: dict[str, Any]
    prefix: str
    instrumented: bool
    dynamo: DynamoStore | None = None
    clock: FakeClock = field(default_factory=FakeClock)
    steps: list[Any] = field(default_factory=list)  # what each step showed
    calls: list[Call] = field(default_factory=list)
    requests: list[Any] = field(default_factory=list)
    sinks: dict[str, MemorySink] = field(default_factory=dict)
    batch_outcomes: Counter = field(default_factory=Counter)  # the oracle's expectations for batch bookkeeping

    def __post_init__(self) -> None:
        self.latency = [0]
        self.stack: list[Call] = []
        kind = "instrumented" if self.instrumented else "bare"
        if self.store == "dynamodb":
            assert self.dynamo is not None
            self.client = self.dynamo.client()
            self.table = self.dynamo.tables[kind]
            self.client.meta.events.register("before-parameter-build.dynamodb.*", self._record_request)
            self.layer_cls: type = HarnessDynamo
        elif self.store == "cache":
            self.redis = FakeRedis(self.clock)
            self.layer_cls = HarnessCache
        else:
            self.layer_cls = HarnessMemory
        self.envs = {name: self._env(name) for name in ("A", "B")}
        if self.store == "memory":  # one store for both environments
            self.envs["B"]["layer"].items = self.envs["A"]["layer"].items
            self.envs["B"]["layer"]._lock = self.envs["A"]["layer"]._lock

    # ---- recording
    def _record_request(self, params, event_name, **_):
        p = copy.deepcopy(params)
        assert p.pop("TableName") == self.table
        if self.instrumented and event_name.endswith(".PutItem"):  # the documented difference: on every claim
            assert p.pop("ReturnValues") == "ALL_OLD", p
        self.requests.append((event_name.rsplit(".", 1)[1], p))

    def stored(self) -> Any:
        if self.store == "dynamodb":
            keys = sorted({r[1].get("Key", r[1].get("Item", {})).get("id", {}).get("S") for r in self.requests} - {None})
            out = []
            for k in keys:
                item = self.dynamo.admin.get_item(TableName=self.table, Key={"id": {"S": k}}, ConsistentRead=True)
                out.append(item.get("Item"))
            return out
        if self.store == "cache":
            return self.redis.snapshot()
        return ({k: vars(v) for k, v in sorted(self.envs["A"]["layer"].items.items())},
                [e["layer"].reads for e in self.envs.values()])

    def _before_put(self, full: str) -> None:
        if self.stack:
            self.stack[-1].status_before = self.raw_status(full)

    def raw_status(self, full: str) -> str | None:
        """The stored status of the (Powertools) key, read beside the layer (oracle input): None when absent."""
        if self.store == "dynamodb":
            item = self.dynamo.admin.get_item(TableName=self.table, Key={"id": {"S": full}}, ConsistentRead=True)
            return item.get("Item", {}).get("status", {}).get("S")
        if self.store == "cache":
            v = self.redis.data.get(full)  # what the layer would GET (expired keys still count until Redis drops them)
            if v is None or (v[1] is not None and v[1] <= self.clock.now):
                return None
            return json.loads(v[0]).get("status")
        rec = self.envs["A"]["layer"].items.get(full)
        return None if rec is None else rec._status

    # ---- the environments
    def _layer(self) -> Any:
        if self.store == "dynamodb":
            layer = self.layer_cls(table_name=self.table, boto3_client=self.client)
        elif self.store == "cache":
            layer = self.layer_cls(client=self.redis)
        else:
            layer = self.layer_cls()
        layer.harness_clock = self.clock
        layer.latency = self.latency
        if self.instrumented:
            layer.before_put = self._before_put
        return layer

    def _env(self, name: str) -> dict[str, Any]:
        layer = self._layer()
        cfg = self.config
        config = IdempotencyConfig(event_key_jmespath="order_id", raise_on_no_idempotency_key=cfg["raise_no_key"],
                                   payload_validation_jmespath="amount" if cfg["payload"] else None,
                                   use_local_cache=cfg["local_cache"], expires_after_seconds=cfg["expires"])
        em = None
        if self.instrumented:
            self.sinks[name] = MemorySink()
            em = Emitter(service="orders", namespace="Shop", sink=self.sinks[name])
            instrument(layer, em)
        world = self

        @idempotent(persistence_store=layer, config=config, key_prefix=self.prefix)
        def handler(event, context):
            return world._body(event, name)

        if em is not None:
            handler = em.handler(operation="CreateOrder")(handler)

        @idempotent_function(data_keyword_argument="order", persistence_store=layer, config=config,
                             key_prefix=self.prefix)
        def charge(order):
            return world._body(order, name)

        processors = {src: BatchProcessor(event_type=t, raise_on_entire_batch_failure=cfg["raise_all"])
                      for src, t in (("sqs", EventType.SQS), ("kinesis", EventType.KinesisDataStreams),
                                     ("ddb", EventType.DynamoDBStreams))}
        return {"layer": layer, "config": config, "em": em, "handler": handler, "charge": charge,
                "processors": processors}

    def _body(self, order: dict[str, Any], env: str) -> Any:
        """A handler body: the side effect, by the event's mode."""
        self.stack[-1].ran = True
        mode = order.get("mode", "ok")
        if mode == "fail":
            raise ValueError("order rejected")
        if mode == "flaky":
            raise ConnectionError("inventory down")
        if mode == "timeout":
            raise LambdaTimeout
        if mode == "nested":  # a concurrent duplicate: the other environment gets the same event meanwhile
            other = "B" if env == "A" else "A"
            inner = {k: v for k, v in order.items() if k != "mode"}
            return {"order": order.get("order_id"), "nested": self._invoke(other, inner, 30_000)}
        return {"order": order.get("order_id"), "amount": order.get("amount")}

    # ---- steps
    def _call(self, key: str | None, fn, *args, batch: bool = False, **kwargs) -> Any:
        call = Call(key, batch=batch)
        self.calls.append(call)
        self.stack.append(call)
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            call.result = ("raised", *exc_repr(exc))
            raise
        finally:
            self.stack.pop()
        call.result = ("ok", result)
        return result

    def _invoke(self, env: str, event: dict[str, Any], remaining_ms: int) -> Any:
        try:
            return ("ok", self._call(event.get("order_id"), self.envs[env]["handler"], event, Ctx(remaining_ms)))
        except LambdaTimeout:
            return ("timeout",)
        except Exception as exc:
            return ("raised", *exc_repr(exc))

    def _batch(self, env: str, source: str, orders: list[dict[str, Any]], register: bool, remaining_ms: int) -> Any:
        e = self.envs[env]
        ctx = Ctx(remaining_ms)
        if register:
            e["config"].register_lambda_context(ctx)
        world = self

        def record_handler(record):
            if source == "sqs":
                order = json.loads(record.body)
            elif source == "kinesis":
                order = json.loads(record.kinesis.data_as_text())
            else:
                order = json.loads(record.dynamodb.new_image["order"])
            return world._call(order.get("order_id"), e["charge"], order=order, batch=True)

        event = batch_event(source, orders)
        processor = e["processors"][source]
        try:
            if self.instrumented:
                resp = process_partial_response(event, record_handler, processor, ctx, emitter=e["em"])
            else:
                resp = pt_process_partial_response(event, record_handler, processor, ctx)
        except LambdaTimeout:
            return ("timeout",)
        except BatchProcessingError as exc:
            return ("raised", type(exc).__name__, exc.msg, [exc_repr(i[1]) for i in exc.child_exceptions])
        self.batch_outcomes["batch_item_failure"] += len(resp.get("batchItemFailures", []))
        return ("ok", resp)

    def run(self, steps: list[tuple[Any, ...]]) -> None:
        with patched_clock(self.clock):
            for step in steps:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    shown = self._step(step)
                self.steps.append((step, shown, [(w.category.__name__, str(w.message), w.filename, w.lineno)
                                                 for w in caught]))

    def _step(self, step: tuple[Any, ...]) -> Any:
        kind = step[0]
        if kind == "advance":
            self.clock.advance(step[1])
            return None
        if kind == "latency":
            self.latency[0] = step[1]
            return None
        if kind == "fail":
            _, method, exc_kind, inner = step
            with mock.patch.object(self.layer_cls, method, side_effect=store_exception(exc_kind)):
                return self._step(inner)
        if kind == "invoke":
            _, env, key, amount, mode, remaining = step
            return self._invoke(env, order_event(key, amount, mode), remaining)
        _, env, source, orders, register, remaining = step
        return self._batch(env, source, [order_event(*o) for o in orders], register, remaining)

    def outcomes(self) -> Counter:
        out: Counter = Counter()
        for sink in self.sinks.values():
            for line in sink.lines:
                o = json.loads(line)
                if o.get("outcome") not in (None, "cold_start"):
                    code = o.get("error_code") if o["outcome"] == "store_error" else None
                    out[(o["outcome"], code) if code == INCONSISTENT else o["outcome"]] += 1
        return out


INCONSISTENT = "IdempotencyInconsistentState"


def order_event(key: int | None, amount: int, mode: str) -> dict[str, Any]:
    event: dict[str, Any] = {"amount": amount, "mode": mode}
    if mode != "nokey" and key is not None:
        event["order_id"] = f"o-{key}"
    return event


def batch_event(source: str, orders: list[dict[str, Any]]) -> dict[str, Any]:
    import base64

    if source == "sqs":
        return {"Records": [
            {"messageId": f"m-{i}", "receiptHandle": "rh", "body": json.dumps(o), "md5OfBody": "x",
             "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "1799999999000", "SenderId": "s",
                            "ApproximateFirstReceiveTimestamp": "1799999999000"},
             "messageAttributes": {}, "eventSource": "aws:sqs",
             "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:orders", "awsRegion": "us-east-1"}
            for i, o in enumerate(orders)]}
    if source == "kinesis":
        return {"Records": [
            {"kinesis": {"kinesisSchemaVersion": "1.0", "partitionKey": "p", "sequenceNumber": f"4959{i:04d}",
                         "data": base64.b64encode(json.dumps(o).encode()).decode(),
                         "approximateArrivalTimestamp": 1799999999.0},
             "eventSource": "aws:kinesis", "eventVersion": "1.0", "eventID": f"shardId-000:4959{i:04d}",
             "eventName": "aws:kinesis:record", "awsRegion": "us-east-1",
             "eventSourceARN": "arn:aws:kinesis:us-east-1:123456789012:stream/orders"} for i, o in enumerate(orders)]}
    return {"Records": [
        {"eventID": f"e{i}", "eventName": "INSERT", "eventVersion": "1.1", "eventSource": "aws:dynamodb",
         "awsRegion": "us-east-1",
         "dynamodb": {"ApproximateCreationDateTime": 1799999999, "Keys": {"id": {"S": f"k{i}"}},
                      "NewImage": {"id": {"S": f"k{i}"}, "order": {"S": json.dumps(o)}},
                      "SequenceNumber": f"{100 + i}", "SizeBytes": 26, "StreamViewType": "NEW_IMAGE"},
         "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/orders/stream/2026"}
        for i, o in enumerate(orders)]}


def store_exception(kind: str) -> BaseException:
    if kind == "connection":
        return ConnectionError("store unreachable")
    return ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}},
                       "PutItem")


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def exc_repr(exc: BaseException | None, depth: int = 3) -> tuple[Any, ...]:
    """An exception as a user sees it: its type, message and those it was raised from / during."""
    out: list[Any] = []
    while exc is not None and depth:
        out.append((type(exc).__name__, _ADDRESS.sub(" at 0x?", str(exc))))  # object reprs differ by address
        exc = exc.__cause__ or exc.__context__
        depth -= 1
    return tuple(out)


# --------------------------------------------------------------------------- the oracle
_RAISED_OUTCOME = {"IdempotencyAlreadyInProgressError": "duplicate_in_progress",
                   "IdempotencyValidationError": "payload_conflict", "IdempotencyKeyError": "permanent_failure"}
_BODY_FAILURE = {"ValueError": "permanent_failure", "ConnectionError": "retryable_failure"}


def oracle_counts(world: World) -> tuple[Counter, int]:
    """(outcomes the instrumented world must have recorded, besides the store errors for inconsistent state;
    the least number of those). Derived from each call's result, whether its body ran, whether a batch ran it and
    the stored status of its key at its last claim attempt."""
    want: Counter = Counter(world.batch_outcomes)
    least_inconsistent = 0
    for call in world.calls:
        raised = call.result[0] == "raised"
        first = call.result[1][0] if raised else None
        if call.batch:
            want["received"] += 1
            if first in _BODY_FAILURE:
                want[_BODY_FAILURE[first]] += 1
            elif first is None and call.ran and call.key is None:
                want["succeeded"] += 1  # no key: Powertools skipped the layer, the batch records the success
        if call.key is None and first != "IdempotencyKeyError":
            continue  # Powertools skipped the persistence layer
        if call.ran:
            want["stale_claim_takeover" if call.status_before == "INPROGRESS" else "claimed"] += 1
            if not raised:
                want["succeeded"] += 1
            elif first == "IdempotencyPersistenceLayerError":
                want["store_error"] += 1  # the update (or delete) failed
        elif raised:
            if first in _RAISED_OUTCOME:
                want[_RAISED_OUTCOME[first]] += 1
            elif first == "IdempotencyInconsistentStateError":
                least_inconsistent += 3
            elif first == "IdempotencyPersistenceLayerError":
                want["store_error"] += 1
        elif call.result[0] == "ok":
            want["duplicate_completed"] += 1
    return +want, least_inconsistent
