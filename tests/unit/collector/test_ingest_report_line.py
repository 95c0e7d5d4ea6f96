"""The fields of a text ``REPORT`` line (request id, durations in ms, memory in bytes with 1 MB = 10^6 bytes), each
label searched anywhere in the message, checked against Python's ``re`` over lines in the runtime's order, shuffled,
cut, repeated and garbled. (One regex over the runtime's layout instead of one per field gave the same values in the
same CPU time, 0.22 s per 100k REPORT lines on one thread, so the ingest keeps one per field.)"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from collector.ingest import EventStore
from collector.ingest.constants import MB

_FIELDS = {  # column: (regex searched anywhere, scale); RE2's \s is [\t\n\f\r ]
    "@duration": (r"\tDuration: ([0-9.]+) ms", 1),
    "@billedDuration": (r"Billed Duration: ([0-9.]+) ms", 1),
    "@memorySize": (r"Memory Size: ([0-9.]+) MB", MB),
    "@maxMemoryUsed": (r"Max Memory Used: ([0-9.]+) MB", MB),
    "@initDuration": (r"Init Duration: ([0-9.]+) ms", 1),
}


def oracle(msg: str) -> dict[str, object]:
    out: dict[str, object] = {"@requestId": re.match(r"REPORT RequestId: ([^\t\n\f\r ]+)", msg).group(1)}
    for col, (pattern, scale) in _FIELDS.items():
        m = re.search(pattern, msg)
        try:
            out[col] = float(m.group(1)) * scale if m else None
        except ValueError:  # "1.2.3": not a number (TRY_CAST gives NULL)
            out[col] = None
    return out


NUMBERS = st.sampled_from(["43.90", "152", "128", "0", "3000.00", "1.2.3", ".", "107.26", "9"])
RIDS = st.sampled_from(["8a3e-41", "x", "a\tb", "id:Duration"])


@st.composite
def report_lines(draw) -> str:
    parts = [f"\tDuration: {draw(NUMBERS)} ms", f"\tBilled Duration: {draw(NUMBERS)} ms",
             f"\tMemory Size: {draw(NUMBERS)} MB", f"\tMax Memory Used: {draw(NUMBERS)} MB"]
    if draw(st.booleans()):
        parts.append(f"\tInit Duration: {draw(NUMBERS)} ms")
    if draw(st.booleans()):
        parts.append("\tStatus: timeout")
    how = draw(st.sampled_from(["runtime", "shuffled", "dropped", "repeated", "garbled"]))
    if how == "shuffled":
        parts = draw(st.permutations(parts))
    elif how == "dropped":
        del parts[draw(st.integers(0, len(parts) - 1))]
    elif how == "repeated":
        parts.insert(0, parts[draw(st.integers(0, len(parts) - 1))])
    elif how == "garbled":
        i = draw(st.integers(0, len(parts) - 1))
        parts[i] = parts[i].replace(" ms", "ms").replace(" MB", " mb").replace("\t", " ")
    return f"REPORT RequestId: {draw(RIDS)}" + "".join(parts) + "\t"


def _stored(lines: list[str]) -> list[dict[str, object]]:
    store = EventStore()
    store.ingest_events([{"timestamp": 1767607200000 + i, "message": m} for i, m in enumerate(lines)], "/aws/lambda/f")
    cols = ["@requestId", *_FIELDS]
    rows = store.connection.sql(f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM events '
                                'ORDER BY "@seq"').fetchall()
    return [dict(zip(cols, r, strict=True)) for r in rows]


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(report_lines(), min_size=1, max_size=20))
def test_report_fields_equal_the_field_by_field_search(lines: list[str]) -> None:
    assert _stored(lines) == [oracle(m) for m in lines]


def test_the_runtimes_lines_by_hand() -> None:
    warm = "REPORT RequestId: 8a3e\tDuration: 43.90 ms\tBilled Duration: 44 ms\tMemory Size: 128 MB\tMax Memory Used: 46 MB\t"
    cold = warm + "Init Duration: 107.26 ms\t"
    timeout = warm + "Status: timeout"
    assert _stored([warm, cold, timeout]) == [
        {"@requestId": "8a3e", "@duration": 43.9, "@billedDuration": 44.0, "@memorySize": 128e6,
         "@maxMemoryUsed": 46e6, "@initDuration": init} for init in (None, 107.26, None)]
