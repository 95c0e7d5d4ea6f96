"""The standard queries: ``collector/queries/<table>.insights``, one per table of ``collector.tables.TABLES``.

Both collectors (local and CloudWatch) load them here, with one rule for a missing file: every requested table must
have its query file, else ``MissingQueryError``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from collector.exceptions import MissingQueryError
from collector.tables import TABLES

__all__ = ["QUERIES_DIR", "load_standard_queries", "query_added_columns"]

QUERIES_DIR = Path(__file__).resolve().parent / "queries"
_ADDED = re.compile(r"^#\s*columns added by collect_local:\s*(.+)$", re.MULTILINE)


def load_standard_queries(names: Sequence[str] | None = None, directory: Path = QUERIES_DIR) -> dict[str, str]:
    """``{table name: query text}`` for ``names`` (default: every standard table, in ``TABLES`` order).

    Raises:
        MissingQueryError: a name is not a standard table, or its ``<name>.insights`` file does not exist.
    """
    out: dict[str, str] = {}
    for name in (list(names) if names else list(TABLES)):
        if name not in TABLES:
            raise MissingQueryError(f"unknown table {name!r}: not in collector/tables.py")
        p = Path(directory) / f"{name}.insights"
        if not p.is_file():
            raise MissingQueryError(f"no standard query for table {name!r} ({p} missing)")
        out[name] = p.read_text(encoding="utf-8")
    return out


def query_added_columns(text: str) -> tuple[str, ...]:
    """Columns a query header says the collector adds (``# columns added by collect_local: a, b``)."""
    m = _ADDED.search(text)
    return tuple(c.strip() for c in m.group(1).split(",")) if m else ()

