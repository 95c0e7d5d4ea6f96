"""Links from a key, event id or request id anywhere in the dashboard into the Events explorer.

One place builds them (every table with an id column passes :func:`explorer_targets` to ``ui.table``), so a page
never spells an explorer URL itself. A click on an id opens the explorer in the same tab with the page's time range
and filters kept (``urlstate.params``) and the id as its search; the values travel as query parameters that
Streamlit percent-encodes, so an untrusted id can never change where the link leads.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import urlstate

__all__ = ["EXPLORER_PAGE", "ID_FIELDS", "explorer_params", "explorer_targets", "id_columns"]

EXPLORER_PAGE = "app_pages/explorer.py"
"""The Events explorer's page file (app.py registers it)."""
ID_FIELDS: dict[str, str] = {
    "idempotency_key": "Idempotency key",
    "key": "Idempotency key",
    "event_id": "Event id",
    "correlation_id": "Correlation id",
    "function_request_id": "Request id",
    "last_request_id": "Request id",
}
"""Column name -> explorer search field label (``dashboard.trail.SEARCH_FIELDS``) of the id it holds."""


def explorer_params(field: str, value: Any) -> dict[str, list[str]] | None:
    """Query parameters of the explorer searching ``value`` in ``field`` (a search field label) with this run's time
    range and filters; None for no value (nothing to search)."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or str(value) == "":
        return None
    return urlstate.params(field=[field], q=[str(value)])


def explorer_targets(df: pd.DataFrame) -> dict[str, Any]:
    """Column -> ``ui.Target`` for every id column of ``df`` (:data:`ID_FIELDS`)."""
    def target(col: str, field: str):
        def go(row: pd.Series) -> tuple[str, dict[str, list[str]]] | None:
            p = explorer_params(field, row[col])
            return None if p is None else (EXPLORER_PAGE, p)
        return go

    return {col: target(col, field) for col, field in ID_FIELDS.items() if col in df.columns}


def id_columns(df: pd.DataFrame, column_config: dict[str, Any] | None = None) -> dict[str, Any]:
    """``column_config`` with each id column of ``df`` labelled as a link into the explorer (its header marked ↗,
    its help saying a click opens the id's trail). A label given in ``column_config`` is kept."""
    cfg = dict(column_config or {})
    for col, field in ID_FIELDS.items():
        if col not in df.columns:
            continue
        given = cfg.get(col)
        label = (given.get("label") if isinstance(given, dict) else None) or col.replace("_", " ")
        width = given.get("width") if isinstance(given, dict) else None
        cfg[col] = st.column_config.TextColumn(f"{label} ↗", width=width or "medium",
                                               help=f"Click a {field.lower()} to open its trail in the Events "
                                                    "explorer (same tab, same time range and filters).")
    return cfg
