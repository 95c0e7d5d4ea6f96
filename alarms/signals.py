"""The signal table: one :class:`Signal` per alarm the catalogue can build, with safe defaults.

Each signal carries its metric (or metric math), statistic, period, M-out-of-N, threshold,
comparison, treat-missing-data with the reason, severity and the three parts of the
description (meaning, likely causes, first thing to check). ``{placeholders}`` in the texts
are filled per target by :mod:`alarms.catalogue` (``function``, ``operation``, ``service``,
``queue``, ``dlq``, ``stream``, ``table``, ``log_group``, ``namespace``).

Thresholds are starting points a team tunes in its stack config (``overrides``). Choices
worth knowing (each the fix for a silent failure named in the issue):
- event-only metrics (EMF counters, EMF error metrics, Lambda Errors/Throttles) publish
  nothing in quiet periods, so they treat missing data as ``notBreaching``: with ``missing``
  a low-traffic alarm sits in INSUFFICIENT_DATA and never tells you anything;
- gauges (SQS ApproximateNumberOfMessagesVisible, ages) use ``Maximum``: a ``Sum`` of a gauge over a
  period multiplies it by the number of samples;
- IteratorAge and RecordAge use ``Maximum``: an ``Average`` hides the one shard that is stuck;
- rates are metric math with ``FILL(numerator, 0)``: without it a period with events but no
  failures has no datapoint, which is not the same as 0 %.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from alarms import constants as C
from alarms.types import ComparisonOperator, Severity, Statistic, TreatMissingData
from emitter.contract import EventSource, Metric

GT = ComparisonOperator.GREATER_THAN
GTE = ComparisonOperator.GREATER_THAN_OR_EQUAL
UPPER = ComparisonOperator.GREATER_THAN_UPPER
NOT_BREACHING = TreatMissingData.NOT_BREACHING

_EVENT_ONLY = (
    "the emitter publishes this metric only in periods where it happened, so no data means none happened; "
    "'missing' would leave the alarm in INSUFFICIENT_DATA on quiet services"
)


class Scope:
    """What one alarm of a signal is built for (one alarm per matching target)."""

    OPERATION = "operation"  # every function (Service + Operation dimensions)
    ASYNC_OPERATION = "async_operation"  # functions fed by a queue/stream/bus (records have an age)
    FUNCTION = "function"  # every function (AWS/Lambda FunctionName)
    STREAM_FUNCTION = "stream_function"  # functions with a Kinesis / DynamoDB Streams source
    KAFKA_FUNCTION = "kafka_function"  # functions with an Amazon MSK / self-managed Apache Kafka source
    QUEUE = "queue"  # source queues
    DLQ = "dlq"  # dead-letter queues
    LOG_GROUP = "log_group"  # each function's log group (AWS/Logs LogGroupName)
    TABLE = "table"  # the idempotency table (AWS/DynamoDB TableName), when the config names one


KAFKA_SOURCES = frozenset({EventSource.MSK, EventSource.SELF_MANAGED_KAFKA})
ASYNC_SOURCES = frozenset(
    {EventSource.SQS, EventSource.KINESIS, EventSource.DYNAMODB, EventSource.EVENTBRIDGE, EventSource.SNS,
     EventSource.ACTIVEMQ, EventSource.RABBITMQ} | KAFKA_SOURCES
)
"""Sources whose records carry the time they were written (SQS SentTimestamp, Kinesis arrival time, DynamoDB
ApproximateCreationDateTime, EventBridge/SNS time, Kafka record timestamp, Amazon MQ message timestamp), so a
RecordAge alarm applies (emitter/adapters.py reads each)."""
STREAM_SOURCES = frozenset({EventSource.KINESIS, EventSource.DYNAMODB})
"""Sources for which Lambda publishes IteratorAge."""


@dataclass(frozen=True)
class Signal:
    """Defaults of one alarm kind.

    ``metric``: (namespace key, metric name); namespace key "custom" means the stack's EMF
    namespace, otherwise an AWS namespace. ``math``: (expression, ((id, metric name), ...)) over
    this project's metrics, all with ``statistic``. ``unit`` is the threshold's unit.
    """

    id: str
    suffix: str  # alarm name suffix
    title: str
    scope: str
    statistic: Statistic
    period: int
    evaluation_periods: int
    datapoints_to_alarm: int
    threshold: float
    comparison: ComparisonOperator
    treat_missing_data: TreatMissingData
    treat_missing_reason: str
    severity: Severity
    unit: str
    meaning: str
    causes: str
    first_check: str
    metric: tuple[str, str] | None = None
    math: tuple[str, tuple[tuple[Any, ...], ...]] | None = None
    math_label: str | None = None
    tiers: tuple[Tier, ...] = ()
    insights: str | None = None
    """Logs Insights query of the console link (``None``: derived from the outcome the metric counts)."""
    anomaly: AnomalyBand | None = None
    """The signal's base tier compares with an anomaly-detection band by default (``threshold`` is the band's
    width); any signal can be switched to a band with ``overrides.<signal>.anomaly``."""
    enabled_by_default: bool = True
    """False: the alarm is built only when the stack config enables it (``overrides.<signal>.enabled: true``)."""


CUSTOM = "custom"


@dataclass(frozen=True)
class AnomalyBand:
    """A CloudWatch anomaly-detection band: ``ANOMALY_DETECTION_BAND(<the signal's value>, width)``, ``width`` in
    standard deviations of the model's expected value, compared with one of the band operators (PutMetricAlarm:
    ``ThresholdMetricId`` names the band's query). CloudWatch trains the model on up to two weeks of the metric's
    history, with its daily and weekly pattern ("Using CloudWatch anomaly detection", CloudWatch User Guide)."""

    width: float = 2.0
    comparison: ComparisonOperator = ComparisonOperator.GREATER_THAN_UPPER


@dataclass(frozen=True)
class Tier:
    """An extra tier of a signal: same metric, its own severity, threshold and M-out-of-N. Its alarm is
    named ``<base name>-<Severity>`` (the base tier keeps the plain name)."""

    severity: Severity
    threshold: float
    evaluation_periods: int
    datapoints_to_alarm: int

_TABLE_OPERATIONS = ("PutItem", "GetItem", "UpdateItem", "DeleteItem")
"""The DynamoDB operations an idempotency persistence layer calls (Powertools' DynamoDBPersistenceLayer:
put_item with a condition to claim, get_item, update_item to complete, delete_item on failure)."""


def _table_sum(metric: str) -> tuple[str, tuple[tuple[Any, ...], ...]]:
    ids = [op[0].lower() + op[1:-4].lower() for op in _TABLE_OPERATIONS]  # put, get, update, delete
    expression = " + ".join(f"FILL({i}, 0)" for i in ids)
    return expression, tuple((i, metric, C.DYNAMODB_NAMESPACE, ((C.DYNAMODB_OPERATION_DIMENSION, op),))
                             for i, op in zip(ids, _TABLE_OPERATIONS))


_SIGNALS: tuple[Signal, ...] = (
    Signal(
        id="payload_conflict", suffix="PayloadConflict", title="Idempotency key reused with a different payload",
        scope=Scope.OPERATION, metric=(CUSTOM, Metric.PAYLOAD_CONFLICT.value), statistic=Statistic.SUM,
        period=60, evaluation_periods=1, datapoints_to_alarm=1, threshold=0, comparison=GT,
        treat_missing_data=NOT_BREACHING, treat_missing_reason=_EVENT_ONLY, severity=Severity.WARNING, unit="Count",
        meaning="{operation} of {function} rejected an event whose idempotency key was already used with a "
        "different payload hash.",
        causes="a client reusing Idempotency-Key values across different requests; a key built from too few "
        "fields (collisions across tenants or orders); a producer that mutates a message and resends it.",
        first_check="the conflicting_keys table (or Logs Insights: outcome = 'payload_conflict') for the key and "
        "the two requests that share it.",
    ),
    Signal(
        id="poison_rate", suffix="PoisonRate", title="Poison-message rate",
        scope=Scope.OPERATION, statistic=Statistic.SUM,
        math=("100 * FILL(poison, 0) / received",
              (("poison", Metric.POISON_MESSAGE.value), ("received", Metric.EVENTS_RECEIVED.value))),
        math_label="Poison messages (% of events received)",
        period=300, evaluation_periods=3, datapoints_to_alarm=2, threshold=1, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="the rate has no datapoint when no events were received; no traffic is not a "
        "poison problem, and poison that reaches the DLQ is caught by the DLQ alarm",
        severity=Severity.CRITICAL, unit="Percent",
        meaning="more than {threshold}% of the events {operation} received were quarantined or routed to a DLQ "
        "in 2 of the last 3 5-minute periods.",
        causes="a producer deploy changing the message schema; a bad record the handler cannot parse; a "
        "downstream rejecting a whole class of requests as permanent errors.",
        first_check="the error_codes table for poison_message by error_code, then one sample event in the DLQ "
        "{dlq}.",
    ),
    Signal(
        id="timeout_budget_abort", suffix="TimeoutBudgetAbort", title="Side effects refused for lack of time",
        scope=Scope.OPERATION, metric=(CUSTOM, Metric.TIMEOUT_BUDGET_ABORT.value), statistic=Statistic.SUM,
        period=300, evaluation_periods=1, datapoints_to_alarm=1, threshold=0, comparison=GT,
        treat_missing_data=NOT_BREACHING, treat_missing_reason=_EVENT_ONLY, severity=Severity.WARNING, unit="Count",
        meaning="{operation} refused to start a side effect because the invocation's remaining time was below "
        "the safe budget (the event is retried later).",
        causes="function timeout too short for the batch size; a slow dependency eating the time budget; "
        "large batches processed sequentially.",
        first_check="RemainingTimeAtSideEffect and the invocations table (p95/max duration vs the timeout) for "
        "{function}.",
    ),
    Signal(
        id="duplicate_in_progress_sustained", suffix="DuplicateInProgressSustained",
        title="Sustained concurrent duplicates (key IN_PROGRESS)",
        scope=Scope.OPERATION, metric=(CUSTOM, Metric.DUPLICATE_IN_PROGRESS.value), statistic=Statistic.SUM,
        period=60, evaluation_periods=5, datapoints_to_alarm=5, threshold=5, comparison=GTE,
        treat_missing_data=NOT_BREACHING, treat_missing_reason=_EVENT_ONLY, severity=Severity.WARNING, unit="Count",
        meaning="{operation} kept finding keys IN_PROGRESS (at least {threshold} a minute for 5 minutes in a "
        "row): duplicates arrive while the first attempt is still running.",
        causes="SQS visibility timeout shorter than processing time (the message reappears mid-flight); a "
        "claim never completed (crashed invocation) within the lock timeout; aggressive client retries.",
        first_check="the stuck_keys table for keys IN_PROGRESS and the queue's visibility timeout vs "
        "{function}'s timeout.",
    ),
    Signal(
        id="stale_claim_takeover", suffix="StaleClaimTakeover", title="Stuck keys taken over",
        scope=Scope.OPERATION, metric=(CUSTOM, Metric.STALE_CLAIM_TAKEOVER.value), statistic=Statistic.SUM,
        period=300, evaluation_periods=1, datapoints_to_alarm=1, threshold=0, comparison=GT,
        treat_missing_data=NOT_BREACHING, treat_missing_reason=_EVENT_ONLY, severity=Severity.WARNING, unit="Count",
        meaning="{operation} took over IN_PROGRESS claims past their expiry: an earlier attempt claimed the key "
        "and never completed it (a stuck key).",
        causes="invocations killed by timeout or out-of-memory after claiming; a crash between the side effect "
        "and the COMPLETED write (check for a double side effect); a lock timeout shorter than processing.",
        first_check="the stuck_keys table (expired = true) and the invocations table for timeouts of {function}.",
    ),
    Signal(
        id="retry_rate", suffix="RetryRate", title="Retryable-failure rate",
        scope=Scope.OPERATION, statistic=Statistic.SUM,
        math=("100 * FILL(retryable, 0) / received",
              (("retryable", Metric.RETRYABLE_FAILURE.value), ("received", Metric.EVENTS_RECEIVED.value))),
        math_label="Retryable failures (% of events received)",
        period=300, evaluation_periods=3, datapoints_to_alarm=3, threshold=5, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="the rate has no datapoint when no events were received; no traffic means nothing "
        "to retry",
        severity=Severity.WARNING, unit="Percent",
        tiers=(Tier(Severity.CRITICAL, threshold=25, evaluation_periods=3, datapoints_to_alarm=2),),
        meaning="more than {threshold}% of the events {operation} received failed with a retryable error for 15 "
        "minutes.",
        causes="a throttled or unavailable dependency; the idempotency table {table} throttling; concurrency "
        "limits upstream.",
        first_check="the error_codes table for retryable_failure by error_code, then the dependency's own "
        "health.",
    ),
    Signal(
        id="ambiguous_commit", suffix="AmbiguousCommit", title="Side effect with unknown outcome",
        scope=Scope.OPERATION, metric=(CUSTOM, Metric.AMBIGUOUS_COMMIT.value), statistic=Statistic.SUM,
        period=60, evaluation_periods=1, datapoints_to_alarm=1, threshold=0, comparison=GT,
        treat_missing_data=NOT_BREACHING, treat_missing_reason=_EVENT_ONLY, severity=Severity.CRITICAL, unit="Count",
        meaning="{operation} started a side effect whose outcome is unknown (e.g. timeout after the call): it may "
        "have happened once, twice or not at all and needs reconciliation.",
        causes="a downstream timing out after committing; the invocation ending between the side effect and the "
        "COMPLETED write; network errors on the response path.",
        first_check="the trail for outcome = 'ambiguous_commit' (side_effect_ref), then reconcile each reference "
        "with the downstream system.",
    ),
    Signal(
        id="idempotency_store_error", suffix="IdempotencyStoreError", title="Idempotency store failing",
        scope=Scope.OPERATION, metric=(CUSTOM, Metric.IDEMPOTENCY_STORE_ERROR.value), statistic=Statistic.SUM,
        period=60, evaluation_periods=3, datapoints_to_alarm=2, threshold=0, comparison=GT,
        treat_missing_data=NOT_BREACHING, treat_missing_reason=_EVENT_ONLY, severity=Severity.CRITICAL, unit="Count",
        meaning="the idempotency persistence layer ({table}) failed for {operation} in 2 of the last 3 minutes: "
        "duplicates cannot be detected while it fails.",
        causes="DynamoDB throttling (provisioned capacity or hot key); missing IAM permission after a deploy; "
        "the table or its region unavailable.",
        first_check="the error_codes table for store_error by error_code, then ThrottledRequests and SystemErrors "
        "of the table {table}.",
    ),
    Signal(
        id="record_age_max", suffix="RecordAgeMax", title="Records processed late",
        scope=Scope.ASYNC_OPERATION, metric=(CUSTOM, Metric.RECORD_AGE.value), statistic=Statistic.MAXIMUM,
        period=60, evaluation_periods=5, datapoints_to_alarm=3, threshold=60_000, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="RecordAge exists only for records being processed; a consumer that stopped "
        "entirely is caught by the queue-age / IteratorAge alarms, which are measured at the source",
        severity=Severity.WARNING, unit="Milliseconds",
        tiers=(Tier(Severity.CRITICAL, threshold=600_000, evaluation_periods=5, datapoints_to_alarm=5),),
        meaning="{operation} started processing records more than {threshold} ms after they arrived at the "
        "source, in 3 of the last 5 minutes.",
        causes="a backlog (traffic above the consumer's throughput); retries re-delivering old records; reserved "
        "concurrency or batch window limiting the consumer.",
        first_check="the record_age table by operation and the invocations table (durations, timeouts) for "
        "{function}.",
    ),
    Signal(
        id="duplicate_completed_surge", suffix="DuplicateCompletedSurge", title="More duplicates than usual",
        scope=Scope.OPERATION, metric=(CUSTOM, Metric.DUPLICATE_COMPLETED.value), statistic=Statistic.SUM,
        period=300, evaluation_periods=3, datapoints_to_alarm=3, threshold=2, comparison=UPPER,
        treat_missing_data=NOT_BREACHING, treat_missing_reason=_EVENT_ONLY, severity=Severity.WARNING, unit="Count",
        anomaly=AnomalyBand(2.0, UPPER), enabled_by_default=False,
        meaning="{operation} skipped more duplicates (keys already COMPLETED, stored result returned) than "
        "CloudWatch's anomaly model expects for this time of day and week, above the band of {threshold} standard "
        "deviations for 15 minutes: the sources are delivering the same events again more than usual.",
        causes="a consumer timing out after its COMPLETED write (the whole batch comes back); a producer retrying "
        "requests it should not retry; a visibility timeout shorter than processing; a replayed stream or redriven "
        "DLQ (expected: silence it while you redrive).",
        first_check="the Redelivery and RetryableFailure counts of {function}, then the top keys and event sources "
        "of duplicate_completed (Contributor Insights rule or the trail).",
    ),
    Signal(
        id="redelivery_surge", suffix="RedeliverySurge", title="More redeliveries than usual",
        scope=Scope.ASYNC_OPERATION, metric=(CUSTOM, Metric.REDELIVERY.value), statistic=Statistic.SUM,
        period=300, evaluation_periods=3, datapoints_to_alarm=3, threshold=2, comparison=UPPER,
        treat_missing_data=NOT_BREACHING, treat_missing_reason=_EVENT_ONLY, severity=Severity.WARNING, unit="Count",
        anomaly=AnomalyBand(2.0, UPPER), enabled_by_default=False,
        meaning="{operation} received more events on a second or later delivery attempt than CloudWatch's anomaly "
        "model expects for this time of day and week, above the band of {threshold} standard deviations for 15 "
        "minutes.",
        causes="failures returned in batchItemFailures or thrown (the source retries them); throttling of "
        "{function}; a visibility timeout shorter than processing (messages reappear while in flight).",
        first_check="the RetryableFailure and Errors counts of {function}, then the attempts table (distribution of "
        "delivery attempts).",
    ),
    Signal(
        id="lambda_iterator_age", suffix="IteratorAge", title="Stream consumer falling behind",
        scope=Scope.STREAM_FUNCTION, metric=(C.LAMBDA_NAMESPACE, C.LAMBDA_ITERATOR_AGE), statistic=Statistic.MAXIMUM,
        period=60, evaluation_periods=5, datapoints_to_alarm=3, threshold=60_000, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="Lambda publishes IteratorAge only when it invokes the function with a batch; an idle "
        "stream publishes nothing and has nothing waiting",
        severity=Severity.CRITICAL, unit="Milliseconds",
        meaning="the newest batch {function} received from {stream} was more than {threshold} ms old (Maximum "
        "over shards) in 3 of the last 5 minutes; records expire at the stream's retention.",
        causes="a poison record blocking a shard (retries without bisect/partial batch response); handler "
        "slower than the write rate; too few shards or parallelization factor 1.",
        first_check="the function's Errors and the batchItemFailures / poison outcomes for {function}, then the "
        "event source mapping's settings.",
    ),
    Signal(
        id="lambda_offset_lag", suffix="OffsetLag", title="Kafka consumer falling behind",
        scope=Scope.KAFKA_FUNCTION, metric=(C.LAMBDA_NAMESPACE, C.LAMBDA_OFFSET_LAG), statistic=Statistic.MAXIMUM,
        period=60, evaluation_periods=5, datapoints_to_alarm=3, threshold=10_000, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="Lambda publishes OffsetLag only while the event source mapping is polling the topic; "
        "a disabled or deleted mapping is caught by the Errors and invocation alarms",
        severity=Severity.CRITICAL, unit="Count",
        meaning="{function}'s consumer group was more than {threshold} records behind the newest record of "
        "{stream} (OffsetLag, Maximum, in records, not time) in 3 of the last 5 minutes; records expire at the "
        "topic's retention. The default threshold suits a topic of about 100 records/s: set it per topic.",
        causes="a poison record retried as the whole batch (Kafka sources have no partial batch response); "
        "handler slower than the write rate; too few partitions for the pollers to scale.",
        first_check="the function's Errors and Duration, then the poison and retry outcomes for {function}, then "
        "the event source mapping's batch size and pollers.",
    ),
    Signal(
        id="lambda_errors", suffix="Errors", title="Lambda invocation errors",
        scope=Scope.FUNCTION, metric=(C.LAMBDA_NAMESPACE, C.LAMBDA_ERRORS), statistic=Statistic.SUM,
        period=60, evaluation_periods=5, datapoints_to_alarm=3, threshold=0, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="Lambda publishes Errors only for periods with invocations; no invocations, no errors",
        severity=Severity.WARNING, unit="Count",
        meaning="{function} invocations ended in an error (unhandled exception, timeout, out of memory) in 3 of "
        "the last 5 minutes; for batch sources the whole batch is retried.",
        causes="an unhandled exception escaping the handler instead of batchItemFailures; function timeouts; "
        "memory exhaustion.",
        first_check="the invocations table (timeouts, max memory) and the function's log group for REPORT lines "
        "with Status: error or timeout.",
        insights="filter @message like /Task timed out|ERROR/ | stats count(*) by bin(1m)",
    ),
    Signal(
        id="lambda_throttles", suffix="Throttles", title="Lambda throttled",
        scope=Scope.FUNCTION, metric=(C.LAMBDA_NAMESPACE, C.LAMBDA_THROTTLES), statistic=Statistic.SUM,
        period=60, evaluation_periods=5, datapoints_to_alarm=3, threshold=0, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="Lambda publishes Throttles only when invocation requests are made; none means no "
        "throttling",
        severity=Severity.WARNING, unit="Count",
        meaning="invocation requests for {function} were throttled in 3 of the last 5 minutes: events wait or are "
        "retried (and count towards redeliveries).",
        causes="reserved concurrency too low; the account's concurrency limit reached by other functions; "
        "a burst above the scaling rate.",
        first_check="the function's reserved concurrency and the account's ConcurrentExecutions.",
    ),
    Signal(
        id="sqs_age_of_oldest_message", suffix="AgeOfOldestMessage", title="Queue backlog getting old",
        scope=Scope.QUEUE, metric=(C.SQS_NAMESPACE, C.SQS_AGE_OF_OLDEST_MESSAGE), statistic=Statistic.MAXIMUM,
        period=60, evaluation_periods=5, datapoints_to_alarm=5, threshold=300, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="SQS reports this metric only while the queue holds at least one message; no data "
        "means an empty queue",
        severity=Severity.WARNING, unit="Seconds",
        tiers=(Tier(Severity.CRITICAL, threshold=1_800, evaluation_periods=5, datapoints_to_alarm=5),),
        meaning="the oldest message in {queue} has waited more than {threshold} s for 5 minutes: {function} is "
        "not keeping up or is failing the same messages repeatedly.",
        causes="consumer throughput below the arrival rate; messages failing and returning after the visibility "
        "timeout; the event source mapping disabled. Messages received 3+ times without being deleted are left out "
        "of this metric by SQS, so poison messages show in PoisonRate and the DLQ instead.",
        first_check="the Redelivery and RetryableFailure counts of {function}, then the event source mapping's "
        "state.",
    ),
    Signal(
        id="dlq_messages_visible", suffix="MessagesVisible", title="Messages in the dead-letter queue",
        scope=Scope.DLQ, metric=(C.SQS_NAMESPACE, C.SQS_MESSAGES_VISIBLE), statistic=Statistic.MAXIMUM,
        period=60, evaluation_periods=1, datapoints_to_alarm=1, threshold=0, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="SQS publishes queue metrics only while the queue is active; a DLQ without messages "
        "or API activity for about 6 hours stops reporting, and it is empty",
        severity=Severity.CRITICAL, unit="Count",
        meaning="the dead-letter queue {dlq} holds messages: events that were never processed. Maximum of the "
        "gauge, because a Sum over a period multiplies the backlog by the number of samples.",
        causes="poison messages (see the PoisonRate alarm); maxReceiveCount reached after repeated timeouts or "
        "throttling.",
        first_check="one message in {dlq} (its attributes and ApproximateReceiveCount), then redrive after the fix.",
    ),
    Signal(
        id="emf_validation_errors", suffix="EMFValidationErrors", title="EMF documents rejected",
        scope=Scope.LOG_GROUP, metric=(C.LOGS_NAMESPACE, C.LOGS_EMF_VALIDATION_ERRORS), statistic=Statistic.SUM,
        period=300, evaluation_periods=1, datapoints_to_alarm=1, threshold=0, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="CloudWatch Logs publishes this metric only when it rejects a document",
        severity=Severity.CRITICAL, unit="Count",
        meaning="CloudWatch Logs rejected EMF documents in {log_group}: the metrics in them were silently "
        "lost, so every alarm on namespace {namespace} is blind for that traffic.",
        causes="more than 100 metrics or 30 dimensions in a directive; a metric value that is not a number; a "
        "dimension referenced but missing from the document.",
        first_check="a recent log line with _aws from {log_group} checked against the EMF specification.",
        insights="filter ispresent(_aws) | fields @timestamp, @message | sort @timestamp desc | limit 20",
    ),
    Signal(
        id="emf_parsing_errors", suffix="EMFParsingErrors", title="EMF documents unparseable",
        scope=Scope.LOG_GROUP, metric=(C.LOGS_NAMESPACE, C.LOGS_EMF_PARSING_ERRORS), statistic=Statistic.SUM,
        period=300, evaluation_periods=1, datapoints_to_alarm=1, threshold=0, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="CloudWatch Logs publishes this metric only when a document fails to parse",
        severity=Severity.CRITICAL, unit="Count",
        meaning="CloudWatch Logs could not parse EMF documents in {log_group}: metrics were silently lost.",
        causes="a log line truncated above 256 KB; a second writer interleaving output on stdout; invalid JSON "
        "from a hand-built document.",
        first_check="the log events in {log_group} around the first error, for truncated or interleaved JSON.",
        insights="filter @message like /_aws/ | fields @timestamp, @message | sort @timestamp desc | limit 20",
    ),
    Signal(
        id="table_throttled_requests", suffix="ThrottledRequests", title="Idempotency table throttling",
        scope=Scope.TABLE, statistic=Statistic.SUM, math=_table_sum(C.DYNAMODB_THROTTLED_REQUESTS),
        math_label="Throttled requests (PutItem + GetItem + UpdateItem + DeleteItem)",
        period=60, evaluation_periods=5, datapoints_to_alarm=2, threshold=0, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="DynamoDB publishes ThrottledRequests only for periods with a throttled request",
        severity=Severity.WARNING, unit="Count",
        meaning="requests of the idempotency persistence layer to {table} were throttled in 2 of the last 5 "
        "minutes: claims and completions fail and come back as IdempotencyStoreError or retries.",
        causes="provisioned capacity below the claim/complete rate; a hot partition (one key claimed by many "
        "concurrent duplicates); on-demand table above its previous peak.",
        first_check="the table's ConsumedWriteCapacityUnits and ReadThrottleEvents/WriteThrottleEvents, then the "
        "IdempotencyStoreError alarms of the functions using {table}.",
        insights="filter outcome = \"store_error\" | stats count(*) as events by bin(1m), operation, error_code",
    ),
    Signal(
        id="table_system_errors", suffix="SystemErrors", title="Idempotency table server errors",
        scope=Scope.TABLE, statistic=Statistic.SUM, math=_table_sum(C.DYNAMODB_SYSTEM_ERRORS),
        math_label="System errors (PutItem + GetItem + UpdateItem + DeleteItem)",
        period=60, evaluation_periods=3, datapoints_to_alarm=2, threshold=0, comparison=GT,
        treat_missing_data=NOT_BREACHING,
        treat_missing_reason="DynamoDB publishes SystemErrors only for periods with an HTTP 500 response",
        severity=Severity.CRITICAL, unit="Count",
        meaning="DynamoDB answered requests to {table} with HTTP 500 in 2 of the last 3 minutes: duplicates "
        "cannot be detected while it fails.",
        causes="a DynamoDB service event in the region; retries exhausted on the client.",
        first_check="the AWS Health Dashboard for DynamoDB in the region, then the IdempotencyStoreError alarms.",
        insights="filter outcome = \"store_error\" | stats count(*) as events by bin(1m), operation, error_code",
    ),
)

SIGNALS: Mapping[str, Signal] = MappingProxyType({s.id: s for s in _SIGNALS})
"""Signal id -> defaults, in catalogue order."""
