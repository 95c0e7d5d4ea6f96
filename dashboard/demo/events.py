"""Lambda event payloads of the four sources, in the shapes AWS documents (sample events in
https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html, .../with-kinesis.html,
.../services-apigateway.html, and EventBridge's event structure reference)."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import uuid
from typing import Any

from .constants import ACCOUNT_ID, LEDGER_STREAM_NAME, ORDERS_QUEUE, REGION
from .logs import iso_ms

__all__ = [
    "api_event",
    "eventbridge_event",
    "kinesis_event",
    "kinesis_record",
    "payload_hash",
    "request_id",
    "sqs_event",
    "sqs_record",
]


def request_id(rng: random.Random) -> str:
    """A UUID4-shaped id from a seeded RNG (never ``uuid.uuid4()``: runs must be reproducible)."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def payload_hash(payload: Any) -> str:
    """MD5 of the canonical JSON of ``payload`` (what Powertools hashes for payload validation)."""
    return hashlib.md5(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def sqs_record(message_id: str, body: str, sent_ms: int, receive_count: int, first_receive_ms: int) -> dict[str, Any]:
    return {
        "messageId": message_id,
        "receiptHandle": f"AQEB{hashlib.sha1(f'{message_id}:{receive_count}'.encode()).hexdigest()}",
        "body": body,
        "attributes": {
            "ApproximateReceiveCount": str(receive_count),
            "SentTimestamp": str(sent_ms),
            "SenderId": "AIDAIENQZJOLO23YVJ4VO",
            "ApproximateFirstReceiveTimestamp": str(first_receive_ms),
        },
        "messageAttributes": {},
        "md5OfBody": hashlib.md5(body.encode()).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:{ORDERS_QUEUE}",
        "awsRegion": REGION,
    }


def sqs_event(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"Records": records}


def kinesis_record(shard: str, sequence_number: str, partition_key: str, data: dict[str, Any] | str,
                   arrival_ms: int) -> dict[str, Any]:
    raw = data if isinstance(data, str) else json.dumps(data, sort_keys=True)
    return {
        "kinesis": {
            "kinesisSchemaVersion": "1.0",
            "partitionKey": partition_key,
            "sequenceNumber": sequence_number,
            "data": base64.b64encode(raw.encode()).decode(),
            "approximateArrivalTimestamp": arrival_ms / 1000.0,
        },
        "eventSource": "aws:kinesis",
        "eventVersion": "1.0",
        "eventID": f"{shard}:{sequence_number}",
        "eventName": "aws:kinesis:record",
        "invokeIdentityArn": f"arn:aws:iam::{ACCOUNT_ID}:role/ledger-stream-role",
        "awsRegion": REGION,
        "eventSourceARN": f"arn:aws:kinesis:{REGION}:{ACCOUNT_ID}:stream/{LEDGER_STREAM_NAME}",
    }


def kinesis_event(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"Records": records}


def api_event(request_id_: str, idempotency_key: str | None, body: dict[str, Any], at_ms: int,
              correlation_id: str) -> dict[str, Any]:
    """API Gateway REST (v1 payload) proxy event for ``POST /cases``."""
    headers = {"Content-Type": "application/json", "X-Correlation-Id": correlation_id,
               "User-Agent": "shop-web/4.2"}
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    return {
        "resource": "/cases",
        "path": "/cases",
        "httpMethod": "POST",
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "accountId": ACCOUNT_ID, "apiId": "a1b2c3d4e5", "resourcePath": "/cases", "httpMethod": "POST",
            "requestId": request_id_, "stage": "prod", "requestTimeEpoch": at_ms, "path": "/prod/cases",
            "protocol": "HTTP/1.1", "identity": {"sourceIp": "198.51.100.7"},
        },
        "body": json.dumps(body, sort_keys=True),
        "isBase64Encoded": False,
    }


def eventbridge_event(event_id: str, detail: dict[str, Any], at_ms: int) -> dict[str, Any]:
    # EventBridge "time" has second precision.
    return {
        "version": "0",
        "id": event_id,
        "detail-type": "PaymentRequested",
        "source": "shop.orders",
        "account": ACCOUNT_ID,
        "time": iso_ms(at_ms - at_ms % 1000)[:-5] + "Z",
        "region": REGION,
        "resources": [],
        "detail": detail,
    }
