"""Query results: Python rows, Arrow/pandas, and the Logs Insights JSON record format."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from collector.insights.types import ValueType

__all__ = ["QueryResult", "decode_value", "format_timestamp"]


def format_timestamp(value: datetime) -> str:
    """``YYYY-MM-DD HH:MM:SS.mmm`` (UTC), the format Logs Insights returns timestamps in."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%d %H:%M:%S.") + f"{value.microsecond // 1000:03d}"


def decode_value(value: Any, vtype: ValueType) -> Any:
    """DuckDB value -> Python value of the result: JSON scalars decoded (objects/arrays kept
    as compact JSON text), booleans as 1/0, timestamps as aware UTC datetimes."""
    if value is None:
        return None
    if vtype is ValueType.DYNAMIC:
        if not isinstance(value, str):
            return value
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        if isinstance(decoded, (dict, list)):
            return json.dumps(decoded, separators=(",", ":"), ensure_ascii=False)
        if isinstance(decoded, bool):
            return 1 if decoded else 0
        return decoded
    if vtype is ValueType.BOOLEAN:
        return 1 if value else 0
    if vtype is ValueType.TIMESTAMP and isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
    if hasattr(value, "is_integer") and not isinstance(value, (int, float)):  # Decimal
        return float(value)
    return value


@dataclass(frozen=True)
class QueryResult:
    """Result of :func:`collector.insights.run_query`.

    Attributes:
        columns: result column names as Logs Insights returns them (alias, else the
            expression as written, e.g. ``count(*)``, ``bin(5m)``).
        types: the engine's value type per column.
        rows: tuples of Python values: str, int, float, None (missing), datetime (UTC, aware)
            for timestamp-typed values (``@timestamp``, ``bin()``, ``datefloor()``...).
        sql, params: the DuckDB statement that produced it (for debugging/benchmarks).
    """

    columns: list[str]
    types: list[ValueType]
    rows: list[tuple]
    sql: str = ""
    params: tuple = ()

    def __len__(self) -> int:
        return len(self.rows)

    def to_records(self) -> list[dict[str, Any]]:
        """Rows as dicts keyed by column name (Python values)."""
        return [dict(zip(self.columns, r)) for r in self.rows]

    def to_records_json(self) -> list[dict[str, Any]]:
        """Rows in the Logs Insights result format, ready for ``json.dumps``: numbers as
        numbers (integral floats as integers), missing values as null, timestamps as
        ``YYYY-MM-DD HH:MM:SS.mmm`` UTC strings."""
        return [{c: _json_value(v) for c, v in zip(self.columns, r)} for r in self.rows]

    def to_arrow(self):
        """A ``pyarrow.Table``: timestamp columns as ``timestamp[ms, UTC]``, numeric columns
        as int64/float64, mixed dynamic columns as strings."""
        import pyarrow as pa

        arrays = []
        for i, (name, vtype) in enumerate(zip(self.columns, self.types)):
            values = [r[i] for r in self.rows]
            arrays.append(_arrow_column(pa, values, vtype))
        return pa.table(arrays, names=self._unique_names())

    def to_pandas(self):
        """A ``pandas.DataFrame`` built from :meth:`to_arrow`."""
        return self.to_arrow().to_pandas()

    def _unique_names(self) -> list[str]:
        seen: dict[str, int] = {}
        out = []
        for c in self.columns:
            if c in seen:
                seen[c] += 1
                out.append(f"{c}_{seen[c]}")
            else:
                seen[c] = 0
                out.append(c)
        return out


def _arrow_column(pa, values: list[Any], vtype: ValueType):
    present = [v for v in values if v is not None]
    if vtype is ValueType.TIMESTAMP or (present and all(isinstance(v, datetime) for v in present)):
        return pa.array(values, type=pa.timestamp("ms", tz="UTC"))
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.array(values, type=pa.int64())
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64())
    if not present and vtype is ValueType.NUMBER:
        return pa.array(values, type=pa.float64())
    return pa.array([None if v is None else (v if isinstance(v, str) else json.dumps(v)) for v in values],
                    type=pa.string())
