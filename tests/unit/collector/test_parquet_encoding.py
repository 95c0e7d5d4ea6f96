"""``collector.parquet.write_parquet`` encodings: dictionary encoding only where values repeat (not on TIMESTAMP and
DOUBLE columns, nor on id columns), column statistics only on the non-text columns (what a time-range filter prunes by), the same
values read back through either input form (a table or a stream of batches)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from collector.parquet import arrow_schema, dictionary_columns, statistics_columns, write_parquet
from collector.tables import TABLES

_TRAIL = TABLES["trail"]


def _trail_rows(n: int) -> pa.Table:
    schema = arrow_schema(_TRAIL)
    cols = {f.name: pa.nulls(n, f.type) for f in schema}
    cols["timestamp"] = pa.array([1_767_607_200_000 + 7 * i for i in range(n)], pa.int64()).cast(schema.field(
        "timestamp").type)
    cols["outcome"] = pa.array([("received", "completed", None)[i % 3] for i in range(n)], pa.string())
    cols["idempotency_key"] = pa.array([f"k{i // 2}" for i in range(n)], pa.string())
    cols["attempt"] = pa.array([1 + i % 2 for i in range(n)], pa.int64())
    cols["record_age_ms"] = pa.array([i * 0.25 if i % 5 else None for i in range(n)], pa.float64())
    return pa.table([cols[f.name] for f in schema], schema=schema)


_IDS = {"idempotency_key", "event_id", "correlation_id", "function_request_id"}


def test_dictionary_columns_are_the_non_time_non_double_non_id_ones():
    want = [c for c, t in _TRAIL.columns if t not in ("TIMESTAMP", "DOUBLE") and c not in _IDS]
    assert dictionary_columns(_TRAIL) == want
    assert "timestamp" not in want and "record_age_ms" not in want and {"outcome", "attempt"} <= set(want)
    for table in TABLES.values():  # every table keeps its other text columns dictionary-encoded
        assert {c for c, t in table.columns if t == "VARCHAR"} - _IDS <= set(dictionary_columns(table))


@pytest.mark.parametrize("as_stream", [False, True])
def test_encodings_and_values(tmp_path: Path, as_stream: bool):
    data = _trail_rows(5000)
    src = pa.RecordBatchReader.from_batches(data.schema, data.to_batches(1500)) if as_stream else data
    path = tmp_path / "trail.parquet"
    assert write_parquet(src, _TRAIL, path) == 5000
    assert pq.read_table(path).equals(data)
    meta = pq.ParquetFile(path).metadata
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    for g in range(meta.num_row_groups):
        enc = {n: meta.row_group(g).column(i).encodings for i, n in enumerate(names)}
        for col in ("timestamp", "record_age_ms", "remaining_time_ms", "idempotency_key"):
            assert "RLE_DICTIONARY" not in enc[col] and "PLAIN_DICTIONARY" not in enc[col], (col, enc[col])
        for col in ("outcome", "attempt"):
            assert "RLE_DICTIONARY" in enc[col], (col, enc[col])
        stats = {n: meta.row_group(g).column(i).statistics for i, n in enumerate(names)}
        first = sum(meta.row_group(i).num_rows for i in range(g))  # timestamps ascend: a group's min is its first
        got = stats["timestamp"]
        assert got is not None and got.has_min_max
        assert got.min == data.column("timestamp")[first].as_py()
        assert stats["attempt"].min == 1 and stats["attempt"].max == 2
        for col in ("outcome", "idempotency_key"):  # text columns holding values (an all-null one has no min/max anyway)
            assert stats[col] is None or not stats[col].has_min_max, (col, stats[col])


def test_statistics_columns_are_the_non_text_ones():
    for table in TABLES.values():
        assert statistics_columns(table) == [c for c, t in table.columns if t != "VARCHAR"]
    assert {"timestamp", "attempt", "record_age_ms"} <= set(statistics_columns(_TRAIL))
