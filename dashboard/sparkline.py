"""Overview tile sparklines drawn on the server as SVG text (numbers only), shown with ``st.image``.

Why not the metric's own Vega-Lite sparkline: the browser then loads and compiles Vega (a 775 kB chunk) and embeds
one Vega view per tile before the Overview is drawn; a CPU profile of a warm Overview load at 1M events put about
half a second of script time in Vega alone. An ``<img>`` of a few hundred bytes of SVG draws with the page.

The SVG holds no text at all (no label, no value from the logs): only coordinates computed from numbers here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

__all__ = ["COLOUR", "HEIGHT", "MAX_POINTS", "WIDTH", "bucket", "svg"]

MAX_POINTS = 120
"""Points drawn at most; longer series are bucketed (:func:`bucket`). About two CSS pixels a point in a tile."""
WIDTH, HEIGHT = 240, 40
"""viewBox of the SVG (stretched to the tile's width, so the aspect ratio sets the drawn height)."""
COLOUR = "#3d8bd9"
"""Stroke and fill colour: a mid blue that reads on the light (white) and the dark (#0e1117) theme alike; an
``<img>`` cannot take the page's colours."""
Agg = Literal["sum", "max"]


def bucket(values: Sequence[float], how: Agg, max_points: int = MAX_POINTS) -> list[float]:
    """``values`` grouped into at most ``max_points`` buckets of consecutive values (every bucket but the last the
    same size), each the ``sum`` (counts: the bucket's total) or the ``max`` (rates, ages: a one-bin spike stays at
    its height) of its values. Unchanged when short enough. Raises ValueError for ``max_points < 1``."""
    if max_points < 1:
        raise ValueError(f"max_points must be >= 1, got {max_points}")
    v = [float(x) for x in values]
    if len(v) <= max_points:
        return v
    size = math.ceil(len(v) / max_points)
    agg = sum if how == "sum" else max
    return [float(agg(v[i:i + size])) for i in range(0, len(v), size)]


def svg(values: Sequence[float], chart: Literal["area", "line"]) -> str:
    """An SVG sparkline of ``values`` (finite numbers, one per bin, at least one), y from 0 (bottom) to the largest
    value (top; a series of zeros is a flat line at the bottom), x spread evenly over :data:`WIDTH`. ``area``: the
    line filled down to zero (counts); ``line``: the line alone (rates, ages). A single value is a level line.
    Raises ValueError for an empty series or a value that is not finite or negative."""
    if not len(values):
        raise ValueError("a sparkline needs at least one value")
    v = [float(x) for x in values]
    if not all(math.isfinite(x) and x >= 0 for x in v):
        raise ValueError("sparkline values must be finite and >= 0")
    if len(v) == 1:
        v = v * 2
    top = max(v) or 1.0
    pad = 1.5  # half the stroke: the line at 0 or at the top is not cut in half
    step = WIDTH / (len(v) - 1)
    pts = " ".join(f"{i * step:.1f},{pad + (HEIGHT - 2 * pad) * (1 - x / top):.1f}" for i, x in enumerate(v))
    line = (f'<polyline points="{pts}" fill="none" stroke="{COLOUR}" stroke-width="1.5" '
            f'stroke-linejoin="round" vector-effect="non-scaling-stroke"/>')
    fill = (f'<polygon points="0,{HEIGHT} {pts} {WIDTH},{HEIGHT}" fill="{COLOUR}" fill-opacity="0.25"/>'
            if chart == "area" else "")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
            f'height="{HEIGHT}" preserveAspectRatio="none">{fill}{line}</svg>')
