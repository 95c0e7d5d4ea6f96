"""One scan for many tables: the standard queries that start with ``filter`` share one Logs Insights query per window.

Logs Insights bills the bytes each query scans, and a query scans every event of its log groups in its window whatever
it filters: ten standard queries over a window scan its bytes ten times. Each standard query reads only the events its
leading ``filter`` lets through, so one query whose filter is the ``or`` of theirs returns every event any of them
reads (``scan_query``); each table is then the same standard query run by the offline Logs Insights engine
(``collector.insights``) over those events and that window (``evaluate``): each byte is scanned once, and the rows are
the ones Logs Insights gives for the table's own query (the same engine is what tests/support's fake server answers
with, and what ``collect local`` computes the tables with).

A query is combined when its first command is ``filter`` and the offline engine parses it (``leading_filter``);
anything else (a ``--query-file`` starting with ``fields``, a query the engine does not support) runs on its own as
before.

Field indexes: when every combined table reads only the emitter's records (their filter requires ``schema_version``,
the contract's mark), the scan of a log group whose index policy covers the window starts with
``filterIndex schema_version in [<the contract's versions>]`` and scans only the emitter's records
(``collector.cloudwatch.index_policy``). A table that needs other events (``invocations``: Lambda's REPORT lines,
``library_signals``: other libraries' EMF and error lines, which no field index can select) makes the scan read every
event once anyway, and then no index is used: an indexed scan beside a full one would only add bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from collector.cloudwatch.windows import Window
from emitter.contract import SCHEMA_VERSION, LogKey

SCAN_FIELDS = ("@timestamp", "@message", "@logStream", "@log")
"""What a scan returns per event: enough to rebuild it for the offline engine (which derives ``@type``,
``@duration`` ... from the message as Logs Insights does)."""

EMITTER_FIELD: str = LogKey.SCHEMA_VERSION.value
"""The contract's mark on every emitter record (``emitter.contract``): the field indexed scans select on."""

EMITTER_VALUES = (SCHEMA_VERSION,)
"""The ``schema_version`` values an indexed scan asks for: the contract's. A record with another value is read by
plain scans only."""


@dataclass(frozen=True)
class Combined:
    """The tables sharing scans: ``filters`` {table: leading filter expression text}; ``emitter_only``: every one of
    them requires ``schema_version`` (an index on it can serve the scan)."""

    filters: Mapping[str, str]
    emitter_only: bool


def filter_sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def leading_filter(query: str) -> str | None:
    """The expression of ``query``'s first command when it is ``filter`` (source text), else None (also when the
    offline engine cannot compile the query, e.g. a function it does not support: such a query runs on its own in
    Logs Insights)."""
    from collector.insights.compiler import compile_query
    from collector.insights.exceptions import QueryError
    from collector.insights.expressions import FilterCmd
    from collector.insights.parser import parse_query

    try:
        parsed = parse_query(query)
        if not parsed.commands or not isinstance(parsed.commands[0], FilterCmd):
            return None
        compile_query(parsed)
    except QueryError:
        return None
    return parsed.commands[0].expr.text


def requires_emitter_record(filter_text: str) -> bool:
    """True when the filter expression is ``ispresent(schema_version) and ...`` (or ``schema_version = v`` / ``in``):
    only emitter records pass it."""
    from collector.insights.expressions import Binary, Call, Field, InList
    from collector.insights.parser import parse_query

    expr = parse_query(f"filter {filter_text}").commands[0].expr  # type: ignore[union-attr]
    for t in and_terms(expr):
        if isinstance(t, Call) and t.key == "ispresent" and len(t.args) == 1 and isinstance(t.args[0], Field) \
                and t.args[0].name == EMITTER_FIELD:
            return True
        if isinstance(t, Binary) and t.op == "=" and not t.negated and isinstance(t.left, Field) \
                and t.left.name == EMITTER_FIELD:
            return True
        if isinstance(t, InList) and not t.negated and isinstance(t.operand, Field) and t.operand.name == EMITTER_FIELD:
            return True
    return False


def and_terms(expr: Any) -> list[Any]:
    """The terms of a parsed expression's top-level ``and`` chain, left to right (the expression itself when it is
    not an ``and``)."""
    from collector.insights.expressions import Binary

    terms, out = [expr], []
    while terms:
        t = terms.pop()
        if isinstance(t, Binary) and t.op == "and":
            terms += [t.right, t.left]
        else:
            out.append(t)
    return out


def combine(queries: Mapping[str, str]) -> tuple[Combined, dict[str, str]]:
    """Split ``queries`` ({table: query}) into the combined tables and the ones that run on their own."""
    filters: dict[str, str] = {}
    alone: dict[str, str] = {}
    for name, query in queries.items():
        f = leading_filter(query)
        if f is None:
            alone[name] = query
        else:
            filters[name] = f
    emitter_only = bool(filters) and all(requires_emitter_record(f) for f in filters.values())
    return Combined(filters, emitter_only), alone


def scan_query(filters: Sequence[str], indexed: bool = False) -> str:
    """The Logs Insights query returning every event one of ``filters`` lets through (each filter on its own lines,
    so a ``#`` comment inside one cannot swallow the rest), oldest first. ``indexed``: start with ``filterIndex`` on
    the contract's ``schema_version`` (only for filters that all require it)."""
    if not filters:
        raise ValueError("a scan needs at least one filter")
    body = "\n  or ".join(f"(\n{f}\n)" for f in sorted(set(filters)))
    head = f"filterIndex {EMITTER_FIELD} in [{', '.join(_quote(v) for v in EMITTER_VALUES)}]\n| " if indexed else ""
    return f"{head}filter {body}\n| fields {', '.join(SCAN_FIELDS)}\n| sort @timestamp asc"


def _quote(v: str) -> str:
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---------------------------------------------------------------------------- scanned rows -> events
@dataclass(frozen=True)
class ScannedEvent:
    """One event a scan returned: ``timestamp`` epoch ms, ``log_group`` (name), ``account_id``, stream, message."""

    timestamp: int
    log_group: str
    account_id: str
    log_stream: str
    message: str


def events_from_rows(rows: Sequence[Mapping[str, str | None]]) -> tuple[list[ScannedEvent], int]:
    """Scan rows (``SCAN_FIELDS``) -> events, and the number of rows dropped because a field was missing or
    unreadable (a row without ``@message`` or with a timestamp that does not parse: counted, never guessed)."""
    from collector.parquet import parse_timestamp_ms

    out: list[ScannedEvent] = []
    bad = 0
    for r in rows:
        ts, msg, log = r.get("@timestamp"), r.get("@message"), r.get("@log")
        if ts is None or msg is None or log is None:
            bad += 1
            continue
        try:
            t = parse_timestamp_ms(ts)  # the one reader of Logs Insights timestamps (collector.parquet)
        except ValueError:
            bad += 1
            continue
        account, sep, group = log.partition(":")
        if not sep:  # a bare log group name (no account): keep it, no account known
            account, group = "", log
        out.append(ScannedEvent(t, group, account, r.get("@logStream") or "", msg))
    return out, bad


def api_text(value: Any) -> str | None:
    """A result value as GetQueryResults gives it: text (``true``/``false``, compact JSON for objects), None for a
    null (the API leaves the field out). Numbers come from ``QueryResult.to_records_json`` (integral floats as
    integers), timestamps as ``YYYY-MM-DD HH:MM:SS.mmm``."""
    import json

    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def evaluate(store: Any, query: str, window: Window) -> list[dict[str, str | None]]:
    """Rows of ``query`` over the events of ``store`` (an ``EventStore``) in ``window``, exactly as the runner asks
    Logs Insights for them (window filter prepended, StartQuery bounds ``[start, end + 1]``, no row cap) and as
    GetQueryResults renders them (text values, nulls left out)."""
    from collector.cloudwatch.runner import restrict_to_window
    from collector.insights import run_query

    res = run_query(store, restrict_to_window(query, window), start=window.start, end=window.end + 1, limit_cap=None)
    return [{k: t for k, v in rec.items() if (t := api_text(v)) is not None} for rec in res.to_records_json()]
