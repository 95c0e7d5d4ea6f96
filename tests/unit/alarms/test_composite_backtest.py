"""Composite alarms backtested from their children's timelines: the rule per minute, and when the actions run
under an ActionsSuppressor with its WaitPeriod and ExtensionPeriod (cases worked out by hand, minute by minute)."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pytest

from alarms.backtest import BacktestResult
from alarms.composite import CompositeDefinition
from alarms.composite_backtest import (
    NOTIFY,
    SUPPRESSED_ALARM,
    SUPPRESSED_EXTENSION,
    SUPPRESSED_WAIT,
    backtest_composites,
)
from alarms.definitions import AlarmDefinition, MetricRef
from alarms.types import ComparisonOperator, Severity, TreatMissingData

T0 = 1_767_607_200  # 2026-01-05T10:00:00Z
A, O = "ALARM", "OK"


def _alarm(name: str, states: str, period: int = 60) -> BacktestResult:
    """A metric alarm's backtest whose period i ends in state states[i] ("A" ALARM, "O" OK, "-" INSUFFICIENT)."""
    d = AlarmDefinition(name=name, signal="s", title=name, severity=Severity.CRITICAL, target="t", description="",
                        period=period, evaluation_periods=1, datapoints_to_alarm=1, threshold=0,
                        comparison=ComparisonOperator.GREATER_THAN, treat_missing_data=TreatMissingData.MISSING,
                        treat_missing_reason="", unit="Count", metric=MetricRef("N", "M"), statistic="Sum")
    full = {"A": A, "O": O, "-": "INSUFFICIENT_DATA"}
    tl = pd.DataFrame({"period_start": pd.to_datetime([(T0 + i * period) * 1000 for i in range(len(states))],
                                                      unit="ms", utc=True),
                       "value": [0.0] * len(states), "state": [full[c] for c in states]})
    return BacktestResult(d, tl, [])


def _composite(children, suppressor=None, wait=0, extension=0, paging=True):
    return CompositeDefinition(name="comp", title="comp", severity=Severity.CRITICAL, scope="function", target="f",
                               children=tuple(children), description="", suppressor=suppressor,
                               wait_period=wait if suppressor else None,
                               extension_period=extension if suppressor else None, paging=paging)


def _minutes(result) -> list[int]:
    return [int((t - datetime.fromtimestamp(T0, UTC)).total_seconds()) // 60 for t in result.notifications]


def test_the_state_is_the_rule_over_the_childrens_last_evaluations():
    # each child's state holds from the end of its period; the grid is the gcd of the periods (60 s)
    a = _alarm("a", "OOAAOO")
    b = _alarm("b", "OAO", period=120)  # periods 10:00-10:02 O, 10:02-10:04 A, 10:04-10:06 O
    (r,) = backtest_composites([_composite(["a", "b"])], [a, b])
    # grid minutes 0..6; a: O from 1, A at 3-4, O from 5; b: O from 2, A at 4-5, O at 6
    assert list(r.timeline["state"]) == [O, O, O, A, A, A, O]
    assert _minutes(r) == [3]  # no suppressor: the actions run when it goes to ALARM
    assert [(x.minute, y.minute) for x, y in r.alarm_intervals] == [(3, 6)]


@pytest.mark.parametrize(("child", "sup", "wait", "ext", "notified", "actions"), [
    # suppressor in ALARM when the composite alarms: held; it recovers at 3, the extension (120 s) ends at 5
    ("OAAAAAAA", "AAAOOOOO", 0, 120, [5], ["", SUPPRESSED_ALARM, SUPPRESSED_ALARM, SUPPRESSED_EXTENSION,
                                           SUPPRESSED_EXTENSION, NOTIFY, "", ""]),
    # the suppressor alarms during the wait (120 s): held until it recovers (4), then an extension of 0 s
    ("OAAAAAAA", "OOAAOOOO", 120, 0, [4], ["", SUPPRESSED_WAIT, SUPPRESSED_ALARM, SUPPRESSED_ALARM, NOTIFY,
                                          "", "", ""]),
    # the wait ends with the suppressor still OK: the actions run then
    ("OAAAAOOO", "OOOOOOOO", 120, 0, [3], ["", SUPPRESSED_WAIT, SUPPRESSED_WAIT, NOTIFY, "", "", "", ""]),
    # the composite recovers during the wait: no ALARM actions at all
    ("OAOOOOOO", "OOOOOOOO", 180, 0, [], ["", SUPPRESSED_WAIT, "", "", "", "", "", ""]),
    # the composite recovers during the extension: nothing runs
    ("OAAAOOOO", "AAAOOOOO", 0, 300, [], ["", SUPPRESSED_ALARM, SUPPRESSED_ALARM, SUPPRESSED_EXTENSION,
                                          "", "", "", ""]),
    # actions run on the transition to ALARM: a suppressor alarming afterwards takes nothing back, and its recovery
    # sends nothing new
    ("OAAAAAAO", "OOAAOOOO", 0, 0, [1], ["", NOTIFY, "", "", "", "", "", ""]),
])
def test_suppressor_wait_and_extension(child, sup, wait, ext, notified, actions):
    # the child's period i ends at minute i+1: shift by one so that minute m of the grid shows child[m]
    a = _alarm("a", child[1:])
    s = _alarm("s", sup[1:])
    (r,) = backtest_composites([_composite(["a"], suppressor="s", wait=wait, extension=ext)], [a, s])
    got = list(r.timeline["actions"])
    assert got == actions[:len(got)]
    assert _minutes(r) == notified


def test_children_without_data_count_as_insufficient_and_are_named():
    a = _alarm("a", "OAO")
    (r,) = backtest_composites([_composite(["a", "no-data"])], [a])
    assert r.unknown_children == ["no-data"] and "1 of 2 children have no backtest" in r.note
    assert list(r.timeline["state"]) == [O, O, A, O]


def test_composites_of_composites_use_the_inner_timeline_and_only_paging_ones_notify():
    a, b = _alarm("a", "OAAO"), _alarm("b", "OOOA")
    inner = _composite(["a"], paging=False)
    outer = CompositeDefinition(name="outer", title="outer", severity=Severity.CRITICAL, scope="service",
                                target="s", children=("comp", "b"), description="", paging=True)
    r_inner, r_outer = backtest_composites([inner, outer], [a, b])
    assert r_inner.notifications == [] and set(r_inner.timeline["actions"]) == {""}
    assert list(r_outer.timeline["state"]) == [O, O, A, A, A]
    assert [m for m in _minutes(r_outer)] == [2]
