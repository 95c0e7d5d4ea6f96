"""Data types handed to handlers: :class:`EventRecord` (one event or batch record) and :class:`Classification`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from emitter.contract import ErrorClass, EventSource


@dataclass(eq=False)
class EventRecord:
    """One event, or one record of a batch, as seen by an adapter.

    Attributes:
        event_id: source id: SQS ``messageId``, Kinesis ``sequenceNumber``, DynamoDB ``eventID``, EventBridge ``id``,
            API Gateway ``requestContext.requestId``, ALB ``X-Amzn-Trace-Id`` header, SNS ``MessageId``; None if unknown.
        event_source: the detected :class:`EventSource` (``generic`` for unknown shapes).
        attempt: delivery attempt, >= 1 (SQS ``ApproximateReceiveCount``; 1 where the source does not say).
        record_age_ms: milliseconds from arrival/sent time to when the adapter ran (>= 0), None if unknown.
        sent_at_ms: arrival/sent time, epoch milliseconds, None if unknown.
        idempotency_key: the ``Idempotency-Key`` HTTP header or message attribute, None if absent.
        correlation_id: ``X-Correlation-Id`` header / message attribute, None if absent.
        details: bounded source details (shard_id, sequence_number, message_group_id, source, detail_type, queue, ...).
        raw: the record itself. Never logged.
    """

    event_id: str | None = None
    event_source: EventSource = EventSource.GENERIC
    attempt: int = 1
    record_age_ms: float | None = None
    sent_at_ms: int | None = None
    idempotency_key: str | None = None
    correlation_id: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    raw: Any = field(default=None, repr=False)

    @property
    def item_identifier(self) -> str | None:
        """The ``itemIdentifier`` Lambda expects in ``batchItemFailures``: SQS ``messageId``, Kinesis
        ``sequenceNumber``, DynamoDB Streams ``dynamodb.SequenceNumber``
        (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html)."""
        if self.event_source is EventSource.DYNAMODB:
            return self.details.get("sequence_number") or self.event_id
        return self.event_id


@dataclass(frozen=True)
class Classification:
    """Result of classifying an exception: ``error_class`` decides the outcome written
    (retryable_failure / permanent_failure / poison_message); ``error_code`` is a short bounded code
    (exception class name or AWS error code, never the message); ``retryable`` is True only for RETRYABLE."""

    error_class: ErrorClass
    error_code: str
    retryable: bool
