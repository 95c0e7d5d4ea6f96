"""The SQS adapter on odd attribute values (decimal strings with spaces, float text, ints, bools, junk), and a
malformed record becoming a generic record with its reason."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emitter.adapters import _int, adapt_event
from emitter.contract import EventSource

NOW = 1_700_000_010_000


def _msg(**attrs):
    return {"messageId": "m-1", "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:1:orders",
            "attributes": attrs, "messageAttributes": {}}


@pytest.mark.parametrize(("value", "as_int"), [
    ("1700000000000", 1_700_000_000_000),  # the usual decimal string
    (" 1700000000000 ", 1_700_000_000_000),  # int() strips whitespace; so did the general helper
    ("1.7e12", 1_700_000_000_000),  # float text: int() fails, the general helper parses it
    (1_700_000_000_000, 1_700_000_000_000),  # an int (hand-made events)
    (1.7e12, 1_700_000_000_000),
    (True, None),  # a bool is not a number here
    (None, None),
    ("soon", None),
])
def test_odd_timestamps(value, as_int):
    (rec,), errors = adapt_event({"Records": [_msg(SentTimestamp=value, ApproximateFirstReceiveTimestamp=value,
                                                   ApproximateReceiveCount="3")]}, NOW)
    assert errors == []
    assert rec.event_source is EventSource.SQS
    assert rec.sent_at_ms == as_int
    assert rec.record_age_ms == (None if as_int is None else NOW - as_int)
    assert rec.details.get("first_receive_at_ms") == as_int
    assert rec.attempt == 3
    assert rec.details["queue"] == "orders"


@pytest.mark.parametrize(("count", "attempt"), [("1", 1), ("2", 2), ("0", 1), ("-4", 1), ("2.0", 2), (None, 1),
                                                ("x", 1), (True, 1), (5, 5)])
def test_attempt_is_at_least_one(count, attempt):
    (rec,), errors = adapt_event({"Records": [_msg(SentTimestamp="1", ApproximateFirstReceiveTimestamp="1",
                                                   ApproximateReceiveCount=count)]}, NOW)
    assert errors == [] and rec.attempt == attempt


def test_clock_skew_gives_age_zero():
    (rec,), _ = adapt_event({"Records": [_msg(SentTimestamp=str(NOW + 5000), ApproximateFirstReceiveTimestamp="1",
                                              ApproximateReceiveCount="1")]}, NOW)
    assert rec.record_age_ms == 0 and rec.sent_at_ms == NOW + 5000


def test_malformed_record_is_generic_with_reason():
    bad = _msg()
    bad["attributes"] = ["not", "a", "dict"]
    too_long = _msg(SentTimestamp="9" * 5000, ApproximateFirstReceiveTimestamp="1", ApproximateReceiveCount="1")
    recs, errors = adapt_event({"Records": [bad, too_long, _msg(SentTimestamp="1")]}, NOW)
    assert [r.event_source for r in recs] == [EventSource.SQS] * 3
    assert errors == ["sqs record not understood (AttributeError)", "sqs record not understood (ValueError)"]
    assert all(r.sent_at_ms is None and "queue" not in r.details for r in recs[:2])  # generic: no SQS fields
    assert recs[2].event_id == "m-1" and recs[2].sent_at_ms == 1 and recs[2].attempt == 1
    assert "first_receive_at_ms" not in recs[2].details


_ATTRIBUTE = st.one_of(
    st.integers(min_value=-10**20, max_value=10**20).map(str),
    st.text(alphabet=" +-_.eE0123456789\u0661\u0662x", max_size=12),
    st.integers(min_value=-10**15, max_value=10**15), st.floats(allow_nan=True), st.booleans(), st.none(),
)


@settings(max_examples=300, deadline=None)
@given(sent=_ATTRIBUTE, first=_ATTRIBUTE, count=_ATTRIBUTE)
def test_three_attributes_read_by_the_one_int_rule(sent, first, count):
    """Whatever the attributes hold, each is read as adapters._int reads it (the adapter reads three decimal strings
    with int() first: it must give the same numbers, or the same error)."""
    try:
        want = (_int(sent), _int(first), _int(count))
    except (ValueError, OverflowError) as exc:
        want = type(exc)
    (rec,), errors = adapt_event({"Records": [_msg(SentTimestamp=sent, ApproximateFirstReceiveTimestamp=first,
                                                   ApproximateReceiveCount=count)]}, NOW)
    if isinstance(want, type):
        assert errors == [f"sqs record not understood ({want.__name__})"]
        return
    assert errors == []
    s, f, c = want
    assert rec.sent_at_ms == s
    assert rec.details.get("first_receive_at_ms") == f
    assert rec.attempt == (c if c is not None and c > 1 else 1)
