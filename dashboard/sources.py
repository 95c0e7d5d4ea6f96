"""The same signal from other sources than the idemwatch emitter, for the pages that show the emitter's.

- ``library_signals``: what Powertools for AWS Lambda (Metrics EMF, Logger, idempotency exceptions) and
  aws-embedded-metrics users already emit, with no code change. ``signal`` is an emitter ``Outcome`` value
  where one maps (collector/queries/library_signals.insights), so it lines up with the emitter's outcome
  counts; ``events`` is a sum of metric values (Count metrics) or datapoints.
- ``idempotency_table_stuck``: the read-only DynamoDB scan of the idempotency table, records still
  IN_PROGRESS past their in-progress expiry at scan time (collector/cloudwatch/stuck_keys.py).

The two are never added to the emitter's numbers (a handler with both would be counted twice): each is shown
next to them, labelled with its source. Tables keyed by log group are filtered by service / operation / event
source through the log groups that carry those in the trail (:func:`dashboard.trail.log_groups`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pandas as pd

from dashboard import trail
from dashboard.cache import answer
from dashboard.compute import Filters, bin_floor, choose_bin, covers, filter_frame
from dashboard.data import TABLE_STUCK_SCAN, Dataset

__all__ = ["LIBRARY_LABELS", "Reading", "by_log_group", "library_series", "library_total", "readings",
           "table_stuck", "table_stuck_count"]

LIBRARY_LABELS = {
    "powertools": "Powertools",
    "aws-embedded-metrics": "aws-embedded-metrics",
    "emf": "other EMF",
}
"""``library_signals.library`` value -> the source label shown."""
STUCK_SCAN_LABEL = "DynamoDB scan of the idempotency table"


def label(library: str) -> str:
    return LIBRARY_LABELS.get(library, library)


def by_log_group(ds: Dataset, name: str, f: Filters, *, window: bool = True) -> pd.DataFrame:
    """Rows of a table keyed by ``log_group`` (invocations, library_signals) in the window, restricted to the log
    groups of the selected services / operations / event sources (all rows when nothing is selected, or when the
    trail that maps log groups to them was not collected)."""
    df = filter_frame(ds, name, f, window=window)
    groups = trail.log_groups(ds, f)
    return df if groups is None else df[df["log_group"].isin(groups)]


@answer
def library_total(ds: Dataset, signal: str, f: Filters) -> dict[str, float]:
    """Library -> ``events`` of ``signal`` (an Outcome value or a metric name) in the window, for every library
    that ever reported ``signal`` in the data (0.0 when none in this window), largest first."""
    all_rows = ds.table("library_signals")
    libs = sorted(str(x) for x in all_rows.loc[all_rows["signal"] == signal, "library"].unique())
    if not libs:
        return {}
    d = by_log_group(ds, "library_signals", f)
    sums = d[d["signal"] == signal].groupby("library", observed=True)["events"].sum()
    out = {lib: float(sums.get(lib, 0.0)) for lib in libs}
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


@answer
def library_series(ds: Dataset, signal: str, f: Filters, bin_width: timedelta | None = None
                   ) -> tuple[pd.DataFrame, timedelta]:
    """Per-bin ``events`` of ``signal`` by library: (frame ``time``, ``library``, ``value``; bin width)."""
    b = bin_width or choose_bin(f.start, f.end)
    d = by_log_group(ds, "library_signals", f)
    d = d[d["signal"] == signal]
    d = d.assign(time=bin_floor(d["time"], b), library=d["library"].astype(str).map(label))
    g = d.groupby(["time", "library"], as_index=False, observed=True)["events"].sum()
    return g.rename(columns={"events": "value"}), b


@dataclass(frozen=True)
class Reading:
    """One source's value of a signal: ``source`` label, ``value``, ``previous`` (None without a previous
    window to compare), ``table`` it comes from."""

    source: str
    value: float
    previous: float | None
    table: str


def readings(ds: Dataset, signal: str, f: Filters) -> list[Reading]:
    """The library readings of ``signal`` (an Outcome value) in ``f`` and the window before it."""
    prev = f.previous()
    has_prev = covers(ds, prev)
    before = library_total(ds, signal, prev) if has_prev else {}
    return [Reading(label(lib), v, before.get(lib, 0.0) if has_prev else None, "library_signals")
            for lib, v in library_total(ds, signal, f).items()]


def table_stuck(ds: Dataset) -> pd.DataFrame:
    """The idempotency-table scan's stuck records, most overdue first. Not filtered: the scan has no service,
    operation or time column (it is the table's state at scan time)."""
    s = ds.table(TABLE_STUCK_SCAN)
    return s.sort_values(["overdue_s", "idempotency_key"], ascending=[False, True], ignore_index=True)


def table_stuck_count(ds: Dataset) -> int | None:
    """Records stuck at scan time, None when the idempotency table was not scanned (no table file)."""
    path = ds.data_dir / "tables" / f"{TABLE_STUCK_SCAN}.parquet"
    return len(ds.table(TABLE_STUCK_SCAN)) if path.is_file() else None
