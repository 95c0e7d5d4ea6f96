"""Time windows in epoch seconds with INCLUSIVE bounds, as StartQuery takes them.

StartQuery: "startTime ... The range is inclusive"; "endTime ... The range is inclusive" (CloudWatch Logs API
Reference). Adjacent windows are therefore ``[a, m]`` and ``[m + 1, b]``: an event at second ``m`` belongs to the
first only, an event at ``m + 1`` to the second only, so splitting never counts an event twice or misses one.
Events carry milliseconds; a bound second covers all of its milliseconds (``[a, b]`` = ``a*1000 .. b*1000+999`` ms).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Window:
    """``[start, end]`` in epoch seconds, both inclusive; ``end >= start``."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"window end {self.end} before start {self.start}")

    @property
    def seconds(self) -> int:
        """Number of whole seconds covered (``end - start + 1``)."""
        return self.end - self.start + 1

    def contains_ms(self, t_ms: int) -> bool:
        return self.start * 1000 <= t_ms <= self.end * 1000 + 999

    def key(self) -> str:
        return f"{self.start}-{self.end}"

    @classmethod
    def from_key(cls, key: str) -> Window:
        a, b = key.split("-")
        return cls(int(a), int(b))


def plan_windows(start: int, end: int, window_s: int) -> list[Window]:
    """Cover ``[start, end]`` (epoch s, inclusive) with windows on the fixed grid ``k * window_s``.

    The first and last windows are clipped to ``start``/``end``. A fixed grid makes incremental runs reuse the
    same windows. Returns them in time order; ``window_s`` must be > 0.
    """
    if window_s <= 0:
        raise ValueError("window_s must be > 0")
    if end < start:
        return []
    out: list[Window] = []
    a = start
    while a <= end:
        grid_end = (a // window_s + 1) * window_s - 1
        b = min(grid_end, end)
        out.append(Window(a, b))
        a = b + 1
    return out


def align_range(start: int, end: int, align_s: int) -> tuple[int, int]:
    """Widen ``[start, end]`` to whole ``align_s`` units: start down, end up to the unit's last second."""
    return (start // align_s) * align_s, (end // align_s + 1) * align_s - 1


def split_window(w: Window, align_s: int = 1) -> tuple[Window, Window] | None:
    """Halve ``w`` into ``[a, m]``, ``[m + 1, b]`` with ``m + 1`` a multiple of ``align_s`` (from the epoch).

    Returns None when no such split exists (``w`` lies within one ``align_s`` unit): the caller must then flag
    the result as truncated. Both halves are non-empty and together cover exactly ``w``.
    """
    if align_s <= 0:
        raise ValueError("align_s must be > 0")
    mid = w.start + w.seconds // 2
    cut = round(mid / align_s) * align_s  # first second of the second half
    lo = (w.start // align_s + 1) * align_s  # smallest aligned cut inside w
    hi = (w.end // align_s) * align_s  # largest aligned cut inside w
    if lo > hi or lo > w.end:
        return None
    cut = min(max(cut, lo), hi)
    if cut <= w.start or cut > w.end:
        return None
    return Window(w.start, cut - 1), Window(cut, w.end)


def merge_adjacent(windows: Iterable[Window]) -> list[Window]:
    """Union of windows as sorted, non-overlapping, non-adjacent windows."""
    out: list[Window] = []
    for w in sorted(windows):
        if out and w.start <= out[-1].end + 1:
            if w.end > out[-1].end:
                out[-1] = Window(out[-1].start, w.end)
        else:
            out.append(w)
    return out


def missing(planned: Iterable[Window], done: Iterable[Window]) -> Iterator[Window]:
    """The planned windows not entirely covered by the union of ``done`` windows (incremental collection)."""
    cover = merge_adjacent(done)
    for w in planned:
        if not any(c.start <= w.start and w.end <= c.end for c in cover):
            yield w
