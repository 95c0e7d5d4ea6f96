"""[fidelity] Commands and functions AWS documents, run offline: each test's expected rows come
from the AWS documentation sentence it quotes (pages under
https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from collector.insights import QueryError, run_query
from tests.support.insights_events import events_connection

T0 = 1767607200000  # 2026-01-05T10:00:00Z
H = 3_600_000


def report(i, billed, max_used, memory=128_000_000):
    return {"timestamp": T0 + i * 1000, "message": f"REPORT RequestId: r{i}", "@type": "REPORT",
            "@requestId": f"r{i}", "@billedDuration": billed, "@maxMemoryUsed": max_used, "@memorySize": memory,
            "@duration": billed - 0.5}


def test_sort_by_as_aws_published_query_definitions_write_it():
    # CWL_QuerySyntax-Sort: "Use sort to display log events in ascending (asc) or descending (desc)
    # order by a specified field." The console's sample "Find the most expensive requests" is written
    # "filter @type = "REPORT" | fields @requestId, @billedDuration | sort by @billedDuration desc".
    con = events_connection([report(0, 100, 1), report(1, 300, 1), report(2, 200, 1)])
    q = 'filter @type = "REPORT" | fields @requestId, @billedDuration | sort by @billedDuration desc'
    assert run_query(con, q).rows == [("r1", 300), ("r2", 200), ("r0", 100)]
    assert run_query(con, q.replace("sort by", "sort")).rows == run_query(con, q).rows


def test_overprovisioned_memory_sample_reuses_aliases_within_one_stats():
    # CWL_QuerySyntax-examples, "Determine the amount of overprovisioned memory." (verbatim, incl. the
    # page's spelling "provisonedMemoryMB")
    q = """filter @type = "REPORT"
    | stats max(@memorySize / 1000 / 1000) as provisonedMemoryMB,
        min(@maxMemoryUsed / 1000 / 1000) as smallestMemoryRequestMB,
        avg(@maxMemoryUsed / 1000 / 1000) as avgMemoryUsedMB,
        max(@maxMemoryUsed / 1000 / 1000) as maxMemoryUsedMB,
        provisonedMemoryMB - maxMemoryUsedMB as overProvisionedMB
"""
    con = events_connection([report(0, 100, 70_000_000), report(1, 100, 90_000_000), report(2, 100, 80_000_000)])
    res = run_query(con, q)
    assert res.columns == ["provisonedMemoryMB", "smallestMemoryRequestMB", "avgMemoryUsedMB", "maxMemoryUsedMB",
                           "overProvisionedMB"]
    assert res.rows == [(128, 70, pytest.approx(80), 90, 38)]  # 128 MB provisioned - 90 MB peak


def test_regex_literal_printed_over_two_lines_as_the_examples_page_prints_it():
    # CWL_QuerySyntax-examples: "Use a regular expression to extract the fields @user2, @method2, and
    # @latency2 from the log field @message and return the average latency for each unique
    # combination of @method2 and @user2." - the page wraps the pattern after "method:(?<method2>.*?),"
    # (the page's lazy "(?<latency2>.*?)" at the very end matches the empty string, so this checks the
    # fields on both sides of the line break, and a greedy variant for the latency)
    q = """parse @message /user=(?<user2>.*?), method:(?<method2>.*?),
    latency := (?<latency2>.*?)/ | stats count(*) as n by method2, user2"""
    con = events_connection([{"timestamp": T0 + i, "message": m} for i, m in enumerate(
        ["user=ann, method:GET, latency := 10", "user=ann, method:GET, latency := 30",
         "user=bob, method:PUT, latency := 7"])])
    assert run_query(con, q).rows == [("GET", "ann", 2), ("PUT", "bob", 1)]
    greedy = q.replace("(?<latency2>.*?)/", "(?<latency2>.*)/").replace("count(*) as n", "avg(latency2) as n")
    assert run_query(con, greedy).rows == [("GET", "ann", 20), ("PUT", "bob", 7)]


def test_bin_offset_shifts_bins_for_a_time_shifted_comparison():
    # CWL_QuerySyntax-timeseries-functions: "Use offset at the end of a stats ... by bin() clause to
    # shift time-series bins by a specified duration. This enables time-shifted comparisons, such as
    # comparing current metrics against the same period in the previous hour or day."
    # Rule where AWS leaves it open (stated in functions._bin): the events one offset earlier, each
    # counted in the bin of (its @timestamp + offset) - the current period's bins.
    events = [{"timestamp": T0 + m * 60_000, "message": "x"} for m in (0, 1, 2, 6)]  # 10:00..10:06
    events += [{"timestamp": T0 + H + m * 60_000, "message": "y"} for m in (0, 7)]  # 11:00, 11:07
    con = events_connection(events)
    start, end = (T0 + H) / 1000, (T0 + 2 * H - 1) / 1000  # the 11:00 hour
    now = run_query(con, "stats count(*) as n by bin(5m) as t", start=start, end=end).to_records_json()
    before = run_query(con, "stats count(*) as n by bin(5m) as t offset 1h", start=start, end=end).to_records_json()
    assert now == [{"t": "2026-01-05 11:00:00.000", "n": 1}, {"t": "2026-01-05 11:05:00.000", "n": 1}]
    assert before == [{"t": "2026-01-05 11:00:00.000", "n": 3}, {"t": "2026-01-05 11:05:00.000", "n": 1}]
    with pytest.raises(QueryError, match="offset is only valid after 'by bin"):
        run_query(con, "stats count(*) by @logStream offset 1h")


def test_json_parse_unnest_as_the_unnest_page_documents():
    # CWL_QuerySyntax-Unnest: 'fields jsonParse(@message) as json_message | unnest json_message.events into
    # event | display event.name' on '{"events": [{"name": "exception"}, {"name": "user action"}]}':
    # "the sample query produces two records in the query result, one with event.name as exception and
    # another with event.name as user action"
    con = events_connection([{"timestamp": T0, "message": json.dumps(
        {"events": [{"name": "exception"}, {"name": "user action"}]})}])
    q = "fields jsonParse(@message) as json_message | unnest json_message.events into event | display event.name"
    assert sorted(run_query(con, q).rows) == [("exception",), ("user action",)]
    # dotted and indexed access into the parsed value (a list element by its 0-based index)
    q = "fields jsonParse(@message) as js | display js.events.1.name, js.events.0.name, js.missing"
    assert run_query(con, q).rows == [("user action", "exception", None)]


def test_unnest_treats_other_types_as_one_item_lists_and_aggregates():
    # CWL_QuerySyntax-Unnest: "Any other types, such as MAP, String and numbers, are treated as a list
    # with one item in unnest." and the aggregation example 'fields jsonParse(trimmedData) as accounts |
    # unnest accounts into account | stats sum(account.droppedSpans) as n by account.accountId | sort n
    # desc | limit 10'. A missing value or an empty list yields no record (rule stated in the catalog).
    docs = [{"trimmedData": json.dumps([{"accountId": "a", "droppedSpans": 2}, {"accountId": "b", "droppedSpans": 5}])},
            {"trimmedData": json.dumps({"accountId": "a", "droppedSpans": 4})},  # a MAP: one item
            {"trimmedData": "[]"}, {"other": 1}]
    con = events_connection([{"timestamp": T0 + i, "message": json.dumps(d)} for i, d in enumerate(docs)])
    q = ("fields jsonParse(trimmedData) as accounts | unnest accounts into account "
         "| stats sum(account.droppedSpans) as n by account.accountId | sort n desc | limit 10")
    assert run_query(con, q).rows == [("a", 6), ("b", 5)]
    assert len(run_query(con, "fields jsonParse(trimmedData) as x | unnest x into y | display y").rows) == 3


def test_filter_index_filters_local_events_like_the_page_describes():
    # CWL_QuerySyntax-FilterIndex: "within the log groups that are indexed, the query skips log events
    # that have an IPaddress field but didn't observe 198.51.100.0 as the value" and "Use the IN operator
    # to expand the results to any of multiple values of the indexed field."
    ips = ["198.51.100.0", "198.51.100.1", "203.0.113.9"]
    con = events_connection([{"timestamp": T0 + i, "message": json.dumps({"IPaddress": ip})}
                             for i, ip in enumerate(ips)] + [{"timestamp": T0 + 9, "message": "{}"}])
    one = run_query(con, 'fields @timestamp, @message | filterIndex IPaddress = "198.51.100.0" | limit 20')
    assert [json.loads(r[1])["IPaddress"] for r in one.rows] == ["198.51.100.0"]
    two = run_query(con, 'fields IPaddress | filterIndex IPaddress in ["198.51.100.0", "198.51.100.1"] | limit 20')
    assert sorted(r[0] for r in two.rows) == ["198.51.100.0", "198.51.100.1"]
    with pytest.raises(QueryError, match="filterIndex takes"):
        run_query(con, "filterIndex IPaddress > 1")


def test_unmask_returns_the_content_unchanged_offline():
    # CWL_QuerySyntax-Unmask: "Use unmask to display all the content of a log event that has some content
    # masked because of a data protection policy." Local files carry no masking, so the content is as is.
    con = events_connection([{"timestamp": T0, "message": '{"email": "a@example.com"}'}])
    assert run_query(con, "fields @timestamp, @message, unmask(@message) as m | display m").rows == [
        ('{"email": "a@example.com"}',)]
    assert run_query(con, "fields email | unmask").rows == [("a@example.com",)]
    assert run_query(con, "fields email | unmask(@message)").rows == [("a@example.com",)]


def test_source_log_groups_selects_among_local_log_groups():
    # CWL_QuerySyntax-Source: "namePrefix runs the query against log groups that have names that start
    # with the string that you specify." / "logGroupClass ... If you omit this, the default of Standard
    # log class is used." / "You can include as many as five prefixes in the list."
    groups = ["/aws/lambda/orders-pay", "/aws/lambda/orders-ship", "/aws/lambda/billing", "123456789012:/ecs/web"]
    con = events_connection([{"timestamp": T0 + i, "message": "m", "@log": g} for i, g in enumerate(groups)])

    def logs(q):
        return sorted(r[0] for r in run_query(con, q + " | fields @log").rows)

    assert logs("SOURCE logGroups(namePrefix: ['/aws/lambda/orders'])") == groups[:2]
    assert logs("SOURCE logGroups(namePrefix: ['/aws/lambda/orders', '/ecs/'])") == sorted([groups[3]] + groups[:2])
    assert logs("SOURCE logGroups()") == sorted(groups)
    assert logs("SOURCE logGroups(class: ['STANDARD'])") == sorted(groups)
    assert logs("SOURCE logGroups(class: ['INFREQUENT_ACCESS'])") == []  # local groups are Standard
    assert logs("SOURCE logGroups(accountIdentifiers: ['123456789012'])") == [groups[3]]
    with pytest.raises(QueryError, match="at most 5 namePrefix"):
        run_query(con, "SOURCE logGroups(namePrefix: ['a','b','c','d','e','f'])")
    with pytest.raises(QueryError, match="SOURCE must be the first command"):
        run_query(con, "fields @log | SOURCE logGroups()")


@pytest.mark.parametrize("fn,ip,arg,expected", [
    # CWL_QuerySyntax-operations-functions, IP address string functions:
    # isValidIp "Returns true if the field is a valid v4 or v6 IP address."
    ("isValidIp", "192.0.2.10", None, 1), ("isValidIp", "2001:db8::1", None, 1), ("isValidIp", "300.1.1.1", None, 0),
    # isValidIpV4 "Returns true if the field is a valid v4 IP address."
    ("isValidIpV4", "192.0.2.10", None, 1), ("isValidIpV4", "2001:db8::1", None, 0),
    # isValidIpV6 "Returns true if the field is a valid v6 IP address."
    ("isValidIpV6", "2001:db8::1", None, 1), ("isValidIpV6", "192.0.2.10", None, 0),
    # isIpInSubnet "Returns true if the field is a valid v4 or v6 IP address within the specified v4 or v6
    # subnet. When you specify the subnet, use CIDR notation such as 192.0.2.0/24 or 2001:db8::/32."
    ("isIpInSubnet", "192.0.2.10", "192.0.2.0/24", 1), ("isIpInSubnet", "2001:db8:1::5", "2001:db8::/32", 1),
    ("isIpInSubnet", "192.0.3.10", "192.0.2.0/24", 0),
    # isIpv4InSubnet "Returns true if the field is a valid v4 IP address within the specified v4 subnet."
    ("isIpv4InSubnet", "192.0.2.10", "192.0.2.0/24", 1), ("isIpv4InSubnet", "2001:db8::1", "2001:db8::/32", 0),
    # isIpv6InSubnet "Returns true if the field is a valid v6 IP address within the specified v6 subnet."
    ("isIpv6InSubnet", "2001:db8::1", "2001:db8::/32", 1), ("isIpv6InSubnet", "2001:db9::1", "2001:db8::/32", 0),
    ("isIpv6InSubnet", "192.0.2.10", "192.0.2.0/24", 0),
])
def test_ip_functions(fn, ip, arg, expected):
    con = events_connection([{"timestamp": T0, "message": json.dumps({"srcAddr": ip})}])
    call = f"{fn}(srcAddr)" if arg is None else f'{fn}(srcAddr, "{arg}")'
    assert run_query(con, f"fields {call} as v").rows == [(expected,)]


def test_vpc_sample_query_with_isipv4insubnet():
    # CWL_QuerySyntax-examples: "Find the top 15 byte transfers for hosts on a given subnet."
    rows = [("192.0.2.1", "10.0.0.1", 100), ("192.0.2.200", "10.0.0.1", 50), ("192.0.2.7", "10.0.0.2", 70),
            ("198.51.100.1", "10.0.0.1", 999)]
    con = events_connection([{"timestamp": T0 + i, "message": json.dumps({"srcAddr": s, "dstAddr": d, "bytes": b})}
                             for i, (s, d, b) in enumerate(rows)])
    q = """filter isIpv4InSubnet(srcAddr, "192.0.2.0/24")
    | stats sum(bytes) as bytesTransferred by dstAddr
    | sort bytesTransferred desc
    | limit 15
"""
    assert run_query(con, q).rows == [("10.0.0.1", 150), ("10.0.0.2", 70)]


def test_json_stringify_round_trips_a_parsed_value():
    # CWL_QuerySyntax-operations-functions: jsonStringify "Returns the JSON string of a MAP or LIST"
    con = events_connection([{"timestamp": T0, "message": '{"a": {"b": [1, 2]}}'}])
    (row,) = run_query(con, "fields jsonStringify(jsonParse(@message)) as s").rows
    assert json.loads(row[0]) == {"a": {"b": [1, 2]}}


@pytest.mark.parametrize("query,name", [
    ("pattern @message", "pattern"), ("fields a | diff", "diff"), ("anomaly @duration", "anomaly"),
    ("stats rate(@duration, 5m) by bin(5m)", "rate"), ("stats histogram(@duration, 10)", "histogram"),
])
def test_documented_but_unsupported_items_are_refused_in_one_line_naming_them(query, name):
    con = events_connection([{"timestamp": T0, "message": "x"}])
    with pytest.raises(QueryError) as info:
        run_query(con, query)
    assert f"unsupported {'function' if name in ('rate', 'histogram') else 'command'} '{name}': " in info.value.message
    assert "\n" not in str(info.value) and info.value.line == 1


def test_earliest_timestamp_types_stay_timestamps_after_unnest():
    con = events_connection([{"timestamp": T0, "message": '{"l": [1, 2, 3]}'}])
    res = run_query(con, "fields jsonParse(@message) as js | unnest js.l into x | stats count(*) as n, "
                         "min(@timestamp) as first")
    assert res.rows == [(3, datetime(2026, 1, 5, 10, 0, tzinfo=UTC))]
