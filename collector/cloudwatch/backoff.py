"""Exponential backoff with full jitter, and a shared request-rate limiter.

Full jitter (sleep = uniform(0, min(cap, base * 2**attempt))) is what the AWS Architecture Blog
("Exponential Backoff And Jitter") recommends for many clients competing for one quota: it spreads
retries so they do not hit the service in lockstep.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


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


@dataclass
class RateLimiter:
    """Token bucket shared by threads: at most ``rate_per_s`` acquisitions per second on average (burst = rate).

    ``rate_per_s`` <= 0 disables it. ``clock``/``sleep`` are injectable for tests.
    """

    rate_per_s: float
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    _tokens: float = field(init=False)
    _last: float = field(init=False)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._tokens = max(self.rate_per_s, 1.0)
        self._last = self.clock()

    def acquire(self) -> None:
        if self.rate_per_s <= 0:
            return
        while True:
            with self._lock:
                now = self.clock()
                self._tokens = min(max(self.rate_per_s, 1.0), self._tokens + (now - self._last) * self.rate_per_s)
                self._last = now
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return
                wait = (1.0 - self._tokens) / self.rate_per_s
            self.sleep(wait)
