"""A Powertools for AWS Lambda idempotency persistence layer on the demo's SQLite store, instrumented with idemwatch.

Powertools' idempotency utility (``@idempotent`` / ``@idempotent_function``) emits no metric
of its own. A persistence layer sees every decision, so this subclass of
``BasePersistenceLayer`` reports each one through the emitter -- the pattern a Powertools
user can copy onto ``DynamoDBPersistenceLayer``:

======================================  ==================================================
what ``_put_record`` finds               emitter outcome (then what Powertools does)
======================================  ==================================================
no record / TTL passed                   ``claimed`` (runs the function)
IN_PROGRESS past its expiry              ``stale_claim_takeover`` (runs the function)
same payload hash, COMPLETED             ``duplicate_completed`` (returns the stored response)
same payload hash, IN_PROGRESS           ``duplicate_in_progress`` (IdempotencyAlreadyInProgressError)
different payload hash                   ``payload_conflict`` (IdempotencyValidationError)
======================================  ==================================================

Time: Powertools computes expiries from the wall clock (``datetime.now()``); the demo runs on
simulated time. The store therefore decides every condition itself with the simulated clock
(the same conditional writes as :class:`~.store.SqliteIdempotencyStore`), and records handed
back to Powertools carry no expiry timestamps, so Powertools trusts that decision instead
of re-checking against the wall clock. The in-progress expiry is the demo stack's fixed lock.
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

__all__ = ["InstrumentedSqlitePersistenceLayer"]

_STATUS = {"IN_PROGRESS": "INPROGRESS", "COMPLETED": "COMPLETED"}  # our status -> Powertools' STATUS_CONSTANTS


class InstrumentedSqlitePersistenceLayer(BasePersistenceLayer):
    """Powertools persistence layer over :class:`SqliteIdempotencyStore`, reporting to an idemwatch emitter.

    Args:
        store: the SQLite store (shared by all execution environments).
        emitter: this environment's emitter (or its CountingEmitter proxy).
        clock: callable -> simulated epoch ms.
        in_progress_ttl_ms: in-progress expiry (ms).
        aliases: dict filled with {stored (hashed) key: logged key}, so stuck keys can be named.

    Call :meth:`bind` at the start of each invocation with the context, the EventRecord and the
    human-readable key to log (Powertools stores only a hash of the key).
    """

    def __init__(self, store: SqliteIdempotencyStore, emitter: Any, clock: Any, in_progress_ttl_ms: int,
                 aliases: dict[str, str]) -> None:
        super().__init__()
        self.store = store
        self.em = emitter
        self.clock = clock
        self.in_progress_ttl_ms = in_progress_ttl_ms
        self.aliases = aliases
        self._ctx: Any = None
        self._record: Any = None
        self._logged_key: str | None = None
        self.replayed = False  # the last call returned a stored response
        self.last_existing: IdempotencyRecord | None = None  # the record found by the last failed claim

    def bind(self, context: Any, record: Any, logged_key: str) -> None:
        self._ctx, self._record, self._logged_key = context, record, logged_key
        self.replayed, self.last_existing = False, None

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
        self.aliases.setdefault(key, self._logged_key or key)
        em, rec, logged = self.em, self._record, self._logged_key
        c = self.store.claim(key, data_record.payload_hash, self._owner, self.clock(), self.in_progress_ttl_ms)
        if c.state is ClaimState.CLAIMED:
            em.claimed(rec, key=logged, expires_at_ms=c.record.in_progress_expires_at_ms)
            return
        if c.state is ClaimState.TAKEOVER:
            em.stale_claim_takeover(rec, key=logged, expires_at_ms=c.record.in_progress_expires_at_ms)
            return
        self.last_existing = c.record
        old = self._to_data_record(c.record)
        if c.state is ClaimState.CONFLICT:
            em.payload_conflict(rec, key=logged)
            # what DynamoDBPersistenceLayer does with the item returned by the failed condition
            self._validate_payload(data_payload=data_record, stored_data_record=old)
            raise IdempotencyValidationError("Payload does not match stored record for this event key")
        if c.state is ClaimState.DUPLICATE_IN_PROGRESS:
            em.duplicate_in_progress(rec, key=logged)
        else:
            em.duplicate_completed(rec, key=logged)
            self.replayed = True
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
