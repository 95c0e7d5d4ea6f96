"""Event-source adapters: detect the source of a Lambda event and derive, per record, the fields of an
:class:`~emitter.types.EventRecord` (event id, attempt, record age, source details).

Shapes follow the Lambda event documentation (https://docs.aws.amazon.com/lambda/latest/dg/lambda-services.html):
SQS standard/FIFO, Kinesis Data Streams, DynamoDB Streams, EventBridge, API Gateway REST (payload 1.0) and HTTP
(payload 2.0), Application Load Balancer, SNS. Anything else is a ``generic`` record; an adapter never raises
(a malformed record becomes a generic record and the caller reports the error).

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

_BATCH_SOURCES = {
    "aws:sqs": EventSource.SQS,
    "aws:kinesis": EventSource.KINESIS,
    "aws:dynamodb": EventSource.DYNAMODB,
    "aws:sns": EventSource.SNS,
}


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
    """Resource name at the end of an ARN (queue, stream, table, topic); None if not an ARN string. Cached: a
    function sees the same few ARNs on every record."""
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
    # arn:aws:kinesis:...:stream/name ; arn:aws:dynamodb:...:table/T/stream/2019... ; arn:aws:sqs:...:queue
    parts = tail.split("/")
    if parts[0] in ("stream", "table", "targetgroup") and len(parts) > 1:
        return parts[1]
    return parts[0]


def _int(v: Any) -> int | None:
    if v.__class__ is str and v.isascii() and v.isdecimal():  # the usual SQS attribute: a decimal string
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
    return max(0, int(now_ms) - sent_at_ms)  # clock skew never yields a negative age


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
def _sqs(r: dict[str, Any], now_ms: int) -> EventRecord:
    attrs = r.get("attributes") or {}
    sent = _int(attrs.get("SentTimestamp"))
    details: dict[str, Any] = {"queue": _arn_name(r.get("eventSourceARN"))}
    if "MessageGroupId" in attrs:  # FIFO queues
        for key, name in (("MessageGroupId", "message_group_id"), ("MessageDeduplicationId", "message_deduplication_id"),
                          ("SequenceNumber", "sequence_number")):
            if attrs.get(key) is not None:
                details[name] = attrs[key]
    first = _int(attrs.get("ApproximateFirstReceiveTimestamp"))
    if first is not None:
        details["first_receive_at_ms"] = first
    mattrs = r.get("messageAttributes")
    mid = r.get("messageId")
    return EventRecord(
        mid if isinstance(mid, str) else None,  # event_id
        EventSource.SQS,
        max(1, _int(attrs.get("ApproximateReceiveCount")) or 1),  # attempt
        None if sent is None else max(0, int(now_ms) - sent),  # record_age_ms (never negative under clock skew)
        sent,
        _attr_value(mattrs, IDEMPOTENCY_HEADER) if mattrs else None,
        _attr_value(mattrs, CORRELATION_HEADERS[0]) if mattrs else None,
        details,
        r,
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
    rc = e.get("requestContext") or {}
    sent = _int(rc.get("timeEpoch"))
    headers = e.get("headers")
    rid = rc.get("requestId")
    http = rc.get("http") or {}
    return EventRecord(
        event_id=rid if isinstance(rid, str) else None,
        event_source=EventSource.API_GATEWAY_HTTP,
        attempt=1,
        record_age_ms=_age(sent, now_ms),
        sent_at_ms=sent,
        idempotency_key=_header(headers, IDEMPOTENCY_HEADER),
        correlation_id=_correlation(headers),
        details={"http_method": http.get("method"), "route_key": e.get("routeKey"), "stage": rc.get("stage"),
                 "api_id": rc.get("apiId")},
        raw=e,
    )


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


_RECORD_ADAPTERS: dict[EventSource, Callable[[dict[str, Any], int], EventRecord]] = {
    EventSource.SQS: _sqs,
    EventSource.KINESIS: _kinesis,
    EventSource.DYNAMODB: _dynamodb,
    EventSource.SNS: _sns,
}


# --------------------------------------------------------------------------- detection
def _record_source(r: Any) -> EventSource:
    if isinstance(r, dict):
        src = r.get("eventSource") or r.get("EventSource")
        if isinstance(src, str):
            return _BATCH_SOURCES.get(src, EventSource.GENERIC)
    return EventSource.GENERIC


def detect_source(event: Any) -> EventSource:
    """The :class:`EventSource` of a Lambda event (batch or single); ``generic`` for unknown shapes."""
    if not isinstance(event, dict):
        return EventSource.GENERIC
    recs = event.get("Records")
    if isinstance(recs, list):
        return _record_source(recs[0]) if recs else EventSource.GENERIC
    return _single_source(event)


def _single_source(e: dict[str, Any]) -> EventSource:
    rc = e.get("requestContext")
    if isinstance(rc, dict):
        if "elb" in rc:
            return EventSource.ALB
        if e.get("version") == "2.0" or isinstance(rc.get("http"), dict):
            return EventSource.API_GATEWAY_HTTP
        if "httpMethod" in e or "resourcePath" in rc:
            return EventSource.API_GATEWAY_REST
    if "detail-type" in e and "source" in e and "id" in e:
        return EventSource.EVENTBRIDGE
    return EventSource.GENERIC


_SINGLE_ADAPTERS: dict[EventSource, Callable[[dict[str, Any], int], EventRecord]] = {
    EventSource.EVENTBRIDGE: _eventbridge,
    EventSource.API_GATEWAY_REST: _api_rest,
    EventSource.API_GATEWAY_HTTP: _api_http,
    EventSource.ALB: _alb,
}


def adapt_record(record: Any, now_ms: int) -> tuple[EventRecord, str | None]:
    """Adapt one batch record. Returns (record, error) where error is a reason when the record was malformed
    (then the record is generic). Never raises."""
    src = _record_source(record)
    fn = _RECORD_ADAPTERS.get(src)
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
    if isinstance(event, dict) and isinstance(event.get("Records"), list):
        out: list[EventRecord] = []
        errors: list[str] = []
        for r in event["Records"]:
            rec, err = adapt_record(r, now_ms)
            out.append(rec)
            if err:
                errors.append(err)
        return out, errors
    rec, err = adapt_single(event, now_ms)
    return [rec], [err] if err else []


def adapt_single(event: Any, now_ms: int) -> tuple[EventRecord, str | None]:
    """Adapt a single (non-batch) event. A batch event with exactly one record gives that record; a larger batch
    gives a generic-shaped record of the batch's source with ``details['batch_size']``. Never raises."""
    if isinstance(event, dict) and isinstance(event.get("Records"), list):
        recs = event["Records"]
        if len(recs) == 1:
            return adapt_record(recs[0], now_ms)
        return EventRecord(event_source=detect_source(event), details={"batch_size": len(recs)}, raw=event), None
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
