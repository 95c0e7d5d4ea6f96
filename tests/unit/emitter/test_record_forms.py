"""Forms the writers use, each checked against an independent reading (json.loads, json.dumps): the metric groups
as ``pending()`` reads them back, the request id escaped once per invocation, a document with several value
lists, any delivery attempt, and the LambdaContext attributes."""

from __future__ import annotations

import json

import pytest

from emitter import Emitter, EventRecord, EventSource, MemorySink, emf
from emitter.contract import METRIC_UNITS, Metric

NOW = 1_767_608_401_000


def _lines(sink: MemorySink) -> list[dict]:
    return [json.loads(line) for line in sink.lines]


def test_groups_read_back_as_operation_and_event_source():
    """pending() gives each group as (Operation, EventSource or None), and the flush writes the groups in the order
    they were first used."""
    sink = MemorySink()
    em = Emitter(service="orders", sink=sink, clock=lambda: NOW, event_source_dimension=True)
    sqs = EventRecord(event_id="m-1", event_source=EventSource.SQS)
    em.succeeded(None, operation="A")  # no invocation, no record: no EventSource
    em.succeeded(sqs, key="k-1")  # the default operation, EventSource sqs
    em.duplicate_completed(None, operation="A")
    em.add_metric("Custom", 3, operation="B")
    assert em.pending() == {("A", None): {"EventsSucceeded": [1], "DuplicateCompleted": [1]},
                            ("default", "sqs"): {"EventsSucceeded": [1]},
                            ("B", None): {"Custom": [3]}}
    lines = em.flush()
    docs = [json.loads(line) for line in lines]
    assert [(d["Operation"], d.get("EventSource")) for d in docs] == [("A", None), ("default", "sqs"), ("B", None)]
    assert [d["_aws"]["CloudWatchMetrics"][0]["Dimensions"] for d in docs] == [
        [["Service", "Operation"], ["Service"]],
        [["Service", "Operation"], ["Service"], ["Service", "EventSource"]],
        [["Service", "Operation"], ["Service"]]]
    assert (docs[0]["EventsSucceeded"], docs[0]["DuplicateCompleted"], docs[1]["EventsSucceeded"], docs[2]["Custom"]) \
        == (1, 1, 1, 3)
    assert em.pending() == {}


@pytest.mark.parametrize("request_id", ["c6af9ac6-7b61-11e6-9a41-93e812345678", 'r-"1"\\é\u2028\x00', 12345])
def test_the_request_id_escaped_once_is_what_json_reads_in_records_and_documents(request_id):
    """The invocation's request id is escaped once (InvocationInfo.request_id_json) and written in every log
    record and in the EMF document: json.loads reads back the id (an int id as its decimal text), and the lines are
    the ASCII JSON the C encoder writes."""
    sink = MemorySink()
    em = Emitter(service="orders", sink=sink, clock=lambda: NOW)
    with em.invocation({"aws_request_id": request_id, "function_name": "fn"}, operation="Op", cold_start=False):
        em.succeeded(EventRecord(event_id="m-1", event_source=EventSource.SQS), key="k")
    want = str(request_id)
    objs = _lines(sink)
    assert [o["function_request_id"] for o in objs] == [want, want]  # the record, then the document
    assert "_aws" in objs[1]
    assert all(line.isascii() for line in sink.lines)
    assert json.dumps(want) in sink.lines[0] and json.dumps(want) in sink.lines[1]


@pytest.mark.parametrize("names", [
    ("RecordAge", "EventsReceived", "RemainingTimeAtSideEffect"),  # lists first and last
    ("EventsReceived", "RecordAge", "RemainingTimeAtSideEffect", "Redelivery"),  # two lists side by side
    ("RemainingTimeAtSideEffect", "RecordAge"),  # lists only
])
@pytest.mark.parametrize("lengths", [(1, 1), (1, 3), (4, 2), (100, 1), (101, 2), (2, 0)])
def test_document_with_several_value_lists_equals_json(names, lengths):
    """A document with several value lists equals json.dumps of the same document, a one-value list is written as
    a number, and a list of 0 or more than 100 values is no single document (write_documents splits it)."""
    lists = iter(lengths)
    series = []
    for n in names:
        unit = METRIC_UNITS[Metric(n)].value
        values = [7] if unit == "Count" else [1000 + i + 0.5 * (i % 2) for i in range(next(lists))]
        series.append(emf.MetricSeries(n, unit, 60, values))
    header = emf.directive_header("Idempotency", [["Service"]])
    got = emf.fast_document(header, NOW, '"Service":"s"', series)
    if any(not 0 < len(s.values) <= 100 for s in series):
        assert got is None
        return
    members = {s.name: (s.values[0] if len(s.values) == 1 else s.values) for s in series}
    want = {"_aws": {"Timestamp": NOW, "CloudWatchMetrics": [{"Namespace": "Idempotency", "Dimensions": [["Service"]],
            "Metrics": [{"Name": s.name, "Unit": s.unit} for s in series]}]}, "Service": "s", **members}
    assert got == json.dumps(want, separators=(",", ":"), allow_nan=False)
    assert emf.write_documents(header, NOW, '"Service":"s"', series) == [got]


@pytest.mark.parametrize("attempt", [1, 2, 10**20])
@pytest.mark.parametrize("key", [None, "acme:k"])
def test_outcome_record_of_any_attempt(attempt, key):
    """The record reads back its attempt, small or large, with and without a key."""
    sink = MemorySink()
    em = Emitter(service="orders", sink=sink, clock=lambda: NOW)
    r = EventRecord(event_id="m-1", event_source=EventSource.SQS, attempt=attempt)
    with em.invocation({"aws_request_id": "r-1"}, operation="Op", cold_start=False):
        em.retryable_failure(r, key, error_code="Throttled")
    rec = json.loads(sink.lines[0])
    assert (rec["attempt"], rec.get("idempotency_key"), rec["error_code"]) == (attempt, key, "Throttled")
    assert sink.lines[0] == json.dumps(rec, separators=(",", ":"))


class _Context:
    aws_request_id = "r-1"
    function_name = "fn"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:fn"


class _NoMemory(_Context):
    pass


class _FailingMemory(_Context):
    @property
    def memory_limit_in_mb(self) -> int:
        raise RuntimeError("no memory size")


class _FailingArn(_Context):
    memory_limit_in_mb = 256

    @property
    def invoked_function_arn(self) -> str:  # type: ignore[override]
        raise RuntimeError("no arn")


class _Both(_Context):
    memory_limit_in_mb = "512"  # a digit string, as some runtimes give it


@pytest.mark.parametrize("ctx,arn,memory", [
    (_NoMemory(), _Context.invoked_function_arn, None),
    (_FailingMemory(), _Context.invoked_function_arn, None),
    (_FailingArn(), None, 256),
    (_Both(), _Context.invoked_function_arn, 512),
])
def test_context_arn_and_memory_read_together_fall_back_one_at_a_time(ctx, arn, memory):
    """The function ARN and memory size are read as two plain attributes; when one is missing or raises, each is
    read on its own as before: the other one is kept, the failing one is absent, nothing raises."""
    sink = MemorySink()
    em = Emitter(service="orders", sink=sink, clock=lambda: NOW)
    with em.invocation(ctx, operation="Op", cold_start=False):
        em.succeeded(None, "k")
    rec = _lines(sink)[0]
    assert rec.get("function_arn") == arn
    assert rec.get("function_memory_size") == memory
    assert rec["function_request_id"] == "r-1" and em.warnings == {}
