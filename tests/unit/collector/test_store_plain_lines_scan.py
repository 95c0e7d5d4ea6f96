"""The pre-scan that admits a plain line file to DuckDB's line reader (``store._plain_lines_ok``) against its
definition applied to the whole file at once: no ``\\r``, no ``\\x01``, valid UTF-8, every ``\\n``-terminated line at
most ``MAX_EVENT_BYTES`` bytes, an unterminated last line at most one byte more (the rule the scan has always
applied: the distance between two line boundaries, a file's last byte counting as one).

The scan reads the file in blocks and jumps between newlines; the properties shrink the block and the event size so
that lines, multi-byte characters and invalid bytes fall across block boundaries."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import collector.ingest.store as store_mod


def oracle(data: bytes, max_event: int) -> bool:
    if b"\r" in data or b"\x01" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    lines = data.split(b"\n")
    terminated, last = lines[:-1], lines[-1]
    return all(len(ln) <= max_event for ln in terminated) and len(last) <= max_event + 1


def scan(data: bytes, monkeypatch: pytest.MonkeyPatch, block: int, max_event: int) -> bool:
    monkeypatch.setattr(store_mod, "_SCAN_BYTES", block)
    monkeypatch.setattr(store_mod, "MAX_EVENT_BYTES", max_event)
    return store_mod._plain_lines_ok(io.BytesIO(data))


PIECES = st.sampled_from([b"\n", b"\n", b"\n", b"a", b"xyz", b"{\"k\":1}", b"\r", b"\x01", "é".encode(),
                          "€".encode(), "😀".encode(), b"\xe2\x82", b"\x82", b"\xff", b"\xf0\x9f", b"\xc3", b" "])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(PIECES, max_size=60).map(b"".join), block=st.integers(1, 16), max_event=st.integers(1, 12))
def test_scan_equals_the_whole_file_rule(data: bytes, block: int, max_event: int,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert scan(data, monkeypatch, block, max_event) is oracle(data, max_event)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lengths=st.lists(st.integers(0, 14), min_size=1, max_size=12), block=st.integers(1, 9),
       max_event=st.integers(1, 10), terminated=st.booleans())
def test_line_lengths_at_the_limit(lengths: list[int], block: int, max_event: int, terminated: bool,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines of chosen lengths around the limit (ASCII, so only the length rule decides)."""
    data = b"\n".join(b"x" * n for n in lengths) + (b"\n" if terminated else b"")
    assert scan(data, monkeypatch, block, max_event) is oracle(data, max_event)


@pytest.mark.parametrize(("data", "expected"), [
    (b"", True),
    (b"\n\n\n", True),
    (b"abcde\n", True),  # 5 bytes: at the limit
    (b"abcdef\n", False),  # 6 bytes
    (b"ab\nabcdef", True),  # an unterminated last line: one byte more (the boundary is its last byte)
    (b"ab\nabcdefg", False),
    (b"abc\rd\n", False),
    (b"abc\x01\n", False),
    ("ab€\n".encode(), True),  # 5 bytes, a 3-byte character across the 4-byte blocks
    (b"ab\xe2\x82\n", False),  # a character cut by a newline
    (b"ab\xe2\x82", False),  # cut by the end of the file
    (b"abcd\xff", False),  # an invalid byte in a short last block
])
def test_by_hand(data: bytes, expected: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    assert scan(data, monkeypatch, 4, 5) is expected


def test_real_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real limit and a block of 1 MiB: a line of MAX_EVENT_BYTES passes, one byte more does not, wherever it
    falls against the blocks."""
    monkeypatch.setattr(store_mod, "_SCAN_BYTES", 1 << 20)
    m = store_mod.MAX_EVENT_BYTES
    for lead in (0, 1, 1000, (1 << 20) - 3):
        ok = b"a\n" * (lead // 2) + b"z" * m + b"\nb\n"
        assert store_mod._plain_lines_ok(io.BytesIO(ok))
        assert not store_mod._plain_lines_ok(io.BytesIO(b"a\n" * (lead // 2) + b"z" * (m + 1) + b"\nb\n"))
