"""``aws logs tail`` (detailed, short), ``sam logs`` and export-to-S3 output read as formats of their own: events
rendered the way those tools print them (aws-cli v2 ``awscli/customizations/logs/tail.py``; aws-sam-cli
``samcli/lib/observability/cw_logs/cw_log_formatters.py``, ``samcli/lib/utils/time.py``), then ingested, give back
each event's timestamp, log stream and message, and the Lambda fields of its message."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.ingest import EventStore, LogFormat, sniff

RID = "1f54cbff-baeb-4dfb-8692-76b523159834"
STREAM = "2026/11/30/[$LATEST]5fceeb3a63ad40568785b7df359d5c50"
T0 = 1795998394027


def _tail(ts: int, stream: str, msg: str) -> str:
    """``DetailedLogEventsFormatter.display_log_event`` without colours."""
    t = datetime.fromtimestamp(ts / 1000, UTC).isoformat(timespec="microseconds")
    return f"{t} {stream} {msg}".rstrip() + "\n"


def _tail_short(ts: int, stream: str, msg: str) -> str:
    """``ShortLogEventsFormatter.display_log_event`` without colours."""
    return f"{datetime.fromtimestamp(ts / 1000, UTC).strftime('%Y-%m-%dT%H:%M:%S')} {msg}".rstrip() + "\n"


def _sam(ts: int, stream: str, msg: str) -> str:
    """``CWJsonFormatter`` + ``CWPrettyPrintFormatter`` + ``CWAddNewLineIfItDoesntExist`` without colours."""
    if msg.startswith("{"):
        try:
            msg = json.dumps(json.loads(msg), indent=2)
        except ValueError:
            pass
    line = f"{stream} {datetime.fromtimestamp(int(ts) / 1000.0, tz=UTC).isoformat()} {msg}"
    return line if line.endswith("\n") else line + "\n"


def _export(ts: int, stream: str, msg: str) -> str:
    return f"{datetime.fromtimestamp(ts / 1000, UTC).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z {msg}\n"


RENDER = {LogFormat.AWS_LOGS_TAIL: _tail, LogFormat.AWS_LOGS_TAIL_SHORT: _tail_short, LogFormat.SAM_LOGS: _sam,
          LogFormat.EXPORT_S3: _export}


def _ingest(text: str, fmt: LogFormat | None = None):
    store = EventStore()
    rep = store.ingest_bytes(text.encode(), "viewer.log", fmt=fmt)
    rows = store.connection.execute('SELECT "@timestamp", "@logStream", "@message", "@type", "@requestId", '
                                    '"@duration", "@maxMemoryUsed", outcome FROM events ORDER BY "@seq"').fetchall()
    return rep, rows


LAMBDA = [
    (T0, f"START RequestId: {RID} Version: $LATEST\n"),
    (T0 + 1, json.dumps({"level": "INFO", "outcome": "succeeded", "message": "done"}) + "\n"),
    (T0 + 2, (f"[ERROR]\t2026-11-30T00:26:34.029Z\t{RID}\tboom\nTraceback (most recent call last):\n"
              '  File "/var/task/app.py", line 3, in handler\nValueError: x\n')),
    (T0 + 3, f"END RequestId: {RID}\n"),
    (T0 + 3, (f"REPORT RequestId: {RID}\tDuration: 1.68 ms\tBilled Duration: 2 ms\tMemory Size: 256 MB\t"
              "Max Memory Used: 37 MB\t\n")),
]


@pytest.mark.parametrize("fmt", list(RENDER))
def test_a_lambda_invocation_through_each_viewer(fmt: LogFormat) -> None:
    text = "".join(RENDER[fmt](ts, STREAM, msg) for ts, msg in LAMBDA)
    assert sniff(text.encode(), "viewer.log") is fmt
    rep, rows = _ingest(text)
    assert rep.format == fmt.value and rep.events == 5
    # the traceback's 3 lines; sam logs also prints the JSON record on 5 lines (json.dumps(indent=2))
    assert rep.by_reason.get("continuation_lines_joined") == (7 if fmt is LogFormat.SAM_LOGS else 3)
    short = fmt is LogFormat.AWS_LOGS_TAIL_SHORT
    assert [ts for ts, *_ in rows] == [(ts // 1000 * 1000 if short else ts) for ts, _ in LAMBDA]
    has_stream = fmt in (LogFormat.AWS_LOGS_TAIL, LogFormat.SAM_LOGS)
    assert {r[1] for r in rows} == {STREAM if has_stream else "viewer.log"}
    assert [r[3] for r in rows] == ["START", None, None, "END", "REPORT"]  # the Lambda fields, from the message
    assert rows[0][4] == rows[4][4] == RID and rows[4][5] == 1.68 and rows[4][6] == 37e6
    assert rows[1][7] == "succeeded"  # JSON fields discovered (sam logs re-indents the JSON: the same fields)
    assert rows[2][2].startswith("[ERROR]") and rows[2][2].endswith("ValueError: x")


_WORD = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\x85"),
                min_size=1, max_size=12)
_FIRST = _WORD.filter(lambda w: w.strip() == w and not w.startswith("{"))
_CONT = _WORD.map(lambda w: "  " + w.strip() if w.strip() else "  x")  # a continuation line cannot look like a prefix
MESSAGES = st.builds(lambda first, rest: "\n".join([first, *rest]), _FIRST, st.lists(_CONT, max_size=3))
EVENTS = st.lists(st.tuples(st.integers(T0, T0 + 10**9), MESSAGES), min_size=1, max_size=15)


@settings(max_examples=60, deadline=None)
@given(events=EVENTS, fmt=st.sampled_from(list(RENDER)),
       stream=st.from_regex(r"\A20\d\d/\d\d/\d\d/\[\$LATEST\][0-9a-f]{8}\Z"))
def test_rendered_events_come_back(events: list[tuple[int, str]], fmt: LogFormat, stream: str) -> None:
    """Any events printed by the tool are read back: one event each, its time (whole seconds for the short
    format), its stream when printed, and its message (the tools strip trailing whitespace)."""
    text = "".join(RENDER[fmt](ts, stream, msg) for ts, msg in events)
    rep, rows = _ingest(text, fmt)
    assert rep.events == len(events)
    assert rep.events + rep.skipped + rep.by_reason.get("continuation_lines_joined", 0) == text.count("\n")
    short = fmt is LogFormat.AWS_LOGS_TAIL_SHORT
    assert [r[0] for r in rows] == [ts // 1000 * 1000 if short else ts for ts, _ in events]
    assert [r[2] for r in rows] == [msg.rstrip() if fmt in (LogFormat.AWS_LOGS_TAIL, LogFormat.AWS_LOGS_TAIL_SHORT)
                                    else msg for _, msg in events]
    if fmt in (LogFormat.AWS_LOGS_TAIL, LogFormat.SAM_LOGS):
        assert {r[1] for r in rows} == {stream}


def test_a_whole_second_in_sam_logs_has_no_fraction() -> None:
    """``datetime.isoformat()`` drops the fraction on a whole second: ``2026-11-30T00:26:34+00:00``."""
    text = _sam(1795998394000, STREAM, "hello\n") + _sam(1795998394001, STREAM, "again\n")
    assert text.startswith(f"{STREAM} 2026-11-30T00:26:34+00:00 hello")
    _, rows = _ingest(text)
    assert [(r[0], r[2]) for r in rows] == [(1795998394000, "hello"), (1795998394001, "again")]


def test_an_impossible_date_in_a_prefix_continues_the_event() -> None:
    text = _tail(T0, STREAM, "first") + f"2026-02-30T00:00:00.000000+00:00 {STREAM} not a time\n"
    _, rows = _ingest(text, LogFormat.AWS_LOGS_TAIL)
    assert [r[2] for r in rows] == [f"first\n2026-02-30T00:00:00.000000+00:00 {STREAM} not a time"]
