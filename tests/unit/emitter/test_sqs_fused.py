"""The fused ``records()`` path for SQS batches (``Emitter._sqs_records``) returns and writes exactly what the general
path does: the adapters' EventRecords, the general ``received`` builder's lines and metrics, the same clock
readings; and the outcome calls that follow write the same bytes. Hypothesis drives batches of plain, odd and
hostile messages (FIFO, message attributes, odd attribute values, long or non-ASCII ids and ARNs, other sources
mixed in, secrets in bodies and attributes) through emitters configured every way that changes a line."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emitter import Emitter, EventRecord, MemorySink, Outcome, StdoutSink
from emitter.adapters import adapt_event
from emitter.contract import REDACTED

NOW = 1_767_608_401_000
SLOTS = EventRecord.__slots__
SECRET = "S3CR3T-fused"

ids = st.one_of(
    st.text(min_size=1, max_size=40),
    st.text(alphabet='"\\\n\u2028<>\x00é✓', min_size=1, max_size=8),
    st.integers(1015, 1030).map(lambda n: "m" * n),  # around MAX_LOG_FIELD_CHARS (1024)
    st.none(), st.integers(0, 5),
)
stamps = st.one_of(
    st.integers(NOW - 10**7, NOW + 10**5).map(str),  # the usual decimal strings (and clock skew)
    st.sampled_from([" 1767608400000 ", "1.7e12", "", "soon", "+5", "١٢٣", "9" * 5000]),
    st.integers(0, NOW), st.none(), st.booleans(),
)
counts = st.one_of(st.integers(-2, 12).map(str), st.sampled_from(["2.0", "x", ""]), st.integers(0, 4), st.none())
arns = st.one_of(
    st.just("arn:aws:sqs:us-east-1:123456789012:orders"),
    st.just("arn:aws:sqs:eu-west-1:123456789012:payments.fifo"),
    st.text(max_size=30).map(lambda t: "arn:aws:sqs:us-east-1:1:" + t),
    st.integers(1020, 1030).map(lambda n: "arn:aws:sqs:us-east-1:1:" + "q" * n),
    st.just("not-an-arn"), st.none(), st.just(["unhashable"]),
)
message_attributes = st.one_of(
    st.just({}), st.none(),
    st.just({"Idempotency-Key": {"stringValue": "acme:k-1", "dataType": "String"}}),
    st.just({"x-correlation-id": {"stringValue": "corr-1", "dataType": "String"}}),
    st.just({"api_key": {"stringValue": SECRET, "dataType": "String"}}),
)


@st.composite
def sqs_message(draw):
    attrs = {"ApproximateReceiveCount": draw(counts), "SentTimestamp": draw(stamps),
             "SenderId": "AIDAIENQZJOLO23YVJ4VO", "ApproximateFirstReceiveTimestamp": draw(stamps)}
    for k in list(attrs):
        if draw(st.integers(0, 19)) == 0:
            del attrs[k]
    if draw(st.integers(0, 7)) == 0:  # FIFO
        attrs.update(MessageGroupId="g-1", MessageDeduplicationId="d-1", SequenceNumber="1867")
    msg = {"messageId": draw(ids), "receiptHandle": "AQEB", "body": json.dumps({"password": SECRET}),
           "attributes": attrs, "messageAttributes": draw(message_attributes),
           "md5OfBody": "x", "eventSource": "aws:sqs", "eventSourceARN": draw(arns), "awsRegion": "us-east-1"}
    odd = draw(st.integers(0, 29))
    if odd == 0:
        return "not a record"
    if odd == 1:
        msg["eventSource"] = "aws:kinesis"
    if odd == 2:
        msg["attributes"] = ["not", "a", "dict"]
    if odd == 3:  # members Lambda always sends, absent: the fused path hands the batch to the general one
        del msg["messageAttributes"]
    if odd == 4:
        del msg["eventSourceARN"]
    return msg


plain_message = st.builds(lambda i, a, s, q: {
    "messageId": f"059f36b4-87a3-44ab-83d2-6619758{i:05d}", "receiptHandle": "AQEB", "body": SECRET,
    "attributes": {"ApproximateReceiveCount": str(a), "SentTimestamp": str(NOW - s),
                   "ApproximateFirstReceiveTimestamp": str(NOW - s + 5)},
    "messageAttributes": {}, "eventSource": "aws:sqs", "eventSourceARN": f"arn:aws:sqs:us-east-1:1:{q}"},
    st.integers(0, 99999), st.integers(1, 5), st.integers(-50, 10**6), st.sampled_from(["orders", "o-2", "é"]))

configs = st.fixed_dictionaries({
    "hash_idempotency_keys": st.booleans(),
    "event_source_dimension": st.booleans(),
    "redact_extra_keys": st.sampled_from([(), ("queue",), ("first_receive_at_ms",), ("queue", "attempt")]),
    "provider": st.sampled_from(["off", "str", "none", "int", "raises", "long", "unicode"]),
})

PROVIDED = {"str": "corr-from-logger", "none": None, "int": 12345, "long": "c" * 1025, "unicode": 'c-"é\u2028'}
"""What each provider config's correlation id provider returns (``raises``: RuntimeError)."""
FUSED_REFUSES = {"int", "long"}
"""Provider values only the general builder writes (converted, or cut with a warning): the fused path hands back."""


def _provider(kind: str):
    if kind == "raises":
        def provider():
            raise RuntimeError("logger gone")
        return provider
    return lambda: PROVIDED[kind]


def _pair(cfg: dict, clock):
    out = []
    for _ in range(2):
        sink = MemorySink()
        em = Emitter(service="orders", sink=sink, clock=clock(), hash_idempotency_keys=cfg["hash_idempotency_keys"],
                     event_source_dimension=cfg["event_source_dimension"],
                     redact_extra_keys=cfg["redact_extra_keys"])
        if cfg["provider"] != "off":
            em.correlation_id_provider = _provider(cfg["provider"])
        out.append((em, sink))
    return out


def _fixed():
    return lambda: NOW


def _ticking():
    t = [NOW]

    def clock():
        t[0] += 7
        return t[0]

    return clock


def _same_records(a: list[EventRecord], b: list[EventRecord]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.__class__ is y.__class__ is EventRecord
        for slot in SLOTS:
            vx, vy = getattr(x, slot), getattr(y, slot)
            assert vx == vy and type(vx) is type(vy), slot
            if slot == "raw":
                assert vx is vy


def _outcomes(em: Emitter, recs: list[EventRecord]) -> None:
    for i, r in enumerate(recs[:5]):
        [em.succeeded, em.duplicate_completed, em.payload_conflict, em.retryable_failure, em.poison_message][i](
            r, key=f"acme:order-{i}", **({"error_code": "Throttled"} if i == 3 else {}))
    em.succeeded(recs[0] if recs else None, token=SECRET, note="n")  # a secret in a property: redacted
    em.batch_item_failures(recs[:2])


def _run(cfg, batch, clock, general: str):
    (fast, fast_sink), (slow, slow_sink) = _pair(cfg, clock)
    event = {"Records": batch}
    with fast.invocation({"aws_request_id": "r-1", "function_name": "fn"}, operation="Op", cold_start=False):
        got = fast.records(event)
        _outcomes(fast, got)
    with slow.invocation({"aws_request_id": "r-1", "function_name": "fn"}, operation="Op", cold_start=False):
        if general == "adapt+received":  # the general path as records() ran it before the fused path
            want = slow.adapt(event)
            slow._received_all(want)
        else:  # the general builder record by record (an independent oracle for the received lines)
            want, errors = adapt_event(event, slow.clock())
            slow._adapter_errors(errors)
            for r in want:
                slow.record_outcome(Outcome.RECEIVED, r)
        _outcomes(slow, want)
    _same_records(got, want)
    assert fast_sink.lines == slow_sink.lines
    assert fast.warnings == slow.warnings
    assert SECRET not in "".join(fast_sink.lines)
    return got, fast_sink


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs, batch=st.lists(sqs_message(), min_size=1, max_size=12))
def test_fused_records_equal_the_general_path_for_any_batch(cfg, batch):
    _run(cfg, batch, _ticking, "adapt+received")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs, batch=st.lists(sqs_message(), min_size=1, max_size=12))
def test_fused_records_equal_the_record_by_record_builder(cfg, batch):
    _run(cfg, batch, _fixed, "record_outcome")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs, batch=st.lists(plain_message, min_size=1, max_size=12))
def test_plain_batches_take_the_fused_path_and_equal_the_general_one(cfg, batch):
    (em, _), = _pair(cfg, _fixed)[:1]
    fused = em._sqs_records(batch, NOW, NOW)
    # plain messages bail out only for a correlation id the general builder must convert or cut
    assert (fused is None) == (cfg["provider"] in FUSED_REFUSES)
    _run(cfg, batch, _ticking, "adapt+received")
    _run(cfg, batch, _fixed, "record_outcome")


def test_fused_lines_by_hand():
    """One plain message, the line and metrics written out by hand."""
    sink = MemorySink()
    em = Emitter(service="orders", sink=sink, clock=lambda: NOW, redact_extra_keys=("first_receive_at_ms",))
    msg = {"messageId": 'id-"1"', "attributes": {"ApproximateReceiveCount": "3", "SentTimestamp": str(NOW - 1500),
                                                 "ApproximateFirstReceiveTimestamp": str(NOW - 900)},
           "messageAttributes": {}, "eventSource": "aws:sqs", "body": SECRET,
           "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:orders"}
    with em.invocation(None, operation="Op", cold_start=False):
        (rec,) = em.records({"Records": [msg]})
    assert (rec.event_id, rec.attempt, rec.record_age_ms, rec.sent_at_ms, rec.raw) == ('id-"1"', 3, 1500, NOW - 1500, msg)
    assert rec.details == {"queue": "orders", "first_receive_at_ms": NOW - 900}
    assert sink.lines[0] == (
        '{"level":"INFO","message":"Event received","timestamp":"2026-01-05T10:20:01.000Z","service":"orders",'
        '"cold_start":false,"operation":"Op","schema_version":"1","outcome":"received","event_source":"sqs",'
        f'"event_id":"id-\\"1\\"","attempt":3,"record_age_ms":1500,"queue":"orders","first_receive_at_ms":"{REDACTED}"}}')
    doc = json.loads(sink.lines[1])
    assert (doc["EventsReceived"], doc["Redelivery"], doc["RecordAge"]) == (1, 1, 1500)
    assert SECRET not in "".join(sink.lines)


@pytest.mark.parametrize("odd", ["fifo", "attributes", "provider", "int_stamp"])
def test_a_message_the_fused_path_does_not_take_sends_the_batch_the_general_way(odd):
    msg = {"messageId": "m-1", "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": str(NOW),
                                              "ApproximateFirstReceiveTimestamp": str(NOW)},
           "messageAttributes": {}, "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:1:q"}
    odd_msg = json.loads(json.dumps(msg))
    em = Emitter(service="s", sink=MemorySink())
    if odd == "fifo":
        odd_msg["attributes"]["MessageGroupId"] = "g"
    elif odd == "attributes":
        odd_msg["messageAttributes"] = {"idempotency-key": {"stringValue": "k"}}
    elif odd == "provider":  # a correlation id the general builder converts to a str
        em.correlation_id_provider = lambda: 12345
    else:
        odd_msg["attributes"]["SentTimestamp"] = NOW
    assert em._sqs_records([msg, odd_msg], NOW, NOW) is None
    assert em.sink.lines == [] and em.pending() == {}  # nothing written before bailing out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(plain_message, min_size=1, max_size=12), extra=st.sampled_from([(), ("queue",),
                                                                                        ("first_receive_at_ms",)]))
def test_fused_lines_to_stdout_are_the_lines_a_memory_sink_gets(batch, extra):
    """On Lambda's sink the fused path writes the batch's received lines as one text (their common prefix joined in
    once): the same bytes StdoutSink.write_lines writes for the lines a MemorySink receives, and nothing else."""
    mem = MemorySink()
    texts = []
    for sink in (mem, StdoutSink()):
        em = Emitter(service="orders", sink=sink, clock=lambda: NOW, redact_extra_keys=extra)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), em.invocation({"aws_request_id": "r-1"}, operation="Op",
                                                            cold_start=False):
            em.records({"Records": batch})
            received = buf.getvalue()
        texts.append(received)
    assert texts[0] == ""
    assert texts[1] == "".join(line + "\n" for line in mem.lines[:len(batch)])
    assert [json.loads(line)["outcome"] for line in texts[1].splitlines()] == ["received"] * len(batch)


def test_fused_lines_to_a_failing_stdout_are_counted_lost():
    """A stdout that refuses the write: every received line of the batch is counted under sink_error, nothing
    raises into the handler, and the metrics are still counted."""

    class Closed(io.StringIO):
        def write(self, s: str) -> int:
            raise OSError("closed")

    em = Emitter(service="orders", sink=StdoutSink(), clock=lambda: NOW)
    batch = [{"messageId": f"m-{i}", "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": str(NOW - 9),
                                                    "ApproximateFirstReceiveTimestamp": str(NOW - 5)},
              "messageAttributes": {}, "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:1:q"}
             for i in range(3)]
    with contextlib.redirect_stdout(Closed()):
        em._begin(None, "Op", None, False)
        recs = em.records({"Records": batch})
        assert len(recs) == 3
        assert em.warnings == {"sink_error": 3}
        assert em.pending()[("Op", None)]["EventsReceived"] == [3]


@pytest.mark.parametrize("room", [40, 400])
def test_a_prefix_leaving_little_room_hands_long_lines_to_the_general_path(room):
    """The fused path skips its per-line size check only when the prefix leaves room for the longest line its parts
    can make. A request id that leaves ``room`` characters: a plain message's line (about 130 characters after the
    prefix) does not fit in 40, so the batch goes the general way; in 400 it fits and the fused path writes it."""
    from emitter import constants as C

    msg = {"messageId": "m-1", "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": str(NOW - 5),
                                              "ApproximateFirstReceiveTimestamp": str(NOW - 4)},
           "messageAttributes": {}, "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:1:orders"}
    em = Emitter(service="orders", sink=MemorySink(), clock=lambda: NOW)
    with em.invocation({"aws_request_id": "r"}, operation="Op", cold_start=False):
        em.records({"Records": [msg]})
        (line,) = em.sink.lines
    head = line[: line.index('"event_id":') + len('"event_id":')]
    tail_len = len(line) - len(head)
    rid = "r" * (C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM - len(head) - room + 1)
    em = Emitter(service="orders", sink=MemorySink(), clock=lambda: NOW)
    with em.invocation({"aws_request_id": rid}, operation="Op", cold_start=False):
        fused = em._sqs_records([msg], NOW, NOW)
    assert (fused is None) == (tail_len > room)
    assert 40 < tail_len < 400


def test_non_bmp_ids_count_twelve_escaped_characters_each_in_the_size_bound():
    """ASCII JSON writes a character outside the BMP as a surrogate pair (``\\ud83d\\ude00``, 12 characters), so
    the fused path's bound on its line (message id, queue name and correlation id) must count 12 per character, not
    6. A request id that leaves about 34 000 characters after the prefix: the line of a message whose id, queue and
    correlation id are 1 000-odd emoji each is longer than that, and must go to the general builder (which shrinks
    it under the limit) rather than be written over the 256 KB event limit."""
    from emitter import constants as C

    emoji = "\U0001F600"
    limit = C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM
    msg = {"messageId": emoji * 1024, "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": str(NOW - 5),
                                                     "ApproximateFirstReceiveTimestamp": str(NOW - 4)},
           "messageAttributes": {}, "eventSource": "aws:sqs",
           "eventSourceARN": "arn:aws:sqs:us-east-1:1:" + emoji * 1000}
    rid = "r" * 228_000
    lines = []
    for fused in (True, False):
        em = Emitter(service="orders", sink=MemorySink(), clock=lambda: NOW)
        em.correlation_id_provider = lambda: emoji * 1024
        with em.invocation({"aws_request_id": rid}, operation="Op", cold_start=False):
            if fused:
                em.records({"Records": [msg]})
            else:  # the general path: adapt, then the received builder
                recs, _ = adapt_event({"Records": [msg]}, NOW)
                em.record_outcome(Outcome.RECEIVED, recs[0])
        lines.append(em.sink.lines)
    assert all(len(line) <= limit for line in lines[0])
    assert lines[0] == lines[1]


@pytest.mark.parametrize("path", ["fused", "received"])
def test_a_record_age_beyond_the_metric_value_range_is_dropped_as_the_general_builder_drops_it(path):
    """A SentTimestamp of ``-9...9`` (120 digits) makes a record age above 2^360, which is no metric value
    (``coerce_metric_value``; CloudWatch refuses it): the general ``received`` builder leaves ``record_age_ms`` out,
    writes an ``invalid_metric_value`` warning and adds no RecordAge value. The fast paths (the fused SQS path, and
    ``received()`` of an adapted record) must write the same lines, not the age in the log record and the EMF
    document."""
    msg = {"messageId": "m1", "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "-" + "9" * 120,
                                             "ApproximateFirstReceiveTimestamp": str(NOW)},
           "messageAttributes": {}, "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:1:q1"}
    out = []
    for general in (False, True):
        em = Emitter(service="orders", sink=MemorySink(), clock=lambda: NOW)
        with em.invocation({"aws_request_id": "r"}, operation="Op", cold_start=False):
            if path == "fused" and not general:
                em.records({"Records": [msg]})
            else:
                recs, _ = adapt_event({"Records": [msg]}, NOW)
                (em.record_outcome(Outcome.RECEIVED, recs[0]) if general else em.received(recs[0]))
        out.append(em.sink.lines)
    fast, general_lines = out
    assert fast == general_lines
    received = json.loads(fast[1])
    assert received["outcome"] == "received" and "record_age_ms" not in received
    assert json.loads(fast[0])["idemwatch_warning"] == "invalid_metric_value"
    assert "RecordAge" not in json.loads(fast[2]) and json.loads(fast[2])["EventsReceived"] == 1


@pytest.mark.parametrize("missing", ["messageAttributes", "eventSourceARN"])
@pytest.mark.parametrize("cfg_provider", ["off", "str"])
def test_a_message_without_message_attributes_or_source_arn_goes_the_general_way_with_the_same_bytes(missing,
                                                                                                      cfg_provider):
    """The fused loop reads messageAttributes and eventSourceARN by subscript (Lambda always sends both): a message
    without one hands the whole batch to the general path, which writes what it always wrote for it (no queue
    detail without an ARN; no attributes is no attributes), and the records equal the record-by-record builder's."""
    cfg = {"hash_idempotency_keys": False, "event_source_dimension": False, "redact_extra_keys": (),
           "provider": cfg_provider}
    batch = [{"messageId": f"m-{i}", "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": str(NOW - 100),
                                                   "ApproximateFirstReceiveTimestamp": str(NOW - 50)},
              "messageAttributes": {}, "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:1:orders"}
             for i in range(3)]
    del batch[1][missing]
    (em, _), = _pair(cfg, _fixed)[:1]
    assert em._sqs_records(batch, NOW, NOW) is None  # handed back before anything is written
    got, sink = _run(cfg, batch, _fixed, "record_outcome")
    received = [json.loads(line) for line in sink.lines if '"outcome":"received"' in line]
    assert [r["event_id"] for r in received] == ["m-0", "m-1", "m-2"]
    assert [r.get("queue") for r in received] == ["orders", None if missing == "eventSourceARN" else "orders", "orders"]
    assert got[1].details.get("queue") == (None if missing == "eventSourceARN" else "orders")


def test_fused_records_get_their_own_details_dicts():
    """The fused path copies one details dict per queue and first-receive time: each record owns its copy."""
    em = Emitter(service="orders", sink=MemorySink(), clock=lambda: NOW)
    batch = [{"messageId": f"m-{i}", "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": str(NOW - 10),
                                                   "ApproximateFirstReceiveTimestamp": str(NOW - 5)},
              "messageAttributes": {}, "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:1:orders"}
             for i in range(3)]
    recs = em._sqs_records(batch, NOW, NOW)
    assert recs is not None and len({id(r.details) for r in recs}) == 3
    recs[0].details["queue"] = "changed"
    assert [r.details for r in recs[1:]] == [{"queue": "orders", "first_receive_at_ms": NOW - 5}] * 2
