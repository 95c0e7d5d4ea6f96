"""Sidebar panel and automatic refresh for a dashboard that collects from CloudWatch (``dashboard.cloudwatch_source``).

Runs only when ``$IDEMWATCH_CLOUDWATCH_SOURCE`` is set; otherwise every function here is a no-op and the dashboard
behaves exactly as over a plain data directory. Data reloads itself: a collection rewrites ``manifest.json`` and the
tables, which changes the fingerprint ``dashboard.data.load_dataset`` caches on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from dashboard.cloudwatch_source import (
    CloudWatchSource,
    CollectionBusyError,
    collect_now,
    configured_source,
    last_failure,
    refresh_due,
    source_status,
)

__all__ = ["BUTTON_KEY", "PANEL_KEY", "auto_refresh", "cost_caption", "panel", "refresh_is_due", "source"]

BUTTON_KEY = "cw_collect_now"
PANEL_KEY = "cw_source"
_FLASH = "_idemwatch_cw_flash"
"""Session-state slot for the outcome of the last button click (shown after the rerun that reloads the data)."""


def source() -> CloudWatchSource | None:
    """The configured source, None when the dashboard does not collect from CloudWatch. A malformed configuration
    is shown as an error in the sidebar (and treated as not configured)."""
    try:
        return configured_source()
    except ValueError as exc:
        from dashboard.ui import md_escape

        st.sidebar.error(md_escape(exc))
        return None


def _read_manifest(data_dir: Path) -> dict[str, Any] | None:
    import json

    try:
        m = json.loads((data_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return m if isinstance(m, dict) else None


def refresh_is_due(src: CloudWatchSource, data_dir: Path) -> bool:
    """True when ``src`` wants a collection now (``refresh_every_s`` set and the data older than that)."""
    return refresh_due(src, _read_manifest(data_dir), data_dir)


def auto_refresh(src: CloudWatchSource, data_dir: Path) -> None:
    """With ``refresh_every_s``: collect before the data is loaded when it is older than that (``refresh_due``).
    Errors are not raised: the panel shows the last failure."""
    if not refresh_is_due(src, data_dir):
        return
    _collect(src, data_dir, "Data older than the refresh interval: collecting from CloudWatch…")


def _collect(src: CloudWatchSource, data_dir: Path, label: str, where: Any = None) -> tuple[bool, str]:
    """One collection under a spinner (in ``where``, default the sidebar); returns (ok, one-line summary or
    error)."""
    from collector.cloudwatch import CloudWatchCollectorError

    try:
        with where if where is not None else st.sidebar, st.spinner(label):
            m = collect_now(src, data_dir)
    except (CloudWatchCollectorError, CollectionBusyError) as exc:
        return False, str(exc)
    run = m["queries"]["this_run"]
    return True, f"collected from CloudWatch: {run['queries']} queries, ${run['cost_usd']:.4f}"


def panel(src: CloudWatchSource, data_dir: Path, manifest: Any, where: Any = None) -> None:
    """The "Source: CloudWatch" box (in ``where``, a sidebar container; default the sidebar): log groups, last
    collection, cost so far, the "Collect now from CloudWatch" button. A click collects once (incremental) and reruns
    the page so it reads the new tables."""
    from dashboard.ui import md_escape

    s = source_status(src, manifest)
    box = (where if where is not None else st.sidebar).container(key=PANEL_KEY, border=True)
    box.markdown("**Source: CloudWatch Logs Insights**")
    box.caption("log groups: " + md_escape(", ".join(s.log_groups)))
    if s.region:
        box.caption(f"region: {md_escape(s.region)}")
    when = s.collected_at.strftime("%Y-%m-%d %H:%M:%S UTC") if s.collected_at else "never"
    box.caption(f"last collected: {when}")
    box.caption(cost_caption(s.cost_usd, s.bytes_scanned, s.runs))
    if src.refresh_every_s:
        box.caption(f"refresh: when the data is older than {_fmt_s(src.refresh_every_s)}")
    if s.incomplete:
        box.warning("incomplete tables (see manifest.json): " + md_escape(", ".join(s.incomplete)))
    flash = st.session_state.pop(_FLASH, None)
    if flash:
        kind, text = flash
        (box.success if kind == "ok" else box.error)(md_escape(text))
    else:
        failed = last_failure(data_dir)
        if failed is not None:
            box.error("last collection failed: " + md_escape(failed[1]))
    if box.button("Collect now from CloudWatch", key=BUTTON_KEY, icon=":material/cloud_download:",
                  help="Run one incremental collection: only windows not collected yet, and recent ones that may still "
                       "receive late events, are queried."):
        ok, text = _collect(src, data_dir, "Collecting from CloudWatch…", box)
        st.session_state[_FLASH] = ("ok" if ok else "error", text)
        st.rerun()


def cost_caption(cost_usd: float, bytes_scanned: int, runs: int) -> str:
    """``Logs Insights cost so far: $0.0123 (2.5 GB scanned, 3 runs)``; bytes in binary units (AWS bills GB = 2^30
    bytes), cost with 4 decimals (below $0.0001 shows as $0.0000: the bytes say how little was scanned)."""
    size = float(bytes_scanned)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            break
        size /= 1024
    scanned = f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
    return f"Logs Insights cost so far: ${cost_usd:.4f} ({scanned} scanned, {runs} run{'s' if runs != 1 else ''})"


def _fmt_s(s: int) -> str:
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60)):
        if s % n == 0:
            return f"{s // n}{unit}"
    return f"{s}s"
