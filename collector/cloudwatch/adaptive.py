"""How many Logs Insights queries to run at once, and how fast to call StartQuery and GetQueryResults.

Both follow additive increase, multiplicative decrease (AIMD), the rule TCP uses to share a link it cannot see the
capacity of: the account's concurrent-query quota and its per-second call quotas are shared with dashboards and
people, so the collector cannot know how much of them is free, only notice when it took too much.

- ``ConcurrencyLimit``: queries in flight. Starts polite (``initial``), grows by one for every StartQuery the quota
  accepts (a retry after a collision too: it proves a free slot as well as a first try) until the first collision
  (slow start), then by one per round (``1 / limit`` per clean start); a LimitExceededException ("Account maximum
  query concurrency limit ... reached") halves it.
  After a whole round without a collision (``limit`` clean starts in a row) it is back in slow start: unlike TCP's
  competitors, dashboards do not back off for the collector, so the quota they free (a burst of dashboard refreshes
  ending) is found again within a few rounds instead of one query per round. Never above ``maximum``
  (``--max-concurrency``), never below one.
- ``AdaptiveRate``: calls per second of one operation, as a token bucket (burst: one second of calls; a new bucket
  is full, as one left idle for a second would be). Starts at its ``maximum``, the documented TPS quota: the quota
  is known, only other clients' share of it is not, and a throttled call costs one retry; botocore's own adaptive
  retry mode likewise sends unthrottled until the first ThrottlingException
  (``botocore.retries.adaptive.ClientRateLimiter`` starts disabled). Halves on a ThrottlingException (never below
  ``minimum``), grows back by ``step`` x ``maximum`` with every clean call: from half to the quota in 20 clean calls
  whatever the unit (0.25 calls/s per call at 10 TPS).

Sources: StartQuery "You can have up to 30 concurrent CloudWatch Logs insights queries, including queries that have
been added to dashboards" (CloudWatch Logs API Reference, StartQuery); CloudWatch Logs quotas page
(cloudwatch_limits_cwl.html): "StartQuery throttle limit in transactions per second: 10", "GetQueryResults throttle
limit in transactions per second: 10", per account and Region, not adjustable.
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field


class ConcurrencyLimit:
    """Permits for queries in flight (see module docstring). Thread-safe.

    ``acquire`` blocks until a query may start and returns the limit's current epoch (None when ``give_up()``
    turned true first); ``release`` when the query ended on the service side; after the StartQuery call,
    ``started_cleanly`` when the quota accepted it (first try or retry), ``collided(epoch)`` when it did not. Collisions of starts that began before the last halving do not
    halve it again: when the quota fills up, every query being started at that moment collides, and that is one
    signal, not ten (TCP likewise halves once per round trip). ``peak`` is the most queries held at once;
    ``collisions`` counts LimitExceededException answers.
    """

    def __init__(self, maximum: int, initial: int) -> None:
        if maximum < 1:
            raise ValueError("the maximum concurrency must be >= 1")
        self.maximum = maximum
        self._limit = float(max(1, min(initial, maximum)))
        self._slow_start = True
        self._clean_run = 0
        self._epoch = 0
        self._held = 0
        self.peak = 0
        self.collisions = 0
        self._cond = threading.Condition()

    @property
    def limit(self) -> int:
        """Queries allowed in flight now (whole number, 1 .. maximum)."""
        with self._cond:
            return int(self._limit)

    def acquire(self, give_up: Callable[[], bool] = lambda: False, poll_s: float = 0.05) -> int | None:
        with self._cond:
            while self._held >= int(self._limit):
                if give_up():
                    return None
                self._cond.wait(poll_s)
            self._held += 1
            self.peak = max(self.peak, self._held)
            return self._epoch

    def release(self) -> None:
        with self._cond:
            self._held -= 1
            self._cond.notify()

    def started_cleanly(self) -> None:
        with self._cond:
            self._clean_run += 1
            if not self._slow_start and self._clean_run >= int(self._limit):
                self._slow_start = True  # a whole round without a collision
            step = 1.0 if self._slow_start else 1.0 / self._limit
            self._limit = min(float(self.maximum), self._limit + step)
            self._cond.notify()

    def collided(self, epoch: int) -> None:
        """The quota was full: the query of the permit taken at ``epoch`` did not start (the caller releases the
        permit); the limit halves unless it already did since that permit was taken."""
        with self._cond:
            self.collisions += 1
            self._slow_start = False
            self._clean_run = 0
            if epoch == self._epoch:
                self._epoch += 1
                self._limit = max(1.0, math.floor(self._limit / 2))


@dataclass
class AdaptiveRate:
    """A token bucket whose rate adapts to throttling (see module docstring). ``maximum`` <= 0 disables it.

    ``maximum`` and ``minimum`` in calls per second; ``step``: growth per clean call as a fraction of ``maximum`` (a
    fraction, not calls/s, so the rule is the same at any time scale). ``clock``/``sleep`` are injectable for tests.
    ``throttles`` counts ThrottlingException answers reported.
    """

    maximum: float
    minimum: float = 0.5
    step: float = 1 / 40
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    rate: float = field(init=False)
    throttles: int = field(init=False, default=0)
    _tokens: float = field(init=False)
    _last: float = field(init=False)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.rate = max(self.minimum, self.maximum)
        self._tokens = max(self.rate, 1.0)  # full: no call in the last second, like a bucket left idle
        self._last = self.clock()

    def acquire(self) -> None:
        """Wait for a token (one call)."""
        if self.maximum <= 0:
            return
        while True:
            with self._lock:
                now = self.clock()
                self._tokens = min(max(self.rate, 1.0), self._tokens + (now - self._last) * self.rate)
                self._last = now
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return
                wait = (1.0 - self._tokens) / self.rate
            self.sleep(wait)

    def succeeded(self) -> None:
        if self.maximum > 0:
            with self._lock:
                self.rate = min(self.maximum, self.rate + self.step * self.maximum)

    def throttled(self) -> None:
        with self._lock:
            self.throttles += 1
            if self.maximum > 0:
                self.rate = max(self.minimum, self.rate / 2)


class DurationEstimate:
    """When to poll a query, from this run's queries (thread-safe). Times in seconds since StartQuery returned.

    Each completed query gives an upper bound of its duration (when the poll that found it complete was sent) and,
    if an earlier poll found it running, a lower bound (when that one was sent). The typical duration is the median
    upper bound of the last ``window`` queries. The first poll goes at 0.9 x the typical duration, but not before
    1.05 x the median lower bound: aiming at the typical duration spends one GetQueryResults call on most queries
    instead of several, the 0.9 keeps probing for queries getting faster, and the lower bounds stop it probing below
    what queries were just seen to need. A first poll that finds the query running is followed by one at the
    typical duration (``second_poll_s``), only a tenth later, where most such queries have ended: a missed probe
    costs a call, not a whole poll interval of holding a slot. Between ``floor_s`` and ``cap_s``; until three
    queries completed there is no estimate (``floor_s``, then the caller's schedule).
    """

    def __init__(self, floor_s: float, cap_s: float, window: int = 20) -> None:
        self.floor_s, self.cap_s = floor_s, cap_s
        self._done: deque[float] = deque(maxlen=window)
        self._running: deque[float] = deque(maxlen=window)
        self._lock = threading.Lock()

    def add(self, duration_s: float, last_running_s: float | None = None) -> None:
        """A query was found complete by a poll sent ``duration_s`` after it started; ``last_running_s``: when the
        last poll that found it running was sent (None: the first poll found it complete)."""
        with self._lock:
            self._done.append(duration_s)
            if last_running_s is not None:
                self._running.append(last_running_s)

    def first_poll_s(self) -> float:
        """Seconds after StartQuery to poll a new query first."""
        with self._lock:
            if len(self._done) < 3:
                return self.floor_s
            aim = 0.9 * statistics.median(self._done)
            if self._running:
                aim = max(aim, 1.05 * statistics.median(self._running))
            return min(self.cap_s, max(self.floor_s, aim))

    def second_poll_s(self, asked_s: float, first_s: float) -> float | None:
        """Seconds to wait after a first poll, sent ``asked_s`` after StartQuery ``first_s`` after it, found the
        query running: until the typical duration if that is still ahead, else ``max(floor_s, first_s / 4)`` (the
        poll was aimed above the typical duration and most likely came just too early); at most ``cap_s``. None
        until three queries completed: nothing to aim at, the caller's schedule goes on."""
        with self._lock:
            if len(self._done) < 3:
                return None
            ahead = statistics.median(self._done) - asked_s
            return min(self.cap_s, ahead if ahead > 0 else max(self.floor_s, first_s / 4))
