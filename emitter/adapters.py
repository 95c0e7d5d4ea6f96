"""Event-source adapters: detect the source of a Lambda event and derive, per record, the fields of an
:class:`~emitter.types.EventRecord` (event id, attempt, record age, source details).

Shapes follow the Lambda event documentation (https://docs.aws.amazon.com/lambda/latest/dg/lambda-services.html):
SQS standard/FIFO, Kinesis Data Streams, DynamoDB Streams, EventBridge, API Gateway REST (payload 1.0), HTTP
(payload 2.0) and WebSocket, Lambda function URLs, Application Load Balancer, SNS, VPC Lattice (event structure
v1 and v2), Amazon MSK and self-managed Apache Kafka, Amazon MQ (ActiveMQ and RabbitMQ). Anything else is a
``generic`` record; an adapter never raises (a malformed record becomes a generic record and the caller reports
the error). The table of ids, attempts, record ages and time units per source is ``docs/event-sources.md``.

Only bounded, non-payload details are extracted: ids, counters, timestamps, names taken from ARNs. Message bodies,
images, headers and attributes are never copied (``raw`` keeps the record for the handler and is never logged).
"""

from __future__ import annotations

from emitter.contract import EventSource
from emitter.types import EventRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

IDEMPOTENCY_HEADER = "idempotency-key"
CORRELATION_HEADERS = ("x-correlation-id", "x-request-id")


# --------------------------------------------------------------------------- helpers
def _norm(name: str) -> str:
    return name.lower().replace("_", "-")


def _header(headers: Any, wanted: str) -> str | None:
    """Case-insensitive header lookup (``-``/``_`` equivalent); multi-value lists give their first value."""
    if not isinstance(headers, dict):
        return None
    for k, v in headers.items():
        if isinstance(k, str) and _norm(k) == wanted:
            if isinstance(v, list):
                v = v[0] if v else None
            return v if isinstance(v, str) and v else None
    return None


_ARN_NAMES: dict[str, str | None] = {}


def _arn_name(arn: Any) -> str | None:
    """Resource name at the end of an ARN (queue, stream, table, topic); None if not an ARN string. Cached
    (bounded): a function sees the same few ARNs on every record."""
    if not isinstance(arn, str) or not arn.startswith("arn:"):
        return None
    hit = _ARN_NAMES.get(arn)
    if hit is None:
        hit = _arn_name_uncached(arn)
        if len(_ARN_NAMES) < 256:
            _ARN_NAMES[arn] = hit
    return hit


def _arn_name_uncached(arn: str) -> str | None:
    tail = arn.split(":", 5)[-1]
    # arn:aws:kinesis:...:stream/name ; arn:aws:dynamodb:...:table/T/stream/2019... ; arn:aws:sqs:...:queue ;
    # arn:aws:vpc-lattice:...:service/svc-1 ; arn:aws:kafka:...:cluster/Name/uuid ; arn:aws:mq:...:broker:Name:b-1
    if tail.startswith("broker:"):
        return tail.split(":", 2)[1]
    parts = tail.split("/")
    if parts[0] in ("stream", "table", "targetgroup", "service", "cluster") and len(parts) > 1:
        return parts[1]
    return parts[0]


def _int(v: Any) -> int | None:
    """An int from an int, a float or a decimal (or float) string; None for anything else (bools included). A
    decimal string over Python's int conversion limit (4300 digits) raises ValueError: the adapter reports the
    record as not understood."""
    if type(v) is str and v.isascii() and v.isdecimal():
        return int(v)
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v == v:
        return int(v)
    if isinstance(v, str):
        try:
            return int(float(v)) if "." in v or "e" in v.lower() else int(v)
        except ValueError:
            return None
    return None


def _seconds_to_ms(v: Any) -> int | None:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    try:
        f = float(v)
    except ValueError:
        return None
    return int(round(f * 1000)) if f == f and abs(f) < 1e12 else None


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's algorithm; avoids importing datetime)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def parse_iso8601_ms(value: Any) -> int | None:
    """Parse ``YYYY-MM-DDTHH:MM:SS[.fff...](Z|+HH:MM|-HH:MM)`` to epoch milliseconds; None if not parseable."""
    if not isinstance(value, str) or len(value) < 19 or value[4] != "-" or value[10] not in "Tt ":
        return None
    try:
        y, mo, d = int(value[0:4]), int(value[5:7]), int(value[8:10])
        h, mi, s = int(value[11:13]), int(value[14:16]), int(value[17:19])
        rest = value[19:]
        ms = 0
        if rest.startswith("."):
            i = 1
            while i < len(rest) and rest[i].isdigit():
                i += 1
            frac = rest[1:i]
            ms = int((frac + "000")[:3]) if frac else 0
            rest = rest[i:]
        offset_min = 0
        if rest in ("Z", "z", ""):
            pass
        elif len(rest) == 6 and rest[0] in "+-" and rest[3] == ":":
            offset_min = (int(rest[1:3]) * 60 + int(rest[4:6])) * (1 if rest[0] == "+" else -1)
        else:
            return None
        if not (1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60 and s < 61):
            return None
    except ValueError:
        return None
    return ((_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset_min * 60) * 1000) + ms


def _age(sent_at_ms: int | None, now_ms: int) -> int | None:
    if sent_at_ms is None:
        return None
    age = int(now_ms) - sent_at_ms
    return age if age > 0 else 0  # clock skew never yields a negative age


def _attr_value(attrs: Any, wanted: str) -> str | None:
    """SQS/SNS message attribute by name (case-insensitive): SQS ``stringValue`` or SNS ``Value``."""
    if not attrs or not isinstance(attrs, dict):
        return None
    for k, v in attrs.items():
        if isinstance(k, str) and _norm(k) == wanted and isinstance(v, dict):
            s = v.get("stringValue", v.get("Value"))
            return s if isinstance(s, str) and s else None
    return None


# --------------------------------------------------------------------------- per-record adapters
_NO_ATTRS: dict[str, Any] = {}
_SQS_FIFO_KEYS = (("MessageGroupId", "message_group_id"), ("MessageDeduplicationId", "message_deduplication_id"),
                  ("SequenceNumber", "sequence_number"))


def _sqs(r: dict[str, Any], now_ms: int) -> EventRecord:
    """One SQS message: ``SentTimestamp`` and ``ApproximateFirstReceiveTimestamp`` are epoch MILLISECONDS (decimal
    strings), ``ApproximateReceiveCount`` the delivery attempt; FIFO queues add the group, deduplication id and
    sequence number. Idempotency key and correlation id from the message attributes."""
    attrs = r.get("attributes") or _NO_ATTRS
    s, f, c = attrs.get("SentTimestamp"), attrs.get("ApproximateFirstReceiveTimestamp"), \
        attrs.get("ApproximateReceiveCount")
    sent: int | None
    first: int | None
    attempt: int | None
    try:
        if type(s) is not str or type(f) is not str or type(c) is not str:
            raise ValueError
        sent, first, attempt = int(s), int(f), int(c)  # three strings int() reads: what _int gives for them
    except ValueError:
        sent, first, attempt = _int(s), _int(f), _int(c)
    details: dict[str, Any] = {"queue": _arn_name(r.get("eventSourceARN"))}
    if "MessageGroupId" in attrs:  # FIFO queues
        for key, name in _SQS_FIFO_KEYS:
            if attrs.get(key) is not None:
                details[name] = attrs[key]
    if first is not None:
        details["first_receive_at_ms"] = first
    mattrs = r.get("messageAttributes")
    mid = r.get("messageId")
    return EventRecord(
        mid if isinstance(mid, str) else None,  # event_id
        EventSource.SQS,  # event_source
        attempt if attempt is not None and attempt > 1 else 1,  # attempt
        _age(sent, now_ms),  # record_age_ms
        sent,  # sent_at_ms
        _attr_value(mattrs, IDEMPOTENCY_HEADER) if mattrs else None,  # idempotency_key
        _attr_value(mattrs, CORRELATION_HEADERS[0]) if mattrs else None,  # correlation_id
        details,
        r,  # raw
    )


def _kinesis(r: dict[str, Any], now_ms: int) -> EventRecord:
    k = r.get("kinesis") or {}
    sent = _seconds_to_ms(k.get("approximateArrivalTimestamp"))
    event_id = r.get("eventID")
    shard = event_id.split(":", 1)[0] if isinstance(event_id, str) and ":" in event_id else None
    seq = k.get("sequenceNumber")
    return EventRecord(
        event_id=seq if isinstance(seq, str) else None,
        event_source=EventSource.KINESIS,
        attempt=1,
        record_age_ms=_age(sent, now_ms),
        sent_at_ms=sent,
        details={"shard_id": shard, "sequence_number": seq, "stream": _arn_name(r.get("eventSourceARN"))},
        raw=r,
    )


def _dynamodb(r: dict[str, Any], now_ms: int) -> EventRecord:
    ddb = r.get("dynamodb") or {}
    sent = _seconds_to_ms(ddb.get("ApproximateCreationDateTime"))
    eid = r.get("eventID")
    return EventRecord(
        event_id=eid if isinstance(eid, str) else None,
        event_source=EventSource.DYNAMODB,
        attempt=1,
        record_age_ms=_age(sent, now_ms),
        sent_at_ms=sent,
        details={"sequence_number": ddb.get("SequenceNumber"), "event_name": r.get("eventName"),
                 "table": _arn_name(r.get("eventSourceARN")), "stream_view_type": ddb.get("StreamViewType")},
        raw=r,
    )


def _sns(r: dict[str, Any], now_ms: int) -> EventRecord:
    sns = r.get("Sns") or {}
    sent = parse_iso8601_ms(sns.get("Timestamp"))
    mid = sns.get("MessageId")
    mattrs = sns.get("MessageAttributes")
    return EventRecord(
        event_id=mid if isinstance(mid, str) else None,
        event_source=EventSource.SNS,
        attempt=1,
        record_age_ms=_age(sent, now_ms),
        sent_at_ms=sent,
        idempotency_key=_attr_value(mattrs, IDEMPOTENCY_HEADER),
        correlation_id=_attr_value(mattrs, CORRELATION_HEADERS[0]),
        details={"topic": _arn_name(sns.get("TopicArn"))},
        raw=r,
    )


def _eventbridge(e: dict[str, Any], now_ms: int) -> EventRecord:
    sent = parse_iso8601_ms(e.get("time"))
    eid = e.get("id")
    return EventRecord(
        event_id=eid if isinstance(eid, str) else None,
        event_source=EventSource.EVENTBRIDGE,
        attempt=1,
        record_age_ms=_age(sent, now_ms),
        sent_at_ms=sent,
        details={"source": e.get("source"), "detail_type": e.get("detail-type"), "account": e.get("account"),
                 "region": e.get("region")},
        raw=e,
    )


def _correlation(headers: Any) -> str | None:
    for h in CORRELATION_HEADERS:
        if v := _header(headers, h):
            return v
    return None


def _api_rest(e: dict[str, Any], now_ms: int) -> EventRecord:
    rc = e.get("requestContext") or {}
    sent = _int(rc.get("requestTimeEpoch"))
    headers = e.get("headers") or e.get("multiValueHeaders")
    rid = rc.get("requestId")
    return EventRecord(
        event_id=rid if isinstance(rid, str) else None,
        event_source=EventSource.API_GATEWAY_REST,
        attempt=1,
        record_age_ms=_age(sent, now_ms),
        sent_at_ms=sent,
        idempotency_key=_header(headers, IDEMPOTENCY_HEADER) or _header(e.get("multiValueHeaders"), IDEMPOTENCY_HEADER),
        correlation_id=_correlation(headers),
        details={"http_method": e.get("httpMethod"), "resource": e.get("resource"), "stage": rc.get("stage"),
                 "api_id": rc.get("apiId")},
        raw=e,
    )


def _api_http(e: dict[str, Any], now_ms: int) -> EventRecord:
    """API Gateway HTTP API (payload format 2.0). ``requestContext.timeEpoch``: epoch MILLISECONDS."""
    return _http_v2(e, now_ms, EventSource.API_GATEWAY_HTTP)


def _function_url(e: dict[str, Any], now_ms: int) -> EventRecord:
    """Lambda function URL: the payload format 2.0 shape of HTTP APIs, told apart by its
    ``requestContext.domainName`` (``<url-id>.lambda-url.<region>.on.aws``,
    https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html). ``requestContext.timeEpoch``: epoch
    MILLISECONDS; event id ``requestContext.requestId``."""
    return _http_v2(e, now_ms, EventSource.FUNCTION_URL)


def _request_record(e: dict[str, Any], now_ms: int, source: EventSource, event_id: Any, sent: int | None,
                    headers: Any, details: dict[str, Any]) -> EventRecord:
    """An EventRecord for an HTTP-shaped request: key and correlation id from its headers, attempt 1."""
    return EventRecord(
        event_id=event_id if isinstance(event_id, str) else None,
        event_source=source,
        attempt=1,
        record_age_ms=_age(sent, now_ms),
        sent_at_ms=sent,
        idempotency_key=_header(headers, IDEMPOTENCY_HEADER),
        correlation_id=_correlation(headers),
        details=details,
        raw=e,
    )


def _http_v2(e: dict[str, Any], now_ms: int, source: EventSource) -> EventRecord:
    rc = e.get("requestContext") or {}
    http = rc.get("http") or {}
    return _request_record(e, now_ms, source, rc.get("requestId"), _int(rc.get("timeEpoch")), e.get("headers"),
                           {"http_method": http.get("method"), "route_key": e.get("routeKey"),
                            "stage": rc.get("stage"), "api_id": rc.get("apiId")})


def _alb(e: dict[str, Any], now_ms: int) -> EventRecord:
    headers = e.get("headers") or e.get("multiValueHeaders")
    trace = _header(headers, "x-amzn-trace-id")
    return EventRecord(
        event_id=trace,  # ALB events carry no request id; the trace id header identifies the request
        event_source=EventSource.ALB,
        attempt=1,
        idempotency_key=_header(headers, IDEMPOTENCY_HEADER),
        correlation_id=_correlation(headers),
        details={"http_method": e.get("httpMethod"),
                 "target_group": _arn_name(((e.get("requestContext") or {}).get("elb") or {}).get("targetGroupArn"))},
        raw=e,
    )


def _generic(e: Any, now_ms: int) -> EventRecord:
    eid = None
    if isinstance(e, dict):
        for k in ("id", "eventId", "event_id", "messageId", "requestId"):
            if isinstance(e.get(k), str) and e[k]:
                eid = e[k]
                break
    return EventRecord(event_id=eid, event_source=EventSource.GENERIC, attempt=1, raw=e)

MAX_EPOCH_MS = 10**14
"""Epoch milliseconds at or past this (year 5138) are not a time: treated as absent (no record age)."""


def _epoch_ms(v: Any, per_ms: int = 1) -> int | None:
    """An epoch time field as epoch MILLISECONDS: ``v`` is in units of 1/``per_ms`` ms (1 = ms, 1000 = µs), an int,
    a float or a decimal string; None if missing, not a number, negative or past :data:`MAX_EPOCH_MS`."""
    try:
        n = _int(v)
    except (OverflowError, ValueError):  # inf, or a digit string over the int conversion limit
        return None
    if n is None or n < 0:
        return None
    ms = n // per_ms
    return ms if ms < MAX_EPOCH_MS else None


def _str_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _squash(name: str) -> str:
    """Lower case without ``-``/``_``: JMS property and AMQP header names (``idempotencyKey``, ``idempotency_key``,
    ``Idempotency-Key`` compare equal)."""
    return name.lower().replace("-", "").replace("_", "")


_IDEMPOTENCY_SQUASHED = _squash(IDEMPOTENCY_HEADER)
_CORRELATION_SQUASHED = tuple(_squash(h) for h in CORRELATION_HEADERS)


def _bytes_text(v: Any) -> str | None:
    """A header value as text: a str, a number, a list of byte values (Kafka record headers), or ``{"bytes": [...]}``
    (RabbitMQ headers as Lambda delivers them). At most MAX_HEADER_BYTES bytes are decoded (UTF-8, invalid bytes
    replaced); None if the value is none of these."""
    if isinstance(v, dict):
        v = v.get("bytes")
    if isinstance(v, str):
        return v or None
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v) if abs(v) < 10**18 else None
    if isinstance(v, list) and v and len(v) <= MAX_HEADER_BYTES and all(
            b.__class__ is int and 0 <= b <= 255 for b in v):
        return bytes(v).decode("utf-8", "replace")
    return None


MAX_HEADER_BYTES = 1024
"""Longest byte-list header value decoded for an idempotency key or correlation id (longer ones are ignored)."""


def _prop(props: Any, wanted_squashed: str) -> str | None:
    """Property/header lookup by squashed name (see :func:`_squash`) in a dict; values through :func:`_bytes_text`."""
    if not isinstance(props, dict):
        return None
    for k, v in props.items():
        if isinstance(k, str) and _squash(k) == wanted_squashed:
            return _bytes_text(v)
    return None


def _kafka_headers(headers: Any) -> dict[str, Any]:
    """Kafka record headers as Lambda delivers them, a list of one-key dicts (``[{"name": [104, 105]}]``), as one
    dict (first value wins)."""
    out: dict[str, Any] = {}
    if isinstance(headers, list):
        for h in headers:
            if isinstance(h, dict):
                for k, v in h.items():
                    out.setdefault(k, v)
    return out


def _lattice(e: dict[str, Any], now_ms: int) -> EventRecord:
    """VPC Lattice request (https://docs.aws.amazon.com/vpc-lattice/latest/ug/lambda-functions.html).

    Event structure v2 (``version: "2.0"``): ``requestContext.timeEpoch`` is epoch MICROSECONDS as a string
    (``"1696331543569073"``), converted here to ``sent_at_ms`` = timeEpoch // 1000. Structure v1 (``raw_path``,
    ``method``, snake_case keys) carries no time: no record age. Neither carries a request id: ``event_id`` is the
    ``X-Amzn-Trace-Id`` header when a client or proxy set one, else None. Idempotency key and correlation id from
    the headers, as for API Gateway.
    """
    rc = e.get("requestContext")
    rc = rc if isinstance(rc, dict) else {}
    headers = e.get("headers")
    return _request_record(
        e, now_ms, EventSource.VPC_LATTICE, _header(headers, "x-amzn-trace-id"),
        _epoch_ms(rc.get("timeEpoch"), 1000),  # microseconds
        headers, {"http_method": e.get("method"), "lattice_version": "2.0" if rc else "1",
                  "service": _arn_name(rc.get("serviceArn")), "target_group": _arn_name(rc.get("targetGroupArn"))})


def _websocket(e: dict[str, Any], now_ms: int) -> EventRecord:
    """API Gateway WebSocket API, Lambda proxy integration
    (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-websocket-api-mapping-template-reference.html).

    ``event_id``: for a MESSAGE event ``requestContext.messageId`` ("A unique server-side ID for a message.
    Available only when the $context.eventType is MESSAGE"; ``requestId`` when it is missing); for CONNECT and
    DISCONNECT ``requestContext.requestId``, even when the event carries a ``messageId``.
    ``requestContext.requestTimeEpoch``: epoch MILLISECONDS (the record age); ``connectedAt``: epoch MILLISECONDS,
    kept as ``connected_at_ms``. ``eventType`` (CONNECT, MESSAGE, DISCONNECT), ``routeKey`` and ``connectionId`` are
    details.
    """
    rc = e.get("requestContext") or {}
    event_type = _str_or_none(rc.get("eventType"))
    message_id = _str_or_none(rc.get("messageId")) if event_type == "MESSAGE" else None
    return _request_record(
        e, now_ms, EventSource.API_GATEWAY_WEBSOCKET, message_id or _str_or_none(rc.get("requestId")),
        _epoch_ms(rc.get("requestTimeEpoch")), e.get("headers") or e.get("multiValueHeaders"),
        {"event_type": event_type, "route_key": _str_or_none(rc.get("routeKey")),
         "connection_id": _str_or_none(rc.get("connectionId")), "stage": _str_or_none(rc.get("stage")),
         "api_id": _str_or_none(rc.get("apiId")), "connected_at_ms": _epoch_ms(rc.get("connectedAt"))})


def _kafka(r: dict[str, Any], now_ms: int, source: EventSource, cluster: str | None) -> EventRecord:
    """One Kafka record, Amazon MSK (``eventSource: aws:kafka``) or self-managed Apache Kafka
    (``aws:SelfManagedKafka``) (https://docs.aws.amazon.com/lambda/latest/dg/with-msk.html,
    https://docs.aws.amazon.com/lambda/latest/dg/with-kafka.html).

    ``event_id``: ``<topic>-<partition>:<offset>`` (the key Lambda groups records by, plus the offset: unique per
    cluster). ``timestamp``: epoch MILLISECONDS, the producer's create time or the broker's log-append time as
    ``timestampType`` (CREATE_TIME | LOG_APPEND_TIME) says; it is the record age's start. Kafka reports no delivery
    count: attempt 1. Idempotency key and correlation id from the record headers (byte lists).
    """
    topic, partition, offset = r.get("topic"), _int(r.get("partition")), _int(r.get("offset"))
    eid = f"{topic}-{partition}:{offset}" if isinstance(topic, str) and partition is not None and offset is not None \
        else None
    sent = _epoch_ms(r.get("timestamp"))
    headers = _kafka_headers(r.get("headers"))
    return EventRecord(
        event_id=eid,
        event_source=source,
        attempt=1,
        record_age_ms=_age(sent, now_ms),
        sent_at_ms=sent,
        idempotency_key=_prop(headers, _IDEMPOTENCY_SQUASHED) if headers else None,
        correlation_id=_prop(headers, _CORRELATION_SQUASHED[0]) if headers else None,
        details={"topic": _str_or_none(topic), "partition": partition, "offset": offset,
                 "timestamp_type": _str_or_none(r.get("timestampType")), "cluster": cluster},
        raw=r,
    )


def _activemq(m: dict[str, Any], now_ms: int, broker: str | None) -> EventRecord:
    """One Amazon MQ for ActiveMQ message (``eventSource: aws:amq``, https://docs.aws.amazon.com/lambda/latest/dg/with-mq.html).

    ``event_id``: ``messageID``. ``redelivered: true`` ("the message is being resent to the consumer") gives attempt
    2: a redelivery, count not reported. ``timestamp`` (JMSTimestamp, epoch MILLISECONDS, 0 when the producer
    disabled it) is the record age's start, else ``brokerInTime`` (epoch MILLISECONDS, arrival at the broker).
    Idempotency key / correlation id from the JMS ``properties`` (``idempotencyKey``, ``idempotency_key``, ...).
    """
    broker_in = _epoch_ms(m.get("brokerInTime"))
    sent = _epoch_ms(m.get("timestamp")) or broker_in
    props = m.get("properties")
    dest = m.get("destination")
    return EventRecord(
        event_id=_str_or_none(m.get("messageID")),
        event_source=EventSource.ACTIVEMQ,
        attempt=2 if m.get("redelivered") is True else 1,
        record_age_ms=_age(sent, now_ms),
        sent_at_ms=sent,
        idempotency_key=_prop(props, _IDEMPOTENCY_SQUASHED) if props else None,
        correlation_id=_prop(props, _CORRELATION_SQUASHED[0]) if props else None,
        details={"queue": _str_or_none(dest.get("physicalName")) if isinstance(dest, dict) else None,
                 "broker": broker, "broker_in_time_ms": broker_in},
        raw=m,
    )


_MONTHS = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                           "nov", "dec"))}


def parse_java_date_ms(value: Any) -> int | None:
    """Parse the date form Lambda writes for RabbitMQ ``basicProperties.timestamp`` (Java's
    ``MMM d, yyyy, h:mm:ss a``, e.g. ``"Jan 1, 1970, 12:33:41 AM"``; whole seconds, read as UTC) to epoch
    MILLISECONDS; None if not parseable."""
    if not isinstance(value, str):
        return None
    parts = value.replace(",", " ").split()
    if len(parts) != 5:
        return None
    mon, day, year, hms, ampm = parts
    m = _MONTHS.get(mon[:3].lower())
    hms_parts = hms.split(":")
    if m is None or ampm.upper() not in ("AM", "PM") or len(hms_parts) != 3:
        return None
    try:
        d, y = int(day), int(year)
        h, mi, sec = (int(x) for x in hms_parts)
    except ValueError:
        return None
    if not (1 <= d <= 31 and 1 <= h <= 12 and mi < 60 and sec < 61 and 1 <= y <= 9999):
        return None
    h = h % 12 + (12 if ampm.upper() == "PM" else 0)
    return (_days_from_civil(y, m, d) * 86400 + h * 3600 + mi * 60 + sec) * 1000


def _rabbitmq(m: dict[str, Any], now_ms: int, queue_key: str, broker: str | None) -> EventRecord:
    """One Amazon MQ for RabbitMQ message (``eventSource: aws:rmq``; messages grouped by ``"<queue>::<vhost>"``,
    https://docs.aws.amazon.com/lambda/latest/dg/with-mq.html).

    ``event_id``: ``basicProperties.messageId`` (optional in AMQP: None when the publisher set none).
    ``redelivered: true`` gives attempt 2, or ``x-delivery-count`` + 1 when the header is there (quorum queues count
    earlier deliveries in it). ``basicProperties.timestamp`` (whole SECONDS, written as a date string, see
    :func:`parse_java_date_ms`) is the record age's start. Idempotency key / correlation id from the AMQP headers
    (``{"bytes": [...]}`` values) or ``basicProperties.correlationId``.
    """
    bp = m.get("basicProperties")
    bp = bp if isinstance(bp, dict) else {}
    headers = bp.get("headers")
    sent = parse_java_date_ms(bp.get("timestamp"))
    attempt = 2 if m.get("redelivered") is True else 1
    count = _int(headers.get("x-delivery-count")) if isinstance(headers, dict) else None
    if count is not None and 0 <= count < 2**31:
        attempt = max(attempt, count + 1)
    queue, _, vhost = queue_key.partition("::")
    return EventRecord(
        event_id=_str_or_none(bp.get("messageId")),
        event_source=EventSource.RABBITMQ,
        attempt=attempt,
        record_age_ms=_age(sent, now_ms),
        sent_at_ms=sent,
        idempotency_key=_prop(headers, _IDEMPOTENCY_SQUASHED) if headers else None,
        correlation_id=(_prop(headers, _CORRELATION_SQUASHED[0]) if headers else None)
        or _str_or_none(bp.get("correlationId")),
        details={"queue": queue or None, "vhost": vhost or None, "broker": broker},
        raw=m,
    )


def _polled_batch(event: dict[str, Any], src: EventSource, now_ms: int) -> tuple[list[EventRecord], list[str]]:
    """Kafka and Amazon MQ batches: records grouped by partition or queue, no ``Records`` list."""
    out: list[EventRecord] = []
    errors: list[str] = []
    arn = event.get("eventSourceArn")
    broker_or_cluster = _arn_name(arn)
    if src is EventSource.ACTIVEMQ:
        groups: Any = [("", event.get("messages"))]
    else:
        groups = event.get("records" if src in (EventSource.MSK, EventSource.SELF_MANAGED_KAFKA)
                           else "rmqMessagesByQueue")
        groups = groups.items() if isinstance(groups, dict) else []
    for key, items in groups:
        if not isinstance(items, list):
            errors.append(f"{src.value} batch not understood (group is not a list)")
            continue
        for r in items:
            try:
                if not isinstance(r, dict):
                    raise TypeError
                if src is EventSource.ACTIVEMQ:
                    rec = _activemq(r, now_ms, broker_or_cluster)
                elif src is EventSource.RABBITMQ:
                    rec = _rabbitmq(r, now_ms, key if isinstance(key, str) else "", broker_or_cluster)
                else:
                    rec = _kafka(r, now_ms, src, broker_or_cluster)
            except Exception as exc:  # noqa: BLE001 - malformed record: keep going with a generic record
                rec = _generic(r, now_ms)
                rec.event_source = src
                errors.append(f"{src.value} record not understood ({type(exc).__name__})")
            out.append(rec)
    return out, errors


_POLLED_SOURCES = {
    "aws:kafka": EventSource.MSK,
    "aws:SelfManagedKafka": EventSource.SELF_MANAGED_KAFKA,
    "aws:amq": EventSource.ACTIVEMQ,
    "aws:rmq": EventSource.RABBITMQ,
}
"""Top-level ``eventSource`` of the batch events without a ``Records`` list (Kafka, Amazon MQ)."""


_RECORD_ADAPTERS: dict[str, tuple[EventSource, Callable[[dict[str, Any], int], EventRecord] | None]] = {
    "aws:sqs": (EventSource.SQS, _sqs),
    "aws:kinesis": (EventSource.KINESIS, _kinesis),
    "aws:dynamodb": (EventSource.DYNAMODB, _dynamodb),
    "aws:sns": (EventSource.SNS, _sns),
}
"""A batch record's ``eventSource`` (``EventSource`` for SNS) -> its source and adapter."""
_GENERIC_RECORD: tuple[EventSource, None] = (EventSource.GENERIC, None)


# --------------------------------------------------------------------------- detection
def _record_adapter(r: Any) -> tuple[EventSource, Callable[[dict[str, Any], int], EventRecord] | None]:
    """The source of a batch record and its adapter (None: a generic record)."""
    if isinstance(r, dict):
        src = r.get("eventSource") or r.get("EventSource")
        if isinstance(src, str):
            return _RECORD_ADAPTERS.get(src, _GENERIC_RECORD)
    return _GENERIC_RECORD


def detect_source(event: Any) -> EventSource:
    """The :class:`EventSource` of a Lambda event (batch or single); ``generic`` for unknown shapes. Never raises."""
    try:
        return _detect_source(event)
    except Exception:  # noqa: BLE001 - a hostile object in place of an event
        return EventSource.GENERIC


def _detect_source(event: Any) -> EventSource:
    if not isinstance(event, dict):
        return EventSource.GENERIC
    recs = event.get("Records")
    if isinstance(recs, list):
        return _record_adapter(recs[0])[0] if recs else EventSource.GENERIC
    polled = _polled_source(event)
    return polled if polled is not None else _single_source(event)


def _polled_source(e: dict[str, Any]) -> EventSource | None:
    src = e.get("eventSource")
    return _POLLED_SOURCES.get(src) if src.__class__ is str else None


def _single_source(e: dict[str, Any]) -> EventSource:
    """Order matters: the cheap, distinctive keys first; VPC Lattice v2 and function URLs before the HTTP API check
    they would otherwise pass (``version: "2.0"``)."""
    rc = e.get("requestContext")
    if isinstance(rc, dict):
        if "elb" in rc:
            return EventSource.ALB
        if "connectionId" in rc and "eventType" in rc:
            return EventSource.API_GATEWAY_WEBSOCKET
        if "serviceArn" in rc or "serviceNetworkArn" in rc or ("targetGroupArn" in rc and "method" in e):
            return EventSource.VPC_LATTICE
        if e.get("version") == "2.0" or isinstance(rc.get("http"), dict):
            domain = rc.get("domainName")
            if isinstance(domain, str) and ".lambda-url." in domain:
                return EventSource.FUNCTION_URL
            return EventSource.API_GATEWAY_HTTP
        if "httpMethod" in e or "resourcePath" in rc:
            return EventSource.API_GATEWAY_REST
    elif "raw_path" in e and "method" in e:  # VPC Lattice event structure v1 (no requestContext)
        return EventSource.VPC_LATTICE
    if "detail-type" in e and "source" in e and "id" in e:
        return EventSource.EVENTBRIDGE
    return EventSource.GENERIC


_SINGLE_ADAPTERS: dict[EventSource, Callable[[dict[str, Any], int], EventRecord]] = {
    EventSource.EVENTBRIDGE: _eventbridge,
    EventSource.API_GATEWAY_REST: _api_rest,
    EventSource.API_GATEWAY_HTTP: _api_http,
    EventSource.ALB: _alb,
    EventSource.FUNCTION_URL: _function_url,
    EventSource.API_GATEWAY_WEBSOCKET: _websocket,
    EventSource.VPC_LATTICE: _lattice,
}


def adapt_record(record: Any, now_ms: int) -> tuple[EventRecord, str | None]:
    """Adapt one batch record. Returns (record, error) where error is a reason when the record was malformed
    (then the record is generic). Never raises."""
    src, fn = _record_adapter(record)
    if fn is None:
        return _generic(record, now_ms), None
    try:
        return fn(record, now_ms), None
    except Exception as exc:  # malformed record: keep going with a generic record
        rec = _generic(record, now_ms)
        rec.event_source = src
        return rec, f"{src.value} record not understood ({type(exc).__name__})"


def adapt_event(event: Any, now_ms: int) -> tuple[list[EventRecord], list[str]]:
    """Adapt a whole event: one EventRecord per batch record, or one for a single event.

    Returns (records, errors); ``errors`` has one reason per record that fell back to generic. Never raises.
    """
    try:
        return _adapt_event(event, now_ms)
    except Exception as exc:  # noqa: BLE001 - a hostile object in place of an event or of its Records list
        return [EventRecord(raw=event)], [f"event not understood ({type(exc).__name__})"]


def _adapt_event(event: Any, now_ms: int) -> tuple[list[EventRecord], list[str]]:
    if isinstance(event, dict) and isinstance(event.get("Records"), list):
        out: list[EventRecord] = []
        errors: list[str] = []
        for r in event["Records"]:
            rec, err = adapt_record(r, now_ms)
            out.append(rec)
            if err:
                errors.append(err)
        return out, errors
    polled = _polled_source(event) if isinstance(event, dict) else None
    if polled is not None:
        return _polled_batch(event, polled, now_ms)
    rec, err = adapt_single(event, now_ms)
    return [rec], [err] if err else []


def adapt_single(event: Any, now_ms: int) -> tuple[EventRecord, str | None]:
    """Adapt a single (non-batch) event. A batch event with exactly one record gives that record; a larger batch
    gives a generic-shaped record of the batch's source with ``details['batch_size']``. Never raises."""
    try:
        return _adapt_single(event, now_ms)
    except Exception as exc:  # noqa: BLE001 - a hostile object in place of an event or of its Records list
        return EventRecord(raw=event), f"event not understood ({type(exc).__name__})"


def _adapt_single(event: Any, now_ms: int) -> tuple[EventRecord, str | None]:
    if isinstance(event, dict) and isinstance(event.get("Records"), list):
        recs = event["Records"]
        if len(recs) == 1:
            return adapt_record(recs[0], now_ms)
        return EventRecord(event_source=detect_source(event), details={"batch_size": len(recs)}, raw=event), None
    polled = _polled_source(event) if isinstance(event, dict) else None
    if polled is not None:
        recs, errors = _polled_batch(event, polled, now_ms)
        if len(recs) == 1:
            return recs[0], errors[0] if errors else None
        return EventRecord(event_source=polled, details={"batch_size": len(recs)}, raw=event), \
            errors[0] if errors else None
    src = _single_source(event) if isinstance(event, dict) else EventSource.GENERIC
    fn = _SINGLE_ADAPTERS.get(src)
    if fn is None:
        return _generic(event, now_ms), None
    try:
        return fn(event, now_ms), None
    except Exception as exc:
        rec = _generic(event, now_ms)
        rec.event_source = src
        return rec, f"{src.value} event not understood ({type(exc).__name__})"
