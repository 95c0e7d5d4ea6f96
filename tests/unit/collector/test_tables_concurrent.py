"""write_standard_tables with several connections (what collect_local does): the same files, byte for byte, as one
table at a time; every table reported once from the calling thread; the first failing table raised; the extra
connections set up like the store's own (UTC)."""

from __future__ import annotations

import importlib.util
import threading
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
