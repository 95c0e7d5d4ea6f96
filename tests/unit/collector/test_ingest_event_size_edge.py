"""The CloudWatch event size at the byte: a line whose message (the line without its ``\\n``, or ``\\r\\n`` in a CRLF
file) is longer than ``MAX_EVENT_BYTES`` is cut to it and counted ``event_truncated_over_1mb``; one at the limit is
stored whole, uncounted. Checked at limit-1, limit, limit+1, limit+2, with and without a final newline, on both paths a
plain line file can take: DuckDB's line reader (a file of at least ``FAST_PATH_MIN_BYTES``) and the Arrow line table
(a smaller file, or a gzip one); and for the Lambda text format, framed in Python."""

from __future__ import annotations

import gzip
import json

import pytest

import collector.ingest.store as store_mod
from collector.ingest import MAX_EVENT_BYTES, EventStore, Reason
from collector.ingest.store import FAST_PATH_MIN_BYTES
from collector.ingest.types import LogFormat

_HEAD = json.dumps({"timestamp": "2026-01-05T10:00:00.000Z", "outcome": "received", "pad": "p" * 200}) + "\n"


def _write(path, body_bytes: int, *, fast: bool, final_newline: bool, compress: bool = False,
           eol: str = "\n") -> None:
    """JSON lines (enough of them for the fast path when ``fast``), then one line of ``body_bytes`` ASCII bytes."""
    n_head = FAST_PATH_MIN_BYTES // len(_HEAD) + 10 if fast else 3
    data = (_HEAD.replace("\n", eol) * n_head + "z" * body_bytes + (eol if final_newline else "")).encode()
    path.write_bytes(gzip.compress(data, compresslevel=1) if compress else data)


def _ingest(path, monkeypatch):
    """Ingest ``path``; returns (report, stored length of the last event, whether the Arrow line table was built)."""
    built = []
    real = store_mod.line_table
    monkeypatch.setattr(store_mod, "line_table", lambda *a, **k: built.append(1) or real(*a, **k))
    store = EventStore()
    rep = store.ingest_path(path)
    ((length,),) = store.connection.sql('SELECT strlen("@message") FROM events ORDER BY "@seq" DESC LIMIT 1').fetchall()
    return rep, length, bool(built)


@pytest.mark.parametrize("final_newline", [True, False], ids=["newline", "no-newline"])
@pytest.mark.parametrize("over", [-1, 0, 1, 2], ids=["limit-1", "limit", "limit+1", "limit+2"])
@pytest.mark.parametrize("path_kind", ["duckdb-reader", "arrow-lines", "gzip"])
def test_a_line_at_the_event_size(tmp_path, monkeypatch, path_kind: str, over: int, final_newline: bool) -> None:
    p = tmp_path / "fn.jsonl"
    _write(p, MAX_EVENT_BYTES + over, fast=path_kind == "duckdb-reader", final_newline=final_newline,
           compress=path_kind == "gzip")
    rep, length, arrow = _ingest(p, monkeypatch)
    assert length == min(MAX_EVENT_BYTES + over, MAX_EVENT_BYTES)
    assert rep.by_reason.get(Reason.TRUNCATED_OVER_1MB, 0) == (1 if over > 0 else 0)
    # the DuckDB reader takes a large plain file whose lines all fit and end with "\n"; one line over, or a last line
    # without its "\n" (it may still be being written), sends it to the line pieces
    assert arrow is (path_kind != "duckdb-reader" or over > 0 or not final_newline)
    head_lines = FAST_PATH_MIN_BYTES // len(_HEAD) + 10 if path_kind == "duckdb-reader" else 3
    assert rep.events == head_lines + 1


@pytest.mark.parametrize("over", [0, 1, 2])
def test_crlf_file_counts_the_message_without_its_crlf(tmp_path, monkeypatch, over: int) -> None:
    """In a CRLF file the ``\\r\\n`` is the terminator: a message of exactly the limit plus ``\\r\\n`` is whole."""
    p = tmp_path / "fn.jsonl"
    _write(p, MAX_EVENT_BYTES + over, fast=False, final_newline=True, eol="\r\n")
    rep, length, _ = _ingest(p, monkeypatch)
    assert length == MAX_EVENT_BYTES
    assert rep.by_reason.get(Reason.TRUNCATED_OVER_1MB, 0) == (1 if over > 0 else 0)


def test_a_trailing_cr_that_is_content_counts_as_a_byte(tmp_path, monkeypatch) -> None:
    """Not a CRLF file (one ``\\r\\n`` among many ``\\n`` lines): a ``\\r`` before the ``\\n`` is message content, so a
    message of limit bytes plus that ``\\r`` is one byte over, cut and counted."""
    p = tmp_path / "fn.jsonl"
    p.write_bytes((_HEAD * 5 + "z" * MAX_EVENT_BYTES + "\r\n").encode())
    rep, length, _ = _ingest(p, monkeypatch)
    assert length == MAX_EVENT_BYTES and rep.by_reason.get(Reason.TRUNCATED_OVER_1MB, 0) == 1
    assert Reason.CRLF not in rep.by_reason


@pytest.mark.parametrize("final_newline", [True, False], ids=["newline", "no-newline"])
@pytest.mark.parametrize("over", [-1, 0, 1, 2], ids=["limit-1", "limit", "limit+1", "limit+2"])
def test_a_lambda_text_event_at_the_event_size(tmp_path, monkeypatch, over: int, final_newline: bool) -> None:
    """The Lambda text format frames events in Python and clips each message with the same limit."""
    start = "START RequestId: 8a3e Version: $LATEST "
    p = tmp_path / "fn.log"
    p.write_bytes(("END RequestId: 7b\n" + start + "z" * (MAX_EVENT_BYTES + over - len(start))
                   + ("\n" if final_newline else "")).encode())
    rep, length, _ = _ingest(p, monkeypatch)
    assert [f.format for f in rep.per_file.values()] == [LogFormat.LAMBDA_TEXT.value]
    assert length == min(MAX_EVENT_BYTES + over, MAX_EVENT_BYTES) and rep.events == 2
    assert rep.by_reason.get(Reason.TRUNCATED_OVER_1MB, 0) == (1 if over > 0 else 0)
