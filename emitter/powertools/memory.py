"""An in-memory Powertools persistence layer, for tests and local runs (no AWS, no network)."""

from __future__ import annotations

import datetime as dt
import threading

from emitter.powertools import constants as PC

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["InMemoryPersistenceLayer"]


def InMemoryPersistenceLayer() -> Any:  # a class factory (CapWords): Powertools is imported on first use
    """A ``BasePersistenceLayer`` over a dict with DynamoDBPersistenceLayer's claim condition: a claim succeeds when
    the key is absent, its record expired (``expiry_timestamp``, epoch seconds) or it is IN_PROGRESS past its
    ``in_progress_expiry_timestamp`` (epoch ms); otherwise ``IdempotencyItemAlreadyExistsError`` carries the existing
    record (as DynamoDB's ``ReturnValuesOnConditionCheckFailure``). The claim reads the existing record through
    ``_get_record``, as Powertools' cache layer does, so an instrumented layer sees what it overwrites. The clock is
    Powertools' (``datetime.now()``). One process only; thread-safe. ``items`` holds the DataRecords by key,
    ``reads`` counts ``_get_record`` calls (the claims' included)."""
    from aws_lambda_powertools.utilities.idempotency.exceptions import (
        IdempotencyItemAlreadyExistsError,
        IdempotencyItemNotFoundError,
    )
    from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer

    class _InMemoryPersistenceLayer(BasePersistenceLayer):
        def __init__(self) -> None:
            super().__init__()
            self.items: dict[str, Any] = {}
            self.reads = 0
            self._lock = threading.RLock()

        def _get_record(self, idempotency_key: str) -> Any:
            with self._lock:
                self.reads += 1
                rec = self.items.get(idempotency_key)
            if rec is None:
                raise IdempotencyItemNotFoundError
            return rec

        def _put_record(self, data_record: Any) -> None:
            now = dt.datetime.now().timestamp()
            with self._lock:
                try:
                    old = self._get_record(idempotency_key=data_record.idempotency_key)
                except IdempotencyItemNotFoundError:
                    old = None
                if old is not None and (old.expiry_timestamp or 0) >= int(now) and not (
                        old._status == PC.STATUS_INPROGRESS and old.in_progress_expiry_timestamp is not None
                        and old.in_progress_expiry_timestamp < int(now * 1000)):
                    raise IdempotencyItemAlreadyExistsError(old_data_record=old)
                self.items[data_record.idempotency_key] = data_record

        def _update_record(self, data_record: Any) -> None:
            with self._lock:
                self.items[data_record.idempotency_key] = data_record

        def _delete_record(self, data_record: Any) -> None:
            with self._lock:
                self.items.pop(data_record.idempotency_key, None)

    return _InMemoryPersistenceLayer()
