"""Adapters on real-shaped AWS sample events (tests/unit/emitter/events/*.json, shaped after the Lambda docs).

Expected values are read off the sample files by hand; record ages are clock minus the sent/arrival time,
computed here with datetime (an independent parser) where the source gives ISO-8601. Powertools' event data
classes serve as a second, independent reader of the same events.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from emitter import EventSource, Outcome
from emitter.adapters import adapt_event, detect_source, parse_iso8601_ms


def iso_ms(s: str) -> int:
    return int(datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() * 1000)


def test_sqs_standard(make, read, load_event, clock):
    clock[0] = 1545082651636
    em, sink = make()
    recs = em.records(load_event("sqs_standard"))
    assert [r.event_id for r in recs] == ["059f36b4-87a3-44ab-83d2-661975830a7d", "2e1424d4-f796-459a-8184-9c92662be6da"]
    assert [r.event_source for r in recs] == [EventSource.SQS, EventSource.SQS]
    assert [r.attempt for r in recs] == [1, 3]
    assert [r.sent_at_ms for r in recs] == [1545082649183, 1545082650636]
    assert [r.record_age_ms for r in recs] == [2453, 1000]
    assert recs[0].idempotency_key == "acme:order-1" and recs[1].idempotency_key is None
    assert recs[0].correlation_id == "corr-42"
    assert recs[0].details["queue"] == "my-queue"
    assert recs[0].details["first_receive_at_ms"] == 1545082649185
    assert "message_group_id" not in recs[0].details
    assert recs[1].item_identifier == "2e1424d4-f796-459a-8184-9c92662be6da"
    em.flush()
    out = read(sink)
    assert out.count(Outcome.RECEIVED.value) == 2
    assert out.metric_sum("EventsReceived") == 2
    assert out.metric_sum("Redelivery") == 1  # only the record with ApproximateReceiveCount 3
    assert sorted(out.metric_values("RecordAge")) == [1000, 2453]
    received = [o for o in out.outcomes if o["outcome"] == "received"]
    assert [o["attempt"] for o in received] == [1, 3]
    assert received[0]["idempotency_key"] == "acme:order-1"


def test_sqs_fifo(make, load_event, clock):
    clock[0] = 1573251511774
    em, _ = make()
    (r,) = em.records(load_event("sqs_fifo"))
    assert r.event_id == "11d6ee51-4cc7-4302-9e22-7cd8afdaadf5"
    assert r.attempt == 2
    assert r.record_age_ms == 1000
    assert r.details["message_group_id"] == "1"
    assert r.details["message_deduplication_id"] == "1"
    assert r.details["sequence_number"] == "18849496460467696128"
    assert r.details["queue"] == "fifo.fifo"
    assert r.item_identifier == "11d6ee51-4cc7-4302-9e22-7cd8afdaadf5"


def test_kinesis(make, load_event, clock):
    clock[0] = 1545084712000
    em, _ = make()
    recs = em.records(load_event("kinesis"))
    assert [r.event_id for r in recs] == [
        "49590338271490256608559692538361571095921575989136588898",
        "49590338271490256608559692540925702759324208523137515618",
    ]
    assert [r.record_age_ms for r in recs] == [61013, 834]
    assert [r.sent_at_ms for r in recs] == [1545084650987, 1545084711166]
    assert {r.details["shard_id"] for r in recs} == {"shardId-000000000006"}
    assert recs[0].details["stream"] == "lambda-stream"
    assert [r.attempt for r in recs] == [1, 1]
    assert recs[1].item_identifier == "49590338271490256608559692540925702759324208523137515618"


def test_dynamodb(make, load_event, clock):
    clock[0] = 1428537700000
    em, _ = make()
    recs = em.records(load_event("dynamodb"))
    assert [r.event_id for r in recs] == ["c4ca4238a0b923820dcc509a6f75849b", "c81e728d9d4c2f636f067f89cc14862c"]
    assert [r.record_age_ms for r in recs] == [100000, 40000]
    assert [r.details["event_name"] for r in recs] == ["INSERT", "MODIFY"]
    assert recs[0].details["table"] == "ExampleTableWithStream"
    # batchItemFailures for DynamoDB Streams take the stream SequenceNumber, not the eventID
    assert [r.item_identifier for r in recs] == ["4421584500000000017450439091", "4421584500000000017450439092"]


def test_eventbridge(make, load_event, clock):
    sent = iso_ms("2017-12-22T18:43:48Z")
    clock[0] = sent + 2500
    em, _ = make()
    r = em.record_for(load_event("eventbridge"))
    assert r.event_source is EventSource.EVENTBRIDGE
    assert r.event_id == "6a7e8feb-b491-4cf7-a9f1-bf3703467718"
    assert r.sent_at_ms == sent and r.record_age_ms == 2500
    assert r.details["source"] == "aws.ec2"
    assert r.details["detail_type"] == "EC2 Instance State-change Notification"


def test_api_gateway_rest(make, load_event, clock):
    clock[0] = 1583798639428 + 72
    em, _ = make()
    r = em.record_for(load_event("apigw_rest"))
    assert r.event_source is EventSource.API_GATEWAY_REST
    assert r.event_id == "77375676-xmpl-4b79-853a-f982474efe18"
    assert r.idempotency_key == "acme:7f1c2a9e-rest"
    assert r.correlation_id == "corr-rest-1"
    assert r.record_age_ms == 72
    assert r.details["http_method"] == "POST" and r.details["resource"] == "/orders"


def test_api_gateway_rest_multivalue_header_only(make, load_event):
    ev = load_event("apigw_rest")
    ev["headers"] = None
    em, _ = make()
    assert em.record_for(ev).idempotency_key == "acme:7f1c2a9e-rest"


def test_api_gateway_http(make, load_event, clock):
    clock[0] = 1583817383220 + 5
    em, _ = make()
    r = em.record_for(load_event("apigw_http"))
    assert r.event_source is EventSource.API_GATEWAY_HTTP
    assert r.event_id == "JKJaXmPLvHcESHA="
    assert r.idempotency_key == "globex:0c9e-http"
    assert r.correlation_id == "corr-http-1"
    assert r.record_age_ms == 5
    assert r.details["route_key"] == "POST /orders"


def test_alb(make, load_event):
    em, _ = make()
    r = em.record_for(load_event("alb"))
    assert r.event_source is EventSource.ALB
    assert r.event_id == "Root=1-5e1b4151-5ac6c58f5b5daa6532e4f2e8"
    assert r.idempotency_key == "initech:alb-55"
    assert r.record_age_ms is None
    assert r.details["target_group"] == "lambda-279XGJDqGZ5rsrHC2Fjr"


def test_sns(make, load_event, clock):
    sent = iso_ms("2019-01-02T12:45:07.000Z")
    clock[0] = sent + 321
    em, _ = make()
    (r,) = em.records(load_event("sns"))
    assert r.event_source is EventSource.SNS
    assert r.event_id == "95df01b4-ee98-5cb9-9903-4c221d41eb5e"
    assert r.record_age_ms == 321
    assert r.idempotency_key == "umbrella:sns-9"
    assert r.details["topic"] == "sns-lambda"


@pytest.mark.parametrize(
    "event",
    [None, 42, "text", [], [1, 2], {}, {"Records": []}, {"Records": "x"}, {"Records": [None, 5, "x"]},
     {"requestContext": "x"}, {"foo": {"bar": 1}}, {"id": 7}, {"detail-type": 1, "source": None, "id": []}],
)
def test_unknown_shapes_are_generic_never_a_crash(make, read, event):
    em, sink = make(strict=True)  # strict: any adapter error would raise
    recs = em.records(event)
    assert all(r.event_source in (EventSource.GENERIC, EventSource.EVENTBRIDGE) for r in recs)
    em.record_for(event)
    out = read(sink)
    assert out.count("received") == len(recs) + 1
    assert out.warnings == []


def test_s3_event_is_generic(make, load_event):
    em, _ = make()
    (r,) = em.records(load_event("s3_unknown"))
    assert r.event_source is EventSource.GENERIC and r.attempt == 1


def test_malformed_known_record_becomes_generic_with_warning(make, read, load_event):
    ev = load_event("sqs_standard")
    ev["Records"][0]["attributes"] = "not-a-dict"  # .get on a str raises inside the adapter
    em, sink = make()
    recs = em.records(ev)
    assert len(recs) == 2
    assert recs[0].event_source is EventSource.SQS and recs[0].event_id == "059f36b4-87a3-44ab-83d2-661975830a7d"
    assert recs[1].attempt == 3  # the healthy record is unaffected
    out = read(sink)
    assert [w["idemwatch_warning"] for w in out.warnings] == ["adapter_error"]
    assert em.warnings == {"adapter_error": 1}
    assert out.count("received") == 2


def test_bad_attribute_values_fall_back(make):
    em, _ = make()
    ev = {"Records": [{"eventSource": "aws:sqs", "messageId": "m", "attributes": {
        "ApproximateReceiveCount": "many", "SentTimestamp": "yesterday"}}]}
    (r,) = em.records(ev)
    assert r.attempt == 1 and r.record_age_ms is None and r.sent_at_ms is None


def test_future_sent_time_gives_age_zero(make, clock):
    em, _ = make()
    ev = {"Records": [{"eventSource": "aws:sqs", "messageId": "m", "attributes": {
        "ApproximateReceiveCount": "1", "SentTimestamp": str(clock[0] + 5000)}}]}
    (r,) = em.records(ev)
    assert r.record_age_ms == 0


def test_record_for_batch(make, load_event):
    em, _ = make()
    one = em.record_for(load_event("sqs_fifo"))
    assert one.event_id == "11d6ee51-4cc7-4302-9e22-7cd8afdaadf5"
    many = em.record_for(load_event("sqs_standard"))
    assert many.event_source is EventSource.SQS and many.details == {"batch_size": 2}


@pytest.mark.parametrize(
    "text,expected",
    [
        ("2017-12-22T18:43:48Z", "2017-12-22T18:43:48+00:00"),
        ("2019-01-02T12:45:07.000Z", "2019-01-02T12:45:07+00:00"),
        ("2024-02-29T23:59:59.999Z", "2024-02-29T23:59:59.999+00:00"),
        ("2000-03-01T00:00:00.5+02:00", "2000-03-01T00:00:00.5+02:00"),
        ("1969-12-31T23:59:59Z", "1969-12-31T23:59:59+00:00"),
        ("2026-01-05T10:20:01.123456-05:30", "2026-01-05T10:20:01.123+00:00"),
    ],
)
def test_iso8601_parser_matches_datetime(text, expected):
    if text.endswith("-05:30"):
        want = int(datetime.fromisoformat("2026-01-05T10:20:01.123-05:30").timestamp() * 1000)
    else:
        want = round(datetime.fromisoformat(expected).timestamp() * 1000)
    assert parse_iso8601_ms(text) == want


@pytest.mark.parametrize("text", ["", "2017-12-22", "yesterday", "2017-13-22T18:43:48Z", "2017-12-22T18:43:48+0200", None, 5])
def test_iso8601_parser_rejects(text):
    assert parse_iso8601_ms(text) is None


def test_powertools_data_classes_agree(load_event):
    """Independent oracle: Powertools' event data classes read the same ids, counts and timestamps."""
    from aws_lambda_powertools.utilities.data_classes import (
        APIGatewayProxyEvent,
        APIGatewayProxyEventV2,
        DynamoDBStreamEvent,
        EventBridgeEvent,
        KinesisStreamEvent,
        SNSEvent,
        SQSEvent,
    )

    ev = load_event("sqs_standard")
    recs, _ = adapt_event(ev, 0)
    for mine, theirs in zip(recs, SQSEvent(ev).records):
        assert mine.event_id == theirs.message_id
        assert mine.attempt == int(theirs.attributes.approximate_receive_count)
        assert mine.sent_at_ms == int(theirs.attributes.sent_timestamp)
    ev = load_event("sqs_fifo")
    (mine,), _ = adapt_event(ev, 0)
    assert mine.details["message_group_id"] == next(SQSEvent(ev).records).attributes.message_group_id
    ev = load_event("kinesis")
    recs, _ = adapt_event(ev, 0)
    for mine, theirs in zip(recs, KinesisStreamEvent(ev).records):
        assert mine.event_id == theirs.kinesis.sequence_number
        assert mine.sent_at_ms == round(theirs.kinesis.approximate_arrival_timestamp * 1000)
    ev = load_event("dynamodb")
    recs, _ = adapt_event(ev, 0)
    for mine, theirs in zip(recs, DynamoDBStreamEvent(ev).records):
        assert mine.event_id == theirs.event_id
        assert mine.item_identifier == theirs.dynamodb.sequence_number
    ev = load_event("eventbridge")
    (mine,), _ = adapt_event(ev, 0)
    eb = EventBridgeEvent(ev)
    assert mine.event_id == eb.get_id and mine.details["detail_type"] == eb.detail_type
    assert mine.sent_at_ms == iso_ms(eb.time)
    ev = load_event("apigw_rest")
    (mine,), _ = adapt_event(ev, 0)
    rest = APIGatewayProxyEvent(ev)
    assert mine.event_id == rest.request_context.request_id
    assert mine.idempotency_key == rest.headers.get("Idempotency-Key")
    ev = load_event("apigw_http")
    (mine,), _ = adapt_event(ev, 0)
    http = APIGatewayProxyEventV2(ev)
    assert mine.event_id == http.request_context.request_id
    assert mine.sent_at_ms == http.request_context.time_epoch
    ev = load_event("sns")
    (mine,), _ = adapt_event(ev, 0)
    assert mine.event_id == SNSEvent(ev).record.sns.message_id


@pytest.mark.parametrize(
    "name,source",
    [("sqs_standard", EventSource.SQS), ("sqs_fifo", EventSource.SQS), ("kinesis", EventSource.KINESIS),
     ("dynamodb", EventSource.DYNAMODB), ("eventbridge", EventSource.EVENTBRIDGE),
     ("apigw_rest", EventSource.API_GATEWAY_REST), ("apigw_http", EventSource.API_GATEWAY_HTTP),
     ("alb", EventSource.ALB), ("sns", EventSource.SNS), ("s3_unknown", EventSource.GENERIC)],
)
def test_detect_source(load_event, name, source):
    assert detect_source(load_event(name)) is source
