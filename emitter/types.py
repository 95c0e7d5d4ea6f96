"""Data types handed to handlers: :class:`EventRecord` (one event or batch record) and :class:`Classification`.

Plain ``__slots__`` classes rather than dataclasses: ``dataclasses`` imports ``inspect``, a large module this package
does not otherwise load inside a Lambda cold start.
"""

from __future__ import annotations

from emitter.contract import EventSource

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from emitter.contract import ErrorClass  # made on first use (emitter.contract)


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

    __slots__ = (
        "attempt",
        "correlation_id",
        "details",
        "event_id",
        "event_source",
        "idempotency_key",
        "raw",
        "record_age_ms",
        "sent_at_ms",
    )

    def __init__(
        self,
        event_id: str | None = None,
        event_source: EventSource = EventSource.GENERIC,
        attempt: int = 1,
        record_age_ms: float | None = None,
        sent_at_ms: int | None = None,
        idempotency_key: str | None = None,
        correlation_id: str | None = None,
        details: dict[str, Any] | None = None,
        raw: Any = None,
    ) -> None:
        self.event_id = event_id
        self.event_source = event_source
        self.attempt = attempt
        self.record_age_ms = record_age_ms
        self.sent_at_ms = sent_at_ms
        self.idempotency_key = idempotency_key
        self.correlation_id = correlation_id
        self.details = details if details is not None else {}
        self.raw = raw

    @property
    def item_identifier(self) -> str | None:
        """The ``itemIdentifier`` Lambda expects in ``batchItemFailures``: SQS ``messageId``, Kinesis
        ``sequenceNumber``, DynamoDB Streams ``dynamodb.SequenceNumber``
        (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html)."""
        if self.event_source is EventSource.DYNAMODB:
            return self.details.get("sequence_number") or self.event_id
        return self.event_id

    def __repr__(self) -> str:  # raw is never shown (it holds the payload)
        return (f"EventRecord(event_id={self.event_id!r}, event_source={self.event_source.value!r}, "
                f"attempt={self.attempt}, record_age_ms={self.record_age_ms!r}, details={self.details!r})")


class Classification:
    """Result of classifying an exception: ``error_class`` decides the outcome written
    (retryable_failure / permanent_failure / poison_message); ``error_code`` is a short bounded code
    (exception class name or AWS error code, never the message); ``retryable`` is True only for RETRYABLE."""

    __slots__ = ("error_class", "error_code", "retryable")
    error_class: ErrorClass
    error_code: str
    retryable: bool

    def __init__(self, error_class: ErrorClass, error_code: str, retryable: bool) -> None:
        object.__setattr__(self, "error_class", error_class)
        object.__setattr__(self, "error_code", error_code)
        object.__setattr__(self, "retryable", retryable)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Classification is immutable")

    def _key(self) -> tuple[Any, ...]:
        return (self.error_class, self.error_code, self.retryable)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Classification) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"Classification(error_class={self.error_class.value!r}, error_code={self.error_code!r}, "
                f"retryable={self.retryable})")
