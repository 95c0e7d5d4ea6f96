"""CloudWatch's alarm evaluation rules, as a pure function over a series of datapoints.

Source: Amazon CloudWatch User Guide, "Configuring how CloudWatch alarms treat missing data"
and "How alarm state is evaluated when data is missing"
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html).
At each evaluation CloudWatch retrieves the *evaluation range* (more datapoints than
EvaluationPeriods; the guide's example retrieves 5 for 3 evaluation periods) and then:

1. if the range holds at least EvaluationPeriods real datapoints, it evaluates the most recent
   EvaluationPeriods real ones and the treat-missing-data setting is not used;
2. otherwise it fills the shortfall with the treat-missing-data setting, using every real
   datapoint of the range and as few filled ones as possible (the most recent missing slots);
3. ALARM when at least DatapointsToAlarm of the evaluated datapoints breach, else OK;
   ``missing`` with no real datapoint gives INSUFFICIENT_DATA, ``ignore`` keeps the current
   state. For ``missing``/``ignore`` with real datapoints but too few breaching: OK when a real
   datapoint is not breaching; when all real ones breach, ``ignore`` keeps the state and
   ``missing`` goes to ALARM only if the oldest evaluated datapoint is a real breaching one
   ("because the oldest evaluated data point is breaching"), else INSUFFICIENT_DATA.

Every row of the guide's two example tables is a unit test of :func:`evaluate_window`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from alarms.constants import DEFAULT_EXTRA_RANGE_PERIODS
from alarms.types import AlarmState, ComparisonOperator, TreatMissingData

BREACHING = "X"
NOT_BREACHING = "0"
MISSING = "-"


def breaches(value: float, threshold: float, comparison: ComparisonOperator | str) -> bool:
    """Whether ``value`` breaches ``threshold`` under a static ``ComparisonOperator`` (``ValueError`` for a band
    operator: CloudWatch's anomaly model is not evaluated offline)."""
    op = ComparisonOperator(comparison)
    if op is ComparisonOperator.GREATER_THAN:
        return value > threshold
    if op is ComparisonOperator.GREATER_THAN_OR_EQUAL:
        return value >= threshold
    if op is ComparisonOperator.LESS_THAN:
        return value < threshold
    if op is ComparisonOperator.LESS_THAN_OR_EQUAL:
        return value <= threshold
    raise ValueError(f"{op.value} compares with an anomaly-detection band, not a static threshold")


def classify(values: Sequence[float | None], threshold: float, comparison: ComparisonOperator | str) -> str:
    """One character per datapoint: ``X`` breaching, ``0`` not breaching, ``-`` missing (None/NaN)."""
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(MISSING)
        else:
            out.append(BREACHING if breaches(v, threshold, comparison) else NOT_BREACHING)
    return "".join(out)


def evaluate_window(
    points: str,
    evaluation_periods: int,
    datapoints_to_alarm: int,
    treat_missing: TreatMissingData | str,
    current: AlarmState = AlarmState.INSUFFICIENT_DATA,
) -> AlarmState:
    """State after one evaluation of the evaluation range ``points`` (oldest first, ``X``/``0``/``-``).

    ``current`` is the state before this evaluation (used by ``ignore``). Raises ``ValueError``
    when ``datapoints_to_alarm`` > ``evaluation_periods`` (the API rejects such an alarm).
    """
    n, m = evaluation_periods, datapoints_to_alarm
    if not 1 <= m <= n:
        raise ValueError(f"need 1 <= DatapointsToAlarm ({m}) <= EvaluationPeriods ({n})")
    treat = TreatMissingData(treat_missing)
    real = [(i, p) for i, p in enumerate(points) if p != MISSING]
    if len(real) >= n:
        evaluated = [p for _, p in real[-n:]]
        return AlarmState.ALARM if evaluated.count(BREACHING) >= m else AlarmState.OK
    fill = n - len(real)
    real_breaching = sum(1 for _, p in real if p == BREACHING)
    real_ok = len(real) - real_breaching
    if treat is TreatMissingData.BREACHING:
        return AlarmState.ALARM if real_breaching + fill >= m else AlarmState.OK
    if treat is TreatMissingData.NOT_BREACHING:
        return AlarmState.ALARM if real_breaching >= m else AlarmState.OK
    # missing / ignore: filled datapoints count neither way.
    if not real:
        return AlarmState.INSUFFICIENT_DATA if treat is TreatMissingData.MISSING else current
    if real_breaching >= m:
        return AlarmState.ALARM
    if real_ok:
        return AlarmState.OK
    if treat is TreatMissingData.IGNORE:
        return current
    missing_slots = [i for i, p in enumerate(points) if p == MISSING]
    oldest_filled = min(missing_slots[-fill:]) if fill <= len(missing_slots) else -1
    return AlarmState.ALARM if real[0][0] < oldest_filled else AlarmState.INSUFFICIENT_DATA


def evaluate_states(
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
    """Alarm state after each period of ``values`` (one aggregated datapoint per period, None = missing).

    The alarm is evaluated once at the end of every period over the last ``evaluation_range``
    periods (default EvaluationPeriods + 2, the user guide's example); periods before the first
    value count as missing. A new alarm starts in ``initial`` (INSUFFICIENT_DATA, as CloudWatch).

    Same result as calling :func:`evaluate_window` on every window (a property test compares the two), in
    O(len(values)): prefix counts of real and breaching datapoints replace rescanning the window, so a backtest
    over months of 1-minute periods stays linear.
    """
    r = evaluation_range or evaluation_periods + DEFAULT_EXTRA_RANGE_PERIODS
    n, m = evaluation_periods, datapoints_to_alarm
    if r < n:
        raise ValueError("the evaluation range cannot be shorter than EvaluationPeriods")
    if not 1 <= m <= n:
        raise ValueError(f"need 1 <= DatapointsToAlarm ({m}) <= EvaluationPeriods ({n})")
    treat = TreatMissingData(treat_missing)
    marks = classify(values, threshold, comparison)
    real_idx: list[int] = []  # positions of real datapoints
    cum_b = [0]  # cum_b[j] = breaching among the first j real datapoints
    first = 0  # index into real_idx of the first real datapoint inside the window
    state = initial
    states: list[AlarmState] = []
    for i, mark in enumerate(marks):
        if mark != MISSING:
            real_idx.append(i)
            cum_b.append(cum_b[-1] + (mark == BREACHING))
        lo = i - r + 1
        while first < len(real_idx) and real_idx[first] < lo:
            first += 1
        end = len(real_idx)
        reals = end - first
        if reals >= n:
            state = AlarmState.ALARM if cum_b[end] - cum_b[end - n] >= m else AlarmState.OK
        else:
            fill = n - reals
            real_b = cum_b[end] - cum_b[first]
            if treat is TreatMissingData.BREACHING:
                state = AlarmState.ALARM if real_b + fill >= m else AlarmState.OK
            elif treat is TreatMissingData.NOT_BREACHING:
                state = AlarmState.ALARM if real_b >= m else AlarmState.OK
            elif reals == 0:
                state = AlarmState.INSUFFICIENT_DATA if treat is TreatMissingData.MISSING else state
            elif real_b >= m:
                state = AlarmState.ALARM
            elif reals - real_b:
                state = AlarmState.OK
            elif treat is TreatMissingData.MISSING:
                # oldest of the `fill` most recent missing slots of the window (slots before the data count too)
                found, j = 0, i
                while True:
                    if j < 0 or marks[j] == MISSING:
                        found += 1
                        if found == fill:
                            break
                    j -= 1
                state = AlarmState.ALARM if real_idx[first] < j else AlarmState.INSUFFICIENT_DATA
        states.append(state)
    return states
