"""Console links: the Logs Insights fragment is byte-identical to one the console produced, round-trips for any
query and log group (hypothesis), and the log-group / alarm links use the console's double / single encoding."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alarms.links import alarm_url, decode_insights_url, log_group_url, logs_insights_url, runbook_url

# A URL the CloudWatch console wrote (quoted in "Generate AWS Logs Insights URL with query and search criteria"),
# up to the end of its query text: end/start absolute, tz, editorString.
CONSOLE_PREFIX = (
    "https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1#logsV2:logs-insights"
    "$3FqueryDetail$3D$257E$2528end$257E$25272021-07-18T20*3a59*3a59.000Z$257Estart$257E$25272021-07-15T21*3a00"
    "*3a00.000Z$257EtimeType$257E$2527ABSOLUTE$257Etz$257E$2527"
)
CONSOLE_QUERY = ("$257EeditorString$257E$2527fields*20*40timestamp*2c*20*40message*0a*7c*20sort*20*40timestamp*20desc"
                 "*0a*7c*20filter*20*40message*20*3d*7e*20*22Exception*22*0a*7c*20limit*20200$257EisLiveTail$257Efalse")


def test_fragment_matches_what_the_console_writes():
    query = 'fields @timestamp, @message\n| sort @timestamp desc\n| filter @message =~ "Exception"\n| limit 200'
    # 2021-07-15T21:00:00Z and 2021-07-18T20:59:59Z in epoch seconds, computed by hand
    url = logs_insights_url(query, ["/aws/lambda/f"], "eu-west-1", start_s=1_626_382_800, end_s=1_626_641_999)
    assert url.startswith(CONSOLE_PREFIX)
    # the console's own sample says tz Local; ours says UTC, the rest of the object is the same bytes
    assert url[len(CONSOLE_PREFIX):].startswith("UTC" + CONSOLE_QUERY)
    assert url.endswith("$257Esource$257E$2528$257E$2527*2faws*2flambda*2ff$2529$2529")


def test_relative_range_and_several_log_groups():
    url = logs_insights_url("stats count(*)", ["/aws/lambda/a", "/aws/lambda/b"], "us-east-1", relative_s=3600)
    assert decode_insights_url(url) == {"end": 0, "start": -3600, "timeType": "RELATIVE", "unit": "seconds",
                                        "editorString": "stats count(*)", "isLiveTail": False,
                                        "source": ["/aws/lambda/a", "/aws/lambda/b"]}


@settings(max_examples=300, deadline=None)
@given(query=st.text(min_size=1, max_size=200),
       groups=st.lists(st.from_regex(r"[A-Za-z0-9_./#-]{1,60}", fullmatch=True), min_size=1, max_size=4),
       start=st.integers(0, 2_000_000_000), span=st.integers(0, 30 * 86_400))
def test_any_query_round_trips(query, groups, start, span):
    url = logs_insights_url(query, groups, "ap-southeast-2", start_s=start, end_s=start + span)
    got = decode_insights_url(url)
    assert got["editorString"] == query and got["source"] == groups and got["timeType"] == "ABSOLUTE"
    # the fragment holds no character a URL fragment cannot carry unescaped
    frag = url.split("#", 1)[1]
    assert all(c.isalnum() or c in "$*-.:_" for c in frag), frag


def test_log_group_link_is_percent_encoded_twice_with_dollar():
    url = log_group_url("/aws/lambda/orders#1", "us-east-1")
    assert url == ("https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1"
                   "#logsV2:log-groups/log-group/$252Faws$252Flambda$252Forders$25231")
    tail = url.rsplit("/", 1)[1]
    assert unquote(unquote(tail.replace("$", "%"))) == "/aws/lambda/orders#1"


def test_alarm_link_and_runbook_section():
    assert alarm_url("shop orders/Poison", None) == \
        "https://console.aws.amazon.com/cloudwatch/home#alarmsV2:alarm/shop%20orders%2FPoison"
    assert runbook_url("https://wiki/x", "payload_conflict") == "https://wiki/x#runbook-payload-conflict"


def test_bad_ranges_are_errors():
    with pytest.raises(ValueError, match="at least one log group"):
        logs_insights_url("q", [])
    with pytest.raises(ValueError, match="before start"):
        logs_insights_url("q", ["g"], start_s=10, end_s=5)
    with pytest.raises(ValueError, match="relative_s"):
        logs_insights_url("q", ["g"], relative_s=0)
