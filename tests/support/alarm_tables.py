"""Collector tables written by hand, for the backtest tests and the dashboard's alarm page tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from collector.cloudwatch.metrics import METRICS_TABLE
from collector.tables import TABLES

BASE = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
"""A period-aligned start time (multiple of 300 s and 3600 s) for hand-computed timelines."""


def minute(i: int) -> datetime:
    """``BASE`` + ``i`` minutes."""
    return BASE + timedelta(minutes=i)


def write_tables(data_dir: str | Path, rows: Mapping[str, Iterable[Iterable[Any]]]) -> Path:
    """Write ``<data_dir>/tables/<name>.parquet`` for each table name -> rows (tuples in the column order
    of :data:`collector.tables.TABLES`, or ``cloudwatch_metrics`` as collector.cloudwatch.metrics writes it).
    ``time``/TIMESTAMP columns take datetimes (UTC)."""
    tables = {**TABLES, METRICS_TABLE.name: METRICS_TABLE}

    out = Path(data_dir) / "tables"
    out.mkdir(parents=True, exist_ok=True)
    for name, table_rows in rows.items():
        table = tables[name]
        df = pd.DataFrame(list(table_rows), columns=list(table.column_names))
        for col, typ in table.columns:
            if typ == "TIMESTAMP":
                df[col] = pd.to_datetime(df[col], utc=True).astype("datetime64[ms, UTC]")
            elif typ == "BIGINT":
                df[col] = df[col].astype("int64")
            elif typ == "DOUBLE":
                df[col] = df[col].astype("float64")
        df.to_parquet(out / f"{name}.parquet", index=False)
    return out
