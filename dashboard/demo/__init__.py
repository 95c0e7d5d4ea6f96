"""The demo fleet: four at-least-once handler shapes on the real emitter and a real idempotency store.

    from dashboard.demo import run_demo
    truth = run_demo(Path("idemwatch-data"), seed=7)

writes ``<out>/logs/<function>.log`` (CloudWatch export-to-S3 lines: START/END/REPORT around the
emitter's JSON records) and ``<out>/demo-truth.json`` (what was injected, what each function
reported). ``idemwatch demo`` then collects and serves it (:mod:`dashboard.demo.cli`).
"""

from __future__ import annotations

from .constants import FUNCTIONS, SERVICE
from .exceptions import ClaimLostError, DemoError, StoreError
from .faults import Fault, FaultRates
from .simulate import run_demo
from .store import Claim, ClaimState, SqliteIdempotencyStore
from .truth import DemoTruth, FunctionTruth

__all__ = [
    "FUNCTIONS",
    "SERVICE",
    "Claim",
    "ClaimLostError",
    "ClaimState",
    "DemoError",
    "DemoTruth",
    "Fault",
    "FaultRates",
    "FunctionTruth",
    "SqliteIdempotencyStore",
    "StoreError",
    "run_demo",
]
