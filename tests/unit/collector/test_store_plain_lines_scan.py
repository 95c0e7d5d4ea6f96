"""The pre-scan that admits a plain line file to DuckDB's line reader (``store._plain_line_count``) against its
definition applied to the whole file at once: no ``\\r``, no ``\\x01``, valid UTF-8, every line at most
``MAX_EVENT_BYTES`` bytes without its ``\\n``, and a last line that ends with ``\\n`` (DuckDB's reader would read on
into what a writer appends to it); its count is the number of lines, the one DuckDB's reader returns. Only the first
``end`` bytes are looked at (the size recorded before the read).

The scan reads the file in blocks and jumps between newlines; the properties shrink the block and the event size so
that lines, multi-byte characters and invalid bytes fall across block boundaries."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import collector.ingest.store as store_mod


def oracle(data: bytes, max_event: int) -> int | None:
    """The number of lines, or None when the file is not admitted."""
    if b"\r" in data or b"\x01" in data:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if data and not data.endswith(b"\n"):
        return None  # an unterminated last line
    lines = data.split(b"\n")[:-1]
    return len(lines) if all(len(ln) <= max_event for ln in lines) else None


def scan(data: bytes, monkeypatch: pytest.MonkeyPatch, block: int, max_event: int, end: int | None = None
         ) -> int | None:
    monkeypatch.setattr(store_mod, "_SCAN_BYTES", block)
    monkeypatch.setattr(store_mod, "MAX_EVENT_BYTES", max_event)
    return store_mod._plain_line_count(io.BytesIO(data), end)


PIECES = st.sampled_from([b"\n", b"\n", b"\n", b"a", b"xyz", b"{\"k\":1}", b"\r", b"\x01", "é".encode(),
                          "€".encode(), "😀".encode(), b"\xe2\x82", b"\x82", b"\xff", b"\xf0\x9f", b"\xc3", b" "])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(PIECES, max_size=60).map(b"".join), block=st.integers(1, 16), max_event=st.integers(1, 12))
def test_scan_equals_the_whole_file_rule(data: bytes, block: int, max_event: int,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert scan(data, monkeypatch, block, max_event) == oracle(data, max_event)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(PIECES, max_size=60).map(b"".join), block=st.integers(1, 16), max_event=st.integers(1, 12),
       end=st.integers(0, 200))
def test_scan_of_a_prefix_is_the_rule_on_the_prefix(data: bytes, block: int, max_event: int, end: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytes past ``end`` (appended after the size was recorded) change nothing."""
    end = min(end, len(data))
    assert scan(data, monkeypatch, block, max_event, end) == oracle(data[:end], max_event)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lengths=st.lists(st.integers(0, 14), min_size=1, max_size=12), block=st.integers(1, 9),
       max_event=st.integers(1, 10), terminated=st.booleans())
def test_line_lengths_at_the_limit(lengths: list[int], block: int, max_event: int, terminated: bool,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines of chosen lengths around the limit (ASCII, so only the length rule decides)."""
    data = b"\n".join(b"x" * n for n in lengths) + (b"\n" if terminated else b"")
    assert scan(data, monkeypatch, block, max_event) == oracle(data, max_event)


@pytest.mark.parametrize(("data", "expected"), [
    (b"", 0),
    (b"\n\n\n", 3),
    (b"abcde\n", 1),  # 5 bytes: at the limit
    (b"abcdef\n", None),  # 6 bytes
    (b"ab\nabcde", None),  # an unterminated last line: the general path reads it
    (b"ab\nabcdef", None),  # one byte over (the scan once let this one through)
    (b"ab\nabcdefg", None),
    (b"abc\rd\n", None),
    (b"abc\x01\n", None),
    ("ab€\n".encode(), 1),  # 5 bytes, a 3-byte character across the 4-byte blocks
    (b"ab\xe2\x82\n", None),  # a character cut by a newline
    (b"ab\xe2\x82", None),  # cut by the end of the file
    (b"abcd\xff", None),  # an invalid byte in a short last block
])
def test_by_hand(data: bytes, expected: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert scan(data, monkeypatch, 4, 5) == expected


def test_real_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real limit and a block of 1 MiB: a line of MAX_EVENT_BYTES passes, one byte more does not, wherever it
    falls against the blocks, and the same for an unterminated last line."""
    monkeypatch.setattr(store_mod, "_SCAN_BYTES", 1 << 20)
    m = store_mod.MAX_EVENT_BYTES
    for lead in (0, 1, 1000, (1 << 20) - 3):
        ok = b"a\n" * (lead // 2) + b"z" * m + b"\nb\n"
        assert store_mod._plain_line_count(io.BytesIO(ok)) == lead // 2 + 2
        assert store_mod._plain_line_count(io.BytesIO(b"a\n" * (lead // 2) + b"z" * (m + 1) + b"\nb\n")) is None
        assert store_mod._plain_line_count(io.BytesIO(b"a\n" * (lead // 2) + b"z" * m)) is None
        assert store_mod._plain_line_count(io.BytesIO(b"a\n" * (lead // 2) + b"z" * (m + 1))) is None


LINE_PIECES = st.sampled_from([b"\n", b"\n", b"\n", b"a", b"{\"k\":1}", b" ", b"\t", "é".encode(), b"\"", b",", b"#",
                               b"'", b"\\"])


@settings(max_examples=150, deadline=None)
@given(data=st.lists(LINE_PIECES, max_size=80).map(lambda p: b"".join(p) + b"\n"))
def test_the_count_is_the_rows_of_duckdbs_line_reader(tmp_path_factory, data: bytes) -> None:
    """The count the scan returns is the number of rows ``LINE_READER`` gives (so the INSERT's ``@seq`` range and the
    blank-line count need no second pass over the file), and each row is the line's text."""
    import duckdb

    path = tmp_path_factory.mktemp("scan") / "f.jsonl"
    path.write_bytes(data)
    with open(path, "rb") as fh:
        count = store_mod._plain_line_count(fh)
    assert count is not None  # these pieces, ended by a newline, are always admitted
    con = duckdb.connect()
    rows = con.execute(f"SELECT line FROM {store_mod.LINE_READER}", {"path": str(path)}).fetchall()
    assert len(rows) == count
    expected = data.split(b"\n")
    if not expected[-1]:
        expected.pop()
    assert [r or "" for (r,) in rows] == [ln.decode() for ln in expected]
