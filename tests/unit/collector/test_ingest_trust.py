"""Every input line ends up as an event or in a counted reason: out-of-range numbers, oversized lines (general and
fast path), gzip bombs, non-regular directory entries; and a property test over random bytes and random lines."""

from __future__ import annotations

import gzip
import json
import os
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.ingest import MAX_EVENT_BYTES, EventStore, IngestError, Reason
from collector.ingest.constants import MAX_TIMESTAMP_MS
from collector.ingest.source import EntryKind
from collector.ingest.store import FAST_PATH_MIN_BYTES

OK_TS = "2026-01-05T10:00:00.000Z"
OK_MS = 1_767_607_200_000


def _ingest(path, **kw):
    store = EventStore(**kw)
    report = store.ingest_path(path)
    return store, report


@pytest.mark.parametrize("bad", ["1e300", "99999999999999999999999", "-99999999999999999999999"])
def test_out_of_range_timestamps_are_counted_repairs_in_json_lines(tmp_path, bad):
    p = tmp_path / "fn.jsonl"
    p.write_text(f'{{"timestamp": "{OK_TS}", "outcome": "a"}}\n{{"timestamp": {bad}, "outcome": "b"}}\n'
                 f'{{"_aws": {{"Timestamp": {bad}}}, "outcome": "c"}}\n')
    store, rep = _ingest(p)
    assert rep.events == 3 and rep.by_reason[Reason.TIMESTAMP_OUT_OF_RANGE] == 2
    # replaced by the neighbour's time (the rule for a missing one)
    assert store.connection.sql('SELECT "@timestamp" FROM events ORDER BY "@seq"').fetchall() == [(OK_MS,)] * 3
    assert rep.repaired == 2


def test_out_of_range_numbers_in_filter_log_events_and_console_csv(tmp_path):
    fle = tmp_path / "events.json"
    fle.write_text(json.dumps({"events": [
        {"timestamp": OK_MS, "message": "a", "ingestionTime": OK_MS},
        {"timestamp": 1e300, "message": "b", "ingestionTime": 99999999999999999999999}]}))
    store, rep = _ingest(fle)
    assert rep.events == 2 and rep.by_reason[Reason.TIMESTAMP_OUT_OF_RANGE] == 2  # timestamp and ingestionTime
    assert store.connection.sql('SELECT "@timestamp", "@ingestionTime" FROM events ORDER BY "@seq"').fetchall() == [
        (OK_MS, OK_MS), (OK_MS, None)]
    csv = tmp_path / "export.csv"
    csv.write_text(f"timestamp,message\n{OK_MS},a\n1e300,b\n99999999999999999999999,c\n")
    store, rep = _ingest(csv)
    assert rep.events == 3 and rep.by_reason[Reason.TIMESTAMP_OUT_OF_RANGE] == 2
    assert MAX_TIMESTAMP_MS == 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


def test_a_50_mb_plain_line_becomes_one_truncated_counted_event(tmp_path):
    p = tmp_path / "big.log"
    p.write_bytes(b"x" * (50 * 1024 * 1024) + b"\n")
    store, rep = _ingest(p)
    assert rep.events == 1 and rep.by_reason[Reason.TRUNCATED_OVER_1MB] == 1
    assert store.connection.sql('SELECT strlen("@message") FROM events').fetchall() == [(MAX_EVENT_BYTES,)]


def test_an_oversized_last_line_of_a_large_file_is_truncated_and_counted_not_lost(tmp_path):
    line = json.dumps({"timestamp": OK_TS, "outcome": "received", "pad": "p" * 200}) + "\n"
    n = FAST_PATH_MIN_BYTES // len(line) + 10  # large enough for the DuckDB-reader fast path
    p = tmp_path / "fn.jsonl"
    with open(p, "w") as fh:
        fh.write(line * n)
        fh.write('{"outcome": "last", "pad": "' + "q" * (33 * 1024 * 1024) + '"}')  # ~33 MiB, no final newline
    store, rep = _ingest(p)
    assert rep.events == n + 1 and rep.by_reason[Reason.TRUNCATED_OVER_1MB] == 1
    assert store.connection.sql('SELECT max(strlen("@message")) FROM events').fetchall() == [(MAX_EVENT_BYTES,)]


def test_gzip_bomb_is_capped_and_counted(tmp_path):
    p = tmp_path / "fn.log.gz"
    line = (json.dumps({"timestamp": OK_TS, "outcome": "received"}) + "\n").encode()
    with gzip.open(p, "wb", compresslevel=9) as fh:
        for _ in range(64):
            fh.write(line * 20_000)  # ~64 MiB decompressed from ~300 KB
    cap = 4 * 1024 * 1024
    _, rep = _ingest(p, max_decompressed_bytes=cap)
    assert rep.by_reason[Reason.DECOMPRESSED_CAP] == 1
    whole = cap // len(line)
    assert rep.events == whole + (1 if cap % len(line) else 0)  # + the cut last line, counted as partial
    assert rep.by_reason.get(Reason.GZIP_TRUNCATED, 0) == (1 if cap % len(line) else 0)


def test_non_regular_directory_entries_are_counted_by_kind(tmp_path):
    logs = tmp_path / "logs"
    (logs / "sub").mkdir(parents=True)
    (logs / "fn.log").write_text(f'{{"timestamp": "{OK_TS}", "outcome": "a"}}\n')
    os.mkfifo(logs / "pipe.log")
    os.symlink(logs / "missing.log", logs / "dangling.log")
    os.symlink(logs / "loop-b.log", logs / "loop-a.log")
    os.symlink(logs / "loop-a.log", logs / "loop-b.log")
    os.symlink(logs / "sub", logs / "link-to-sub")
    _, rep = _ingest(logs)
    assert rep.events == 1
    assert {k: v for k, v in rep.by_reason.items() if k.startswith(Reason.SKIPPED_ENTRY_PREFIX)} == {
        Reason.SKIPPED_ENTRY_PREFIX + EntryKind.FIFO: 1, Reason.SKIPPED_ENTRY_PREFIX + EntryKind.DANGLING_SYMLINK: 1,
        Reason.SKIPPED_ENTRY_PREFIX + EntryKind.SYMLINK_LOOP: 2,
        Reason.SKIPPED_ENTRY_PREFIX + EntryKind.SYMLINK_TO_DIRECTORY: 1}


def test_a_fifo_named_on_its_own_is_reported_as_a_fifo(tmp_path):
    from collector.collect import collect_local
    from collector.exceptions import CollectError

    os.mkfifo(tmp_path / "pipe.log")
    with pytest.raises(IngestError, match=r"pipe.log: not a regular file \(fifo\)"):
        EventStore().ingest_path(tmp_path / "pipe.log")
    with pytest.raises(CollectError, match=r"pipe.log: not a regular file \(fifo\)"):
        collect_local([tmp_path / "pipe.log"], tmp_path / "out")


def _accounted(rep) -> int:
    """Lines accounted for: events, plus every line-consuming reason (skipped lines, joined continuation lines)."""
    return rep.events + rep.skipped + rep.by_reason.get(Reason.MULTILINE_JOINED, 0)


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00"), max_size=60)
_JSONISH = st.one_of(
    _TEXT,
    st.builds(lambda k, v: json.dumps({k: v}), _TEXT, st.one_of(st.integers(), st.floats(allow_nan=True), _TEXT)),
    st.builds(lambda v: '{"timestamp": ' + v + ', "outcome": "x"}',
              st.sampled_from(["1e300", "99999999999999999999999", "-1", "NaN", '"2026-01-05"', "1e11", "0"])),
    st.builds(lambda s: "{" + s, _TEXT),  # broken JSON
    st.just(""), st.just("   "),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_JSONISH, min_size=1, max_size=40))
def test_property_random_json_lines_every_line_an_event_or_counted(tmp_path, lines):
    p = tmp_path / "fn.jsonl"
    p.write_text('{"outcome": "first"}\n' + "".join(ln + "\n" for ln in lines), encoding="utf-8")
    _, rep = _ingest(p)
    assert _accounted(rep) == len(lines) + 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=3000), prefix=st.sampled_from([b"", b'{"a": 1}\n', b"2026-01-05T10:00:00.000Z x\n"]))
def test_property_random_bytes_never_raise_and_every_line_is_accounted(tmp_path, data, prefix):
    """Random bytes: a binary file (NUL bytes) is refused as not a log file; anything else ingests without an
    exception, and for the line formats every non-blank line is an event or counted."""
    from collector.ingest import UnknownFormatError
    from collector.ingest.types import LogFormat

    p = tmp_path / "fn.log"
    body = prefix + data
    p.write_bytes(body)
    try:
        _, rep = _ingest(p)
    except UnknownFormatError:
        assert b"\x00" in body[:65537]
        return
    (fr,) = rep.per_file.values()
    if fr.compressed:  # gzip magic at the start: the lines are those of the decompressed stream (tested above)
        assert rep.events == 0 or fr.by_reason
    elif fr.format in (LogFormat.JSON_LINES.value, LogFormat.LAMBDA_JSON.value):
        n_lines = body.count(b"\n") + (1 if body and not body.endswith(b"\n") else 0)
        assert _accounted(rep) == n_lines
    else:
        assert rep.events + rep.skipped >= (1 if body.strip(string.whitespace.encode()) else 0)


def test_export_object_dominated_by_traceback_lines_is_sniffed_by_structure(tmp_path):
    """AWS, "Exporting log data to Amazon S3": "Time-based sorting on chunks of log data inside an exported file is
    not guaranteed. [...] the following utility command sorts the events in all .gz files in a single folder.
    find . -exec zcat {} + | sed -r 's/^[0-9]+/\\x0&/' | sort -z" - every event of an export object starts on a line
    beginning with its timestamp; lines that do not are the rest of the event before them."""
    from collector.ingest.sniff import sniff
    from collector.ingest.types import LogFormat

    tb = "".join(f'  File "/var/task/app.py", line {i}, in handler\n    raise ValueError("x")\n' for i in range(10))
    text = (f"2026-01-05T10:00:00.000Z [ERROR] boom\nTraceback (most recent call last):\n{tb}ValueError: x\n"
            f"2026-01-05T10:00:01.000Z REPORT RequestId: r1\tDuration: 12.00 ms\tBilled Duration: 13 ms\t"
            f"Memory Size: 128 MB\tMax Memory Used: 60 MB\t\n")
    assert sniff(text.encode(), "000000") is LogFormat.EXPORT_S3  # 2 timestamped lines among 24
    p = tmp_path / "000000"
    p.write_text(text)
    store, rep = _ingest(p)
    rows = store.connection.sql('SELECT "@timestamp", "@type", "@duration" FROM events ORDER BY "@seq"').fetchall()
    assert rows == [(OK_MS, None, None), (OK_MS + 1000, "REPORT", 12.0)]
    assert rep.by_reason[Reason.MULTILINE_JOINED] == 22


def test_fields_of_the_first_embedded_json_fragment_are_discovered(tmp_path):
    """AWS, "Supported logs and discovered fields": "CloudWatch Logs Insights automatically discovers log fields in
    Lambda logs, but only for the first embedded JSON fragment in each log event." """
    from collector.insights import run_query

    p = tmp_path / "fn.log"
    p.write_text("START RequestId: 8f5e0c3a-1b2c-4d5e-8f9a-0b1c2d3e4f5a Version: $LATEST\n"
                 "2026-01-05T10:00:00.000Z\t8f5e0c3a-1b2c-4d5e-8f9a-0b1c2d3e4f5a\tINFO\tgot "
                 '{"outcome": "first", "n": 1} then {"outcome": "second", "m": 2}\n'
                 "2026-01-05T10:00:01.000Z\t8f5e0c3a-1b2c-4d5e-8f9a-0b1c2d3e4f5a\tINFO\tno json {here\n")
    store, rep = _ingest(p)
    assert rep.by_reason[Reason.EMBEDDED_JSON] == 1
    res = run_query(store, "fields outcome, n, m | filter ispresent(outcome)")
    assert [(r["outcome"], r["n"], r["m"]) for r in res.to_records()] == [("first", 1, None)]
    # a message starting with "{" that holds two objects: the first one's fields, not none
    q = tmp_path / "two.jsonl"
    q.write_text('{"outcome": "a", "k": 1} {"outcome": "b"}\n')
    store, rep = _ingest(q)
    res = run_query(store, "fields outcome, k")
    assert [(r["outcome"], r["k"]) for r in res.to_records()] == [("a", 1)]
