"""JSON field discovery limit: at most ``MAX_DISCOVERED_FIELDS`` fields per event.

A field is a leaf path of the object (``a.b`` for nested keys, ``a.0`` for array elements; an empty
object/array counts as one). Logs Insights discovers at most 200 of them per event; the ingest keeps the
first 200 in document order in ``@json`` and drops the rest (counted ``json_fields_over_200_dropped``).
"""

from __future__ import annotations

from typing import Any

from collector.ingest.constants import MAX_DISCOVERED_FIELDS


def count_fields(value: Any) -> int:
    """Number of leaf fields of a parsed JSON value."""
    if isinstance(value, dict):
        return sum(count_fields(v) for v in value.values()) if value else 1
    if isinstance(value, list):
        return sum(count_fields(v) for v in value) if value else 1
    return 1


def keep_first_fields(obj: dict[str, Any], limit: int = MAX_DISCOVERED_FIELDS) -> tuple[dict[str, Any], int]:
    """``(copy of obj with only its first `limit` leaf fields, number of fields dropped)``."""
    budget = [limit]
    dropped = [0]

    def walk(v: Any) -> tuple[bool, Any]:
        if isinstance(v, dict) and v:
            out: dict[str, Any] = {}
            for k, child in v.items():
                keep, cv = walk(child)
                if keep:
                    out[k] = cv
            return bool(out), out
        if isinstance(v, list) and v:
            items = []
            for child in v:
                keep, cv = walk(child)
                if not keep:
                    break  # keep array positions: a.0, a.1 ... stay the same
                items.append(cv)
            dropped_tail = len(v) - len(items)
            if dropped_tail:
                for child in v[len(items) + 1:]:
                    dropped[0] += count_fields(child)
            return bool(items), items
        if budget[0] > 0:
            budget[0] -= 1
            return True, v
        dropped[0] += 1
        return False, None

    _, kept = walk(obj)
    return (kept if isinstance(kept, dict) else {}), dropped[0]
