"""The SQL that turns staged events into rows of the ``events`` table (one statement per batch).

Every format stages rows ``(seq, ts, msg, stream, lg, ing)`` (epoch ms, message, log stream, log group,
ingestion time); this statement adds what Logs Insights derives from the message:

- ``@ingestChecks``: what the ingest counts and re-reads after the INSERT (``ingest_checks_sql``);
- ``@jsonMessage``: the message is a JSON object (first character ``{``, parsed by the same ``json_transform`` that
  reads every value below: each line is parsed once); ``@json`` is a virtual column over it (``collector.tables``);
- Lambda fields of the text format (``START``/``END``/``REPORT RequestId: ...``): ``@type`` (``START``,
  ``END``, ``REPORT``), ``@requestId``, and on REPORT ``@duration``, ``@billedDuration``,
  ``@initDuration`` (ms) and ``@memorySize``, ``@maxMemoryUsed`` (bytes, 1 MB = 10^6 bytes, as Logs
  Insights reports them); the same from the Lambda JSON log format's ``platform.start`` /
  ``platform.runtimeDone`` / ``platform.report`` records (``record.requestId``, ``record.metrics.*``);
- the fields of AWS's text records and ``@xrayTraceId`` / ``@xraySegmentId`` (``collector.ingest.vended``): the
  record's fields as ``@jsonFields``, its own time when the stage has none;
- hot contract fields as columns named like the field (``constants.HOT_FIELDS``): JSON, or VARCHAR for the string
  fields of the contract (``constants.HOT_STRING_FIELDS``);
- when the stage has no timestamp (``ts`` NULL) and ``own_ts`` is on: the record's own time, first of
  EMF ``_aws.Timestamp`` (epoch ms), ``timestamp``, ``time`` (ISO-8601, Powertools
  ``2026-11-30 00:26:28,838+0000``, epoch ms, or epoch seconds when below 10^11).

All values come from the data through SQL functions; no user text is concatenated into SQL (field
names are the fixed HOT_FIELDS, quoted as identifiers).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from collector.ingest import vended
from collector.ingest.constants import (
    MAX_DISCOVERED_FIELDS,
    MAX_EVENT_BYTES,
    MAX_TIMESTAMP_MS,
    MB,
    OUT_OF_RANGE_MS,
    IngestCheck,
)
from collector.insights.sql import quote_ident as _q
from collector.insights.sql import sql_literal
from collector.tables import EVENT_STORED_COLUMNS, INGEST_CHECKS_COLUMN, JSON_FIELDS_COLUMN, JSON_MESSAGE_COLUMN

_PLATFORM = {"platform.start": "START", "platform.runtimeDone": "END", "platform.report": "REPORT"}

MACROS = (
    # epoch ms of a number (DOUBLE) when within +-MAX_TIMESTAMP_MS, else the OUT_OF_RANGE_MS mark (1e300, inf, nan)
    f"""CREATE OR REPLACE MACRO iw_ms_range(d) AS
        CASE WHEN d IS NULL THEN NULL WHEN abs(d) <= {MAX_TIMESTAMP_MS} THEN CAST(d AS BIGINT)
             ELSE {OUT_OF_RANGE_MS} END""",
    # epoch ms from the text of a JSON timestamp value (json_transform gives numbers as their text too):
    # the emitter's ISO-8601 "2026-01-05T10:20:01.000Z" via strptime (fast path), epoch ms (or epoch s below
    # 1e11), or any ISO-8601 / Powertools "2026-11-30 00:26:28,838+0000" form via the TIMESTAMPTZ cast.
    """CREATE OR REPLACE MACRO iw_text_ts(v) AS COALESCE(
        epoch_ms(try_strptime(v, '%Y-%m-%dT%H:%M:%S.%gZ')),
        CASE WHEN TRY_CAST(v AS DOUBLE) IS NOT NULL THEN
            iw_ms_range(CASE WHEN CAST(v AS DOUBLE) < 1e11 THEN CAST(v AS DOUBLE) * 1000 ELSE CAST(v AS DOUBLE) END)
        ELSE epoch_ms(TRY_CAST(replace(v, ',', '.') AS TIMESTAMPTZ)) END)""",
    """CREATE OR REPLACE MACRO iw_num(s) AS TRY_CAST(NULLIF(s, '') AS DOUBLE)""",
    # a message cut to MAX_EVENT_BYTES bytes of UTF-8 at a character boundary (Python's
    # enc[:MAX_EVENT_BYTES].decode("utf-8", "ignore")): through its hex text, since DuckDB slices text by characters
    # and has no byte slice of a BLOB; the cut is before the last lead byte at or below the limit when the byte after
    # the limit continues its character (0x80-0xBF: hex digit 8 to B). Only over-long messages take this way.
    "CREATE OR REPLACE MACRO iw_cont(h, b) AS substr(h, 2 * b - 1, 1) IN ('8', '9', 'A', 'B')",
    f"""CREATE OR REPLACE MACRO iw_clip_hex(h) AS decode(unhex(left(h, 2 * CASE
        WHEN NOT iw_cont(h, {MAX_EVENT_BYTES + 1}) THEN {MAX_EVENT_BYTES}
        WHEN NOT iw_cont(h, {MAX_EVENT_BYTES}) THEN {MAX_EVENT_BYTES - 1}
        WHEN NOT iw_cont(h, {MAX_EVENT_BYTES - 1}) THEN {MAX_EVENT_BYTES - 2} ELSE {MAX_EVENT_BYTES - 3} END)))""",
    f"""CREATE OR REPLACE MACRO iw_clip(s) AS
        CASE WHEN strlen(s) <= {MAX_EVENT_BYTES} THEN s ELSE iw_clip_hex(hex(encode(s))) END""",
)

REPORT_FIELDS: dict[str, tuple[str, str, bool]] = {
    "@duration": (r"\tDuration: ([0-9.]+) ms", "durationMs", False),
    "@billedDuration": (r"Billed Duration: ([0-9.]+) ms", "billedDurationMs", False),
    "@memorySize": (r"Memory Size: ([0-9.]+) MB", "memorySizeMB", True),
    "@maxMemoryUsed": (r"Max Memory Used: ([0-9.]+) MB", "maxMemoryUsedMB", True),
    "@initDuration": (r"Init Duration: ([0-9.]+) ms", "initDurationMs", False),
}
"""The numbers of a Lambda ``REPORT`` record: field -> (RE2 with the text format's number as group 1, the key under
``record.metrics`` of the JSON log format's ``platform.report``, whether it is in MB: stored in bytes, ``* MB``)."""
_METRICS = tuple(key for _, key, _ in REPORT_FIELDS.values())
_INTERNAL = "__iw_"  # prefix of the staging columns (never a JSON key we extract)


def ingest_checks_sql(msg: str, is_json: str, cut: str = "false") -> str:
    """SQL of the ``@ingestChecks`` value (``constants.IngestCheck`` bits, NULL for none) of the message ``msg`` (a
    VARCHAR expression), ``is_json`` (a BOOLEAN expression) telling whether it parsed as one JSON object, ``cut`` (a
    BOOLEAN expression) whether it was cut to the event size (``TRUNCATED``). A JSON
    object is ``WIDE_JSON`` when it may have more than ``MAX_DISCOVERED_FIELDS`` leaf fields: n leaves need at least
    n - 1 commas and 2n bytes (``[1,1,...]``), so fewer commas or bytes rule it out without parsing it again."""
    n = MAX_DISCOVERED_FIELDS
    wide = f"strlen({msg}) >= {2 * n} AND strlen({msg}) - strlen(replace({msg}, ',', '')) >= {n}"
    return (f"NULLIF(CASE WHEN {is_json} THEN CASE WHEN {wide} THEN {IngestCheck.WIDE_JSON} ELSE 0 END "
            f"WHEN contains({msg}, '{{') THEN {IngestCheck.EMBEDDED_JSON} "
            f"+ CASE WHEN starts_with({msg}, '{{') THEN {IngestCheck.INVALID_JSON} ELSE 0 END ELSE 0 END "
            f"+ CASE WHEN {cut} THEN {IngestCheck.TRUNCATED} ELSE 0 END, 0)")


def _spec(hot: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """json_transform structure (one parse for every value read) and hot field -> column expression; ``hot``: hot
    field -> its column's type (``JSON`` or ``VARCHAR``)."""
    top: dict[str, object] = {
        "_aws": {"Timestamp": "JSON"}, "timestamp": "VARCHAR", "time": "VARCHAR", "type": "VARCHAR",
        "record": {"requestId": "VARCHAR", "metrics": {m: "DOUBLE" for m in _METRICS},
                   "tracing": {"spanId": "VARCHAR", "value": "VARCHAR"}},
    }
    exprs: dict[str, str] = {}
    for h in hot:
        parts = h.split(".")
        node = top
        for p in parts[:-1]:
            child = node.get(p)
            if not isinstance(child, dict):
                child = node[p] = {}
            node = child
        if not isinstance(node.get(parts[-1]), dict):
            node[parts[-1]] = hot[h]
        exprs[h] = ".".join(_q(p) for p in parts)
    # fixed entries typed for their own use; a hot field of the same path reads them as JSON instead
    for h in hot:
        if h in ("timestamp", "time", "type") or h.startswith("record."):
            raise ValueError(f"hot field {h!r} collides with a field the ingest reads itself")
    return json.dumps(top, separators=(",", ":")), exprs


def insert_sql(table: str, src: str, hot: Mapping[str, str], *, own_ts: bool) -> str:
    """``INSERT INTO <table> (...) SELECT ...`` over the relation ``src`` (a table name or ``(subquery)``)
    with columns ``seq, ts, msg, stream, lg, ing``; a message over ``MAX_EVENT_BYTES`` is cut there (``iw_clip``,
    marked ``IngestCheck.TRUNCATED``); ``hot``: hot field -> its column's type (``JSON``/``VARCHAR``). Each message starting with ``{`` is parsed once, by
    ``TRY(json_transform(...))`` into a struct that ``unnest`` spreads into columns (so each value is read once, not
    once per reference); a NULL struct means not valid JSON (the same test as ``TRY_CAST(... AS JSON)``)."""
    spec, hot_exprs = _spec(hot)
    i = _INTERNAL
    platform_case = " ".join(f"WHEN {sql_literal(t)} THEN {sql_literal(v)}" for t, v in _PLATFORM.items())
    own = ('COALESCE(iw_ms_range(TRY_CAST("_aws"."Timestamp" AS DOUBLE)), iw_text_ts("timestamp"), '
           f'iw_text_ts("time"), {vended.time_sql(f"{i}msg", f"{i}words")})')
    ts_expr = f"COALESCE({i}ts, {own})" if own_ts else f"{i}ts"
    rep = f"{i}t = 'REPORT' AND NOT {i}isj"
    prep = f"{i}t = 'REPORT' AND {i}isj"

    def metric(text_re: str, name: str, scale: str = "") -> str:
        return (f"CASE WHEN {rep} THEN iw_num(regexp_extract({i}msg, {sql_literal(text_re)}, 1)){scale} "
                f'WHEN {prep} THEN "record"."metrics".{_q(name)}{scale} END')

    reports = "".join(f"    {metric(text_re, key, f' * {MB}' if in_mb else '')} AS {_q(field)},\n"
                      for field, (text_re, key, in_mb) in REPORT_FIELDS.items())
    rid_re = sql_literal(r"^(?:START|END|REPORT) RequestId: ([^\s]+)")
    hot_cols = "".join(f", {e} AS {_q(h)}" for h, e in hot_exprs.items())
    xray = {"msg": f"{i}msg", "isj": f"{i}isj", "platform": f"({i}isj AND {i}t IS NOT NULL)",
            "tracing": '"record"."tracing"'}
    xray_trace, xray_segment = vended.XRAY_TRACE_SQL.format(**xray), vended.XRAY_SEGMENT_SQL.format(**xray)
    columns = [n for n, _ in EVENT_STORED_COLUMNS] + list(hot_exprs)
    return f"""
INSERT INTO {_q(table)} ({", ".join(_q(c) for c in columns)})
SELECT {ts_expr} AS "@timestamp", {i}msg AS "@message", {i}stream AS "@logStream", {i}lg AS "@log",
    {i}ing AS "@ingestionTime", {i}t AS "@type",
    CASE WHEN {i}t IS NULL THEN NULL
         WHEN NOT {i}isj THEN regexp_extract({i}msg, {rid_re}, 1)
         ELSE "record"."requestId" END AS "@requestId",
{reports}    {xray_trace} AS "@xrayTraceId", {xray_segment} AS "@xraySegmentId",
    {i}seq AS "@seq", {i}isj AS {_q(JSON_MESSAGE_COLUMN)},
    {vended.fields_sql(f"{i}msg", f"{i}words")} AS {_q(JSON_FIELDS_COLUMN)},
    CAST({ingest_checks_sql(f"{i}msg", f"{i}isj", f"{i}cut")} AS TINYINT) AS {_q(INGEST_CHECKS_COLUMN)}{hot_cols}
FROM (
    SELECT *,
        CASE WHEN NOT {i}isj THEN
                CASE WHEN starts_with({i}msg, 'REPORT RequestId: ') THEN 'REPORT'
                     WHEN starts_with({i}msg, 'START RequestId: ') THEN 'START'
                     WHEN starts_with({i}msg, 'END RequestId: ') THEN 'END' END
             ELSE CASE "type" {platform_case} END
        END AS {i}t
    FROM (
        SELECT {i}seq, {i}ts, {i}msg, {i}cut, {i}stream, {i}lg, {i}ing, {i}words, {i}doc IS NOT NULL AS {i}isj,
            unnest({i}doc)
        FROM (
            SELECT *, CASE WHEN starts_with({i}msg, '{{') THEN TRY(json_transform({i}msg, {sql_literal(spec)})) END
                    AS {i}doc,
                {vended.words_sql(f"{i}msg")} AS {i}words
            FROM (SELECT seq AS {i}seq, ts AS {i}ts, iw_clip(msg) AS {i}msg, strlen(msg) > {MAX_EVENT_BYTES} AS {i}cut,
                         stream AS {i}stream, lg AS {i}lg, ing AS {i}ing FROM {src})
        )
    )
)
"""
