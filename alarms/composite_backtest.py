"""Backtest of composite alarms: their children's backtested timelines combined by the rule, and when their actions
would have run given the ActionsSuppressor.

A composite alarm has no data of its own: CloudWatch evaluates its rule whenever a child changes state, and it is in
ALARM while the rule is true, else OK (PutCompositeAlarm). So on a common grid (the greatest common divisor of the
children's periods) each child is in the state its last evaluation gave it (a metric alarm is evaluated at the end
of each of its periods, :mod:`alarms.backtest`; before its first evaluation, and throughout when the history holds
no data for it, it is in INSUFFICIENT_DATA), and the rule (:func:`alarms.alarm_rule.evaluate`) gives the composite's
state. Composites are combined in the order :func:`alarms.composite.build_composites` returns them, children first.

Actions ("Suppressing composite alarm actions", CloudWatch User Guide; PutCompositeAlarm): when the composite goes to
ALARM its actions run, unless the suppressor is in ALARM (suppressed), or goes to ALARM within the WaitPeriod
(suppressed; otherwise they run when the WaitPeriod ends, if the composite is still in ALARM); when the suppressor
recovers while the composite is still in ALARM, the actions run when the ExtensionPeriod ends, unless the suppressor
alarmed again or the composite recovered meanwhile. Times that fall between grid points run at the next one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from alarms import alarm_rule
from alarms.composite import CompositeDefinition
from alarms.types import AlarmState

NOTIFY = "notify"
SUPPRESSED_ALARM = "suppressed: Alarm"
SUPPRESSED_WAIT = "suppressed: WaitPeriod"
SUPPRESSED_EXTENSION = "suppressed: ExtensionPeriod"


@dataclass
class CompositeResult:
    """One composite's behaviour on the history.

    ``timeline``: pandas DataFrame with ``time`` (datetime64 UTC, the grid points), ``state`` ("ALARM" | "OK"),
    ``suppressor`` (the suppressor's state, "" without one) and ``actions`` (:data:`NOTIFY` when the ALARM actions
    run at that time, a ``suppressed: ...`` reason while they are held back, else ""). ``notifications``: the times
    the ALARM actions run (only a paging composite has any). ``unknown_children``: children without a backtest (no data, skipped), counted as
    INSUFFICIENT_DATA.
    """

    definition: CompositeDefinition
    timeline: Any
    alarm_intervals: list[tuple[datetime, datetime]]
    notifications: list[datetime]
    unknown_children: list[str] = field(default_factory=list)
    step_s: int = 60

    @property
    def time_in_alarm_s(self) -> int:
        """Seconds in ALARM over the history (sum of ``alarm_intervals``), as ``BacktestResult.time_in_alarm_s``."""
        return int(sum((b - a).total_seconds() for a, b in self.alarm_intervals))

    @property
    def last_state(self) -> str:
        tl = self.timeline
        return str(tl["state"].iloc[-1]) if tl is not None and len(tl) else AlarmState.INSUFFICIENT_DATA.value

    @property
    def note(self) -> str:
        if not self.unknown_children:
            return ""
        return (f"{len(self.unknown_children)} of {len(self.definition.children)} children have no backtest in this "
                "history and count as INSUFFICIENT_DATA: " + ", ".join(self.unknown_children))


def _dt(epoch_s: int) -> datetime:
    return datetime.fromtimestamp(epoch_s, tz=UTC)


def _states_at(result: Any, grid: Sequence[int]) -> list[str]:
    """The state of a metric alarm (a :class:`~alarms.backtest.BacktestResult`) at each grid time: the state after
    its last evaluation at or before it (evaluations at the end of each period)."""
    tl = result.timeline
    out = []
    if tl is None or not len(tl):
        return [AlarmState.INSUFFICIENT_DATA.value] * len(grid)
    period = result.definition.period
    ends = [int(t.timestamp()) + period for t in tl["period_start"]]
    states = [str(s) for s in tl["state"]]
    j = -1
    for t in grid:
        while j + 1 < len(ends) and ends[j + 1] <= t:
            j += 1
        out.append(states[j] if j >= 0 else AlarmState.INSUFFICIENT_DATA.value)
    return out


def grid_of(results: Sequence[Any]) -> list[int]:
    """Epoch seconds of the grid: every multiple of the gcd of the periods between the first period start and the
    last period end of ``results`` (metric alarm backtests with data); empty without any."""
    ok = [r for r in results if r.timeline is not None and len(r.timeline)]
    if not ok:
        return []
    step = 0
    for r in ok:
        step = math.gcd(step, r.definition.period)
    start = min(int(r.timeline["period_start"].iloc[0].timestamp()) for r in ok)
    end = max(int(r.timeline["period_start"].iloc[-1].timestamp()) + r.definition.period for r in ok)
    return list(range(start // step * step, end + 1, step))


def backtest_composites(composites: Sequence[CompositeDefinition], results: Sequence[Any]
                        ) -> list[CompositeResult]:
    """Backtest ``composites`` (children first, as :func:`~alarms.composite.build_composites` orders them) on the
    metric alarms' backtests ``results`` (:func:`alarms.backtest.run_backtest`). One :class:`CompositeResult` each,
    same order; an empty timeline when no child has data."""
    import pandas as pd

    grid = grid_of(results)
    step = grid[1] - grid[0] if len(grid) > 1 else 60
    by_name = {r.definition.name: r for r in results}
    states: dict[str, list[str]] = {}
    known: set[str] = {r.definition.name for r in results if r.timeline is not None and len(r.timeline)}
    out: list[CompositeResult] = []
    for c in composites:
        tree = alarm_rule.parse(c.rule).tree
        refs = list(c.children) + ([alarm_rule.alarm_name_of(c.suppressor)] if c.suppressor else [])
        for name in refs:
            if name not in states:
                states[name] = _states_at(by_name[name], grid) if name in by_name else \
                    [AlarmState.INSUFFICIENT_DATA.value] * len(grid)
        unknown = [n for n in c.children if n not in known]
        comp = [AlarmState.ALARM.value if alarm_rule.evaluate(tree, {n: states[n][i] for n in c.children})
                else AlarmState.OK.value for i in range(len(grid))]
        states[c.name] = comp
        known.add(c.name)
        sup = states[alarm_rule.alarm_name_of(c.suppressor)] if c.suppressor else None
        actions = _actions(comp, sup, grid, c.wait_period or 0, c.extension_period or 0) if c.paging else \
            [""] * len(grid)
        timeline = pd.DataFrame({
            "time": pd.to_datetime([t * 1000 for t in grid], unit="ms", utc=True),
            "state": comp,
            "suppressor": sup if sup is not None else [""] * len(grid),
            "actions": actions,
        })
        out.append(CompositeResult(c, timeline, _intervals(grid, comp, step),
                                   [_dt(t) for t, a in zip(grid, actions) if a == NOTIFY], unknown, step))
    return out


def _actions(comp: Sequence[str], sup: Sequence[str] | None, grid: Sequence[int], wait_s: int, extension_s: int
             ) -> list[str]:
    """Per grid time: :data:`NOTIFY`, a ``suppressed: ...`` reason, or "" (see the module docstring)."""
    alarm = AlarmState.ALARM.value
    out: list[str] = []
    wait_until: int | None = None
    extension_until: int | None = None
    held = False  # ALARM actions held back by the suppressor (to run after its ExtensionPeriod)
    for i, t in enumerate(grid):
        in_alarm = comp[i] == alarm
        s_alarm = sup is not None and sup[i] == alarm
        s_was = sup is not None and i > 0 and sup[i - 1] == alarm
        rising = in_alarm and (i == 0 or comp[i - 1] != alarm)
        action = ""
        if not in_alarm:
            wait_until = extension_until = None
            held = False
        else:
            if rising:
                if sup is None:
                    action = NOTIFY
                elif s_alarm:
                    held = True
                else:
                    wait_until = t + wait_s
            if wait_until is not None:
                if s_alarm:
                    wait_until, held = None, True
                elif t >= wait_until:
                    wait_until, action = None, NOTIFY
                else:
                    action = SUPPRESSED_WAIT
            if held and s_was and not s_alarm:  # the suppressor recovered: the ExtensionPeriod starts
                extension_until = t + extension_s
            if extension_until is not None:
                if s_alarm:
                    extension_until = None
                elif t >= extension_until:
                    extension_until, held, action = None, False, NOTIFY
                else:
                    action = SUPPRESSED_EXTENSION
            if held and s_alarm:
                action = SUPPRESSED_ALARM
        out.append(action)
    return out


def _intervals(grid: Sequence[int], states: Sequence[str], step: int) -> list[tuple[datetime, datetime]]:
    out: list[tuple[datetime, datetime]] = []
    start: int | None = None
    for t, s in zip(grid, states):
        if s == AlarmState.ALARM.value and start is None:
            start = t
        elif s != AlarmState.ALARM.value and start is not None:
            out.append((_dt(start), _dt(t)))
            start = None
    if start is not None:
        out.append((_dt(start), _dt(grid[-1] + step)))
    return out
