"""The events INSERTs run with DuckDB's ``preserve_insertion_order`` off (``store._unordered``): each event's order is
its ``@seq``, and the line formats' flags table, which numbers lines by ``rowid``, must still be built in order. So
after any ingest the setting is back on, and several sources in a row (DuckDB's line reader and the Arrow line
pieces, one-line events and joined continuation lines, a streamed console CSV) keep every event's text and order.
The expected events are written out by hand from the files below."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import collector.ingest.store as store_mod
from collector.ingest.store import EventStore


def _setting(store: EventStore) -> bool:
    return bool(store.connection.execute("SELECT current_setting('preserve_insertion_order')").fetchall()[0][0])


def _messages(store: EventStore) -> list[str]:
    return [m for (m,) in store.connection.execute('SELECT "@message" FROM events ORDER BY "@seq"').fetchall()]


@pytest.mark.parametrize("duckdb_reader", [True, False], ids=["duckdb-line-reader", "line-pieces"])
def test_sources_in_a_row_keep_their_order_and_the_setting(tmp_path: Path, duckdb_reader: bool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    if duckdb_reader:  # every plain file through DuckDB's reader, however small
        monkeypatch.setattr(store_mod, "FAST_PATH_MIN_BYTES", 0)
    records = [json.dumps({"timestamp": f"2026-01-05T10:00:{s:02d}.000Z", "outcome": "received", "n": s})
               for s in range(40)]
    (tmp_path / "a.jsonl").write_text("\n".join(records) + "\n")
    # Lambda text: a JSON record, then an [ERROR] line with a two-line traceback, then START/END
    text = ["START RequestId: r1 Version: $LATEST",
            records[0],
            "[ERROR]\t2026-01-05T10:00:01.000Z\tr1\tboom",
            "Traceback (most recent call last):",
            '  File "/var/task/app.py", line 3, in handler',
            "END RequestId: r1"] * 30
    (tmp_path / "b.log").write_text("\n".join(text) + "\n")
    csv = ['"timestamp","message"'] + [f'"{1767607200000 + i}","line {i}"' for i in range(25)]
    (tmp_path / "c.csv").write_text("\n".join(csv) + "\n")
    expected = list(records)
    expected += ["START RequestId: r1 Version: $LATEST", records[0],
                 "[ERROR]\t2026-01-05T10:00:01.000Z\tr1\tboom\nTraceback (most recent call last):\n"
                 '  File "/var/task/app.py", line 3, in handler',
                 "END RequestId: r1"] * 30
    expected += [f"line {i}" for i in range(25)]
    with EventStore(tmp_path / "events.duckdb") as store:
        assert _setting(store)
        for name in ("a.jsonl", "b.log", "c.csv"):
            store.ingest_path(tmp_path / name)
            assert _setting(store), f"preserve_insertion_order left off after {name}"
        assert _messages(store) == expected
