"""The collection manifest (``<out>/manifest.json``) and the per-window parts kept for incremental collection.

Layout::

    <out>/manifest.json                               what was collected, how complete it is, what it cost
    <out>/tables/<table>.parquet                      the standard tables (same schema as the offline collector)
    <out>/tables/cloudwatch_metrics.parquet           GetMetricData datapoints (--metrics)
    <out>/tables/idempotency_table_stuck.parquet      stuck IN_PROGRESS records from DynamoDB (--idempotency-table)
    <out>/cloudwatch/parts/<table>/<start>-<end>.parquet   one typed piece per collected window (incremental)
    <out>/cloudwatch/scans/<start>-<end>.parquet      the events a shared scan returned for a window (scan_store)

Manifest keys written by this collector (all times epoch seconds unless named ``*_at``, ISO-8601 UTC):
``source`` and ``collector`` ("cloudwatch"), ``collected_at``, ``time_window`` {since, until, window_end} (ISO-8601),
``truncated`` (tables with a capped window), ``generated_at``, ``range`` {start, end} (inclusive), ``region``, ``log_groups``,
``tables`` {name: {rows, status: complete|truncated|failed|partial, windows: {complete, partial, truncated, failed:
[[start, end], ...]}, query_sha256, log_groups_sha256, source: scan|query, conversion, unmerged_duplicates, stats}},
``queries`` {paginated_results, row_limit_per_query, concurrency (the adaptive limit's report), this_run, by_query
(bytes and USD per query of this run), all_runs, price_per_gb_usd}, ``scan`` {log_groups_sha256, filter_sets, parts
(the stored scan windows: window, state, filters, truncated, events), this_run}, ``metrics``, ``idempotency_table``,
``runs``.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from collector.cloudwatch.windows import Window

MANIFEST = "manifest.json"
PARTS_DIR = Path("cloudwatch") / "parts"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def iso_from_epoch_s(seconds: float) -> str:
    """Epoch seconds -> ISO-8601 UTC with milliseconds (``2026-01-05T10:00:00.000Z``)."""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def load(out: Path) -> dict[str, Any]:
    """The existing manifest of ``out`` written by this collector, or {} (none, unreadable, or another source)."""
    p = out / MANIFEST
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("source") == "cloudwatch" else {}


def save(out: Path, manifest: dict[str, Any]) -> Path:
    """Write ``manifest`` atomically to ``<out>/manifest.json``."""
    out.mkdir(parents=True, exist_ok=True)
    p = out / MANIFEST
    tmp = p.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False, default=str) + "\n")
    tmp.replace(p)
    return p


def windows_of(entry: dict[str, Any], state: str) -> list[Window]:
    """Windows recorded under ``tables.<t>.windows.<state>``."""
    return [Window(int(a), int(b)) for a, b in (entry.get("windows", {}).get(state) or [])]


def part_path(out: Path, table: str, w: Window) -> Path:
    return out / PARTS_DIR / table / f"{w.key()}.parquet"
