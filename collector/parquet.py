"""Writing the standard tables as Parquet, with the one coercion of values to their column types.

Every table file of both collectors (``collect local`` and ``collect cloudwatch``, and the CloudWatch metrics and
idempotency-table scans) is written by ``write_parquet`` with ``arrow_schema``: exactly the columns and types of
collector/tables.py, no pandas metadata, written to a temporary file and renamed (a reader never sees half a file).
Values given as text (GetQueryResults returns every value as a string; the local collector's post-processed rows
use the same form) are typed by ``to_arrow``, so a table collected from CloudWatch and the same table collected
offline go through the same code.

Conversions (value -> column type):
- TIMESTAMP: ``YYYY-MM-DD HH:MM:SS.mmm`` (how Logs Insights prints ``@timestamp`` and ``bin()``), ISO-8601 with
  ``T``/``Z``, or epoch milliseconds -> UTC timestamp, millisecond precision.
- BIGINT: ``"12"`` or ``"12.0"`` -> 12 (a fractional value is a bad value). DOUBLE: any float literal.
- BOOLEAN: ``true``/``false``/``1``/``0`` (case-insensitive). VARCHAR: unchanged.
- A missing field or empty value -> null. A value that does not convert -> null, counted in ``ConversionReport``.
Fields the table does not have (e.g. ``@ptr``) are dropped and counted too.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from collector.ingest.constants import UNIQUE_VALUE_COLUMNS
from collector.tables import Table

if TYPE_CHECKING:  # pandas is imported where a frame is made or read: the local collector never needs it (0.17 s)
    import pandas as pd

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

ARROW_TYPES: dict[str, pa.DataType] = {
    "TIMESTAMP": pa.timestamp("ms", tz="UTC"),
    "VARCHAR": pa.string(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
}


@dataclass
class ConversionReport:
    """What could not be typed: ``bad_values`` per column (value kept as null), ``extra_fields`` per field name
    returned by the query but not in the table (dropped), ``rows`` converted."""

    rows: int = 0
    bad_values: Counter[str] = field(default_factory=Counter)
    extra_fields: Counter[str] = field(default_factory=Counter)

    def add(self, other: ConversionReport) -> None:
        self.rows += other.rows
        self.bad_values.update(other.bad_values)
        self.extra_fields.update(other.extra_fields)

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "bad_values": dict(self.bad_values), "extra_fields": dict(self.extra_fields)}


_NO_DICTIONARY_TYPES = frozenset({"TIMESTAMP", "DOUBLE"})
"""Column types written without dictionary encoding: times and measured values (ms, rates) rarely repeat, so a
dictionary costs its hashing and makes the file larger (``trail`` at 1M events: the write takes 0.89x the CPU and the
file is 9 % smaller without it)."""


def dictionary_columns(table: Table) -> list[str]:
    """The columns of ``table`` written with Parquet dictionary encoding (``use_dictionary`` of pyarrow's writer):
    every column but those of ``_NO_DICTIONARY_TYPES`` and those named like a field whose values are nearly all
    distinct (ids: ``collector.ingest.constants.UNIQUE_VALUE_COLUMNS``; ``trail`` at 1M events: its write took 0.77x
    the CPU without a dictionary for its four id columns, the file 2 % larger). Encoding only: the values read back
    are the same."""
    return [name for name, t in table.columns if t not in _NO_DICTIONARY_TYPES and name not in UNIQUE_VALUE_COLUMNS]


_NO_STATISTICS_TYPES = frozenset({"VARCHAR"})
"""Column types written without Parquet column statistics (min/max per row group and page). The tables are in
time order, so a row group of ids or messages spans the whole range of them and their min/max prunes nothing; the
timestamps and numbers keep theirs (what a reader's time-range filter skips row groups by). Computing the text
columns' min/max was 0.31 of ``trail``'s write (1M events: 0.69x the write time without them, same file size)."""


def statistics_columns(table: Table) -> list[str]:
    """The columns of ``table`` written with Parquet column statistics (``write_statistics`` of pyarrow's writer):
    every column but those of ``_NO_STATISTICS_TYPES``. Metadata only: the values read back are the same."""
    return [name for name, t in table.columns if t not in _NO_STATISTICS_TYPES]


def arrow_schema(table: Table) -> pa.Schema:
    """The Arrow schema of a standard table (column order and types from collector/tables.py)."""
    return pa.schema([(name, ARROW_TYPES[t]) for name, t in table.columns])


def parse_timestamp_ms(value: str) -> int:
    """Logs Insights timestamp text -> epoch milliseconds (UTC). Raises ValueError when it is not a timestamp."""
    v = value.strip()
    if v.replace(".", "", 1).isdigit():
        return int(float(v))
    v = v.replace("T", " ").rstrip("Z")
    v = v.removesuffix("+00:00")
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"):
        try:
            dt = datetime.strptime(v, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
        return (dt - _EPOCH) // timedelta(milliseconds=1)
    raise ValueError(f"not a timestamp: {value!r}")


def _convert(value: str, duck_type: str) -> Any:
    if duck_type == "VARCHAR":
        return value
    if duck_type == "TIMESTAMP":
        return parse_timestamp_ms(value)
    if duck_type == "BIGINT":
        f = float(value)
        if not math.isfinite(f) or f != int(f):
            raise ValueError(value)
        return int(f)
    if duck_type == "DOUBLE":
        return float(value)
    if duck_type == "BOOLEAN":
        low = value.strip().lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise ValueError(value)
    raise ValueError(f"unknown column type {duck_type}")


def to_arrow(rows: Iterable[dict[str, str | None]], table: Table) -> tuple[pa.Table, ConversionReport]:
    """Rows of string values (field -> value) -> Arrow table with the standard table's schema."""
    report = ConversionReport()
    names = table.column_names
    cols: dict[str, list[Any]] = {n: [] for n in names}
    wanted = set(names)
    for row in rows:
        report.rows += 1
        for k in row:
            if k not in wanted:
                report.extra_fields[k] += 1
        for name, duck_type in table.columns:
            v = row.get(name)
            if v is None or v == "":
                cols[name].append(None)
                continue
            try:
                cols[name].append(_convert(v, duck_type))
            except (ValueError, OverflowError):
                report.bad_values[name] += 1
                cols[name].append(None)
    schema = arrow_schema(table)
    arrays = [pa.array(cols[n], type=pa.int64() if schema.field(n).type == ARROW_TYPES["TIMESTAMP"] else schema.field(n).type)
              for n in names]
    arrays = [a.cast(schema.field(n).type) if schema.field(n).type == ARROW_TYPES["TIMESTAMP"] else a
              for a, n in zip(arrays, names)]
    return pa.Table.from_arrays(arrays, schema=schema), report


def to_frame(rows: Iterable[dict[str, str | None]], table: Table) -> tuple[pd.DataFrame, ConversionReport]:
    """Same as ``to_arrow`` as a pandas DataFrame (timestamps tz-aware UTC, nullable ints/bools)."""
    t, report = to_arrow(rows, table)
    return frame_from_arrow(t), report


def frame_from_arrow(t: pa.Table) -> pd.DataFrame:
    """Arrow table -> pandas with nullable ints/bools (the dtypes ``to_frame`` produces)."""
    import pandas as pd

    return t.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}.get)


def write_parquet(df: pd.DataFrame | pa.Table | pa.RecordBatchReader, table: Table, path: Path) -> int:
    """Write ``df`` with the standard table's exact schema to ``path`` (atomically: a temporary file renamed over
    ``path``); returns the row count. A ``RecordBatchReader`` is written batch by batch (memory: one batch, whatever
    the table's size). Raises pyarrow.ArrowInvalid when a column does not cast to its type."""
    schema = arrow_schema(table)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    if isinstance(df, pa.RecordBatchReader):
        n = 0
        with pq.ParquetWriter(tmp, schema, use_dictionary=dictionary_columns(table),
                              write_statistics=statistics_columns(table)) as writer:
            for batch in df:
                piece = pa.Table.from_batches([batch]).cast(schema)
                writer.write_table(piece)
                n += piece.num_rows
        tmp.replace(path)
        return n
    # a frame is converted by pyarrow, which imports pandas itself only then
    t = df if isinstance(df, pa.Table) else pa.Table.from_pandas(df, schema=schema, preserve_index=False)
    # no pandas metadata: readers get the same dtypes as from the offline collector's files
    t = t.cast(schema).replace_schema_metadata(None)
    pq.write_table(t, tmp, use_dictionary=dictionary_columns(table), write_statistics=statistics_columns(table))
    tmp.replace(path)
    return t.num_rows
