"""How the results of one standard query over many windows (and batches of log groups) become one table.

Logs Insights aggregates within one query only, so pieces can be combined only where the table allows it:

- ``rows``: one row per log event (``trail``): concatenate. A window may be split at any second.
- ``binned``: rows per 1-minute bin (``bin(1m)``): windows and splits are aligned to 60 s, so every bin is computed
  by exactly one query and pieces are concatenated. Rows with the same key from two log-group batches are summed
  where the value columns are counts (``sum``), else kept apart and counted as ``unmerged_duplicates``.
- ``regroup``: aggregates over the whole range (``attempts``, ``conflicting_keys``): counts are summed, first/last
  seen are min/max, so a window may be split at any second.
- ``whole``: results that depend on the whole range (``stuck_keys``: the latest status of each key): one query over
  the whole collected range, never split; a capped result is flagged truncated.
Unknown tables are ``whole``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import pandas as pd

from collector.cloudwatch.constants import BIN_S
from collector.tables import TABLES, Table


@dataclass(frozen=True)
class MergeSpec:
    """``kind``: rows | binned | regroup | whole. ``keys``: group-by columns; ``agg``: column -> sum|min|max for
    the rest; ``split_align_s``: split granularity (None = never split); ``time_column``: for ordering."""

    kind: str
    keys: tuple[str, ...] = ()
    agg: Mapping[str, str] = field(default_factory=dict)
    time_column: str | None = None

    @property
    def split_align_s(self) -> int | None:
        return {"rows": 1, "binned": BIN_S, "regroup": 1}.get(self.kind)

    @property
    def windowed(self) -> bool:
        """True when the table is collected window by window (incremental); False for ``whole``."""
        return self.kind != "whole"


def _binned(table: str, sums: tuple[str, ...] = ()) -> MergeSpec:
    cols = TABLES[table].column_names
    keys = tuple(c for c in cols if TABLES[table].columns[cols.index(c)][1] in ("TIMESTAMP", "VARCHAR"))
    return MergeSpec("binned", keys, {c: "sum" for c in sums} if sums else {}, time_column="time")


MERGE_SPECS: Mapping[str, MergeSpec] = MappingProxyType({
    "outcomes": _binned("outcomes", ("events",)),
    "record_age": _binned("record_age"),
    "rates": _binned("rates"),
    "error_codes": _binned("error_codes", ("events",)),
    "invocations": _binned("invocations"),
    "library_signals": _binned("library_signals", ("events",)),
    "attempts": MergeSpec("regroup", ("service", "operation", "event_source", "attempt"), {"events": "sum"}),
    "conflicting_keys": MergeSpec("regroup", ("idempotency_key", "service", "operation"),
                                  {"conflicts": "sum", "first_seen": "min", "last_seen": "max"}),
    "stuck_keys": MergeSpec("whole"),
    "trail": MergeSpec("rows", time_column="timestamp"),
})


def spec_for(table: str) -> MergeSpec:
    return MERGE_SPECS.get(table, MergeSpec("whole"))


@dataclass
class MergeResult:
    frame: pd.DataFrame
    unmerged_duplicates: int = 0


def merge_frames(table: Table, spec: MergeSpec, frames: list[pd.DataFrame]) -> MergeResult:
    """Combine typed pieces of ``table`` per ``spec`` (see module docstring); rows sorted by time then keys."""
    frames = [f for f in frames if len(f)]
    if not frames:
        from collector.parquet import to_frame

        return MergeResult(to_frame([], table)[0])
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].reset_index(drop=True)
    dups = 0
    if spec.keys and spec.kind in ("binned", "regroup"):
        keyed = df[list(spec.keys)]
        if keyed.duplicated(keep=False).any():
            if spec.agg:
                df = (df.groupby(list(spec.keys), dropna=False, sort=False)
                      .agg(dict(spec.agg)).reset_index()[list(table.column_names)])
            else:
                dups = int(keyed.duplicated().sum())
    order = [c for c in ([spec.time_column] if spec.time_column else []) + list(spec.keys) if c in df.columns]
    if order:
        df = df.sort_values(order, kind="stable", na_position="first").reset_index(drop=True)
    return MergeResult(df.astype(frames[0].dtypes.to_dict()), dups)
