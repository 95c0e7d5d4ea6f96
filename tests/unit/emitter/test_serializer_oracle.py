"""The emitter's string-assembled JSON against ``json.dumps`` as the oracle, on random values.

- EMF: :func:`emf.fast_document` (the flush's serializer) writes what ``json.dumps`` writes for the same document,
  for random contract-metric groups and values (huge ints, subnormal and huge floats); the values the emitter refuses
  (NaN, inf, magnitudes beyond 2^360) are refused by ``coerce_metric_value``; :func:`emf.write_documents` splits a
  group into valid documents holding every value once.
- Log records: every line the outcome calls write is exactly ``json.dumps`` of its own parse (compact, ASCII
  escapes: so unicode, lone surrogates, quotes, controls and U+2028 come out as json.dumps escapes them), carries
  the values given (keys, error codes, ids; cut to MAX_LOG_FIELD_CHARS) and never a secret.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emitter import Emitter, EventRecord, EventSource, MemorySink, Metric, Outcome, emf
from emitter import constants as C
from emitter.contract import METRIC_UNITS, REDACTED

NOW = 1_767_608_401_000
SECRET = "S3CR3T-oracle"
MAX = C.MAX_LOG_FIELD_CHARS


def compact(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


def _no_constants(name: str) -> object:
    raise AssertionError(f"non-JSON constant {name} in a line")


# ---------------------------------------------------------------------------------------------------- EMF documents
numbers = st.one_of(
    st.integers(0, 10**6),
    st.integers(-(2**400), 2**400),  # beyond 2^360: refused by coerce_metric_value
    st.floats(allow_nan=True, allow_infinity=True),  # NaN and inf: refused; subnormals: refused below 2^-360
    st.floats(min_value=-1e300, max_value=1e300, allow_nan=False),
)
metrics = st.lists(st.sampled_from(list(Metric)), unique=True, min_size=1, max_size=len(Metric))


@settings(max_examples=300, deadline=None)
@given(names=metrics, raw=st.lists(st.lists(numbers, min_size=1, max_size=12), min_size=len(Metric),
                                   max_size=len(Metric)),
       dims=st.dictionaries(st.sampled_from(["Service", "Operation", "Region"]), st.text(min_size=1, max_size=8),
                            min_size=1))
def test_fast_document_equals_json_dumps(names, raw, dims):
    series = []
    for m, values in zip(names, raw):
        kept = []
        for v in values:
            c, reason = emf.coerce_metric_value(v)
            if math.isnan(v) or math.isinf(v) or (v and not 2.0**-360 <= abs(v) <= 2.0**360):
                assert reason is not None and c is None  # refused as today, never written
            else:
                assert reason is None
                kept.append(c)
        if kept:
            unit = METRIC_UNITS[m].value
            series.append(emf.MetricSeries(m.value, unit, 60, kept if unit != "Count" else [sum(kept)]))
    if not series:
        return
    sets = [["Service", "Operation"], ["Service"]]
    header = emf.directive_header("Idempotency", sets)
    root = {**dims, "function_request_id": "r-ü\ud800", "schema_version": "1"}
    expected = {"_aws": {"Timestamp": NOW, "CloudWatchMetrics": [{
        "Namespace": "Idempotency", "Dimensions": sets,
        "Metrics": [{"Name": s.name, "Unit": s.unit} for s in series]}]},
        **root, **{s.name: (s.values[0] if len(s.values) == 1 else s.values) for s in series}}
    assert emf.fast_document(header, NOW, compact(root)[1:-1], series) == compact(expected)


@settings(max_examples=300, deadline=None)
@given(names=metrics, raw=st.lists(st.lists(numbers, min_size=1, max_size=130), min_size=len(Metric),
                                   max_size=len(Metric)),
       body=st.sampled_from(['"Service":"orders"', '"Service":"orders","function_request_id":"r-\\u00fc"']))
def test_write_documents_splits_a_group_into_valid_documents_holding_every_value_once(names, raw, body):
    """emf.write_documents, the flush's writer: one document equal to json.dumps when the group fits; otherwise
    documents of at most 100 values per metric, each valid EMF, together holding every value exactly once and in
    order, and no more documents than the longest metric needs."""
    series = []
    for m, values in zip(names, raw):
        kept = [c for c, reason in map(emf.coerce_metric_value, values) if reason is None]
        if kept:
            unit = METRIC_UNITS[m].value
            series.append(emf.MetricSeries(m.value, unit, 60, [sum(kept)] if unit == "Count" else kept))
    if not series:
        return
    header = emf.directive_header("Idempotency", [["Service"]])
    lines = emf.write_documents(header, NOW, body, series)
    docs = [json.loads(line, parse_constant=_no_constants) for line in lines]
    for line, doc in zip(lines, docs):
        assert line == compact(doc)
        assert emf.validate_document(line, NOW) == []
    longest = max(len(s.values) for s in series)
    assert len(lines) == (1 if longest <= 100 else -(-longest // 100))
    for s in series:
        got: list = []
        for doc in docs:
            if s.name in doc:
                got.extend(doc[s.name] if isinstance(doc[s.name], list) else [doc[s.name]])
        assert got == s.values


@pytest.mark.parametrize("n", [1, 2, 100, 101])
def test_write_documents_value_counts(n):
    """A Milliseconds metric with one value is written as a number, with 2..100 values as a list; 101 values go to
    two documents (100 and 1), the Count metrics in the first."""
    series = [emf.MetricSeries("EventsReceived", "Count", 60, [3]),
              emf.MetricSeries("RecordAge", "Milliseconds", 60, list(range(7, 7 + n))),
              emf.MetricSeries("Redelivery", "Count", 60, [1])]
    header = emf.directive_header("Idempotency", [["Service"]])
    lines = emf.write_documents(header, NOW, '"Service":"s"', series)
    docs = [json.loads(line) for line in lines]
    if n == 101:
        assert [d["RecordAge"] for d in docs] == [list(range(7, 107)), 107]
        assert (docs[0]["EventsReceived"], docs[0]["Redelivery"]) == (3, 1)
        assert "EventsReceived" not in docs[1]
    else:
        (doc,) = docs
        assert doc["RecordAge"] == (7 if n == 1 else list(range(7, 7 + n)))
        assert lines[0].endswith(',"EventsReceived":3,"RecordAge":' + (
            "7" if n == 1 else compact(list(range(7, 7 + n)))) + ',"Redelivery":1}')


def test_flush_writes_custom_metrics_beside_the_contract_metrics():
    """The flush writes a custom metric with its own unit and resolution, beside the contract metrics, in the order
    they were added; a contract Count metric holds its sum."""
    sink = MemorySink()
    em = Emitter(service="orders", sink=sink, clock=lambda: NOW)
    em.succeeded(key="k")
    em.add_metric("MyLatency", 2.5, "Milliseconds", resolution=1)
    em.add_metric("MyLatency", 3, "Milliseconds", resolution=1)
    em.succeeded(key="k2")
    em.flush()
    doc = json.loads(sink.lines[-1])
    assert doc["_aws"]["CloudWatchMetrics"][0]["Metrics"] == [
        {"Name": "EventsSucceeded", "Unit": "Count"}, {"Name": "MyLatency", "Unit": "Milliseconds",
                                                        "StorageResolution": 1}]
    assert doc["EventsSucceeded"] == 2 and doc["MyLatency"] == [2.5, 3]
    assert list(doc)[-2:] == ["EventsSucceeded", "MyLatency"]


# ---------------------------------------------------------------------------------------------------- log records
chars = st.one_of(st.characters(), st.sampled_from(['"', "\\", "\x00", "\x1f", "\u2028", "\ud800", "\udfff", "é",
                                                    "😀", "\x7f"]))
texts = st.one_of(st.text(chars, min_size=1, max_size=30), st.integers(MAX - 2, MAX + 3).map(lambda n: "k" * n))
huge_ints = st.one_of(st.integers(0, 2**53), st.integers(-(2**400), 2**400),
                      st.sampled_from([2**360, 2**360 + 1, -(2**360), 10**5000]))
secret_names = st.sampled_from(["password", "dbPassword", "api_key", "X-Api-Key", "authorization", "SESSION",
                                "client_secret", "refresh_tokens"])
METHODS = {
    "succeeded": (Outcome.SUCCEEDED, None), "duplicate_completed": (Outcome.DUPLICATE_COMPLETED, None),
    "duplicate_in_progress": (Outcome.DUPLICATE_IN_PROGRESS, None), "payload_conflict": (Outcome.PAYLOAD_CONFLICT, None),
    "store_error": (Outcome.STORE_ERROR, "error_code"), "retryable_failure": (Outcome.RETRYABLE_FAILURE, "error_code"),
    "permanent_failure": (Outcome.PERMANENT_FAILURE, "error_code"), "poison_message": (Outcome.POISON_MESSAGE, "error_code"),
    "claimed": (Outcome.CLAIMED, "expires_at_ms"), "stale_claim_takeover": (Outcome.STALE_CLAIM_TAKEOVER, "expires_at_ms"),
    "ambiguous_commit": (Outcome.AMBIGUOUS_COMMIT, "side_effect_ref"),
}


class Ctx:
    def __init__(self, rid: str, fname: str) -> None:
        self.aws_request_id, self.function_name = rid, fname
        self.invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:f"
        self.memory_limit_in_mb = 256


call = st.fixed_dictionaries({
    "method": st.sampled_from(sorted(METHODS)),
    "key": st.one_of(st.none(), texts),
    "value": st.one_of(st.none(), texts, huge_ints),
    "record": st.one_of(st.none(), st.fixed_dictionaries({
        "event_id": st.one_of(st.none(), texts), "attempt": st.integers(1, 2**70),
        "source": st.sampled_from([EventSource.SQS, EventSource.KINESIS, EventSource.API_GATEWAY_HTTP]),
        "key": st.one_of(st.none(), texts), "corr": st.one_of(st.none(), texts)})),
    "secret": st.one_of(st.none(), secret_names),
    "extra": st.one_of(st.none(), st.floats(), huge_ints, texts),
})


def _record(d: dict | None) -> EventRecord | None:
    if d is None:
        return None
    return EventRecord(event_id=d["event_id"], event_source=d["source"], attempt=d["attempt"],
                       idempotency_key=d["key"], correlation_id=d["corr"])


def _invoke(em: Emitter, c: dict) -> None:
    _, field = METHODS[c["method"]]
    props: dict = {}
    if field is not None and c["value"] is not None and (field == "expires_at_ms") == isinstance(c["value"], int):
        props[field] = c["value"]
    if c["secret"] is not None:
        props[c["secret"]] = SECRET
    if c["extra"] is not None:
        props["note"] = c["extra"]
    getattr(em, c["method"])(_record(c["record"]), c["key"], **props)


def _logger_gone() -> str:
    raise RuntimeError("logger gone")


# a Powertools Logger's get_correlation_id (or use_logger's), returning what a user's Logger may hold
providers = st.sampled_from([None, lambda: "corr-from-logger", lambda: None, lambda: 'c-"é\u2028', lambda: 7,
                             lambda: "c" * (MAX + 1), _logger_gone])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(call, min_size=1, max_size=6), hashing=st.booleans(),
       service=st.text(chars, min_size=1, max_size=12), rid=st.text(chars, min_size=1, max_size=40),
       fname=st.text(chars, min_size=1, max_size=20), provider=providers)
def test_outcome_lines_are_json_dumps_of_themselves_and_carry_the_values_given(calls, hashing, service, rid, fname,
                                                                              provider):
    em = Emitter(service=service, sink=MemorySink(), clock=lambda: NOW, hash_idempotency_keys=hashing)
    em.correlation_id_provider = provider
    em._logger_explicit = True  # as use_logger sets it: no detection at the invocation's start
    em.sink.lines.clear()  # a warning about the service name itself (written before the invocation)
    with em.invocation(Ctx(rid, fname), operation="Op", cold_start=False):
        for c in calls:
            _invoke(em, c)
        lines = list(em.sink.lines)
    assert "internal_error" not in em.warnings  # every value is written or dropped with a warning, never lost
    for line in lines:
        rec = json.loads(line, parse_constant=_no_constants)
        assert line == json.dumps(rec, separators=(",", ":"))  # the oracle: compact, ASCII-escaped json.dumps
        assert SECRET not in line
        assert rec["function_request_id"] == rid[:MAX] and rec["service"] == service
    outcomes = [r for r in map(json.loads, lines) if "outcome" in r]
    assert len(outcomes) == len(calls)  # one record per call
    for c, rec in zip(calls, outcomes):
        outcome, field = METHODS[c["method"]]
        assert rec["outcome"] == outcome.value
        key = c["key"] if c["key"] is not None else (c["record"] or {}).get("key")
        if key is not None and not hashing:
            assert rec["idempotency_key"] == key[:MAX]
        if c["secret"] is not None:
            assert rec[c["secret"]] == REDACTED
        r = c["record"]
        if r is not None and r["event_id"] is not None:
            assert rec["event_id"] == r["event_id"][:MAX]
        v = c["value"]
        if field == "error_code" and isinstance(v, str):
            assert rec["error_code"] == v[:MAX]
        if provider is not None and (r is None or r["corr"] is None):  # a record's own id wins
            want = None if provider is _logger_gone else provider()
            if want is None:
                assert "correlation_id" not in rec
            else:
                assert rec["correlation_id"] == str(want)[:MAX]
        if field == "expires_at_ms" and isinstance(v, int):
            if abs(v) <= 2**360:
                assert rec["in_progress_expires_at_ms"] == v
            else:  # beyond what a metric value may be: dropped from the record, with a warning
                assert "in_progress_expires_at_ms" not in rec


@pytest.mark.parametrize("value", [2**53, 2**360, 2**360 + 1, -(2**360) - 1, 10**400, 10**5000],
                         ids=["2^53", "2^360", "2^360+1", "-2^360-1", "10^400", "10^5000"])
@pytest.mark.parametrize("method", ["claimed", "stale_claim_takeover"])
def test_expiry_ints_beyond_a_metric_value_are_dropped_with_a_warning(method, value):
    """An ``expires_at_ms`` int of a magnitude over 2^360 (over 4300 digits ``int.__repr__`` raises) is not a
    metric value: the record is written without it and the drop is counted, never lost as an internal error."""
    em = Emitter(service="s", sink=MemorySink(), clock=lambda: NOW)
    _invoke(em, {"method": method, "key": "k", "value": value, "record": None, "secret": None, "extra": None})
    rec = next(r for r in map(json.loads, em.sink.lines) if "outcome" in r)
    assert rec["outcome"] == METHODS[method][0].value
    if value <= 2**360 and value >= -(2**360):
        assert rec["in_progress_expires_at_ms"] == value and em.warnings == {}
    else:
        assert "in_progress_expires_at_ms" not in rec and em.warnings == {"invalid_property": 1}


@pytest.mark.parametrize(("method", "kwargs"), [("claimed", {"expires_at_ms": 1.5e12}),
                                                ("retryable_failure", {"error_code": "E" * (MAX + 1)}),
                                                ("ambiguous_commit", {"side_effect_ref": "r" * (MAX + 1)})])
def test_a_key_is_hashed_once_and_the_correlation_id_read_once(method, kwargs):
    """Whatever keyword value comes with it, the record carries the caller's key hashed once and a Powertools
    Logger's correlation id read once; a float expiry is written as its int, a long code or ref cut to 1,024."""
    em = Emitter(service="orders", sink=MemorySink(), clock=lambda: NOW, hash_idempotency_keys=True)
    reads = []
    em.correlation_id_provider = lambda: reads.append(1) or "corr-1"
    rec = EventRecord(event_id="m-1", event_source=EventSource.SQS)
    with em.invocation(None, operation="Op", cold_start=False):
        getattr(em, method)(rec, "acme:k-1", **kwargs)
    assert len(reads) == 1
    (r,) = [r for r in map(json.loads, em.sink.lines) if "outcome" in r]
    assert r["idempotency_key"] == "acme:sha256:" + __import__("hashlib").sha256(b"k-1").hexdigest()[:32]
    assert r["correlation_id"] == "corr-1"
    field, value = next(iter(kwargs.items()))
    if field == "expires_at_ms":
        assert r["in_progress_expires_at_ms"] == 1_500_000_000_000
    else:
        assert r[field] == value[:MAX] and em.warnings == {"value_truncated": 1}
