"""Value types of compiled Logs Insights expressions.

Logs Insights fields are dynamically typed: a field can hold a number in one event and a
string in the next. The compiler gives every expression a static :class:`ValueType`;
``DYNAMIC`` means "a JSON scalar whose type is only known per row" and is converted at
the point of use (numeric context -> number when the value is a number or a numeric
string, text context -> its text).
"""

from __future__ import annotations

from enum import Enum

__all__ = ["ValueType"]


class ValueType(str, Enum):
    DYNAMIC = "dynamic"  # JSON value (DuckDB JSON); number or string decided per row
    STRING = "string"  # DuckDB VARCHAR
    NUMBER = "number"  # DuckDB BIGINT / DOUBLE
    BOOLEAN = "boolean"  # DuckDB BOOLEAN; shown as 1/0 like Logs Insights
    TIMESTAMP = "timestamp"  # DuckDB TIMESTAMP (UTC, ms precision)
