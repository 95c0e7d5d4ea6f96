"""The internal forms the hot paths use, each checked against an independent reading (json.loads, json.dumps, the
general record builder): the metric group keys (``aggregate.group_key``), the request id escaped once per
invocation, the flush writer's flat value list with several value lists, the first-delivery line end, and the
LambdaContext attributes read in one go."""

from __future__ import annotations

import json

import pytest

from emitter import Emitter, EventRecord, EventSource, MemorySink, Outcome, emf
from emitter.aggregate import _PLAIN_UNITS, _group_shape, group_key

NOW = 1_767_608_401_000


def _lines(sink: MemorySink) -> list[dict]:
    return [json.loads(line) for line in sink.lines]


def test_group_keys_read_back_as_operation_and_event_source():
    """A group without an EventSource is keyed by its Operation alone, one with it by the pair: pending() gives
    (Operation, EventSource) either way, and the flush writes the groups in the order they were first used."""
    assert group_key("Op", None) == "Op" and group_key(None, None) is None
    assert group_key("Op", "sqs") == ("Op", "sqs")
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
def test_group_document_with_several_value_lists_equals_json(names, lengths):
    """The flush writer splices every value list into one flat list (from the last, so the positions stay right)
    and formats the whole group once: the document equals json.dumps of the same document, a one-value list is
    written as a number, and a list of 0 or more than 100 values hands the group to the splitting writer."""
    lists = iter(lengths)
    group: dict = {}
    for n in names:
        if _PLAIN_UNITS[n] == "Count":
            group[n] = 7
        else:
            k = next(lists)
            group[n] = [1000 + i + 0.5 * (i % 2) for i in range(k)]
    header = emf.directive_header("Idempotency", [["Service"]])
    got = emf.group_document(header, NOW, '"Service":"s"', group, _group_shape(names))
    if any(not 0 < len(v) <= 100 for v in group.values() if isinstance(v, list)):
        assert got is None
        return
    members = {n: (v[0] if isinstance(v, list) and len(v) == 1 else v) for n, v in group.items()}
    want = {"_aws": {"Timestamp": NOW, "CloudWatchMetrics": [{"Namespace": "Idempotency", "Dimensions": [["Service"]],
            "Metrics": [{"Name": n, "Unit": _PLAIN_UNITS[n]} for n in names]}]}, "Service": "s", **members}
    assert got == json.dumps(want, separators=(",", ":"), allow_nan=False)
    assert got == emf.fast_document(header, NOW, '"Service":"s"', emf.group_series(group, _PLAIN_UNITS))


@pytest.mark.parametrize("attempt", [1, 2, 10**20])
@pytest.mark.parametrize("key", [None, "acme:k"])
def test_outcome_line_end_for_any_attempt_equals_the_general_builder(attempt, key):
    """A first delivery's outcome line ends with one constant; any other attempt is formatted: both are what
    record_outcome writes, and the record reads back its attempt."""
    out = []
    for general in (False, True):
        sink = MemorySink()
        em = Emitter(service="orders", sink=sink, clock=lambda: NOW)
        r = EventRecord(event_id="m-1", event_source=EventSource.SQS, attempt=attempt)
        with em.invocation({"aws_request_id": "r-1"}, operation="Op", cold_start=False):
            if general:
                em.record_outcome(Outcome.RETRYABLE_FAILURE, r, key, error_code="Throttled")
            else:
                em.retryable_failure(r, key, error_code="Throttled")
        out.append(sink.lines)
    assert out[0] == out[1]
    assert json.loads(out[0][0])["attempt"] == attempt


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
