"""Bad input: dropped element, everything else written, one warning record with a code; strict mode raises."""

from __future__ import annotations

import json
from datetime import UTC

import pytest

from emitter import EmfValidationError, EventRecord, WarningCode
from emitter import constants as C
from emitter.emf import validate_document


def assert_valid(out, now):
    for line in out.lines:
        assert "\n" not in line
        json.loads(line)
    for line in [line for line in out.lines if '"_aws"' in line]:
        assert validate_document(line, now) == []


@pytest.mark.parametrize(
    "value,code",
    [(float("nan"), "invalid_metric_value"), (float("inf"), "invalid_metric_value"),
     (float("-inf"), "invalid_metric_value"), (None, "invalid_metric_value"), ("12", "invalid_metric_value"),
     (True, "invalid_metric_value")],
)
def test_bad_metric_values_dropped_rest_written(make, read, clock, value, code):
    em, sink = make()
    em.add_metric("Good", 1)
    em.add_metric("Bad", value)
    em.add_metric("Good", 2)
    em.flush()
    out = read(sink)
    (doc,) = out.emf
    assert doc["Good"] == [1, 2] and "Bad" not in doc
    (w,) = out.warnings
    assert w["idemwatch_warning"] == code and w["level"] == "WARNING"
    assert w["idemwatch_dropped"][0]["element"] == "metric:Bad"
    assert em.warnings == {code: 1}
    assert_valid(out, clock[0])


@pytest.mark.parametrize(
    "kwargs,code",
    [({"name": ""}, "invalid_metric_name"), ({"name": "x" * 251}, "invalid_metric_name"),
     ({"name": "EventsReceived"}, "name_conflict"), ({"name": "Service"}, "name_conflict"),
     ({"unit": "Parsecs"}, "invalid_unit"), ({"resolution": True}, "invalid_storage_resolution"),
     ({"resolution": 5}, "invalid_storage_resolution"), ({"resolution": 1.0}, "invalid_storage_resolution")],
)
def test_bad_metric_definitions(make, read, kwargs, code):
    em, sink = make()
    args = {"name": "M", "value": 1, **kwargs}
    em.add_metric(**args)
    assert em.flush() == []
    assert read(sink).warnings[0]["idemwatch_warning"] == code


def test_int_1_resolution_is_high_resolution(make, read):
    em, sink = make()
    em.add_metric("Fast", 3, resolution=1)
    em.flush()
    (doc,) = read(sink).emf
    assert doc["_aws"]["CloudWatchMetrics"][0]["Metrics"] == [{"Name": "Fast", "Unit": "Count", "StorageResolution": 1}]


def test_resolution_conflict_in_one_flush(make, read):
    em, sink = make()
    em.add_metric("M", 1, resolution=1)
    em.add_metric("M", 2, resolution=60)
    em.flush()
    out = read(sink)
    assert out.emf[0]["M"] == 1
    assert out.warnings[0]["idemwatch_warning"] == "metric_definition_conflict"


def test_150_metrics_split_never_dropped(make, read, clock):
    em, sink = make()
    for i in range(150):
        em.add_metric(f"Custom{i}", i + 1)
    lines = em.flush()
    out = read(sink)
    assert len(lines) == 2 and out.warnings == []
    assert sorted(out.metric_sum(f"Custom{i}") for i in range(150)) == [float(i + 1) for i in range(150)]
    assert_valid(out, clock[0])


def test_300_values_split_never_dropped(make, read, clock):
    em, sink = make()
    for i in range(300):
        em.add_metric("Latency", float(i), unit="Milliseconds")
    assert len(em.flush()) == 3
    out = read(sink)
    assert out.metric_values("Latency") == [float(i) for i in range(300)]
    assert_valid(out, clock[0])


def test_300_received_records_split_record_age(make, read, clock):
    em, sink = make()
    ev = {"Records": [{"eventSource": "aws:sqs", "messageId": f"m{i}", "attributes": {
        "ApproximateReceiveCount": "1", "SentTimestamp": str(clock[0] - i)}} for i in range(300)]}
    em.records(ev)
    em.flush()
    out = read(sink)
    assert len(out.emf) == 3
    assert out.metric_sum("EventsReceived") == 300  # the summed count sits in one document only
    assert sorted(out.metric_values("RecordAge")) == list(range(300))
    assert_valid(out, clock[0])


def test_31_dimensions(make, read, clock):
    em, sink = make()
    for i in range(31):
        em.add_dimension(f"Dim{i}", f"v{i}")
    em.add_metric("M", 1)
    em.flush()
    out = read(sink)
    (doc,) = out.emf
    sets = doc["_aws"]["CloudWatchMetrics"][0]["Dimensions"]
    assert max(len(s) for s in sets) == 30
    assert [w["idemwatch_warning"] for w in out.warnings] == ["too_many_dimensions"] * 3  # Dim28, Dim29, Dim30
    assert em.warnings == {"too_many_dimensions": 3}
    assert "Dim27" in doc and "Dim28" not in doc
    assert_valid(out, clock[0])


@pytest.mark.parametrize(
    "name,value,code",
    [("Region", 5, "invalid_dimension_value"), ("Region", None, "invalid_dimension_value"),
     ("Region", "", "invalid_dimension_value"), ("Region", "x" * 1025, "invalid_dimension_value"),
     ("Region", "São Paulo", "invalid_dimension_value"), ("", "v", "invalid_dimension_name"),
     (":Region", "v", "invalid_dimension_name"), ("x" * 251, "v", "invalid_dimension_name"),
     ("Région", "v", "invalid_dimension_name"), (42, "v", "invalid_dimension_name"),
     ("IdempotencyKey", "k-1", "high_cardinality_dimension"), ("tenant_id", "acme", "high_cardinality_dimension"),
     ("RequestId", "r", "high_cardinality_dimension"), ("event-id", "e", "high_cardinality_dimension"),
     ("Operation", "x", "name_conflict")],
)
def test_bad_dimensions(make, read, name, value, code):
    em, sink = make()
    em.add_dimension(name, value)
    em.add_metric("M", 1)
    em.flush()
    out = read(sink)
    assert out.warnings[0]["idemwatch_warning"] == code
    (doc,) = out.emf
    assert doc["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["Service", "Operation"], ["Service"]]
    assert doc["M"] == 1


def test_bad_service_and_namespace(make, read, clock):
    em, sink = make(service="café ☕", namespace="Has Spaces")
    assert em.namespace == "Idempotency"
    em.succeeded()
    em.flush()
    out = read(sink)
    assert [w["idemwatch_warning"] for w in out.warnings] == ["invalid_dimension_value"]
    codes = [d["code"] for d in out.warnings[0]["idemwatch_dropped"]]
    assert codes == ["invalid_dimension_value", "invalid_namespace"]
    (doc,) = out.emf
    assert "Service" not in doc and doc["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["Operation"], []]
    assert out.outcomes[0]["service"] == "café ☕"  # still readable in the logs
    assert_valid(out, clock[0])


def test_bad_timestamp(make, read, clock):
    em, sink = make()
    em.set_timestamp(clock[0] - C.MAX_TIMESTAMP_PAST_MS - 1)
    em.set_timestamp(clock[0] + C.MAX_TIMESTAMP_FUTURE_MS + 1)
    em.set_timestamp("yesterday")
    em.add_metric("M", 1)
    em.flush()
    out = read(sink)
    assert [w["idemwatch_warning"] for w in out.warnings] == ["invalid_timestamp"] * 3
    assert out.emf[0]["_aws"]["Timestamp"] == clock[0]


def test_property_values_sanitized(make, read):
    from datetime import datetime
    from decimal import Decimal

    class Opaque:
        def __str__(self):
            return "secret-from-str"

    em, sink = make()
    em.succeeded(None, "k", ratio=float("nan"), big=float("inf"), amount=Decimal("10.50"), count=Decimal(3),
                 when=datetime(2026, 1, 5, tzinfo=UTC), blob=b"\x00\x01", thing=Opaque(),
                 nested={"a": [1, float("-inf"), {"b": None}]}, tags={"x", }, text="naïve – ünïcödé ✓")
    out = read(sink)
    (o,) = out.outcomes
    assert o["ratio"] is None and o["big"] is None
    assert o["amount"] == 10.5 and o["count"] == 3
    assert o["when"] == "2026-01-05T00:00:00+00:00"
    assert o["blob"] == "<bytes:2>" and o["thing"] == "<Opaque>"
    assert o["nested"] == {"a": [1, None, {"b": None}]} and o["tags"] == ["x"]
    assert o["text"] == "naïve – ünïcödé ✓"
    (w,) = out.warnings
    # every replaced value is counted: the non-finite numbers, the bytes and the unknown object
    assert [d["element"] for d in w["idemwatch_dropped"]] == ["property:ratio", "property:big", "property:blob",
                                                               "property:thing", "property:nested.a"]
    assert em.warnings == {"invalid_property": 5}
    assert "secret-from-str" not in "".join(out.lines)


def test_2mb_property_dropped_record_kept(make, read):
    em, sink = make()
    em.succeeded(EventRecord(event_id="e-1"), "k", note="n" * (2 * 1024 * 1024), small="kept")
    out = read(sink)
    (o,) = out.outcomes
    assert "note" not in o and o["small"] == "kept" and o["event_id"] == "e-1"
    assert max(len(line.encode()) for line in out.lines) <= C.MAX_EVENT_BYTES
    assert out.warnings[0]["idemwatch_warning"] == "property_too_large"
    assert out.warnings[0]["idemwatch_dropped"][0]["element"] == "property:note"


def test_huge_key_truncated(make, read):
    em, sink = make()
    em.succeeded(None, "k" * 5000, error_code="E" * 2000)
    out = read(sink)
    (o,) = out.outcomes
    assert o["idempotency_key"] == "k" * 1024
    assert [d["code"] for d in out.warnings[0]["idemwatch_dropped"]] == ["value_truncated", "value_truncated"]


def test_reserved_property_names_refused(make, read):
    em, sink = make()
    em.succeeded(None, "k", outcome="forged", level="DEBUG", service="other")
    out = read(sink)
    (o,) = out.outcomes
    assert o["outcome"] == "succeeded" and o["level"] == "INFO" and o["service"] == "orders"
    assert {d["element"] for d in out.warnings[0]["idemwatch_dropped"]} == {
        "property:outcome", "property:level", "property:service"}


def test_bad_status_and_class_values(make, read):
    em, sink = make()
    em.retryable_failure(None, "k", idempotency_status="DONE", error_class="sometimes")
    out = read(sink)
    (o,) = out.outcomes
    assert "idempotency_status" not in o and o["error_class"] == "retryable"
    assert len(out.warnings) == 1 and len(out.warnings[0]["idemwatch_dropped"]) == 2


def test_bad_time_budget_argument(make, read):
    em, sink = make()
    assert em.check_time_budget(float("nan")) is None
    assert read(sink).warnings[0]["idemwatch_warning"] == "invalid_property"


def test_non_ascii_everywhere_stays_valid(make, read, clock):
    em, sink = make()
    with em.invocation({"aws_request_id": "rëq", "function_name": "fñ"}, operation="Op", cold_start=False):
        em.succeeded(EventRecord(event_id="ïd-✓"), "clé-🔑", tenant_id="tenant-ü", note="日本語")
        em.add_metric("Latência", 1.5)
    out = read(sink)
    assert out.outcomes[0]["idempotency_key"] == "clé-🔑" and out.outcomes[0]["note"] == "日本語"
    assert out.emf[0]["Latência"] == 1.5
    assert_valid(out, clock[0])


@pytest.mark.parametrize(
    "action",
    [
        lambda em: em.add_metric("M", float("nan")),
        lambda em: em.add_metric("", 1),
        lambda em: em.add_metric("M", 1, resolution=True),
        lambda em: em.add_dimension("Region", 5),
        lambda em: em.add_dimension("TenantId", "acme"),
        lambda em: em.set_timestamp(0),
        lambda em: em.succeeded(None, "k", ratio=float("nan")),
        lambda em: em.succeeded(None, "k", note="n" * (300 * 1024)),
        lambda em: em.batch_item_failures([EventRecord()]),
        lambda em: em.records({"Records": [{"eventSource": "aws:sqs", "attributes": "x"}]}),
    ],
)
def test_strict_mode_raises_and_writes_nothing(make, read, action):
    em, sink = make(strict=True)
    with pytest.raises(EmfValidationError) as ei:
        action(em)
    assert ei.value.code in WarningCode.ALL
    em.flush()
    assert read(sink).warnings == []


def test_strict_constructor_raises():
    from emitter import Emitter, MemorySink

    with pytest.raises(EmfValidationError):
        Emitter(service="s", namespace="AWS/Lambda", sink=MemorySink(), strict=True)
