"""ISO-8601 text to epoch milliseconds, for the values the ingest reads in Python (console CSV cells, event dicts)."""

from __future__ import annotations

import re
from datetime import UTC, datetime


def iso_to_ms(text: str) -> int | None:
    """Epoch ms of an ISO-8601 timestamp (``Z`` or offset, optional fraction, ``,`` as decimal mark); a time without a
    zone is UTC. None when ``text`` is not such a time."""
    s = text.strip().replace(",", ".")
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    s = re.sub(r"([+-]\d\d)(\d\d)$", r"\1:\2", s)
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return round(dt.timestamp() * 1000)
