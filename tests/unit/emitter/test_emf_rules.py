"""EMF element rules at their boundaries and document splitting (100 metrics, 100 values, 256 KB)."""

from __future__ import annotations

import json

import pytest

from emitter import constants as C
from emitter import emf

NOW = 1_767_608_401_000


@pytest.mark.parametrize(
    "name,ok",
    [("a", True), ("x" * 250, True), ("x" * 251, False), ("", False), ("   ", False), (":leading", False),
     ("Région", False), ("tab\there", False), ("Has Space", True), (5, False), (None, False)],
)
def test_dimension_name(name, ok):
    assert (emf.check_dimension_name(name) is None) is ok


@pytest.mark.parametrize(
    "value,ok",
    [("v", True), ("v" * 1024, True), ("v" * 1025, False), ("", False), (" ", False), ("naïve", False),
     ("line\nbreak", False), (1, False), (None, False), (True, False)],
)
def test_dimension_value(value, ok):
    assert (emf.check_dimension_value(value) is None) is ok


@pytest.mark.parametrize(
    "ns,ok",
    [("Idempotency", True), ("a" * 255, True), ("a" * 256, False), ("", False), ("My App", False),
     ("team/app_1.v2#x:y-z", True), ("AWS/Lambda", False), ("Ünïcode", False), (None, False)],
)
def test_namespace(ns, ok):
    assert (emf.check_namespace(ns) is None) is ok


@pytest.mark.parametrize(
    "name,ok",
    [("m", True), ("m" * 250, True), ("m" * 251, False), ("", False), ("  ", False), ("Latência", True),
     ("bad\x00", False), ("_aws", False), (7, False)],
)
def test_metric_name(name, ok):
    assert (emf.check_metric_name(name) is None) is ok


@pytest.mark.parametrize(
    "value,ok",
    [(0, True), (1, True), (-5, True), (1.5, True), (2.0**360, True), (2.0**361, False), (2.0**-360, True),
     (2.0**-361, False), (float("nan"), False), (float("inf"), False), (float("-inf"), False), (True, False),
     (None, False), ("5", False), (10**200, False)],
)
def test_metric_value(value, ok):
    v, reason = emf.coerce_metric_value(value)
    assert (reason is None) is ok
    if ok:
        assert v == value


def test_decimal_metric_value_is_converted():
    from decimal import Decimal

    assert emf.coerce_metric_value(Decimal("12.5")) == (12.5, None)
    assert emf.coerce_metric_value(Decimal("NaN"))[1] is not None


@pytest.mark.parametrize("res,ok", [(1, True), (60, True), (True, False), (1.0, False), (30, False), ("1", False), (None, False)])
def test_storage_resolution(res, ok):
    assert (emf.check_resolution(res) is None) is ok


def test_units_match_aws_embedded_metrics():
    from aws_embedded_metrics.unit import Unit

    assert C.UNITS == {u.value for u in Unit}


@pytest.mark.parametrize(
    "offset,ok",
    [(0, True), (-C.MAX_TIMESTAMP_PAST_MS, True), (-C.MAX_TIMESTAMP_PAST_MS - 1, False),
     (C.MAX_TIMESTAMP_FUTURE_MS, True), (C.MAX_TIMESTAMP_FUTURE_MS + 1, False)],
)
def test_timestamp_window(offset, ok):
    assert (emf.check_timestamp(NOW + offset, NOW) is None) is ok
    assert emf.check_timestamp(float(NOW), NOW) is not None  # ints only


def series(n_metrics: int, n_values: int, prefix: str = "M") -> list[emf.MetricSeries]:
    return [emf.MetricSeries(f"{prefix}{i}", "Count", 60, list(range(1, n_values + 1))) for i in range(n_metrics)]


def build(s, **kw):
    return emf.build_documents("Ns", {"Service": "svc"}, [["Service"]], s, NOW, kw.get("props"))


def values_by_name(lines):
    got: dict[str, list] = {}
    for line in lines:
        doc = json.loads(line)
        assert emf.validate_document(line, NOW) == []
        for m in doc["_aws"]["CloudWatchMetrics"][0]["Metrics"]:
            v = doc[m["Name"]]
            got.setdefault(m["Name"], []).extend(v if isinstance(v, list) else [v])
    return got


@pytest.mark.parametrize("n,docs", [(1, 1), (100, 1), (101, 2), (150, 2), (200, 2), (201, 3)])
def test_split_at_100_metrics(n, docs):
    lines = build(series(n, 1))
    assert len(lines) == docs
    got = values_by_name(lines)
    assert len(got) == n and all(v == [1] for v in got.values())  # nothing dropped
    for line in lines:
        assert len(json.loads(line)["_aws"]["CloudWatchMetrics"][0]["Metrics"]) <= 100


@pytest.mark.parametrize("n,docs", [(1, 1), (100, 1), (101, 2), (300, 3), (301, 4)])
def test_split_at_100_values(n, docs):
    lines = build(series(1, n))
    assert len(lines) == docs
    assert values_by_name(lines)["M0"] == list(range(1, n + 1))  # every value once, in order
    for line in lines:
        v = json.loads(line)["M0"]
        assert len(v if isinstance(v, list) else [v]) <= 100


def test_single_value_is_a_scalar():
    (line,) = build(series(1, 1))
    assert json.loads(line)["M0"] == 1


def test_split_by_size():
    # 100 metrics x 100 values of long floats ~ 100*100*22 bytes = 220 KB + 100 long names: must split on size
    vals = [-1.2345678901234567e-100 * (1 + j / 997) for j in range(100)]
    s = [emf.MetricSeries("N" * 247 + f"{i:03d}", "Milliseconds", 60, list(vals)) for i in range(100)]
    unsplit = sum(len(json.dumps(v)) + 1 for v in vals) * 100 + 100 * 2 * 250
    assert unsplit > C.MAX_EVENT_BYTES  # one document could not hold it
    lines = build(s)
    assert len(lines) >= 2
    for line in lines:
        assert len(line.encode()) <= C.MAX_EVENT_BYTES
    got = values_by_name(lines)
    assert sum(len(v) for v in got.values()) == 100 * 100


def test_high_resolution_written_only_for_1():
    lines = build([emf.MetricSeries("Hi", "Count", 1, [1]), emf.MetricSeries("Std", "Count", 60, [1])])
    defs = {m["Name"]: m for m in json.loads(lines[0])["_aws"]["CloudWatchMetrics"][0]["Metrics"]}
    assert defs["Hi"] == {"Name": "Hi", "Unit": "Count", "StorageResolution": 1}
    assert defs["Std"] == {"Name": "Std", "Unit": "Count"}


def test_no_values_no_document():
    assert build([]) == []


def test_properties_in_every_document():
    lines = build(series(150, 1), props={"function_request_id": "r-1"})
    assert [json.loads(x)["function_request_id"] for x in lines] == ["r-1", "r-1"]


@pytest.mark.parametrize(
    "doc,problem",
    [
        ({}, "_aws"),
        ({"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Namespace": "N", "Dimensions": [["D"]], "Metrics": [{"Name": "M"}]}]}, "M": 1}, "not a root member"),
        ({"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Namespace": "N", "Dimensions": [[]], "Metrics": [{"Name": "M", "Unit": "Parsecs"}]}]}, "M": 1}, "unit"),
        ({"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Namespace": "N", "Dimensions": [[]], "Metrics": [{"Name": "M"}]}]}, "M": [1] * 101}, "101 values"),
        ({"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Namespace": "N", "Dimensions": [[]], "Metrics": [{"Name": "M", "StorageResolution": True}]}]}, "M": 1}, "storage resolution"),
        ({"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Namespace": "N", "Dimensions": [[f"d{i}" for i in range(31)]], "Metrics": []}]}, **{f"d{i}": "v" for i in range(31)}}, "31 > 30"),
        ({"_aws": {"Timestamp": "1", "CloudWatchMetrics": []}}, "Timestamp"),
        ({"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Namespace": "N", "Dimensions": [[]], "Metrics": [{"Name": "M"}]}]}, "M": "1"}, "non-numeric"),
    ],
)
def test_validate_document_finds_problems(doc, problem):
    problems = emf.validate_document(doc)
    assert any(problem in p for p in problems), problems


def test_validate_document_rejects_non_json_and_multiline():
    assert emf.validate_document("{nope")[0].startswith("not JSON")
    line = json.dumps({"_aws": {"Timestamp": 1, "CloudWatchMetrics": []}}, indent=1)
    assert "document spans several lines" in emf.validate_document(line)


def test_fast_document_equals_json_dumps():
    """The string-assembled document is byte-for-byte what json.dumps writes for the same object."""
    s = [emf.MetricSeries("Événements \"quoted\"", "Count", 1, [3]), emf.MetricSeries("Lat", "Milliseconds", 60,
                                                                                       [1.5, 2, 1e-300, -7.25e100])]
    dims = {"Service": "svc", "Operation": "op/1"}
    props = {"function_request_id": "r-ü", "schema_version": "1"}
    header = emf.directive_header("Ns", [["Service", "Operation"], ["Service"]])
    body = json.dumps({**dims, **props}, separators=(",", ":"))[1:-1]
    line = emf.fast_document(header, NOW, body, s)
    expected = {"_aws": {"Timestamp": NOW, "CloudWatchMetrics": [{"Namespace": "Ns",
                "Dimensions": [["Service", "Operation"], ["Service"]],
                "Metrics": [{"Name": "Événements \"quoted\"", "Unit": "Count", "StorageResolution": 1},
                            {"Name": "Lat", "Unit": "Milliseconds"}]}]},
                **dims, **props, "Événements \"quoted\"": 3, "Lat": [1.5, 2, 1e-300, -7.25e100]}
    assert line == json.dumps(expected, separators=(",", ":"))
    assert emf.fast_document(header, NOW, body, series(101, 1)) is None
    assert emf.fast_document(header, NOW, body, series(1, 101)) is None
