"""idemwatch dashboard: a Streamlit app over the collector's tables.

``idemwatch dashboard --data DIR`` serves it; ``serve(data_dir)`` does the same from
Python. The demo fleet lives in :mod:`dashboard.demo`. Importing this package does not
import Streamlit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["DashboardServer", "serve"]

if TYPE_CHECKING:  # pragma: no cover
    from dashboard.serve import DashboardServer, serve


def __getattr__(name: str):
    if name in __all__:
        from dashboard import serve as _serve

        return getattr(_serve, name)
    raise AttributeError(name)
