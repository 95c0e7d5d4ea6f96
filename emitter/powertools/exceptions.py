"""Exceptions and warnings of the Powertools integration."""

from __future__ import annotations

from emitter.exceptions import EmitterError


class IntegrationError(EmitterError, TypeError):
    """The object handed to the integration is not what it instruments (e.g. not a ``BasePersistenceLayer`` or not a
    Powertools batch processor), or an option has no meaning. Raised at set-up (init phase), never inside an
    invocation."""


class IntegrationWarning(UserWarning):
    """Set-up succeeded with less than the default instrumentation (e.g. a DynamoDB client without botocore's event
    system: stale claim takeovers cannot be told apart from claims). Issued once, by ``instrument()``."""


class BatchStopped(Exception):
    """A record not processed because an earlier record of the same batch failed
    (``process_partial_response(..., stop_at_first_failure=True)``). Powertools reports the record in
    ``batchItemFailures``, so the event source delivers it again."""
