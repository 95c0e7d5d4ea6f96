"""An embedded idempotency store: SQLite, the relational form of the DynamoDB conditional-write pattern.

The DynamoDB pattern (the one Powertools' DynamoDBPersistenceLayer implements) is:

1. ``PutItem`` with ``ConditionExpression = attribute_not_exists(id) OR expiration < :now
   OR (status = INPROGRESS AND in_progress_expiration < :now_ms)`` -- the atomic claim;
2. on ``ConditionalCheckFailedException`` read the existing item and decide: same payload hash
   and COMPLETED -> return the stored response; IN_PROGRESS and not expired -> "in progress";
   different payload hash -> conflict;
3. ``UpdateItem`` to COMPLETED with the response -- conditional on still holding the claim;
4. ``DeleteItem`` on failure so the event source can retry.

Here step 1 is ``INSERT ... ON CONFLICT(key) DO NOTHING`` (one atomic statement; ``rowcount``
says who won) and the takeover of an expired record is an ``UPDATE`` guarded by the row's
``version`` (optimistic concurrency, the same role as the condition expression). Every write
is a single autocommitted statement, so concurrent claimers in other threads or processes
see exactly one winner.

All times are epoch **milliseconds** from the caller's clock (the demo's simulated clock);
the store never reads the wall clock.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Self

from emitter.contract import IdempotencyStatus

from .constants import IDEMPOTENCY_TABLE
from .exceptions import ClaimLostError, StoreError

__all__ = ["Claim", "ClaimState", "IdempotencyRecord", "SqliteIdempotencyStore"]


class ClaimState(str, Enum):
    """Result of :meth:`SqliteIdempotencyStore.claim`."""

    CLAIMED = "claimed"  # new record written IN_PROGRESS (also when a COMPLETED record's TTL had passed)
    TAKEOVER = "takeover"  # an IN_PROGRESS record past its in-progress expiry was taken over
    DUPLICATE_COMPLETED = "duplicate_completed"  # COMPLETED, same payload hash: stored response returned
    DUPLICATE_IN_PROGRESS = "duplicate_in_progress"  # IN_PROGRESS, not expired: someone else holds it
    CONFLICT = "conflict"  # the key exists with a different payload hash


@dataclass(frozen=True)
class IdempotencyRecord:
    """One row of the idempotency table. Times are epoch ms."""

    key: str
    status: str  # IdempotencyStatus.IN_PROGRESS / COMPLETED value
    payload_hash: str
    owner: str  # request id holding (or having completed) the claim
    claimed_at_ms: int
    in_progress_expires_at_ms: int
    expires_at_ms: int  # record TTL (DynamoDB TTL attribute)
    completed_at_ms: int | None
    response: Any  # JSON-decoded stored response, None while IN_PROGRESS
    attempts: int  # number of successful claims (1 + takeovers/reclaims)
    version: int


@dataclass(frozen=True)
class Claim:
    """Outcome of a claim: ``state``; ``record`` = the row as it is after the call (for
    DUPLICATE_*/CONFLICT: the existing row; for CLAIMED/TAKEOVER: the new claim);
    ``previous`` = the row that was replaced (TAKEOVER and reclaims of expired records)."""

    state: ClaimState
    record: IdempotencyRecord
    previous: IdempotencyRecord | None = None


_COLUMNS = (
    "key, status, payload_hash, owner, claimed_at_ms, in_progress_expires_at_ms, expires_at_ms, "
    "completed_at_ms, response, attempts, version"
)


class SqliteIdempotencyStore:
    """Idempotency records in one SQLite table (default name ``idempotency``).

    Args:
        path: database file (``":memory:"`` is refused: every thread needs its own
            connection to the same database, so a file is required).
        table: table name (letters, digits and ``_`` only).
        record_ttl_ms: how long a COMPLETED record is kept (ms); Powertools' default
            ``expires_after_seconds`` is 3600 s.

    Thread-safe: one connection per thread; each operation is one autocommitted statement
    (plus reads), so it is also safe across processes sharing the file.

    Raises:
        StoreError: the database cannot be opened or a statement fails (wraps sqlite3.Error).
    """

    def __init__(self, path: Path | str, table: str = IDEMPOTENCY_TABLE, record_ttl_ms: int = 3_600_000) -> None:
        if str(path) == ":memory:":
            raise StoreError("SqliteIdempotencyStore needs a file path (threads share it); ':memory:' is per connection")
        if not table.replace("_", "").isalnum():
            raise StoreError(f"invalid table name {table!r}: letters, digits and '_' only")
        self.path = Path(path)
        self.table = table
        self.record_ttl_ms = int(record_ttl_ms)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        conn = self._conn()
        try:
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self.table} ("
                "key TEXT PRIMARY KEY, status TEXT NOT NULL, payload_hash TEXT NOT NULL, owner TEXT NOT NULL, "
                "claimed_at_ms INTEGER NOT NULL, in_progress_expires_at_ms INTEGER NOT NULL, "
                "expires_at_ms INTEGER NOT NULL, completed_at_ms INTEGER, response TEXT, "
                "attempts INTEGER NOT NULL DEFAULT 1, version INTEGER NOT NULL DEFAULT 1)"
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot create table {self.table} in {self.path}: {exc}") from exc

    # ------------------------------------------------------------------ connections
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                # isolation_level=None: autocommit, every statement is its own transaction.
                conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot open idempotency store {self.path}: {exc}") from exc
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection opened by any thread."""
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ operations
    def claim(self, key: str, payload_hash: str, owner: str, now_ms: int, in_progress_ttl_ms: int) -> Claim:
        """Claim ``key`` for ``owner`` at ``now_ms``; the claim expires at ``now_ms + in_progress_ttl_ms``.

        Exactly one of any number of concurrent claimers of a new key gets CLAIMED.
        An existing record whose TTL (``expires_at_ms``) has passed is treated as absent
        (DynamoDB TTL deletes lazily, Powertools checks ``expiration < now``): CLAIMED with
        ``previous`` set. An IN_PROGRESS record past ``in_progress_expires_at_ms`` is
        taken over (TAKEOVER) whatever its payload hash. Otherwise: different payload
        hash -> CONFLICT (checked first, as Powertools validates the payload before the
        status); IN_PROGRESS -> DUPLICATE_IN_PROGRESS; COMPLETED -> DUPLICATE_COMPLETED.

        Raises:
            StoreError: on any SQLite error.
        """
        if in_progress_ttl_ms <= 0:
            raise ValueError(f"in_progress_ttl_ms must be > 0, got {in_progress_ttl_ms}")
        expires = now_ms + in_progress_ttl_ms
        conn = self._conn()
        try:
            while True:
                cur = conn.execute(
                    f"INSERT INTO {self.table} (key, status, payload_hash, owner, claimed_at_ms, "
                    "in_progress_expires_at_ms, expires_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(key) DO NOTHING",
                    (key, IdempotencyStatus.IN_PROGRESS.value, payload_hash, owner, now_ms, expires,
                     now_ms + self.record_ttl_ms),
                )
                if cur.rowcount == 1:
                    return Claim(ClaimState.CLAIMED, self._get(conn, key))  # type: ignore[arg-type]
                existing = self._get(conn, key)
                if existing is None:  # deleted between our INSERT and SELECT: try again
                    continue
                ttl_passed = existing.expires_at_ms <= now_ms
                stale = (
                    existing.status == IdempotencyStatus.IN_PROGRESS.value
                    and existing.in_progress_expires_at_ms <= now_ms
                )
                if ttl_passed or stale:
                    cur = conn.execute(
                        f"UPDATE {self.table} SET status = ?, payload_hash = ?, owner = ?, claimed_at_ms = ?, "
                        "in_progress_expires_at_ms = ?, expires_at_ms = ?, completed_at_ms = NULL, response = NULL, "
                        "attempts = attempts + 1, version = version + 1 WHERE key = ? AND version = ?",
                        (IdempotencyStatus.IN_PROGRESS.value, payload_hash, owner, now_ms, expires,
                         now_ms + self.record_ttl_ms, key, existing.version),
                    )
                    if cur.rowcount != 1:  # someone else changed the row first: re-evaluate
                        continue
                    state = ClaimState.TAKEOVER if stale and not ttl_passed else ClaimState.CLAIMED
                    return Claim(state, self._get(conn, key), previous=existing)  # type: ignore[arg-type]
                if existing.payload_hash != payload_hash:
                    return Claim(ClaimState.CONFLICT, existing)
                if existing.status == IdempotencyStatus.IN_PROGRESS.value:
                    return Claim(ClaimState.DUPLICATE_IN_PROGRESS, existing)
                return Claim(ClaimState.DUPLICATE_COMPLETED, existing)
        except sqlite3.Error as exc:
            raise StoreError(f"claim of {key!r} failed: {exc}") from exc

    def complete(self, key: str, owner: str, response: Any, now_ms: int) -> IdempotencyRecord:
        """Mark ``key`` COMPLETED with ``response`` (JSON-serialisable), only if ``owner`` still holds
        the IN_PROGRESS claim (a fencing check: a claim taken over after expiry must not be
        completed by its former holder). The record TTL restarts at ``now_ms``.

        Raises:
            ClaimLostError: the claim is no longer held by ``owner`` (taken over, deleted or completed).
            StoreError: on any SQLite error.
        """
        conn = self._conn()
        try:
            cur = conn.execute(
                f"UPDATE {self.table} SET status = ?, response = ?, completed_at_ms = ?, expires_at_ms = ?, "
                "version = version + 1 WHERE key = ? AND owner = ? AND status = ?",
                (IdempotencyStatus.COMPLETED.value, json.dumps(response, sort_keys=True), now_ms,
                 now_ms + self.record_ttl_ms, key, owner, IdempotencyStatus.IN_PROGRESS.value),
            )
            if cur.rowcount != 1:
                raise ClaimLostError(key, owner, self._get(conn, key))
            return self._get(conn, key)  # type: ignore[return-value]
        except sqlite3.Error as exc:
            raise StoreError(f"completion of {key!r} failed: {exc}") from exc

    def release(self, key: str, owner: str) -> bool:
        """Delete ``owner``'s IN_PROGRESS claim on ``key`` so the source can retry (Powertools deletes
        the record when the handler raises). Returns False when the claim was not held.

        Raises:
            StoreError: on any SQLite error.
        """
        try:
            cur = self._conn().execute(
                f"DELETE FROM {self.table} WHERE key = ? AND owner = ? AND status = ?",
                (key, owner, IdempotencyStatus.IN_PROGRESS.value),
            )
            return cur.rowcount == 1
        except sqlite3.Error as exc:
            raise StoreError(f"release of {key!r} failed: {exc}") from exc

    def get(self, key: str) -> IdempotencyRecord | None:
        """The record for ``key`` or None. Raises StoreError on SQLite errors."""
        try:
            return self._get(self._conn(), key)
        except sqlite3.Error as exc:
            raise StoreError(f"read of {key!r} failed: {exc}") from exc

    def in_progress(self) -> list[IdempotencyRecord]:
        """Every IN_PROGRESS record, oldest claim first (the store-side view of stuck keys)."""
        try:
            rows = self._conn().execute(
                f"SELECT {_COLUMNS} FROM {self.table} WHERE status = ? ORDER BY claimed_at_ms, key",
                (IdempotencyStatus.IN_PROGRESS.value,),
            ).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"scan of {self.table} failed: {exc}") from exc
        return [_row(r) for r in rows]

    def count(self, status: str | None = None) -> int:
        """Number of records (with ``status`` when given)."""
        sql = f"SELECT count(*) FROM {self.table}" + (" WHERE status = ?" if status else "")
        return int(self._conn().execute(sql, (status,) if status else ()).fetchone()[0])

    def _get(self, conn: sqlite3.Connection, key: str) -> IdempotencyRecord | None:
        row = conn.execute(f"SELECT {_COLUMNS} FROM {self.table} WHERE key = ?", (key,)).fetchone()
        return None if row is None else _row(row)


def _row(r: tuple[Any, ...]) -> IdempotencyRecord:
    return IdempotencyRecord(
        key=r[0], status=r[1], payload_hash=r[2], owner=r[3], claimed_at_ms=r[4], in_progress_expires_at_ms=r[5],
        expires_at_ms=r[6], completed_at_ms=r[7], response=None if r[8] is None else json.loads(r[8]),
        attempts=r[9], version=r[10],
    )
