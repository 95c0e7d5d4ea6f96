"""The Overview's server-drawn sparklines (dashboard.sparkline): bucketing and the SVG's geometry, by hand and by
property."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard import sparkline


def points(svg: str, tag: str = "polyline") -> list[tuple[float, float]]:
    m = re.search(rf'<{tag} points="([^"]+)"', svg)
    return [tuple(float(c) for c in p.split(",")) for p in m.group(1).split()] if m else []


def test_bucket_short_series_unchanged():
    assert sparkline.bucket([1, 2, 3], "sum", max_points=3) == [1.0, 2.0, 3.0]


def test_bucket_sums_counts_and_keeps_the_largest_rate():
    v = [0, 0, 9, 0, 1, 1, 0]  # 7 bins into at most 3 points: buckets of ceil(7/3) = 3 -> [0,0,9] [0,1,1] [0]
    assert sparkline.bucket(v, "sum", max_points=3) == [9.0, 2.0, 0.0]
    assert sparkline.bucket(v, "max", max_points=3) == [9.0, 1.0, 0.0]  # the one-bin spike keeps its height


def test_bucket_rejects_no_points():
    with pytest.raises(ValueError):
        sparkline.bucket([1], "sum", max_points=0)


@settings(deadline=None)  # a busy 2-core machine: no per-example time limit
@given(st.lists(st.floats(0, 1e9), min_size=1, max_size=2000), st.integers(1, 300))
def test_bucket_bounds_length_and_keeps_total_and_peak(values, n):
    s, m = sparkline.bucket(values, "sum", n), sparkline.bucket(values, "max", n)
    assert 1 <= len(s) == len(m) <= n
    assert math.isclose(sum(s), sum(values), rel_tol=1e-9, abs_tol=1e-6)
    assert max(m) == max(values)


def test_svg_area_geometry():
    svg = sparkline.svg([0, 5, 10], "area")
    # x spread over 240 units; y: 10 (the top) at 1.5, 0 at 38.5 (40 high, 1.5 of padding for the stroke)
    assert points(svg) == [(0.0, 38.5), (120.0, 20.0), (240.0, 1.5)]
    assert points(svg, "polygon") == [(0.0, 40.0), (0.0, 38.5), (120.0, 20.0), (240.0, 1.5), (240.0, 40.0)]
    assert 'viewBox="0 0 240 40"' in svg and sparkline.COLOUR in svg


def test_svg_line_has_no_fill_and_a_single_value_is_level():
    svg = sparkline.svg([3.0], "line")
    assert "<polygon" not in svg
    assert points(svg) == [(0.0, 1.5), (240.0, 1.5)]


def test_svg_all_zero_is_a_flat_line_at_the_bottom():
    assert {y for _, y in points(sparkline.svg([0, 0, 0], "line"))} == {38.5}


@pytest.mark.parametrize("bad", [[], [float("nan")], [float("inf")], [-1.0]])
def test_svg_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        sparkline.svg(bad, "line")


@settings(deadline=None)
@given(st.lists(st.floats(0, 1e12), min_size=1, max_size=200), st.sampled_from(["area", "line"]))
def test_svg_is_numbers_only_and_inside_its_box(values, chart):
    svg = sparkline.svg(values, chart)
    # nothing but the fixed markup and coordinates: no value from the logs can reach the image as text
    body = re.sub(r'points="[\d., ]+"', 'points=""', svg)
    assert body == re.sub(r'points="[\d., ]+"', 'points=""', sparkline.svg([1.0], chart))
    pts = points(svg)
    assert len(pts) == max(2, len(values))
    assert all(0 <= x <= sparkline.WIDTH and 1.5 <= y <= 38.5 for x, y in pts)
    assert min(y for _, y in pts) == (1.5 if max(values) > 0 else 38.5)  # the largest value touches the top
