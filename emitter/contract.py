"""The idemwatch contract: metric names, units, dimensions, log keys, outcome and status values.

This module is the single source of truth. The emitter writes what it says, the
collector's standard queries read it, the dashboard labels with it and the alarm
catalogue builds its metric names and dimensions from it. Nothing else in the
repository spells a metric name or a log key as a literal; it imports it from here.
The human-readable version of the same contract is ``emitter/CONTRACT.md`` (a test
checks the two agree).

Only the standard library is imported here: this module ships inside Lambda bundles.

Rules it rests on:
- EMF specification: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
- Metric/dimension costs: every distinct dimension value combination is a separate
  custom metric, so unbounded values (idempotency keys, tenants, event ids, request
  ids) are log properties, never dimensions.
- Log key names follow Powertools for AWS Lambda Logger where they overlap.
"""

from __future__ import annotations

from enum import Enum
from types import MappingProxyType

TYPE_CHECKING = False  # annotations only: ``typing`` is not imported inside a Lambda cold start
if TYPE_CHECKING:
    from collections.abc import Mapping

SCHEMA_VERSION = "1"
"""Value of the ``schema_version`` log key; bumped on any incompatible change."""

# --------------------------------------------------------------------------- namespace
NAMESPACE_DEFAULT = "Idempotency"
ENV_NAMESPACE = "IDEMWATCH_NAMESPACE"
"""Environment variable overriding the namespace (falls back to POWERTOOLS_METRICS_NAMESPACE)."""
ENV_NAMESPACE_FALLBACK = "POWERTOOLS_METRICS_NAMESPACE"
ENV_SERVICE = "IDEMWATCH_SERVICE"
"""Environment variable giving the Service dimension (falls back to POWERTOOLS_SERVICE_NAME)."""
ENV_SERVICE_FALLBACK = "POWERTOOLS_SERVICE_NAME"
SERVICE_UNDEFINED = "service_undefined"
ENV_METRICS_DISABLED = "IDEMWATCH_METRICS_DISABLED"
"""Off switch: a true value (1/true/yes/on) stops EMF documents (outcome log records are still written)."""
ENV_METRICS_DISABLED_FALLBACK = "POWERTOOLS_METRICS_DISABLED"
ENV_POWERTOOLS_DEV = "POWERTOOLS_DEV"
ENV_POISON_AFTER_ATTEMPTS = "IDEMWATCH_POISON_AFTER_ATTEMPTS"
"""Default ``ErrorClassifier.poison_after_attempts``: set it to the queue's maxReceiveCount (int >= 1)."""
ENV_LAMBDA_LOG_LEVEL = "AWS_LAMBDA_LOG_LEVEL"
"""Lambda's application log level (advanced logging controls): TRACE, DEBUG, INFO, WARN, ERROR, FATAL."""
ENV_LAMBDA_LOG_FORMAT = "AWS_LAMBDA_LOG_FORMAT"
"""Lambda's log format: ``JSON`` or ``Text``. Log-level filtering applies to JSON only."""
LAMBDA_LOG_LEVELS: tuple[str, ...] = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
"""Lambda's application log levels, least to most severe (AWS Lambda guide, "Log-level filtering")."""


def resolve_namespace(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The CloudWatch namespace every idemwatch part uses, by one rule.

    Order: ``explicit`` (a non-empty argument or CLI option), ``$IDEMWATCH_NAMESPACE``,
    ``$POWERTOOLS_METRICS_NAMESPACE`` (so a Powertools team's alarms point where its metrics are), then
    ``NAMESPACE_DEFAULT``. ``environ`` defaults to ``os.environ``. Never raises; validity of the name is the
    caller's check (the emitter falls back to the default with a warning).

    >>> resolve_namespace(environ={"POWERTOOLS_METRICS_NAMESPACE": "shop"})
    'shop'
    """
    if explicit:
        return explicit
    if environ is None:
        import os

        environ = os.environ
    return environ.get(ENV_NAMESPACE) or environ.get(ENV_NAMESPACE_FALLBACK) or NAMESPACE_DEFAULT


def resolve_service(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The ``Service`` dimension value, by the same rule as :func:`resolve_namespace`.

    Order: ``explicit``, ``$IDEMWATCH_SERVICE``, ``$POWERTOOLS_SERVICE_NAME``, then ``SERVICE_UNDEFINED``
    (Powertools' own default).
    """
    if explicit:
        return explicit
    if environ is None:
        import os

        environ = os.environ
    return environ.get(ENV_SERVICE) or environ.get(ENV_SERVICE_FALLBACK) or SERVICE_UNDEFINED


_TRUE = frozenset({"1", "true", "yes", "on", "y", "t"})


def metrics_disabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether EMF metrics are switched off, by one rule.

    ``$IDEMWATCH_METRICS_DISABLED`` decides when set (true: 1/true/yes/on, any case; anything else: enabled).
    Otherwise Powertools' own rule (``aws_lambda_powertools.metrics.functions.is_metrics_disabled``):
    ``$POWERTOOLS_METRICS_DISABLED`` true, or ``$POWERTOOLS_DEV`` true with ``POWERTOOLS_METRICS_DISABLED`` unset.
    """
    if environ is None:
        import os

        environ = os.environ
    own = environ.get(ENV_METRICS_DISABLED)
    if own is not None:
        return own.strip().lower() in _TRUE
    pt = environ.get(ENV_METRICS_DISABLED_FALLBACK)
    if pt is not None:
        return pt.strip().lower() in _TRUE
    return environ.get(ENV_POWERTOOLS_DEV, "").strip().lower() in _TRUE


def lambda_filtered_level(environ: Mapping[str, str] | None = None) -> str | None:
    """The Lambda application log level that filters this function's INFO lines, or None when nothing filters them.

    Lambda filters application logs by their ``level`` key only with the JSON log format, and assigns INFO to any
    line without a valid ``level`` (AWS Lambda guide, "Log-level filtering",
    https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-log-level.html). So with
    ``AWS_LAMBDA_LOG_FORMAT=JSON`` and ``AWS_LAMBDA_LOG_LEVEL`` of WARN, ERROR or FATAL, INFO records and EMF documents
    without a ``level`` are dropped before CloudWatch Logs; this returns that level (upper case), else None.
    """
    if environ is None:
        import os

        environ = os.environ
    if environ.get(ENV_LAMBDA_LOG_FORMAT, "").strip().upper() != "JSON":
        return None
    level = environ.get(ENV_LAMBDA_LOG_LEVEL, "").strip().upper()
    if level in LAMBDA_LOG_LEVELS and LAMBDA_LOG_LEVELS.index(level) > LAMBDA_LOG_LEVELS.index("INFO"):
        return level
    return None


# --------------------------------------------------------------------------- dimensions
class Dimension(str, Enum):
    """EMF dimension names. Values are bounded by design (see module docstring)."""

    SERVICE = "Service"
    OPERATION = "Operation"
    EVENT_SOURCE = "EventSource"


DIMENSION_SETS: tuple[tuple[str, ...], ...] = (
    (Dimension.SERVICE.value, Dimension.OPERATION.value),
    (Dimension.SERVICE.value,),
)
"""Dimension sets written in every metric directive. Alarms use ``[Service, Operation]``."""

EVENT_SOURCE_DIMENSION_SET: tuple[str, ...] = (Dimension.SERVICE.value, Dimension.EVENT_SOURCE.value)
"""Extra dimension set added only when the EventSource dimension is enabled (opt-in)."""


# --------------------------------------------------------------------------- metrics
class Unit(str, Enum):
    """The EMF/CloudWatch units this contract uses."""

    COUNT = "Count"
    MILLISECONDS = "Milliseconds"


class Metric(str, Enum):
    """Standard metrics. ``.unit`` gives the CloudWatch unit."""

    EVENTS_RECEIVED = "EventsReceived"
    EVENTS_SUCCEEDED = "EventsSucceeded"
    DUPLICATE_COMPLETED = "DuplicateCompleted"
    DUPLICATE_IN_PROGRESS = "DuplicateInProgress"
    PAYLOAD_CONFLICT = "PayloadConflict"
    STALE_CLAIM_TAKEOVER = "StaleClaimTakeover"
    REDELIVERY = "Redelivery"
    RETRYABLE_FAILURE = "RetryableFailure"
    PERMANENT_FAILURE = "PermanentFailure"
    POISON_MESSAGE = "PoisonMessage"
    TIMEOUT_BUDGET_ABORT = "TimeoutBudgetAbort"
    AMBIGUOUS_COMMIT = "AmbiguousCommit"
    BATCH_ITEM_FAILURES = "BatchItemFailures"
    RECORD_AGE = "RecordAge"
    REMAINING_TIME_AT_SIDE_EFFECT = "RemainingTimeAtSideEffect"
    IDEMPOTENCY_STORE_ERROR = "IdempotencyStoreError"
    COLD_START = "ColdStart"

    @property
    def unit(self) -> Unit:
        """The metric's CloudWatch unit (``METRIC_UNITS``)."""
        return METRIC_UNITS[self]


METRIC_UNITS: Mapping[Metric, Unit] = MappingProxyType(
    {m: Unit.MILLISECONDS if m in (Metric.RECORD_AGE, Metric.REMAINING_TIME_AT_SIDE_EFFECT) else Unit.COUNT
     for m in Metric}
)
"""Metric -> its unit: Milliseconds for the two durations, Count for every other metric."""

METRIC_DESCRIPTIONS: Mapping[Metric, str] = MappingProxyType(
    {
        Metric.EVENTS_RECEIVED: "an event or batch record the handler started on",
        Metric.EVENTS_SUCCEEDED: "first processing finished and recorded COMPLETED",
        Metric.DUPLICATE_COMPLETED: "key already COMPLETED with the same payload hash: stored result returned, side effect skipped",
        Metric.DUPLICATE_IN_PROGRESS: "key IN_PROGRESS and not expired: concurrent duplicate, told to retry later",
        Metric.PAYLOAD_CONFLICT: "key reused with a different payload hash: rejected",
        Metric.STALE_CLAIM_TAKEOVER: "an IN_PROGRESS claim past its expiry taken over (a stuck key recovered)",
        Metric.REDELIVERY: "delivery attempt > 1 (e.g. SQS ApproximateReceiveCount > 1)",
        Metric.RETRYABLE_FAILURE: "failure the source will retry (throttling, dependency unavailable)",
        Metric.PERMANENT_FAILURE: "validation or other permanent failure, not to be retried",
        Metric.POISON_MESSAGE: "event quarantined or routed to a DLQ",
        Metric.TIMEOUT_BUDGET_ABORT: "side effect refused: remaining time below the safe budget",
        Metric.AMBIGUOUS_COMMIT: "side-effect outcome unknown (e.g. timeout after the call): needs reconciliation",
        Metric.BATCH_ITEM_FAILURES: "items returned in batchItemFailures",
        Metric.RECORD_AGE: "now minus the record's arrival/sent time when processing starts (iterator age per record)",
        Metric.REMAINING_TIME_AT_SIDE_EFFECT: "remaining invocation time when a side effect starts",
        Metric.IDEMPOTENCY_STORE_ERROR: "the idempotency persistence layer failed",
        Metric.COLD_START: "first invocation of an execution environment (also on failing invocations)",
    }
)


# --------------------------------------------------------------------------- outcomes
class Outcome(str, Enum):
    """Value of the ``outcome`` log key. Every call that changes a metric writes exactly
    one log record with one of these values (see OUTCOME_METRIC), so counts derived
    from the logs equal the metric counts for the same traffic.
    """

    RECEIVED = "received"  # EventsReceived (+ RecordAge when known, + Redelivery when attempt > 1)
    CLAIMED = "claimed"  # key claimed, record written IN_PROGRESS (no metric; feeds stuck-key detection)
    SUCCEEDED = "succeeded"
    DUPLICATE_COMPLETED = "duplicate_completed"
    DUPLICATE_IN_PROGRESS = "duplicate_in_progress"
    PAYLOAD_CONFLICT = "payload_conflict"
    STALE_CLAIM_TAKEOVER = "stale_claim_takeover"
    RETRYABLE_FAILURE = "retryable_failure"
    PERMANENT_FAILURE = "permanent_failure"
    POISON_MESSAGE = "poison_message"
    TIMEOUT_BUDGET_ABORT = "timeout_budget_abort"
    AMBIGUOUS_COMMIT = "ambiguous_commit"
    SIDE_EFFECT_STARTED = "side_effect_started"  # RemainingTimeAtSideEffect
    BATCH_ITEM_FAILURE = "batch_item_failure"  # one record per item in batchItemFailures
    STORE_ERROR = "store_error"
    COLD_START = "cold_start"  # one per cold invocation, written at invocation start


EXCEPTION_OUTCOME: Mapping[str, Outcome] = MappingProxyType(
    {
        # Powertools idempotency exceptions, by class name (aws_lambda_powertools.utilities.idempotency.exceptions):
        # each means a specific idempotency outcome, not a generic failure, whichever call path records it.
        "IdempotencyAlreadyInProgressError": Outcome.DUPLICATE_IN_PROGRESS,
        "IdempotencyValidationError": Outcome.PAYLOAD_CONFLICT,
        "IdempotencyPersistenceLayerError": Outcome.STORE_ERROR,
        "IdempotencyPersistenceConnectionError": Outcome.STORE_ERROR,
        "IdempotencyPersistenceConsistencyError": Outcome.STORE_ERROR,
        "IdempotencyInconsistentStateError": Outcome.STORE_ERROR,
        "IdempotencyInvalidStatusError": Outcome.STORE_ERROR,
        "IdempotencyKeyError": Outcome.PERMANENT_FAILURE,
    }
)
"""Exception class name -> the outcome it means (the one mapping; the emitter and the collector read it)."""


OUTCOME_METRIC: Mapping[Outcome, Metric | None] = MappingProxyType(
    {
        Outcome.RECEIVED: Metric.EVENTS_RECEIVED,
        Outcome.CLAIMED: None,
        Outcome.SUCCEEDED: Metric.EVENTS_SUCCEEDED,
        Outcome.DUPLICATE_COMPLETED: Metric.DUPLICATE_COMPLETED,
        Outcome.DUPLICATE_IN_PROGRESS: Metric.DUPLICATE_IN_PROGRESS,
        Outcome.PAYLOAD_CONFLICT: Metric.PAYLOAD_CONFLICT,
        Outcome.STALE_CLAIM_TAKEOVER: Metric.STALE_CLAIM_TAKEOVER,
        Outcome.RETRYABLE_FAILURE: Metric.RETRYABLE_FAILURE,
        Outcome.PERMANENT_FAILURE: Metric.PERMANENT_FAILURE,
        Outcome.POISON_MESSAGE: Metric.POISON_MESSAGE,
        Outcome.TIMEOUT_BUDGET_ABORT: Metric.TIMEOUT_BUDGET_ABORT,
        Outcome.AMBIGUOUS_COMMIT: Metric.AMBIGUOUS_COMMIT,
        Outcome.SIDE_EFFECT_STARTED: Metric.REMAINING_TIME_AT_SIDE_EFFECT,
        Outcome.BATCH_ITEM_FAILURE: Metric.BATCH_ITEM_FAILURES,
        Outcome.STORE_ERROR: Metric.IDEMPOTENCY_STORE_ERROR,
        Outcome.COLD_START: Metric.COLD_START,
    }
)
"""The metric each outcome increments (Count metrics by 1; Milliseconds metrics by the
record's ``remaining_time_ms``). Derived metrics, not outcomes:
- Redelivery: a ``received`` record with ``attempt`` > 1;
- RecordAge: the ``record_age_ms`` of a ``received`` record, when present.
"""

METRIC_OUTCOME: Mapping[Metric, Outcome] = MappingProxyType({m: o for o, m in OUTCOME_METRIC.items() if m is not None})
"""Metric -> the outcome whose records it counts (the inverse of OUTCOME_METRIC)."""


class IdempotencyStatus(str, Enum):
    """Value of the ``idempotency_status`` log key: the record's state after the outcome."""

    IN_PROGRESS = "IN_PROGRESS"
    COMPLETED = "COMPLETED"
    EXPIRED = "EXPIRED"  # an IN_PROGRESS claim found past its expiry (then taken over)
    DELETED = "DELETED"  # claim released after a failure so the source can retry


class ErrorClass(str, Enum):
    """How a failure is classified; decides the outcome written."""

    RETRYABLE = "retryable"
    PERMANENT = "permanent"
    POISON = "poison"


ERROR_CLASS_OUTCOME: Mapping[ErrorClass, Outcome] = MappingProxyType(
    {
        ErrorClass.RETRYABLE: Outcome.RETRYABLE_FAILURE,
        ErrorClass.PERMANENT: Outcome.PERMANENT_FAILURE,
        ErrorClass.POISON: Outcome.POISON_MESSAGE,
    }
)
"""ErrorClass -> the outcome a failure of that class is written as."""


class EventSource(str, Enum):
    """Bounded values of the ``event_source`` log key and the optional EventSource dimension."""

    SQS = "sqs"
    KINESIS = "kinesis"
    DYNAMODB = "dynamodb"
    EVENTBRIDGE = "eventbridge"
    API_GATEWAY_REST = "apigateway-rest"
    API_GATEWAY_HTTP = "apigateway-http"
    ALB = "alb"
    SNS = "sns"
    # added with the adapters of issue 11 (emitter/adapters.py, docs/event-sources.md)
    VPC_LATTICE = "vpc-lattice"
    FUNCTION_URL = "function-url"
    API_GATEWAY_WEBSOCKET = "apigateway-websocket"
    MSK = "msk"
    SELF_MANAGED_KAFKA = "self-managed-kafka"
    ACTIVEMQ = "activemq"
    RABBITMQ = "rabbitmq"
    GENERIC = "generic"


# --------------------------------------------------------------------------- log keys
class LogKey(str, Enum):
    """Keys of the structured JSON log record written per outcome.

    The first eleven follow Powertools Logger. Units are in the key name where there is one
    (``_ms`` = milliseconds; ``_at_ms`` = epoch milliseconds).
    """

    LEVEL = "level"  # INFO | WARNING | ERROR
    MESSAGE = "message"
    TIMESTAMP = "timestamp"  # ISO-8601 UTC with milliseconds, e.g. 2026-01-05T10:20:01.000Z
    SERVICE = "service"
    COLD_START = "cold_start"  # bool
    FUNCTION_NAME = "function_name"
    FUNCTION_ARN = "function_arn"  # context.invoked_function_arn (Powertools Logger key)
    FUNCTION_MEMORY_SIZE = "function_memory_size"  # context.memory_limit_in_mb (Powertools Logger key)
    FUNCTION_REQUEST_ID = "function_request_id"
    XRAY_TRACE_ID = "xray_trace_id"
    CORRELATION_ID = "correlation_id"
    OPERATION = "operation"
    EVENT_SOURCE = "event_source"  # EventSource value
    EVENT_ID = "event_id"  # messageId, sequenceNumber, eventID, EventBridge id, API request id
    IDEMPOTENCY_KEY = "idempotency_key"  # or its hash when hashing is on
    IDEMPOTENCY_STATUS = "idempotency_status"  # IdempotencyStatus value
    IN_PROGRESS_EXPIRES_AT_MS = "in_progress_expires_at_ms"  # epoch ms; on claimed/takeover records
    OUTCOME = "outcome"  # Outcome value
    ERROR_CODE = "error_code"
    ERROR_CLASS = "error_class"  # ErrorClass value
    RETRYABLE = "retryable"  # bool
    ATTEMPT = "attempt"  # int >= 1
    RECORD_AGE_MS = "record_age_ms"
    REMAINING_TIME_MS = "remaining_time_ms"
    SIDE_EFFECT_REF = "side_effect_ref"
    TENANT_ID = "tenant_id"
    SCHEMA_VERSION = "schema_version"
    WARNING_CODE = "idemwatch_warning"  # on the emitter's own warning records (dropped values)


LOG_KEYS: tuple[str, ...] = tuple(k.value for k in LogKey)
"""Every log key's name, in the order of :class:`LogKey`."""

# --------------------------------------------------------------------------- redaction (rule: emitter/redact.py, docs/secrets.md)
DEFAULT_REDACTED_KEYS: frozenset[str] = frozenset(
    {
        # passwords
        "password", "passwd", "pwd", "passphrase", "passcode", "db_password", "pin", "otp",
        # secrets and keys
        "secret", "client_secret", "aws_secret_access_key", "secret_access_key", "secret_key", "private_key", "signing_key",
        "encryption_key", "master_key", "api_key", "api_keys", "apikey", "x_api_key",
        # tokens
        "token", "access_token", "refresh_token", "id_token", "session_token", "x_amz_security_token",
        "access_tokens", "refresh_tokens", "id_tokens", "auth_tokens", "api_tokens", "session_tokens",
        "bearer_tokens", "jwt", "bearer",
        # credentials, signatures, connection strings
        "credential", "credentials", "creds", "signature", "connection_string", "dsn",
        # HTTP auth and sessions
        "authorization", "proxy_authorization", "cookie", "cookies", "set_cookie", "session_id", "session_key",
        "sessid",
        # payment and identity numbers
        "card_number", "credit_card", "pan", "cvv", "cvc", "ssn", "iban",
    }
)
"""Property names whose values are replaced by ``REDACTED`` in every log record, matched as families after
normalization (``password`` also matches ``dbPassword``, ``DB_PASSWORD``, ``db-password``; rule in
:mod:`emitter.redact`, list and rationale in ``docs/secrets.md``)."""

DEFAULT_REDACTED_EXACT_KEYS: frozenset[str] = frozenset({"session"})
"""Names redacted only as the whole (normalized) name: ``session`` holds a session credential, but
``session_duration`` or ``role_session_name`` do not."""

DEFAULT_REDACTION_EXCEPTIONS: frozenset[str] = frozenset()
"""Whole names never redacted by default (none: over-redaction is the safe side; add e.g. ``token_count`` with
``Emitter(redact_exceptions=...)``)."""

REDACTED = "***REDACTED***"
