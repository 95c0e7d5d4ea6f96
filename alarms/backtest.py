"""Backtest alarm definitions on collected history: how would each alarm have behaved?

Input: the collector's standard tables (``<data>/tables/<name>.parquet``, schemas in
:mod:`collector.tables`), all in 1-minute bins. For each definition:

1. the metric's 1-minute values are rebuilt from the tables (:func:`metric_source`):
   this project's counters from ``outcomes`` (``events`` of the outcome that increments the
   metric, :data:`emitter.contract.METRIC_OUTCOME`), Redelivery from ``rates.redeliveries``,
   RecordAge Maximum / SampleCount from ``record_age`` (``max_ms`` / ``records``), AWS/Lambda
   Errors from ``invocations.timeouts`` of the function's log group (a lower bound: REPORT lines
   show timeouts, not handler exceptions). When the history was collected from CloudWatch with
   ``--metrics``, the GetMetricData datapoints in ``cloudwatch_metrics`` are used first (for AWS and
   this project's metrics alike: they are what the alarm would have seen). Metrics no table holds
   (e.g. AWS/Logs EMF errors, or SQS metrics of a local history) report "no data in this history";
2. they are aggregated to the alarm's period (periods aligned to multiples of the period since
   the epoch, like CloudWatch) with the alarm's statistic; a period without any bin is
   *missing*, exactly like a CloudWatch period without datapoints;
3. metric math is evaluated per period (``+ - * /``, ``FILL(x, v)``; an operand missing makes the
   result missing, as CloudWatch does when series do not line up);
4. the state is evaluated at the end of every period with the M-out-of-N rule and the
   treat-missing-data setting (:mod:`alarms.evaluation`).

Timeline rows: ``period_start`` (UTC), ``value`` (NaN = missing), ``state`` after evaluating at
that period's end. ``alarm_intervals``: [first ALARM period start, last ALARM period end) per run.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alarms import constants as C
from alarms.definitions import AlarmDefinition, MetricRef
from alarms.evaluation import evaluate_states
from alarms.exceptions import BacktestError
from alarms.settings import MAINTENANCE_WINDOW
from alarms.types import AlarmState
from emitter.contract import METRIC_OUTCOME, Dimension, Metric

STATUS_OK = "ok"
STATUS_NO_DATA = "no_data"
STATUS_UNSUPPORTED = "unsupported"
STATUS_SKIPPED = "skipped"
ANOMALY_NOTE = ("skipped: an anomaly-detection alarm compares with the band of CloudWatch's model, which is trained "
                "on up to two weeks of the metric with its daily and weekly pattern and is not published; it cannot "
                "be reproduced offline, so no approximation is shown")
MAINTENANCE_NOTE = ("no data in this history: the maintenance window is set by hand (set-alarm-state), so it is "
                    "never in ALARM in a backtest")

_TABLES = ("outcomes", "record_age", "rates", "invocations", "cloudwatch_metrics")
CW_METRICS_TABLE = "cloudwatch_metrics"
"""GetMetricData datapoints written by ``idemwatch collect cloudwatch --metrics`` (collector.cloudwatch.metrics):
time, namespace, metric_name, dimensions (JSON object, keys sorted), stat, period_s, value."""


@dataclass
class BacktestResult:
    """One alarm's behaviour on the history.

    ``timeline``: pandas DataFrame with columns ``period_start`` (datetime64 UTC), ``value``
    (float, NaN when the period had no datapoint) and ``state`` ("ALARM" | "OK" |
    "INSUFFICIENT_DATA"); empty when ``status`` is not "ok". ``alarm_intervals``: list of
    (start, end) UTC datetimes. ``source`` says which table/column fed the metric; ``note``
    explains a "no_data"/"unsupported"/"skipped" status (anomaly-detection alarms are skipped by name: CloudWatch's
    model cannot be reproduced offline) or an approximation.
    """

    definition: AlarmDefinition
    timeline: Any
    alarm_intervals: list[tuple[datetime, datetime]]
    status: str = STATUS_OK
    source: str = ""
    note: str = ""
    periods: int = 0
    missing_periods: int = 0
    state_counts: dict[str, int] = field(default_factory=dict)

    @property
    def alarm_minutes(self) -> float:
        return sum((b - a).total_seconds() for a, b in self.alarm_intervals) / 60.0

    @property
    def time_in_alarm_s(self) -> int:
        """Seconds in ALARM over the history (sum of ``alarm_intervals``)."""
        return int(sum((b - a).total_seconds() for a, b in self.alarm_intervals))

    @property
    def last_state(self) -> str:
        """The state after the last evaluated period; INSUFFICIENT_DATA (a new alarm's state) without one."""
        tl = self.timeline
        return str(tl["state"].iloc[-1]) if tl is not None and len(tl) else AlarmState.INSUFFICIENT_DATA.value

    def transitions(self) -> list[tuple[datetime, str, str]]:
        """(time, from state, to state) per state change, time = end of the period whose evaluation changed it
        (UTC). The first one starts from INSUFFICIENT_DATA, the state CloudWatch gives a new alarm."""
        tl = self.timeline
        out: list[tuple[datetime, str, str]] = []
        if tl is None or not len(tl):
            return out
        prev = AlarmState.INSUFFICIENT_DATA.value
        period = self.definition.period
        for start, state in zip(tl["period_start"], tl["state"]):
            if state != prev:
                out.append((_dt(int(start.timestamp()) + period), prev, str(state)))
                prev = str(state)
        return out


class History:
    """The collected tables of one data directory, loaded once. Raises :class:`BacktestError` when
    ``<data>/tables`` does not exist or a table cannot be read."""

    def __init__(self, data_dir: str | Path) -> None:
        import pandas as pd

        self.data_dir = Path(data_dir)
        tables_dir = self.data_dir / "tables"
        if not tables_dir.is_dir():
            raise BacktestError(f"{tables_dir} does not exist: collect the history first (idemwatch collect ...)")
        self.tables: dict[str, Any] = {}
        for name in _TABLES:
            p = tables_dir / f"{name}.parquet"
            if not p.exists():
                continue
            try:
                df = pd.read_parquet(p)
            except Exception as exc:  # pyarrow errors vary by corruption type
                raise BacktestError(f"{p}: cannot read the table ({exc})") from exc
            if "time" in df.columns and len(df):
                df = df.copy()
                df["minute"] = _epoch_seconds(df["time"]) // 60 * 60
            self.tables[name] = df
        self.start_s, self.end_s = self._window()

    def _window(self) -> tuple[int | None, int | None]:
        """History window (epoch s, start of first and last 1-minute bin): the manifest's ``range`` when it
        has one, else the span of the tables' bins."""
        try:
            manifest = json.loads((self.data_dir / "manifest.json").read_text())
            rng = manifest.get("range") if isinstance(manifest, dict) else None
            if isinstance(rng, dict) and rng.get("start") is not None and rng.get("end") is not None:
                return int(rng["start"]) // 60 * 60, int(rng["end"]) // 60 * 60
        except (OSError, ValueError, TypeError):
            pass
        lo = [int(df["minute"].min()) for df in self.tables.values() if "minute" in df.columns and len(df)]
        hi = [int(df["minute"].max()) for df in self.tables.values() if "minute" in df.columns and len(df)]
        return (min(lo), max(hi)) if lo else (None, None)

    # ------------------------------------------------------------------ metric sources
    def minute_values(self, metric: MetricRef, stat: str) -> tuple[dict[int, float] | None, str, str]:
        """Values {bin start epoch s: value} for ``metric`` aggregated with ``stat`` within a bin, with a
        description of the source and a note. ``None`` values: no table holds this metric.

        CloudWatch's own datapoints (``cloudwatch_metrics``, when collected) win over values rebuilt
        from the logs: they are what the alarm would really have seen.
        """
        dims = metric.dimension_map
        cw = self._cloudwatch(metric, stat)
        if cw is not None:
            return cw
        if not metric.namespace.startswith("AWS/"):
            return self._custom(metric.metric_name, stat, dims)
        if metric.namespace == C.LAMBDA_NAMESPACE and metric.metric_name == C.LAMBDA_ERRORS and stat == "Sum":
            df = self.tables.get("invocations")
            if df is None:
                return None, "", "the invocations table is not in this history"
            group = C.LAMBDA_LOG_GROUP_PREFIX + dims.get(C.LAMBDA_FUNCTION_DIMENSION, "")
            rows = df[df["log_group"] == group] if len(df) else df
            return (_per_minute(rows, "timeouts", "sum"), "invocations.timeouts",
                    "lower bound: REPORT lines show timeouts, not handler exceptions")
        return None, "", (f"no data in this history: {metric.namespace} {metric.metric_name} was not collected "
                          "(idemwatch collect cloudwatch --metrics)")

    def _cloudwatch(self, metric: MetricRef, stat: str) -> tuple[dict[int, float], str, str] | None:
        df = self.tables.get(CW_METRICS_TABLE)
        if df is None or not len(df):
            return None
        dims = json.dumps(dict(sorted(metric.dimensions)), sort_keys=True, separators=(",", ":"))
        rows = df[(df["namespace"] == metric.namespace) & (df["metric_name"] == metric.metric_name)
                  & (df["dimensions"] == dims) & (df["stat"] == stat)]
        if not len(rows):
            return None
        period_s = int(rows["period_s"].max())
        out = {int(t): float(v) for t, v in zip(_epoch_seconds(rows["time"]), rows["value"]) if not math.isnan(v)}
        return out, f"{CW_METRICS_TABLE}[{metric.metric_name} {stat} {period_s}s]", ""

    def _custom(self, name: str, stat: str, dims: Mapping[str, str]) -> tuple[dict[int, float] | None, str, str]:
        try:
            metric = Metric(name)
        except ValueError:
            return None, "", f"{name} is not a metric of this project's contract"
        service = dims.get(Dimension.SERVICE.value)
        operation = dims.get(Dimension.OPERATION.value)

        def pick(table: str) -> Any:
            df = self.tables.get(table)
            if df is None or not len(df):
                return df
            mask = df["service"] == service
            if operation is not None:
                mask &= df["operation"] == operation
            return df[mask]

        if metric is Metric.RECORD_AGE:
            df = pick("record_age")
            if df is None:
                return None, "", "the record_age table is not in this history"
            if stat == "Maximum":
                return _per_minute(df, "max_ms", "max"), "record_age.max_ms", ""
            if stat == "SampleCount":
                return _per_minute(df, "records", "sum"), "record_age.records", ""
            return None, "", f"{stat} of RecordAge cannot be rebuilt from 1-minute percentiles (use Maximum)"
        if stat != "Sum":
            return None, "", (f"{stat} of {name} depends on how values were batched into EMF documents; only Sum "
                              "can be rebuilt from the outcome counts")
        if metric is Metric.REDELIVERY:
            df = pick("rates")
            if df is None:
                return None, "", "the rates table is not in this history"
            return _per_minute(df, "redeliveries", "sum"), "rates.redeliveries", ""
        outcome = METRIC_OUTCOME.get(metric)
        if outcome is None or metric.unit.value != "Count":
            return None, "", f"{name} is not a count of outcome records"
        df = pick("outcomes")
        if df is None:
            return None, "", "the outcomes table is not in this history"
        rows = df[df["outcome"] == outcome.value] if len(df) else df
        return _per_minute(rows, "events", "sum"), f"outcomes[outcome={outcome.value}].events", ""


def run_backtest(definitions: Sequence[AlarmDefinition], data_dir: str | Path,
                 extra_range: int | None = None) -> list[BacktestResult]:
    """Backtest every definition on the history in ``data_dir`` (one :class:`BacktestResult` each, same order).

    ``extra_range``: datapoints retrieved per evaluation beyond EvaluationPeriods (default
    :data:`~alarms.constants.DEFAULT_EXTRA_RANGE_PERIODS` = 2). Raises :class:`BacktestError` when the
    tables cannot be read.
    """
    history = History(data_dir)
    return [backtest_one(d, history, extra_range) for d in definitions]


def backtest_one(d: AlarmDefinition, history: History, extra_range: int | None = None) -> BacktestResult:
    """Backtest one definition on a loaded :class:`History` (``extra_range`` as in :func:`run_backtest`)."""
    evaluation_range = None if extra_range is None else d.evaluation_periods + extra_range
    import pandas as pd

    if d.is_anomaly:
        return _empty(d, STATUS_SKIPPED, "", ANOMALY_NOTE)
    if d.signal == MAINTENANCE_WINDOW:
        return _empty(d, STATUS_NO_DATA, "", MAINTENANCE_NOTE)
    if history.start_s is None or history.end_s is None:
        return _empty(d, STATUS_NO_DATA, "", "the history holds no time-binned rows")
    p = d.period
    starts = list(range(history.start_s // p * p, history.end_s // p * p + 1, p))
    if d.metric is not None:
        minutes, source, note = history.minute_values(d.metric, d.statistic or "")
        if minutes is None:
            return _empty(d, STATUS_NO_DATA if note.startswith("no data") else STATUS_UNSUPPORTED, source, note)
        problem = _granularity_problem(source, p, d.statistic or "")
        if problem:
            return _empty(d, STATUS_UNSUPPORTED, source, problem)
        values = _per_period(minutes, starts, p, _AGG.get(d.statistic or "", _single))
    else:
        series: dict[str, list[float | None]] = {}
        sources, notes = [], []
        for q in d.queries:
            if q.metric is None:
                continue
            minutes, source, note = history.minute_values(q.metric, q.stat or "")
            if minutes is None:
                return _empty(d, STATUS_NO_DATA if note.startswith("no data") else STATUS_UNSUPPORTED, source,
                              f"{q.id}: {note}")
            problem = _granularity_problem(source, q.period or p, q.stat or "")
            if problem:
                return _empty(d, STATUS_UNSUPPORTED, source, f"{q.id}: {problem}")
            series[q.id] = _per_period(minutes, starts, q.period or p, _AGG.get(q.stat or "", _single))
            sources.append(f"{q.id}={source}")
            if note:
                notes.append(note)
        expr = next(q for q in d.queries if q.return_data).expression or ""
        fn = compile_expression(expr)
        values = [fn({k: v[i] for k, v in series.items()}) for i in range(len(starts))]
        source, note = ", ".join(sources), "; ".join(notes)
    states = evaluate_states(values, threshold=d.threshold, comparison=d.comparison,
                             evaluation_periods=d.evaluation_periods, datapoints_to_alarm=d.datapoints_to_alarm,
                             treat_missing=d.treat_missing_data, evaluation_range=evaluation_range)
    timeline = pd.DataFrame({
        "period_start": pd.to_datetime([s * 1000 for s in starts], unit="ms", utc=True),
        "value": pd.Series([math.nan if v is None else float(v) for v in values], dtype="float64"),
        "state": [s.value for s in states],
    })
    intervals = _intervals(starts, states, p)
    counts = {s.value: sum(1 for x in states if x is s) for s in AlarmState}
    return BacktestResult(d, timeline, intervals, STATUS_OK, source, note, len(starts),
                          sum(1 for v in values if v is None), counts)


# --------------------------------------------------------------------------- helpers
_AGG: dict[str, Callable[[list[float]], float]] = {
    "Sum": sum,
    "Maximum": max,
    "Minimum": min,
    "SampleCount": sum,  # only ever fed with per-minute counts (record_age.records)
}


def _granularity_problem(source: str, period: int, stat: str) -> str:
    """Why CloudWatch datapoints of ``source``'s granularity cannot be aggregated to ``period`` ("" = fine).
    Values rebuilt from the 1-minute tables always can (every period is a multiple of 60 s or sub-minute)."""
    m = re.fullmatch(rf"{CW_METRICS_TABLE}\[.* (\d+)s\]", source)
    if m is None:
        return ""
    g = int(m.group(1))
    if period % g:
        return f"collected at {g} s, which does not divide the alarm period {period} s"
    if g != period and stat not in _AGG:
        return f"{stat} of {g}-second datapoints cannot be combined into {period}-second periods"
    return ""


def _single(values: list[float]) -> float:
    """A period made of exactly one datapoint of the same period (statistics that do not combine, e.g. Average)."""
    if len(values) != 1:
        raise ValueError("cannot combine several datapoints with this statistic")
    return values[0]


def _per_minute(df: Any, column: str, how: str) -> dict[int, float]:
    if df is None or not len(df):
        return {}
    g = df.groupby("minute")[column]
    s = g.sum() if how == "sum" else g.max()
    return {int(k): float(v) for k, v in s.items() if not (isinstance(v, float) and math.isnan(v))}


def _per_period(minutes: Mapping[int, float], starts: Sequence[int], period: int,
                agg: Callable[[list[float]], float]) -> list[float | None]:
    buckets: dict[int, list[float]] = {}
    for t, v in minutes.items():
        buckets.setdefault(t // period * period, []).append(v)
    return [agg(buckets[s]) if s in buckets else None for s in starts]


def _intervals(starts: Sequence[int], states: Sequence[AlarmState], period: int) -> list[tuple[datetime, datetime]]:
    out: list[tuple[datetime, datetime]] = []
    run_start: int | None = None
    for s, st in zip(starts, states):
        if st is AlarmState.ALARM and run_start is None:
            run_start = s
        elif st is not AlarmState.ALARM and run_start is not None:
            out.append((_dt(run_start), _dt(s)))
            run_start = None
    if run_start is not None:
        out.append((_dt(run_start), _dt(starts[-1] + period)))
    return out


def _empty(d: AlarmDefinition, status: str, source: str, note: str) -> BacktestResult:
    import pandas as pd

    timeline = pd.DataFrame({
        "period_start": pd.Series([], dtype="datetime64[ms, UTC]"),
        "value": pd.Series([], dtype="float64"),
        "state": pd.Series([], dtype="object"),
    })
    return BacktestResult(d, timeline, [], status, source, note)


def _dt(epoch_s: int) -> datetime:
    return datetime.fromtimestamp(epoch_s, tz=UTC)


def _epoch_seconds(col: Any) -> Any:
    import pandas as pd

    ts = pd.to_datetime(col, utc=True)
    return (ts.astype("int64") // _ns_per_unit(ts)).astype("int64")


def _ns_per_unit(ts: Any) -> int:
    unit = getattr(ts.dt, "unit", "ns")
    return {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[unit]


# --------------------------------------------------------------------------- metric math
def compile_expression(expression: str) -> Callable[[Mapping[str, float | None]], float | None]:
    """A function evaluating a metric-math ``expression`` for one period.

    Supported: numbers, query ids, ``+ - * /``, unary minus, parentheses and ``FILL(x, number)``.
    A missing operand (None) makes the result missing; division by zero gives missing.
    Raises ``ValueError`` for anything else (the backtest then says so instead of guessing).
    """
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"cannot parse metric math {expression!r}: {exc.msg}") from None

    def ev(node: ast.AST, env: Mapping[str, float | None]) -> float | None:
        if isinstance(node, ast.Expression):
            return ev(node.body, env)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise ValueError(f"metric math refers to unknown id {node.id!r}")
            return env[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            x = ev(node.operand, env)
            return None if x is None else -x
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            a, b = ev(node.left, env), ev(node.right, env)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            return None if b == 0 else a / b
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "FILL"
                and len(node.args) == 2 and not node.keywords):
            x = ev(node.args[0], env)
            fill = ev(node.args[1], env)
            return fill if x is None else x
        raise ValueError(f"metric math construct not supported by the backtest: {ast.dump(node)[:80]}")

    def run(env: Mapping[str, float | None]) -> float | None:
        return ev(tree, env)

    run({n.id: 1.0 for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id != "FILL"})  # fail early
    return run
