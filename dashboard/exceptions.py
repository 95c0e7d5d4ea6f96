"""Dashboard errors."""

from __future__ import annotations


class DashboardError(Exception):
    """Base class of the dashboard's errors."""


class DashboardStartError(DashboardError):
    """``streamlit run`` exited early or never answered its health check."""
