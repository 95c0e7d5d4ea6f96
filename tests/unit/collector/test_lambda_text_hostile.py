"""The Lambda text framing rule on hostile lines: a line starts an event when it is a Lambda line
(``sniff.LAMBDA_TEXT_START``) or one JSON object as DuckDB's JSON reader takes it, the same reader that decides
whether its fields are discovered (so a line that starts an event and a message whose fields are read never
disagree). Every other line continues the event before it; every line is counted."""

from __future__ import annotations

import pytest

from collector.ingest import EventStore, LogFormat

RID = "52e6b438-f2a7-4269-a651-0c5ca6a3a450"
DEEP = '{"a":' * 5000 + "1" + "}" * 5000

# (line, starts an event?) by hand, from what DuckDB's JSON reader (yyjson, its lenient flags) accepts
HOSTILE = [
    ('{"a":1,}', True),  # a trailing comma: accepted
    ('{"a":[1,2 ,\t]}', True),
    ('{"a":nan}', True),  # nan/inf spellings: accepted
    ('{"a":-inf}', True),
    ('{"a":' + "7" * 5000 + "}", True),  # a number of 5,000 digits (read as a double)
    (DEEP, True),  # nested 5,000 deep
    ('{"a":NaN}', True),
    ('{"a":[Infinity, -Infinity]}', True),
    ('{"a":"\\ud800"}', False),  # an escaped lone surrogate: no UTF-8 form, rejected
    ('{"level":"INFO","message":"nan, inf"}', True),  # the words inside strings change nothing
    ('{"a":1}  \u00a0', False),  # U+00A0 is not JSON whitespace
    ('{"a":1}  ', True),  # trailing JSON whitespace is
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


def _events(lines: list[str]) -> tuple[list[str], object]:
    store = EventStore()
    rep = store.ingest_bytes(("\n".join(lines) + "\n").encode(), "fn.log", fmt=LogFormat.LAMBDA_TEXT)
    return [m for (m,) in store.connection.execute('SELECT "@message" FROM events ORDER BY "@seq"').fetchall()], rep


@pytest.mark.parametrize(("line", "starts"), HOSTILE)
def test_hostile_line_after_an_event(line: str, starts: bool) -> None:
    info = f"[INFO]\t2026-01-05T10:00:00.000Z\t{RID}\tnext"
    got, rep = _events([info, line, f"END RequestId: {RID}"])
    if starts:
        assert got == [info, line, f"END RequestId: {RID}"]
    elif line:
        assert got == [f"{info}\n{line}", f"END RequestId: {RID}"]
        assert rep.by_reason["continuation_lines_joined"] == 1
    else:  # a blank line between two events belongs to none
        assert got == [info, f"END RequestId: {RID}"] and rep.by_reason["blank_line"] == 1


def test_every_line_of_a_hostile_file_is_an_event_or_counted() -> None:
    lines = [f"START RequestId: {RID} Version: $LATEST"]
    for line, _ in HOSTILE:
        lines += [f"[INFO]\t2026-01-05T10:00:00.000Z\t{RID}\tnext", line, '{"outcome":"succeeded","attempt":"3"}']
    lines += [f"END RequestId: {RID}"]
    got, rep = _events(lines)
    # START, END, per hostile line an [INFO] event, the outcome event and the line itself when it starts one
    assert rep.events == len(got) == 2 + 2 * len(HOSTILE) + sum(1 for _, s in HOSTILE if s)
    assert rep.events + rep.skipped + rep.by_reason["continuation_lines_joined"] == len(lines)


def test_lone_surrogate_escape_is_kept_as_text() -> None:
    """``{"a":"\\ud800"}``: DuckDB's reader rejects it (no UTF-8 form), so it is a text event with no field."""
    store = EventStore()
    rep = store.ingest_bytes(b'{"a":"\\ud800"}\n{"a":1}\n', "fn.jsonl")
    assert (rep.events, rep.by_reason["invalid_json_kept_as_text"]) == (2, 1)
    assert "fields_from_embedded_json_fragment" not in rep.by_reason
    assert store.connection.execute('SELECT count(*) FROM events WHERE "@json" IS NOT NULL').fetchall() == [(1,)]
