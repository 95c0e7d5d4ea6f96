"""SqliteIdempotencyStore: the conditional-write semantics, with values worked out by hand."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from dashboard.demo.exceptions import ClaimLostError, StoreError
from dashboard.demo.store import ClaimState, SqliteIdempotencyStore

T0 = 1_767_607_200_000  # 2026-01-05T10:00:00.000Z, epoch ms


@pytest.fixture()
def store(tmp_path: Path):
    with SqliteIdempotencyStore(tmp_path / "idem.sqlite3", record_ttl_ms=3_600_000) as s:
        yield s


def test_first_claim_writes_in_progress_with_expiry(store: SqliteIdempotencyStore) -> None:
    c = store.claim("k1", "h1", "req-a", now_ms=T0, in_progress_ttl_ms=30_000)
    assert c.state is ClaimState.CLAIMED
    assert c.previous is None
    r = c.record
    assert (r.status, r.owner, r.payload_hash) == ("IN_PROGRESS", "req-a", "h1")
    assert r.claimed_at_ms == T0
    assert r.in_progress_expires_at_ms == T0 + 30_000
    assert r.expires_at_ms == T0 + 3_600_000
    assert r.attempts == 1 and r.response is None


def test_duplicate_in_progress_then_completed_returns_stored_response(store: SqliteIdempotencyStore) -> None:
    store.claim("k1", "h1", "req-a", T0, 30_000)
    c = store.claim("k1", "h1", "req-b", T0 + 29_999, 30_000)  # 1 ms before the claim expires
    assert c.state is ClaimState.DUPLICATE_IN_PROGRESS
    assert c.record.owner == "req-a"
    done = store.complete("k1", "req-a", {"statusCode": 201, "body": {"id": "case-1"}}, now_ms=T0 + 500)
    assert done.status == "COMPLETED" and done.completed_at_ms == T0 + 500
    assert done.expires_at_ms == T0 + 500 + 3_600_000  # TTL restarts at completion
    c = store.claim("k1", "h1", "req-c", T0 + 60_000, 30_000)
    assert c.state is ClaimState.DUPLICATE_COMPLETED
    assert c.record.response == {"statusCode": 201, "body": {"id": "case-1"}}


def test_same_key_different_payload_is_conflict_in_either_state(store: SqliteIdempotencyStore) -> None:
    store.claim("k1", "h1", "req-a", T0, 30_000)
    assert store.claim("k1", "h2", "req-b", T0 + 1, 30_000).state is ClaimState.CONFLICT
    store.complete("k1", "req-a", "ok", T0 + 2)
    c = store.claim("k1", "h2", "req-c", T0 + 3, 30_000)
    assert c.state is ClaimState.CONFLICT
    assert c.record.payload_hash == "h1"  # the stored record is untouched
    assert store.get("k1").version == 2  # insert (1) + completion (2); conflicts write nothing


def test_expired_in_progress_is_taken_over_and_former_owner_cannot_complete(store: SqliteIdempotencyStore) -> None:
    store.claim("k1", "h1", "req-a", T0, 30_000)
    # expiry is inclusive: at exactly claimed + ttl the claim is stale (DynamoDB condition "< :now" on the stored ms)
    c = store.claim("k1", "h1", "req-b", T0 + 30_000, 30_000)
    assert c.state is ClaimState.TAKEOVER
    assert c.previous is not None and c.previous.owner == "req-a"
    assert (c.record.owner, c.record.attempts, c.record.claimed_at_ms) == ("req-b", 2, T0 + 30_000)
    assert c.record.in_progress_expires_at_ms == T0 + 60_000
    with pytest.raises(ClaimLostError) as info:
        store.complete("k1", "req-a", "late", T0 + 31_000)  # the crashed/slow former owner
    assert info.value.current.owner == "req-b"
    assert store.complete("k1", "req-b", "ok", T0 + 31_000).response == "ok"


def test_stale_claim_with_other_payload_is_taken_over_not_conflict(store: SqliteIdempotencyStore) -> None:
    store.claim("k1", "h1", "req-a", T0, 1_000)
    c = store.claim("k1", "h2", "req-b", T0 + 1_000, 1_000)
    assert c.state is ClaimState.TAKEOVER and c.record.payload_hash == "h2"


def test_completed_record_past_ttl_is_claimed_afresh(store: SqliteIdempotencyStore) -> None:
    store.claim("k1", "h1", "req-a", T0, 1_000)
    store.complete("k1", "req-a", "ok", T0 + 10)
    c = store.claim("k1", "h9", "req-b", T0 + 10 + 3_600_000, 1_000)  # TTL passed: record is as good as absent
    assert c.state is ClaimState.CLAIMED
    assert c.previous is not None and c.previous.status == "COMPLETED"
    assert c.record.attempts == 2


def test_release_deletes_only_own_in_progress_claim(store: SqliteIdempotencyStore) -> None:
    store.claim("k1", "h1", "req-a", T0, 30_000)
    assert store.release("k1", "req-b") is False
    assert store.release("k1", "req-a") is True
    assert store.get("k1") is None
    assert store.claim("k1", "h1", "req-c", T0 + 1, 30_000).state is ClaimState.CLAIMED
    store.complete("k1", "req-c", "ok", T0 + 2)
    assert store.release("k1", "req-c") is False  # a COMPLETED record is never released


def test_in_progress_lists_unfinished_claims_oldest_first(store: SqliteIdempotencyStore) -> None:
    store.claim("b", "h", "r1", T0 + 5, 10)
    store.claim("a", "h", "r2", T0 + 1, 10)
    store.claim("c", "h", "r3", T0 + 3, 10)
    store.complete("c", "r3", None, T0 + 4)
    assert [r.key for r in store.in_progress()] == ["a", "b"]
    assert store.count() == 3 and store.count("COMPLETED") == 1


def test_concurrent_claims_of_one_key_have_exactly_one_winner(tmp_path: Path) -> None:
    """16 threads, each with its own connection, released together on a barrier; repeated on 25 keys."""
    store = SqliteIdempotencyStore(tmp_path / "race.sqlite3")
    threads_n, keys = 16, 25
    results: dict[str, list[ClaimState]] = {f"key-{i}": [] for i in range(keys)}
    lock = threading.Lock()
    barrier = threading.Barrier(threads_n)

    def worker(n: int) -> None:
        for i in range(keys):
            barrier.wait()
            state = store.claim(f"key-{i}", "same-hash", f"req-{n}", T0, 30_000).state
            with lock:
                results[f"key-{i}"].append(state)

    ts = [threading.Thread(target=worker, args=(n,)) for n in range(threads_n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for key, states in results.items():
        assert states.count(ClaimState.CLAIMED) == 1, key
        assert states.count(ClaimState.DUPLICATE_IN_PROGRESS) == threads_n - 1, key
    # and the row's owner is the one winner
    assert all(store.get(k).attempts == 1 for k in results)
    store.close()


def test_concurrent_takeovers_of_one_stale_claim_have_exactly_one_winner(tmp_path: Path) -> None:
    store = SqliteIdempotencyStore(tmp_path / "race2.sqlite3")
    for i in range(20):
        store.claim(f"k{i}", "h", "crashed", T0, 1_000)
    threads_n = 8
    barrier = threading.Barrier(threads_n)
    states: list[ClaimState] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        for i in range(20):
            barrier.wait()
            s = store.claim(f"k{i}", "h", f"w{n}", T0 + 5_000, 30_000).state
            with lock:
                states.append(s)

    ts = [threading.Thread(target=worker, args=(n,)) for n in range(threads_n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert states.count(ClaimState.TAKEOVER) == 20
    assert states.count(ClaimState.DUPLICATE_IN_PROGRESS) == 20 * (threads_n - 1)
    assert all(store.get(f"k{i}").attempts == 2 for i in range(20))
    store.close()


def test_bad_configuration_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="file path"):
        SqliteIdempotencyStore(":memory:")
    with pytest.raises(StoreError, match="invalid table name"):
        SqliteIdempotencyStore(tmp_path / "x.db", table="idem; DROP TABLE x")
    s = SqliteIdempotencyStore(tmp_path / "y.db")
    with pytest.raises(ValueError):
        s.claim("k", "h", "o", T0, 0)
    # a table from another tool with the same name but other columns: a StoreError, not a bare sqlite3 error
    conn = sqlite3.connect(tmp_path / "z.db")
    conn.execute("CREATE TABLE idempotency (id TEXT)")
    conn.commit()
    conn.close()
    z = SqliteIdempotencyStore(tmp_path / "z.db")
    with pytest.raises(StoreError, match="claim of 'k' failed"):
        z.claim("k", "h", "o", T0, 10)
    s.close()
    z.close()
