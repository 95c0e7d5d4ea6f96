"""Powertools Logger found without ``use_logger``: records carry the correlation id of the real Powertools Logger of
the emitter's service; another service's Logger, ``use_logger(em, None)`` and hostile loggers give none."""

from __future__ import annotations

import json
import logging

from aws_lambda_powertools import Logger

from emitter import Emitter, MemorySink
from emitter.powertools import use_logger


class Ctx:
    function_name = "orders-fn"
    function_version = "$LATEST"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:orders-fn"
    aws_request_id = "req-1"

    def get_remaining_time_in_millis(self) -> int:
        return 5000


def _outcomes(sink: MemorySink) -> list[dict]:
    return [json.loads(line) for line in sink.lines if '"outcome"' in line]


def _handler(em: Emitter, logger: Logger | None):
    def body(event, context):
        em.succeeded(None, "k-1")
        em.record_for(event)
        return {"ok": True}

    fn = em.handler(operation="Create")(body)
    if logger is not None:
        fn = logger.inject_lambda_context(correlation_id_path="headers.x_request")(fn)
    return fn


def _devnull():
    return open("/dev/null", "w")  # the Logger keeps it


def test_logger_of_the_same_service_is_found_without_use_logger():
    sink = MemorySink()
    em = Emitter(service="detect-a", sink=sink)
    logger = Logger(service="detect-a", stream=_devnull())  # made after the Emitter: found at the invocation
    h = _handler(em, logger)
    assert h({"order_id": "o-1", "headers": {"x_request": "corr-A"}}, Ctx()) == {"ok": True}
    outs = _outcomes(sink)
    assert [o["outcome"] for o in outs] == ["cold_start", "succeeded", "received"]
    assert {o["correlation_id"] for o in outs} == {"corr-A"}
    logger.set_correlation_id("corr-B")  # a value set later is seen: read when each record is written
    with em.invocation(Ctx(), operation="Create"):
        em.succeeded(None, "k-2")
    assert _outcomes(sink)[-1]["correlation_id"] == "corr-B"


def test_logger_without_correlation_id_adds_no_key():
    sink = MemorySink()
    em = Emitter(service="detect-b", sink=sink)
    Logger(service="detect-b", stream=_devnull())
    with em.invocation(Ctx(), operation="Create", cold_start=False):
        em.succeeded(None, "k-1")
    (rec,) = _outcomes(sink)
    assert "correlation_id" not in rec and rec["function_arn"] == Ctx.invoked_function_arn


def test_logger_of_another_service_is_not_used():
    sink = MemorySink()
    em = Emitter(service="detect-c", sink=sink)
    other = Logger(service="detect-other", stream=_devnull())
    other.set_correlation_id("not-ours")
    with em.invocation(Ctx(), operation="Create", cold_start=False):
        em.succeeded(None, "k-1")
    assert "correlation_id" not in _outcomes(sink)[0]
    use_logger(em, other)  # told explicitly: then it is used
    with em.invocation(Ctx(), operation="Create", cold_start=False):
        em.succeeded(None, "k-1")
    assert _outcomes(sink)[-1]["correlation_id"] == "not-ours"


def test_use_logger_none_keeps_detection_off():
    sink = MemorySink()
    em = Emitter(service="detect-d", sink=sink)
    logger = Logger(service="detect-d", stream=_devnull())
    logger.set_correlation_id("corr-D")
    use_logger(em, None)
    with em.invocation(Ctx(), operation="Create", cold_start=False):
        em.succeeded(None, "k-1")
    assert "correlation_id" not in _outcomes(sink)[0] and em.correlation_id_provider is None


class _Hostile:
    @property
    def formatter(self):
        raise RuntimeError("boom")


def test_hostile_loggers_never_raise():
    sink = MemorySink()
    plain = logging.StreamHandler(_devnull())
    plain.setFormatter(logging.Formatter())  # a Formatter without Powertools' log_format
    for name, handler in (("detect-e", _Hostile()), ("detect-f", object()), ("detect-g", plain)):
        std = logging.getLogger(name)
        std.powertools_handler = handler  # type: ignore[attr-defined]
        em = Emitter(service=name, sink=sink, strict=True)
        with em.invocation(Ctx(), operation="Create", cold_start=False):
            em.succeeded(None, "k-1")
    assert [("correlation_id" in o) for o in _outcomes(sink)] == [False, False, False]
    assert [o["outcome"] for o in _outcomes(sink)] == ["succeeded"] * 3
