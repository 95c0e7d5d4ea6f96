"""Per-outcome conventions of the log records, precomputed for the hot path.

What each outcome writes by default (``OUTCOME_SPEC``: level, idempotency_status, retryable, error_class, error_code,
message; documented in ``emitter/CONTRACT.md``, a test compares), the constant JSON pieces the fast paths assemble
records from, and plain-``str`` copies of contract enum values (``Enum.value`` goes through a descriptor, ~0.5 us a
read, and these are read several times per outcome).
"""

from __future__ import annotations

from emitter import constants as C
from emitter.contract import (
    OUTCOME_METRIC,
    Dimension,
    ErrorClass,
    EventSource,
    IdempotencyStatus,
    LogKey,
    Metric,
    Outcome,
    Unit,
)
from emitter.exceptions import TimeoutBudgetExceeded
from emitter.jsonfast import esc as _esc

K_ATTEMPT = LogKey.ATTEMPT.value
K_COLD_START = LogKey.COLD_START.value
K_CORRELATION_ID = LogKey.CORRELATION_ID.value
K_ERROR_CLASS = LogKey.ERROR_CLASS.value
K_ERROR_CODE = LogKey.ERROR_CODE.value
K_EVENT_ID = LogKey.EVENT_ID.value
K_EVENT_SOURCE = LogKey.EVENT_SOURCE.value
K_FUNCTION_NAME = LogKey.FUNCTION_NAME.value
K_FUNCTION_ARN = LogKey.FUNCTION_ARN.value
K_FUNCTION_MEMORY_SIZE = LogKey.FUNCTION_MEMORY_SIZE.value
K_FUNCTION_REQUEST_ID = LogKey.FUNCTION_REQUEST_ID.value
K_IDEMPOTENCY_KEY = LogKey.IDEMPOTENCY_KEY.value
K_IDEMPOTENCY_STATUS = LogKey.IDEMPOTENCY_STATUS.value
K_IN_PROGRESS_EXPIRES_AT_MS = LogKey.IN_PROGRESS_EXPIRES_AT_MS.value
K_OPERATION = LogKey.OPERATION.value
K_OUTCOME = LogKey.OUTCOME.value
K_RECORD_AGE_MS = LogKey.RECORD_AGE_MS.value
K_REMAINING_TIME_MS = LogKey.REMAINING_TIME_MS.value
K_RETRYABLE = LogKey.RETRYABLE.value
K_SCHEMA_VERSION = LogKey.SCHEMA_VERSION.value
K_SERVICE = LogKey.SERVICE.value
K_SIDE_EFFECT_REF = LogKey.SIDE_EFFECT_REF.value
K_TENANT_ID = LogKey.TENANT_ID.value
K_WARNING_CODE = LogKey.WARNING_CODE.value
K_XRAY_TRACE_ID = LogKey.XRAY_TRACE_ID.value
M_RECORD_AGE = Metric.RECORD_AGE.value
M_EVENTS_RECEIVED = Metric.EVENTS_RECEIVED.value
M_REDELIVERY = Metric.REDELIVERY.value
M_REMAINING_TIME_AT_SIDE_EFFECT = Metric.REMAINING_TIME_AT_SIDE_EFFECT.value
U_COUNT, U_MS = Unit.COUNT.value, Unit.MILLISECONDS.value
ES_VALUE = {e: e.value for e in EventSource}
OUTCOME_VALUE = {o: o.value for o in Outcome}
OUTCOME_METRIC_NAME = {o: (m.value if m is not None else None) for o, m in OUTCOME_METRIC.items()}
REMAINING_OUTCOMES = frozenset({Outcome.SIDE_EFFECT_STARTED, Outcome.TIMEOUT_BUDGET_ABORT, Outcome.COLD_START})
MAX_FIELD = C.MAX_LOG_FIELD_CHARS
F_EXPIRES = "expires_at_ms"



# level, default idempotency_status, default retryable, default error_class, default error_code, message
OUTCOME_SPEC: dict[Outcome, tuple[str, str | None, bool | None, str | None, str | None, str]] = {
    Outcome.RECEIVED: ("INFO", None, None, None, None, "Event received"),
    Outcome.CLAIMED: ("INFO", IdempotencyStatus.IN_PROGRESS.value, None, None, None, "Idempotency key claimed"),
    Outcome.SUCCEEDED: ("INFO", IdempotencyStatus.COMPLETED.value, None, None, None, "Event processed"),
    Outcome.DUPLICATE_COMPLETED: ("INFO", IdempotencyStatus.COMPLETED.value, None, None, None,
                                  "Duplicate of a COMPLETED key: stored result returned"),
    Outcome.DUPLICATE_IN_PROGRESS: ("WARNING", IdempotencyStatus.IN_PROGRESS.value, True, None, "DuplicateInProgress",
                                    "Duplicate of an IN_PROGRESS key: retry later"),
    Outcome.PAYLOAD_CONFLICT: ("WARNING", None, False, ErrorClass.PERMANENT.value, "PayloadConflict",
                               "Idempotency key reused with a different payload"),
    Outcome.STALE_CLAIM_TAKEOVER: ("WARNING", IdempotencyStatus.IN_PROGRESS.value, None, None, None,
                                   "Expired IN_PROGRESS claim taken over"),
    Outcome.RETRYABLE_FAILURE: ("WARNING", None, True, ErrorClass.RETRYABLE.value, "Unspecified", "Retryable failure"),
    Outcome.PERMANENT_FAILURE: ("ERROR", None, False, ErrorClass.PERMANENT.value, "Unspecified", "Permanent failure"),
    Outcome.POISON_MESSAGE: ("ERROR", None, False, ErrorClass.POISON.value, "Unspecified", "Poison message"),
    Outcome.TIMEOUT_BUDGET_ABORT: ("WARNING", None, True, ErrorClass.RETRYABLE.value, TimeoutBudgetExceeded.error_code,
                                   "Side effect refused: remaining time below budget"),
    Outcome.AMBIGUOUS_COMMIT: ("ERROR", None, None, None, "AmbiguousCommit",
                               "Side-effect outcome unknown: needs reconciliation"),
    Outcome.SIDE_EFFECT_STARTED: ("INFO", None, None, None, None, "Side effect started"),
    Outcome.BATCH_ITEM_FAILURE: ("WARNING", None, True, None, None, "Item returned in batchItemFailures"),
    Outcome.STORE_ERROR: ("ERROR", None, True, None, "IdempotencyStoreError", "Idempotency store error"),
    Outcome.COLD_START: ("INFO", None, None, None, None, "Cold start"),
}

LINE_HEAD = {o: f'{{"level":"{spec[0]}","message":{_esc(spec[5])},"timestamp":"'
              for o, spec in OUTCOME_SPEC.items()}



def fast_parts(o: Outcome) -> tuple[str, str, str, str]:
    level, status, retryable, error_class, error_code, message = OUTCOME_SPEC[o]
    tail = []
    if error_class is not None:
        tail.append(f'"{LogKey.ERROR_CLASS.value}":"{error_class}"')
    if retryable is not None:
        tail.append(f'"{LogKey.RETRYABLE.value}":{"true" if retryable else "false"}')
    return (
        LINE_HEAD[o],
        f'"{LogKey.IDEMPOTENCY_STATUS.value}":"{status}"' if status else "",
        f'"{LogKey.ERROR_CODE.value}":{_esc(error_code)}' if error_code else "",
        ",".join(tail),
    )


FAST_PARTS = {o: fast_parts(o) for o in Outcome}
RECEIVED_HEAD = f'"{LogKey.OUTCOME.value}":"{Outcome.RECEIVED.value}"'
RECEIVED_TAKEN = frozenset(k.value for k in (LogKey.OUTCOME, LogKey.EVENT_SOURCE, LogKey.EVENT_ID,
                                              LogKey.IDEMPOTENCY_KEY, LogKey.ATTEMPT, LogKey.CORRELATION_ID,
                                              LogKey.RECORD_AGE_MS))

# Keys the emitter owns in a log record: props cannot set them.
RESERVED_KEYS = frozenset(
    k.value for k in (LogKey.LEVEL, LogKey.MESSAGE, LogKey.TIMESTAMP, LogKey.SERVICE, LogKey.COLD_START,
                      LogKey.FUNCTION_NAME, LogKey.FUNCTION_ARN, LogKey.FUNCTION_MEMORY_SIZE,
                      LogKey.FUNCTION_REQUEST_ID, LogKey.XRAY_TRACE_ID, LogKey.OUTCOME,
                      LogKey.SCHEMA_VERSION, LogKey.WARNING_CODE, LogKey.EVENT_SOURCE, LogKey.EVENT_ID,
                      LogKey.ATTEMPT, LogKey.RECORD_AGE_MS, LogKey.OPERATION, LogKey.IDEMPOTENCY_KEY)
) | {"idemwatch_dropped"}
STATUS_VALUES = frozenset(s.value for s in IdempotencyStatus)
ERROR_CLASS_VALUES = frozenset(c.value for c in ErrorClass)
CONTRACT_METRICS = frozenset(m.value for m in Metric)
MS_METRICS = frozenset(m.value for m in Metric if m.unit is Unit.MILLISECONDS)
EMF_PROPS = (K_FUNCTION_NAME, K_FUNCTION_REQUEST_ID)
SERVICE, OPERATION, EVENT_SOURCE = Dimension.SERVICE.value, Dimension.OPERATION.value, Dimension.EVENT_SOURCE.value
K_LEVEL = LogKey.LEVEL.value
ROOT_RESERVED = frozenset({"_aws", SERVICE, OPERATION, EVENT_SOURCE, *EMF_PROPS, K_SCHEMA_VERSION, K_LEVEL})
