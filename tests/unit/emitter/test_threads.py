"""Outcomes recorded from worker threads are all counted and every line stays whole."""

from __future__ import annotations

import io
import json
import threading
from concurrent.futures import ThreadPoolExecutor

from emitter import Emitter, EventRecord, EventSource, StreamSink


def test_threads_all_counted(read, make):
    em, sink = make()
    n_threads, per_thread = 8, 250
    barrier = threading.Barrier(n_threads)

    def work(t: int) -> None:
        barrier.wait()
        for i in range(per_thread):
            r = EventRecord(event_id=f"{t}-{i}", event_source=EventSource.SQS, attempt=1 + (i % 3 == 0),
                            record_age_ms=float(i))
            em.record_outcome("received", r)
            if i % 2:
                em.succeeded(r, key=f"k-{t}-{i}")
            else:
                em.retryable_failure(r, key=f"k-{t}-{i}", error_code="Throttled")
            em.add_metric("WorkerItems", 1)

    with em.invocation({"aws_request_id": "r"}, operation="Threads", cold_start=False):
        with ThreadPoolExecutor(n_threads) as pool:
            list(pool.map(work, range(n_threads)))
    out = read(sink)
    total = n_threads * per_thread
    assert out.metric_sum("EventsReceived") == total == out.count("received")
    assert out.metric_sum("EventsSucceeded") == total // 2 == out.count("succeeded")
    assert out.metric_sum("RetryableFailure") == total // 2 == out.count("retryable_failure")
    assert out.metric_sum("Redelivery") == n_threads * len(range(0, per_thread, 3))
    assert len(out.metric_values("RecordAge")) == total
    assert out.metric_sum("WorkerItems") == total
    assert len({o["event_id"] for o in out.outcomes}) == total


def test_threads_with_a_shared_text_stream():
    buf = io.StringIO()
    em = Emitter(service="s", sink=StreamSink(buf))

    def work(t: int) -> None:
        for i in range(200):
            em.succeeded(None, f"key-{t}-{i}", note="x" * (i % 50))

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(4)))
    em.flush()
    lines = buf.getvalue().splitlines()
    objs = [json.loads(line) for line in lines]  # no interleaved/torn lines
    assert sum(1 for o in objs if o.get("outcome") == "succeeded") == 800
    assert sum(o["EventsSucceeded"] for o in objs if "_aws" in o) == 800
