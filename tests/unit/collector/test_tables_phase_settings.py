"""The DuckDB settings ``collect_local`` makes between the ingest and the tables (``collect._prepare_tables_phase``)
and for the ingest (``collect._retain_block_memory``): the values computed by hand from the ones before."""

from __future__ import annotations

import duckdb
import pytest

from collector.collect import BLOCK_ALLOCATOR_FRACTION, _prepare_tables_phase, _retain_block_memory
from collector.local_tables import TABLE_WORKERS


def _setting(con: duckdb.DuckDBPyConnection, name: str) -> str:
    return con.execute("SELECT current_setting($1)", [name]).fetchall()[0][0]


def _shown(size: str) -> str:
    """How DuckDB prints the memory size ``size``."""
    con = duckdb.connect()
    con.execute("SET memory_limit = $1", [size])
    return _setting(con, "memory_limit")


@pytest.mark.parametrize(("threads", "each"), [(1, 1), (2, 1), (3, 1), (4, 2), (8, 4)])
def test_each_table_worker_gets_its_share_of_the_threads(threads: int, each: int):
    assert TABLE_WORKERS == 2  # the shares below are for two tables at once
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    con.execute("SET memory_limit = '2GiB'")
    _prepare_tables_phase(con)
    assert int(_setting(con, "threads")) == each
    assert _setting(con, "memory_limit") == _shown("1GiB")  # and the memory limit halved, as before


def test_the_block_allocator_keeps_its_fraction_of_the_memory_limit():
    con = duckdb.connect()
    con.execute("SET memory_limit = '1GiB'")
    _retain_block_memory(con)
    assert BLOCK_ALLOCATOR_FRACTION == 0.5
    assert _setting(con, "block_allocator_memory") == _shown("512MiB")
