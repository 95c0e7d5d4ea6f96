"""``local_tables._rebatch``: whatever the input batches, the output is the layout of a sorted DuckDB stream
(each ``_DUCKDB_CHUNK_ROWS`` rows cut into batches of at most ``_BATCH_ROWS``), with the same rows in the same
order; a batch inside one input batch is not copied."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collector import local_tables

_SCHEMA = pa.schema([("n", pa.int64()), ("s", pa.string())])


def _batches(sizes: list[int]) -> list[pa.RecordBatch]:
    out, at = [], 0
    for k in sizes:
        out.append(pa.record_batch([pa.array(range(at, at + k), pa.int64()),
                                    pa.array([None if i % 7 == 3 else f"m{i}" * (i % 4) for i in range(at, at + k)],
                                             pa.string())], schema=_SCHEMA))
        at += k
    return out


def _layout(total: int, chunk: int, batch: int) -> list[int]:
    """The expected sizes, computed independently: chunk after chunk, each cut into batches."""
    sizes = []
    while total:
        c = min(chunk, total)
        total -= c
        sizes += [batch] * (c // batch) + ([c % batch] if c % batch else [])
    return sizes


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=40), max_size=12))
def test_layout_and_rows(sizes: list[int]):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(local_tables, "_DUCKDB_CHUNK_ROWS", 12)
        mp.setattr(local_tables, "_BATCH_ROWS", 10)
        got = list(local_tables._rebatch(_SCHEMA, iter(_batches(sizes))))
    assert [b.num_rows for b in got] == _layout(sum(sizes), 12, 10)
    assert all(b.schema == _SCHEMA for b in got)
    want = pa.Table.from_batches(_batches(sizes), _SCHEMA) if sizes else _SCHEMA.empty_table()
    assert pa.Table.from_batches(got, _SCHEMA).equals(want) if got else want.num_rows == 0


def test_a_batch_inside_one_input_batch_is_a_slice_of_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(local_tables, "_DUCKDB_CHUNK_ROWS", 12)
    monkeypatch.setattr(local_tables, "_BATCH_ROWS", 10)
    src = _batches([30])[0]
    got = list(local_tables._rebatch(_SCHEMA, iter([src])))
    assert [b.num_rows for b in got] == [10, 2, 10, 2, 6]
    base = src.column(0).buffers()[1].address
    for b, start in zip(got, (0, 10, 12, 22, 24)):
        assert b.column(0).buffers()[1].address == base and b.column(0).offset == start  # no copy
