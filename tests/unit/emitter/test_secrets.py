"""Secret values seeded through every entry point never reach the output."""

from __future__ import annotations

import json

import pytest

from emitter import DEFAULT_REDACTED_KEYS, Emitter, FileSink, MemorySink

SECRETS = {
    "body": "SECRET-BODY-4111111111111111",
    "auth": "SECRET-BEARER-eyJhbGciOi",
    "cookie": "SECRET-COOKIE-session",
    "image": "SECRET-DDB-IMAGE",
    "detail": "SECRET-EB-DETAIL",
    "sns": "SECRET-SNS-MESSAGE",
    "receipt": "SECRET-RECEIPT-HANDLE",
    "kinesis": "U0VDUkVULUtJTkVTSVMtREFUQQ==",
    "password": "SECRET-PASSWORD-hunter2",
    "nested_token": "SECRET-NESTED-TOKEN",
    "api_key": "SECRET-API-KEY",
    "card": "SECRET-CARD-5500000000000004",
    "cvv": "SECRET-CVV-987",
    "exc": "SECRET-IN-EXCEPTION-MESSAGE",
    "key_part": "SECRET-ORDER-KEY-PART",
    "client_ctx": "SECRET-CLIENT-CONTEXT",
    "opaque": "SECRET-OPAQUE-STR",
    "raw": "SECRET-RAW-RECORD",
    "big": "SECRET-IN-A-HUGE-PROPERTY",
}


def seeded_events() -> list[dict]:
    s = SECRETS
    return [
        {"Records": [{"messageId": "m1", "receiptHandle": s["receipt"], "body": s["body"], "eventSource": "aws:sqs",
                      "attributes": {"ApproximateReceiveCount": "2", "SentTimestamp": "1767608400000"},
                      "messageAttributes": {"Authorization": {"stringValue": s["auth"], "dataType": "String"}},
                      "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q"}]},
        {"Records": [{"eventSource": "aws:kinesis", "eventID": "shardId-0:1",
                      "kinesis": {"sequenceNumber": "1", "data": s["kinesis"], "partitionKey": s["card"],
                                  "approximateArrivalTimestamp": 1767608400.5}}]},
        {"Records": [{"eventSource": "aws:dynamodb", "eventID": "d1", "eventName": "INSERT",
                      "dynamodb": {"SequenceNumber": "9", "NewImage": {"secret": {"S": s["image"]}},
                                   "Keys": {"pk": {"S": s["image"]}}, "ApproximateCreationDateTime": 1767608400}}]},
        {"version": "0", "id": "eb-1", "detail-type": "Order Placed", "source": "shop", "time": "2026-01-05T10:20:00Z",
         "detail": {"note": s["detail"]}},
        {"resource": "/o", "httpMethod": "POST", "headers": {"Authorization": s["auth"], "Cookie": s["cookie"],
                                                             "Idempotency-Key": "acme:" + s["key_part"]},
         "requestContext": {"requestId": "r-1", "requestTimeEpoch": 1767608400000}, "body": s["body"]},
        {"version": "2.0", "routeKey": "POST /o", "cookies": [s["cookie"]],
         "headers": {"authorization": s["auth"], "idempotency-key": "acme:" + s["key_part"]},
         "requestContext": {"requestId": "r-2", "http": {"method": "POST"}, "timeEpoch": 1767608400000},
         "body": s["body"]},
        {"requestContext": {"elb": {"targetGroupArn": "arn:aws:elasticloadbalancing:r:1:targetgroup/tg/1"}},
         "httpMethod": "POST", "headers": {"x-amzn-trace-id": "Root=1-a", "cookie": s["cookie"],
                                            "idempotency-key": "acme:" + s["key_part"]}, "body": s["body"]},
        {"Records": [{"EventSource": "aws:sns", "Sns": {"MessageId": "sns-1", "Message": s["sns"],
                                                        "Timestamp": "2026-01-05T10:20:00.000Z",
                                                        "MessageAttributes": {"token": {"Type": "String", "Value": s["auth"]}}}}]},
        {"anything": s["body"], "password": s["password"]},
    ]


class Ctx:
    aws_request_id = "req-1"
    function_name = "fn"
    client_context = {"custom": {"token": SECRETS["client_ctx"]}}
    identity = {"cognito_identity_id": SECRETS["client_ctx"]}

    def get_remaining_time_in_millis(self) -> int:
        return 1000


class Opaque:
    def __str__(self) -> str:
        return SECRETS["opaque"]

    __repr__ = __str__


def drive(em: Emitter) -> None:
    s = SECRETS

    @em.handler(operation="Secrets")
    def handler(event, context):
        recs = em.records(event) if "Records" in event else [em.record_for(event)]
        for r in recs:
            em.claimed(r, password=s["password"], expires_at_ms=1767608460000)
            em.succeeded(r, auth={"headers": {"Authorization": s["auth"], "X-Api-Key": s["api_key"]}},
                         payment={"card_number": s["card"], "CVV": s["cvv"], "deep": [{"access_token": s["nested_token"]}]})
            em.side_effect_started(r, side_effect_ref="ch_1", Api_Key=s["api_key"], raw=r.raw, body=s["body"])
            em.failure(ValueError(s["exc"]), r)
            em.failure(RuntimeError(s["exc"]), r, secret=s["password"])
            em.retryable_failure(r, thing=Opaque(), record_copy=r, note=s["big"] * 20000)
            em.record_outcome("payload_conflict", r, key="acme:" + s["key_part"], detail=s["detail"])
            em.batch_item_failures([r])
        raise RuntimeError(s["exc"])

    for ev in seeded_events():
        with pytest.raises(RuntimeError):
            handler(ev, Ctx())


def test_no_secret_reaches_the_output(tmp_path):
    mem = MemorySink()
    em = Emitter(service="secrets", sink=mem, hash_idempotency_keys=True)
    drive(em)
    file_path = tmp_path / "out.log"
    drive(Emitter(service="secrets", sink=FileSink(file_path), hash_idempotency_keys=True))
    for text in ("\n".join(mem.lines), file_path.read_text()):
        assert len(text) > 10_000  # plenty was written
        leaked = [name for name, value in SECRETS.items() if value in text]
        assert leaked == []
        for line in text.splitlines():
            json.loads(line)
    records = [json.loads(line) for line in mem.lines]
    keys = {r["idempotency_key"] for r in records if "idempotency_key" in r}
    assert keys and all(k.startswith("acme:sha256:") for k in keys if k.startswith("acme:"))
    assert any(r.get("password") == "***REDACTED***" for r in records)
    assert any(r.get("payment", {}).get("CVV") == "***REDACTED***" for r in records)


def test_hashing_keeps_tenant_prefix_and_is_stable():
    import hashlib
    import hmac

    mem = MemorySink()
    em = Emitter(service="s", sink=mem, hash_idempotency_keys=True)
    em.succeeded(None, "acme:order-1")
    em.succeeded(None, "acme:order-1")
    em.succeeded(None, "no-tenant-key")
    salted = Emitter(service="s", sink=mem, hash_idempotency_keys=True, key_hash_salt="pepper")
    salted.succeeded(None, "acme:order-1")
    keys = [r["idempotency_key"] for r in mem.records()]
    want = "acme:sha256:" + hashlib.sha256(b"order-1").hexdigest()[:32]
    assert keys[0] == keys[1] == want
    assert keys[2] == "sha256:" + hashlib.sha256(b"no-tenant-key").hexdigest()[:32]
    assert keys[3] == "acme:sha256:" + hmac.new(b"pepper", b"order-1", hashlib.sha256).hexdigest()[:32]


def test_redaction_is_configurable_and_case_insensitive():
    mem = MemorySink()
    em = Emitter(service="s", sink=mem, redact_keys={"Customer-Email"})
    em.succeeded(None, "k", customer_email="a@b.c", password="still-visible-when-not-listed", body="payload")
    (r,) = mem.records()
    assert r["customer_email"] == "***REDACTED***"
    assert r["password"] == "still-visible-when-not-listed"  # the default list was replaced
    assert r["body"] == "***REDACTED***"  # payload names are always redacted
    assert {"password", "authorization", "cvv", "card_number", "token"} <= DEFAULT_REDACTED_KEYS


def test_event_record_repr_hides_raw(load_event):
    from emitter.adapters import adapt_event

    recs, _ = adapt_event(load_event("sqs_standard"), 0)
    assert "4111111111111111" not in repr(recs[0]) and "card_number" not in repr(recs[0])
