"""``run_demo``: simulate the fleet and write its log groups plus the ground truth."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

from emitter.contract import Outcome

from .constants import DEFAULT_DURATION_S, DEFAULT_EVENTS, DEFAULT_SEED, FUNCTIONS, IDEMPOTENCY_TABLE, SERVICE
from .faults import ANTI_PATTERNS, AntiPattern, FaultPlan, FaultRates
from .fleet import FUNCTION_CONFIGS, IN_PROGRESS_LOCK_MS, Fleet, FleetConfig
from .handlers import FACTORIES
from .handlers.common import Deps
from .logs import FunctionLog, iso_ms
from .runtime import FunctionPool
from .store import SqliteIdempotencyStore
from .truth import DemoTruth, FunctionTruth, Tally

__all__ = ["LOGS_DIR", "STORE_FILE", "TRUTH_FILE", "default_start_ms", "run_demo"]

LOGS_DIR = "logs"
TRUTH_FILE = "demo-truth.json"
STORE_FILE = "idempotency.sqlite3"


def default_start_ms(duration_s: int, now_ms: int | None = None) -> int:
    """Start (epoch ms) of a ``duration_s`` window ending at the current minute (UTC, wall clock or
    ``now_ms``): ``floor(now to the minute) - duration``, so the demo data looks fresh."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    return now - now % 60_000 - duration_s * 1000


def run_demo(
    out: Path,
    seed: int = DEFAULT_SEED,
    events: int | None = None,
    duration_s: int | None = None,
    start_ms: int | None = None,
    rates: FaultRates | None = None,
    anti_patterns: Iterable[AntiPattern] = (),
) -> DemoTruth:
    """Simulate the demo fleet and write ``<out>/logs/<function>.log`` (CloudWatch export-to-S3
    lines) and ``<out>/demo-truth.json``; the idempotency table is ``<out>/idempotency.sqlite3``.

    Args:
        out: data directory (created; previous demo logs, truth and store in it are replaced).
        seed: RNG seed. With the same ``seed``, ``events``, ``duration_s``, ``start_ms`` and ``rates``
            the files are identical byte for byte.
        events: source events over the window (default 10,000), split 40/30/18/12 % between
            orders-consumer, ledger-stream, create-case-api and payment-capture.
        duration_s: simulated window in seconds (default 3 h; at least 60).
        start_ms: window start, epoch ms. Default: the window ends at the current minute (wall
            clock) -- pass it explicitly for reproducible files.
        rates: fault rates (default :class:`FaultRates`).
        anti_patterns: idempotency anti-patterns to build into one function each (``faults.ANTI_PATTERNS`` says
            which function and which ``idemwatch diagnose`` rule must find it). With any, the logs keep each
            execution environment's log stream (``filter-log-events`` JSON in the same ``<function>.log`` files),
            which the in-memory-dedupe rule reads. None (the default): the default demo, byte for byte.

    Returns:
        The :class:`DemoTruth` also written to ``demo-truth.json``.

    Raises:
        ValueError: events < 1 or duration_s < 60 (from FleetConfig), invalid rates.
        StoreError: the SQLite store cannot be created.
    """
    t_wall = time.perf_counter()
    duration_s = DEFAULT_DURATION_S if duration_s is None else int(duration_s)
    events = DEFAULT_EVENTS if events is None else int(events)
    start_ms = default_start_ms(duration_s) if start_ms is None else int(start_ms)
    injected = frozenset(AntiPattern(a) for a in anti_patterns)
    cfg = FleetConfig(seed=seed, events=events, start_ms=start_ms, duration_s=duration_s, rates=rates or FaultRates(),
                      anti_patterns=injected)

    out = Path(out)
    logs_dir = out / LOGS_DIR
    logs_dir.mkdir(parents=True, exist_ok=True)
    for fn in FUNCTIONS:
        (logs_dir / f"{fn}.log").unlink(missing_ok=True)
    for suffix in ("", "-wal", "-shm"):
        (out / f"{STORE_FILE}{suffix}").unlink(missing_ok=True)

    store = SqliteIdempotencyStore(out / STORE_FILE, table=IDEMPOTENCY_TABLE)
    api_store = (SqliteIdempotencyStore(out / STORE_FILE, table=f"{IDEMPOTENCY_TABLE}_short_retention",
                                        record_ttl_ms=cfg.injected_record_ttl_ms)
                 if AntiPattern.SHORT_RETENTION in injected else None)
    try:
        deps = Deps(store=store, plan=FaultPlan(), lock_ms=dict(IN_PROGRESS_LOCK_MS), anti_patterns=injected,
                    api_store=api_store)
        tally = Tally()
        truths = {fn: FunctionTruth() for fn in FUNCTIONS}
        logs = {fn: FunctionLog(fn) for fn in FUNCTIONS}
        pools = {fn: FunctionPool(FUNCTION_CONFIGS[fn], seed, logs[fn], truths[fn], tally, FACTORIES[fn], deps)
                 for fn in FUNCTIONS}
        pending = Fleet(cfg, deps, pools).run()
        stuck = store.in_progress() + (api_store.in_progress() if api_store is not None else [])
    finally:
        store.close()
        if api_store is not None:
            api_store.close()

    for fn in FUNCTIONS:
        t = truths[fn]
        t.outcomes = dict(sorted(tally.counts.get(fn, {}).items()))
        if t.cold_starts:
            t.outcomes[Outcome.COLD_START.value] = t.cold_starts  # written by the emitter's wrapper itself
            t.outcomes = dict(sorted(t.outcomes.items()))
        t.redeliveries = tally.redeliveries.get(fn, 0)
        t.injected = dict(sorted((k, v) for k, v in deps.plan.injected.get(fn, {}).items() if v))
        t.log_lines = (logs[fn].dump_events if injected else logs[fn].dump)(logs_dir / f"{fn}.log")
        # stored keys start with their function (the handlers' and Powertools' key prefix); logs name them readably
        t.stuck_keys = sorted(deps.aliases.get(r.key, r.key) for r in stuck if r.key.startswith(f"{fn}#"))
    truth = DemoTruth(
        seed=seed, events=events, duration_s=duration_s, start=iso_ms(cfg.start_ms), end=iso_ms(cfg.end_ms),
        start_ms=cfg.start_ms, end_ms=cfg.end_ms, service=SERVICE, functions=truths,
        dlq=dict(sorted(deps.dlq.items())), provider=dict(sorted(deps.provider.counts.items())),
        pending_at_end=dict(sorted(pending.items())),
        anti_patterns={fn: sorted(a.value for a in injected if ANTI_PATTERNS[a].function == fn)
                       for fn in FUNCTIONS if any(ANTI_PATTERNS[a].function == fn for a in injected)},
    )
    truth.write(out / TRUTH_FILE)
    truth.simulate_seconds = round(time.perf_counter() - t_wall, 3)
    return truth
