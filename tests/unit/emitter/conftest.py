"""Fixtures for the emitter tests: real-shaped AWS sample events, an emitter writing to memory with a fixed
clock, and a reader splitting output into log records and EMF documents."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from emitter import Emitter, MemorySink

EVENTS = Path(__file__).parent / "events"
NOW_MS = 1_767_608_401_000  # 2026-01-05T10:20:01.000Z


@pytest.fixture
def load_event() -> Callable[[str], Any]:
    """load_event("sqs_standard") -> the parsed sample event (a fresh copy each call)."""

    def load(name: str) -> Any:
        return json.loads((EVENTS / f"{name}.json").read_text())

    return load


class Output:
    """Parsed output of a MemorySink: ``logs`` (outcome and warning records) and ``emf`` (EMF documents)."""

    def __init__(self, sink: MemorySink) -> None:
        self.lines = list(sink.lines)
        self.objs = [json.loads(line) for line in self.lines]
        self.emf = [o for o in self.objs if "_aws" in o]
        self.logs = [o for o in self.objs if "_aws" not in o]
        self.outcomes = [o for o in self.logs if "outcome" in o]
        self.warnings = [o for o in self.logs if "idemwatch_warning" in o]

    def metric_sum(self, name: str, **dims: str) -> float:
        """Sum of every value of metric ``name`` over all EMF documents (optionally matching root dimensions)."""
        total = 0.0
        for d in self.emf:
            if name in d and all(d.get(k) == v for k, v in dims.items()):
                v = d[name]
                total += sum(v) if isinstance(v, list) else v
        return total

    def metric_values(self, name: str) -> list[float]:
        out: list[float] = []
        for d in self.emf:
            if name in d:
                v = d[name]
                out.extend(v if isinstance(v, list) else [v])
        return out

    def count(self, outcome: str) -> int:
        return sum(1 for o in self.outcomes if o["outcome"] == outcome)


@pytest.fixture
def read() -> Callable[[MemorySink], Output]:
    return Output


@pytest.fixture
def clock() -> list[int]:
    """A mutable fixed clock: clock[0] is 'now' in epoch ms."""
    return [NOW_MS]


@pytest.fixture
def make(clock: list[int]) -> Callable[..., tuple[Emitter, MemorySink]]:
    """make(**kwargs) -> (Emitter writing to a MemorySink with the fixed clock, the sink)."""

    def factory(**kwargs: Any) -> tuple[Emitter, MemorySink]:
        sink = MemorySink()
        kwargs.setdefault("service", "orders")
        kwargs.setdefault("clock", lambda: clock[0])
        return Emitter(sink=sink, **kwargs), sink

    return factory
