"""[fidelity-vended] Fields of the text logs AWS writes (collector.ingest.vended), as the ingest discovers them, and the
warning about fields no scanned event has (collector.insights.field_check).

Expected values come from the records themselves: an independent oracle splits each record at its spaces."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.ingest import EventStore
from collector.insights import missing_fields, run_query
from tests.support.insights_events import events_connection

T0 = 1767607200000
VPC_NAMES = ["version", "accountId", "interfaceId", "srcAddr", "dstAddr", "srcPort", "dstPort", "protocol", "packets",
             "bytes", "startTime", "endTime", "action", "logStatus"]
VPC_NUMBERS = {"version", "srcPort", "dstPort", "protocol", "packets", "bytes", "startTime", "endTime"}
R53_NAMES = ["version", "queryTimestamp", "hostZoneId", "queryName", "queryType", "responseCode", "protocol",
             "edgeLocation", "resolverIp"]


def _store(lines: list[str], group: str = "/vpc/flow") -> EventStore:
    store = EventStore()
    store.ingest_events([{"timestamp": T0 + i, "message": m} for i, m in enumerate(lines)], group)
    return store


def _discovered(store: EventStore) -> list[dict | None]:
    rows = store.connection.execute('SELECT "@json" FROM events ORDER BY "@seq"').fetchall()
    return [None if r[0] is None else json.loads(r[0]) for r in rows]


def _vpc_oracle(line: str) -> dict:
    return {n: (int(v) if n in VPC_NUMBERS and v != "-" else v) for n, v in zip(VPC_NAMES, line.split(" "))}


def test_default_vpc_records_get_every_documented_field_typed():
    lines = [("2 123456789010 eni-1235b8ca123456789 172.31.16.139 172.31.16.21 20641 22 6 20 4249 1418530010 "
             "1418530070 ACCEPT OK"),
             "2 unknown eni-1235b8ca123456789 2001:db8::1 2001:db8::2 0 0 58 1 64 1418530010 1418530070 REJECT OK",
             "2 123456789010 eni-11111111aaaaaaaaa - - - - - - - 1431280876 1431280934 - SKIPDATA"]
    assert _discovered(_store(lines)) == [_vpc_oracle(x) for x in lines]


@pytest.mark.parametrize("line", [
    # a custom format (the knowledge-center article's): not discovered, its queries parse the message
    ("123456789012 vpc-0b69ce8d04278ddd subnet-002bdfe1767d0ddb0 eni-0435cbb62960f230e - 172.31.0.104 55125 "
    "172.31.12.178 443 6 3 180 ACCEPT OK 1767607200 1767607260 ingress - 2 172.31.0.104 - 172.31.12.178 - us-east-1 "
    "use1-az6 - -"),
    "3 vpc-1 subnet-1 i-1 eni-1 2 10.0.0.1 10.0.0.2 443 80 6",  # a version-3 custom format
    "2 errors in batch 7 of 12",  # text that only starts like a record
    "2 123456789010 eni-1235b8ca123456789 172.31.16.139 172.31.16.21 020641 22 6 20 4249 1 2 ACCEPT OK",  # 020641
    "2 123456789010 eni-1235b8ca123456789 172.31.16.139 172.31.16.21 20641 22 6 20 4249 1 2 ACCEPT OK extra",
    "2  123456789010 eni-1235b8ca123456789 a b 1 2 6 20 4249 1 2 ACCEPT OK",  # two spaces
    '1.0 2017-12-13T08:16:02.130Z Z123412341234 ex"ample.com A NOERROR UDP FRA6 192.168.1.1 -',  # a quote
    "1.0 2017-12-13T08:16:02.130Z Z123412341234 ex\x01ample.com A NOERROR UDP FRA6 192.168.1.1 -",  # a control char
    "1.0 2017-12-13T08:16:02.130Z Z123412341234 example.com A NOERROR QUIC FRA6 192.168.1.1 -",
])
def test_lines_that_are_not_default_records_get_no_fields(line):
    assert _discovered(_store([line])) == [None]


def test_route53_records_and_their_time_without_a_cloudwatch_timestamp(tmp_path):
    lines = ["1.0 2017-12-13T08:16:02.130Z Z123412341234 example.com A NOERROR UDP FRA6 192.168.1.1 -",
             ("1.0 2017-12-13T08:15:50.235Z Z123412341234 example.com AAAA NOERROR TCP IAD12 192.168.3.1 "
             "192.168.222.0/24")]
    want = [dict(zip(R53_NAMES, x.split(" "))) for x in lines]  # the EDNS client subnet is not discovered
    assert _discovered(_store(lines)) == want
    path = tmp_path / "route53.log"  # a file of bare records: each event's time is its query timestamp
    path.write_text("\n".join(lines + [("2 123456789010 eni-1 10.0.0.1 10.0.0.2 1 2 6 1 9 1767607200 1767607260 "
                                       "ACCEPT OK")]) + "\n")
    store = EventStore()
    report = store.ingest_path(path)
    assert "timestamp_from_file_mtime" not in report.by_reason
    got = run_query(store, "fields @timestamp, coalesce(queryName, srcAddr) as what | sort @timestamp asc")
    assert got.to_records_json() == [{"@timestamp": "2017-12-13 08:15:50.235", "what": "example.com"},
                                     {"@timestamp": "2017-12-13 08:16:02.130", "what": "example.com"},
                                     {"@timestamp": "2026-01-05 10:00:00.000", "what": "10.0.0.1"}]


def test_xray_fields_of_text_and_json_lambda_logs_and_none_elsewhere():
    lines = [("REPORT RequestId: r1\tDuration: 2.00 ms\tBilled Duration: 2 ms\tMemory Size: 128 MB\tMax Memory Used: "
             "40 MB\t\nXRAY TraceId: 1-aaaa-bbbb\tSegmentId: ccdd\tSampled: true\t"),
             json.dumps({"time": "2026-01-05T10:00:00.000Z", "type": "platform.start", "record": {
                 "requestId": "r2", "tracing": {"spanId": "ee11", "type": "X-Amzn-Trace-Id",
                                                "value": "Root=1-ffff-0000;Parent=9;Sampled=1"}}}),
             json.dumps({"message": "XRAY TraceId: 1-not-a-lambda-line", "record": {"tracing": {"value": "Root=1-x"}}}),
             "REPORT RequestId: r3\tDuration: 2.00 ms"]
    got = run_query(_store(lines, "/aws/lambda/f"), "fields @requestId, @xrayTraceId, @xraySegmentId | "
                                                    "sort @timestamp asc")
    assert got.rows == [("r1", "1-aaaa-bbbb", "ccdd"), ("r2", "1-ffff-0000", "ee11"), (None, None, None),
                        ("r3", None, None)]


_TOKEN = st.sampled_from(["2", "1.0", "-", "0", "7", "022", "123456789010", "unknown", "eni-0a1", "eni-XYZ", "\x1f",
                          "é.example.com", "a\x7fb",
                          "10.0.0.1", "2001:db8::1", "ACCEPT", "REJECT", "OK", "NODATA", "SKIPDATA", "x\"y", "a\\b",
                          "2017-12-13T08:16:02.130Z", "Z12", "example.com", "A", "NOERROR", "UDP", "FRA6", "\t", "",
                          "99999999999999999999", "{", "}"])


_FUZZ_STORE: list[EventStore] = []  # one store for every example: opening one costs more than ingesting a line


def _fuzz_discovered(lines: list[str]) -> list[dict | None]:
    if not _FUZZ_STORE:
        _FUZZ_STORE.append(EventStore())
    store = _FUZZ_STORE[0]
    first = store.next_seq
    store.ingest_events([{"timestamp": T0 + i, "message": m} for i, m in enumerate(lines)], "/fuzz")
    rows = store.connection.execute('SELECT "@message", "@json" FROM events WHERE "@seq" >= $1 ORDER BY "@seq"',
                                    [first]).fetchall()
    assert [r[0] for r in rows] == [ln for ln in lines if ln.strip()]  # blank lines are no events
    return [None if r[1] is None else json.loads(r[1]) for r in rows]


def _fuzz_check(lines: list[str]) -> None:
    """Any line: no fields, or a JSON object whose values are the line's words (the VPC or Route 53 oracle) - never
    invalid JSON, which would fail every query of the store."""
    for line, got in zip([ln for ln in lines if ln.strip()], _fuzz_discovered(lines)):
        if got is None:
            continue
        if "logStatus" in got:
            assert got == _vpc_oracle(line)
        elif "queryName" in got:
            assert got == dict(zip(R53_NAMES, line.split(" ")))
        else:  # a JSON object line, or its first embedded JSON object (the Lambda rule of the same AWS page)
            assert got == _first_json_object(line)


def _first_json_object(line: str) -> dict | None:
    decoder = json.JSONDecoder()
    at = line.find("{")
    while at >= 0:
        try:
            doc = decoder.raw_decode(line, at)[0]
        except ValueError:
            at = line.find("{", at + 1)
            continue
        return doc if isinstance(doc, dict) else None
    return None


_LINES = st.lists(st.lists(_TOKEN, min_size=1, max_size=16).map(" ".join), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_LINES)
def test_fuzz_discovered_fields_are_valid_json_and_the_records_own_words(lines):
    _fuzz_check(lines)


@pytest.mark.slow
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_LINES)
def test_fuzz_discovered_fields_many_examples(lines):
    _fuzz_check(lines)


# ----------------------------------------------------------------------------- missing fields
DOCS = [{"outcome": "succeeded", "ctx": {"items": [{"sku": "a"}]}, "@example.com": 1}, {"outcome": "claimed"}]


@pytest.fixture(scope="module")
def con():
    return events_connection([{"timestamp": T0 + i, "message": json.dumps(d)} for i, d in enumerate(DOCS)])


@pytest.mark.parametrize("query,want", [
    ("stats count(*) by outcom", [("outcom", 1, 19, True, "outcome")]),
    ("fields ctx.items[0].sku, ctx.items.0.qty", [("ctx.items.0.qty", 1, 26, True, "ctx.items.0.sku")]),
    ("filter @requestid = 'x'", [("@requestid", 1, 8, False, "@requestId")]),
    ("filter @type = 'REPORT'", [("@type", 1, 8, True, None)]),  # a system field no event has a value of
    ("stats count(*) as n by outcome\n| filter outcom > 0", [("outcom", 2, 10, False, "outcome")]),
    ("fields @@example.com, @@other", [("@@other", 1, 23, True, None)]),
    # fields the query makes are never reported; reads of one field are reported once, at the first
    ("parse @message '\"outcome\":\"*\"' as o | fields o as p | filter p = 'x' or nope = 1 or nope = 2",
     [("nope", 1, 73, True, None)]),
    ("fields outcome, ctx.items.0.sku | stats count(*) by outcome", []),
])
def test_missing_fields_names_each_with_its_position_and_the_closest_present_name(con, query, want):
    got = [(m.name, m.line, m.column, m.available, m.suggestion) for m in missing_fields(con, query)]
    assert got == want
    for m in missing_fields(con, query):
        assert m.message.startswith(f"field '{m.name}' (line {m.line}, column {m.column}) ")
        assert "\n" not in m.message


def test_missing_fields_checks_the_window_and_the_sides_of_a_join(con):
    assert missing_fields(con, "fields nope", start=0, end=1) == []  # no event in the window: nothing to compare
    q = "join left=l right=r where l.outcome = r.outcome (fields outcome) | fields r.ctx.items.0.sku, r.nope"
    assert [(m.name, m.suggestion) for m in missing_fields(con, q)] == [("nope", None)]
    # the result is what the query gives, with or without the check
    assert run_query(con, "stats count(*) as n by outcom").rows == [(None, 2)]
