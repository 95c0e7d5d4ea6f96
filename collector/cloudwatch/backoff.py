"""Exponential backoff with full jitter, and the poll schedule of a query.

Full jitter (sleep = uniform(0, min(cap, base * 2**attempt))) is what the AWS Architecture Blog
("Exponential Backoff And Jitter") recommends for many clients competing for one quota: it spreads
retries so they do not hit the service in lockstep.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Backoff:
    """Retry policy for throttling (seconds).

    ``delay(attempt)`` for attempt 0, 1, 2... is uniform in [0, min(max_s, base_s * 2**attempt)].
    ``max_attempts`` retries after the first try; then the caller gives up.
    """

    base_s: float = 0.5
    max_s: float = 20.0
    max_attempts: int = 8

    def delay(self, attempt: int, rng: Callable[[], float] = random.random) -> float:
        return rng() * min(self.max_s, self.base_s * (2**attempt))


@dataclass(frozen=True)
class PollSchedule:
    """When to poll GetQueryResults again (seconds): initial_s, then x multiplier each time, at most max_s.

    Most queries over an hour of logs finish in one to a few seconds; a long query is polled less and less often
    so a slow scan does not spend the account's GetQueryResults rate.
    """

    initial_s: float = 0.5
    multiplier: float = 1.5
    max_s: float = 5.0

    def delays(self):
        d = self.initial_s
        while True:
            yield d
            d = min(self.max_s, d * self.multiplier)
