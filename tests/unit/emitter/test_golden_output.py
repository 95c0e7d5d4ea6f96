"""The emitter's exact output, line for line, for a representative set of calls: a snapshot that holds the one writer
to the bytes it wrote before any rework (a speed change must not change a single byte).

Covered: the ``received`` records of every sample event (SQS standard and FIFO, Kinesis, DynamoDB Streams, SNS,
EventBridge, API Gateway REST / HTTP / WebSocket, ALB, function URLs, VPC Lattice, MSK and self-managed Kafka,
ActiveMQ, RabbitMQ, an unknown shape), every outcome with and without its optional members, record details and
extra properties, secrets by name, hostile values (``str``/``int`` subclasses whose methods raise, objects whose
attributes raise, huge ints, NaN, bytes, self-containing lists), oversize records, warning records, hashed keys,
the EventSource dimension, a correlation id provider, custom metrics and dimensions, EMF documents split at 100
values, failures classified, the time budget, invocations outside and inside a handler, with and without a context.

Besides the snapshot, every line is checked against an independent encoder: it parses as one JSON object and
equals ``json.dumps(obj, separators=(",", ":"))`` of what it parses to (the contract's encoding).

The snapshot (``golden/emitter_output.txt``) was written by the tree before the emitter-perf work. After an
intended change of the output, rewrite it with ``python tests/unit/emitter/test_golden_output.py --write`` and
review the diff line by line.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import io
import json
import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "golden" / "emitter_output.txt"
EVENTS = Path(__file__).parent / "events"
NOW = 1_767_608_401_000  # 2026-01-05T10:20:01.000Z
SECRET = "S3CR3T-golden"

ENV_CLEARED = (
    "AWS_LAMBDA_FUNCTION_NAME", "_X_AMZN_TRACE_ID", "AWS_LAMBDA_INITIALIZATION_TYPE", "AWS_LAMBDA_LOG_FORMAT",
    "AWS_LAMBDA_LOG_LEVEL", "IDEMWATCH_SERVICE", "POWERTOOLS_SERVICE_NAME", "IDEMWATCH_NAMESPACE",
    "POWERTOOLS_METRICS_NAMESPACE", "IDEMWATCH_METRICS_DISABLED", "POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_DEV",
    "IDEMWATCH_POISON_AFTER_ATTEMPTS",
)


# --------------------------------------------------------------------------- hostile values
def _boom(*_args: Any, **_kwargs: Any) -> Any:
    raise RuntimeError(SECRET)


class StrAll(str):
    """A str whose every method a careless writer would call raises."""

    __len__ = __str__ = __repr__ = __format__ = __iter__ = __getitem__ = __contains__ = _boom  # type: ignore
    __hash__ = str.__hash__


class IntAll(int):
    __repr__ = __str__ = __index__ = __float__ = __format__ = __bool__ = __gt__ = __lt__ = _boom  # type: ignore
    __hash__ = int.__hash__


class GetattrRaises:
    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(name)


class ValueRaises:
    @property
    def value(self) -> Any:
        raise RuntimeError(SECRET)


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Secretive:
    def __str__(self) -> str:
        return SECRET

    __repr__ = __str__


class Ctx:
    """A LambdaContext look-alike; remaining time goes down 100 ms per read."""

    aws_request_id = "c6af9ac6-7b61-11e6-9a41-93e812345678"
    function_name = "orders-fn"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:orders-fn"
    memory_limit_in_mb = 256

    def __init__(self, remaining: int = 5000) -> None:
        self.remaining = remaining

    def get_remaining_time_in_millis(self) -> int:
        self.remaining -= 100
        return self.remaining


def event(name: str) -> Any:
    return json.loads((EVENTS / f"{name}.json").read_text())


# --------------------------------------------------------------------------- scenarios
class Run:
    """One scenario's emitter, its clock (epoch ms, moved only by the scenario) and its captured output."""

    def __init__(self, out: list[str], **kwargs: Any) -> None:
        from emitter import Emitter, MemorySink

        self.now = [NOW]
        self.sink = MemorySink()
        kwargs.setdefault("service", "orders")
        kwargs.setdefault("namespace", "Idempotency")
        self.em = Emitter(sink=self.sink, clock=lambda: self.now[0], **kwargs)
        self._out = out

    def done(self) -> None:
        self._out.extend(self.sink.lines)
        self._out.append(f"# warnings {json.dumps(self.em.warnings, sort_keys=True)}")


SCENARIOS: dict[str, Callable[[list[str]], None]] = {}


def scenario(fn: Callable[[list[str]], None]) -> Callable[[list[str]], None]:
    SCENARIOS[fn.__name__] = fn
    return fn


SOURCES = ["sqs_standard", "sqs_fifo", "kinesis", "dynamodb", "sns", "eventbridge", "apigw_rest", "apigw_http",
           "websocket_connect", "websocket_message", "alb", "function_url", "vpc_lattice_v1", "vpc_lattice_v2",
           "kafka_msk", "kafka_self_managed", "activemq", "rabbitmq", "s3_unknown"]


@scenario
def every_source_received_and_processed(out: list[str]) -> None:
    """Each sample event through the handler wrapper: cold start, received records, an outcome per record, partial
    batch failures, flush; then the same events with the EventSource dimension on."""
    for esd in (False, True):
        r = Run(out, event_source_dimension=esd)
        em = r.em
        for i, name in enumerate(SOURCES):
            r.now[0] = NOW + i * 1000
            batch_handler(em, f"Handle{i}", name)(event(name), Ctx())
        r.done()


def batch_handler(em: Any, operation: str, name: str) -> Callable[..., Any]:
    """A handler writing the received records, an outcome per record and the odd records as batch failures."""

    @em.handler(operation=operation)
    def handler(ev: Any, context: Any) -> Any:
        recs = em.records(ev)
        for j, rec in enumerate(recs):
            (em.succeeded if j % 2 == 0 else em.retryable_failure)(rec, key=f"acme:{name}:{j}")
        return em.batch_item_failures(recs[1::2])

    return handler


@scenario
def sqs_batch_like_the_benchmark(out: list[str]) -> None:
    """The benchmark's full path: 10 SQS messages (one redelivered), 5 outcomes, batch failures, twice (warm)."""
    r = Run(out)
    em = r.em
    ev = {"Records": [{
        "messageId": f"059f36b4-87a3-44ab-83d2-66197583{i:04d}", "receiptHandle": "AQEB...", "body": "{}",
        "attributes": {"ApproximateReceiveCount": str(1 + (i == 3)), "SentTimestamp": str(NOW - 1500 + i),
                       "SenderId": "AIDAIENQZJOLO23YVJ4VO", "ApproximateFirstReceiveTimestamp": str(NOW - 1400)},
        "messageAttributes": {}, "md5OfBody": "99914b932bd37a50b983c5e7c90ae93b", "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:orders", "awsRegion": "us-east-1"} for i in range(10)]}

    @em.handler(operation="ProcessOrders")
    def handler(ev: Any, context: Any) -> Any:
        recs = em.records(ev)
        em.succeeded(recs[0], key="acme:order-0")
        em.duplicate_completed(recs[1], key="acme:order-1")
        em.payload_conflict(recs[2], key="acme:order-2")
        em.retryable_failure(recs[3], key="acme:order-3", error_code="Throttled")
        em.poison_message(recs[4], key="acme:order-4", error_code="SchemaMismatch")
        return em.batch_item_failures([recs[3]])

    handler(ev, Ctx())
    r.now[0] += 1234
    handler(ev, Ctx())
    r.done()


@scenario
def every_outcome_with_its_members(out: list[str]) -> None:
    """Every outcome through record_outcome and its method, with every known keyword, inside an invocation."""
    from emitter import ErrorClass, EventRecord, EventSource, IdempotencyStatus, Outcome

    r = Run(out)
    em = r.em
    rec = EventRecord(event_id="m-1", event_source=EventSource.SQS, attempt=2, record_age_ms=12.5,
                      idempotency_key="acme:from-record", correlation_id="corr-rec", details={"queue": "q"})
    with em.invocation(Ctx(), operation="Op", cold_start=True):
        for o in Outcome:
            em.record_outcome(o, rec)
            em.record_outcome(o, "evt-string-id", key="acme:k")
            em.record_outcome(o)
            em.record_outcome(o.value, rec, key="acme:k2", expires_at_ms=NOW + 60_000, error_code="Code",
                              error_class=ErrorClass.POISON, retryable=False, side_effect_ref="ch_1",
                              tenant_id="acme", correlation_id="corr-1", idempotency_status=IdempotencyStatus.COMPLETED,
                              remaining_time_ms=1234, operation="OtherOp", extra_prop="x", count=3)
        em.claimed(rec, key="k", expires_at_ms=NOW + 1000)
        em.succeeded(rec, key="k")
        em.duplicate_completed(rec, key="k")
        em.duplicate_in_progress(rec, key="k")
        em.payload_conflict(rec, key="k")
        em.stale_claim_takeover(rec, key="k", expires_at_ms=NOW + 2000)
        em.retryable_failure(rec, key="k", error_code="Throttled")
        em.permanent_failure(rec, key="k", error_code="Validation")
        em.poison_message(rec, key="k", error_code="Schema")
        em.ambiguous_commit(rec, key="k", side_effect_ref="ch_2")
        em.side_effect_started(rec, key="k", side_effect_ref="ch_3")
        em.store_error(rec, key="k", error_code="Throughput")
        em.record_outcome("not-an-outcome", rec)
        em.record_outcome(Outcome.SUCCEEDED, rec, key="k", expires_at_ms=1.5, retryable=1, error_class="bogus",
                          idempotency_status="bogus", remaining_time_ms=-5)
        em.add_metric("CustomLatency", 12.5, "Milliseconds")
        em.add_metric("CustomCount", 2)
        em.add_metric("HighRes", 1, "Count", resolution=1)
        em.add_dimension("Region", "eu-west-1")
    r.done()


@scenario
def outside_an_invocation(out: list[str]) -> None:
    """Calls with no invocation: the idle members (service, operation, schema version); explicit flush."""
    from emitter import EventRecord

    r = Run(out, operation="IdleOp", dimensions={"Stage": "prod"})
    em = r.em
    em.succeeded(key="k-idle")
    em.records(event("sqs_standard"))
    em.record_for(event("eventbridge"))
    recs = em.adapt(event("kinesis"))
    for rec in recs:
        em.received(rec)
    em.received(EventRecord(event_id="hand-made"))
    em.side_effect_started(key="k", side_effect_ref="ref")
    em.flush()
    r.done()


@scenario
def secrets_and_extra_properties(out: list[str]) -> None:
    """Extra properties of every JSON type and beyond; secrets by name at every depth; reserved names refused."""
    r = Run(out, redact_extra_keys=["pin"], redact_exceptions=["token_count"])
    em = r.em
    with em.invocation({"aws_request_id": "req-dict", "function_name": "dict-fn", "remaining_time_ms": 3000},
                       operation="Props", cold_start=False):
        em.succeeded(key="k", password=SECRET, dbPassword=SECRET, token_count=5, pin=SECRET, body=SECRET,
                     nested={"a": 1, "apiKey": SECRET, "deeper": [{"secret": SECRET, "ok": True}]},
                     amount=decimal.Decimal("12.50"), whole=decimal.Decimal(12), nan_dec=decimal.Decimal("NaN"),
                     when=datetime.datetime(2026, 1, 5, 10, 20, 1, tzinfo=datetime.UTC),
                     day=datetime.date(2026, 1, 5), color=Color.RED, level=Level.HIGH, ratio=0.25,
                     nan=math.nan, inf=math.inf, blob=b"\x00\x01", tup=(1, "a", None), ints={3, 1, 2},
                     unicode="caf\u00e9 \u2603 \U0001f600", ctrl="a\nb\tc\x00", big=10**30, neg=-7, flag=False,
                     none=None, obj=Secretive(), outcome="spoof", level_="x", service="spoof")
        em.succeeded(key="k", idemwatch_dropped=1, timestamp=2)
        em.add_dimension("password", "hunter2")
        em.add_dimension("tenant_id", "acme")
        em.add_dimension("Ok", "fine")
    r.done()


@scenario
def hostile_values(out: list[str]) -> None:
    """Values whose methods raise, attributes that raise, huge ints, NaN, self-containing lists, hostile records."""
    from emitter import EventRecord, EventSource, Outcome

    r = Run(out)
    em = r.em
    loop: list[Any] = [1]
    loop.append(loop)
    deep: Any = "leaf"
    for _ in range(20):
        deep = {"d": deep}
    hostile_rec = EventRecord(event_id=StrAll("hostile-id"), event_source=EventSource.SQS, attempt=IntAll(7),
                              record_age_ms=math.nan, idempotency_key=IntAll(5), correlation_id=StrAll("c"),
                              details={"queue": StrAll("q"), 3: "int-key", Color.RED: "enum-key", "x": GetattrRaises()})
    odd_rec = EventRecord(event_id=10**5000, event_source="not-a-source", attempt=10**30, record_age_ms=-1,
                          details=["not", "a", "dict"])
    with em.invocation(Ctx(), operation=StrAll("Op"), event=event("sqs_standard"), cold_start=True):
        em.succeeded(hostile_rec)
        em.succeeded(odd_rec, key=10**5000)
        em.succeeded(key=StrAll("k"), prop=StrAll("v"), num=IntAll(3), loop=loop, deep=deep, raises=GetattrRaises(),
                     value_raises=ValueRaises(), huge=10**5000, f=float("-inf"))
        em.succeeded(key=3.5, error_code=IntAll(1))
        em.succeeded(key=True)
        em.succeeded(key=["list"])
        em.retryable_failure(key="k", error_code=ValueRaises(), tenant_id=10**5000, side_effect_ref=GetattrRaises())
        em.record_outcome(Outcome.SUCCEEDED, key="k", operation=StrAll("x"), idempotency_status=ValueRaises(),
                          retryable=IntAll(1), error_class=GetattrRaises(), expires_at_ms=math.nan,
                          correlation_id=10**5000, remaining_time_ms="soon")
        em.record_outcome(StrAll("succeeded"), key="k")
        em.record_outcome(IntAll(1), key="k")
        em.received(hostile_rec)
        em.received(odd_rec)
        em.add_metric(StrAll("M"), IntAll(1))
        em.add_metric("Bad", math.nan)
        em.add_metric("BadUnit", 1, "Parsecs")
        em.add_metric("BadRes", 1, resolution=True)
        em.add_metric("EventsReceived", 1)
        em.add_dimension(StrAll("D"), StrAll("v"))
        em.set_timestamp(IntAll(1))
        em.batch_item_failures([hostile_rec, odd_rec, "id-1", "id-1", None, StrAll("id-2"), 42])
        em.batch_item_failures(GetattrRaises())
        em.check_time_budget(math.nan)
        em.records(GetattrRaises())
        em.records({"Records": GetattrRaises()})
        em.records({"Records": [GetattrRaises(), {"eventSource": "aws:sqs", "attributes": "bad"}, 5]})
        em.records({"Records": [{"eventSource": "aws:sqs", "messageId": "m", "attributes": {
            "ApproximateReceiveCount": "9" * 5000, "SentTimestamp": "x"}}]})
    r.done()


@scenario
def oversize_records(out: list[str]) -> None:
    """Records over the CloudWatch Logs event size lose their largest extra properties; long contract fields are
    cut; a warning record with more problems than it can list."""
    from emitter import EventRecord, EventSource

    r = Run(out)
    em = r.em
    with em.invocation(Ctx(), operation="Big", cold_start=False):
        em.succeeded(key="k", huge="x" * 300_000, small="y", medium="z" * 100_000)
        em.succeeded(key="k", a="a" * 150_000, b="b" * 150_000, c=["c" * 1000] * 200)
        em.succeeded(key="k" * 5000, error_code="E" * 5000, tenant_id="t" * 5000, side_effect_ref="r" * 5000,
                     correlation_id="c" * 5000)
        em.succeeded(EventRecord(event_id="e" * 5000, event_source=EventSource.SQS), key="k")
        em.batch_item_failures([None] * 3000)
    r.done()


@scenario
def emf_splitting_and_dimensions(out: list[str]) -> None:
    """EMF documents: more than 100 values of a metric, more than 100 metrics, several groups (operation override),
    default and per-invocation dimensions, set_timestamp, metrics disabled."""
    from emitter import EventRecord, EventSource

    r = Run(out, event_source_dimension=True, dimensions={"Stage": "prod"})
    em = r.em
    ev = event("kinesis")
    with em.invocation(Ctx(), operation="Split", event=ev, cold_start=False):
        for i in range(250):
            em.received(EventRecord(event_id=f"e{i}", event_source=EventSource.KINESIS, record_age_ms=float(i)))
        for i in range(130):
            em.add_metric(f"Custom{i:03d}", i, "Count")
        em.succeeded(key="k", operation="OtherOp")
        em.add_dimension("Color", "blue")
        em.set_timestamp(NOW - 5000)
    with em.invocation(Ctx(), operation="Split", cold_start=False):
        em.succeeded(key="k")
    r.done()
    r = Run(out, metrics_disabled=True)
    with r.em.invocation(Ctx(), operation="Off", cold_start=False):
        r.em.succeeded(key="k")
    r.done()


@scenario
def hashed_keys_and_correlation(out: list[str]) -> None:
    """Hashed idempotency keys (plain and salted, tenant prefix kept) and a correlation id provider."""
    from emitter import EventRecord, EventSource

    for salt in (None, "pepper"):
        r = Run(out, hash_idempotency_keys=True, key_hash_salt=salt)
        em = r.em
        em.correlation_id_provider = lambda: "corr-from-provider"
        with em.invocation(Ctx(), operation="Hash", cold_start=False):
            em.succeeded(key="acme:order-1")
            em.succeeded(key="no-tenant")
            em.succeeded(key=12345)
            em.succeeded(EventRecord(event_id="m", event_source=EventSource.SQS, idempotency_key="acme:rec"))
            em.records(event("sqs_standard"))
        r.done()
    r = Run(out)
    r.em.correlation_id_provider = _boom
    with r.em.invocation(None, operation="Prov", cold_start=False):
        r.em.succeeded(key="k")
    r.done()


@scenario
def failures_and_budget(out: list[str]) -> None:
    """failure() over classified and idempotency exceptions, the time budget, exceptions escaping a handler."""
    from emitter import EventRecord, EventSource, TimeoutBudgetExceeded

    class IdempotencyAlreadyInProgressError(Exception):
        pass

    class ThrottlingException(Exception):
        pass

    class ValidationError(Exception):
        pass

    r = Run(out)
    em = r.em
    rec = EventRecord(event_id="m", event_source=EventSource.SQS, attempt=6)
    with em.invocation(Ctx(1000), operation="Fail", cold_start=False):
        em.failure(ThrottlingException(SECRET), rec, key="k")
        em.failure(ValidationError(SECRET), rec, key="k")
        em.failure(KeyError(SECRET), rec, key="k", step="parse")
        em.failure(IdempotencyAlreadyInProgressError(SECRET), rec, key="k")
        em.check_time_budget(100, rec, key="k")
        try:
            em.check_time_budget(10_000, rec, key="k", step="charge")
        except TimeoutBudgetExceeded as exc:
            em.failure(exc, rec, key="k")

    @em.handler
    def raising(ev: Any, context: Any) -> Any:
        raise IdempotencyAlreadyInProgressError(SECRET)

    try:
        raising(event("apigw_rest"), Ctx())
    except IdempotencyAlreadyInProgressError:
        pass
    r.done()


@scenario
def bad_construction_and_log_level_filter(out: list[str]) -> None:
    """Invalid constructor values (each a warning), and Lambda's JSON log-level filter (level on EMF documents)."""
    r = Run(out, service="bad\nservice", namespace="AWS/Reserved", operation="", dimensions={"": "x", "A": ""},
            redact_keys=["password", 5])
    with r.em.invocation(Ctx(), cold_start=True):
        r.em.succeeded(key="k")
    r.done()


@scenario
def failing_sink(out: list[str]) -> None:
    """A sink that fails every other write: the lines it lost counted (sink_error) and said on stderr."""
    r = Run(out)
    writes = [0]
    memory_write = r.sink.write_lines

    def flaky(lines: Any) -> None:
        writes[0] += 1
        if writes[0] % 2 == 0:
            raise OSError(SECRET)
        memory_write(lines)

    r.sink.write_lines = flaky  # type: ignore[method-assign]
    with r.em.invocation(Ctx(), operation="Flaky", cold_start=True):
        r.em.records(event("sqs_fifo"))
        r.em.succeeded(key="k")
        r.em.succeeded(key="k2")
    r.done()


@contextmanager
def environment(**values: str) -> Iterator[None]:
    import os

    saved = {k: os.environ.get(k) for k in (*ENV_CLEARED, *values)}
    try:
        for k in ENV_CLEARED:
            os.environ.pop(k, None)
        os.environ.update(values)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_all() -> list[str]:
    """Every scenario's output lines, each scenario under a ``# name`` line; stderr lines prefixed ``# stderr``."""
    out: list[str] = []
    for name, fn in SCENARIOS.items():
        out.append(f"# {name}")
        env = {"_X_AMZN_TRACE_ID": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"}
        if name == "bad_construction_and_log_level_filter":
            env.update(AWS_LAMBDA_LOG_FORMAT="JSON", AWS_LAMBDA_LOG_LEVEL="WARN", AWS_LAMBDA_FUNCTION_NAME="env-fn")
        err = io.StringIO()
        with environment(**env), redirect_stderr(err):
            fn(out)
        out.extend(f"# stderr {line}" for line in err.getvalue().splitlines())
    return out


def test_output_is_byte_identical_to_the_snapshot() -> None:
    got = run_all()
    want = GOLDEN.read_text(encoding="ascii").split("\n")[:-1]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"line {i + 1} differs"


def test_every_line_is_compact_json_of_itself() -> None:
    """An independent oracle: each written line is one JSON object, encoded as json.dumps with compact separators
    encodes what it parses to; none carries the secret."""
    lines = [line for line in run_all() if not line.startswith("#")]
    assert len(lines) > 500
    for line in lines:
        obj = json.loads(line)
        assert isinstance(obj, dict)
        assert json.dumps(obj, separators=(",", ":")) == line
        assert SECRET not in line


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text("\n".join(run_all()) + "\n", encoding="ascii")
        print(f"wrote {GOLDEN}")
    else:
        sys.exit("usage: python tests/unit/emitter/test_golden_output.py --write")
