"""The Lambda text framing rule (``starts_event``: Python's ``json`` decides what a JSON object line is) on the lines
where Python's and DuckDB's JSON readers differ, the store's piecewise framing against the rule applied to the whole
file, and hostile JSON that made the ingest fail: a line nested deeper than Python reads (a continuation line now),
an embedded fragment with an escaped lone surrogate (text now)."""

from __future__ import annotations

import json

import pytest

from collector.ingest import EventStore
from collector.ingest.lambda_text import frame_events, starts_event

RID = "52e6b438-f2a7-4269-a651-0c5ca6a3a450"
DEEP = '{"a":' * 5000 + "1" + "}" * 5000

# (line, starts an event?) by hand, from what json.loads accepts (DuckDB's reader accepts the first four too)
HOSTILE = [
    ('{"a":1,}', False),  # trailing comma: DuckDB accepts it, json.loads does not
    ('{"a":[1,2 ,\t]}', False),
    ('{"a":nan}', False),  # DuckDB accepts nan/inf spellings; json.loads only NaN, Infinity, -Infinity
    ('{"a":-inf}', False),
    ('{"a":' + "7" * 5000 + "}", False),  # more digits than int() converts (sys.get_int_max_str_digits)
    (DEEP, False),  # json.loads: RecursionError
    ('{"a":NaN}', True),
    ('{"a":[Infinity, -Infinity]}', True),
    ('{"a":"\\ud800"}', True),  # an escaped lone surrogate: json.loads accepts it, DuckDB does not
    ('{"level":"INFO","message":"nan, inf"}', True),  # the words inside strings change nothing
    ('{"a":1}  \u00a0', True),  # trailing whitespace (str.strip's) is ignored
    (' {"a":1}', False),  # a JSON object starts an event only at the line's start
    ('{"a":1}{"b":2}', False),
    ("{'a':1}", False),
    ('{"a":"\t"}', False),  # a raw control character in a string
    ("{}", True),
    ('{"a":1e400}', True),
    (f"START RequestId: {RID} Version: $LATEST", True),
    ("{not json}", False),
    ("", False),
]


@pytest.mark.parametrize(("line", "starts"), HOSTILE)
def test_hostile_lines_by_hand(line: str, starts: bool) -> None:
    assert starts_event(line) is starts


def test_store_frames_a_file_as_the_python_rule_does(tmp_path) -> None:
    """Every event of a Lambda text file with hostile JSON lines, ingested (in pieces), equals
    ``frame_events`` of all its lines at once, and every line is counted."""
    lines = [f"START RequestId: {RID} Version: $LATEST"]
    for line, _ in HOSTILE:
        lines += [f"[INFO]\t2026-01-05T10:00:00.000Z\t{RID}\tnext", line, '{"outcome":"succeeded","attempt":"3"}']
    lines += [f"END RequestId: {RID}"]
    p = tmp_path / "fn.log"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = EventStore()
    rep = store.ingest_path(p)
    oracle = frame_events(lines)
    got = store.connection.execute('SELECT "@message" FROM events ORDER BY "@seq"').fetchall()
    assert [m for (m,) in got] == [msg for _, msg, _ in oracle]
    # START, END, per hostile line an [INFO] event, the outcome event and the line itself when it starts one
    assert rep.events == len(oracle) == 2 + 2 * len(HOSTILE) + sum(1 for _, s in HOSTILE if s) == 50
    assert rep.by_reason["blank_line"] == len(lines) - sum(n for *_, n in oracle) == 1  # the "" line between events


def test_deeply_nested_json_line_continues_its_event() -> None:
    data = (f"START RequestId: {RID} Version: $LATEST\n{DEEP}\nEND RequestId: {RID}\n").encode()
    store = EventStore()
    rep = store.ingest_bytes(data, "fn.log")
    assert (rep.format, rep.events) == ("lambda-text", 2)
    msgs = [m for (m,) in store.connection.execute('SELECT "@message" FROM events ORDER BY "@seq"').fetchall()]
    assert msgs == [f"START RequestId: {RID} Version: $LATEST\n{DEEP}", f"END RequestId: {RID}"]
    assert json.loads('{"a":1}') and not starts_event(DEEP)


def test_lone_surrogate_escape_is_kept_as_text() -> None:
    """``{"a":"\\ud800"}``: DuckDB's reader rejects it (no UTF-8 form), so it is a text event with no field; before,
    Python's reading of it as an embedded fragment made the whole ingest fail."""
    store = EventStore()
    rep = store.ingest_bytes(b'{"a":"\\ud800"}\n{"a":1}\n', "fn.jsonl")
    assert (rep.events, rep.by_reason["invalid_json_kept_as_text"]) == (2, 1)
    assert "fields_from_embedded_json_fragment" not in rep.by_reason
    assert store.connection.execute('SELECT count(*) FROM events WHERE "@json" IS NOT NULL').fetchall() == [(1,)]
