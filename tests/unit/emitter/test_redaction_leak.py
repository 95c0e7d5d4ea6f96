"""Every name on the redaction list, in every case form, seeded through every entry point of the emitter: the seeded
secret values never appear in any output byte (issue 10, "Secrets leak": 72 lines carried the seeded secret).

Each seeded value is ``S3CR3T<n>Z`` with a unique n, so a leak names the (form, entry point) it came from; the
test also checks the output is not vacuous (the redaction marker and the non-secret control values are there).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json

import pytest

from emitter import DEFAULT_REDACTED_KEYS, Emitter, MemorySink, Outcome, TimeoutBudgetExceeded
from emitter.contract import DEFAULT_REDACTED_EXACT_KEYS, REDACTED
from emitter.redact import normalize_name

MARK = "S3CR3T"


def case_forms(name: str) -> list[str]:
    """lower, UPPER, camelCase, PascalCase, snake_case, kebab-case, Header-Case, dotted, UPPER_SNAKE, run-together,
    and with prefix/suffix words (``db_password``, ``x-api-key``, ``myPasswordValue``)."""
    w = normalize_name(name).split("_")
    camel = w[0] + "".join(x.title() for x in w[1:])
    pascal = "".join(x.title() for x in w)
    forms = {
        "".join(w), "".join(w).upper(), camel, pascal, "_".join(w), "-".join(w), "-".join(x.title() for x in w),
        ".".join(w), "_".join(w).upper(), " ".join(w),
        "db_" + "_".join(w), "x-" + "-".join(w), "X-" + "-".join(x.title() for x in w), "my" + pascal,
        "_".join(w) + "_value", camel + "Hash", "app." + ".".join(w) + ".v2", "__" + "_".join(w) + "__",
    }
    return sorted(forms)


ALL_FORMS = sorted({f for n in DEFAULT_REDACTED_KEYS for f in case_forms(n)} | set(DEFAULT_REDACTED_EXACT_KEYS)
                   | {"SESSION", "Session"})
CONTROL = {"tokens_used": 7, "partition_key": "pk-visible", "order_ref": "order-visible"}


class Seeder:
    """Hands out unique secret values and remembers where each went."""

    def __init__(self) -> None:
        self.where: dict[str, str] = {}

    def value(self, where: str) -> str:
        v = f"{MARK}{len(self.where)}Z"
        self.where[v] = where
        return v

    def secrets(self, where: str) -> dict[str, str]:
        """Every form -> its own secret value."""
        return {f: self.value(f"{where}:{f}") for f in ALL_FORMS}

    def nested(self, where: str) -> dict:
        """Secrets at the top, nested in dicts, in lists, in tuples, deep, plus the control values."""
        return {**self.secrets(f"{where}/top"), **CONTROL,
                "context": {"inner": self.secrets(f"{where}/nested"), "list": [self.secrets(f"{where}/list")],
                            "tuple": (self.secrets(f"{where}/tuple"),),
                            "deep": {"a": {"b": {"c": [{"d": self.secrets(f"{where}/deep")}]}}}}}


def leaks(seeder: Seeder, text: str) -> list[str]:
    out = []
    i = text.find(MARK)
    while i >= 0:
        j = text.find("Z", i)
        out.append(seeder.where.get(text[i:j + 1], text[i:j + 40]))
        i = text.find(MARK, i + 1)
    return out


def emitter(mem: MemorySink) -> Emitter:
    return Emitter(service="secrets", sink=mem, hash_idempotency_keys=True)


SOURCES = {"sqs": "sqs", "kinesis": "kinesis", "dynamodb": "dynamodb", "sns": "sns", "eventbridge": "eventbridge",
           "apigw-rest": "apigateway-rest", "apigw-http": "apigateway-http", "alb": "alb",
           "vpc-lattice-v2": "vpc-lattice", "vpc-lattice-v1": "vpc-lattice", "function-url": "function-url",
           "websocket": "apigateway-websocket", "msk": "msk", "activemq": "activemq", "rabbitmq": "rabbitmq",
           "generic": "generic"}
"""Sample name -> the event_source its records must be detected as (so each adapter is really exercised)."""


def header_map(seeder: Seeder, where: str) -> dict[str, str]:
    return {f: seeder.value(f"{where}:{f}") for f in ALL_FORMS}


def seeded_events(seeder: Seeder) -> dict[str, dict]:
    """One real-shaped event per adapter, every header / attribute / body / image carrying seeded secrets."""
    s = seeder
    body = json.dumps(s.secrets("body"))
    return {
        "sqs": {"Records": [{
            "messageId": "m1", "receiptHandle": s.value("receiptHandle"), "body": body, "eventSource": "aws:sqs",
            "attributes": {"ApproximateReceiveCount": "2", "SentTimestamp": "1767608400000", **s.secrets("sqs-attr")},
            "messageAttributes": {k: {"stringValue": v, "dataType": "String"}
                                  for k, v in {**s.secrets("sqs-mattr"),
                                               "idempotency-key": "acme:" + s.value("sqs-key")}.items()},
            "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q"}]},
        "kinesis": {"Records": [{
            "eventSource": "aws:kinesis", "eventID": "shardId-0:1",
            "kinesis": {"sequenceNumber": "1", "data": base64.b64encode(body.encode()).decode(),
                        "partitionKey": s.value("kinesis-pk"), "approximateArrivalTimestamp": 1767608400.5}}]},
        "dynamodb": {"Records": [{
            "eventSource": "aws:dynamodb", "eventID": "d1", "eventName": "INSERT",
            "dynamodb": {"SequenceNumber": "9", "NewImage": {k: {"S": v} for k, v in s.secrets("ddb-new").items()},
                         "OldImage": {k: {"S": v} for k, v in s.secrets("ddb-old").items()},
                         "Keys": {"pk": {"S": s.value("ddb-key")}}, "ApproximateCreationDateTime": 1767608400}}]},
        "sns": {"Records": [{"EventSource": "aws:sns", "Sns": {
            "MessageId": "sns-1", "Message": body, "Timestamp": "2026-01-05T10:20:00.000Z", "Subject": s.value("sns-subj"),
            "MessageAttributes": {k: {"Type": "String", "Value": v} for k, v in s.secrets("sns-mattr").items()}}}]},
        "eventbridge": {"version": "0", "id": "eb-1", "detail-type": "Order Placed", "source": "shop",
                        "time": "2026-01-05T10:20:00Z", "detail": s.nested("eb-detail")},
        "apigw-rest": {"resource": "/o", "httpMethod": "POST", "headers": header_map(s, "rest-h"),
                       "multiValueHeaders": {k: [v] for k, v in header_map(s, "rest-mvh").items()},
                       "queryStringParameters": header_map(s, "rest-q"),
                       "requestContext": {"requestId": "r-1", "requestTimeEpoch": 1767608400000,
                                          "identity": {"apiKey": s.value("rest-identity-apikey")},
                                          "authorizer": {"jwt": s.value("rest-authorizer")}},
                       "body": body},
        "apigw-http": {"version": "2.0", "routeKey": "POST /o", "cookies": [s.value("http-cookie")],
                       "headers": header_map(s, "http-h"), "queryStringParameters": header_map(s, "http-q"),
                       "requestContext": {"requestId": "r-2", "http": {"method": "POST"}, "timeEpoch": 1767608400000,
                                          "authorizer": {"jwt": {"claims": s.secrets("http-claims")}}},
                       "body": body},
        "alb": {"requestContext": {"elb": {"targetGroupArn": "arn:aws:elasticloadbalancing:r:1:targetgroup/tg/1"}},
                "httpMethod": "POST", "headers": {"x-amzn-trace-id": "Root=1-a", **header_map(s, "alb-h")},
                "body": body},
        "vpc-lattice-v2": {"version": "2.0", "path": "/o", "method": "POST", "headers": header_map(s, "lattice2-h"),
                           "queryStringParameters": header_map(s, "lattice2-q"), "body": body,
                           "requestContext": {"serviceArn": "arn:aws:vpc-lattice:r:1:service/svc-1",
                                              "identity": {"principal": s.value("lattice2-principal"),
                                                           "sessionName": s.value("lattice2-session")},
                                              "timeEpoch": "1767608400000000"}},
        "vpc-lattice-v1": {"raw_path": "/o?" + s.value("lattice1-path"), "method": "GET",
                           "headers": header_map(s, "lattice1-h"), "query_string_parameters": header_map(s, "l1-q"),
                           "body": body, "is_base64_encoded": False},
        "function-url": {"version": "2.0", "routeKey": "$default", "cookies": [s.value("url-cookie")],
                         "headers": {**header_map(s, "url-h"), "idempotency-key": "acme:" + s.value("url-key")},
                         "requestContext": {"requestId": "u-1", "domainName": "x.lambda-url.us-east-1.on.aws",
                                            "http": {"method": "POST"}, "timeEpoch": 1767608400000,
                                            "authorizer": {"iam": {"secretKey": s.value("url-iam")}}},
                         "body": body},
        "websocket": {"headers": header_map(s, "ws-h"), "multiValueHeaders": {k: [v] for k, v in
                                                                               header_map(s, "ws-mvh").items()},
                      "requestContext": {"eventType": "MESSAGE", "messageId": "w-1", "connectionId": "c-1",
                                         "routeKey": "send", "requestTimeEpoch": 1767608400000,
                                         "authorizer": s.secrets("ws-authorizer")},
                      "body": body},
        "msk": {"eventSource": "aws:kafka", "eventSourceArn": "arn:aws:kafka:r:1:cluster/C/u",
                "records": {"t-0": [{"topic": "t", "partition": 0, "offset": 1, "timestamp": 1767608400000,
                                     "timestampType": "CREATE_TIME",
                                     "key": base64.b64encode(s.value("kafka-key").encode()).decode(),
                                     "value": base64.b64encode(body.encode()).decode(),
                                     "headers": [{k: list(v.encode())} for k, v in
                                                 {**s.secrets("kafka-h"),
                                                  "idempotency-key": "acme:" + s.value("kafka-ik")}.items()]}]}},
        "activemq": {"eventSource": "aws:amq", "eventSourceArn": "arn:aws:mq:r:1:broker:b:b-1",
                     "messages": [{"messageID": "ID:1", "data": base64.b64encode(body.encode()).decode(),
                                   "redelivered": True, "timestamp": 1767608400000,
                                   "destination": {"physicalName": "q"},
                                   "properties": {**s.secrets("amq-props"),
                                                  "idempotencyKey": "acme:" + s.value("amq-ik")}}]},
        "rabbitmq": {"eventSource": "aws:rmq", "eventSourceArn": "arn:aws:mq:r:1:broker:b:b-1",
                     "rmqMessagesByQueue": {"q::/": [{
                         "basicProperties": {"messageId": "r-1", "timestamp": "Jan 5, 2026, 10:20:00 AM",
                                             "userId": s.value("rmq-user"),
                                             "headers": {**{k: {"bytes": list(v.encode())} for k, v in
                                                            s.secrets("rmq-h").items()},
                                                         "idempotency-key": {"bytes": list(("acme:" + s.value(
                                                             "rmq-ik")).encode())}}},
                         "redelivered": False, "data": base64.b64encode(body.encode()).decode()}]}},
        "generic": {"id": "g-1", **s.nested("generic")},
    }


class Ctx:
    def __init__(self, seeder: Seeder) -> None:
        self.aws_request_id = "req-1"
        self.function_name = "fn"
        self.client_context = {"custom": seeder.secrets("client_context")}
        self.identity = {"cognito_identity_id": seeder.value("identity")}
        self.secrets = seeder.secrets("ctx-attrs")

    def get_remaining_time_in_millis(self) -> int:
        return 1000


class SecretError(Exception):
    def __init__(self, seeder: Seeder) -> None:
        super().__init__(seeder.value("exc-message"), seeder.secrets("exc-args"))
        self.response = {"Error": {"Code": "ThrottlingException", "Message": seeder.value("exc-response")}}
        self.password = seeder.value("exc-attr")


def all_outcome_calls(em: Emitter, r, seeder: Seeder) -> None:
    """Every outcome method and record_outcome for every Outcome, each with seeded extras."""
    def p(where):
        return seeder.nested(where)

    key = "acme:" + seeder.value("key")
    em.claimed(r, key, expires_at_ms=1767608460000, **p("claimed"))
    em.succeeded(r, key, **p("succeeded"))
    em.duplicate_completed(r, key, **p("duplicate_completed"))
    em.duplicate_in_progress(r, key, **p("duplicate_in_progress"))
    em.payload_conflict(r, key, **p("payload_conflict"))
    em.stale_claim_takeover(r, key, expires_at_ms=1, **p("stale_claim_takeover"))
    em.retryable_failure(r, key, error_code="E1", **p("retryable_failure"))
    em.permanent_failure(r, key, error_code="E2", **p("permanent_failure"))
    em.poison_message(r, key, error_code="E3", **p("poison_message"))
    em.ambiguous_commit(r, key, side_effect_ref="ch_1", **p("ambiguous_commit"))
    em.side_effect_started(r, key, side_effect_ref="ch_2", **p("side_effect_started"))
    em.store_error(r, key, error_code="E4", **p("store_error"))
    for o in Outcome:
        em.record_outcome(o, r, key, **p(f"record_outcome:{o.value}"))
    em.failure(SecretError(seeder), r, key, **p("failure"))
    em.failure(ValueError(seeder.value("value-error")), r, **p("failure-permanent"))
    with contextlib.suppress(TimeoutBudgetExceeded):  # 1 s left < 10**9 ms required: the abort is recorded
        em.check_time_budget(10**9, r, key, **p("check_time_budget"))
    # warnings: invalid siblings next to secrets (NaN, too deep, huge) make warning records for the same calls
    deep: object = {"password": seeder.value("too-deep"), "note": seeder.value("too-deep-note")}
    for _ in range(20):
        deep = [deep]
    em.succeeded(r, key, bad=float("nan"), deep=deep, huge="x" * 300_000, **p("warning-siblings"))
    em.batch_item_failures([r])


def check(seeder: Seeder, mem: MemorySink) -> list[dict]:
    """No seeded value in any output byte; the output is not vacuous: every form was written redacted at the top
    and deep inside, the control values pass, and the hashed key is there."""
    assert leaks(seeder, "\n".join(mem.lines)) == []
    records = [json.loads(line) for line in mem.lines]
    top = next(r for r in records if r.get("outcome") == "succeeded" and "context" in r)
    assert {f: top[f] for f in ALL_FORMS} == dict.fromkeys(ALL_FORMS, REDACTED)
    assert top["context"]["deep"]["a"]["b"]["c"][0]["d"] == dict.fromkeys(ALL_FORMS, REDACTED)
    assert {k: top[k] for k in CONTROL} == CONTROL
    assert any(r.get("idempotency_key", "").startswith("acme:sha256:") for r in records)
    return records


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_adapters_wrapper_context_and_exceptions_leak_nothing(source):
    """records()/record_for() of every source with secrets in headers, attributes, bodies and images, inside the
    handler wrapper and an invocation scope with a secret-carrying context; the handler raises a secret exception."""
    seeder = Seeder()
    event = seeded_events(seeder)[source]
    mem = MemorySink()
    em = emitter(mem)

    @em.handler(operation="Secrets")
    def handler(ev, context):
        recs = em.records(ev)
        assert {r.event_source.value for r in recs} == {SOURCES[source]}
        for r in recs:
            em.succeeded(r, "acme:" + seeder.value("key"), **seeder.nested("succeeded"))
            em.failure(SecretError(seeder), r)
            em.batch_item_failures([r])
        raise SecretError(seeder)

    with pytest.raises(SecretError):
        handler(event, Ctx(seeder))
    with em.invocation(Ctx(seeder), operation="Scope", event=event):
        em.record_for(event)
    em.flush()
    check(seeder, mem)


@pytest.mark.parametrize("record", [True, False])
def test_every_outcome_call_leaks_nothing(record):
    """Every outcome method and record_outcome for every Outcome, with and without a record, extras seeded at every
    depth, warnings provoked next to them, keys hashed."""
    seeder = Seeder()
    mem = MemorySink()
    em = emitter(mem)
    with em.invocation(Ctx(seeder), operation="Calls"):
        r = em.records(seeded_events(seeder)["sqs"])[0] if record else None
        all_outcome_calls(em, r, seeder)
    em.flush()
    records = check(seeder, mem)
    assert any("idemwatch_warning" in r for r in records)
    assert {r["outcome"] for r in records if "outcome" in r} >= {o.value for o in Outcome} - {"received"}


def test_async_handler_and_dict_context():
    seeder = Seeder()
    mem = MemorySink()
    em = emitter(mem)

    @em.handler
    async def handler(ev, context):
        for r in em.records(ev):
            em.succeeded(r, **seeder.nested("async"))
        raise SecretError(seeder)

    ctx = {"aws_request_id": "r", "function_name": "f", "remaining_time_ms": 500, **seeder.secrets("dict-context")}
    with pytest.raises(SecretError):
        asyncio.run(handler(seeded_events(seeder)["sqs"], ctx))
    assert leaks(seeder, "\n".join(mem.lines)) == []
    assert sum(line.count(REDACTED) for line in mem.lines) >= 5 * len(ALL_FORMS)


def _trees():
    from hypothesis import strategies as st

    keys = st.sampled_from(ALL_FORMS[::7] + ["note", "items", "order_id", "tokens_used", "meta"])
    leaf = st.one_of(st.integers(-5, 5), st.just("plain"), st.none())
    return st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(keys, inner, max_size=5)), max_leaves=30)


def _plant(tree, seeder: Seeder, path: str = "t"):
    """Put a fresh secret value under every secret-named key of ``tree`` (whatever was there: a leaf, a dict, a list
    gets the secret nested inside), leaving innocuous keys as they are."""
    from emitter.redact import SecretNames

    names = SecretNames(DEFAULT_REDACTED_KEYS, DEFAULT_REDACTED_EXACT_KEYS)
    if isinstance(tree, dict):
        return {k: ({"v": seeder.value(f"{path}.{k}"), "deeper": _plant(v, seeder, f"{path}.{k}")} if k in names
                    else _plant(v, seeder, f"{path}.{k}")) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_plant(v, seeder, f"{path}[]") for v in tree]
    return tree


def test_random_trees_leak_nothing():
    from hypothesis import given, settings

    planted = []

    @settings(max_examples=80, deadline=None)
    @given(_trees())
    def check_tree(tree):
        seeder = Seeder()
        mem = MemorySink()
        em = emitter(mem)
        em.succeeded(None, "k", payload_tree=_plant(tree, seeder), wrapped=[_plant(tree, seeder)])
        assert leaks(seeder, "\n".join(mem.lines)) == []
        planted.append(len(seeder.where))

    check_tree()
    assert sum(planted) > 50  # the trees did carry secrets
