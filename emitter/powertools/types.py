"""Types of the Powertools integration."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from emitter.types import EventRecord

    Quarantine = Callable[[EventRecord, BaseException], Any]
    """``quarantine(record, exc)``: put a poison record somewhere safe (a DLQ, a table); raising means it was not
    quarantined (then the record stays in batchItemFailures)."""


class RecordScope:
    """What the integration knows about the batch record being processed in this context (thread or asyncio task).

    Attributes:
        record: the EventRecord the idempotency outcomes attach to (None outside a batch record).
        terminal: the persistence layer recorded the record's final outcome (succeeded / duplicate_completed / ...),
            so the batch integration must not add ``succeeded`` on top.
    """

    __slots__ = ("record", "terminal")

    def __init__(self, record: EventRecord | None = None) -> None:
        self.record = record
        self.terminal = False
