"""A Powertools for AWS Lambda idempotency persistence layer on the demo's SQLite store (no instrumentation).

The demo's ``create-case-api`` hands this layer to ``emitter.powertools.instrument`` -- the same one line a
Powertools user writes for ``DynamoDBPersistenceLayer`` -- so every decision is recorded by the shipped integration.
This module only stores records; it calls no emitter.

Time: Powertools computes expiries from the wall clock (``datetime.now()``); the demo runs on simulated time. The
store therefore decides every condition itself with the simulated clock (the same conditional writes as
:class:`~.store.SqliteIdempotencyStore`), writes the claim's simulated in-progress expiry into the data record
(what the instrumentation logs as ``in_progress_expires_at_ms``), and records handed back to Powertools carry no
expiry timestamps, so Powertools trusts that decision instead of re-checking against the wall clock.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from .store import ClaimState, IdempotencyRecord, SqliteIdempotencyStore

__all__ = ["SqlitePersistenceLayer"]

_STATUS = {"IN_PROGRESS": "INPROGRESS", "COMPLETED": "COMPLETED"}  # our status -> Powertools' STATUS_CONSTANTS


class SqlitePersistenceLayer(BasePersistenceLayer):
    """Powertools persistence layer over :class:`SqliteIdempotencyStore`, deciding with simulated time.

    Args:
        store: the SQLite store (shared by all execution environments).
        clock: callable -> simulated epoch ms.
        in_progress_ttl_ms: in-progress expiry (ms).
        aliases: dict filled with {stored (hashed) key: readable key}, so logs and stuck keys can be named.

    Call :meth:`bind` at the start of each invocation with the context and the readable key (Powertools stores only
    a hash of the key). After a call, ``replayed`` says a stored response was returned, ``last_existing`` holds the
    record a failed claim found and ``last_claim_takeover`` whether the last claim took over an expired one.
    """

    def __init__(self, store: SqliteIdempotencyStore, clock: Any, in_progress_ttl_ms: int,
                 aliases: dict[str, str]) -> None:
        super().__init__()
        self.store = store
        self.clock = clock
        self.in_progress_ttl_ms = in_progress_ttl_ms
        self.aliases = aliases
        self._ctx: Any = None
        self._readable_key: str | None = None
        self.replayed = False
        self.last_existing: IdempotencyRecord | None = None
        self.last_claim_takeover = False

    def bind(self, context: Any, readable_key: str) -> None:
        self._ctx, self._readable_key = context, readable_key
        self.replayed, self.last_existing, self.last_claim_takeover = False, None, False

    @property
    def _owner(self) -> str:
        return getattr(self._ctx, "aws_request_id", "unknown")

    def _to_data_record(self, r: IdempotencyRecord) -> DataRecord:
        response = "" if r.response is None else json.dumps(r.response, sort_keys=True)
        # no expiry timestamps: the store already decided with simulated time (see module docstring)
        return DataRecord(idempotency_key=r.key, status=_STATUS[r.status], response_data=response,
                          payload_hash=r.payload_hash)

    # ------------------------------------------------------------------ BasePersistenceLayer
    def _put_record(self, data_record: DataRecord) -> None:
        key = data_record.idempotency_key
        self.aliases.setdefault(key, self._readable_key or key)
        c = self.store.claim(key, data_record.payload_hash, self._owner, self.clock(), self.in_progress_ttl_ms)
        if c.state in (ClaimState.CLAIMED, ClaimState.TAKEOVER):
            self.last_claim_takeover = c.state is ClaimState.TAKEOVER
            data_record.in_progress_expiry_timestamp = c.record.in_progress_expires_at_ms  # simulated epoch ms
            return
        self.last_existing = c.record
        old = self._to_data_record(c.record)
        if c.state is ClaimState.CONFLICT:
            # what DynamoDBPersistenceLayer does with the item returned by the failed condition
            self._validate_payload(data_payload=data_record, stored_data_record=old)
            raise IdempotencyValidationError("Payload does not match stored record for this event key")
        self.replayed = c.state is ClaimState.DUPLICATE_COMPLETED
        raise IdempotencyItemAlreadyExistsError(f"Failed to put record for already existing idempotency key: {key}",
                                                old_data_record=old)

    def _get_record(self, idempotency_key: str) -> DataRecord:
        r = self.store.get(idempotency_key)
        now = self.clock()
        if r is None or r.expires_at_ms <= now:
            raise IdempotencyItemNotFoundError
        return self._to_data_record(r)

    def _update_record(self, data_record: DataRecord) -> None:
        response = json.loads(data_record.response_data) if data_record.response_data else None
        self.store.complete(data_record.idempotency_key, self._owner, response, self.clock())

    def _delete_record(self, data_record: DataRecord) -> None:
        self.store.release(data_record.idempotency_key, self._owner)
