"""CloudWatch alarm evaluation: every row of the user guide's two example tables, plus timelines.

Oracle: Amazon CloudWatch User Guide, "How alarm state is evaluated when data is missing"
(tables for 3-of-3 and 2-of-3 alarms over a 5-datapoint evaluation range; 0 = not breaching,
X = breaching, - = missing). "Retain current state" is checked with two different current states.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alarms.evaluation import classify, evaluate_states, evaluate_window
from alarms.types import AlarmState, TreatMissingData
from tests.support.alarm_evaluation import evaluate_states_reference

A, O, I, KEEP = AlarmState.ALARM, AlarmState.OK, AlarmState.INSUFFICIENT_DATA, "keep"
T = TreatMissingData

# (points, datapoints_to_alarm, evaluation_periods, MISSING, IGNORE, BREACHING, NOT BREACHING)
GUIDE_ROWS = [
    ("0-X-X", 3, 3, O, O, O, O),
    ("0----", 3, 3, O, O, O, O),
    ("-----", 3, 3, I, KEEP, A, O),
    ("0XX-X", 3, 3, A, A, A, A),
    ("----X", 3, 3, I, KEEP, A, O),
    ("X----", 3, 3, A, KEEP, A, O),
    ("0-X-X", 2, 3, A, A, A, A),
    ("00X0X", 2, 3, A, A, A, A),
    ("0-X--", 2, 3, O, O, A, O),
    ("----0", 2, 3, O, O, A, O),
    ("----X", 2, 3, I, KEEP, A, O),
]


@pytest.mark.parametrize("points,m,n,missing,ignore,breaching,not_breaching", GUIDE_ROWS)
def test_user_guide_tables(points, m, n, missing, ignore, breaching, not_breaching):
    for treat, want in ((T.MISSING, missing), (T.IGNORE, ignore), (T.BREACHING, breaching),
                        (T.NOT_BREACHING, not_breaching)):
        for current in (AlarmState.OK, AlarmState.ALARM):
            got = evaluate_window(points, n, m, treat, current)
            assert got == (current if want == KEEP else want), (points, m, n, treat, current)


def test_datapoints_to_alarm_above_evaluation_periods_is_rejected():
    with pytest.raises(ValueError, match="DatapointsToAlarm"):
        evaluate_window("XXXXX", 2, 3, T.MISSING)


def test_classify_marks_each_comparison():
    assert classify([0, 1, None, 5.0, float("nan")], 1, "GreaterThanThreshold") == "00-X-"
    assert classify([0, 1, 2], 1, "GreaterThanOrEqualToThreshold") == "0XX"
    assert classify([0, 1, 2], 1, "LessThanThreshold") == "X00"
    assert classify([0, 1, 2], 1, "LessThanOrEqualToThreshold") == "XX0"


# A hand-computed timeline: Sum > 0, 2 of 3, evaluation range 5 (= 3 + 2).
#   period:   0    1    2    3     4     5     6     7     8     9
#   value:    -    1    -    2     -     -     0     -     -     -
#   mark:     -    X    -    X     -     -     0     -     -     -
VALUES = [None, 1, None, 2, None, None, 0, None, None, None]


def _timeline(treat):
    return evaluate_states(VALUES, threshold=0, comparison="GreaterThanThreshold", evaluation_periods=3,
                           datapoints_to_alarm=2, treat_missing=treat)


def test_timeline_not_breaching():
    # Windows (5 periods, padded with '-'): p0 ----- ; p1 ----X ; p2 ---X- (1 real X + 2 filled OK -> OK);
    # p3 --X-X (2 real X + 1 filled OK -> ALARM); p4 -X-X- ; p5 X-X-- (ALARM);
    # p6 = periods 2..6 = -X--0 -> real X,0 + 1 filled OK -> 1 breaching < 2 -> OK.
    # p7 periods 3..7 = X - - 0 - -> OK ; p8 - - 0 - - -> OK ; p9 - 0 - - - -> OK.
    assert _timeline(T.NOT_BREACHING) == [O, O, O, A, A, A, O, O, O, O]


def test_timeline_breaching():
    # p0 '-----' -> 3 filled X -> ALARM; p1 '----X' -> X + 2 filled -> ALARM; ... p6 '-X--0': X,0 + 1 filled X -> 2 -> ALARM
    # p9 '-0---': 0 + 2 filled X -> ALARM; p8 '--0--' likewise; p7 'X--0-': X,0 + 1 -> ALARM.
    assert _timeline(T.BREACHING) == [A] * 10


def test_timeline_missing():
    # p0 no real -> INSUFFICIENT; p1 '----X': only X, oldest evaluated slot is a filled one -> INSUFFICIENT;
    # p2 '---X-': fill 2 most recent missing slots = 2,4; oldest evaluated = slot 2 (filled) -> INSUFFICIENT;
    # p3 '--X-X' -> 2 breaching -> ALARM; p4 '-X-X-' -> ALARM; p5 'X-X--' -> ALARM;
    # p6 '-X--0' -> real X,0: 1 < 2 breaching, a real OK -> OK; p7..p9 contain the real 0 -> OK.
    assert _timeline(T.MISSING) == [I, I, I, A, A, A, O, O, O, O]


def test_timeline_ignore_keeps_state_without_evidence():
    # Same as missing, but the states without a decision keep the previous one (initially INSUFFICIENT_DATA).
    assert _timeline(T.IGNORE) == [I, I, I, A, A, A, O, O, O, O]
    # After an ALARM, a stretch with only one breaching real point keeps ALARM under ignore...
    vals = [1, 1, 1, None, None, None, None, None]
    got = evaluate_states(vals, threshold=0, comparison="GreaterThanThreshold", evaluation_periods=3,
                          datapoints_to_alarm=3, treat_missing=T.IGNORE)
    # p0 '----X' keep(INSUFF); p1 '---XX' keep; p2 '--XXX' ALARM; p3 '-XXX-' ALARM (3 real);
    # p4 'XXX--' ALARM; p5 'XX---' 2 real X < 3, no real OK -> keep ALARM; p6 'X----' keep; p7 '-----' keep.
    assert got == [I, I, A, A, A, A, A, A]
    got_missing = evaluate_states(vals, threshold=0, comparison="GreaterThanThreshold", evaluation_periods=3,
                                  datapoints_to_alarm=3, treat_missing=T.MISSING)
    # missing: p5 'XX---' -> fill 1 (slot 4); oldest evaluated = slot 0 (real X) -> ALARM; p6 'X----' -> ALARM;
    # p7 '-----' -> INSUFFICIENT_DATA; p0 '----X' -> INSUFF; p1 '---XX' fill 1 at slot 2 -> oldest filled -> INSUFF.
    assert got_missing == [I, I, A, A, A, A, A, I]


@settings(max_examples=400, deadline=None)
@given(
    marks=st.lists(st.sampled_from([None, 0.0, 1.0]), max_size=40),
    n=st.integers(1, 6),
    m_frac=st.integers(1, 6),
    extra=st.integers(0, 4),
    treat=st.sampled_from(list(T)),
    initial=st.sampled_from(list(AlarmState)),
)
def test_fast_evaluation_equals_the_window_by_window_reference(marks, n, m_frac, extra, treat, initial):
    kw = {"threshold": 0.5, "comparison": "GreaterThanThreshold", "evaluation_periods": n,
          "datapoints_to_alarm": min(m_frac, n), "treat_missing": treat, "evaluation_range": n + extra,
          "initial": initial}
    assert evaluate_states(marks, **kw) == evaluate_states_reference(marks, **kw)
