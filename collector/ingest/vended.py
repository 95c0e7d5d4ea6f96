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

Everything is SQL over the message that the ingest's INSERT embeds: detection costs a ``starts_with`` per text line,
each record is matched once (:func:`words_sql`), and one regular expression per format is the one definition of its
shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from collector.insights.sql import sql_literal

__all__ = ["FORMATS", "XRAY_SEGMENT_SQL", "XRAY_TRACE_SQL", "VendedFormat", "fields_sql", "time_sql", "words_sql"]


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
        """RE2 of a whole record (anchored; one group per value)."""
        return "^" + " ".join(f"(?:{r})" for _, r in self.groups) + "$"


_NUMBER = "0|[1-9][0-9]{0,17}"  # a JSON number as written (no leading zero), within BIGINT
_NUMBER_OR_DASH = f"{_NUMBER}|-"
_ADDRESS = "[0-9a-fA-F.:]+|-"
VPC_FLOW = VendedFormat(
    "vpc-flow-log", "2 ",
    (("version", "2"), ("accountId", "[0-9]{12}|unknown"), ("interfaceId", "eni-[0-9a-f]+"),
     ("srcAddr", _ADDRESS), ("dstAddr", _ADDRESS), ("srcPort", _NUMBER_OR_DASH), ("dstPort", _NUMBER_OR_DASH),
     ("protocol", _NUMBER_OR_DASH), ("packets", _NUMBER_OR_DASH), ("bytes", _NUMBER_OR_DASH), ("startTime", _NUMBER),
     ("endTime", _NUMBER), ("action", "ACCEPT|REJECT|-"), ("logStatus", "OK|NODATA|SKIPDATA")),
    frozenset({"version", "srcPort", "dstPort", "protocol", "packets", "bytes", "startTime", "endTime"}),
    "startTime", "epoch_s")
ROUTE53_QUERY = VendedFormat(
    "route53-query-log", "1.0 ",
    (("version", r"1\.0"), ("queryTimestamp", r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z"), ("hostZoneId", "Z[0-9A-Z]+"),
     ("queryName", r'[^\x00-\x20"\\\x7f]+'), ("queryType", "[A-Z0-9]+"), ("responseCode", "[A-Z]+"),
     ("protocol", "UDP|TCP"), ("edgeLocation", "[A-Z0-9-]+"), ("resolverIp", "[0-9a-fA-F.:]+"), (None, r"\S+")),
    frozenset(), "queryTimestamp", "iso")
FORMATS: tuple[VendedFormat, ...] = (VPC_FLOW, ROUTE53_QUERY)
"""The text record formats whose fields the ingest discovers, tried in this order (their prefixes differ). Every
value's pattern excludes ``"``, ``\\``, space and control characters, so a value is JSON text once quoted (a record
with such a character in its query name is not recognised)."""


def _json_object(fmt: VendedFormat, words: str) -> str:
    """SQL of a record's discovered fields as JSON object text, from ``words``, its list of space-separated values
    (JSON text by construction: every value's pattern excludes quotes, backslashes, space and control characters).
    One ``format`` call: about half the time of concatenating the pieces."""
    keys: list[str] = []
    values: list[str] = []
    for i, (name, _) in enumerate(fmt.groups, 1):
        if name is None:
            continue
        value = f"{words}[{i}]"
        if name in fmt.numeric:  # digits: a JSON number; '-': its text
            keys.append(f'"{name}":{{}}')
            values.append(f"CASE WHEN {value} = '-' THEN '\"-\"' ELSE {value} END")
        else:
            keys.append(f'"{name}":"{{}}"')
            values.append(value)
    return f"format({sql_literal('{{' + ','.join(keys) + '}}')}, {', '.join(values)})"


def _matches(fmt: VendedFormat, msg: str) -> str:
    return f"(starts_with({msg}, {sql_literal(fmt.prefix)}) AND regexp_full_match({msg}, {sql_literal(fmt.regex)}))"


def words_sql(msg: str) -> str:
    """SQL of the words (``string_split`` at spaces) of the text message ``msg`` (a VARCHAR expression) when it is a
    record of :data:`FORMATS`, else NULL: one regular-expression match per line that starts like a record. The
    ingest computes it as a column, so that :func:`fields_sql` and :func:`time_sql` read the values without
    matching or splitting again."""
    return f"CASE WHEN {' OR '.join(_matches(f, msg) for f in FORMATS)} THEN string_split({msg}, ' ') END"


def fields_sql(msg: str, words: str) -> str:
    """SQL of the discovered fields (JSON object text) of the message ``msg`` whose :func:`words_sql` is ``words``;
    NULL when it is no record."""
    cases = " ".join(f"WHEN starts_with({msg}, {sql_literal(f.prefix)}) THEN {_json_object(f, words)}" for f in FORMATS)
    return f"CASE WHEN {words} IS NOT NULL THEN CASE {cases} END END"


def time_sql(msg: str, words: str) -> str:
    """SQL of the record's own time (epoch ms, BIGINT) of the message ``msg`` whose :func:`words_sql` is ``words``;
    NULL when it is no record."""
    cases = []
    for f in FORMATS:
        value = f"{words}[{next(i for i, (n, _) in enumerate(f.groups, 1) if n == f.time_field)}]"
        ms = (f"CAST({value} AS BIGINT) * 1000" if f.time_kind == "epoch_s"
              else f"epoch_ms(TRY_CAST({value} AS TIMESTAMPTZ))")
        cases.append(f"WHEN starts_with({msg}, {sql_literal(f.prefix)}) THEN {ms}")
    return f"CASE WHEN {words} IS NOT NULL THEN CASE {' '.join(cases)} END END"


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
