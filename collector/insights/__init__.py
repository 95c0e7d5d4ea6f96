"""Offline CloudWatch Logs Insights engine: the classic query language compiled to DuckDB SQL.

Commands: ``fields`` (expressions, ``as``), ``display``, ``filter``, ``filterIndex``,
``stats ... by ...`` (incl. ``bin(5m) [offset 1h]``, aliases, reuse of an alias later in the
same ``stats``, arithmetic on aggregates), ``sort [by] ... asc|desc``, ``limit``, ``parse`` (glob
``*`` and regex with ``(?<name>...)`` groups, any number; ``@message`` without a field), ``dedup``,
``unnest ... into``, ``unmask``, ``SOURCE logGroups(...)`` / ``SOURCE '<group>'``, ``join`` and
``field in (<subquery>)``; ``#`` comments; ``!`` for ``not``. Any other command or function is a
:class:`QueryError` naming it and its position; so is any text the engine cannot run
(limits in :mod:`collector.insights.constants`). The full list, generated from the registries,
is docs/logs-insights-coverage.md.

Semantics (as documented by AWS; where AWS leaves it open, the choice is stated):
- time range: ``start <= @timestamp <= end``, both inclusive (StartQuery).
- default order: ``@timestamp`` descending for non-stats queries; stats results by their
  group keys ascending; ties by ingest order.
- default and maximum limit: 10,000 rows (``limit N`` above the cap is an error).
- result column names: the alias, else the expression as written (``count(*)``, ``bin(5m)``).
- dynamic types: a field is a number in one event and a string in another. Comparing with
  a number literal is numeric (a JSON number or a numeric string such as ``"42"``
  converts; other values do not match); comparing with a string literal compares text
  (the number 5 is the text ``"5"``); comparing two fields is numeric when both values
  are numeric, else text. Arithmetic and numeric stats (sum, avg, min, max, pct, stddev)
  use the numeric value and skip values that are not numbers. ``count(field)`` counts
  events where the field is present.
- sort (documented natural sort): ascending, every non-number value comes before every
  number value; non-numbers compare run by run (digit runs by length then value, other runs
  by Unicode code point: "5A" < "111A" < "2345_" < "@"); numbers numerically; descending is
  the reverse; missing values last (not documented). ``sortsFirst``/``sortsLast`` use it.
- ``like "text"`` is a case-sensitive substring match; ``like /re/`` and ``=~ /re/`` are
  unanchored RE2 searches; ``in [...]`` is set membership.
- ``join`` keys and ``in (<subquery>)`` values match when their text is equal; a left row matching
  several right rows appears once per match; a subquery reads the same time window, uncapped.
- field names: ``a[1]`` is ``a.1`` (list items from 0, as the flattened JSON names); ``@@x`` is the
  JSON key ``@x``; ``@x`` is a generated field (a system column, else missing).
- ``pct`` is nearest-rank (a value present in the data); ``stddev`` is the sample standard
  deviation; ``count_distinct`` is exact; ``earliest``/``latest`` skip events without the field.
- bins of ms/s/m/h/d are aligned on multiples since the epoch (UTC), weeks start on Monday,
  months/quarters/years follow the calendar.
"""

from collector.insights.compiler import DEFAULT_LIMIT, CompiledQuery, compile_query
from collector.insights.engine import run_query
from collector.insights.exceptions import QueryError
from collector.insights.field_check import MissingField, missing_fields
from collector.insights.functions import AGGREGATE_FUNCTIONS, SCALAR_FUNCTIONS
from collector.insights.parser import parse_query
from collector.insights.references import QueryReferences, query_references
from collector.insights.result import QueryResult, format_timestamp
from collector.insights.sql import harden_connection
from collector.insights.types import ValueType

__all__ = [
    "AGGREGATE_FUNCTIONS",
    "DEFAULT_LIMIT",
    "SCALAR_FUNCTIONS",
    "CompiledQuery",
    "MissingField",
    "QueryError",
    "QueryReferences",
    "QueryResult",
    "ValueType",
    "compile_query",
    "format_timestamp",
    "harden_connection",
    "missing_fields",
    "parse_query",
    "query_references",
    "run_query",
]
