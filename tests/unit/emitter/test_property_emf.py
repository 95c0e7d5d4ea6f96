"""Property-based: for arbitrary names and values every line is valid JSON, every EMF document is valid by our
reading of the spec, by the spec's own JSON schema (jsonschema) and by aws-embedded-metrics' validator (an
independent oracle), and no valid value is lost."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emitter import Emitter, EventRecord, MemorySink, emf
from emitter import constants as C

# The EMF specification's JSON schema, with the current 30-dimension limit.
SPEC_SCHEMA = {
    "type": "object",
    "required": ["_aws"],
    "properties": {
        "_aws": {
            "type": "object",
            "required": ["Timestamp", "CloudWatchMetrics"],
            "properties": {
                "Timestamp": {"type": "integer"},
                "CloudWatchMetrics": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["Namespace", "Dimensions", "Metrics"],
                        "properties": {
                            "Namespace": {"type": "string", "minLength": 1, "maxLength": 255},
                            "Dimensions": {"type": "array", "minItems": 1, "items": {
                                "type": "array", "maxItems": 30,
                                "items": {"type": "string", "minLength": 1, "maxLength": 255}}},
                            "Metrics": {"type": "array", "maxItems": 100, "items": {
                                "type": "object", "required": ["Name"],
                                "properties": {
                                    "Name": {"type": "string", "minLength": 1, "maxLength": 255},
                                    "Unit": {"type": "string", "pattern": "^(Seconds|Microseconds|Milliseconds|Bytes|Kilobytes|Megabytes|Gigabytes|Terabytes|Bits|Kilobits|Megabits|Gigabits|Terabits|Percent|Count|Bytes\\/Second|Kilobytes\\/Second|Megabytes\\/Second|Gigabytes\\/Second|Terabytes\\/Second|Bits\\/Second|Kilobits\\/Second|Megabits\\/Second|Gigabits\\/Second|Terabits\\/Second|Count\\/Second|None)$"},
                                    "StorageResolution": {"enum": [1, 60]},
                                }}},
                        },
                    },
                },
            },
        }
    },
}


def oracle(doc: dict) -> None:
    """aws-embedded-metrics' own validation of everything a document carries (raises on a violation)."""
    from aws_embedded_metrics import validator
    from aws_embedded_metrics.storage_resolution import StorageResolution

    validator.validate_timestamp(datetime.fromtimestamp(doc["_aws"]["Timestamp"] / 1000, tz=UTC))
    for d in doc["_aws"]["CloudWatchMetrics"]:
        validator.validate_namespace(d["Namespace"])
        for ds in d["Dimensions"]:
            validator.validate_dimension_set({name: doc[name] for name in ds})
        assert len(d["Metrics"]) <= 100
        seen: dict = {}
        for m in d["Metrics"]:
            res = StorageResolution(m.get("StorageResolution", 60))
            values = doc[m["Name"]] if isinstance(doc[m["Name"]], list) else [doc[m["Name"]]]
            assert 1 <= len(values) <= 100
            for v in values:
                validator.validate_metric(m["Name"], v, m.get("Unit"), res, seen)
            seen[m["Name"]] = res


def check_lines(lines: list[str]) -> list[dict]:
    docs = []
    now = emf_now()
    for line in lines:
        assert "\n" not in line and len(line.encode()) <= C.MAX_EVENT_BYTES
        obj = json.loads(line)  # valid JSON (json.loads rejects nothing of ours; NaN is checked below)
        assert "NaN" not in line and "Infinity" not in line or not _has_nonfinite(obj)
        if "_aws" in obj:
            assert emf.validate_document(line, now) == [], line[:300]
            jsonschema.validate(obj, SPEC_SCHEMA)
            oracle(obj)
            docs.append(obj)
    return docs


def _has_nonfinite(obj) -> bool:
    if isinstance(obj, float):
        return not math.isfinite(obj)
    if isinstance(obj, dict):
        return any(_has_nonfinite(v) for v in obj.values())
    if isinstance(obj, list):
        return any(_has_nonfinite(v) for v in obj)
    return False


def emf_now() -> int:
    import time

    return time.time_ns() // 1_000_000


names = st.text(min_size=0, max_size=300)
ascii_names = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), min_size=0, max_size=300)
numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-(10**120), max_value=10**120),
                    st.none(), st.booleans(), st.text(max_size=5))
units = st.one_of(st.sampled_from(sorted(C.UNITS)), st.text(max_size=12))
resolutions = st.one_of(st.sampled_from([1, 60]), st.integers(-5, 100), st.booleans(), st.floats(0, 61))
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(), st.integers(), st.text(max_size=40)),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    metrics=st.lists(st.tuples(st.one_of(names, ascii_names), numbers, units, resolutions), max_size=40),
    dims=st.lists(st.tuples(st.one_of(names, ascii_names, st.integers()), st.one_of(names, ascii_names, st.integers(), st.none())), max_size=6),
    service=st.one_of(names, ascii_names),
    operation=st.one_of(names, ascii_names),
    namespace=st.one_of(names, ascii_names),
)
def test_arbitrary_metrics_and_dimensions_give_valid_emf(metrics, dims, service, operation, namespace):
    sink = MemorySink()
    em = Emitter(service=service, namespace=namespace, sink=sink)
    with em.invocation({"aws_request_id": "r"}, operation=operation, cold_start=True):
        for name, value in dims:
            em.add_dimension(name, value)
        for name, value, unit, res in metrics:
            em.add_metric(name, value, unit=unit, resolution=res)
        em.succeeded()
    docs = check_lines(sink.lines)
    # Nothing valid is lost: every accepted (name, value) appears; every dropped one is in a warning.
    accepted = sum(1 for n, v, u, r in metrics
                   if emf.check_metric_name(n) is None and emf.coerce_metric_value(v)[1] is None
                   and emf.check_unit(u) is None and emf.check_resolution(r) is None)
    written_custom = sum(len(d[m["Name"]]) if isinstance(d[m["Name"]], list) else 1
                         for d in docs for m in d["_aws"]["CloudWatchMetrics"][0]["Metrics"]
                         if m["Name"] not in ("EventsSucceeded", "ColdStart"))
    dropped = sum(em.warnings.get(code, 0) for code in (
        "invalid_metric_name", "invalid_metric_value", "invalid_unit", "invalid_storage_resolution",
        "name_conflict", "metric_definition_conflict"))
    assert written_custom + dropped >= len(metrics)
    assert written_custom <= accepted
    assert sum(d.get("EventsSucceeded", 0) for d in docs) == 1


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    key=st.one_of(names, st.integers(), st.none()),
    # "record" and "key" are succeeded()'s own parameters: passing them again is a TypeError at the call site
    props=st.dictionaries(st.text(max_size=20).filter(lambda k: k not in ("record", "key")), json_values, max_size=6),
    event_id=st.one_of(names, st.none()),
    age=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.none(), st.integers(-10, 10**6)),
    attempt=st.integers(1, 20),
)
def test_arbitrary_outcome_properties_give_valid_lines(key, props, event_id, age, attempt):
    sink = MemorySink()
    em = Emitter(service="svc", sink=sink)
    r = EventRecord(event_id=event_id, attempt=attempt, record_age_ms=age)
    with em.invocation(None, operation="Op", cold_start=False):
        em.record_outcome("received", r)
        em.succeeded(r, key, **props)
    check_lines(sink.lines)
    recs = [json.loads(line) for line in sink.lines]
    assert sum(1 for o in recs if o.get("outcome") == "succeeded") == 1
    assert sum(1 for o in recs if o.get("outcome") == "received") == 1
    emf_docs = [o for o in recs if "_aws" in o]
    assert sum(d.get("EventsReceived", 0) for d in emf_docs) == 1
    assert sum(d.get("Redelivery", 0) for d in emf_docs) == (1 if attempt > 1 else 0)


@settings(max_examples=30, deadline=None)
@given(n_metrics=st.integers(0, 260), n_values=st.integers(1, 260))
def test_split_boundaries_never_drop(n_metrics, n_values):
    sink = MemorySink()
    em = Emitter(service="svc", sink=sink)
    for i in range(n_metrics):
        em.add_metric(f"M{i}", i)
    for j in range(n_values):
        em.add_metric("Series", float(j), unit="Milliseconds")
    em.flush()
    docs = check_lines(sink.lines)
    got: dict[str, list] = {}
    for d in docs:
        for m in d["_aws"]["CloudWatchMetrics"][0]["Metrics"]:
            v = d[m["Name"]]
            got.setdefault(m["Name"], []).extend(v if isinstance(v, list) else [v])
    assert got["Series"] == [float(j) for j in range(n_values)]
    assert all(got[f"M{i}"] == [i] for i in range(n_metrics))
    chunks = math.ceil(n_values / 100)
    assert len(docs) == max(math.ceil((n_metrics + chunks) / 100), chunks)  # the minimum possible
