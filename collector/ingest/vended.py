"""Fields Logs Insights discovers in the text logs AWS services write, per event, as the ingest derives them.

AWS, "Supported logs and discovered fields"
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_AnalyzeLogData-discoverable-fields.html):

- Amazon VPC flow logs: ``accountId``, ``endTime``, ``interfaceId``, ``logStatus``, ``startTime``, ``version``,
  ``action``, ``bytes``, ``dstAddr``, ``dstPort``, ``packets``, ``protocol``, ``srcAddr``, ``srcPort``. A record in
  the default format (the fourteen version-2 fields in their documented order,
  https://docs.aws.amazon.com/vpc/latest/userguide/flow-log-records.html) is recognised by its shape. A custom
  format is not: "VPC Flow Logs that are in the default format are automatically discovered by CloudWatch Logs
  Insights. But, VPC Flow Logs are deployed in a custom format. Because of this, they aren't automatically
  discovered" (https://repost.aws/knowledge-center/cloudwatch-vpc-flow-logs), and its queries ``parse`` the
  message instead. A field the record shows as ``-`` ("not applicable or could not be computed") keeps that text.
- Route 53 (public DNS query) logs: ``edgeLocation``, ``hostZoneId``, ``protocol``, ``queryName``,
  ``queryTimestamp``, ``queryType``, ``resolverIp``, ``responseCode``, ``version``, from the space-separated record
  of https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/query-logs.html (its last value, the EDNS client
  subnet, is not in the list and is not discovered). Route 53 Resolver query logs are JSON objects: discovered as
  every JSON log (``query_name``, ``rcode``, ``srcids.instance``...), like CloudTrail's.
- Lambda logs: "If a Lambda log line contains an X-Ray trace ID, it also includes the following fields:
  ``@xrayTraceId`` and ``@xraySegmentId``": from ``XRAY TraceId: <id> SegmentId: <id>`` (the text format's line
  that belongs to the REPORT event) and, in the JSON log format, from a ``platform.*`` record's ``tracing``
  (``Root=`` of its ``value``, and its ``spanId``: the rule here, AWS names no source for that format).

Numbers of a flow log record (ports, protocol, packets, bytes, times, version) are JSON numbers; every other value is
its text. The record's own time: "In CloudWatch Logs, the timestamp field corresponds to the start time that's
captured in the flow log record" (https://docs.aws.amazon.com/vpc/latest/userguide/flow-logs-cwl.html); a Route 53
record's is its query timestamp. The ingest uses them for events that come without a CloudWatch timestamp (a file
of bare records).

Everything is SQL over the message (:data:`MACROS`), so detection costs a ``starts_with`` per text line and each
record is matched once; one regular expression per format is the one definition of its shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from collector.insights.sql import sql_literal

__all__ = ["FORMATS", "MACROS", "XRAY_SEGMENT_SQL", "XRAY_TRACE_SQL", "VendedFormat", "fields_sql", "time_sql"]


@dataclass(frozen=True)
class VendedFormat:
    """A space-separated record format AWS writes: the literal its records start with, one RE2 group per value in
    record order, the discovered field name of each (None: not discovered), the numeric ones, the time field and
    how to read it (``"epoch_s"`` or ``"iso"``)."""

    name: str
    prefix: str
    groups: Sequence[tuple[str | None, str]]  # (discovered name or None, RE2 of the value)
    numeric: frozenset[str]
    time_field: str
    time_kind: str

    @property
    def regex(self) -> str:
        """RE2 of a whole record (anchored; the values are its groups)."""
        return "^" + " ".join(f"({r})" for _, r in self.groups) + "$"


_NUMBER_OR_DASH = "[0-9]{1,18}|-"
VPC_FLOW = VendedFormat(
    "vpc-flow-log", "2 ",
    (("version", "2"), ("accountId", "[0-9]{12}|unknown"), ("interfaceId", "eni-[0-9a-f]+"),
     ("srcAddr", r"[0-9a-fA-F.:]+|-"), ("dstAddr", r"[0-9a-fA-F.:]+|-"), ("srcPort", _NUMBER_OR_DASH),
     ("dstPort", _NUMBER_OR_DASH), ("protocol", _NUMBER_OR_DASH), ("packets", _NUMBER_OR_DASH),
     ("bytes", _NUMBER_OR_DASH), ("startTime", "[0-9]{1,12}"), ("endTime", "[0-9]{1,12}"),
     ("action", "ACCEPT|REJECT|-"), ("logStatus", "OK|NODATA|SKIPDATA")),
    frozenset({"version", "srcPort", "dstPort", "protocol", "packets", "bytes", "startTime", "endTime"}),
    "startTime", "epoch_s")
ROUTE53_QUERY = VendedFormat(
    "route53-query-log", "1.0 ",
    (("version", r"1\.0"), ("queryTimestamp", r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z"), ("hostZoneId", "Z[0-9A-Z]+"),
     ("queryName", r"\S+"), ("queryType", "[A-Z0-9]+"), ("responseCode", "[A-Z]+"), ("protocol", "UDP|TCP"),
     ("edgeLocation", "[A-Z0-9-]+"), ("resolverIp", r"[0-9a-fA-F.:]+"), (None, r"\S+")),
    frozenset(), "queryTimestamp", "iso")
FORMATS: tuple[VendedFormat, ...] = (VPC_FLOW, ROUTE53_QUERY)
"""The text record formats whose fields the ingest discovers, tried in this order (their prefixes differ)."""


def _record_struct(fmt: VendedFormat, msg: str) -> str:
    names = [f"g{i}" for i in range(1, len(fmt.groups) + 1)]
    return f"regexp_extract({msg}, {sql_literal(fmt.regex)}, [{', '.join(sql_literal(n) for n in names)}])"


def _json_object(fmt: VendedFormat, rec: str) -> str:
    parts = []
    for i, (name, _) in enumerate(fmt.groups, 1):
        if name is None:
            continue
        value = f"{rec}.g{i}"
        if name in fmt.numeric:  # digits: a JSON number; '-': its text
            value = f"CASE WHEN {value} = '-' THEN to_json({value}) ELSE to_json(CAST({value} AS BIGINT)) END"
        parts.append(f"{sql_literal(name)}, {value}")
    return f"CAST(json_object({', '.join(parts)}) AS VARCHAR)"


def _matches(fmt: VendedFormat, msg: str) -> str:
    return f"(starts_with({msg}, {sql_literal(fmt.prefix)}) AND regexp_full_match({msg}, {sql_literal(fmt.regex)}))"


def fields_sql(msg: str) -> str:
    """SQL of the discovered fields of the text message ``msg`` (a VARCHAR expression) as JSON object text, NULL when
    it is no record of :data:`FORMATS`."""
    cases = " ".join(f"WHEN {_matches(f, msg)} THEN {_json_object(f, _record_struct(f, msg))}" for f in FORMATS)
    return f"CASE {cases} END"


def time_sql(msg: str) -> str:
    """SQL of the record's own time (epoch ms, BIGINT) of the text message ``msg``, NULL when it is no record of
    :data:`FORMATS`."""
    cases = []
    for f in FORMATS:
        index = next(i for i, (n, _) in enumerate(f.groups, 1) if n == f.time_field)
        value = f"{_record_struct(f, msg)}.g{index}"
        ms = (f"CAST({value} AS BIGINT) * 1000" if f.time_kind == "epoch_s"
              else f"epoch_ms(TRY_CAST({value} AS TIMESTAMPTZ))")
        cases.append(f"WHEN {_matches(f, msg)} THEN {ms}")
    return f"CASE {' '.join(cases)} END"


_XRAY_TEXT = r"XRAY TraceId: ([^\s]+)\s+SegmentId: ([^\s]+)"
XRAY_TRACE_SQL = (f"CASE WHEN NOT {{isj}} AND contains({{msg}}, 'XRAY TraceId: ') "
                  f"THEN NULLIF(regexp_extract({{msg}}, {sql_literal(_XRAY_TEXT)}, 1), '') "
                  f"WHEN {{platform}} THEN NULLIF(regexp_extract({{tracing}}.value, 'Root=([^;]+)', 1), '') END")
"""SQL template of ``@xrayTraceId``: ``{msg}`` the message, ``{isj}`` whether it is a JSON object, ``{platform}``
whether it is a ``platform.*`` record of the Lambda JSON log format, ``{tracing}`` its ``record.tracing`` struct
(``spanId``, ``value``)."""
XRAY_SEGMENT_SQL = (f"CASE WHEN NOT {{isj}} AND contains({{msg}}, 'XRAY TraceId: ') "
                    f"THEN NULLIF(regexp_extract({{msg}}, {sql_literal(_XRAY_TEXT)}, 2), '') "
                    f"WHEN {{platform}} AND {{tracing}}.value IS NOT NULL THEN {{tracing}}.spanId END")
"""SQL template of ``@xraySegmentId`` (same placeholders as :data:`XRAY_TRACE_SQL`)."""

MACROS = (
    f"CREATE OR REPLACE MACRO iw_vended_fields(m) AS {fields_sql('m')}",
    f"CREATE OR REPLACE MACRO iw_vended_time(m) AS {time_sql('m')}",
)
"""DuckDB macros the ingest's INSERT calls: ``iw_vended_fields(message)`` (:func:`fields_sql`) and
``iw_vended_time(message)`` (:func:`time_sql`)."""
