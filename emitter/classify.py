"""Error classification: exception -> retryable / permanent / poison with a bounded error code.

The default rules, in order (the first that answers wins):
1. custom ``rules`` (callables returning a Classification or None);
2. exact class-name ``overrides`` ({"MyError": ErrorClass.PERMANENT}), checked along the MRO;
3. an exception attribute ``retryable`` (bool) and optional ``error_code`` (e.g. TimeoutBudgetExceeded);
4. AWS SDK errors (botocore ``ClientError``, detected by shape so botocore is never imported): the service error
   code; throttling / 5xx / timeout codes are retryable, everything else permanent;
5. Powertools idempotency exceptions by name: those in ``contract.EXCEPTION_OUTCOME`` take the retryability of the
   outcome they mean (DuplicateInProgress and IdempotencyStoreError retryable, PayloadConflict permanent) and that
   outcome's metric name as error code; ``Emitter.failure`` then records that outcome, not a generic failure;
6. ``retryable_types`` (default: TimeoutError, ConnectionError, OSError) -> retryable,
   ``permanent_types`` (default: ValueError, TypeError, KeyError, LookupError, UnicodeError) -> permanent;
7. anything else: ``default`` (retryable: an unknown failure is safer retried than lost).

Poison (the documented default): a retryable failure on a record whose delivery attempt is >= ``poison_after_attempts``
is classified ``poison``: the source is about to give up on it (maxReceiveCount / maximumRetryAttempts) and route it
to a DLQ. ``poison_after_attempts`` defaults to ``$IDEMWATCH_POISON_AFTER_ATTEMPTS`` (set it to the queue's
maxReceiveCount), else None (never by attempt). ``poison_types`` are always poison. The batch integration
(:mod:`emitter.powertools`) also quarantines permanent failures when given a ``quarantine`` callable.
The exception message is never used (it may carry payload data).
"""

from __future__ import annotations

from emitter.contract import ENV_POISON_AFTER_ATTEMPTS, EXCEPTION_OUTCOME, OUTCOME_METRIC, ErrorClass, Outcome
from emitter.log_records import OUTCOME_SPEC
from emitter.types import Classification

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

RETRYABLE_AWS_CODES = frozenset(
    {
        "Throttling", "ThrottlingException", "ThrottledException", "TooManyRequestsException",
        "ProvisionedThroughputExceededException", "RequestLimitExceeded", "RequestThrottled",
        "RequestThrottledException", "SlowDown", "LimitExceededException", "TransactionInProgressException",
        "InternalServerError", "InternalError", "InternalFailure", "ServiceUnavailable", "ServiceUnavailableException",
        "RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete", "EC2ThrottledException",
        "KMSThrottlingException", "BandwidthLimitExceeded", "TransactionConflictException",
    }
)
"""AWS error codes the SDK itself treats as transient (botocore retry handlers / standard retry mode)."""

def _outcome_classification(outcome: Outcome) -> tuple[ErrorClass, str]:
    """How a failure that means ``outcome`` classifies: retryable as the outcome's record says, its metric's name
    as the error code."""
    metric = OUTCOME_METRIC[outcome]
    return (ErrorClass.RETRYABLE if OUTCOME_SPEC[outcome][2] else ErrorClass.PERMANENT,
            metric.value if metric is not None else outcome.value)


POWERTOOLS_IDEMPOTENCY: dict[str, tuple[ErrorClass, str]] = {
    **{name: _outcome_classification(o) for name, o in EXCEPTION_OUTCOME.items()},
    # Powertools exceptions that are ordinary failures (no idempotency outcome of their own):
    "IdempotencyInconsistentStateError": (ErrorClass.RETRYABLE, "IdempotencyInconsistentState"),
    "IdempotencyKeyError": (ErrorClass.PERMANENT, "IdempotencyKeyMissing"),
}
"""Powertools idempotency exception name -> (class, error code). The outcome-bearing names come from
``contract.EXCEPTION_OUTCOME`` (the one map); this table only adds how they classify."""


def _env_poison_after() -> int | None:
    import os

    raw = os.environ.get(ENV_POISON_AFTER_ATTEMPTS, "").strip()
    return int(raw) if raw.isascii() and raw.isdigit() and 0 < int(raw) < 1_000_000 else None


_UNSET: Any = object()


class ErrorClassifier:
    """Configurable exception classifier (see module docstring for the rule order).

    Args:
        rules: callables tried first; return a Classification to decide, None to pass.
        overrides: exception class name -> ErrorClass.
        retryable_types / permanent_types: exception types by isinstance.
        poison_types: exception types always poison (e.g. a schema error you never want retried).
        default: class for anything unmatched (RETRYABLE).
        poison_after_attempts: attempt number from which a retryable failure is poison (None = never; default
            ``$IDEMWATCH_POISON_AFTER_ATTEMPTS``, else None).
    """

    def __init__(
        self,
        rules: Iterable[Callable[[BaseException], Classification | None]] = (),
        overrides: Mapping[str, ErrorClass] | None = None,
        retryable_types: tuple[type[BaseException], ...] = (TimeoutError, ConnectionError, OSError),
        permanent_types: tuple[type[BaseException], ...] = (ValueError, TypeError, KeyError, LookupError, UnicodeError),
        poison_types: tuple[type[BaseException], ...] = (),
        default: ErrorClass = ErrorClass.RETRYABLE,
        poison_after_attempts: int | None = _UNSET,
    ) -> None:
        self.rules = list(rules)
        self.overrides = dict(overrides or {})
        self.retryable_types = retryable_types
        self.permanent_types = permanent_types
        self.poison_types = poison_types
        self.default = ErrorClass(default)
        self.poison_after_attempts = _env_poison_after() if poison_after_attempts is _UNSET else poison_after_attempts

    @staticmethod
    def _make(cls: ErrorClass, code: str) -> Classification:
        return Classification(cls, code, cls is ErrorClass.RETRYABLE)

    def classify(self, exc: BaseException, attempt: int = 1) -> Classification:
        """Classify ``exc`` raised while processing a record at delivery ``attempt`` (>= 1). Never raises."""
        c = self._classify(exc)
        if (
            c.error_class is ErrorClass.RETRYABLE
            and self.poison_after_attempts is not None
            and attempt >= self.poison_after_attempts
        ):
            return self._make(ErrorClass.POISON, c.error_code)
        return c

    def __call__(self, exc: BaseException, attempt: int = 1) -> Classification:
        return self.classify(exc, attempt)

    def _classify(self, exc: BaseException) -> Classification:
        name = type(exc).__name__
        for rule in self.rules:
            try:
                c = rule(exc)
            except Exception:
                c = None
            if c is not None:
                return c
        for klass in type(exc).__mro__:
            if klass.__name__ in self.overrides:
                return self._make(ErrorClass(self.overrides[klass.__name__]), _code(exc, name))
        if self.poison_types and isinstance(exc, self.poison_types):
            return self._make(ErrorClass.POISON, _code(exc, name))
        flag = getattr(exc, "retryable", None)
        if isinstance(flag, bool):
            return self._make(ErrorClass.RETRYABLE if flag else ErrorClass.PERMANENT, _code(exc, name))
        aws_code = _aws_error_code(exc)
        if aws_code is not None:
            status = _aws_status(exc)
            retry = aws_code in RETRYABLE_AWS_CODES or (status is not None and status >= 500)
            return self._make(ErrorClass.RETRYABLE if retry else ErrorClass.PERMANENT, aws_code)
        for klass in type(exc).__mro__:
            if klass.__name__ in POWERTOOLS_IDEMPOTENCY:
                cls, code = POWERTOOLS_IDEMPOTENCY[klass.__name__]
                return self._make(cls, code)
        if isinstance(exc, self.retryable_types):
            return self._make(ErrorClass.RETRYABLE, name)
        if isinstance(exc, self.permanent_types):
            return self._make(ErrorClass.PERMANENT, name)
        return self._make(self.default, name)


def _code(exc: BaseException, fallback: str) -> str:
    code = getattr(exc, "error_code", None)
    return code if isinstance(code, str) and code else fallback


def _aws_response(exc: BaseException) -> dict[str, Any] | None:
    resp = getattr(exc, "response", None)
    return resp if isinstance(resp, dict) and isinstance(resp.get("Error"), dict) else None


def _aws_error_code(exc: BaseException) -> str | None:
    resp = _aws_response(exc)
    if resp is None:
        return None
    code = resp["Error"].get("Code")
    return code if isinstance(code, str) and code else type(exc).__name__


def _aws_status(exc: BaseException) -> int | None:
    resp = _aws_response(exc) or {}
    meta = resp.get("ResponseMetadata")
    status = meta.get("HTTPStatusCode") if isinstance(meta, dict) else None
    return status if isinstance(status, int) else None


def exception_outcome(exc: BaseException) -> Outcome | None:
    """The outcome ``exc`` means by ``contract.EXCEPTION_OUTCOME`` (class names along the MRO), else None."""
    try:
        for klass in type(exc).__mro__:
            o = EXCEPTION_OUTCOME.get(klass.__name__)
            if o is not None:
                return o
    except Exception:  # noqa: BLE001 - a hostile __mro__/__name__
        return None
    return None


RECORDED_MARK = "_idemwatch_recorded"
"""The attribute an exception carries once its outcome is recorded: the outcome's value, or True for a
TimeoutBudgetExceeded raised by ``Emitter.check_time_budget`` (its record is already written)."""


def recorded_as(exc: BaseException | None, outcome: str) -> bool:
    """True when ``exc`` or an exception it was raised from/during (``__cause__``/``__context__``, 8 deep) carries
    the mark ``outcome``: the persistence layer recorded it where Powertools decided it."""
    for _ in range(8):
        if exc is None:
            return False
        if getattr(exc, RECORDED_MARK, None) == outcome:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def mark_recorded(exc: BaseException, mark: str | bool) -> None:
    """Put the mark ``mark`` on ``exc`` (see :data:`RECORDED_MARK`); an exception that takes no attribute (``__slots__``,
    a read-only attribute) is left unmarked."""
    try:
        setattr(exc, RECORDED_MARK, mark)
    except Exception:  # noqa: BLE001, S110 - an exception that takes no attribute stays unmarked
        pass
