"""The oracle of :func:`alarms.evaluation.evaluate_states`: the same states computed the direct way, one
:func:`~alarms.evaluation.evaluate_window` per period (quadratic, obviously right)."""

from __future__ import annotations

from collections.abc import Sequence

from alarms.constants import DEFAULT_EXTRA_RANGE_PERIODS
from alarms.evaluation import MISSING, classify, evaluate_window
from alarms.types import AlarmState, ComparisonOperator, TreatMissingData


def evaluate_states_reference(
    values: Sequence[float | None],
    *,
    threshold: float,
    comparison: ComparisonOperator | str,
    evaluation_periods: int,
    datapoints_to_alarm: int,
    treat_missing: TreatMissingData | str,
    evaluation_range: int | None = None,
    initial: AlarmState = AlarmState.INSUFFICIENT_DATA,
) -> list[AlarmState]:
    """``evaluate_states`` the direct way (one ``evaluate_window`` per period); the oracle of its tests."""
    r = evaluation_range or evaluation_periods + DEFAULT_EXTRA_RANGE_PERIODS
    marks = classify(values, threshold, comparison)
    state = initial
    states: list[AlarmState] = []
    for i in range(len(marks)):
        window = marks[max(0, i - r + 1): i + 1].rjust(r, MISSING)
        state = evaluate_window(window, evaluation_periods, datapoints_to_alarm, treat_missing, state)
        states.append(state)
    return states
