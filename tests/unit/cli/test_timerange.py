"""idemwatch.timerange: the one time/duration parser (values checked against datetime arithmetic by hand)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from idemwatch.timerange import (
    MAX_EPOCH_S,
    TimeParseError,
    TimeRangeError,
    check_range,
    format_utc,
    parse_duration,
    parse_time,
    parse_time_full,
)

NOW = 1_767_607_200.0  # 2026-01-05T10:00:00Z


@pytest.mark.parametrize(("text", "seconds"), [
    ("90s", 90), ("15m", 900), ("24h", 86_400), ("7d", 604_800), ("1w", 604_800), ("1.5h", 5_400), (" 2H ", 7_200),
    ("0s", 0),
])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "15", "15 minutes", "1y", "1mo", "-5m", "m", "1e3s", "15m ago"])
def test_bad_durations_are_refused(text):
    with pytest.raises(TimeParseError, match="not a duration"):
        parse_duration(text)


@pytest.mark.parametrize(("text", "expected", "assumed"), [
    ("2026-01-05T10:00:00Z", NOW, False),
    ("2026-01-05T10:00:00z", NOW, False),
    ("2026-01-05T11:00:00+01:00", NOW, False),
    ("2026-01-05T04:30:00-05:30", NOW, False),
    ("2026-01-05T10:00:00.250Z", NOW + 0.25, False),
    ("1767607200", NOW, False),
    ("1767607200.5", NOW + 0.5, False),
    ("2026-01-05 10:00", NOW, True),       # naive: read as UTC, and said so
    ("2026-01-05", NOW - 10 * 3600, True),
    ("24h", NOW - 86_400, False),           # relative: before `now`
    ("15m", NOW - 900, False),
])
def test_times(text, expected, assumed):
    p = parse_time_full(text, now=NOW)
    assert p.epoch_s == pytest.approx(expected, abs=1e-6)
    assert p.assumed_utc is assumed
    assert parse_time(text, now=NOW) == p.epoch_s


@pytest.mark.parametrize(("text", "match"), [
    ("yesterday", "expected epoch seconds, ISO-8601 or a duration"),
    ("", "empty time"),
    ("1767607200000", "milliseconds"),     # epoch ms typed as seconds
    ("-5", "between 0"),
    ("2026-13-01T00:00:00Z", "expected epoch seconds"),
])
def test_bad_times_are_refused(text, match):
    with pytest.raises(TimeParseError, match=match):
        parse_time(text, now=NOW)


def test_relative_time_defaults_to_the_clock():
    import time

    before = time.time()
    t = parse_time("1h")
    assert before - 3600 - 1 <= t <= time.time() - 3600


@given(st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(9998, 12, 31)),
       st.integers(min_value=-14 * 60, max_value=14 * 60))
def test_iso_with_any_offset_matches_datetime(naive, offset_min):
    """Oracle: datetime's own aware arithmetic. Every offset Python can print parses back to the same instant."""
    aware = naive.replace(tzinfo=timezone(timedelta(minutes=offset_min)))
    p = parse_time_full(aware.isoformat())
    assert not p.assumed_utc
    assert p.epoch_s == pytest.approx(aware.timestamp(), abs=1e-6)


@given(st.integers(min_value=0, max_value=MAX_EPOCH_S))
def test_epoch_seconds_round_trip_through_format_utc(s):
    assert parse_time(format_utc(s)) == s
    assert parse_time(str(s)) == s


def test_format_utc():
    assert format_utc(NOW) == "2026-01-05T10:00:00Z"
    assert format_utc(NOW + 0.25) == "2026-01-05T10:00:00.250Z"
    assert datetime.fromtimestamp(NOW, UTC).isoformat() == "2026-01-05T10:00:00+00:00"


def test_ranges():
    check_range(NOW, NOW + 1)
    check_range(None, NOW)
    check_range(NOW, None)
    with pytest.raises(TimeRangeError, match=r"reversed .*2026-01-05T10:00:01Z \.\. 2026-01-05T10:00:00Z"):
        check_range(NOW + 1, NOW)
    with pytest.raises(TimeRangeError, match="empty"):
        check_range(NOW, NOW)
