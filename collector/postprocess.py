"""Post-processing of standard query results that a Logs Insights query cannot do itself (one rule each, used by
both collectors; each query's header documents it).

- ``library_signals``: the query returns raw events (``@timestamp``, ``@log``, ``@message``); the table is their
  expansion into (time, log_group, library, signal, events) per 1-minute bin: EMF documents of Powertools Metrics /
  aws-embedded-metrics, and Powertools idempotency exception lines.
- ``log_group`` / ``account_id`` (``invocations``, ``library_signals``, ``trail``): the queries select
  ``@log as log_group``; ``@log`` "is a log group identifier in the form of account-id:log-group-name"
  (CWL_AnalyzeLogData-discoverable-fields), on CloudWatch and offline alike. ``split_log_identifier`` splits it
  into the log group name (``log_group``, what the dashboard and alarms read) and ``account_id``.
- ``stuck_keys``: ``age_s`` = window end - claimed_at (seconds) and ``expired`` = in_progress_expires_at < window end,
  relative to the window end of the collection (``--until``, else the last event / the collection time).
"""

from __future__ import annotations

import functools
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from collector.insights.log_identifier import LOG_IDENTIFIER_RE
from collector.parquet import parse_timestamp_ms

__all__ = ["ACCOUNT_COLUMN", "FILLED_COLUMNS", "POST_PROCESS", "expand_library_signals", "library_signals_rows",
           "split_log_identifier", "stuck_key_ages"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EXCEPTION_NAME = re.compile(r"^\[ERROR\]\s(?:\S+\s+\S+\s+)?(Idempotency[A-Za-z]*Error):")


@functools.cache  # one lookup per metric name, not per datapoint
def _outcome_for_metric(name: str) -> str:
    from emitter.contract import METRIC_OUTCOME, Metric

    try:
        return METRIC_OUTCOME[Metric(name)].value
    except (ValueError, KeyError):
        return name


def _outcome_for_exception(name: str) -> str:
    from emitter.contract import EXCEPTION_OUTCOME

    mapped = EXCEPTION_OUTCOME.get(name)
    return mapped.value if mapped else name


def _emf_library(doc: Mapping[str, Any]) -> str:
    if "ServiceName" in doc and "ServiceType" in doc:
        return "aws-embedded-metrics"  # its default dimensions (LogGroup, ServiceName, ServiceType)
    if "service" in doc:
        return "powertools"  # Powertools Metrics always adds the "service" dimension
    return "emf"


def _metric_events(value: Any, unit: str | None) -> float | None:
    values = value if isinstance(value, list) else [value]
    nums = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not nums:
        return None
    return float(sum(nums)) if unit == "Count" else float(len(nums))


def expand_library_signals(rows: Iterable[tuple[datetime, str | None, str]]) -> tuple[list[tuple], int]:
    """Expand the library_signals query rows ``(@timestamp as aware UTC datetime, @log, @message)`` into table rows
    ``(time, log_group, library, signal, events)`` summed per 1-minute bin.

    A Powertools idempotency exception line counts 1 under the emitter outcome its exception maps to
    (``emitter.contract.EXCEPTION_OUTCOME``); an EMF metric counts its value summed (unit ``Count``) or its number of
    values (other units), under the outcome the metric maps to (``emitter.contract.METRIC_OUTCOME``) or its name.

    Returns (rows sorted by time/log_group/library/signal, number of EMF metric entries that were dropped because
    their value was not numeric).
    """
    acc: dict[tuple, float] = defaultdict(float)
    dropped = 0
    for ts, log_group, message in rows:
        minute = ts.replace(second=0, microsecond=0)
        m = _EXCEPTION_NAME.match(message or "")
        if m:
            acc[(minute, log_group, "powertools", _outcome_for_exception(m.group(1)))] += 1.0
            continue
        try:
            doc = json.loads(message)
        except (TypeError, ValueError):
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("_aws"), dict):
            continue
        library = _emf_library(doc)
        directives = doc["_aws"].get("CloudWatchMetrics")
        for directive in directives if isinstance(directives, list) else []:
            metrics = directive.get("Metrics") if isinstance(directive, dict) else None
            for metric in metrics if isinstance(metrics, list) else []:
                if not isinstance(metric, dict) or not isinstance(metric.get("Name"), str):
                    dropped += 1
                    continue
                name = metric["Name"]
                events = _metric_events(doc.get(name), metric.get("Unit"))
                if events is None:
                    dropped += 1
                    continue
                acc[(minute, log_group, library, _outcome_for_metric(name))] += events
    out = sorted(((k[0], k[1], k[2], k[3], v) for k, v in acc.items()),
                 key=lambda r: (r[0], r[1] or "", r[2], r[3]))
    return out, dropped


def library_signals_rows(rows: Iterable[Mapping[str, str | None]]) -> tuple[list[dict[str, str | None]], int]:
    """``expand_library_signals`` over result rows in the GetQueryResults form (field -> string value;
    ``@timestamp`` as ``YYYY-MM-DD HH:MM:SS.mmm`` or epoch ms), returning table rows in the same string form
    (``time`` in epoch ms, ``events`` as ``repr(float)``, which parses back exactly) for ``parquet.to_arrow``.
    Rows without a timestamp are ignored. Returns (rows, EMF entries dropped as not numeric)."""
    triples = []
    for r in rows:
        ts = r.get("@timestamp")
        if ts:
            triples.append((_EPOCH + timedelta(milliseconds=parse_timestamp_ms(ts)), r.get("@log"),
                            r.get("@message") or ""))
    expanded, dropped = expand_library_signals(triples)
    out = [{"time": str((t - _EPOCH) // timedelta(milliseconds=1)), "log_group": lg, "library": lib, "signal": sig,
            "events": repr(float(ev))} for t, lg, lib, sig, ev in expanded]
    return out, dropped


POST_PROCESS: dict[str, Callable[[list[dict[str, str | None]]], tuple[list[dict[str, str | None]], int]]] = {
    "library_signals": library_signals_rows,
}
"""Tables whose query output is not the table itself: table -> expansion of the string rows."""


def stuck_key_ages(table: pa.Table, window_end_ms: int | None) -> pa.Table:
    """``table`` (stuck_keys schema, ``claimed_at``/``in_progress_expires_at`` Arrow timestamps in ms) with
    ``age_s`` = (window_end_ms - claimed_at) / 1000 (float64 seconds) and ``expired`` = in_progress_expires_at <
    window end (bool) replaced. ``window_end_ms``: epoch milliseconds; None (no window end known) or a null input
    gives null."""
    n = table.num_rows
    if window_end_ms is None or n == 0:
        age = pa.nulls(n, pa.float64())
        expired = pa.nulls(n, pa.bool_())
    else:
        end = pa.scalar(int(window_end_ms), pa.int64())
        claimed = table.column("claimed_at").cast(pa.int64())
        expires = table.column("in_progress_expires_at").cast(pa.int64())
        age = pc.divide(pc.subtract(end, claimed).cast(pa.float64()), 1000.0)
        expired = pc.less(expires, end)
    table = table.set_column(table.schema.get_field_index("age_s"), "age_s", age)
    return table.set_column(table.schema.get_field_index("expired"), "expired", expired)


ACCOUNT_COLUMN = "account_id"
"""The column ``split_log_identifier`` fills: the 12-digit account ID of the row's ``@log``."""

FILLED_COLUMNS: dict[str, tuple[str, ...]] = {"stuck_keys": ("age_s", "expired")}
"""Table -> columns its query does not return (filled here); with ``account_id`` for every table that has it."""


def filled_columns(table) -> tuple[str, ...]:
    """Columns of ``table`` (a ``collector.tables.Table``) that post-processing fills, not its query."""
    extra = (ACCOUNT_COLUMN,) if ACCOUNT_COLUMN in table.column_names else ()
    return FILLED_COLUMNS.get(table.name, ()) + extra


_SPLIT = LOG_IDENTIFIER_RE.replace("^(", "^(?P<account>", 1).replace(":(.*)$", ":(?P<name>.*)$", 1)


def _split_array(lg: pa.Array, acct: pa.Array) -> tuple[pa.Array, pa.Array]:
    """(log group names, accounts) of one array of ``@log`` values; the regex runs on the distinct values only
    (a table holds a handful of log groups), then ``take`` spreads the results over the rows."""
    enc = pc.dictionary_encode(lg)
    values, idx = enc.dictionary, enc.indices
    m = pc.extract_regex(values, pattern=_SPLIT)
    matched = pc.fill_null(pc.is_valid(m), False)
    names = pc.if_else(matched, pc.struct_field(m, "name"), values).cast(lg.type)
    accounts = pc.struct_field(m, "account").cast(acct.type)
    row_matched = pc.fill_null(pc.take(matched, idx), False)
    return pc.take(names, idx), pc.if_else(row_matched, pc.take(accounts, idx), acct)


def split_log_identifier(data: pa.Table | pa.RecordBatch) -> pa.Table | pa.RecordBatch:
    """``data`` with ``log_group`` = the log group name and ``account_id`` = the account of an account-qualified
    ``log_group`` value (``"123456789012:/aws/lambda/fn"`` -> ``"/aws/lambda/fn"``, ``"123456789012"``); a value
    without an account prefix stays as it is and keeps the row's ``account_id`` (null when none). Data without both
    columns is returned unchanged. The one place the tables' ``@log`` is split, for both collectors."""
    names = data.schema.names
    if "log_group" not in names or ACCOUNT_COLUMN not in names:
        return data
    lg_i, acct_i = names.index("log_group"), names.index(ACCOUNT_COLUMN)
    lg, acct = data.column(lg_i), data.column(acct_i)
    if pa.types.is_null(acct.type):
        acct = acct.cast(pa.string())
    if isinstance(lg, pa.ChunkedArray):  # a Table: its two columns may be chunked differently
        lg, acct = lg.combine_chunks(), acct.combine_chunks()
    name, account = _split_array(lg, acct)
    data = data.set_column(lg_i, data.schema.field(lg_i), name)
    return data.set_column(acct_i, pa.field(ACCOUNT_COLUMN, acct.type), account)
