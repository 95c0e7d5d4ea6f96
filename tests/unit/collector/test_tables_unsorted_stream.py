"""Tables streamed without their final sort when the events already arrive in order (collector/local_tables.py
``_write_typed`` with ``CompiledQuery.unordered_sql``): the rows and their order must be the sorted query's
whatever the store's order, and the Parquet file the same bytes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from collector import local_tables
from collector.collect import collect_local
from collector.insights.compiler import ORDER_KEY_COLUMN, ORDER_SEQ_COLUMN, compile_query
from collector.tables import EVENT_COLUMNS

T0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)


def _record(ms: int, n: int, outcome: str = "received") -> str:
    ts = (T0 + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return json.dumps({"level": "INFO", "service": "orders", "operation": "Pay", "event_source": "sqs",
                       "schema_version": "1", "message": outcome, "timestamp": ts, "outcome": outcome,
                       "event_id": f"e{n}", "idempotency_key": f"k{n % 7}", "attempt": 1 + n % 3})


def _trail(out: Path) -> list[tuple]:
    t = pq.read_table(out / "tables" / "trail.parquet")
    return list(zip(t.column("timestamp").to_pylist(), t.column("event_id").to_pylist()))


def test_events_stored_out_of_time_order_are_sorted(tmp_path: Path):
    """Two files, the second earlier in time than the end of the first: the unsorted stream is out of order, so
    the table must come from the sorted query (time, then ingest order for equal times)."""
    a = [(ms, n) for n, ms in enumerate(range(0, 60_000, 1000))]
    b = [(ms, 100 + n) for n, ms in enumerate(range(-30_000, 30_000, 1500))] + [(30_000, 500), (30_000, 501)]
    (tmp_path / "a.log").write_text("".join(_record(ms, n) + "\n" for ms, n in a))
    (tmp_path / "b.log").write_text("".join(_record(ms, n) + "\n" for ms, n in b))
    collect_local([tmp_path / "a.log", tmp_path / "b.log"], tmp_path / "out")
    order = sorted(a + b, key=lambda r: r[0])  # stable: a's rows before b's at equal times (ingest order)
    assert [(int((t - T0).total_seconds() * 1000), int(e[1:])) for t, e in _trail(tmp_path / "out")] == order


def test_events_in_order_with_equal_times_keep_ingest_order(tmp_path: Path):
    rows = [(ms // 3 * 3, n) for n, ms in enumerate(range(300))]  # three records per millisecond
    (tmp_path / "a.log").write_text("".join(_record(ms, n) + "\n" for ms, n in rows))
    collect_local([tmp_path / "a.log"], tmp_path / "out")
    assert [(int((t - T0).total_seconds() * 1000), int(e[1:])) for t, e in _trail(tmp_path / "out")] == rows


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
def test_same_bytes_as_the_sorted_stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """130,000 trail rows (more than one 122,880-row DuckDB chunk): the file written from the unsorted stream is
    byte for byte the one the sorted query writes (same rows, order and row groups)."""
    (tmp_path / "a.log").write_text("".join(_record(n // 2, n) + "\n" for n in range(130_000)))
    collect_local([tmp_path / "a.log"], tmp_path / "fast")

    def never(self, key, seq):
        raise local_tables._NotInOrder

    monkeypatch.setattr(local_tables._OrderCheck, "batch", never)
    collect_local([tmp_path / "a.log"], tmp_path / "sorted")
    fast = (tmp_path / "fast" / "tables" / "trail.parquet").read_bytes()
    assert fast == (tmp_path / "sorted" / "tables" / "trail.parquet").read_bytes()
    groups = pq.ParquetFile(tmp_path / "fast" / "tables" / "trail.parquet").metadata
    assert [groups.row_group(i).num_rows for i in range(groups.num_row_groups)] == [100_000, 22_880, 7_120]
