"""Test helper: a DuckDB ``events`` table (the shared schema) built from plain values.

Lets the engine be exercised without the ingest: each event is a dict with ``message``
(str), ``timestamp`` (epoch ms) and optionally any system field (``@logStream``,
``@type``, ``@duration``...) or ``json`` (dict, stored as ``@json``; by default the message
parsed when it is a JSON object). ``hot`` names fields to materialise as JSON columns, as
the ingest may do for hot contract fields.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from collector.insights.compiler import EVENT_COLUMN_TYPES

__all__ = ["events_connection"]


def events_connection(events: Iterable[dict[str, Any]], log_group: str = "/aws/lambda/test",
                      hot: Sequence[str] = ()):
    """Return a DuckDB connection holding table ``events`` with the given events."""
    import duckdb

    con = duckdb.connect()
    cols = list(EVENT_COLUMN_TYPES.items()) + [(h, "JSON") for h in hot]
    con.execute("CREATE TABLE events (" + ", ".join(f'"{n}" {t}' for n, t in cols) + ")")
    rows = []
    for seq, e in enumerate(events):
        msg = e["message"]
        doc = e.get("json")
        if doc is None and "json" not in e:
            try:
                parsed = json.loads(msg)
                doc = parsed if isinstance(parsed, dict) else None
            except ValueError:
                doc = None
        row = {"@timestamp": e["timestamp"], "@message": msg, "@log": e.get("@log", log_group),
               "@logStream": e.get("@logStream", "stream-1"), "@ingestionTime": e.get("@ingestionTime", e["timestamp"]),
               "@seq": seq, "@json": None if doc is None else json.dumps(doc)}
        for k in ("@type", "@requestId", "@duration", "@billedDuration", "@memorySize", "@maxMemoryUsed",
                  "@initDuration", "@xrayTraceId", "@xraySegmentId"):
            row[k] = e.get(k)
        for h in hot:
            row[h] = json.dumps(doc[h]) if doc is not None and h in doc else None
        rows.append(tuple(row[n] for n, _ in cols))
    if rows:
        con.executemany("INSERT INTO events VALUES (" + ", ".join(["?"] * len(cols)) + ")", rows)
    return con
