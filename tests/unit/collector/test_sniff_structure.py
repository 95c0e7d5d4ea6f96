"""Format sniffing rests on structure: messages dominated by continuation lines (tracebacks, pretty-printed JSON,
lines that look like another format's event starts) never change the format a file is read as.

What each format's structure is, from the AWS documentation:

- export-to-S3 ("Exporting log data to Amazon S3"): "find . -exec zcat {} + | sed -r 's/^[0-9]+/\\x0&/' | sort -z"
  sorts the events of an export: every event starts on a line that begins with its timestamp, the other lines
  continue it.
- filter-log-events / get-log-events: one JSON response, ``{"events": [...], "searchedLogStreams": [...],
  "nextToken": ...}`` (FilterLogEvents / GetLogEvents API reference, Response Syntax); messages are JSON strings, so
  a multi-line message is one escaped string.
- console CSV: a header row, then RFC 4180 rows; a multi-line message is one quoted field.
- Lambda JSON log format ("Configuring JSON and plain text log formats"): each event one JSON object, the platform
  events with ``"type": "platform.start"`` / ``"platform.report"`` etc.
- Lambda text format: START/END/REPORT RequestId lines and ``[LEVEL]\\t<ts>\\t<request id>\\t`` runtime lines start
  events; a multi-line message (a traceback) continues on the following lines.
"""

from __future__ import annotations

import csv
import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from collector.ingest import EventStore
from collector.ingest.sniff import sniff
from collector.ingest.types import LogFormat

RID = "6d68ca91-49c9-448d-89b8-7ca3e6dc66aa"
TS = "2026-01-05T10:00:00.000Z"
REPORT = f"REPORT RequestId: {RID}\tDuration: 12.00 ms\tBilled Duration: 13 ms\tMemory Size: 128 MB\tMax Memory Used: 60 MB\t"

_TRACEBACK = st.sampled_from(["Traceback (most recent call last):", '  File "/var/task/app.py", line 12, in handler',
                              '    raise ValueError("bad")', "ValueError: bad", "    at Runtime.handler (index.js:5:9)",
                              "Caused by: java.io.IOException: x", "\tat com.example.App.run(App.java:10)"])
_PRETTY = st.sampled_from(["{", "}", "  },", '  "events": [', '  "type": "platform.report",', '    "a": 1,', "  ]",
                           '  "message": "START RequestId: x",', "["])
"""Lines of pretty-printed JSON: none of them a complete JSON object."""
_STAMPED_TEXT = st.builds(lambda s, w: f"2026-01-05T10:00:{s:02d}.000Z {w}", st.integers(0, 59),
                          st.sampled_from(["row 1", "job done", "WARN disk", "x=1"]))
"""A print() line that starts with an ISO timestamp and a space (what an export line looks like)."""
_JSON_OBJECT = st.sampled_from(['{"a": 1}', '{"level": "INFO", "message": "nested"}', '{"events": [1]}'])
_PLATFORM = st.sampled_from([f"START RequestId: {RID} Version: $LATEST", f"END RequestId: {RID}", REPORT,
                             "INIT_START Runtime Version: python:3.12.v1"])

_CONTINUATION = st.one_of(_TRACEBACK, _PRETTY)
_HOSTILE = st.one_of(_TRACEBACK, _PRETTY, _STAMPED_TEXT, _JSON_OBJECT, _PLATFORM)


def _lines(strategy, lo: int = 0, hi: int = 40):
    return st.lists(strategy, min_size=lo, max_size=hi)


# --------------------------------------------------------------------------- export-to-S3
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["[ERROR] boom", "hello", REPORT, '{"outcome": "received"}']),
                          _lines(st.one_of(_TRACEBACK, _PRETTY, _JSON_OBJECT, _PLATFORM), 0, 60)),
                min_size=1, max_size=8))
def test_export_object_any_continuation_lines(events):
    """An export object starts at an event, so its stamped first line decides, whatever the continuation lines
    look like (even complete JSON objects or START/REPORT text inside a message)."""
    text = "".join(f"{TS} {first}\n" + "".join(c + "\n" for c in cont) for first, cont in events)
    assert sniff(text.encode(), "000000") is LogFormat.EXPORT_S3


@settings(max_examples=60, deadline=None)
@given(_lines(_CONTINUATION, 1, 300), st.lists(st.tuples(st.just("[ERROR] boom"), _lines(_CONTINUATION, 0, 80)),
                                               min_size=1, max_size=5))
def test_export_object_cut_mid_event(head, events):
    """An export file cut inside an event (it opens with continuation lines, as many as you like)."""
    text = "".join(h + "\n" for h in head) + "".join(
        f"{TS} {first}\n" + "".join(c + "\n" for c in cont) for first, cont in events)
    assert sniff(text.encode(), "part-0001") is LogFormat.EXPORT_S3


# --------------------------------------------------------------------------- Lambda text
_RUNTIME = st.sampled_from([f"[INFO]\t{TS}\t{RID}\tprocessing", f"[ERROR]\t{TS}\t{RID}\tboom",
                            f"[WARNING]\t{TS}\t{RID}\tslow"])


@settings(max_examples=60, deadline=None)
@given(_lines(st.one_of(_TRACEBACK, _PRETTY), 0, 400),
       st.lists(st.tuples(_RUNTIME, _lines(st.one_of(_TRACEBACK, _PRETTY, _STAMPED_TEXT), 0, 60)), max_size=6),
       st.booleans())
def test_lambda_text_dominated_by_continuation_lines(head, events, with_start):
    """Lambda text: a leading block of continuation lines (a file cut inside a traceback or a pretty-printed JSON
    dump, even one opening like a filter-log-events page), stamped print() lines inside messages, and markers
    only after the first 200 lines."""
    body = [f"START RequestId: {RID} Version: $LATEST"] if with_start else []
    for first, cont in events:
        body += [first, *cont]
    body += [f"END RequestId: {RID}", REPORT]
    text = "".join(ln + "\n" for ln in head + body)
    assert sniff(text.encode(), "orders.log") is LogFormat.LAMBDA_TEXT


def test_lambda_text_cut_inside_a_pretty_printed_response_like_dump():
    """The dump at the top opens like a FilterLogEvents response, but lines of text follow the document."""
    dump = json.dumps({"events": [{"id": i} for i in range(100)], "nextToken": "t"}, indent=2)
    text = f"{dump}\nSTART RequestId: {RID} Version: $LATEST\n{REPORT}\n"
    assert sniff(text.encode(), "orders.log") is LogFormat.LAMBDA_TEXT
    store = EventStore()
    rep = store.ingest_bytes(text.encode(), "orders.log")
    rows = store.connection.sql('SELECT "@type", "@duration", strlen("@message") FROM events ORDER BY "@seq"').fetchall()
    assert rows == [(None, None, len(dump)), ("START", None, len(f"START RequestId: {RID} Version: $LATEST")),
                    ("REPORT", 12.0, len(REPORT))]
    assert rep.events == 3


def test_lambda_text_with_stamped_print_lines_keeps_its_report_fields():
    """Three stamped print() lines between START and END used to outvote the three platform lines (export-to-S3);
    an unstamped START line cannot be in an export, where every event carries the timestamp prefix."""
    rows = "".join(f"2026-01-05T10:00:0{i}.000Z row {i}\n" for i in range(3))
    text = f"START RequestId: {RID} Version: $LATEST\n{rows}END RequestId: {RID}\n{REPORT}\n"
    assert sniff(text.encode(), "orders.log") is LogFormat.LAMBDA_TEXT
    store = EventStore()
    store.ingest_bytes(text.encode(), "orders.log")
    assert store.connection.sql("""SELECT "@type", "@duration" FROM events WHERE "@type" = 'REPORT'""").fetchall() \
        == [("REPORT", 12.0)]


# --------------------------------------------------------------------------- JSON lines / Lambda JSON
_RECORD = st.fixed_dictionaries(
    {"level": st.sampled_from(["INFO", "ERROR"]),
     "message": st.one_of(st.text(max_size=30), st.builds("\n".join, _lines(_HOSTILE, 1, 20)))},
    optional={"events": st.integers(), "type": st.sampled_from(["order", "function"]), "stack": st.builds(
        "\n".join, _lines(_TRACEBACK, 1, 30))})


@settings(max_examples=60, deadline=None)
@given(st.lists(_RECORD, min_size=1, max_size=300), st.sampled_from(["app.log", "app.jsonl", "app"]))
def test_json_lines_with_multi_line_messages(records, name):
    """Multi-line messages are escaped inside one JSON line, whatever text they hold."""
    text = "".join(json.dumps(r) + "\n" for r in records)
    assert sniff(text.encode(), name) is LogFormat.JSON_LINES


@settings(max_examples=60, deadline=None)
@given(st.lists(_RECORD, min_size=0, max_size=20), st.integers(0, 600), st.integers(0, 620))
def test_lambda_json_platform_record_anywhere_in_the_window(records, pad, at):
    """A platform record decides the Lambda JSON format wherever it is in the sniff window, not only among the
    first 200 lines (or the first 50 JSON lines)."""
    lines = [json.dumps(r) for r in records] + [json.dumps({"level": "INFO", "message": f"m{i}"}) for i in range(pad)]
    lines.insert(min(at, len(lines)), json.dumps({"time": TS, "type": "platform.report",
                                                  "record": {"requestId": RID, "metrics": {"durationMs": 1.0}}}))
    text = "".join(ln + "\n" for ln in lines)
    assert len(text) < 64 * 1024
    assert sniff(text.encode(), "fn.log") is LogFormat.LAMBDA_JSON


# --------------------------------------------------------------------------- filter-log-events
_MESSAGE = st.builds("\n".join, _lines(_HOSTILE, 1, 30))


@settings(max_examples=60, deadline=None)
@given(st.lists(_MESSAGE, max_size=30), st.sampled_from([None, 2, 4]), st.booleans(),
       st.sampled_from(["page", "pages", "bare"]), st.integers(0, 5000))
def test_filter_log_events_documents(messages, indent, sort_keys, shape, cut):
    """Response pages (pretty-printed or not, keys in any order, one or a list of pages, a bare list of events),
    whole or cut short by an interrupted download."""
    events = [{"logStreamName": "s", "timestamp": 1767607200000 + i, "message": m, "ingestionTime": 1767607200500,
               "eventId": f"{i:056d}"} for i, m in enumerate(messages)]
    page = {"events": events, "searchedLogStreams": [], "nextToken": "tok"}
    doc = {"page": page, "pages": [page, page], "bare": events}[shape]
    text = json.dumps(doc, indent=indent, sort_keys=sort_keys)
    if cut and cut < len(text):
        text = text[: max(cut, 40)]
    assert sniff(text.encode(), "events.json") is LogFormat.FILTER_LOG_EVENTS


# --------------------------------------------------------------------------- console CSV
@settings(max_examples=60, deadline=None)
@given(st.lists(_MESSAGE, min_size=1, max_size=40), st.booleans())
def test_console_csv_with_multi_line_quoted_messages(messages, with_stream):
    """Every kind of hostile line inside quoted multi-line messages; the header row decides."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["@timestamp", "@message", "@logStream"] if with_stream else ["timestamp", "message"])
    for i, m in enumerate(messages):
        w.writerow(["2026-01-05 10:00:00.000", m, "s"] if with_stream else [1767607200000 + i, m])
    assert sniff(buf.getvalue().encode(), "logs-insights-results.csv") is LogFormat.CONSOLE_CSV
