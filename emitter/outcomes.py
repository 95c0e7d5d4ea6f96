"""Per-outcome conventions of the log records, precomputed for the hot path.

What each outcome writes by default (``OUTCOME_SPEC``: level, idempotency_status, retryable, error_class, error_code,
message; documented in ``emitter/CONTRACT.md``, a test compares), the constant JSON pieces the fast paths assemble
records from, and plain-``str`` copies of contract enum values (``Enum.value`` goes through a descriptor, ~0.5 us a
read, and these are read several times per outcome).
"""

from __future__ import annotations

from emitter import constants as C

from emitter.contract import (
    METRIC_UNITS,
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


def _plain(enum_cls: type) -> type:
    return type("_" + enum_cls.__name__, (), {m.name: m.value for m in enum_cls})  # type: ignore[attr-defined]


_DIM, _EC, _ST, _LK, _M, _U = (_plain(e) for e in (Dimension, ErrorClass, IdempotencyStatus, LogKey, Metric, Unit))
_OUTCOME_METRIC_VALUES = {o: None if m is None else m.value for o, m in OUTCOME_METRIC.items()}
_MS_METRIC_VALUES = tuple(m.value for m, u in METRIC_UNITS.items() if u is Unit.MILLISECONDS)
from emitter.exceptions import TimeoutBudgetExceeded
from emitter.jsonfast import esc as _esc

K_ATTEMPT = _LK.ATTEMPT
K_COLD_START = _LK.COLD_START
K_CORRELATION_ID = _LK.CORRELATION_ID
K_ERROR_CLASS = _LK.ERROR_CLASS
K_ERROR_CODE = _LK.ERROR_CODE
K_EVENT_ID = _LK.EVENT_ID
K_EVENT_SOURCE = _LK.EVENT_SOURCE
K_FUNCTION_NAME = _LK.FUNCTION_NAME
K_FUNCTION_ARN = _LK.FUNCTION_ARN
K_FUNCTION_MEMORY_SIZE = _LK.FUNCTION_MEMORY_SIZE
K_FUNCTION_REQUEST_ID = _LK.FUNCTION_REQUEST_ID
K_IDEMPOTENCY_KEY = _LK.IDEMPOTENCY_KEY
K_IDEMPOTENCY_STATUS = _LK.IDEMPOTENCY_STATUS
K_IN_PROGRESS_EXPIRES_AT_MS = _LK.IN_PROGRESS_EXPIRES_AT_MS
K_OPERATION = _LK.OPERATION
K_OUTCOME = _LK.OUTCOME
K_RECORD_AGE_MS = _LK.RECORD_AGE_MS
K_REMAINING_TIME_MS = _LK.REMAINING_TIME_MS
K_RETRYABLE = _LK.RETRYABLE
K_SCHEMA_VERSION = _LK.SCHEMA_VERSION
K_SERVICE = _LK.SERVICE
K_SIDE_EFFECT_REF = _LK.SIDE_EFFECT_REF
K_TENANT_ID = _LK.TENANT_ID
K_WARNING_CODE = _LK.WARNING_CODE
K_XRAY_TRACE_ID = _LK.XRAY_TRACE_ID
M_RECORD_AGE = _M.RECORD_AGE
M_EVENTS_RECEIVED = _M.EVENTS_RECEIVED
M_REDELIVERY = _M.REDELIVERY
M_REMAINING_TIME_AT_SIDE_EFFECT = _M.REMAINING_TIME_AT_SIDE_EFFECT
U_COUNT, U_MS = _U.COUNT, _U.MILLISECONDS
ES_VALUE = {e: e.value for e in EventSource}
OUTCOME_VALUE = {o: o.value for o in Outcome}
OUTCOME_METRIC_NAME = dict(_OUTCOME_METRIC_VALUES)  # Outcome -> metric name | None (contract.OUTCOME_METRIC)
REMAINING_OUTCOMES = frozenset({Outcome.SIDE_EFFECT_STARTED, Outcome.TIMEOUT_BUDGET_ABORT, Outcome.COLD_START})
MAX_FIELD = C.MAX_LOG_FIELD_CHARS
F_EXPIRES = "expires_at_ms"



# level, default idempotency_status, default retryable, default error_class, default error_code, message
OUTCOME_SPEC: dict[Outcome, tuple[str, str | None, bool | None, str | None, str | None, str]] = {
    Outcome.RECEIVED: ("INFO", None, None, None, None, "Event received"),
    Outcome.CLAIMED: ("INFO", _ST.IN_PROGRESS, None, None, None, "Idempotency key claimed"),
    Outcome.SUCCEEDED: ("INFO", _ST.COMPLETED, None, None, None, "Event processed"),
    Outcome.DUPLICATE_COMPLETED: ("INFO", _ST.COMPLETED, None, None, None,
                                  "Duplicate of a COMPLETED key: stored result returned"),
    Outcome.DUPLICATE_IN_PROGRESS: ("WARNING", _ST.IN_PROGRESS, True, None, "DuplicateInProgress",
                                    "Duplicate of an IN_PROGRESS key: retry later"),
    Outcome.PAYLOAD_CONFLICT: ("WARNING", None, False, _EC.PERMANENT, "PayloadConflict",
                               "Idempotency key reused with a different payload"),
    Outcome.STALE_CLAIM_TAKEOVER: ("WARNING", _ST.IN_PROGRESS, None, None, None,
                                   "Expired IN_PROGRESS claim taken over"),
    Outcome.RETRYABLE_FAILURE: ("WARNING", None, True, _EC.RETRYABLE, "Unspecified", "Retryable failure"),
    Outcome.PERMANENT_FAILURE: ("ERROR", None, False, _EC.PERMANENT, "Unspecified", "Permanent failure"),
    Outcome.POISON_MESSAGE: ("ERROR", None, False, _EC.POISON, "Unspecified", "Poison message"),
    Outcome.TIMEOUT_BUDGET_ABORT: ("WARNING", None, True, _EC.RETRYABLE, TimeoutBudgetExceeded.error_code,
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
        tail.append(f'"{_LK.ERROR_CLASS}":"{error_class}"')
    if retryable is not None:
        tail.append(f'"{_LK.RETRYABLE}":{"true" if retryable else "false"}')
    return (
        LINE_HEAD[o],
        f'"{_LK.IDEMPOTENCY_STATUS}":"{status}"' if status else "",
        f'"{_LK.ERROR_CODE}":{_esc(error_code)}' if error_code else "",
        ",".join(tail),
    )


FAST_PARTS = {o: fast_parts(o) for o in Outcome}
RECEIVED_HEAD = f'"{_LK.OUTCOME}":"{Outcome.RECEIVED.value}"'
RECEIVED_TAKEN = frozenset((_LK.OUTCOME, _LK.EVENT_SOURCE, _LK.EVENT_ID, _LK.IDEMPOTENCY_KEY, _LK.ATTEMPT,
                            _LK.CORRELATION_ID, _LK.RECORD_AGE_MS))

# Keys the emitter owns in a log record: props cannot set them.
RESERVED_KEYS = frozenset(
    (_LK.LEVEL, _LK.MESSAGE, _LK.TIMESTAMP, _LK.SERVICE, _LK.COLD_START, _LK.FUNCTION_NAME, _LK.FUNCTION_ARN,
     _LK.FUNCTION_MEMORY_SIZE, _LK.FUNCTION_REQUEST_ID, _LK.XRAY_TRACE_ID, _LK.OUTCOME, _LK.SCHEMA_VERSION,
     _LK.WARNING_CODE, _LK.EVENT_SOURCE, _LK.EVENT_ID, _LK.ATTEMPT, _LK.RECORD_AGE_MS, _LK.OPERATION,
     _LK.IDEMPOTENCY_KEY)
) | {"idemwatch_dropped"}
STATUS_VALUES = frozenset(v for k, v in vars(_ST).items() if k.isupper())
ERROR_CLASS_VALUES = frozenset(v for k, v in vars(_EC).items() if k.isupper())
CONTRACT_METRICS = frozenset(v for k, v in vars(_M).items() if k.isupper())
MS_METRICS = frozenset(_MS_METRIC_VALUES)
EMF_PROPS = (K_FUNCTION_NAME, K_FUNCTION_REQUEST_ID)
SERVICE, OPERATION, EVENT_SOURCE = _DIM.SERVICE, _DIM.OPERATION, _DIM.EVENT_SOURCE
K_LEVEL = _LK.LEVEL
ROOT_RESERVED = frozenset({"_aws", SERVICE, OPERATION, EVENT_SOURCE, *EMF_PROPS, K_SCHEMA_VERSION, K_LEVEL})
