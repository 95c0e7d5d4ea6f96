"""Pure computations behind every page: tiles, adaptive time bins, breakdowns, health.

Inputs are a :class:`dashboard.data.Dataset` (or its DataFrames) and a :class:`Filters`;
outputs are plain values and DataFrames. No Streamlit here, so each number a page shows
is unit-testable against the tables.

Time conventions: naive ``datetime`` in UTC; windows are ``[start, end)``; a table row
belongs to a window when its 1-minute bin start is inside it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import numpy as np
import pandas as pd

from dashboard.cache import answer
from dashboard.constants import (
    BIN_LADDER,
    ITERATOR_AGE_SOURCES,
    MAX_BINS,
    POISON_RATE_CRITICAL,
    RANGE_PRESETS,
    RETRY_RATE_WARNING,
    Health,
    Signal,
    SignalKind,
)
from dashboard.data import Dataset
from emitter.contract import Outcome

__all__ = [
    "Filters",
    "Tile",
    "attempt_distribution",
    "breakdown",
    "choose_bin",
    "colour_map",
    "default_preset",
    "duration_unit",
    "error_codes",
    "filter_frame",
    "format_delta",
    "format_ms",
    "format_value",
    "health_table",
    "in_unit",
    "outcome_totals",
    "palette_colours",
    "preset_window",
    "record_age_series",
    "signal_value",
    "stuck_keys",
    "tile_trend",
    "tiles",
    "timeseries",
]


@dataclass(frozen=True)
class Filters:
    """What the sidebar selected. ``start`` inclusive, ``end`` exclusive (naive UTC).

    Empty tuples mean "all". Tables without an ``event_source`` column (rates,
    error_codes, stuck_keys, conflicting_keys) are filtered by event source through the
    (service, operation) pairs that carry that source in ``outcomes``.
    """

    start: datetime
    end: datetime
    services: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    event_sources: tuple[str, ...] = ()

    def previous(self) -> Filters:
        """The window of the same length just before this one, same dimensions."""
        span = self.end - self.start
        return replace(self, start=self.start - span, end=self.start)


@dataclass(frozen=True)
class Tile:
    """One Overview tile: ``value`` in the selected window, ``previous`` in the window before
    (None when the collected data does not cover that window), ``delta`` = value - previous."""

    signal: Signal
    value: float | None
    previous: float | None

    @property
    def delta(self) -> float | None:
        if self.value is None or self.previous is None:
            return None
        return self.value - self.previous


# ----------------------------------------------------------------------------- time
def choose_bin(start: datetime, end: datetime) -> timedelta:
    """Smallest bin of :data:`BIN_LADDER` giving at most :data:`MAX_BINS` bins over [start, end)."""
    span = end - start
    for b in BIN_LADDER:
        if span <= b * MAX_BINS:
            return b
    return BIN_LADDER[-1]


def preset_window(ds_start: datetime, ds_end: datetime, span: timedelta | None) -> tuple[datetime, datetime]:
    """Window of a range preset: the last ``span`` of the data (all of it when None)."""
    if span is None:
        return ds_start, ds_end
    return max(ds_start, ds_end - span), ds_end


def default_preset(ds_start: datetime, ds_end: datetime) -> str:
    """Largest preset covering at most half the data, so the tiles have a previous window
    to compare against; "All data" when the data is shorter than 10 minutes."""
    span = ds_end - ds_start
    best = RANGE_PRESETS[-1][0]
    for label, p in RANGE_PRESETS:
        if p is not None and p * 2 <= span:
            best = label
    return best


def bin_floor(times: pd.Series, bin_width: timedelta) -> pd.Series:
    return times.dt.floor(pd.Timedelta(bin_width))


# ----------------------------------------------------------------------------- filtering
def _pairs_for_sources(ds: Dataset, sources: tuple[str, ...]) -> pd.MultiIndex:
    o = ds.table("outcomes")
    o = o[o["event_source"].isin(sources)]
    return pd.MultiIndex.from_frame(o[["service", "operation"]].drop_duplicates())


def filter_frame(ds: Dataset, name: str, f: Filters, *, time_col: str | None = "time",
                 window: bool = True) -> pd.DataFrame:
    """Rows of table ``name`` matching the filters (time on ``time_col`` when ``window``)."""
    df = ds.table(name)
    if window and time_col == "time" and "time" in df.columns:
        # time-binned tables are sorted by time at load: the window is a binary-search slice
        t = df["time"].to_numpy()
        lo, hi = t.searchsorted(np.datetime64(f.start, "ms")), t.searchsorted(np.datetime64(f.end, "ms"))
        df = df.iloc[lo:hi]
    mask = pd.Series(True, index=df.index)
    if window and time_col is not None and time_col != "time" and time_col in df.columns:
        mask &= (df[time_col] >= f.start) & (df[time_col] < f.end)
    if f.services and "service" in df.columns:
        mask &= df["service"].isin(f.services)
    if f.operations and "operation" in df.columns:
        mask &= df["operation"].isin(f.operations)
    if f.event_sources:
        if "event_source" in df.columns:
            mask &= df["event_source"].isin(f.event_sources)
        elif "service" in df.columns and "operation" in df.columns:
            pairs = _pairs_for_sources(ds, f.event_sources)
            mask &= pd.MultiIndex.from_frame(df[["service", "operation"]]).isin(pairs)
        # tables keyed by log group only (invocations, library_signals) are not filtered by source
    return df[mask]


@answer
def iterator_ages(ds: Dataset, f: Filters) -> pd.DataFrame:
    """Rows of the ``record_age`` table in ``f`` with records, of stream and queue sources only
    (:data:`~dashboard.constants.ITERATOR_AGE_SOURCES`)."""
    a = filter_frame(ds, "record_age", f)
    return a[(a["records"] > 0) & a["event_source"].isin(ITERATOR_AGE_SOURCES)]


@answer
def dimension_values(ds: Dataset, col: str, services: tuple[str, ...] = ()) -> list[str]:
    """Sorted distinct values of ``col`` in the outcomes table (restricted to ``services`` when given):
    the options of the sidebar filters."""
    o = ds.table("outcomes")
    if services:
        o = o[o["service"].isin(services)]
    return sorted(str(v) for v in o[col].unique().tolist())


def covers(ds: Dataset, f: Filters) -> bool:
    return ds.start is not None and ds.start <= f.start and f.end <= ds.end  # type: ignore[operator]


PALETTE: tuple[str, ...] = (
    # Plotly's default qualitative colours, then D3's: readable on the light and the dark theme
    "#636EFA", "#EF553B", "#00CC96", "#AB63FA", "#FFA15A", "#19D3F3", "#FF6692", "#B6E880", "#FF97FF", "#FECB52",
    "#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2", "#7F7F7F", "#BCBD22", "#17BECF",
)
"""Series colours, given out in sorted-value order by :func:`colour_map`."""


@answer
def colour_map(ds: Dataset, dimension: str = "operation") -> dict[str, str]:
    """A stable colour per value of ``dimension`` (operation, service, event_source, log_group, library): every
    value of the whole dataset (every in-memory table with that column) sorted, the i-th gets ``PALETTE[i]``
    (cycling). So one operation has one colour on every page whatever the filters. Shared: do not mutate."""
    values: set[str] = set()
    for df in ds.tables.values():
        if dimension in df.columns:
            values.update(str(v) for v in df[dimension].unique().tolist() if v is not None)
    return palette_colours(values)


def palette_colours(values: Iterable[str]) -> dict[str, str]:
    """The colour rule of :func:`colour_map` over ``values`` (distinct strings): sorted, the i-th gets
    ``PALETTE[i]`` (cycling); the dict is in sorted order."""
    return {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(sorted(values))}


# ----------------------------------------------------------------------------- values
@answer
def outcome_totals(ds: Dataset, f: Filters) -> dict[str, int]:
    """Outcome value -> number of records in the window (every Outcome present, 0 if none)."""
    o = filter_frame(ds, "outcomes", f)
    sums = o.groupby("outcome", observed=True)["events"].sum()
    out = {oc.value: 0 for oc in Outcome}
    for k, v in sums.items():
        out[str(k)] = int(v)
    return out


@answer
def signal_value(ds: Dataset, sig: Signal, f: Filters) -> float | None:
    """The tile value of ``sig`` over ``f``.

    COUNT: number of ``sig.outcome`` records. RATE: ``sig.outcome`` records / ``received``
    records (None when nothing was received). AGE: max RecordAge in ms (None without
    records). STUCK: keys stuck (expired IN_PROGRESS) at the window end, see :func:`stuck_keys`.
    """
    if sig.kind is SignalKind.COUNT:
        return float(outcome_totals(ds, f)[sig.counted])
    if sig.kind is SignalKind.RATE:
        t = outcome_totals(ds, f)
        rec = t[Outcome.RECEIVED.value]
        return None if rec == 0 else t[sig.counted] / rec
    if sig.kind is SignalKind.AGE:
        a = iterator_ages(ds, f)
        return None if a.empty or a["max_ms"].isna().all() else float(a["max_ms"].max())
    s = stuck_keys(ds, f, only_expired=True)
    return float(len(s))


def tiles(ds: Dataset, f: Filters, signals: tuple[Signal, ...]) -> list[Tile]:
    """One :class:`Tile` per signal; ``previous`` only when the data covers the previous window.

    STUCK tiles never have a previous value: the ``stuck_keys`` table holds the state at the end of collection
    only, so a key stuck at the end of the previous window and completed (or taken over) since is no longer in
    it; a delta would undercount the previous window.
    """
    prev = f.previous()
    has_prev = covers(ds, prev)
    return [Tile(s, signal_value(ds, s, f),
                 signal_value(ds, s, prev) if has_prev and s.kind is not SignalKind.STUCK else None)
            for s in signals]


def format_value(sig: Signal, v: float | None) -> str:
    """Tile text: counts as integers, rates as percent (2 decimals), ages as ms/s/min."""
    if v is None:
        return "–"
    if sig.kind is SignalKind.RATE:
        return f"{v * 100:.2f}%"
    if sig.kind is SignalKind.AGE:
        return format_ms(v)
    return f"{int(v):,}"


def format_delta(sig: Signal, d: float | None) -> str | None:
    """Delta text for st.metric (signed), None when there is no previous window."""
    if d is None:
        return None
    if sig.kind is SignalKind.RATE:
        return f"{d * 100:+.2f} pp"
    if sig.kind is SignalKind.AGE:
        return ("+" if d >= 0 else "-") + format_ms(abs(d))
    return f"{int(d):+,}"


DURATION_UNITS: tuple[tuple[str, float], ...] = (("ms", 1.0), ("s", 1000.0), ("min", 60_000.0), ("h", 3_600_000.0))
"""(unit, ms per unit), smallest first: every duration the dashboard shows (tiles, axes, tables) uses these."""


def duration_unit(ms: float | None) -> tuple[str, float]:
    """The unit a duration of ``ms`` milliseconds is shown in: ms below 1 s, s below 1 min, min below 1 h, else h.
    For an axis or a table column, pass the largest value: the whole axis/column then uses one unit, the same a
    tile with that value shows."""
    if ms is None or (isinstance(ms, float) and math.isnan(ms)):
        return DURATION_UNITS[0]
    unit = DURATION_UNITS[0]
    for u in DURATION_UNITS:
        if abs(ms) >= u[1]:
            unit = u
    return unit


def format_ms(ms: float | None) -> str:
    """A duration in ms as text in its :func:`duration_unit` ("850 ms", "12.3 s", "6.7 min", "2.1 h")."""
    if ms is None or (isinstance(ms, float) and math.isnan(ms)):
        return "–"
    name, per = duration_unit(ms)
    return f"{ms:.0f} ms" if per == 1.0 else f"{ms / per:.1f} {name}"


def in_unit(values: pd.Series, unit_ms: float | None = None) -> tuple[pd.Series, str]:
    """A column of ms durations converted to one unit (that of its largest value unless ``unit_ms`` is given);
    returns (converted column, unit name) so a table header says the unit once."""
    name, per = duration_unit(float(values.max()) if unit_ms is None and len(values) and values.notna().any()
                              else unit_ms)
    return values / per, name


# ----------------------------------------------------------------------------- series
@answer
def tile_trend(ds: Dataset, sig: Signal, f: Filters) -> pd.DataFrame:
    """The Overview tile's trend: one value per bin (``time``, ``value``) over ``f``, bins by :func:`choose_bin`.

    COUNT: records of the outcome per bin (all operations); RATE: outcome / received per bin (null where nothing
    was received); AGE: max RecordAge (ms) per bin. STUCK has no trend (a state at the window end): empty.
    """
    if sig.kind is SignalKind.STUCK:
        return pd.DataFrame(columns=["time", "value"])
    b = choose_bin(f.start, f.end)
    if sig.kind is SignalKind.AGE:
        a = iterator_ages(ds, f)
        g = a.assign(time=bin_floor(a["time"], b)).groupby("time", as_index=False)["max_ms"].max()
        return g.rename(columns={"max_ms": "value"})
    per = _outcome_bins(ds, f, b)
    zero = pd.Series(0, index=per.index, dtype="int64")
    num = per.get(sig.counted, zero)
    if sig.kind is SignalKind.COUNT:
        value = num
    else:
        rec = per.get(Outcome.RECEIVED.value, zero)
        value = num / rec.where(rec > 0)
    return pd.DataFrame({"time": per.index, "value": value.to_numpy()})


@answer
def _outcome_bins(ds: Dataset, f: Filters, b: timedelta) -> pd.DataFrame:
    """Outcome records per bin: index ``time`` (every bin of the window), one column per outcome present."""
    o = filter_frame(ds, "outcomes", f)
    bins = pd.date_range(pd.Timestamp(f.start).floor(pd.Timedelta(b)), f.end, freq=pd.Timedelta(b),
                         inclusive="left", unit="ms", name="time")
    t = o.assign(time=bin_floor(o["time"], b)).pivot_table(index="time", columns="outcome", values="events",
                                                           aggfunc="sum", observed=True, fill_value=0)
    t.columns = [str(c) for c in t.columns]
    return t.reindex(bins, fill_value=0)


@answer
def timeseries(ds: Dataset, sig: Signal, f: Filters, by: str = "operation") -> tuple[pd.DataFrame, timedelta]:
    """Per-bin values of a COUNT or RATE signal, split by ``by`` (a dimension column).

    Returns (frame with columns ``time``, ``by``, ``value``; the bin width). For RATE, the
    value is numerator/received per bin and split (null where nothing was received).
    """
    b = choose_bin(f.start, f.end)
    o = filter_frame(ds, "outcomes", f)
    o = o.assign(time=bin_floor(o["time"], b))
    num = o[o["outcome"] == sig.counted].groupby(["time", by], as_index=False, observed=True)["events"].sum()
    if sig.kind is SignalKind.COUNT:
        return num.rename(columns={"events": "value"}), b
    den = o[o["outcome"] == Outcome.RECEIVED.value].groupby(["time", by], as_index=False, observed=True)["events"].sum()
    m = den.merge(num, on=["time", by], how="left", suffixes=("_received", "_num")).fillna({"events_num": 0})
    m["value"] = m["events_num"] / m["events_received"].where(m["events_received"] > 0)
    return m[["time", by, "value"]], b


@answer
def record_age_series(ds: Dataset, f: Filters) -> tuple[pd.DataFrame, timedelta]:
    """Max / p95 (max of the 1-minute p95s) / p50 (records-weighted mean of 1-minute p50s) RecordAge per bin, ms.

    Percentiles cannot be merged exactly from 1-minute percentiles, so only ``max_ms`` is
    exact after re-binning; the page says so.
    """
    b = choose_bin(f.start, f.end)
    a = iterator_ages(ds, f)
    a = a.assign(time=bin_floor(a["time"], b), w=a["p50_ms"] * a["records"])
    g = a.groupby("time", as_index=False, observed=True).agg(records=("records", "sum"), max_ms=("max_ms", "max"),
                                              p95_ms=("p95_ms", "max"), w=("w", "sum"))
    g["p50_ms"] = g["w"] / g["records"]
    return g[["time", "records", "p50_ms", "p95_ms", "max_ms"]], b


@answer
def breakdown(ds: Dataset, sig: Signal, f: Filters, by: str) -> pd.DataFrame:
    """Totals of a signal per value of ``by`` (service/operation/event_source), largest first.

    COUNT: ``events``; RATE: ``events``, ``received``, ``rate``; AGE: ``records``, ``max_ms``.
    """
    if sig.kind is SignalKind.AGE:
        a = iterator_ages(ds, f)
        g = a.groupby(by, as_index=False, observed=True).agg(records=("records", "sum"), max_ms=("max_ms", "max"))
        return g.sort_values(["max_ms", by], ascending=[False, True], ignore_index=True)
    o = filter_frame(ds, "outcomes", f)
    num = o[o["outcome"] == sig.counted].groupby(by, as_index=False, observed=True)["events"].sum()
    if sig.kind is SignalKind.RATE:
        den = o[o["outcome"] == Outcome.RECEIVED.value].groupby(by, as_index=False, observed=True)["events"].sum()
        m = den.rename(columns={"events": "received"}).merge(num, on=by, how="left").fillna({"events": 0})
        m["events"] = m["events"].astype("int64")
        m["rate"] = m["events"] / m["received"].where(m["received"] > 0)
        return m[[by, "events", "received", "rate"]].sort_values(["rate", by], ascending=[False, True],
                                                                 ignore_index=True)
    return num.sort_values(["events", by], ascending=[False, True], ignore_index=True)


@answer
def error_codes(ds: Dataset, outcome: str, f: Filters) -> pd.DataFrame:
    """Error code / class totals of one failure outcome from the ``error_codes`` table."""
    e = filter_frame(ds, "error_codes", f)
    e = e[e["outcome"] == outcome]
    g = e.groupby(["error_code", "error_class"], as_index=False, dropna=False, observed=True)["events"].sum()
    return g.sort_values(["events", "error_code"], ascending=[False, True], ignore_index=True)


@answer
def attempt_distribution(ds: Dataset, f: Filters) -> pd.DataFrame:
    """Delivery attempt number -> received records (the attempts table has no time column:
    it covers the whole collection window)."""
    a = filter_frame(ds, "attempts", f, time_col=None)
    return a.groupby("attempt", as_index=False, observed=True)["events"].sum().sort_values("attempt", ignore_index=True)


@answer
def redeliveries(ds: Dataset, f: Filters) -> int:
    """Received records with attempt > 1 in the window (from the ``rates`` table)."""
    return int(filter_frame(ds, "rates", f)["redeliveries"].sum())


# ----------------------------------------------------------------------------- stuck keys
@answer
def stuck_keys(ds: Dataset, f: Filters, *, only_expired: bool = False) -> pd.DataFrame:
    """Keys IN_PROGRESS at the end of the window ``f.end``, oldest claim first.

    A stuck key is current state, not an event in the window: every key of the ``stuck_keys`` table (latest
    status IN_PROGRESS at the end of collection) claimed at or before ``f.end`` was already IN_PROGRESS then
    (its latest claim is the one that never completed), whenever in the past it was claimed. ``age_s``
    (seconds) and ``expired`` (``in_progress_expires_at < f.end``; False when the expiry is unknown) are
    recomputed against ``f.end``. ``f.start`` does not apply. ``only_expired`` keeps the expired ones: the
    stuck keys (the lock timeout passed without a completion: a crash after the claim).
    """
    s = filter_frame(ds, "stuck_keys", f, window=False)
    s = s[s["claimed_at"] <= f.end]
    end = pd.Timestamp(f.end)
    s = s.assign(age_s=(end - s["claimed_at"]).dt.total_seconds(),
                 expired=(s["in_progress_expires_at"] < end).fillna(False).astype(bool))
    if only_expired:
        s = s[s["expired"]]
    return s.sort_values(["claimed_at", "idempotency_key"], ignore_index=True)


# ----------------------------------------------------------------------------- health
HEALTH_COLUMNS = (
    # what identifies the row and its verdict first, then the inputs of the verdict, then the other counts: the
    # first ones fit a 1400 px wide window without horizontal scrolling
    "service", "operation", "health", "reasons", "stuck_keys", "ambiguous_commits", "poison_rate", "retry_rate",
    "conflicts", "timeout_budget_aborts", "store_errors", "received", "succeeded", "duplicates",
    "in_progress_collisions", "retryable_failures", "permanent_failures", "poison_messages", "max_record_age_ms",
    "event_source",
)
_HEALTH_OUTCOMES = {
    "received": Outcome.RECEIVED, "succeeded": Outcome.SUCCEEDED, "duplicates": Outcome.DUPLICATE_COMPLETED,
    "in_progress_collisions": Outcome.DUPLICATE_IN_PROGRESS, "conflicts": Outcome.PAYLOAD_CONFLICT,
    "retryable_failures": Outcome.RETRYABLE_FAILURE, "permanent_failures": Outcome.PERMANENT_FAILURE,
    "poison_messages": Outcome.POISON_MESSAGE, "timeout_budget_aborts": Outcome.TIMEOUT_BUDGET_ABORT,
    "ambiguous_commits": Outcome.AMBIGUOUS_COMMIT, "store_errors": Outcome.STORE_ERROR,
}


@answer
def health_table(ds: Dataset, f: Filters) -> pd.DataFrame:
    """One row per (service, operation): outcome counts, rates, max record age, stuck keys,
    and a health verdict with its reasons.

    CRITICAL: stuck keys > 0, ambiguous commits > 0, or poison rate >= POISON_RATE_CRITICAL.
    WARNING: conflicts, timeout-budget aborts or store errors > 0, or retry rate >= RETRY_RATE_WARNING.
    ``event_source`` lists the sources seen for the operation (comma-separated).
    """
    o = filter_frame(ds, "outcomes", f)
    keys = ["service", "operation"]
    if o.empty:
        return pd.DataFrame(columns=list(HEALTH_COLUMNS))
    piv = o.groupby([*keys, "outcome"], observed=True)["events"].sum().unstack("outcome", fill_value=0)
    t = pd.DataFrame(index=piv.index)
    for col, oc in _HEALTH_OUTCOMES.items():
        t[col] = piv[oc.value].astype("int64") if oc.value in piv.columns else 0
    t["event_source"] = o.groupby(keys, observed=True)["event_source"].agg(lambda s: ", ".join(sorted(set(s))))
    rec = t["received"].where(t["received"] > 0)
    t["poison_rate"] = t["poison_messages"] / rec
    t["retry_rate"] = t["retryable_failures"] / rec
    a = iterator_ages(ds, f)
    t["max_record_age_ms"] = a.groupby(keys, observed=True)["max_ms"].max().reindex(t.index)
    s = stuck_keys(ds, f, only_expired=True)
    t["stuck_keys"] = s.groupby(keys, observed=True).size().reindex(t.index).fillna(0).astype("int64")
    verdicts = [_verdict(r) for r in t.itertuples()]
    t["health"] = [v[0].value for v in verdicts]
    t["reasons"] = [v[1] for v in verdicts]
    t = t.reset_index()
    order = {Health.CRITICAL.value: 0, Health.WARNING.value: 1, Health.OK.value: 2}
    t = t.assign(_o=t["health"].map(order)).sort_values(["_o", "service", "operation"], ignore_index=True)
    return t[list(HEALTH_COLUMNS)]


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _verdict(r) -> tuple[Health, str]:
    """(health, short reasons): short so the reasons column stays narrow in the health table."""
    crit, warn = [], []
    if r.stuck_keys > 0:
        crit.append(_n(r.stuck_keys, "stuck key"))
    if r.ambiguous_commits > 0:
        crit.append(_n(r.ambiguous_commits, "ambiguous commit"))
    if r.poison_rate == r.poison_rate and r.poison_rate >= POISON_RATE_CRITICAL:  # not NaN
        crit.append(f"poison {r.poison_rate * 100:.2f}%")
    if r.conflicts > 0:
        warn.append(_n(r.conflicts, "conflict"))
    if r.timeout_budget_aborts > 0:
        warn.append(_n(r.timeout_budget_aborts, "timeout abort"))
    if r.store_errors > 0:
        warn.append(_n(r.store_errors, "store error"))
    if r.retry_rate == r.retry_rate and r.retry_rate >= RETRY_RATE_WARNING:
        warn.append(f"retry {r.retry_rate * 100:.1f}%")
    h = Health.CRITICAL if crit else Health.WARNING if warn else Health.OK
    return h, ", ".join(crit + warn)
