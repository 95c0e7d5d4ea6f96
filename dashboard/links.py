"""Links from a key, event id or request id anywhere in the dashboard into the Events explorer.

One place builds them (every table with an id column calls :func:`explorer_links`), so a page never
spells an explorer URL itself. The URL is relative (``explorer?field=...&q=...``): it works under any
base path a proxy serves the app at, and the value is percent-encoded, so an untrusted id can never
change the link's target (it is always the explorer page of this server).
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

__all__ = ["ID_FIELDS", "explorer_links", "explorer_url"]

EXPLORER_PATH = "explorer"
"""URL path of the Events explorer page (app.py registers it under this path)."""
ID_FIELDS: dict[str, str] = {
    "idempotency_key": "Idempotency key",
    "key": "Idempotency key",
    "event_id": "Event id",
    "correlation_id": "Correlation id",
    "function_request_id": "Request id",
    "last_request_id": "Request id",
}
"""Column name -> explorer search field label (``dashboard.trail.SEARCH_FIELDS``) of the id it holds."""
_DISPLAY = r"[?&]q=([^&]*)"
"""The grid shows the link's ``q`` parameter (the id, percent-decoded by the grid), not the URL."""


def explorer_url(field: str, value: Any) -> str | None:
    """Relative URL of the explorer searching ``value`` in ``field`` (a search field label); None for no value."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or str(value) == "":
        return None
    return f"{EXPLORER_PATH}?{urlencode({'field': field, 'q': str(value)})}"


def explorer_links(df: pd.DataFrame, column_config: dict[str, Any] | None = None) -> tuple[pd.DataFrame, dict]:
    """``df`` with every id column (:data:`ID_FIELDS`) turned into explorer links, and the column config
    (``st.column_config.LinkColumn`` per linked column, other entries of ``column_config`` kept; a label
    given there for a linked column is kept too). Returns a new frame; ``df`` is not changed."""
    cfg = dict(column_config or {})
    out = df.copy()
    for col, field in ID_FIELDS.items():
        if col not in out.columns:
            continue
        out[col] = [explorer_url(field, v) for v in out[col].tolist()]
        label = (cfg.get(col) or {}).get("label")  # a ColumnConfig is a dict
        cfg[col] = st.column_config.LinkColumn(label or col, display_text=_DISPLAY,
                                               help=f"Opens the Events explorer on this {field.lower()}.")
    return out, cfg
