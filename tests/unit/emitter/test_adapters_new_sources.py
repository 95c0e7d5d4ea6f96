"""Adapters for VPC Lattice (v1, v2), Lambda function URLs, API Gateway WebSocket, Kafka (MSK, self-managed) and
Amazon MQ (ActiveMQ, RabbitMQ) on real-shaped sample events (tests/unit/emitter/events/, shaped after the AWS
Lambda documentation samples and Powertools' test events, values of our own).

Expected values are read off the sample files by hand; times are converted with ``datetime`` (an independent
clock). Powertools' event data classes read the same events as a second, independent reader.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from emitter import EventSource, Outcome
from emitter.adapters import adapt_event, adapt_single, detect_source, parse_java_date_ms


def utc_ms(*args: int) -> int:
    return int(datetime(*args, tzinfo=UTC).timestamp() * 1000)


# --------------------------------------------------------------------------- VPC Lattice
# The unit of requestContext.timeEpoch: no sentence of the AWS documentation pages searched states it (VPC Lattice
# User Guide "Lambda functions as targets in VPC Lattice", section "Receive events from the VPC Lattice service", event
# structures v1 and v2; Lambda Developer Guide "services-vpc-lattice"); v1 has no timeEpoch at all. The v2 sample
# value has 16 digits. The one explicit statement found is in Powertools for AWS Lambda (Python), the parser model
# VpcLatticeV2RequestContext.time_epoch: "The request timestamp in epoch microseconds." (examples
# [1696331543569073]); its time_epoch_as_datetime divides by 1000 (to milliseconds). Both tests below rest on that
# and on the magnitude; test_powertools_parser_model_reads_the_same_instant uses the model as the oracle.
def test_vpc_lattice_v2_time_epoch_is_microseconds(make, read, load_event, clock):
    # Issue 11: "VPC Lattice v2 events (version: "2.0", requestContext.timeEpoch in microseconds) are taken for API
    # Gateway HTTP, with no event id and a record age computed from a year-55,000 timestamp."
    ev = load_event("vpc_lattice_v2")
    us = int(ev["requestContext"]["timeEpoch"])
    assert datetime.fromtimestamp(us / 1e6, UTC).year == 2023  # read as microseconds: the sample's date
    with pytest.raises((ValueError, OverflowError, OSError)):
        datetime.fromtimestamp(us / 1e3, UTC)  # read as milliseconds: past year 9999 (the old bug)
    clock[0] = 1696331543569 + 431
    em, sink = make()
    r = em.record_for(ev)
    assert r.event_source is EventSource.VPC_LATTICE
    assert r.sent_at_ms == 1696331543569
    assert r.record_age_ms == 431
    assert r.event_id == "Root=1-652b1c3a-5f302e550dcde3b12402207d"
    assert r.idempotency_key == "acme:lattice-v2-1" and r.correlation_id == "corr-lattice-2"
    assert r.details == {"http_method": "POST", "lattice_version": "2.0", "service": "svc-0a40eebed65f8d69c",
                         "target_group": "tg-6d0ecf831eec9f09"}
    em.flush()
    out = read(sink)
    (rec,) = [o for o in out.outcomes if o["outcome"] == "received"]
    assert rec["event_source"] == "vpc-lattice" and rec["record_age_ms"] == 431
    assert out.metric_values("RecordAge") == [431]


def test_vpc_lattice_v1_has_no_time(make, load_event, clock):
    clock[0] = 1_700_000_000_000
    em, _ = make()
    r = em.record_for(load_event("vpc_lattice_v1"))
    assert r.event_source is EventSource.VPC_LATTICE
    assert r.sent_at_ms is None and r.record_age_ms is None
    assert r.event_id is None  # v1 carries no request id and this request no trace header
    assert r.idempotency_key == "acme:lattice-v1-1"
    assert r.details["http_method"] == "GET" and r.details["lattice_version"] == "1"


# --------------------------------------------------------------------------- function URLs
def test_function_url_has_its_own_label(make, load_event, clock):
    clock[0] = 1659687279885 + 15
    em, _ = make()
    r = em.record_for(load_event("function_url"))
    assert r.event_source is EventSource.FUNCTION_URL
    assert r.event_id == "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"
    assert r.sent_at_ms == utc_ms(2022, 8, 5, 8, 14, 39) + 885  # requestContext.time + the ms of timeEpoch
    assert r.record_age_ms == 15
    assert r.idempotency_key == "acme:url-1" and r.correlation_id == "req-url-7"
    assert r.details["http_method"] == "POST" and r.details["route_key"] == "$default"


def test_http_api_on_execute_api_domain_stays_http(load_event):
    assert detect_source(load_event("apigw_http")) is EventSource.API_GATEWAY_HTTP


# --------------------------------------------------------------------------- WebSocket
def test_websocket_message_event_id_is_the_message_id(make, load_event, clock):
    # "$context.messageId: A unique server-side ID for a message. Available only when the $context.eventType is
    # MESSAGE." (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-websocket-api-mapping-template-reference.html)
    clock[0] = 1552988385573 + 27
    em, _ = make()
    r = em.record_for(load_event("websocket_message"))
    assert r.event_source is EventSource.API_GATEWAY_WEBSOCKET
    assert r.event_id == "WyHPVeJ6hcwCH8A="
    assert r.sent_at_ms == utc_ms(2019, 3, 19, 9, 39, 45) + 573  # requestTime + the ms of requestTimeEpoch
    assert r.record_age_ms == 27
    assert r.details == {"event_type": "MESSAGE", "route_key": "sendmessage", "connection_id": "WyHPAfymhcwCENw=",
                         "stage": "Dev", "api_id": "myapiID", "connected_at_ms": 1552988358417}


def test_websocket_connect_uses_the_request_id(make, load_event, clock):
    # "$context.eventType: The event type: CONNECT, MESSAGE, or DISCONNECT." (same page); CONNECT has no messageId
    clock[0] = 1552988358425
    em, _ = make()
    r = em.record_for(load_event("websocket_connect"))
    assert r.event_source is EventSource.API_GATEWAY_WEBSOCKET
    assert r.event_id == "WyHPAHbQBcwFWMw=" and r.record_age_ms == 0
    assert r.idempotency_key == "acme:ws-connect-1" and r.correlation_id == "corr-ws-1"
    assert r.details["event_type"] == "CONNECT" and r.details["route_key"] == "$connect"


@pytest.mark.parametrize("event_type", ["CONNECT", "DISCONNECT"])
def test_websocket_connect_and_disconnect_use_the_request_id_even_with_a_message_id(load_event, event_type):
    """Issue 40: "$context.messageId ... Available only when the $context.eventType is MESSAGE" (API Gateway
    WebSocket context variables), so a CONNECT or DISCONNECT event that carries one anyway is identified by its
    ``requestId``, never by the ``messageId``; a MESSAGE event by its ``messageId``."""
    ev = load_event("websocket_connect")
    ev["requestContext"]["eventType"] = event_type
    ev["requestContext"]["messageId"] = "not-for-connect-or-disconnect"
    (rec,), errors = adapt_event(ev, 1552988358425)
    assert errors == [] and rec.event_source is EventSource.API_GATEWAY_WEBSOCKET
    assert rec.event_id == "WyHPAHbQBcwFWMw="
    ev["requestContext"]["eventType"] = "MESSAGE"
    (rec,), _ = adapt_event(ev, 1552988358425)
    assert rec.event_id == "not-for-connect-or-disconnect"


# --------------------------------------------------------------------------- Kafka
def test_msk_batch(make, read, load_event, clock):
    clock[0] = 1545084652500
    em, sink = make()
    recs = em.records(load_event("kafka_msk"))
    assert [r.event_id for r in recs] == ["mytopic-0:15", "mytopic-0:16", "mytopic-1:7"]
    assert {r.event_source for r in recs} == {EventSource.MSK}
    assert [r.sent_at_ms for r in recs] == [1545084650987, 1545084651987, 1545084652000]
    assert [r.record_age_ms for r in recs] == [1513, 513, 500]
    assert [r.attempt for r in recs] == [1, 1, 1]
    assert [(r.details["partition"], r.details["offset"]) for r in recs] == [(0, 15), (0, 16), (1, 7)]
    assert [r.details["timestamp_type"] for r in recs] == ["CREATE_TIME", "CREATE_TIME", "LOG_APPEND_TIME"]
    assert recs[0].details["cluster"] == "SalesCluster" and recs[0].details["topic"] == "mytopic"
    assert recs[0].idempotency_key == "acme:kafka-15" and recs[0].correlation_id == "corr-kafka-1"
    assert recs[1].idempotency_key is None
    em.flush()
    out = read(sink)
    assert out.metric_sum("EventsReceived") == 3
    assert sorted(out.metric_values("RecordAge")) == [500, 513, 1513]
    received = [o for o in out.outcomes if o["outcome"] == Outcome.RECEIVED.value]
    assert [o["offset"] for o in received] == [15, 16, 7] and {o["event_source"] for o in received} == {"msk"}


def test_self_managed_kafka(make, load_event, clock):
    clock[0] = 1545084650987
    em, _ = make()
    (r,) = em.records(load_event("kafka_self_managed"))
    assert r.event_source is EventSource.SELF_MANAGED_KAFKA
    assert r.event_id == "mytopic-0:15" and r.record_age_ms == 0
    assert "cluster" not in r.details or r.details["cluster"] is None  # no eventSourceArn for self-managed Kafka


def test_single_kafka_record_through_record_for(make, load_event):
    em, _ = make()
    assert em.record_for(load_event("kafka_self_managed")).event_id == "mytopic-0:15"
    r, err = adapt_single(load_event("kafka_msk"), 0)
    assert err is None and r.event_source is EventSource.MSK and r.details == {"batch_size": 3}


# --------------------------------------------------------------------------- Amazon MQ
def test_activemq(make, load_event, clock):
    clock[0] = 1598827812000
    em, _ = make()
    recs = em.records(load_event("activemq"))
    assert [r.event_id[-9:] for r in recs] == ["4:1:1:1:1", "4:1:1:1:2", "4:1:1:1:3"]
    assert {r.event_source for r in recs} == {EventSource.ACTIVEMQ}
    assert [r.attempt for r in recs] == [1, 2, 1]  # redelivered: true -> a redelivery
    # timestamp (ms); the third has timestamp 0 (producer disabled it): brokerInTime
    assert [r.sent_at_ms for r in recs] == [1598827811958, 1598827810958, 1598827811500]
    assert [r.record_age_ms for r in recs] == [42, 1042, 500]
    assert recs[0].details["queue"] == "testQueue" and recs[0].details["broker"] == "test"
    assert recs[0].idempotency_key == "acme:amq-1" and recs[1].correlation_id == "corr-amq-2"


def test_rabbitmq(make, read, load_event, clock):
    sent = int(datetime.strptime("Dec 1, 2026, 3:04:05 PM", "%b %d, %Y, %I:%M:%S %p")
               .replace(tzinfo=UTC).timestamp() * 1000)
    clock[0] = sent + 2000
    em, sink = make()
    recs = em.records(load_event("rabbitmq"))
    assert [r.event_id for r in recs] == ["rmq-msg-1", None, "rmq-msg-3"]
    assert [r.attempt for r in recs] == [1, 4, 2]  # x-delivery-count 3 -> 4th attempt; redelivered -> 2
    assert [r.sent_at_ms for r in recs] == [sent, 2_021_000, None]  # "Jan 1, 1970, 12:33:41 AM" = 2021 s
    assert recs[0].record_age_ms == 2000 and recs[2].record_age_ms is None
    assert [(r.details["queue"], r.details["vhost"]) for r in recs] == [("pizzaQueue", "/"), ("pizzaQueue", "/"),
                                                                         ("audit", "prod")]
    assert recs[0].details["broker"] == "pizzaBroker"
    assert recs[0].idempotency_key == "acme:rmq-1" and recs[0].correlation_id == "corr-rmq-1"
    em.flush()
    assert read(sink).metric_sum("Redelivery") == 2


@pytest.mark.parametrize("text", ["Jan 1, 1970, 12:33:41 AM", "Feb 29, 2024, 11:59:59 PM", "Dec 31, 1999, 12:00:00 PM",
                                  "Jul 4, 2026, 1:02:03 AM"])
def test_java_date_parser_matches_datetime(text):
    want = datetime.strptime(text, "%b %d, %Y, %I:%M:%S %p").replace(tzinfo=UTC).timestamp() * 1000
    assert parse_java_date_ms(text) == int(want)


@pytest.mark.parametrize("text", [None, 5, "", "Jan 1 1970", "Foo 1, 1970, 1:00:00 AM", "Jan 1, 1970, 13:00:00 AM",
                                  "Jan 1, 1970, 1:00 AM", "Jan x, 1970, 1:00:00 AM"])
def test_java_date_parser_rejects(text):
    assert parse_java_date_ms(text) is None


# --------------------------------------------------------------------------- hostile input
@pytest.mark.parametrize("event", [
    {"eventSource": "aws:kafka", "records": None},
    {"eventSource": "aws:kafka", "records": {"t-0": "nope"}},
    {"eventSource": "aws:kafka", "records": {"t-0": [None, 5, {"topic": 1, "partition": "x", "timestamp": 1e300}]}},
    {"eventSource": "aws:kafka", "records": {"t-0": [{"headers": [{"idempotency-key": [999, -1]}, "x", None]}]}},
    {"eventSource": "aws:amq", "messages": [{"messageID": 5, "redelivered": "yes", "destination": "q"}]},
    {"eventSource": "aws:rmq", "rmqMessagesByQueue": {"q": [{"basicProperties": {"headers": {"x-delivery-count": 10**400}}}]}},
    {"requestContext": {"connectionId": "c", "eventType": 5, "requestTimeEpoch": "nan"}},
    {"version": "2.0", "requestContext": {"serviceArn": 5, "timeEpoch": "1e400"}, "method": "GET"},
])
def test_malformed_new_sources_never_raise(make, read, event):
    em, sink = make()
    recs = em.records(event)
    em.flush()
    assert all(r.attempt >= 1 for r in recs)
    out = read(sink)
    assert out.metric_sum("EventsReceived") == len(recs)
    assert all(len(line) < 256 * 1024 for line in sink.lines)


def test_malformed_kafka_records_are_counted(make, read):
    em, sink = make()
    recs = em.records({"eventSource": "aws:kafka", "records": {"t-0": [None, {"topic": "t", "partition": 0,
                                                                           "offset": 1}], "t-1": "bad"}})
    assert [r.event_source for r in recs] == [EventSource.MSK, EventSource.MSK]
    assert recs[1].event_id == "t-0:1"
    (w,) = read(sink).warnings
    assert [d["code"] for d in w["idemwatch_dropped"]] == ["adapter_error", "adapter_error"]


# --------------------------------------------------------------------------- detection and oracle
@pytest.mark.parametrize("name,source", [
    ("vpc_lattice_v1", EventSource.VPC_LATTICE), ("vpc_lattice_v2", EventSource.VPC_LATTICE),
    ("function_url", EventSource.FUNCTION_URL), ("websocket_message", EventSource.API_GATEWAY_WEBSOCKET),
    ("websocket_connect", EventSource.API_GATEWAY_WEBSOCKET), ("kafka_msk", EventSource.MSK),
    ("kafka_self_managed", EventSource.SELF_MANAGED_KAFKA), ("activemq", EventSource.ACTIVEMQ),
    ("rabbitmq", EventSource.RABBITMQ),
])
def test_detect_new_sources(load_event, name, source):
    assert detect_source(load_event(name)) is source


def test_powertools_parser_model_reads_the_same_instant(load_event):
    """Powertools' parser model, "The request timestamp in epoch microseconds.", converts timeEpoch to a datetime:
    the instant the adapter reads as ``sent_at_ms``."""
    from aws_lambda_powertools.utilities.parser.models import VpcLatticeV2Model

    ev = load_event("vpc_lattice_v2")
    (mine,), _ = adapt_event(ev, 0)
    when = VpcLatticeV2Model.model_validate(ev).request_context.time_epoch_as_datetime
    assert mine.sent_at_ms == round(when.timestamp() * 1000) == 1696331543569


def test_powertools_data_classes_agree(load_event):
    """Independent oracle: Powertools' event data classes read the same ids and timestamps."""
    from aws_lambda_powertools.utilities.data_classes import (
        APIGatewayWebSocketEvent,
        KafkaEvent,
        LambdaFunctionUrlEvent,
        VPCLatticeEventV2,
    )
    from aws_lambda_powertools.utilities.data_classes.active_mq_event import ActiveMQEvent
    from aws_lambda_powertools.utilities.data_classes.rabbit_mq_event import RabbitMQEvent

    ev = load_event("vpc_lattice_v2")
    (mine,), _ = adapt_event(ev, 0)
    assert mine.sent_at_ms == int(VPCLatticeEventV2(ev).request_context.time_epoch) // 1000
    ev = load_event("function_url")
    (mine,), _ = adapt_event(ev, 0)
    url = LambdaFunctionUrlEvent(ev)
    assert mine.event_id == url.request_context.request_id and mine.sent_at_ms == url.request_context.time_epoch
    ev = load_event("websocket_message")
    (mine,), _ = adapt_event(ev, 0)
    ws = APIGatewayWebSocketEvent(ev).request_context
    assert mine.event_id == ws.message_id and mine.sent_at_ms == ws.request_time_epoch
    assert mine.details["connection_id"] == ws.connection_id and mine.details["event_type"] == ws.event_type
    ev = load_event("kafka_msk")
    mine_recs, _ = adapt_event(ev, 0)
    theirs = list(KafkaEvent(ev).records)
    assert [m.event_id for m in mine_recs] == [f"{t.topic}-{t.partition}:{t.offset}" for t in theirs]
    assert [m.sent_at_ms for m in mine_recs] == [t.timestamp for t in theirs]
    assert mine_recs[0].idempotency_key == theirs[0].decoded_headers["idempotency-key"].decode()
    ev = load_event("activemq")
    mine_recs, _ = adapt_event(ev, 0)
    amq = list(ActiveMQEvent(ev).messages)
    assert [m.event_id for m in mine_recs] == [t.message_id for t in amq]
    assert [m.attempt > 1 for m in mine_recs] == [t.get("redelivered", False) for t in amq]
    ev = load_event("rabbitmq")
    mine_recs, _ = adapt_event(ev, 0)
    rmq = [m for msgs in RabbitMQEvent(ev).rmq_messages_by_queue.values() for m in msgs]
    assert [m.event_id for m in mine_recs] == [t.basic_properties.get("messageId") for t in rmq]
    assert [m.attempt > 1 for m in mine_recs] == [t.redelivered for t in rmq]


@pytest.mark.parametrize("value", [1e300, float("inf"), -5, "1e400", "99999999999999999999999", 10**14, True, "x"])
def test_out_of_range_times_are_absent_not_a_far_future(value):
    ev = {"eventSource": "aws:kafka", "records": {"t-0": [{"topic": "t", "partition": 0, "offset": 1,
                                                          "timestamp": value}]}}
    (r,), errors = adapt_event(ev, 1_767_608_401_000)
    assert errors == [] and r.event_id == "t-0:1"
    assert r.sent_at_ms is None and r.record_age_ms is None


def test_lattice_microseconds_bound():
    ev = {"version": "2.0", "method": "GET", "requestContext": {"serviceArn": "arn:aws:vpc-lattice:r:1:service/s",
                                                                 "timeEpoch": str(10**17 + 5)}}
    r, err = adapt_single(ev, 0)
    assert err is None and r.sent_at_ms is None  # 10**17 µs = 10**14 ms: past MAX_EPOCH_MS
    ev["requestContext"]["timeEpoch"] = str(10**17 - 1000)
    assert adapt_single(ev, 0)[0].sent_at_ms == 10**14 - 1
