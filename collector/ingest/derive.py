"""The SQL that turns staged events into rows of the ``events`` table (one statement per batch).

Every format stages rows ``(seq, ts, msg, stream, lg, ing)`` (epoch ms, message, log stream, log group,
ingestion time); this statement adds what Logs Insights derives from the message:

- ``@json``: the message when it is a JSON object (first character ``{``), else NULL;
- Lambda fields of the text format (``START``/``END``/``REPORT RequestId: ...``): ``@type`` (``START``,
  ``END``, ``REPORT``), ``@requestId``, and on REPORT ``@duration``, ``@billedDuration``,
  ``@initDuration`` (ms) and ``@memorySize``, ``@maxMemoryUsed`` (bytes, 1 MB = 10^6 bytes, as Logs
  Insights reports them); the same from the Lambda JSON log format's ``platform.start`` /
  ``platform.runtimeDone`` / ``platform.report`` records (``record.requestId``, ``record.metrics.*``);
- hot contract fields as JSON columns named like the field (``constants.HOT_FIELDS``);
- when the stage has no timestamp (``ts`` NULL) and ``own_ts`` is on: the record's own time, first of
  EMF ``_aws.Timestamp`` (epoch ms), ``timestamp``, ``time`` (ISO-8601, Powertools
  ``2026-11-30 00:26:28,838+0000``, epoch ms, or epoch seconds when below 10^11).

All values come from the data through SQL functions; no user text is concatenated into SQL (field
names are the fixed HOT_FIELDS, quoted as identifiers).
"""

from __future__ import annotations

from collector.ingest.constants import MB

_PLATFORM = {"platform.start": "START", "platform.runtimeDone": "END", "platform.report": "REPORT"}

# json_extract paths read once per JSON message (one parse for all of them).
_FIXED_PATHS = (
    "$._aws.Timestamp", "$.timestamp", "$.time", "$.type", "$.record.requestId",
    "$.record.metrics.durationMs", "$.record.metrics.billedDurationMs", "$.record.metrics.memorySizeMB",
    "$.record.metrics.maxMemoryUsedMB", "$.record.metrics.initDurationMs",
)

MACROS = (
    # epoch ms from a JSON timestamp value: number (ms, or s below 1e11) or date string
    """CREATE OR REPLACE MACRO iw_json_ts(v) AS CASE
        WHEN v IS NULL THEN NULL
        WHEN json_type(v) IN ('BIGINT', 'UBIGINT', 'DOUBLE') THEN
            CAST(CASE WHEN CAST(v AS DOUBLE) < 1e11 THEN CAST(v AS DOUBLE) * 1000 ELSE CAST(v AS DOUBLE) END AS BIGINT)
        WHEN json_type(v) = 'VARCHAR' THEN
            epoch_ms(TRY_CAST(replace(v ->> '$', ',', '.') AS TIMESTAMPTZ))
        END""",
    """CREATE OR REPLACE MACRO iw_num(s) AS TRY_CAST(NULLIF(s, '') AS DOUBLE)""",
)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sq(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def insert_sql(table: str, src: str, hot: tuple[str, ...], *, own_ts: bool) -> str:
    """``INSERT INTO <table> SELECT ...`` over the relation ``src`` (a table name or ``(subquery)``)."""
    paths = list(_FIXED_PATHS) + [f"$.{_json_key(h)}" for h in hot]
    path_list = "[" + ", ".join(_sq(p) for p in paths) + "]"
    k = {p: i + 1 for i, p in enumerate(paths)}  # 1-based list index
    ptype = f"v[{k['$.type']}]"
    platform_case = " ".join(f"WHEN {_sq(_json_str(t))} THEN {_sq(v)}" for t, v in _PLATFORM.items())
    own = (f"COALESCE(TRY_CAST(v[{k['$._aws.Timestamp']}] AS BIGINT), iw_json_ts(v[{k['$.timestamp']}]), "
           f"iw_json_ts(v[{k['$.time']}]))")
    ts_expr = f"COALESCE(ts, {own})" if own_ts else "ts"
    rep = "t = 'REPORT' AND j IS NULL"
    prep = "t = 'REPORT' AND j IS NOT NULL"

    def metric(text_re: str, path: str, scale: str = "") -> str:
        return (f"CASE WHEN {rep} THEN iw_num(regexp_extract(msg, {_sq(text_re)}, 1)){scale} "
                f"WHEN {prep} THEN TRY_CAST(v[{k[path]}] AS DOUBLE){scale} END")

    m_dur = metric(r"\tDuration: ([0-9.]+) ms", "$.record.metrics.durationMs")
    m_billed = metric(r"Billed Duration: ([0-9.]+) ms", "$.record.metrics.billedDurationMs")
    m_mem = metric(r"Memory Size: ([0-9.]+) MB", "$.record.metrics.memorySizeMB", f" * {MB}")
    m_maxmem = metric(r"Max Memory Used: ([0-9.]+) MB", "$.record.metrics.maxMemoryUsedMB", f" * {MB}")
    m_init = metric(r"Init Duration: ([0-9.]+) ms", "$.record.metrics.initDurationMs")
    rid_re = _sq(r"^(?:START|END|REPORT) RequestId: ([^\s]+)")
    hot_cols = "".join(f", v[{k['$.' + _json_key(h)]}] AS {_q(h)}" for h in hot)
    return f"""
INSERT INTO {_q(table)}
WITH b AS (
    SELECT seq, ts, msg, stream, lg, ing,
        CASE WHEN starts_with(msg, '{{') THEN TRY_CAST(msg AS JSON) END AS j
    FROM {src}
), x AS (
    SELECT *, CASE WHEN j IS NOT NULL THEN json_extract(j, {path_list}) END AS v FROM b
), y AS (
    SELECT *,
        CASE WHEN j IS NULL THEN
                CASE WHEN starts_with(msg, 'REPORT RequestId: ') THEN 'REPORT'
                     WHEN starts_with(msg, 'START RequestId: ') THEN 'START'
                     WHEN starts_with(msg, 'END RequestId: ') THEN 'END' END
             ELSE CASE CAST({ptype} AS VARCHAR) {platform_case} END
        END AS t
    FROM x
)
SELECT {ts_expr} AS "@timestamp", msg AS "@message", stream AS "@logStream", lg AS "@log",
    ing AS "@ingestionTime", t AS "@type",
    CASE WHEN t IS NULL THEN NULL
         WHEN j IS NULL THEN regexp_extract(msg, {rid_re}, 1)
         ELSE v[{k['$.record.requestId']}] ->> '$' END AS "@requestId",
    {m_dur} AS "@duration",
    {m_billed} AS "@billedDuration",
    {m_mem} AS "@memorySize",
    {m_maxmem} AS "@maxMemoryUsed",
    {m_init} AS "@initDuration",
    seq AS "@seq", j AS "@json"{hot_cols}
FROM y
"""


def _json_key(key: str) -> str:
    # JSONPath member: plain identifiers as is, anything else quoted.
    if key.replace("_", "a").isalnum():
        return key
    return '"' + key.replace('"', '\\"') + '"'


def _json_str(s: str) -> str:
    return '"' + s + '"'
