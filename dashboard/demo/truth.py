"""Ground truth of a demo run: what was injected and which outcomes the handlers reported.

``outcomes`` are tallied by :class:`CountingEmitter`, a thin proxy in front of each execution
environment's real :class:`emitter.Emitter`: every outcome call is counted when the handler
makes it (per record for ``records``/``batch_item_failures``), independently of the log lines
the emitter writes. The collector's tables must report the same numbers.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from emitter.contract import Outcome

__all__ = ["CountingEmitter", "DemoTruth", "Tally"]


class Tally:
    """Thread-safe counters ``function -> Outcome value -> n``."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter[str]] = {}
        self.redeliveries: Counter[str] = Counter()  # function -> 'received' records with attempt > 1
        self._lock = threading.Lock()

    def add(self, function: str, outcome: Outcome, n: int = 1) -> None:
        if n <= 0:
            return
        with self._lock:
            self.counts.setdefault(function, Counter())[outcome.value] += n


class CountingEmitter:
    """Proxy of an :class:`emitter.Emitter` that tallies every outcome call in a :class:`Tally`.

    Handlers use it exactly like the emitter (same methods, same arguments); attributes not
    listed here (``handler``, ``invocation``, ``flush``, ...) pass through untouched.
    """

    _SIMPLE: ClassVar[dict[str, Outcome]] = {
        "claimed": Outcome.CLAIMED,
        "succeeded": Outcome.SUCCEEDED,
        "duplicate_completed": Outcome.DUPLICATE_COMPLETED,
        "duplicate_in_progress": Outcome.DUPLICATE_IN_PROGRESS,
        "payload_conflict": Outcome.PAYLOAD_CONFLICT,
        "stale_claim_takeover": Outcome.STALE_CLAIM_TAKEOVER,
        "retryable_failure": Outcome.RETRYABLE_FAILURE,
        "permanent_failure": Outcome.PERMANENT_FAILURE,
        "poison_message": Outcome.POISON_MESSAGE,
        "ambiguous_commit": Outcome.AMBIGUOUS_COMMIT,
        "side_effect_started": Outcome.SIDE_EFFECT_STARTED,
        "store_error": Outcome.STORE_ERROR,
    }

    def __init__(self, emitter: Any, tally: Tally, function: str) -> None:
        self._em = emitter
        self._tally = tally
        self._function = function

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._em, name)
        outcome = self._SIMPLE.get(name)
        if outcome is None:
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            self._tally.add(self._function, outcome)
            return target(*args, **kwargs)

        return call

    def records(self, event: Any) -> list[Any]:
        recs = self._em.records(event)
        self._received(recs)
        return recs

    def record_for(self, event: Any) -> Any:
        rec = self._em.record_for(event)
        self._received([rec])
        return rec

    def _received(self, recs: list[Any]) -> None:
        self._tally.add(self._function, Outcome.RECEIVED, len(recs))
        again = sum(1 for r in recs if getattr(r, "attempt", 1) > 1)
        if again:
            with self._tally._lock:
                self._tally.redeliveries[self._function] += again

    def batch_item_failures(self, failed: list[Any]) -> dict[str, Any]:
        self._tally.add(self._function, Outcome.BATCH_ITEM_FAILURE, len(failed))
        return self._em.batch_item_failures(failed)

    def check_time_budget(self, required_ms: float, record: Any = None, key: str | None = None,
                          **props: Any) -> float | None:
        from emitter import TimeoutBudgetExceeded

        try:
            return self._em.check_time_budget(required_ms, record=record, key=key, **props)
        except TimeoutBudgetExceeded:
            self._tally.add(self._function, Outcome.TIMEOUT_BUDGET_ABORT)
            raise

    def record_outcome(self, outcome: Outcome, *args: Any, **kwargs: Any) -> Any:
        self._tally.add(self._function, Outcome(outcome))
        return self._em.record_outcome(outcome, *args, **kwargs)


@dataclass
class FunctionTruth:
    """Ground truth for one function. Counts are numbers of log records / invocations."""

    outcomes: dict[str, int] = field(default_factory=dict)  # Outcome value -> records the handler wrote
    injected: dict[str, int] = field(default_factory=dict)  # Fault value -> faults that fired
    invocations: int = 0  # REPORT lines
    cold_starts: int = 0  # REPORT lines with Init Duration
    timeouts: int = 0  # REPORT lines with Status: timeout
    errors: int = 0  # invocations ending in an unhandled exception (async retries follow)
    redeliveries: int = 0  # 'received' records with attempt > 1
    log_lines: int = 0
    lines_lost_to_timeouts: int = 0  # emitter lines a killed runtime never wrote (unflushed EMF)
    stuck_keys: list[str] = field(default_factory=list)  # idempotency keys IN_PROGRESS at the end


@dataclass
class DemoTruth:
    """What a demo run did (``demo-truth.json``). Times: ISO-8601 UTC and epoch ms."""

    seed: int
    events: int  # source events generated (before duplicates and retries)
    duration_s: int
    start: str
    end: str
    start_ms: int
    end_ms: int
    service: str
    functions: dict[str, FunctionTruth]
    dlq: dict[str, int]  # queue / destination name -> messages sent there
    provider: dict[str, int]  # fake payment provider: charges, replays, declines
    pending_at_end: dict[str, int]  # deliveries/retries scheduled after the window (not simulated)
    simulate_seconds: float = 0.0  # wall-clock seconds the simulation took (not part of the files' content)
    anti_patterns: dict[str, list[str]] = field(default_factory=dict)  # function -> AntiPattern values built in

    def outcome(self, function: str, outcome: Outcome) -> int:
        return self.functions[function].outcomes.get(outcome.value, 0)

    def injected(self, function: str, fault: Any) -> int:
        return self.functions[function].injected.get(getattr(fault, "value", fault), 0)

    def total(self, outcome: Outcome) -> int:
        return sum(f.outcomes.get(outcome.value, 0) for f in self.functions.values())

    def expected_rules(self) -> dict[str, set[str]]:
        """Function -> the ``idemwatch diagnose`` rule ids that must find its injected anti-patterns (empty for a
        function with none: diagnose must find nothing there)."""
        from .faults import ANTI_PATTERNS, AntiPattern

        return {fn: {ANTI_PATTERNS[AntiPattern(a)].rule for a in self.anti_patterns.get(fn, [])}
                for fn in self.functions}

    def to_json(self) -> str:
        d = asdict(self)
        d.pop("simulate_seconds")  # keeps the file byte-for-byte reproducible
        if not d["anti_patterns"]:
            d.pop("anti_patterns")  # the default demo's file stays as it was
        return json.dumps(d, indent=2, sort_keys=True) + "\n"

    def write(self, path: Path) -> None:
        path.write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> DemoTruth:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        d["functions"] = {k: FunctionTruth(**v) for k, v in d["functions"].items()}
        return cls(**d)
