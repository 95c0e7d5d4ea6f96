"""A Lambda runtime simulator: execution environments, simulated time, START/END/REPORT lines.

Like real Lambda, each *execution environment* runs the function's init code once (here: it
builds its own :class:`emitter.Emitter` and handler), then serves one invocation at a time;
the first invocation is a cold start (``Init Duration`` in its REPORT line). Idle environments
are reclaimed after a while, so cold starts recur. A timeout kills the runtime: the
``Task timed out`` line is written, anything the handler or the emitter would have written
afterwards is lost (counted), and the environment is discarded.

Time is simulated: every environment has its own clock (epoch ms) that handler work
advances through :meth:`SimContext.spend`; the emitter is given that clock.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from emitter import Emitter, StreamSink

from .constants import SERVICE
from .exceptions import SimulatedTimeout
from .logs import FunctionLog, end_line, error_line, report_line, start_line, timeout_line
from .truth import CountingEmitter, FunctionTruth, Tally

__all__ = ["ExecutionEnvironment", "FunctionConfig", "FunctionPool", "Invocation", "SimClock", "SimContext"]


@dataclass(frozen=True)
class FunctionConfig:
    """Configuration of one simulated function. Times in ms unless named ``_s``; memory in MB."""

    name: str
    operation: str
    timeout_s: float
    memory_mb: int = 256
    init_ms: tuple[float, float] = (180.0, 650.0)  # Init Duration range on cold starts
    base_memory_used_mb: tuple[int, int] = (62, 90)
    idle_reclaim_s: tuple[float, float] = (300.0, 1_800.0)  # idle time after which an environment is gone


class SimClock:
    """A settable epoch-ms clock; calling it returns the current simulated time (int ms)."""

    def __init__(self, now_ms: int) -> None:
        self.now_ms = int(now_ms)

    def __call__(self) -> int:
        return self.now_ms

    def set(self, now_ms: int) -> None:
        self.now_ms = int(now_ms)

    def advance(self, ms: float) -> int:
        self.now_ms += max(0, round(ms))
        return self.now_ms


class SimContext:
    """The Lambda context object of one simulated invocation (the attributes handlers and the
    emitter read: ``aws_request_id``, ``function_name``, ``memory_limit_in_mb``,
    ``invoked_function_arn``, ``get_remaining_time_in_millis()``), plus :meth:`spend`."""

    def __init__(self, env: ExecutionEnvironment, request_id: str, deadline_ms: int) -> None:
        self._env = env
        self.aws_request_id = request_id
        self.function_name = env.config.name
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = env.config.memory_mb
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{env.config.name}"
        self.log_group_name = f"/aws/lambda/{env.config.name}"
        self.log_stream_name = env.log_stream
        self.deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self.deadline_ms - self._env.clock())

    def spend(self, ms: float) -> int:
        """Simulate ``ms`` of work. Past the deadline the runtime is killed: raises SimulatedTimeout."""
        if self._env.clock() + ms >= self.deadline_ms:
            self._env.clock.set(self.deadline_ms)
            self._env.kill()
            raise SimulatedTimeout(self.aws_request_id)
        return self._env.clock.advance(ms)

    def hang(self) -> None:
        """Block until the timeout (a call that never returns)."""
        self.spend(self.deadline_ms - self._env.clock() + 1)

    @property
    def rng(self) -> random.Random:
        """The environment's own RNG (deterministic per environment, safe across threads)."""
        return self._env.rng

    @property
    def now_ms(self) -> int:
        return self._env.clock()


@dataclass
class Invocation:
    """Result of one simulated invocation. Times are epoch ms."""

    request_id: str
    start_ms: int  # when the invoke arrived (before Init on a cold start)
    end_ms: int  # when the runtime finished (response, error or timeout)
    result: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    cold: bool = False


HandlerFactory = Callable[[Any, "ExecutionEnvironment"], Callable[[Any, Any], Any]]
"""(emitter, environment) -> handler(event, context); called once per environment (its init phase)."""


class ExecutionEnvironment:
    """One Lambda execution environment: own clock, own RNG, own Emitter, own handler instance."""

    def __init__(
        self, config: FunctionConfig, index: int, created_ms: int, seed: int, log: FunctionLog,
        truth: FunctionTruth, tally: Tally, factory: HandlerFactory, deps: Any,
    ) -> None:
        self.config = config
        self.index = index
        self.rng = random.Random(seed)
        self.clock = SimClock(created_ms)
        self.log = log
        self.truth = truth
        self.deps = deps
        self.killed = False
        self.cold = True
        self.busy_until_ms = created_ms
        self.idle_reclaim_ms = int(self.rng.uniform(*config.idle_reclaim_s) * 1000)
        day = time.strftime("%Y/%m/%d", time.gmtime(created_ms // 1000))
        self.log_stream = f"{day}/[$LATEST]{self.rng.getrandbits(128):032x}"
        self._lock = threading.Lock()
        emitter = Emitter(service=SERVICE, sink=StreamSink(self._write), clock=self.clock)  # type: ignore[arg-type]
        self.emitter = CountingEmitter(emitter, tally, config.name)
        self.handler = factory(self.emitter, self)

    def _write(self, line: str) -> None:
        if self.killed:  # the runtime is gone: what would be written now is lost, and we count it
            self.truth.lines_lost_to_timeouts += 1
            return
        self.log.write(self.clock(), line, self.log_stream)

    def kill(self) -> None:
        self.killed = True

    def invoke(self, event: Any, start_ms: int, request_id: str) -> Invocation:
        """Run one invocation that arrives at ``start_ms``; writes START/END/REPORT around the
        handler's output. Exceptions from the handler are caught (reported like the runtime
        does) and returned in ``Invocation.error``."""
        cfg = self.config
        with self._lock:
            self.clock.set(max(start_ms, self.busy_until_ms))
            cold, self.cold = self.cold, False
            init_ms = None
            if cold:
                init_ms = round(self.rng.uniform(*cfg.init_ms), 2)
                self.clock.advance(init_ms)
            t0 = self.clock()
            self.log.write(t0, start_line(request_id), self.log_stream)
            ctx = SimContext(self, request_id, deadline_ms=t0 + int(cfg.timeout_s * 1000))
            inv = Invocation(request_id, start_ms, t0, cold=cold)
            try:
                inv.result = self.handler(event, ctx)
            except SimulatedTimeout:
                inv.timed_out = True
            except Exception as exc:  # noqa: BLE001 - the runtime reports any unhandled error; async sources retry
                inv.error = exc
                self.log.write(self.clock(), error_line(exc), self.log_stream)
            self.clock.advance(self.rng.uniform(0.2, 2.5))  # runtime overhead until END
            if inv.timed_out:
                self.clock.set(ctx.deadline_ms)
                self.killed = False
                self.log.write(ctx.deadline_ms, timeout_line(ctx.deadline_ms, request_id, cfg.timeout_s),
                               self.log_stream)
            end = self.clock()
            duration = float(cfg.timeout_s * 1000) if inv.timed_out else (end - t0) + round(self.rng.random(), 2)
            self.log.write(end, end_line(request_id), self.log_stream)
            used = self.rng.randint(*cfg.base_memory_used_mb) + (12 if cold else 0)
            self.log.write(end, report_line(request_id, duration, cfg.memory_mb, used, init_ms, inv.timed_out),
                           self.log_stream)
            self.truth.invocations += 1
            self.truth.cold_starts += int(cold)
            self.truth.timeouts += int(inv.timed_out)
            self.truth.errors += int(inv.error is not None)
            inv.end_ms = end
            self.busy_until_ms = end
            return inv


class FunctionPool:
    """The execution environments of one function: reuses a warm idle one, else creates one (cold start).

    Deterministic: environment seeds come from the pool's RNG, and the most recently freed
    warm environment is preferred (as Lambda tends to do)."""

    def __init__(
        self, config: FunctionConfig, seed: int, log: FunctionLog, truth: FunctionTruth, tally: Tally,
        factory: HandlerFactory, deps: Any,
    ) -> None:
        self.config = config
        self.rng = random.Random(f"{seed}:{config.name}:pool")
        self.log, self.truth, self.tally, self.factory, self.deps = log, truth, tally, factory, deps
        self.envs: list[ExecutionEnvironment] = []
        self.created = 0

    def acquire(self, at_ms: int, exclude: tuple[ExecutionEnvironment, ...] = ()) -> ExecutionEnvironment:
        """An environment free at ``at_ms`` (not one of ``exclude``)."""
        self.envs = [e for e in self.envs if not (e.busy_until_ms + e.idle_reclaim_ms < at_ms)]
        free = [e for e in self.envs if e.busy_until_ms <= at_ms and e not in exclude]
        if free:
            return max(free, key=lambda e: (e.busy_until_ms, -e.index))
        env = ExecutionEnvironment(
            self.config, self.created, at_ms, self.rng.getrandbits(64), self.log, self.truth, self.tally,
            self.factory, self.deps,
        )
        self.created += 1
        self.envs.append(env)
        return env

    def retire(self, env: ExecutionEnvironment) -> None:
        """Drop an environment (after a timeout Lambda re-initialises: the next one is cold)."""
        if env in self.envs:
            self.envs.remove(env)

    def invoke(self, event: Any, at_ms: int, request_id: str, env: ExecutionEnvironment | None = None) -> Invocation:
        env = env or self.acquire(at_ms)
        inv = env.invoke(event, at_ms, request_id)
        if inv.timed_out:
            self.retire(env)
        return inv
