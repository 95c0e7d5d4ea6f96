"""The document formats read as streams: a filter-log-events document (the AWS CLI's merged output, pages, bare
arrays, cut downloads) and a console CSV export give the same events whatever pieces they are read in, and the same
as reading the whole text at once with Python's ``json`` / ``csv`` (the oracles); a gzip source streams as its
decompressed bytes."""

from __future__ import annotations

import csv
import gzip
import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from collector.ingest import EventStore
from collector.ingest.console_csv import iter_rows
from collector.ingest.filter_log_events import iter_events
from collector.ingest.source import SourceReader
from collector.ingest.types import FileReport

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
EVENT = st.fixed_dictionaries({"logStreamName": st.just("2026/01/05/[$LATEST]ab"),
                               "timestamp": st.integers(0, 2**45), "message": _TEXT,
                               "ingestionTime": st.integers(0, 2**45), "eventId": st.from_regex(r"\A\d{1,56}\Z")})


def _pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut after a newline near each of ``cuts`` (the store cuts its pieces after a ``\\n``)."""
    out, at = [], 0
    for c in sorted(cuts):
        nl = data.find(b"\n", max(c, at))
        if nl < 0:
            break
        out.append(data[at:nl + 1])
        at = nl + 1
    out.append(data[at:])
    return [p for p in out if p]


@settings(max_examples=80, deadline=None)
@given(events=st.lists(EVENT, max_size=20), cuts=st.lists(st.integers(0, 4000), max_size=6),
       shape=st.sampled_from(["merged", "pages", "bare", "concatenated"]), indent=st.sampled_from([None, 4]))
def test_filter_log_events_in_any_pieces(events, cuts, shape, indent) -> None:
    half = len(events) // 2
    doc: object = {"events": events, "searchedLogStreams": []}
    if shape == "pages":
        doc = [{"events": events[:half], "nextToken": "x"}, {"events": events[half:]}]
    elif shape == "bare":
        doc = events
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    if shape == "concatenated":
        text = "\n".join(json.dumps({"nextToken": "t", "events": part}, indent=indent, ensure_ascii=False)
                         for part in (events[:half], events[half:]))
    rep = FileReport("x", "filter-log-events")
    got = [e for batch in iter_events(_pieces(text.encode(), cuts), rep) for e in batch]
    assert got == events and not rep.by_reason


@settings(max_examples=60, deadline=None)
@given(events=st.lists(EVENT, min_size=1, max_size=10), cut=st.integers(1, 10_000))
def test_a_cut_document_keeps_every_complete_event(events, cut) -> None:
    text = json.dumps({"events": events}, indent=4, ensure_ascii=False).encode()
    cut = min(cut, len(text) - 1)
    rep = FileReport("x", "filter-log-events")
    got = [e for batch in iter_events([text[:cut]], rep) for e in batch]
    assert got == events[:len(got)]  # a prefix of the events, each whole
    closed = cut > text.rindex(b"]")  # the events array ended before the cut: nothing is missing
    assert rep.by_reason.get("filter_log_events_truncated", 0) == (0 if closed else 1)


ROW = st.tuples(st.integers(10**11, 2**45),  # epoch ms (a number below 10^11 is read as epoch seconds)
                st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)
                .map(lambda m: "x" + m))


@settings(max_examples=80, deadline=None)
@given(rows=st.lists(ROW, max_size=20), cuts=st.lists(st.integers(0, 2000), max_size=6))
def test_console_csv_in_any_pieces(rows, cuts) -> None:
    """Quoted messages with newlines, quotes and commas, cut anywhere between pieces: the rows of Python's ``csv``
    reading the whole text."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)  # the console quotes every message
    w.writerow(["timestamp", "message"])
    w.writerows(rows)
    oracle = [(int(ts), msg) for ts, msg in list(csv.reader(io.StringIO(buf.getvalue(), newline="")))[1:]]
    rep = FileReport("x", "console-csv")
    got = [(r["timestamp"], r["message"]) for batch in iter_rows(_pieces(buf.getvalue().encode(), cuts), rep)
           for r in batch]
    assert got == oracle == rows and not rep.by_reason


@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=5000), members=st.integers(1, 3), step=st.integers(1, 700))
def test_gzip_source_reads_as_its_bytes_in_any_steps(data, members, step) -> None:
    part = len(data) // members + 1
    blob = b"".join(gzip.compress(data[i:i + part]) for i in range(0, len(data), part)) or gzip.compress(b"")
    src = SourceReader(io.BytesIO(blob))
    assert src.compressed and src.peek(10) == data[:10]
    out = b""
    while chunk := src.read(step):
        out += chunk
    assert out == data and not src.truncated and src.bytes_read == len(blob)


def test_a_large_filter_log_events_document_is_not_held_whole(tmp_path, monkeypatch) -> None:
    """Read in pieces of 4 KiB, a document of 2,000 events is staged batch by batch: the store never sees it whole,
    and every event arrives once, in order."""
    import collector.ingest.store as store_mod

    monkeypatch.setattr(store_mod, "DOCUMENT_PIECE_BYTES", 4096)
    events = [{"logStreamName": "s", "timestamp": 1767607200000 + i, "message": f"m{i}\n",
               "ingestionTime": 1767607200500 + i, "eventId": str(i)} for i in range(2000)]
    p = tmp_path / "out.json"
    p.write_text(json.dumps({"events": events, "searchedLogStreams": []}, indent=4))
    staged = []
    real = store_mod.EventStore._staged_rows

    def spy(self, batch, *a, **k):
        staged.append(len(batch))
        return real(self, batch, *a, **k)

    monkeypatch.setattr(store_mod.EventStore, "_staged_rows", spy)
    store = EventStore()
    rep = store.ingest_path(p)
    assert rep.events == 2000 and len(staged) > 10 and max(staged) < 100
    got = store.connection.execute('SELECT "@timestamp", "@message" FROM events ORDER BY "@seq"').fetchall()
    assert got == [(e["timestamp"], e["message"]) for e in events]
