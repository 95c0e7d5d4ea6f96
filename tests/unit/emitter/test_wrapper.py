"""The handler wrapper and invocation(): context capture, cold start, flush on every exit path, result untouched."""

from __future__ import annotations

import asyncio

import pytest

from emitter import EventSource


class Ctx:
    aws_request_id = "req-1"
    function_name = "fn"

    def get_remaining_time_in_millis(self) -> int:
        return 2500


def test_result_returned_untouched_and_flushed(make, read, load_event):
    em, sink = make()
    result = {"batchItemFailures": [], "obj": object()}

    @em.handler(operation="ProcessOrders")
    def handler(event, context):
        em.records(event)
        return result

    assert handler(load_event("sqs_standard"), Ctx()) is result
    out = read(sink)
    assert out.metric_sum("EventsReceived", Operation="ProcessOrders") == 2
    assert out.metric_sum("ColdStart") == 1
    assert out.outcomes[0]["outcome"] == "cold_start" and out.outcomes[0]["remaining_time_ms"] == 2500
    assert all(o["function_request_id"] == "req-1" for o in out.outcomes)
    assert all(o["event_source"] == "sqs" for o in out.outcomes)


def test_cold_start_only_once(make, read):
    em, sink = make()

    @em.handler
    def handler(event, context):
        em.succeeded()

    for _ in range(3):
        handler({}, Ctx())
    out = read(sink)
    assert out.count("cold_start") == 1
    assert out.metric_sum("ColdStart") == 1
    assert [o["cold_start"] for o in out.outcomes if o["outcome"] == "succeeded"] == [True, False, False]
    assert {o["operation"] for o in out.outcomes} == {"handler"}  # default: the function name


def test_provisioned_concurrency_is_not_a_cold_start(make, read, monkeypatch):
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "provisioned-concurrency")
    em, sink = make()
    with em.invocation(Ctx(), operation="Op"):
        em.succeeded()
    assert read(sink).count("cold_start") == 0


def test_flush_on_exception_and_exception_propagates(make, read):
    em, sink = make()

    @em.handler(operation="Boom")
    def handler(event, context):
        em.record_for(event)
        raise RuntimeError("handler failed")

    with pytest.raises(RuntimeError, match="handler failed"):
        handler({"id": "e-1"}, Ctx())
    out = read(sink)
    assert out.metric_sum("EventsReceived") == 1
    assert out.metric_sum("ColdStart") == 1  # also on failing invocations


def test_async_handler(make, read, load_event):
    em, sink = make()

    @em.handler(operation="Async")
    async def handler(event, context):
        await asyncio.sleep(0)
        recs = em.records(event)
        em.succeeded(recs[0])
        return "done"

    assert asyncio.run(handler(load_event("sns"), Ctx())) == "done"
    out = read(sink)
    assert out.metric_sum("EventsSucceeded", Operation="Async") == 1
    assert handler.__name__ == "handler"


def test_async_handler_exception_flushes(make, read):
    em, sink = make()

    @em.handler(operation="AsyncBoom")
    async def handler(event, context):
        em.succeeded()
        raise ValueError("x")

    with pytest.raises(ValueError):
        asyncio.run(handler({}, None))
    assert read(sink).metric_sum("EventsSucceeded") == 1


def test_async_context_manager(make, read):
    em, sink = make()

    async def main():
        async with em.invocation(Ctx(), operation="Ctx", cold_start=False):
            em.succeeded()

    asyncio.run(main())
    assert read(sink).metric_sum("EventsSucceeded", Operation="Ctx") == 1


@pytest.mark.parametrize(
    "context,request_id,function_name,remaining",
    [
        (None, None, None, None),
        ({}, None, None, None),
        ({"aws_request_id": "d-1", "function_name": "dict-fn", "remaining_time_ms": 900}, "d-1", "dict-fn", 900),
        ({"request_id": "d-2"}, "d-2", None, None),
        (object(), None, None, None),
        ("a string", None, None, None),
        (Ctx(), "req-1", "fn", 2500),
    ],
)
def test_context_variants(make, read, context, request_id, function_name, remaining):
    em, sink = make()
    with em.invocation(context, operation="Op", cold_start=True):
        em.side_effect_started()
    out = read(sink)
    o = out.outcomes[-1]
    assert o.get("function_request_id") == request_id
    assert o.get("function_name") == function_name
    assert o.get("remaining_time_ms") == remaining
    assert out.metric_values("RemainingTimeAtSideEffect") == ([] if remaining is None else [remaining])


def test_context_whose_methods_raise(make, read):
    class Broken:
        @property
        def aws_request_id(self):
            raise RuntimeError("nope")

        def get_remaining_time_in_millis(self):
            raise RuntimeError("nope")

    em, sink = make(strict=True)
    with em.invocation(Broken(), operation="Op"):
        em.side_effect_started()
    o = read(sink).outcomes[-1]
    assert "function_request_id" not in o and "remaining_time_ms" not in o


def test_function_name_from_environment(make, read, monkeypatch):
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "env-fn")
    em, sink = make()
    with em.invocation(None, operation="Op"):
        em.succeeded()
    assert read(sink).outcomes[-1]["function_name"] == "env-fn"


def test_event_source_detected_for_invocation(make, read, load_event):
    em, sink = make()

    @em.handler(operation="Api")
    def handler(event, context):
        em.succeeded()  # no record: the invocation's source is used
        return {"statusCode": 200}

    assert handler(load_event("apigw_http"), None) == {"statusCode": 200}
    assert read(sink).outcomes[-1]["event_source"] == EventSource.API_GATEWAY_HTTP.value


def test_nested_invocation_restores_outer(make, read):
    em, sink = make()
    with em.invocation({"aws_request_id": "outer"}, operation="Outer", cold_start=False):
        with em.invocation({"aws_request_id": "inner"}, operation="Inner", cold_start=False):
            em.succeeded()
        em.succeeded()
    out = read(sink)
    assert [(o["function_request_id"], o["operation"]) for o in out.outcomes] == [("inner", "Inner"), ("outer", "Outer")]


def test_sink_failure_does_not_break_the_handler(make, capsys):
    from emitter import Emitter

    class Failing:
        def write_lines(self, lines):
            raise OSError("disk full")

    em = Emitter(service="s", sink=Failing())

    @em.handler(operation="Op")
    def handler(event, context):
        em.succeeded()
        return 1

    assert handler({}, None) == 1
    assert em.warnings["sink_error"] >= 2  # cold_start + succeeded + EMF lines, all counted
    assert "sink failed" in capsys.readouterr().err


def test_invalid_operation_drops_the_dimension(make, read):
    em, sink = make()
    with em.invocation(None, operation="Opération", cold_start=False):
        em.succeeded()
    out = read(sink)
    assert out.warnings[0]["idemwatch_warning"] == "invalid_dimension_value"
    (doc,) = out.emf
    assert "Operation" not in doc
    assert doc["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["Service"]]
    assert doc["EventsSucceeded"] == 1


def test_async_handler_behind_another_decorator(make, read):
    """A coroutine function hidden by a sync-looking decorator still gets its outcomes into its own flush."""
    import functools

    em, sink = make()

    def plain_decorator(fn):
        @functools.wraps(fn)
        def inner(event, context):
            return fn(event, context)  # returns the coroutine object

        return inner

    @em.handler(operation="Hidden")
    @plain_decorator
    async def handler(event, context):
        await asyncio.sleep(0)
        em.succeeded()
        return 7

    assert asyncio.run(handler({}, None)) == 7
    out = read(sink)
    assert out.metric_sum("EventsSucceeded", Operation="Hidden") == 1
    assert [o["operation"] for o in out.outcomes] == ["Hidden", "Hidden"]  # cold_start, succeeded
