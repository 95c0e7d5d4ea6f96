"""Lambda health from the ``invocations`` table (one row per 1-minute bin and log group, from the
Lambda REPORT lines: collector/queries/invocations.insights).

Durations are ms, memory MB (10^6 bytes, as the collector computes it). Re-binned figures: counts add up;
``avg_duration_ms`` is the invocation-weighted mean of the 1-minute means and ``avg_init_duration_ms`` the
cold-start-weighted one (both exact); p95 is the largest 1-minute p95 (an upper bound: percentiles do not
merge); maxima are exact; ``memory_size_mb`` is the largest configured size; ``peak_memory_pct`` is the
largest 1-minute ``max_memory_used_mb / memory_size_mb`` (0..1; NaN where no size was reported). Columns the
collector adds to the table later are carried along: counts (BIGINT) summed, other numbers (DOUBLE) by their
maximum.
"""

from __future__ import annotations

from datetime import timedelta

import pandas as pd

from collector.tables import TABLES
from dashboard.cache import answer
from dashboard.compute import Filters, bin_floor, choose_bin
from dashboard.sources import by_log_group

__all__ = ["COLUMNS", "COUNT_COLUMNS", "per_log_group", "series", "totals"]

_SCHEMA = dict(TABLES["invocations"].columns)
COLUMNS = tuple(_SCHEMA)
"""The invocations table's columns (collector/tables.py)."""
COUNT_COLUMNS = tuple(c for c, t in _SCHEMA.items() if t == "BIGINT")
"""Columns summed over bins and log groups (invocations, cold_starts, timeouts, ...)."""
_MEANS = {"avg_duration_ms": "invocations", "avg_init_duration_ms": "cold_starts"}
"""Mean column -> the count it is a mean over (its weight when bins merge)."""
_MAX_COLUMNS = (*(c for c, t in _SCHEMA.items() if t == "DOUBLE" and c not in _MEANS), "peak_memory_pct")
"""Columns merged by their maximum (p95 and max duration, peak memory, max init duration, memory size, ...)."""
_DERIVED = ("cold_start_rate", *_MEANS)


def _merge(d: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    # a mean is NaN in a bin without its count (no cold start: no init duration), so weights skip NaN
    w = {f"_w_{m}": (d[m] * d[n]).where(d[n] > 0, 0.0) for m, n in _MEANS.items()}
    d = d.assign(**w, peak_memory_pct=d["max_memory_used_mb"] / d["memory_size_mb"].where(d["memory_size_mb"] > 0))
    sums = (*COUNT_COLUMNS, *w)
    g = d.groupby(keys, as_index=False, observed=True).agg(
        **{c: (c, "sum") for c in sums}, **{c: (c, "max") for c in _MAX_COLUMNS}) if keys else d.agg(
        {**{c: "sum" for c in sums}, **{c: "max" for c in _MAX_COLUMNS}}).to_frame().T
    for m, n in _MEANS.items():
        g[m] = g[f"_w_{m}"] / g[n].where(g[n] > 0)
    g["cold_start_rate"] = g["cold_starts"] / g["invocations"].where(g["invocations"] > 0)
    return g.drop(columns=list(w))


@answer
def totals(ds, f: Filters) -> dict[str, float | None]:
    """Whole-window figures: every count column summed, ``avg_duration_ms`` and ``avg_init_duration_ms``
    (weighted), ``cold_start_rate`` (cold starts / invocations), the max columns (``peak_memory_pct`` included)
    by their maximum; None where there is no invocation (or, for the init and memory-size figures, no cold
    start / no Memory Size)."""
    d = by_log_group(ds, "invocations", f)
    if d.empty:
        return {c: None for c in (*COUNT_COLUMNS, *_MAX_COLUMNS, *_DERIVED)}
    row = _merge(d, []).iloc[0]
    return {k: (None if pd.isna(v) else float(v)) for k, v in row.items()}


@answer
def per_log_group(ds, f: Filters) -> pd.DataFrame:
    """One row per log group (most invocations first): counts first, then rates, durations, init durations
    and memory (used, size, peak share)."""
    d = by_log_group(ds, "invocations", f)
    cols = ["log_group", *COUNT_COLUMNS, "cold_start_rate", "avg_duration_ms", "p95_duration_ms",
            "max_duration_ms", "avg_init_duration_ms", "max_init_duration_ms", "max_memory_used_mb",
            "memory_size_mb", "peak_memory_pct"]
    cols += [c for c in (*_DERIVED, *_MAX_COLUMNS) if c not in cols]  # columns a later collector adds
    if d.empty:
        return pd.DataFrame(columns=cols)
    g = _merge(d, ["log_group"])
    g["log_group"] = g["log_group"].astype(str)
    return g[cols].sort_values(["invocations", "log_group"], ascending=[False, True], ignore_index=True)


@answer
def series(ds, f: Filters) -> tuple[pd.DataFrame, timedelta]:
    """Per bin and log group, the same columns as :func:`per_log_group` plus ``time``; and the bin width."""
    b = choose_bin(f.start, f.end)
    d = by_log_group(ds, "invocations", f)
    d = d.assign(time=bin_floor(d["time"], b))
    if d.empty:
        return pd.DataFrame(columns=["time", "log_group", *COUNT_COLUMNS, *_DERIVED, *_MAX_COLUMNS]), b
    g = _merge(d, ["time", "log_group"])
    g["log_group"] = g["log_group"].astype(str)
    return g.sort_values(["time", "log_group"], ignore_index=True), b
