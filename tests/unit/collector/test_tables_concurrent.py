"""write_standard_tables with several connections (what collect_local does): the same files, byte for byte, as one
table at a time; every table reported once from the calling thread; the first failing table raised; the extra
connections set up like the store's own (UTC)."""

from __future__ import annotations

import importlib.util
import threading
import time
from pathlib import Path

import pytest

from collector.exceptions import CollectError
from collector.ingest import EventStore
from collector.local_tables import TABLE_WORKERS, write_standard_tables
from collector.standard_queries import load_standard_queries
from collector.tables import TABLES

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "collector_bench.py"


@pytest.fixture(scope="module")
def log_file(tmp_path_factory) -> Path:
    spec = importlib.util.spec_from_file_location("collector_bench", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    path = tmp_path_factory.mktemp("logs") / "orders.jsonl"
    assert bench.generate(path, 6000, "jsonl") == 6000  # START/records/EMF/ColdStart/END/REPORT, retries, timeouts
    return path


def _store(tmp_path: Path, log_file: Path) -> EventStore:
    store = EventStore(tmp_path / "events.duckdb")
    store.ingest_path(log_file)
    return store


def test_two_at_a_time_writes_the_same_bytes_as_one_at_a_time(tmp_path, log_file):
    store = _store(tmp_path, log_file)
    workers = store.cursors(TABLE_WORKERS)  # before the first query hardens the database
    queries = load_standard_queries()
    seen: list[tuple[str, str, int, int]] = []
    one, _ = write_standard_tables(store, tmp_path / "one", queries, None, None)
    both, _ = write_standard_tables(store, tmp_path / "both", queries, None, None,
                                    lambda *a: seen.append((threading.current_thread().name, *a)), workers=workers)
    assert list(both) == list(TABLES)  # TABLES order, whatever order they ended in
    assert {k: v["rows"] for k, v in both.items()} == {k: v["rows"] for k, v in one.items()}
    assert one["trail"]["rows"] > 3000 and one["invocations"]["rows"] > 0 and one["library_signals"]["rows"] > 0
    for name in TABLES:
        assert (tmp_path / "both" / "tables" / f"{name}.parquet").read_bytes() == \
               (tmp_path / "one" / "tables" / f"{name}.parquet").read_bytes(), name
    assert {t for t, *_ in seen} == {threading.current_thread().name}
    assert [d for *_, d, _ in seen] == list(range(len(TABLES) + 1))
    assert sorted(n for _, _, n, d, _ in seen if d) == sorted(TABLES) and seen[0][1] == "tables"
    store.close()


def test_the_first_failing_table_is_raised_and_nothing_hangs(tmp_path, log_file):
    store = _store(tmp_path, log_file)
    workers = store.cursors(2)
    queries = dict(load_standard_queries())
    queries["rates"] = "fields @timestamp"  # not the rates table's columns
    queries["trail"] = "fields @message"  # nor trail's: it fails first (started first), but comes later in TABLES
    with pytest.raises(CollectError, match="'rates'"):
        write_standard_tables(store, tmp_path / "out", queries, None, None, workers=workers)
    store.close()


def test_cursors_are_set_up_like_the_store_connection(tmp_path):
    store = EventStore(tmp_path / "events.duckdb")
    cur = store.cursors(1)[0]
    # a bare cursor reads the machine's zone (this machine: "Etc/UTC"); the store's sessions say "UTC"
    assert cur.execute("SELECT current_setting('TimeZone'), current_setting('enable_progress_bar')").fetchall() == \
        store.connection.execute("SELECT current_setting('TimeZone'), current_setting('enable_progress_bar')"
                                 ).fetchall() == [("UTC", False)]
    store.close()


class _Writes:
    """A ``write_one`` whose tables in ``oom`` run out of memory on their first call (as when another table beside
    them took the shared limit) and ``always`` on every call; it records the calls and whether each ran alone."""

    def __init__(self, oom: set[str], always: set[str] = frozenset()) -> None:
        self.oom, self.always = set(oom), always
        self.running = 0
        self.calls: list[tuple[str, bool]] = []  # (table, no other table being written meanwhile)
        self.lock = threading.Lock()

    def __call__(self, on, name: str) -> dict:
        import duckdb

        with self.lock:
            self.running += 1
            alone = self.running == 1
        try:
            time.sleep(0.01)  # long enough for the other worker to start a table
            with self.lock:
                alone = alone and self.running == 1
                self.calls.append((name, alone))
                first = name in self.oom
                self.oom.discard(name)
            if first or name in self.always:
                raise duckdb.OutOfMemoryException(f"Out of Memory Error: {name}")
            return {"rows": len(name)}
        finally:
            with self.lock:
                self.running -= 1


def test_a_table_out_of_memory_beside_another_is_written_again_alone() -> None:
    from collector.local_tables import _write_at_once

    writes = _Writes(oom={"trail"})
    done = _write_at_once("events", ["outcomes", "trail", "rates"], [object(), object()], writes, None)
    assert done == {"outcomes": {"rows": 8}, "trail": {"rows": 5}, "rates": {"rows": 5}}
    trail = [alone for name, alone in writes.calls if name == "trail"]
    assert len(trail) == 2 and trail[1] is True  # written again, with no other table beside it
    assert len(writes.calls) == 4


def test_out_of_memory_alone_too_is_raised() -> None:
    import duckdb

    from collector.local_tables import _write_at_once

    writes = _Writes(oom=set(), always={"rates"})
    with pytest.raises(duckdb.OutOfMemoryException, match="rates"):
        _write_at_once("events", ["outcomes", "rates", "trail"], [object(), object()], writes, None)
    assert [n for n, _ in writes.calls].count("rates") == 2  # once beside another table, once alone


def test_other_errors_are_not_written_again() -> None:
    from collector.local_tables import _write_at_once

    def write_one(on, name: str) -> dict:
        calls.append(name)
        if name == "rates":
            raise CollectError("rates: bad columns")
        return {"rows": 1}

    calls: list[str] = []
    with pytest.raises(CollectError, match="rates"):
        _write_at_once("events", ["outcomes", "rates"], [object(), object()], write_one, None)
    assert sorted(calls) == ["outcomes", "rates"]
