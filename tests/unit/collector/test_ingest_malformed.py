"""Malformed input never crashes the ingest and never disappears: exact counts by reason."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

from collector.ingest import MAX_EVENT_BYTES, EventStore, Reason


def _one(store: EventStore, sql: str, params=None):
    return store.connection.execute(sql, params or []).fetchall()


def _ingest(tmp_path: Path, name: str, data: bytes, **kw):
    p = tmp_path / name
    p.write_bytes(data)
    store = EventStore()
    return store, store.ingest_path(p, **kw)


def test_truncated_json_line_is_a_text_event(tmp_path: Path) -> None:
    data = b'{"outcome":"succeeded","attempt":1}\n{"outcome":"received","attem\n{"outcome":"claimed"}\n'
    store, rep = _ingest(tmp_path, "a.jsonl", data)
    assert (rep.events, rep.skipped, rep.repaired, rep.by_reason) == (3, 0, 0, {Reason.INVALID_JSON: 1,
                                                                              Reason.TIMESTAMP_FROM_FILE: 3})
    assert _one(store, 'SELECT DISTINCT "@timestamp" FROM events') == [(int((tmp_path / "a.jsonl").stat().st_mtime * 1000),)]
    assert _one(store, 'SELECT "@message", "@json" IS NULL, outcome FROM events ORDER BY "@seq"') == [
        ('{"outcome":"succeeded","attempt":1}', False, "succeeded"),
        ('{"outcome":"received","attem', True, None),
        ('{"outcome":"claimed"}', False, "claimed")]


def test_invalid_utf8_is_replaced_and_counted(tmp_path: Path) -> None:
    data = b'{"level":"INFO","message":"caf\xc3\xa9"}\n{"level":"INFO","message":"bad \xff\xfe byte"}\nplain \x80\n'
    store, rep = _ingest(tmp_path, "u.jsonl", data)
    assert (rep.events, rep.skipped, rep.repaired) == (3, 0, 2)
    assert rep.by_reason[Reason.INVALID_UTF8] == 2
    assert [r[0] for r in _one(store, 'SELECT "@message" FROM events ORDER BY "@seq"')] == [
        '{"level":"INFO","message":"café"}', '{"level":"INFO","message":"bad \ufffd\ufffd byte"}', "plain \ufffd"]
    assert _one(store, "SELECT count(\"@json\" ->> '$.level') FROM events")[0][0] == 2  # the repaired JSON line still parses


def test_one_megabyte_line_is_kept_and_a_longer_one_cut(tmp_path: Path) -> None:
    big = json.dumps({"outcome": "succeeded", "pad": "x" * (1_000_000 - 40)})
    assert 999_000 < len(big) <= 1_000_000
    huge = "y" * (MAX_EVENT_BYTES + 5000)
    store, rep = _ingest(tmp_path, "big.jsonl", (big + "\n" + huge + "\nsmall\n").encode())
    assert (rep.events, rep.skipped, rep.repaired) == (3, 0, 1)
    assert rep.by_reason[Reason.TRUNCATED_OVER_1MB] == 1
    assert _one(store, 'SELECT strlen("@message"), outcome FROM events ORDER BY "@seq"') == [
        (len(big), "succeeded"), (MAX_EVENT_BYTES, None), (5, None)]


def test_multibyte_cut_stays_valid_utf8(tmp_path: Path) -> None:
    line = "€" * (MAX_EVENT_BYTES // 3 + 10)  # 3 bytes each
    assert MAX_EVENT_BYTES % 3 != 0  # so the byte limit falls inside a character
    store, rep = _ingest(tmp_path, "mb.log", (line + "\n").encode())
    assert rep.by_reason[Reason.TRUNCATED_OVER_1MB] == 1
    assert _one(store, 'SELECT strlen("@message") FROM events')[0][0] == (MAX_EVENT_BYTES // 3) * 3  # whole characters


def test_field_number_in_one_line_string_in_another(tmp_path: Path) -> None:
    data = b'{"attempt":1,"record_age_ms":10.5}\n{"attempt":"2","record_age_ms":"n/a"}\n{"attempt":true}\n'
    store, rep = _ingest(tmp_path, "t.jsonl", data)
    assert (rep.events, rep.skipped, rep.repaired) == (3, 0, 0)
    assert _one(store, 'SELECT attempt, record_age_ms FROM events ORDER BY "@seq"') == [
        ("1", "10.5"), ('"2"', '"n/a"'), ("true", None)]


def test_key_first_seen_after_a_million_lines(tmp_path: Path) -> None:
    from collector.insights import run_query

    n = 1_000_000
    data = b'{"outcome":"received"}\n' * n + b'{"outcome":"received","late_key":"found"}\n'
    store, rep = _ingest(tmp_path, "m.jsonl", data)
    assert (rep.events, rep.skipped, rep.repaired) == (n + 1, 0, 0)
    res = run_query(store, "filter ispresent(late_key) | stats count(*) as n by late_key", limit_cap=None)
    assert res.rows == [("found", 1)]


def test_crlf_line_endings_are_stripped_and_counted(tmp_path: Path) -> None:
    data = b'{"a":1}\r\n\r\nSTART RequestId: r1 Version: $LATEST\r\nlast without newline'
    store, rep = _ingest(tmp_path, "c.jsonl", data)
    assert (rep.events, rep.skipped, rep.repaired) == (3, 1, 3)
    assert rep.by_reason[Reason.CRLF] == 3 and rep.by_reason[Reason.BLANK_LINE] == 1
    assert _one(store, 'SELECT "@message", "@type", "@requestId" FROM events ORDER BY "@seq"') == [
        ('{"a":1}', None, None), ("START RequestId: r1 Version: $LATEST", "START", "r1"),
        ("last without newline", None, None)]


def test_bare_cr_inside_a_line_is_content(tmp_path: Path) -> None:
    data = b"[ERROR] Boom: x\rTraceback (most recent call last):\r  File \"a.py\"\n{\"a\":1}\n"
    store, rep = _ingest(tmp_path, "cr.jsonl", data)
    assert (rep.events, rep.repaired) == (2, 0)
    assert _one(store, 'SELECT "@message" FROM events ORDER BY "@seq" LIMIT 1')[0][0].count("\r") == 2


def test_truncated_gzip_keeps_every_decoded_line(tmp_path: Path) -> None:
    lines = [f'2026-01-05T10:00:{i % 60:02d}.000Z {{"n":{i}}}' for i in range(5000)]
    full = gzip.compress(("\n".join(lines) + "\n").encode())
    cut = full[: len(full) // 2]
    decoded = zlib.decompressobj(31).decompress(cut)  # independent oracle of what survives
    complete = decoded.count(b"\n")
    tail = decoded.rsplit(b"\n", 1)[1]
    assert tail.startswith(b"2026-01-05T10:00:") and b' {"n":' in tail and not tail.endswith(b"}")  # cut inside JSON
    partial = 1
    store, rep = _ingest(tmp_path, "000000.gz", cut, log_group="/aws/lambda/x")
    assert rep.events == complete + partial
    # the partial line is kept as text (its JSON is cut short)
    assert rep.by_reason == {Reason.GZIP_TRUNCATED_STREAM: 1, Reason.GZIP_TRUNCATED: 1, Reason.INVALID_JSON: 1}
    assert rep.repaired == partial
    assert _one(store, "SELECT count(*) FROM events WHERE \"@json\" IS NOT NULL")[0][0] == complete


def test_over_200_fields_keeps_the_first_200(tmp_path: Path) -> None:
    doc = {"outcome": "succeeded", "nested": {f"k{i}": i for i in range(150)}, "arr": list(range(100)),
           "service": "late"}
    assert 1 + 150 + 100 + 1 == 252
    store, rep = _ingest(tmp_path, "w.jsonl", (json.dumps(doc) + '\n{"service":"ok"}\n').encode())
    assert (rep.events, rep.repaired, rep.by_reason[Reason.JSON_FIELDS_OVER_200]) == (2, 1, 1)
    kept = json.loads(_one(store, 'SELECT "@json" FROM events ORDER BY "@seq" LIMIT 1')[0][0])
    assert kept == {"outcome": "succeeded", "nested": {f"k{i}": i for i in range(150)}, "arr": list(range(49))}
    assert _one(store, 'SELECT outcome, service FROM events ORDER BY "@seq"') == [("succeeded", None), (None, "ok")]
    # the raw message is untouched
    assert json.loads(_one(store, 'SELECT "@message" FROM events ORDER BY "@seq" LIMIT 1')[0][0]) == doc


def test_blank_and_whitespace_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    store, rep = _ingest(tmp_path, "b.jsonl", b'\n{"a":1}\n\n   \n{"a":2}\n\n')
    assert (rep.events, rep.skipped, rep.by_reason[Reason.BLANK_LINE]) == (2, 4, 4)
    assert _one(store, 'SELECT "@message" FROM events ORDER BY "@seq"') == [('{"a":1}',), ('{"a":2}',)]


def test_truncated_filter_log_events_document(tmp_path: Path, shared_dir: Path) -> None:
    text = (shared_dir / "samples" / "filter-log-events.json").read_text()
    cut = text[: text.index('"eventId"', len(text) // 2)]  # inside the 15th event or so
    complete = json.loads(text)["events"]
    store, rep = _ingest(tmp_path, "fle.json", cut.encode())
    n = rep.events
    assert 0 < n < len(complete)
    assert rep.by_reason["filter_log_events_truncated"] == 1
    assert rep.skipped == 1  # the cut event is lost, and counted as such
    got = _one(store, 'SELECT "@timestamp", "@message" FROM events ORDER BY "@seq"')
    assert got == [(e["timestamp"], e["message"]) for e in complete[:n]]
    assert cut.count('"logStreamName"') == n + 1  # exactly the unfinished event is missing


def test_events_without_message_are_counted() -> None:
    store = EventStore()
    rep = store.ingest_events([{"timestamp": 1, "message": "a"}, {"timestamp": 2}, "not a dict",
                               {"timestamp": 3, "message": ""}, {"message": "no ts"}], "/aws/lambda/x")
    assert (rep.events, rep.skipped) == (2, 3)
    assert rep.by_reason == {Reason.EVENT_WITHOUT_MESSAGE: 2, Reason.BLANK_LINE: 1, Reason.TIMESTAMP_INFERRED: 1}
    assert _one(store, 'SELECT "@timestamp", "@message" FROM events ORDER BY "@seq"') == [(1, "a"), (1, "no ts")]


def test_lambda_text_with_crlf_and_bad_bytes(tmp_path: Path) -> None:
    data = (b"START RequestId: r1 Version: $LATEST\r\n"
            b"[ERROR]\t2026-01-05T10:00:00.500Z\tr1\tboom \xff\r\n"
            b"Traceback (most recent call last):\r\n"
            b"END RequestId: r1\r\n"
            b"REPORT RequestId: r1\tDuration: 2.00 ms\tBilled Duration: 3 ms\tMemory Size: 128 MB\t"
            b"Max Memory Used: 20 MB\t\r\n")
    store, rep = _ingest(tmp_path, "fn.log", data)
    assert (rep.events, rep.skipped, rep.repaired) == (4, 0, 6)
    assert rep.by_reason == {Reason.CRLF: 5, Reason.INVALID_UTF8: 1, Reason.TIMESTAMP_INFERRED: 3,
                             Reason.MULTILINE_JOINED: 1}  # the traceback line, joined to the [ERROR] event
    assert _one(store, 'SELECT "@timestamp", "@message" FROM events ORDER BY "@seq"')[1] == (
        1767607200500, "[ERROR]\t2026-01-05T10:00:00.500Z\tr1\tboom \ufffd\nTraceback (most recent call last):")


def test_binary_file_is_a_clear_error_or_skipped_in_a_directory(tmp_path: Path) -> None:
    import pytest

    from collector.ingest import UnknownFormatError

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "orders.log").write_bytes(b'{"outcome":"claimed"}\n')
    (logs / "table.parquet").write_bytes(b"PAR1\x00\x00\x15\x04binary")
    with pytest.raises(UnknownFormatError, match="table.parquet"):
        EventStore().ingest_path(logs / "table.parquet")
    store = EventStore()
    rep = store.ingest_path(logs)
    assert (rep.events, rep.skipped, rep.by_reason[Reason.NOT_A_LOG_FILE]) == (1, 1, 1)
    assert rep.per_file[str(logs / "table.parquet")].format == "unknown"


def test_many_wide_events_are_all_capped(tmp_path: Path) -> None:
    wide = {"outcome": "received", "values": list(range(300)), "service": "dropped"}
    data = "".join(json.dumps(dict(wide, n=i)) + "\n" for i in range(500)).encode()
    store, rep = _ingest(tmp_path, "wide.jsonl", data + b'{"service":"kept"}\n')
    assert (rep.events, rep.repaired, rep.by_reason[Reason.JSON_FIELDS_OVER_200]) == (501, 500, 500)
    assert _one(store, """SELECT count(*), count(service), max(json_array_length(json_extract("@json", '$.values'))),
                          count(json_extract("@json", '$.n')) FROM events""") == [(501, 1, 199, 0)]
