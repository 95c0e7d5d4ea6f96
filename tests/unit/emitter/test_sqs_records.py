"""``records()`` over SQS batches: the EventRecords and the ``received`` lines and metrics, checked against values
read from the messages themselves (hypothesis drives plain, odd and hostile batches: FIFO, message attributes, odd
attribute values, long or non-ASCII ids and ARNs, other sources mixed in, secrets in bodies and attributes), and the
two defects that once lived in a copy of the writer (5b04c8a: a record age beyond the metric value range; 771dce7:
a line over the event size with ids outside the BMP)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emitter import Emitter, MemorySink, StdoutSink
from emitter import constants as C
from emitter.contract import REDACTED

NOW = 1_767_608_401_000
SECRET = "S3CR3T-sqs"
MAX = C.MAX_LOG_FIELD_CHARS
LIMIT = C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM

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
    if odd == 3:
        del msg["messageAttributes"]
    if odd == 4:
        del msg["eventSourceARN"]
    return msg


configs = st.fixed_dictionaries({
    "hash_idempotency_keys": st.booleans(),
    "event_source_dimension": st.booleans(),
    "redact_extra_keys": st.sampled_from([(), ("queue",), ("first_receive_at_ms",), ("queue", "attempt")]),
    "provider": st.sampled_from(["off", "str", "none", "int", "raises", "long", "unicode"]),
})

PROVIDED = {"str": "corr-from-logger", "none": None, "int": 12345, "long": "c" * 1025, "unicode": 'c-"é\u2028'}
"""What each provider config's correlation id provider returns (``raises``: RuntimeError)."""


def _provider(kind: str):
    if kind == "raises":
        def provider():
            raise RuntimeError("logger gone")
        return provider
    return lambda: PROVIDED[kind]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs, batch=st.lists(sqs_message(), min_size=1, max_size=12))
def test_received_lines_carry_each_records_values(cfg, batch):
    """One ``received`` line per EventRecord, in order, each the compact JSON of itself, carrying the record's id
    (cut to 1,024 characters), attempt, age and queue (or ``***REDACTED***``), the correlation id the record or the
    provider gives; EventsReceived, Redelivery and RecordAge count exactly those; no secret is ever written."""
    sink = MemorySink()
    em = Emitter(service="orders", sink=sink, clock=lambda: NOW, hash_idempotency_keys=cfg["hash_idempotency_keys"],
                 event_source_dimension=cfg["event_source_dimension"], redact_extra_keys=cfg["redact_extra_keys"])
    if cfg["provider"] != "off":
        em.correlation_id_provider = _provider(cfg["provider"])
    with em.invocation({"aws_request_id": "r-1", "function_name": "fn"}, operation="Op", cold_start=False):
        recs = em.records({"Records": batch})
    assert "internal_error" not in em.warnings
    assert SECRET not in "".join(sink.lines)
    objs = [json.loads(line) for line in sink.lines]
    assert all(line == json.dumps(o, separators=(",", ":")) for line, o in zip(sink.lines, objs))
    received = [o for o in objs if o.get("outcome") == "received"]
    assert len(recs) == len(batch) == len(received)
    provided = None if cfg["provider"] in ("off", "raises") else PROVIDED[cfg["provider"]]
    for rec, line in zip(recs, received):
        assert line.get("event_id") == (None if rec.event_id is None else rec.event_id[:MAX])
        assert line["event_source"] == rec.event_source.value and line["attempt"] == rec.attempt
        assert line.get("record_age_ms") == rec.record_age_ms
        if rec.details.get("queue") is not None:
            redacted = "queue" in cfg["redact_extra_keys"]
            assert line["queue"] == (REDACTED if redacted else rec.details["queue"])
        corr = rec.correlation_id if rec.correlation_id is not None else provided
        assert line.get("correlation_id") == (None if corr is None else str(corr)[:MAX])
    docs = [o for o in objs if "_aws" in o]  # one per EventSource with the dimension on, else one

    def values(name: str) -> list:
        return [v for d in docs if name in d for v in (d[name] if isinstance(d[name], list) else [d[name]])]

    assert len(docs) == (len({r.event_source for r in recs}) if cfg["event_source_dimension"] else 1)
    assert sum(values("EventsReceived")) == len(recs)
    assert sum(values("Redelivery")) == sum(1 for r in recs if r.attempt > 1)
    assert sorted(values("RecordAge")) == sorted(r.record_age_ms for r in recs if r.record_age_ms is not None)


def test_received_line_by_hand():
    """One plain message, the record, line and metrics written out by hand."""
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


def test_received_lines_to_stdout_are_written_once_each():
    """On Lambda's sink a batch's received lines go out in one write, each line once, newline-terminated."""
    batch = [{"messageId": f"m-{i}", "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": str(NOW - 9),
                                                    "ApproximateFirstReceiveTimestamp": str(NOW - 5)},
              "messageAttributes": {}, "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:1:q"}
             for i in range(3)]
    em = Emitter(service="orders", sink=StdoutSink(), clock=lambda: NOW)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), em.invocation({"aws_request_id": "r-1"}, operation="Op", cold_start=False):
        em.records({"Records": batch})
        text = buf.getvalue()
    assert text.endswith("\n")
    assert [json.loads(line)["event_id"] for line in text.splitlines()] == ["m-0", "m-1", "m-2"]


def test_received_lines_to_a_failing_stdout_are_counted_lost():
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


def test_a_record_over_the_event_size_loses_its_largest_detail_not_the_limit():
    """771dce7: ASCII JSON writes a character outside the BMP as a surrogate pair (``\\ud83d\\ude00``, 12
    characters). A request id that leaves about 34 000 characters for the record's own members, and a message
    whose id, queue and correlation id are 1 000-odd emoji each (12 000-odd characters each once escaped): the
    record would be over the 256 KB event limit, so it loses its largest extra member (the ``queue`` detail,
    counted as ``property_too_large``) and stays under the limit with every contract member."""
    emoji = "\U0001F600"
    msg = {"messageId": emoji * 1024, "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": str(NOW - 5),
                                                     "ApproximateFirstReceiveTimestamp": str(NOW - 4)},
           "messageAttributes": {}, "eventSource": "aws:sqs",
           "eventSourceARN": "arn:aws:sqs:us-east-1:1:" + emoji * 1000}
    em = Emitter(service="orders", sink=MemorySink(), clock=lambda: NOW)
    em.correlation_id_provider = lambda: emoji * 1024
    with em.invocation({"aws_request_id": "r" * 228_000}, operation="Op", cold_start=False):
        em.records({"Records": [msg]})
    warning, received, doc = (json.loads(line) for line in em.sink.lines)
    assert len(em.sink.lines[1]) <= LIMIT < len(em.sink.lines[1]) + len(',"queue":') + 12 * 1000 + 2
    assert received["event_id"] == emoji * 1024 and received["correlation_id"] == emoji * 1024
    assert "queue" not in received and received["first_receive_at_ms"] == NOW - 4
    assert warning["idemwatch_dropped"] == [{"code": "property_too_large", "element": "property:queue",
                                              "reason": f"record over {C.MAX_EVENT_BYTES} bytes; property dropped"}]
    assert em.warnings == {"property_too_large": 1} and doc["EventsReceived"] == 1


@pytest.mark.parametrize("path", ["records", "received"])
def test_a_record_age_beyond_the_metric_value_range_is_dropped_with_a_warning(path):
    """5b04c8a: a SentTimestamp of ``-9...9`` (120 digits) makes a record age above 2^360, which is no metric value
    (``coerce_metric_value``; CloudWatch refuses it): the ``received`` record leaves ``record_age_ms`` out, a
    warning says ``invalid_metric_value`` and the EMF document has no RecordAge, whichever call writes it."""
    msg = {"messageId": "m1", "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "-" + "9" * 120,
                                             "ApproximateFirstReceiveTimestamp": str(NOW)},
           "messageAttributes": {}, "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:1:q1"}
    em = Emitter(service="orders", sink=MemorySink(), clock=lambda: NOW)
    with em.invocation({"aws_request_id": "r"}, operation="Op", cold_start=False):
        if path == "records":
            (rec,) = em.records({"Records": [msg]})
        else:
            (rec,) = em.adapt({"Records": [msg]})
            em.received(rec)
    assert rec.record_age_ms == NOW + 10**120 - 1
    warning, received, doc = (json.loads(line) for line in em.sink.lines)
    assert received["outcome"] == "received" and "record_age_ms" not in received
    assert warning["idemwatch_warning"] == "invalid_metric_value"
    assert warning["idemwatch_dropped"][0]["element"] == "RecordAge"
    assert "RecordAge" not in doc and doc["EventsReceived"] == 1


@pytest.mark.parametrize("missing", ["messageAttributes", "eventSourceARN"])
def test_a_message_without_message_attributes_or_source_arn(missing):
    """A message without messageAttributes is a message without attributes; one without eventSourceARN has no
    queue detail. The other messages of the batch keep theirs."""
    batch = [{"messageId": f"m-{i}", "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": str(NOW - 100),
                                                   "ApproximateFirstReceiveTimestamp": str(NOW - 50)},
              "messageAttributes": {}, "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:1:orders"}
             for i in range(3)]
    del batch[1][missing]
    em = Emitter(service="orders", sink=MemorySink(), clock=lambda: NOW)
    with em.invocation({"aws_request_id": "r-1"}, operation="Op", cold_start=False):
        recs = em.records({"Records": batch})
    received = [json.loads(line) for line in em.sink.lines if '"outcome":"received"' in line]
    assert [r["event_id"] for r in received] == ["m-0", "m-1", "m-2"]
    queue = None if missing == "eventSourceARN" else "orders"
    assert [r.get("queue") for r in received] == ["orders", queue, "orders"]
    assert recs[1].details.get("queue") == queue and [r.record_age_ms for r in recs] == [100] * 3
    assert em.warnings == {}


def test_records_get_their_own_details_dicts():
    """Each record owns its details: changing one changes no other."""
    em = Emitter(service="orders", sink=MemorySink(), clock=lambda: NOW)
    batch = [{"messageId": f"m-{i}", "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": str(NOW - 10),
                                                   "ApproximateFirstReceiveTimestamp": str(NOW - 5)},
              "messageAttributes": {}, "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:1:orders"}
             for i in range(3)]
    recs = em.records({"Records": batch})
    recs[0].details["queue"] = "changed"
    assert [r.details for r in recs[1:]] == [{"queue": "orders", "first_receive_at_ms": NOW - 5}] * 2
