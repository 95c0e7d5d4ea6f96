"""Inclusive epoch-second windows: planning on a grid, splitting without overlap or gap, incremental gaps."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collector.cloudwatch.windows import Window, align_range, merge_adjacent, missing, plan_windows, split_window


def test_plan_windows_on_fixed_grid_clipped_to_range():
    # 10:17:05 .. 12:16:59 on a 1-hour grid: three windows, the first and last clipped
    a, b = 1_700_000_000 + 17 * 60 + 5, 1_700_000_000 + 2 * 3600 + 16 * 60 + 59
    ws = plan_windows(a, b, 3600)
    grid = (a // 3600 + 1) * 3600
    assert ws[0] == Window(a, grid - 1)
    assert all(w.seconds == 3600 for w in ws[1:-1])
    assert ws[-1].end == b and ws[-1].start % 3600 == 0
    assert sum(w.seconds for w in ws) == b - a + 1


def test_align_range_to_minutes():
    assert align_range(125, 185, 60) == (120, 239)


def test_split_is_m_and_m_plus_1():
    left, right = split_window(Window(0, 99))
    assert (left, right) == (Window(0, 49), Window(50, 99))


def test_split_aligned_to_minutes_and_unsplittable_minute():
    left, right = split_window(Window(600, 959), 60)  # 6 minutes -> 3 + 3
    assert (left, right) == (Window(600, 779), Window(780, 959))
    assert split_window(Window(600, 659), 60) is None  # one minute bin cannot be split
    assert split_window(Window(5, 5)) is None  # one second cannot be split


@given(st.integers(0, 10**6), st.integers(1, 10**5), st.sampled_from([1, 60, 3600]))
def test_split_covers_window_exactly(start, length, align):
    w = Window(start, start + length - 1)
    halves = split_window(w, align)
    if halves is None:
        assert w.start // align == w.end // align  # only when w lies in one unit
        return
    left, right = halves
    assert left.start == w.start and right.end == w.end and right.start == left.end + 1
    assert right.start % align == 0


def test_missing_windows_for_incremental_runs():
    planned = plan_windows(0, 4 * 3600 - 1, 3600)
    done = [Window(0, 3599), Window(3600, 5399), Window(5400, 7199)]  # second hour done in two pieces
    assert list(missing(planned, done)) == [Window(7200, 10799), Window(10800, 14399)]
    assert merge_adjacent(done) == [Window(0, 7199)]


def test_window_rejects_inverted_bounds_and_contains_ms():
    with pytest.raises(ValueError):
        Window(10, 9)
    w = Window(10, 11)
    assert w.contains_ms(10_000) and w.contains_ms(11_999) and not w.contains_ms(12_000) and not w.contains_ms(9_999)
