"""Errors of the demo fleet. Faults the simulator injects are exceptions too, so handlers
handle them the way real handlers handle real ones."""

from __future__ import annotations

from typing import Any

__all__ = [
    "ClaimLostError",
    "DemoError",
    "DependencyError",
    "DependencyThrottled",
    "DependencyUnavailable",
    "PoisonRecordError",
    "ProviderTimeout",
    "SimulatedTimeout",
    "StoreError",
    "ValidationError",
]


class DemoError(Exception):
    """Base class of the demo's own errors."""


class StoreError(DemoError):
    """The idempotency store failed (SQLite error, bad configuration)."""


class ClaimLostError(DemoError):
    """Conditional completion refused: ``owner`` no longer holds the IN_PROGRESS claim on ``key``
    (taken over after expiry, released, or already completed)."""

    def __init__(self, key: str, owner: str, current: Any) -> None:
        holder = getattr(current, "owner", None)
        status = getattr(current, "status", None)
        super().__init__(f"claim on {key!r} not held by {owner!r} (now: status={status}, owner={holder})")
        self.key, self.owner, self.current = key, owner, current


class DependencyError(DemoError):
    """A simulated downstream call failed. ``error_code`` is what the handler reports."""

    error_code = "DependencyError"


class DependencyThrottled(DependencyError):
    """Downstream throttling (e.g. DynamoDB ProvisionedThroughputExceededException): retryable."""

    error_code = "Throttled"


class DependencyUnavailable(DependencyError):
    """Downstream unavailable (HTTP 503 / connection reset): retryable."""

    error_code = "DependencyUnavailable"


class ProviderTimeout(DependencyError):
    """The payment provider did not answer in time; whether it charged is unknown."""

    error_code = "ProviderTimeout"


class ValidationError(DemoError):
    """The request is invalid (HTTP 400): permanent."""

    error_code = "ValidationError"


class PoisonRecordError(DemoError):
    """The record cannot be parsed at all: it will never succeed (quarantine it)."""

    error_code = "MalformedRecord"


class SimulatedTimeout(BaseException):
    """Raised inside a handler when the simulated invocation reaches its timeout.

    A BaseException (like KeyboardInterrupt) so handler code that catches ``Exception``
    cannot swallow it: Lambda kills the runtime at the timeout and nothing after runs."""
