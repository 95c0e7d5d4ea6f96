"""Row-wise tables sorted one time slice at a time (collector/local_tables.py ``_write_typed`` with
``CompiledQuery.unordered_sql`` and ``_time_slices``): the rows and their order must be the one sorted query's
whatever the store's order, the slicing and the window, and the Parquet file the same bytes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collector import local_tables
from collector.collect import collect_local
from collector.ingest import EventStore
from collector.insights.compiler import ORDER_KEY_COLUMN, ORDER_SEQ_COLUMN, compile_query
from collector.insights.engine import seconds_to_ms
from collector.standard_queries import load_standard_queries
from collector.tables import EVENT_COLUMNS

T0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
T0_MS = int(T0.timestamp() * 1000)


def _record(ms: int, n: int, outcome: str = "received", age: int | None = None) -> str:
    ts = (T0 + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    rec = {"level": "INFO", "service": "orders", "operation": "Pay", "event_source": "sqs",
           "schema_version": "1", "message": outcome, "timestamp": ts, "outcome": outcome,
           "event_id": f"e{n}", "idempotency_key": f"k{n % 7}", "attempt": 1 + n % 3}
    if age is not None:
        rec["record_age_ms"] = age
    return json.dumps(rec)


def _trail(out: Path) -> list[tuple]:
    t = pq.read_table(out / "tables" / "trail.parquet")
    return list(zip(t.column("timestamp").to_pylist(), t.column("event_id").to_pylist()))


def _ms_ids(out: Path) -> list[tuple[int, int]]:
    return [(int((t - T0).total_seconds() * 1000), int(e[1:])) for t, e in _trail(out)]


@pytest.fixture
def small_slices(monkeypatch: pytest.MonkeyPatch) -> list:
    """Slices of 7 events, and a record of the slices each table was cut into."""
    monkeypatch.setattr(local_tables, "_SLICE_EVENTS", 7)
    seen: list = []
    real = local_tables._time_slices

    def spy(*args):
        got = real(*args)
        seen.append(got)
        return got

    monkeypatch.setattr(local_tables, "_time_slices", spy)
    return seen


def test_events_stored_out_of_time_order_are_sorted(tmp_path: Path, small_slices: list):
    """Two files, the second earlier in time than the end of the first: every slice holds rows of both files, and
    the table is time, then ingest order for equal times."""
    a = [(ms, n) for n, ms in enumerate(range(0, 60_000, 1000))]
    b = [(ms, 100 + n) for n, ms in enumerate(range(-30_000, 30_000, 1500))] + [(30_000, 500), (30_000, 501)]
    (tmp_path / "a.log").write_text("".join(_record(ms, n) + "\n" for ms, n in a))
    (tmp_path / "b.log").write_text("".join(_record(ms, n) + "\n" for ms, n in b))
    collect_local([tmp_path / "a.log", tmp_path / "b.log"], tmp_path / "out")
    order = sorted(a + b, key=lambda r: r[0])  # stable: a's rows before b's at equal times (ingest order)
    assert _ms_ids(tmp_path / "out") == order
    assert len(next(s for s in small_slices if s is not None)) == -(-len(a + b) // 7)


def test_equal_times_share_a_slice_and_keep_ingest_order(tmp_path: Path, small_slices: list):
    """Twenty records per millisecond, slices of 7 events: a cut never falls between two equal times."""
    rows = [(ms // 20, n) for n, ms in enumerate(range(300))]
    (tmp_path / "a.log").write_text("".join(_record(ms, n) + "\n" for ms, n in reversed(rows)))
    collect_local([tmp_path / "a.log"], tmp_path / "out")
    assert _ms_ids(tmp_path / "out") == sorted(rows, key=lambda r: (r[0], -r[1]))  # written newest first
    slices = next(s for s in small_slices if s is not None)
    assert 1 < len(slices) <= 15


@pytest.mark.parametrize(("since", "until"), [
    (T0_MS + 7_000, T0_MS + 19_000),  # on event times: both ends inclusive
    (T0_MS + 6_999.5, T0_MS + 19_000.9),  # between milliseconds: since rounds up, until down
    (T0_MS + 25_000, None), (None, T0_MS + 3_000), (T0_MS + 50_000, T0_MS + 60_000),
])
def test_window_ends_and_slice_cuts_keep_every_row_once(tmp_path: Path, small_slices: list, since, until):
    rows = [((n * 37) % 30 * 1000, n) for n in range(90)]  # 3 records per second, out of order
    (tmp_path / "a.log").write_text("".join(_record(ms, n) + "\n" for ms, n in rows))
    collect_local([tmp_path / "a.log"], tmp_path / "out", since=None if since is None else since / 1000,
                  until=None if until is None else until / 1000)
    lo = -10**18 if since is None else since - T0_MS
    hi = 10**18 if until is None else until - T0_MS
    want = sorted((r for r in rows if lo <= r[0] <= hi), key=lambda r: r[0])
    assert _ms_ids(tmp_path / "out") == want


def test_a_sort_key_that_does_not_follow_event_time_falls_back_to_one_sort(tmp_path: Path, small_slices: list):
    """The trail sorted by another timestamp (its record age read as epoch ms): slices cut on @timestamp come out
    of that order, so the table comes from the one sorted query."""
    rows = [(n * 1000, n, (90 - n) * 7 % 50) for n in range(90)]
    (tmp_path / "a.log").write_text("".join(_record(ms, n, age=age) + "\n" for ms, n, age in rows))
    query = load_standard_queries(["trail"])["trail"].replace(
        "fields @timestamp as timestamp,", "fields fromMillis(record_age_ms) as timestamp,").replace(
        "sort @timestamp asc", "sort timestamp asc")
    queries = {**load_standard_queries(), "trail": query}
    collect_local([tmp_path / "a.log"], tmp_path / "out", queries=queries)
    got = [(int(t.timestamp() * 1000), int(e[1:])) for t, e in _trail(tmp_path / "out")]
    assert got == sorted(((age, n) for _, n, age in rows), key=lambda r: r[0])  # then ingest order
    assert any(s is not None for s in small_slices)


def test_no_slices_for_few_events_or_an_untimed_one(monkeypatch: pytest.MonkeyPatch):
    store = EventStore()
    con = store.connection
    con.execute(f'INSERT INTO {store.table} ("@timestamp", "@message", "@seq") '
                "SELECT i * 1000, 'x', i FROM range(20) t(i)")
    monkeypatch.setattr(local_tables, "_SLICE_EVENTS", 20)
    assert local_tables._time_slices(store, None, None) is None
    monkeypatch.setattr(local_tables, "_SLICE_EVENTS", 6)
    slices = local_tables._time_slices(store, None, None)
    assert [(None if a is None else seconds_to_ms(a, upper=False), None if b is None else seconds_to_ms(b, upper=True))
            for a, b in slices] == [(None, 3999), (4000, 8999), (9000, 13999), (14000, None)]  # quantile_disc: index floor((n - 1) q)
    assert local_tables._time_slices(store, 16.0005, 19.0) is None  # 3 events in that window: one piece
    con.execute(f'INSERT INTO {store.table} ("@timestamp", "@message", "@seq") VALUES (NULL, \'y\', 99)')
    assert local_tables._time_slices(store, None, None) is None
    store.close()


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-10**15, max_value=10**15), st.booleans())
def test_ms_bounds_round_trip_through_the_engines_seconds(ms: int, upper: bool):
    assert seconds_to_ms(local_tables._ms_as_seconds(ms, upper=upper), upper=upper) == ms


def _check(*batches: tuple[list, list]) -> bool:
    c = local_tables._OrderCheck()
    try:
        for keys, seqs in batches:
            c.batch(pa.array(keys, pa.timestamp("us")), pa.array(seqs, pa.int64()))
    except local_tables._NotInOrder:
        return False
    return True


def test_order_check():
    assert _check(([1, 1, 2], [1, 2, 0]), ([2, 3], [1, 0]))
    assert not _check(([1, 1], [2, 1]))  # equal keys, seq going back
    assert not _check(([1, 2], [0, 1]), ([2], [0]))  # across the batch boundary
    assert not _check(([1, 2], [0, 1]), ([2], [1]))  # the same row twice
    assert not _check(([2, 1], [0, 1]))
    assert not _check(([1, None], [0, 1]))  # a null key sorts last: not checked, sorted instead
    assert _check(([], []), ([5], [9]))


_COLS = [c for c in EVENT_COLUMNS if c[0] != "@json"] + [("@json", "JSON"), ("outcome", "JSON")]


@pytest.mark.parametrize(("query", "plain"), [
    ("fields @timestamp, outcome | sort @timestamp asc", True),
    ("filter ispresent(outcome) | fields @timestamp as t, outcome | sort @timestamp asc", True),
    ("fields @timestamp | sort @timestamp desc", False),
    ("fields @timestamp | sort @timestamp asc | limit 5", False),
    ("fields @timestamp | sort @timestamp asc | fields outcome", False),
    ("fields @timestamp | sort outcome asc", False),  # a dynamic value: Logs Insights' mixed-type order
    ("fields @timestamp | sort @timestamp asc, outcome asc", False),
    ("stats count(*) as n by bin(1m) as t | sort t asc", False),
    ("fields @timestamp, outcome", False),
])
def test_unordered_sql_only_for_a_final_ascending_event_time_sort(query, plain):
    compiled = compile_query(query, _COLS, "events", None, None, None)
    assert (compiled.unordered_sql is not None) is plain
    if plain:
        assert ORDER_KEY_COLUMN in compiled.unordered_sql and ORDER_SEQ_COLUMN in compiled.unordered_sql
        assert " ORDER BY " not in compiled.unordered_sql.rsplit(") SELECT ", 1)[-1]
    assert compile_query(query, _COLS, "events", None, None, 10_000).unordered_sql is None  # a capped result


@pytest.mark.slow
def test_same_bytes_as_the_one_sorted_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """130,000 trail rows (more than one 122,880-row DuckDB chunk) sorted in slices of 20,000 events, written
    newest first: byte for byte the file the one sorted query writes (same rows, order and row groups)."""
    (tmp_path / "a.log").write_text("".join(_record(n // 2, n) + "\n" for n in reversed(range(130_000))))
    monkeypatch.setattr(local_tables, "_SLICE_EVENTS", 20_000)
    collect_local([tmp_path / "a.log"], tmp_path / "sliced")
    monkeypatch.setattr(local_tables, "_time_slices", lambda *a: None)
    collect_local([tmp_path / "a.log"], tmp_path / "sorted")
    sliced = (tmp_path / "sliced" / "tables" / "trail.parquet").read_bytes()
    assert sliced == (tmp_path / "sorted" / "tables" / "trail.parquet").read_bytes()
    groups = pq.ParquetFile(tmp_path / "sliced" / "tables" / "trail.parquet").metadata
    assert [groups.row_group(i).num_rows for i in range(groups.num_row_groups)] == [100_000, 22_880, 7_120]


@pytest.mark.parametrize(("limit", "tables_bytes"), [
    ("512MB", int(488.2 * 2**20) // 2), ("2GiB", 2**30), ("300000000B", int(286.1 * 2**20) // 2),
])
def test_the_tables_get_half_the_ingests_memory_limit(limit: str, tables_bytes: int):
    """DuckDB prints its limit rounded to 0.1 of a unit (512MB = 488.28 MiB -> "488.2 MiB"): half of that."""
    import duckdb

    from collector.collect import _limit_tables_memory

    con = duckdb.connect()
    con.execute("SET memory_limit = $1", [limit])
    _limit_tables_memory(con)
    got = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    want = duckdb.connect()
    want.execute("SET memory_limit = $1", [f"{tables_bytes}B"])
    assert got == want.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]


def test_collect_local_writes_the_tables_under_half_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    seen = []
    real = local_tables.write_standard_tables

    def spy(store, *args, **kw):
        seen.append(store.connection.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
        return real(store, *args, **kw)

    monkeypatch.setattr("collector.local_tables.write_standard_tables", spy)  # collect_local imports it when it runs
    (tmp_path / "a.log").write_text(_record(0, 1) + "\n")
    collect_local([tmp_path / "a.log"], tmp_path / "out", memory_limit="1GiB")
    assert seen == ["512.0 MiB"]
