"""Load the collector's tables for the dashboard, cached on the manifest.

Layout read (written by ``collect_local`` / ``collect cloudwatch``)::

    <DATA>/manifest.json
    <DATA>/tables/<name>.parquet      one per table in collector/tables.py

Every table except ``trail`` is loaded into memory once per manifest version (they are
1-minute aggregates: small). ``trail`` has one row per emitter outcome record (up to
millions) and is never loaded whole: :mod:`dashboard.trail` queries the Parquet file
with DuckDB, filtered, per question.

The cache key is a fingerprint of ``manifest.json``'s bytes plus each table file's size
and mtime, so a re-collect (which rewrites the manifest) is picked up on the next rerun
while a click never re-reads anything.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import streamlit as st

from collector.tables import TABLES, Table
from dashboard.constants import MANIFEST_FILE, SOURCE_BIN, TABLES_DIR

__all__ = ["DataStatus", "Dataset", "empty_table", "fingerprint", "load_dataset"]

TRAIL = "trail"
TABLE_STUCK_SCAN = "idempotency_table_stuck"
"""The DynamoDB scan of the idempotency table (``collect cloudwatch --idempotency-table``): optional, so its
absence is not a problem."""


def _optional_tables() -> dict[str, Table]:
    """Tables a collector writes only on request, by name, with their schema from the collector: from
    ``collector.tables.TABLES`` once it lists them, else from the module that writes them."""
    if TABLE_STUCK_SCAN in TABLES:
        return {TABLE_STUCK_SCAN: TABLES[TABLE_STUCK_SCAN]}
    try:
        from collector.cloudwatch.stuck_keys import STUCK_TABLE
    except ImportError:  # pragma: no cover - the CloudWatch part not installed
        return {}
    return {STUCK_TABLE.name: STUCK_TABLE}


OPTIONAL_TABLES: Mapping[str, Table] = MappingProxyType(_optional_tables())
"""Optional table name -> schema (read like the standard ones; missing = empty, not a problem)."""
SCHEMAS: Mapping[str, Table] = MappingProxyType({**TABLES, **OPTIONAL_TABLES})
"""Every table the dashboard reads: the standard ones and the optional ones."""
NOT_SET = "(none)"
"""Shown for a null service/operation/event source (e.g. a record without ``event_source``)."""
_DIMENSION_COLUMNS = ("service", "operation", "event_source")
_CATEGORY_COLUMNS = (*_DIMENSION_COLUMNS, "outcome", "log_group", "error_class", "library", "signal")
"""Low-cardinality columns held as pandas categoricals: filters and group-bys on 100k-row
tables stay in the millisecond range."""
DATA_VERSIONS = 4
"""Loaded datasets kept (``st.cache_resource``): a few data directories or versions open at once."""


class DataStatus:
    """Why a data directory cannot be shown (values of :attr:`Dataset.status`)."""

    OK = "ok"
    NO_DIR = "no-dir"
    NO_TABLES = "no-tables"
    EMPTY = "empty"


@dataclass(frozen=True)
class Dataset:
    """The tables of one data directory at one manifest version.

    - ``tables``: name -> DataFrame for every standard table except ``trail``; a missing
      table is an empty frame with the schema's columns. ``TIMESTAMP`` columns are naive
      ``datetime64[ms]`` in UTC; null service/operation/event source read as ``NOT_SET``.
    - ``trail_path``: the trail Parquet file, or None when absent.
    - ``start``/``end``: the data window, ``end`` exclusive (last 1-minute bin + 1 minute),
      None when there is no time-binned row.
    - ``problems``: human-readable, one per table that was missing or malformed (nothing
      is dropped silently).
    """

    data_dir: Path
    fingerprint: str
    status: str
    manifest: Mapping[str, Any] | None = None
    tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    trail_path: Path | None = None
    trail_rows: int = 0
    start: datetime | None = None
    end: datetime | None = None
    problems: tuple[str, ...] = ()

    def table(self, name: str) -> pd.DataFrame:
        """The named table (an empty frame with the right columns when it was not collected)."""
        if name not in SCHEMAS or name == TRAIL:
            raise KeyError(f"not an in-memory table: {name!r}")
        t = self.tables.get(name)  # not .get(name, empty_table(name)): that builds an empty frame on every call
        return t if t is not None else empty_table(name)

    @property
    def ok(self) -> bool:
        return self.status == DataStatus.OK


def empty_table(name: str) -> pd.DataFrame:
    """An empty DataFrame with the columns (and pandas dtypes) of standard table ``name``."""
    return _coerce(pd.DataFrame({c: pd.Series([], dtype=object) for c in SCHEMAS[name].column_names}), name)


def fingerprint(data_dir: Path) -> str:
    """Cache key of a data directory: sha256 over manifest bytes and table file stats.

    Cheap (one small read and a few ``stat`` calls); called on every rerun.
    """
    h = hashlib.sha256()
    manifest = data_dir / MANIFEST_FILE
    try:
        h.update(manifest.read_bytes())
    except OSError:
        h.update(b"no-manifest")
    tables = data_dir / TABLES_DIR
    for name in sorted(SCHEMAS):
        p = tables / f"{name}.parquet"
        try:
            st = p.stat()
            h.update(f"{name}:{st.st_size}:{st.st_mtime_ns};".encode())
        except OSError:
            h.update(f"{name}:-;".encode())
    return h.hexdigest()[:16]


def load_dataset(data_dir: Path | str) -> Dataset:
    """Load (or return the cached) :class:`Dataset` for ``data_dir``.

    Never raises for missing or malformed data: the returned ``status`` and ``problems``
    say what is wrong, and the UI shows how to get data instead of a traceback.
    """
    data_dir = Path(data_dir).expanduser().resolve()
    if not data_dir.is_dir():
        return Dataset(data_dir=data_dir, fingerprint="", status=DataStatus.NO_DIR)
    return _load_version(str(data_dir), fingerprint(data_dir))


@st.cache_resource(max_entries=DATA_VERSIONS, show_spinner=False)
def _load_version(data_dir: str, fp: str) -> Dataset:
    """One data version, loaded once and shared by every session (never copied: a page must not change it)."""
    return _load(Path(data_dir), fp)


def _load(data_dir: Path, fp: str) -> Dataset:
    problems: list[str] = []
    manifest: dict[str, Any] | None = None
    mpath = data_dir / MANIFEST_FILE
    if mpath.is_file():
        try:
            manifest = json.loads(mpath.read_text(encoding="utf-8"))
            if not isinstance(manifest, dict):
                problems.append(f"{MANIFEST_FILE}: not a JSON object; ignored")
                manifest = None
        except (OSError, ValueError) as exc:
            problems.append(f"{MANIFEST_FILE}: unreadable ({exc}); ignored")
    else:
        problems.append(f"{MANIFEST_FILE} is missing")

    tdir = data_dir / TABLES_DIR
    tables: dict[str, pd.DataFrame] = {}
    found = 0
    for name in SCHEMAS:
        if name == TRAIL:
            continue
        path = tdir / f"{name}.parquet"
        if not path.is_file():
            if name not in OPTIONAL_TABLES:
                problems.append(f"table {name!r} was not collected ({path.name} missing)")
            tables[name] = empty_table(name)
            continue
        found += 1
        try:
            df = pd.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - any corrupt parquet: report it, show the rest
            problems.append(f"table {name!r}: unreadable ({type(exc).__name__}: {exc})")
            tables[name] = empty_table(name)
            continue
        missing = [c for c in SCHEMAS[name].column_names if c not in df.columns]
        if missing:
            problems.append(f"table {name!r}: missing columns {missing}; table ignored")
            tables[name] = empty_table(name)
            continue
        df = _coerce(df[list(SCHEMAS[name].column_names)], name)
        if "time" in df.columns:  # sorted by bin so a time window is a binary-search slice
            df = df.sort_values("time", kind="stable", ignore_index=True)
        tables[name] = df

    trail_file = tdir / f"{TRAIL}.parquet"
    trail_path: Path | None = trail_file
    trail_rows = 0
    if trail_file.is_file():
        found += 1
        try:
            meta = pq.read_metadata(trail_file)
            trail_rows = meta.num_rows
            names = set(meta.schema.names)
            missing = [c for c in TABLES[TRAIL].column_names if c not in names]
            if missing:
                problems.append(f"table 'trail': missing columns {missing}; events explorer disabled")
                trail_path = None
        except Exception as exc:  # noqa: BLE001 - same: report, never crash the page
            problems.append(f"table 'trail': unreadable ({type(exc).__name__}: {exc})")
            trail_path, trail_rows = None, 0
    else:
        problems.append("table 'trail' was not collected (trail.parquet missing)")
        trail_path = None

    if found == 0:
        return Dataset(data_dir=data_dir, fingerprint=fp, status=DataStatus.NO_TABLES, manifest=manifest,
                       problems=tuple(problems))

    # library_signals too: a fleet on Powertools alone has no emitter records and still has a data window
    times = [tables[n]["time"] for n in ("outcomes", "record_age", "rates", "error_codes", "invocations",
                                         "library_signals") if len(tables[n])]
    if times:
        all_t = pd.concat(times)
        start = all_t.min().to_pydatetime()
        end = (all_t.max() + SOURCE_BIN).to_pydatetime()
        status = DataStatus.OK
    else:
        start = end = None
        status = DataStatus.EMPTY
    return Dataset(data_dir=data_dir, fingerprint=fp, status=status, manifest=manifest, tables=tables,
                   trail_path=trail_path, trail_rows=trail_rows, start=start, end=end, problems=tuple(problems))


def _coerce(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """Give a table the pandas dtypes its DuckDB schema implies (timestamps naive UTC, ms)."""
    out = {}
    for col, typ in SCHEMAS[name].columns:
        s = df[col]
        if typ == "TIMESTAMP":
            s = pd.to_datetime(s, utc=True).dt.tz_localize(None).astype("datetime64[ms]")
        elif typ == "BIGINT":
            s = pd.to_numeric(s, errors="coerce").fillna(0).astype("int64")
        elif typ == "DOUBLE":
            s = pd.to_numeric(s, errors="coerce").astype("float64")
        elif typ == "BOOLEAN":
            s = s.astype("boolean").fillna(False).astype(bool)
        else:
            s = s.astype("object").where(s.notna(), None)
            if col in _DIMENSION_COLUMNS:
                s = s.fillna(NOT_SET).astype(str)
            if col in _CATEGORY_COLUMNS:
                s = s.astype("category")
        out[col] = s.reset_index(drop=True)
    return pd.DataFrame(out, columns=list(SCHEMAS[name].column_names))


def manifest_summary(manifest: Mapping[str, Any] | None) -> dict[str, str]:
    """A few manifest facts for the sidebar (collector, when, data window, sources, what the
    ingest skipped or repaired, truncation), tolerant of fields a collector does not write."""
    if not manifest:
        return {}
    out: dict[str, str] = {}
    for k in ("collector", "collected_at"):
        if manifest.get(k):
            out[k] = str(manifest[k])
    tw = manifest.get("time_window")
    if isinstance(tw, Mapping) and (tw.get("data_start") or tw.get("data_end")):
        out["data"] = f"{tw.get('data_start')} .. {tw.get('data_end')}"
    src = manifest.get("sources")
    if isinstance(src, list):
        out["sources"] = f"{len(src)}"
    ing = manifest.get("ingest")
    if isinstance(ing, Mapping):
        out["log events"] = f"{ing.get('events', 0):,}"
        out["skipped lines"] = f"{ing.get('skipped', 0):,}"
        if ing.get("repaired"):
            out["repaired lines"] = f"{ing['repaired']:,}"
        reasons = ing.get("by_reason")
        if isinstance(reasons, Mapping) and reasons:
            out["skipped by reason"] = ", ".join(f"{r}: {n}" for r, n in reasons.items())
    truncated = [name for name, t in (manifest.get("tables") or {}).items()
                 if isinstance(t, Mapping) and t.get("truncated")]
    if truncated or manifest.get("truncated"):
        out["truncated"] = ", ".join(truncated) or "yes"
    return out


def skipped_lines(manifest: Mapping[str, Any] | None) -> int:
    """Lines the collector could not ingest (0 when the manifest does not say)."""
    ing = (manifest or {}).get("ingest")
    return int(ing.get("skipped", 0) or 0) if isinstance(ing, Mapping) else 0
