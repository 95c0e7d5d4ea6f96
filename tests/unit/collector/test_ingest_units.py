"""Unit tests of the ingest's parts: sniffing, Lambda text framing, timestamps, field cap, gzip, store."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from collector.ingest import EventStore, LogFormat, sniff
from collector.ingest.constants import HOT_STRING_FIELDS
from collector.ingest.fields import count_fields, keep_first_fields
from collector.ingest.source import SourceReader
from collector.ingest.timestamps import iso_to_ms

RID = "1f54cbff-baeb-4dfb-8692-76b523159834"


@pytest.mark.parametrize(("text", "name", "fmt"), [
    ('{"events": [{"timestamp": 1, "message": "x"}]}', "a.json", LogFormat.FILTER_LOG_EVENTS),
    ('{\n    "events": [\n', "page.json", LogFormat.FILTER_LOG_EVENTS),
    ('[{"events": []}]', "pages.json", LogFormat.FILTER_LOG_EVENTS),
    ('timestamp,message\n1,"x"\n', "export.csv", LogFormat.CONSOLE_CSV),
    ('@timestamp,@message,@logStream\n2026-01-05 10:00:00.000,x,s\n', "results.csv", LogFormat.CONSOLE_CSV),
    ("2026-01-05T10:00:00.000Z START RequestId: r Version: $LATEST\n2026-01-05T10:00:00.001Z {\"a\":1}\n",
     "000000", LogFormat.EXPORT_S3),
    ('{"time":"2026-01-05T10:00:00.000Z","type":"platform.start","record":{"requestId":"r"}}\n', "f.log",
     LogFormat.LAMBDA_JSON),
    (f"START RequestId: {RID} Version: $LATEST\n[INFO]\t2026-01-05T10:00:00.000Z\t{RID}\thi\n", "f.log",
     LogFormat.LAMBDA_TEXT),
    (f"START RequestId: {RID} Version: $LATEST\n{{\"a\":1}}\n", "f.jsonl", LogFormat.JSON_LINES),
    ('{"level":"INFO","message":"x"}\n{"level":"INFO"}\n', "f.log", LogFormat.JSON_LINES),
    ("just some text\nmore text\n", "notes.txt", LogFormat.JSON_LINES),
    (f"2026-01-05T10:00:00.000Z\t{RID}\tINFO\thello\n", "node.log", LogFormat.JSON_LINES),
])
def test_sniff(text: str, name: str, fmt: LogFormat) -> None:
    assert sniff(text.encode(), name) is fmt


def test_frame_events_groups_continuations() -> None:
    lines = [
        "INIT_START Runtime Version: python:3.11.v88",
        f"START RequestId: {RID} Version: $LATEST",
        f"[ERROR]\t2026-11-30T00:27:16.115Z\t{RID}\trejecting",
        "Traceback (most recent call last):",
        "",
        '  File "/var/task/app.py", line 45, in handler',
        '{"event": "stock_updated"}',
        f"2026-11-30T00:27:19.598Z {RID} Task timed out after 3.00 seconds",
        "",
        (f"REPORT RequestId: {RID}\tDuration: 3000.00 ms\tBilled Duration: 3000 ms\tMemory Size: 128 MB\t"
         "Max Memory Used: 46 MB\tStatus: timeout"),
        "XRAY TraceId: 1-6b0cc2e3-65f1b0040334e5f296ebe35c\tSegmentId: 2011ac3e29d63a3f\tSampled: true\t",
        f"RequestId: {RID} Error: Runtime exited with error: exit status 1",
        "Runtime.ExitError",
    ]
    got, rep = _framed(lines)
    assert [m.count("\n") + 1 for _, m in got] == [1, 1, 4, 1, 1, 2, 2]
    # the stamped events keep their own time; the others take the previous event's (the first two: the next one's)
    assert [ts for ts, _ in got] == [1795998436115] * 4 + [1795998439598] * 3
    assert got[2][1] == "\n".join(lines[2:6])  # the blank line inside the traceback is kept
    assert got[5][1].endswith("Sampled: true\t")
    # the blank line between events belongs to none; the kept continuation lines are counted
    assert (rep.events, rep.by_reason["blank_line"], rep.by_reason["continuation_lines_joined"]) == (7, 1, 5)


def _framed(lines: list[str]) -> tuple[list[tuple[int, str]], object]:
    """``(@timestamp, @message)`` of the events of ``lines`` read as the Lambda text format, and the report."""
    store = EventStore()
    rep = store.ingest_bytes(("\n".join(lines) + "\n").encode(), "fn.log", fmt=LogFormat.LAMBDA_TEXT)
    return store.connection.execute('SELECT "@timestamp", "@message" FROM events ORDER BY "@seq"').fetchall(), rep


def test_frame_events_leading_continuation_starts_an_event() -> None:
    got, _ = _framed(["  orphan", "END RequestId: r"])
    assert [m for _, m in got] == ["  orphan", "END RequestId: r"]


@pytest.mark.parametrize(("text", "ms"), [
    ("2026-01-05T10:20:01.000Z", 1767608401000),
    ("2026-01-05T10:20:01Z", 1767608401000),
    ("2026-11-30 00:26:28,838+0000", 1795998388838),
    ("2026-01-05T12:20:01.5+02:00", 1767608401500),
    ("2026-01-05 10:20:01", 1767608401000),
    ("not a time", None),
])
def test_iso_to_ms(text: str, ms: int | None) -> None:
    assert iso_to_ms(text) == ms


@pytest.mark.parametrize(("record", "ms"), [
    ({"timestamp": "2026-01-05T10:20:01.000Z"}, 1767608401000),  # emitter
    ({"timestamp": "2026-11-30 00:26:28,838+0000"}, 1795998388838),  # Powertools Logger
    ({"time": "2026-01-05T10:20:01.250Z", "type": "platform.start"}, 1767608401250),  # Lambda JSON format
    ({"_aws": {"Timestamp": 1767608401999}, "timestamp": "2020-01-01T00:00:00Z"}, 1767608401999),  # EMF wins
    ({"timestamp": 1767608401123}, 1767608401123),  # epoch ms
    ({"timestamp": 1767608401}, 1767608401000),  # epoch seconds
    ({"timestamp": "2026-01-05T11:20:01.000+01:00"}, 1767608401000),
])
def test_record_timestamp_rule(record: dict, ms: int) -> None:
    store = EventStore()
    store.ingest_bytes((json.dumps(record) + "\n").encode(), "f.jsonl")
    assert store.connection.execute('SELECT "@timestamp" FROM events').fetchall() == [(ms,)]


def test_fields_cap_in_document_order() -> None:
    doc = {"a": 1, "b": {"c": [1, 2, {"d": 3}], "e": {}}, "f": None}
    assert count_fields(doc) == 6  # a, b.c.0, b.c.1, b.c.2.d, b.e (empty), f
    assert keep_first_fields(doc, 4) == ({"a": 1, "b": {"c": [1, 2, {"d": 3}]}}, 2)
    assert keep_first_fields(doc, 2) == ({"a": 1, "b": {"c": [1]}}, 4)
    assert keep_first_fields(doc, 100) == (doc, 0)


def test_gunzip_multi_member_and_padding() -> None:
    data = gzip.compress(b"a\nb\n") + gzip.compress(b"c\n") + b"\x00" * 16
    src = SourceReader(io.BytesIO(data))
    assert (src.read(), src.compressed, src.truncated) == (b"a\nb\nc\n", True, False)


def test_seq_continues_across_calls_and_reopened_db(tmp_path: Path) -> None:
    db = tmp_path / "events.duckdb"
    store = EventStore(db)
    store.ingest_events([{"timestamp": 1, "message": "a"}, {"timestamp": 2, "message": "b"}], "/aws/lambda/x")
    store.ingest_bytes(b"2026-01-05T10:00:00.000Z c\n", "y.log")
    store.close()
    again = EventStore(db)
    rep = again.ingest_events([{"timestamp": 3, "message": "d"}], "/aws/lambda/x")
    assert rep.events == 1
    assert again.connection.execute('SELECT "@seq", "@message", "@log" FROM events ORDER BY 1').fetchall() == [
        (0, "a", "000000000000:/aws/lambda/x"), (1, "b", "000000000000:/aws/lambda/x"),
        (2, "c", "000000000000:/aws/lambda/y"), (3, "d", "000000000000:/aws/lambda/x")]


def test_hot_columns_match_json_extract() -> None:
    store = EventStore()
    store.ingest_events([
        {"timestamp": 1, "message": json.dumps({"outcome": "claimed", "attempt": 2, "_aws": {"Timestamp": 5},
                                                "idempotency_key": {"nested": True}})},
        {"timestamp": 2, "message": "plain"}], "/aws/lambda/x")
    cols = [c for c in store.hot_fields]
    assert "outcome" in cols and "_aws.Timestamp" in cols
    for c in cols:
        path = "$." + c
        fn = "json_extract_string" if c in HOT_STRING_FIELDS else "json_extract"
        diff = store.connection.execute(
            f'SELECT count(*) FROM events WHERE "{c}" IS DISTINCT FROM {fn}("@json", $1)', [path]).fetchone()
        assert diff == (0,), c
    assert store.connection.execute('SELECT outcome, idempotency_key, attempt FROM events ORDER BY "@seq"').fetchall() \
        == [("claimed", '{"nested":true}', "2"), (None, None, None)]


def test_contract_string_fields_are_varchar_the_rest_json() -> None:
    """The string fields of the contract are stored unquoted as VARCHAR; numbers, ``message`` and ``_aws.Timestamp``
    keep JSON (Logs Insights' dynamic typing: a foreign log may write ``"attempt": "2"``)."""
    store = EventStore()
    types = dict(store.connection.execute("SELECT column_name, data_type FROM information_schema.columns "
                                          "WHERE table_name = 'events'").fetchall())
    assert {h for h in store.hot_fields if types[h] == "VARCHAR"} == HOT_STRING_FIELDS
    assert {h for h in store.hot_fields if types[h] == "JSON"} == {
        "attempt", "record_age_ms", "in_progress_expires_at_ms", "remaining_time_ms", "message", "_aws.Timestamp"}
    assert store.hot_types == {h: types[h] for h in store.hot_fields}


def test_json_column_is_the_parsed_text_untyped() -> None:
    """``@json`` is VARCHAR (a JSON cast would parse every message again on INSERT and on read) holding exactly the
    object text: the message itself, its first 200 fields, or its embedded fragment; DuckDB's JSON functions read it
    as they read the JSON type."""
    wide = {f"k{i}": i for i in range(205)}
    store = EventStore()
    store.ingest_events([
        {"timestamp": 1, "message": '{"outcome": "claimed", "attempt": "2"}'},
        {"timestamp": 2, "message": json.dumps(wide)},
        {"timestamp": 3, "message": 'text {"a": {"b": [1, 2]}} tail'},
        {"timestamp": 4, "message": "plain"}], "/aws/lambda/x")
    con = store.connection
    types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns "
                             "WHERE table_name = 'events'").fetchall())
    assert types["@json"] == "VARCHAR"
    rows = con.execute('SELECT "@json", json_extract("@json", \'$.attempt\'), '
                       'json_extract(CAST("@json" AS JSON), \'$.attempt\') FROM events ORDER BY "@seq"').fetchall()
    assert rows[0] == ('{"outcome": "claimed", "attempt": "2"}', '"2"', '"2"')
    assert json.loads(rows[1][0]) == {f"k{i}": i for i in range(200)}
    assert json.loads(rows[2][0]) == {"a": {"b": [1, 2]}}
    assert rows[3] == (None, None, None)


def test_without_hot_columns_the_engine_reads_json() -> None:
    from collector.insights import run_query

    store = EventStore(hot_fields=())
    store.ingest_events([{"timestamp": 1767608401000, "message": json.dumps({"outcome": o})}
                         for o in ("claimed", "succeeded", "succeeded")], "/aws/lambda/x")
    assert [c for (c,) in store.connection.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'events'").fetchall()][-1] == "@json"
    res = run_query(store, "stats count(*) as n by outcome | sort outcome asc")
    assert res.rows == [("claimed", 1), ("succeeded", 2)]


def test_console_csv_with_insights_header_and_dates(tmp_path: Path) -> None:
    p = tmp_path / "results.csv"
    p.write_text('@timestamp,@message,@logStream\n'
                 '2026-01-05 10:00:00.000,"REPORT RequestId: r1\tDuration: 1.00 ms\tBilled Duration: 2 ms\t'
                 'Memory Size: 128 MB\tMax Memory Used: 20 MB\t",s1\n'
                 '2026-01-05 10:00:01.500,"multi\nline ""quoted""",s2\n')
    store = EventStore()
    rep = store.ingest_path(p, log_group="/aws/lambda/x")
    assert (rep.events, rep.skipped, rep.per_file[str(p)].format) == (2, 0, "console-csv")
    assert store.connection.execute('SELECT "@timestamp", "@logStream", "@type", "@message" FROM events ORDER BY "@seq"'
                                    ).fetchall()[1] == (1767607201500, "s2", None, 'multi\nline "quoted"')


def test_compressed_store_holds_the_same_events(shared_dir: Path) -> None:
    a, b = EventStore(), EventStore(compress=True)
    for s in (a, b):
        s.ingest_path(shared_dir / "samples" / "powertools-real.jsonl", log_group="/aws/lambda/orders-consumer")
    q = 'SELECT * FROM events ORDER BY "@seq"'
    assert a.connection.execute(q).fetchall() == b.connection.execute(q).fetchall()
    assert b.count() == 53


@pytest.mark.parametrize("content", [
    (b'\n{"outcome":"claimed","timestamp":"2026-01-05T10:00:00.000Z"}\n\n   \nSTART RequestId: r Version: 1\n'
    b'{"outcome":"succeeded"}\nREPORT RequestId: r\tDuration: 1.50 ms\tBilled Duration: 2 ms\tMemory Size: 128 MB\t'
    b'Max Memory Used: 20 MB\t\n{"truncated":\nlast line without newline'),
    (b"2026-01-05T10:00:00.000Z START RequestId: r Version: $LATEST\n2026-01-05T10:00:00.010Z {\"outcome\":\"x\"}\n"
    b"no prefix here\n\n2026-01-05T10:00:01.000Z END RequestId: r\n"),
])
def test_duckdb_line_reader_path_matches_the_general_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         content: bytes) -> None:
    import collector.ingest.store as store_mod

    p = tmp_path / "fn.log"
    p.write_bytes(content)
    results, paths = [], []
    for threshold in (0, 1 << 60):  # DuckDB's CSV reader splits the lines / numpy + Arrow split them
        monkeypatch.setattr(store_mod, "FAST_PATH_MIN_BYTES", threshold)
        s = EventStore()
        rep = s.ingest_path(p).as_dict()["per_file"][str(p)]
        paths.append(rep.pop("ingest_path"))
        results.append((rep,
                        s.connection.execute('SELECT * FROM events ORDER BY "@seq"').fetchall()))
    assert results[0] == results[1]
    assert results[0][0]["events"] >= 3
    # the reader takes only a range whose last line is complete (the first content ends without a newline)
    assert paths == ["duckdb-line-reader" if content.endswith(b"\n") else "line-pieces", "line-pieces"]


@pytest.mark.parametrize("content", [b'{"a":1}\r\n{"a":2}\r\n', b'{"a":"\xff"}\n{"a":2}\n', b'x\rcontent\n{"a":1}\n'])
def test_duckdb_line_reader_path_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes) -> None:
    import collector.ingest.store as store_mod

    monkeypatch.setattr(store_mod, "FAST_PATH_MIN_BYTES", 0)
    p = tmp_path / "f.jsonl"
    p.write_bytes(content)
    s = EventStore()
    rep = s.ingest_path(p)
    assert rep.events == 2
    assert s.connection.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = '_iw_lines'").fetchone() == (0,)


def test_events_table_of_the_earlier_layout_is_rewritten_keeping_every_event(tmp_path: Path) -> None:
    """A database written before ``@json`` became virtual (a stored copy per JSON message) opens as the current
    layout: same events, ``@seq``, ``@json``, and the hot fields it lacked read from its ``@json``."""
    import duckdb

    from collector.insights import run_query
    from collector.tables import EVENT_COLUMNS

    db = tmp_path / "events.duckdb"
    con = duckdb.connect(str(db))
    cols = [*EVENT_COLUMNS, ("outcome", "JSON")]  # the earlier layout, with one hot column
    con.execute("CREATE TABLE events (" + ", ".join(f'"{n}" {t}' for n, t in cols) + ")")
    msg = json.dumps({"outcome": "claimed", "service": "orders"})
    rows = [(1000, msg, msg, '"claimed"', 7), (2000, 'text {"service": "pay"} tail', '{"service": "pay"}', None, 8),
            (3000, "plain text", None, None, 9)]
    for ts, m, j, outcome, seq in rows:
        con.execute('INSERT INTO events ("@timestamp", "@message", "@log", "@seq", "@json", outcome) '
                    "VALUES ($1, $2, '/aws/lambda/x', $3, $4, $5)", [ts, m, seq, j, outcome])
    con.close()
    store = EventStore(db)
    assert store.next_seq == 10
    got = store.connection.execute('SELECT "@seq", "@message", CAST("@json" AS VARCHAR), outcome, service, '
                                   '"@jsonMessage" FROM events ORDER BY "@seq"').fetchall()
    # the contract's string fields now VARCHAR (HOT_STRING_FIELDS), the stored JSON text unquoted
    assert got == [(7, msg, msg, "claimed", "orders", True),
                   (8, 'text {"service": "pay"} tail', '{"service": "pay"}', None, "pay", False),
                   (9, "plain text", None, None, None, False)]
    assert run_query(store, "stats count(*) as n by service | sort service asc").rows == [("orders", 1), ("pay", 1),
                                                                                          (None, 1)]
    store.close()
    assert EventStore(db).count() == 3  # opens as the current layout from now on


@pytest.mark.parametrize("gz", [False, True])
def test_lambda_text_in_pieces_gives_the_events_of_the_whole_file(tmp_path: Path, monkeypatch, gz: bool) -> None:
    """Lambda text is framed piece by piece (memory: one piece); with pieces of a few lines, every event (continuation
    lines across a piece boundary included), its time and every count equal those of one piece for the file."""
    import collector.ingest.store as store_mod

    sample = (Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "lambda-text-format.log").read_bytes()
    # CRLF and blank lines, a traceback across boundaries, a file without a final newline
    data = sample + b"\r\n\r\n" + sample.replace(b"\n", b"\r\n", 3) + b"[ERROR] KeyError: 'x'\nTraceback:\n  line 1"
    p = tmp_path / ("fn.log.gz" if gz else "fn.log")
    p.write_bytes(gzip.compress(data) if gz else data)

    def collect(piece: int):
        monkeypatch.setattr(store_mod, "TEXT_PIECE_BYTES", piece)
        store = EventStore()
        rep = store.ingest_path(p)
        return store.connection.execute('SELECT "@seq", "@timestamp", "@message", "@type", "@requestId" FROM events '
                                        'ORDER BY "@seq"').fetchall(), dict(rep.by_reason), rep.events

    whole, reasons, n = collect(1 << 30)
    assert n > 20 and reasons.get("blank_line") and reasons.get("continuation_lines_joined", 1)
    for piece in (40, 333, 4096):
        assert collect(piece) == (whole, reasons, n), piece


def _checks_oracle(message: str, is_json: bool) -> int | None:
    """``@ingestChecks`` by its rule (``constants.IngestCheck``), computed in Python."""
    if is_json:
        bits = 4 if len(message.encode()) >= 400 and message.count(",") >= 200 else 0
    else:
        bits = (2 if "{" in message else 0) + (1 if message.startswith("{") else 0)
    return bits or None


def test_ingest_checks_are_set_by_the_insert_as_their_rule_says(tmp_path: Path) -> None:
    wide = json.dumps({f"k{i}": i for i in range(250)})
    narrow_long = json.dumps({"message": "x" * 900, "a": [1, 2]})
    many_commas_short = json.dumps({"a": [1] * 199})  # 199 commas: cannot have more than 200 leaves
    lines = [wide, narrow_long, many_commas_short, '{"broken": ', 'text {"service": "pay"} tail', "plain text",
             "{not json} {\"a\": 1}", '{"a": 1}']
    p = tmp_path / "f.jsonl"
    p.write_text("\n".join(lines) + "\n")
    store = EventStore()
    rep = store.ingest_path(p)
    got = store.connection.execute('SELECT "@message", "@jsonMessage", "@ingestChecks" FROM events '
                                   'ORDER BY "@seq"').fetchall()
    assert [m for m, _, _ in got] == lines
    assert [c for m, j, c in got] == [_checks_oracle(m, j) for m, j, _ in got]
    assert [c for _, _, c in got] == [4, None, None, 3, 2, None, 3, None]
    assert rep.by_reason["invalid_json_kept_as_text"] == 2
    assert rep.by_reason["json_fields_over_200_dropped"] == 1
    assert rep.by_reason["fields_from_embedded_json_fragment"] == 2


def test_store_without_ingest_checks_gets_the_column_and_counts_new_events(tmp_path: Path) -> None:
    """A store made before ``@ingestChecks`` existed: opened, it gets the column (NULL in its earlier rows), and the
    events ingested into it are counted and rewritten exactly as in a new store."""
    import duckdb

    wide = json.dumps({f"k{i}": i for i in range(250)})
    p = tmp_path / "f.jsonl"
    lines = [wide, '{"broken": ', 'text {"service": "pay"} tail', '{"a": 1}']
    p.write_text("\n".join(lines) + "\n")
    db = tmp_path / "events.duckdb"
    with EventStore(db) as old:
        old.ingest_path(p)
    con = duckdb.connect(str(db))
    con.execute('ALTER TABLE events DROP COLUMN "@ingestChecks"')
    con.close()
    with EventStore(db) as store:
        assert store.connection.execute('SELECT count(*) FROM events WHERE "@ingestChecks" IS NOT NULL').fetchall() == [(0,)]
        rep = store.ingest_path(p)
        again = store.connection.execute('SELECT "@message", CAST("@json" AS VARCHAR), service FROM events '
                                         'WHERE "@seq" >= 4 ORDER BY "@seq"').fetchall()
    fresh = EventStore()
    fresh_rep = fresh.ingest_path(p)
    assert dict(rep.by_reason) == dict(fresh_rep.by_reason)
    assert rep.by_reason["json_fields_over_200_dropped"] == 1
    assert again == fresh.connection.execute('SELECT "@message", CAST("@json" AS VARCHAR), service FROM events '
                                             'ORDER BY "@seq"').fetchall()


@pytest.mark.parametrize("rows", [1, 2, 7])
def test_continuation_lines_joined_in_any_batches(tmp_path: Path, monkeypatch, rows: int) -> None:
    """The continuation lines are joined batch by batch (``store._JOIN_ROWS`` lines' flags at a time): with batches of
    a few lines (events, tracebacks, blank lines and the orphan first line across their bounds) every event, its
    time and every count equal those of one batch for the whole file."""
    import collector.ingest.store as store_mod

    sample = (Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "lambda-text-format.log").read_bytes()
    data = b"  orphan first line\n\nmore of it\n" + sample + b"\n\n[ERROR] KeyError: 'x'\nTraceback:\n\n  line 1\n\n"
    p = tmp_path / "fn.log"
    p.write_bytes(data)

    def collect(n: int):
        monkeypatch.setattr(store_mod, "_JOIN_ROWS", n)
        store = EventStore()
        rep = store.ingest_path(p)
        return store.connection.execute('SELECT "@seq", "@timestamp", "@message" FROM events ORDER BY "@seq"'
                                        ).fetchall(), dict(rep.by_reason)

    whole = collect(1 << 20)
    assert whole[0][0][2] == "  orphan first line\n\nmore of it" and whole[1]["continuation_lines_joined"] > 10
    assert collect(rows) == whole


def test_continuation_lines_are_joined_inside_a_transaction_too(tmp_path: Path) -> None:
    """``collect local`` ingests each source inside ``transaction()``, where DuckDB numbers the rows of a new table
    from a high base: every event's message, the traceback lines included, is the same as outside one."""
    sample = Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "lambda-text-format.log"
    q = 'SELECT "@timestamp", "@message" FROM events ORDER BY "@seq"'
    plain = EventStore()
    plain.ingest_path(sample)
    store = EventStore(tmp_path / "events.duckdb")
    with store.transaction():
        rep = store.ingest_path(sample)
    got = store.connection.execute(q).fetchall()
    assert got == plain.connection.execute(q).fetchall()
    assert sum(m.count("\n") for _, m in got) == rep.by_reason["continuation_lines_joined"] == 16
