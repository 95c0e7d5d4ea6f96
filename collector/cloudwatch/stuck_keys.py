"""Stuck keys from the idempotency table: a read-only DynamoDB Scan for records still IN_PROGRESS past their
in-progress expiry (claimed, then the handler died or timed out before completing, so every redelivery is told
"in progress" until the record's TTL removes it).

The scan never writes: it uses only ``dynamodb:Scan`` (parallel segments ``Segment``/``TotalSegments``, pagination
through ``LastEvaluatedKey``, a ``ProjectionExpression`` of the four attributes it reads and a ``FilterExpression``
on the status so only IN_PROGRESS items travel; the filter does not reduce read capacity consumed).

Schema presets:
- ``powertools`` (Powertools for AWS Lambda ``DynamoDBPersistenceLayer`` defaults): key ``id``, status ``status`` =
  ``INPROGRESS``, ``in_progress_expiration`` in epoch **milliseconds**, TTL ``expiration`` in epoch **seconds**.
- ``record`` (the common idempotency-record pattern): ``idempotencyKey``, ``status`` = ``IN_PROGRESS``,
  ``inProgressExpiresAt`` (epoch milliseconds), no TTL attribute.
Any attribute name and unit can be overridden.
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from collector.cloudwatch.constants import DEFAULT_SCAN_SEGMENTS
from collector.parquet import to_arrow, write_parquet
from collector.tables import Table
from idemwatch.aws import translate

STUCK_TABLE = Table(
    "idempotency_table_stuck",
    (("idempotency_key", "VARCHAR"), ("status", "VARCHAR"), ("in_progress_expires_at", "TIMESTAMP"),
     ("record_expires_at", "TIMESTAMP"), ("overdue_s", "DOUBLE"), ("ttl_passed", "BOOLEAN")),
    "Records of the idempotency table still IN_PROGRESS past their in-progress expiry at scan time. overdue_s = scan "
    "time - in_progress_expires_at (seconds); ttl_passed = the record's TTL (expiration) has passed but DynamoDB has "
    "not deleted it yet (TTL deletion is asynchronous).",
)


@dataclass(frozen=True)
class IdempotencySchema:
    """Attribute names and units of an idempotency table. Units: ``ms`` or ``s`` (epoch)."""

    key_attr: str
    status_attr: str
    in_progress_value: str
    in_progress_expiry_attr: str
    in_progress_expiry_unit: str = "ms"
    ttl_attr: str | None = None
    ttl_unit: str = "s"


PRESETS: dict[str, IdempotencySchema] = {
    "powertools": IdempotencySchema("id", "status", "INPROGRESS", "in_progress_expiration", "ms", "expiration", "s"),
    "record": IdempotencySchema("idempotencyKey", "status", "IN_PROGRESS", "inProgressExpiresAt", "ms", None, "s"),
}


def schema_from(preset: str, **overrides: Any) -> IdempotencySchema:
    """A preset with some attributes overridden (None values are ignored). Raises ValueError on an unknown preset."""
    if preset not in PRESETS:
        raise ValueError(f"unknown schema preset {preset!r}: choose one of {', '.join(PRESETS)}")
    return replace(PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None})


@dataclass
class StuckKeysOptions:
    table_name: str
    schema: IdempotencySchema
    segments: int = DEFAULT_SCAN_SEGMENTS
    page_size: int | None = None  # Scan Limit (items evaluated per page); None = up to 1 MB per page


@dataclass
class ScanReport:
    """Counts of a scan: ``scanned`` (items read, ScannedCount), ``in_progress`` (returned by the filter),
    ``stuck``, ``missing_expiry`` / ``bad_expiry`` (IN_PROGRESS items whose expiry attribute is absent or not a
    number: kept as not stuck, counted), ``pages`` and ``segments``."""

    scanned: int = 0
    in_progress: int = 0
    stuck: int = 0
    missing_expiry: int = 0
    bad_expiry: int = 0
    pages: int = 0
    segments: int = 0
    consumed_rcu: float = 0.0


def _num(attr: dict[str, Any] | None) -> float | None:
    if attr is None:
        return None
    if "N" in attr:
        return float(attr["N"])
    if "S" in attr:
        return float(attr["S"])
    raise ValueError(attr)


def _to_ms(v: float, unit: str) -> float:
    return v * 1000.0 if unit == "s" else v


def scan_stuck_keys(client: Any, options: StuckKeysOptions, now_s: float) -> tuple[list[dict[str, str | None]], ScanReport]:
    """Scan ``options.table_name`` and return (rows of STUCK_TABLE as strings, report). ``now_s``: epoch seconds.

    Raises ``idemwatch.aws`` errors (NotFoundError, AccessDeniedError, MissingCredentialsError; one line)."""
    s = options.schema
    names = {"#k": s.key_attr, "#s": s.status_attr, "#e": s.in_progress_expiry_attr}
    if s.ttl_attr:
        names["#t"] = s.ttl_attr
    base: dict[str, Any] = {
        "TableName": options.table_name,
        "ProjectionExpression": ", ".join(names),
        "FilterExpression": "#s = :inprogress",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": {":inprogress": {"S": s.in_progress_value}},
        "ReturnConsumedCapacity": "TOTAL",
    }
    if options.page_size:
        base["Limit"] = options.page_size
    segments = max(1, options.segments)

    def scan_segment(seg: int) -> tuple[list[dict[str, Any]], Counter[str], float]:
        items: list[dict[str, Any]] = []
        counts: Counter[str] = Counter()
        rcu = 0.0
        args = dict(base, Segment=seg, TotalSegments=segments)
        while True:
            try:
                resp = client.scan(**args)
            except Exception as exc:
                raise translate(exc, action="dynamodb:Scan", resource=options.table_name) from exc
            counts["pages"] += 1
            counts["scanned"] += int(resp.get("ScannedCount", 0))
            rcu += float((resp.get("ConsumedCapacity") or {}).get("CapacityUnits", 0.0))
            items.extend(resp.get("Items", []))
            lek = resp.get("LastEvaluatedKey")
            if not lek:
                return items, counts, rcu
            args["ExclusiveStartKey"] = lek

    with ThreadPoolExecutor(max_workers=min(segments, 16), thread_name_prefix="scan") as pool:
        parts = list(pool.map(scan_segment, range(segments)))
    report = ScanReport(segments=segments)
    now_ms = now_s * 1000.0
    rows: list[dict[str, str | None]] = []
    for items, counts, rcu in parts:
        report.scanned += counts["scanned"]
        report.pages += counts["pages"]
        report.consumed_rcu += rcu
        for it in items:
            report.in_progress += 1
            try:
                exp = _num(it.get(s.in_progress_expiry_attr))
            except ValueError:
                report.bad_expiry += 1
                continue
            if exp is None:
                report.missing_expiry += 1
                continue
            exp_ms = _to_ms(exp, s.in_progress_expiry_unit)
            if exp_ms >= now_ms:
                continue  # still within its lock: in flight, not stuck
            report.stuck += 1
            ttl_ms: float | None = None
            if s.ttl_attr:
                try:
                    ttl = _num(it.get(s.ttl_attr))
                    ttl_ms = None if ttl is None else _to_ms(ttl, s.ttl_unit)
                except ValueError:
                    ttl_ms = None
            key = it.get(s.key_attr, {})
            rows.append({
                "idempotency_key": next(iter(key.values()), None) if key else None,
                "status": s.in_progress_value,
                "in_progress_expires_at": str(int(exp_ms)),
                "record_expires_at": None if ttl_ms is None else str(int(ttl_ms)),
                "overdue_s": repr((now_ms - exp_ms) / 1000.0),
                "ttl_passed": None if ttl_ms is None else str(ttl_ms < now_ms).lower(),
            })
    rows.sort(key=lambda r: (r["in_progress_expires_at"] or "", r["idempotency_key"] or ""))
    return rows, report


def collect_stuck_keys(client: Any, out: Path, options: StuckKeysOptions, now_s: float) -> dict[str, Any]:
    """Write ``<out>/tables/idempotency_table_stuck.parquet``; returns the manifest section."""
    rows, report = scan_stuck_keys(client, options, now_s)
    table, conv = to_arrow(rows, STUCK_TABLE)
    write_parquet(table, STUCK_TABLE, out / "tables" / f"{STUCK_TABLE.name}.parquet")
    return {"table": STUCK_TABLE.name, "dynamodb_table": options.table_name, "schema": options.schema.__dict__,
            "scanned_at": int(now_s), **report.__dict__, "conversion": conv.to_json()}
