"""How the events table stores its columns on disk: ``@message`` with ZSTD, the nearly-unique text columns
(``constants.UNIQUE_VALUE_COLUMNS``: ids, epoch times, ages) uncompressed, the repeating text columns compressed by
DuckDB's default (DICT_FSST in DuckDB 2.0; not named here, so another release's default passes too), read back as
written."""

from __future__ import annotations

import json
from pathlib import Path

from collector.ingest.constants import HOT_FIELDS, UNIQUE_VALUE_COLUMNS
from collector.ingest.store import EventStore

_N = 3000  # more than one DuckDB vector, so the table has real segments


def _lines() -> bytes:
    out = []
    for i in range(_N):
        out.append(json.dumps({
            "schema_version": "1", "service": "orders", "outcome": ("received", "claimed", "succeeded")[i % 3],
            "idempotency_key": f"order-{i}", "event_id": f"{i:016x}", "function_request_id": f"req-{i // 3}",
            "correlation_id": f"corr-{i}", "record_age_ms": 1000 + i, "in_progress_expires_at_ms": 1767607260003 + i,
            "remaining_time_ms": 30000 - i, "timestamp": f"2026-01-05T10:00:{i % 60:02d}.{i % 1000:03d}Z",
            "message": "received",
        }))
    return ("\n".join(out) + "\n").encode()


def test_unique_value_columns_are_stored_uncompressed_and_the_others_keep_their_compression(tmp_path: Path):
    assert UNIQUE_VALUE_COLUMNS <= set(HOT_FIELDS) | {"@requestId"}
    db = tmp_path / "events.duckdb"
    with EventStore(db) as store:
        store.ingest_bytes(_lines(), "orders.jsonl")
        store.connection.execute("CHECKPOINT")
        storage: dict[str, set[str]] = {}
        for column, compression in store.connection.execute(
                "SELECT column_name, compression FROM pragma_storage_info('events') "
                "WHERE segment_type NOT IN ('VALIDITY')").fetchall():
            storage.setdefault(column, set()).add(compression)
        values = dict(store.connection.execute(
            "SELECT idempotency_key, event_id FROM events WHERE idempotency_key IN ('order-0', 'order-2999')"
        ).fetchall())
    for column in ("idempotency_key", "event_id", "function_request_id", "correlation_id", "record_age_ms",
                   "in_progress_expires_at_ms", "remaining_time_ms"):
        assert storage[column] == {"Uncompressed"}, (column, storage[column])
    assert storage["@message"] == {"ZSTD"}
    for column in ("outcome", "service", "schema_version"):  # repeating values: DuckDB's default (a dictionary)
        assert "Uncompressed" not in storage[column], (column, storage[column])
    assert values == {"order-0": f"{0:016x}", "order-2999": f"{2999:016x}"}
