"""``local_tables._read_ahead``: the stream's batches in order, an error raised at its place, and closing it stops
the reading thread without advancing the stream further."""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest

from collector import local_tables


def _batch(i: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.nulls(i, pa.int64())], names=["x"])


def test_same_batches_in_order():
    got = [b.num_rows for b in local_tables._read_ahead(_batch(i) for i in range(1, 8))]
    assert got == [1, 2, 3, 4, 5, 6, 7]


def test_an_error_is_raised_after_the_batches_before_it():
    def source():
        yield _batch(1)
        yield _batch(2)
        raise local_tables._NotInOrder

    seen = []
    with pytest.raises(local_tables._NotInOrder):
        for b in local_tables._read_ahead(source()):
            seen.append(b.num_rows)
    assert seen == [1, 2]


def test_closing_stops_the_thread_and_the_stream():
    pulled = []

    def source():
        for i in range(1, 100):
            pulled.append(i)
            yield _batch(i)

    ahead = local_tables._read_ahead(source())
    assert next(ahead).num_rows == 1
    ahead.close()
    assert not any(t.name == "tables-read-ahead" for t in threading.enumerate())
    # one handed over, at most _READ_AHEAD queued and one held by the thread when it stopped
    assert len(pulled) <= 2 + local_tables._READ_AHEAD
