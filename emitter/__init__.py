"""idemwatch emitter: idempotency and handler metrics as CloudWatch EMF plus structured JSON logs.

    from emitter import Emitter
    em = Emitter(service="orders")

    @em.handler(operation="ProcessOrders")
    def handler(event, context):
        for rec in em.records(event):
            em.succeeded(rec, key=rec.event_id)

The contract (metric names, units, dimensions, log keys, outcome values) is :mod:`emitter.contract`, explained in
``emitter/CONTRACT.md``. Importing this package loads only the standard library (json, enum, time, os, _thread).
"""

from emitter.classify import ErrorClassifier
from emitter.constants import WarningCode
from emitter.contract import (
    DEFAULT_REDACTED_KEYS,
    ErrorClass,
    EventSource,
    IdempotencyStatus,
    LogKey,
    Metric,
    Outcome,
)
from emitter.core import Emitter
from emitter.exceptions import EmfValidationError, EmitterError, SinkError, TimeoutBudgetExceeded
from emitter.sinks import AgentSink, DiscardSink, FileSink, MemorySink, StdoutSink, StreamSink
from emitter.types import Classification, EventRecord

__all__ = [
    "DEFAULT_REDACTED_KEYS",
    "AgentSink",
    "Classification",
    "DiscardSink",
    "EmfValidationError",
    "Emitter",
    "EmitterError",
    "ErrorClass",
    "ErrorClassifier",
    "EventRecord",
    "EventSource",
    "FileSink",
    "IdempotencyStatus",
    "LogKey",
    "MemorySink",
    "Metric",
    "Outcome",
    "SinkError",
    "StdoutSink",
    "StreamSink",
    "TimeoutBudgetExceeded",
    "WarningCode",
]
