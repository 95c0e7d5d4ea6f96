"""A file appended to while ``collect local`` reads it: every line is an event exactly once across runs, whatever the
appends' sizes and timing (issue 39).

A writer thread appends lines in write() calls of hypothesis-chosen sizes (a line may be cut between two calls, so a
run can meet a half-written last line) with chosen pauses, while the collector's source loop
(``collect._ingest_sources``: size recorded, hash of that prefix, read up to it, append detected by size + hash) runs
again and again; after the writer stops, one more run. The events are then every written line once, in order."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import collector.ingest.store as store_mod
from collector.collect import _ingest_sources, _SourcesState
from collector.ingest import EventStore

WRITES = st.lists(st.tuples(st.integers(1, 30), st.integers(0, 120), st.integers(0, 3)), min_size=1, max_size=12)
"""Per append: lines, where to cut its bytes into two write() calls (per mille of its length), pause (ms) after."""


def _line(i: int) -> str:
    return json.dumps({"timestamp": f"2026-01-05T10:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z",
                       "outcome": "succeeded", "event_id": f"e{i:06d}"}) + "\n"


def _run_schedule(tmp: Path, writes: list[tuple[int, int, int]], initial: int, fast: bool) -> None:
    logs = tmp / "logs"
    logs.mkdir()
    path = logs / "fn.log"
    path.write_text("".join(_line(i) for i in range(initial)))
    expected = [_line(i).rstrip("\n") for i in range(initial)]
    n = initial
    chunks = []
    for lines, cut, pause in writes:
        data = "".join(_line(i) for i in range(n, n + lines)).encode()
        expected += [_line(i).rstrip("\n") for i in range(n, n + lines)]
        n += lines
        at = min(len(data), len(data) * cut // 100)
        chunks.append((data[:at], data[at:], pause))

    def writer() -> None:
        with open(path, "ab", buffering=0) as fh:
            for first, second, pause in chunks:
                fh.write(first)
                time.sleep(pause / 1000 / 2)
                fh.write(second)
                time.sleep(pause / 1000)

    store = EventStore()
    state = _SourcesState(store, [])
    files = [(path, True)]
    old = store_mod.FAST_PATH_MIN_BYTES
    store_mod.FAST_PATH_MIN_BYTES = 0 if fast else old
    try:
        t = threading.Thread(target=writer)
        t.start()
        while t.is_alive():
            _ingest_sources(files, state, store)
        t.join()
        _ingest_sources(files, state, store)  # after the last append
        again = _ingest_sources(files, state, store)  # nothing new: nothing added
    finally:
        store_mod.FAST_PATH_MIN_BYTES = old
    assert again["unchanged"] == 1 and again["events_added"] == 0
    got = [m for (m,) in store.connection.execute('SELECT "@message" FROM events ORDER BY "@seq"').fetchall()]
    assert Counter(got) == Counter(expected), "an event doubled or missing"
    assert got == expected  # and in file order
    (entry,) = state.sources.values()
    assert entry["events"] == len(expected) == store.count()
    assert entry["bytes_read"] >= path.stat().st_size


def _schedules(max_examples: int):
    return settings(max_examples=max_examples, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@_schedules(40)
@given(writes=WRITES, initial=st.integers(0, 5), fast=st.booleans())
def test_concurrent_appends_every_line_once(tmp_path_factory, writes, initial, fast) -> None:
    _run_schedule(tmp_path_factory.mktemp("append"), writes, initial, fast)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # about 0.3 s a schedule, more on a busy machine
@_schedules(1000)
@given(writes=WRITES, initial=st.integers(0, 5), fast=st.booleans())
def test_concurrent_appends_every_line_once_1000_schedules(tmp_path_factory, writes, initial, fast) -> None:
    _run_schedule(tmp_path_factory.mktemp("append"), writes, initial, fast)


def test_a_half_written_last_line_is_read_again_whole(tmp_path) -> None:
    """By hand: a run that meets a line cut by the writer takes the part as an event (the file may never grow
    again), records it as the tail, and the next run replaces it with the whole line."""
    logs = tmp_path / "logs"
    logs.mkdir()
    path = logs / "fn.log"
    whole = _line(1)
    path.write_text(_line(0) + whole[:20])
    store = EventStore()
    state = _SourcesState(store, [])
    _ingest_sources([(path, True)], state, store)
    (entry,) = state.sources.values()
    assert entry["tail"]["offset"] == len(_line(0)) and entry["events"] == 2
    with open(path, "a") as fh:
        fh.write(whole[20:])
    run = _ingest_sources([(path, True)], state, store)
    assert run["appended"] == 1
    got = [m for (m,) in store.connection.execute('SELECT "@message" FROM events ORDER BY "@seq"').fetchall()]
    assert got == [_line(0).rstrip("\n"), whole.rstrip("\n")]
    (entry,) = state.sources.values()
    assert entry["events"] == 2 and "tail" not in entry and entry["ingest"]["events"] == 2
