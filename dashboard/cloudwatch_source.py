"""CloudWatch as the dashboard's live data source: configuration, one incremental collection, staleness.

``idemwatch dashboard --cloudwatch-log-group ...`` builds a :class:`CloudWatchSource`, collects once, and hands the
source to the Streamlit app as JSON in ``$IDEMWATCH_CLOUDWATCH_SOURCE`` (log groups, time range, Region, profile
name, endpoint URL, refresh interval: never credentials; the app process finds credentials through the standard
boto3 chain like the CLI does). The app then collects again on demand ("Collect now") or when the data is older than
``refresh_every_s``. Every collection is ``collector.cloudwatch.collect_cloudwatch`` into the same data directory:
incremental (settled windows are never queried twice), so a refresh costs only the new windows' Logs Insights scan.

No Streamlit here (see ``dashboard.cloudwatch_panel``): this module is used by the CLI and the app alike.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = [
    "ENV_CLOUDWATCH_SOURCE",
    "CloudWatchSource",
    "CollectionBusyError",
    "SourceStatus",
    "collect_now",
    "configured_source",
    "data_age_s",
    "last_collected_at",
    "last_failure",
    "refresh_due",
    "source_status",
]

ENV_CLOUDWATCH_SOURCE = "IDEMWATCH_CLOUDWATCH_SOURCE"
"""Environment variable carrying the source (``CloudWatchSource.to_json()``) to the Streamlit app. Unset = the
dashboard only reads the data directory, exactly as without CloudWatch."""


class CollectionBusyError(RuntimeError):
    """Another session of this dashboard process is already collecting into the same data directory."""


@dataclass(frozen=True)
class CloudWatchSource:
    """Where and what the dashboard collects from CloudWatch Logs Insights.

    log_groups / log_group_prefixes: names and name prefixes (at least one of the two; prefixes are expanded with
        DescribeLogGroups on every collection, so new functions appear).
    since: start of the collected range, re-evaluated at each collection: a duration ago (``24h``), ISO-8601 or
        epoch seconds (``collector.cloudwatch.commands.parse_time_s``); the end is always "now".
    region / profile / endpoint_url: the boto3 target (``idemwatch.aws.AwsTarget``); credentials come
        from the standard chain of the process, never from this object.
    refresh_every_s: collect again on the next page run when the data is older than this many seconds (None = only
        on "Collect now").
    """

    log_groups: tuple[str, ...] = ()
    log_group_prefixes: tuple[str, ...] = ()
    since: str = "24h"
    region: str | None = None
    profile: str | None = None
    endpoint_url: str | None = None
    refresh_every_s: int | None = None

    def __post_init__(self) -> None:
        if not self.log_groups and not self.log_group_prefixes:
            raise ValueError("a CloudWatch source needs a log group name or prefix")
        if self.refresh_every_s is not None and self.refresh_every_s <= 0:
            raise ValueError("refresh_every_s must be a positive number of seconds")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CloudWatchSource:
        """Inverse of :meth:`to_json`. Raises ValueError for malformed text or missing log groups."""
        d = json.loads(text)
        if not isinstance(d, dict):
            raise ValueError("not a JSON object")  # noqa: TRY004 - one error type for every malformed config
        known = {"log_groups", "log_group_prefixes", "since", "region", "profile", "endpoint_url", "refresh_every_s"}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)}")
        return cls(log_groups=tuple(d.get("log_groups") or ()), log_group_prefixes=tuple(d.get("log_group_prefixes") or ()),
                   since=str(d.get("since") or "24h"), region=d.get("region"), profile=d.get("profile"),
                   endpoint_url=d.get("endpoint_url"), refresh_every_s=d.get("refresh_every_s"))

    def describe(self) -> list[str]:
        """The configured log groups, then prefixes as ``<prefix>*``."""
        return [*self.log_groups, *(f"{p}*" for p in self.log_group_prefixes)]


def configured_source(environ: Mapping[str, str] | None = None) -> CloudWatchSource | None:
    """The source from ``$IDEMWATCH_CLOUDWATCH_SOURCE``, or None when unset/empty. Raises ValueError when set but
    malformed (the app shows it instead of silently running without the source)."""
    text = (os.environ if environ is None else environ).get(ENV_CLOUDWATCH_SOURCE, "").strip()
    if not text:
        return None
    try:
        return CloudWatchSource.from_json(text)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"${ENV_CLOUDWATCH_SOURCE} is malformed: {exc}") from None


# ---------------------------------------------------------------------------- collection
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()
_failures: dict[str, tuple[float, str]] = {}
"""Per data dir: (epoch s, one-line error) of the last failed collection of this process (cleared on success)."""


def _lock_for(data_dir: Path) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(str(data_dir.resolve()), threading.Lock())


def collect_now(source: CloudWatchSource, data_dir: Path, *, now: float | None = None) -> dict[str, Any]:
    """One incremental collection of ``source`` into ``data_dir``; returns the new manifest.

    The range is ``source.since`` .. now (epoch s, inclusive), the standard queries with the collector's default
    runner settings (concurrency 5, jittered backoff, StopQuery at the deadline). ``now``: epoch s (default: clock).
    Raises ``collector.cloudwatch.CloudWatchCollectorError`` (one-line message: missing credentials, access denied,
    unknown log group, throttled account, unreachable endpoint) and :class:`CollectionBusyError` when another
    session is collecting into ``data_dir`` right now (the second request is not queued: its data would be the same).
    """
    import click

    from collector.cloudwatch import CloudWatchCollectorError, CollectOptions, collect_cloudwatch
    from collector.cloudwatch.commands import parse_time_s
    from idemwatch.aws import AwsError, AwsTarget

    key = str(data_dir.resolve())
    lock = _lock_for(data_dir)
    if not lock.acquire(blocking=False):
        raise CollectionBusyError("a CloudWatch collection into this data directory is already running")
    try:
        t = time.time() if now is None else now
        try:
            since = parse_time_s(source.since, t)
        except click.BadParameter as exc:  # keep the message, drop click
            raise CloudWatchCollectorError(f"--since: {exc.message}") from None
        opts = CollectOptions(since=since, log_groups=source.log_groups, log_group_prefixes=source.log_group_prefixes)
        target = AwsTarget(profile=source.profile, region=source.region, endpoint_url=source.endpoint_url)
        try:
            manifest = collect_cloudwatch(data_dir, opts, target)
        except CloudWatchCollectorError as exc:
            _failures[key] = (time.time(), _one_line(str(exc)))
            raise
        except AwsError as exc:  # the page shows one error type
            _failures[key] = (time.time(), _one_line(str(exc)))
            raise CloudWatchCollectorError(str(exc)) from exc
        except Exception as exc:  # botocore transport errors not translated by the collector: still one line
            msg = _one_line(f"CloudWatch collection failed: {type(exc).__name__}: {exc}")
            _failures[key] = (time.time(), msg)
            raise CloudWatchCollectorError(msg) from exc
        _failures.pop(key, None)
        return manifest
    finally:
        lock.release()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def last_failure(data_dir: Path) -> tuple[float, str] | None:
    """(epoch s, message) of this process's last failed collection into ``data_dir`` since its last success."""
    return _failures.get(str(data_dir.resolve()))


def last_collected_at(manifest: Mapping[str, Any] | None) -> datetime | None:
    """``collected_at`` of a CloudWatch manifest (aware UTC datetime), None for another source or none."""
    if not manifest or manifest.get("source") != "cloudwatch":
        return None
    raw = manifest.get("collected_at")
    try:
        return datetime.fromisoformat(str(raw)) if raw else None
    except ValueError:
        return None


def data_age_s(manifest: Mapping[str, Any] | None, now: float | None = None) -> float | None:
    """Seconds since the last CloudWatch collection (None: never collected from CloudWatch)."""
    at = last_collected_at(manifest)
    return None if at is None else (time.time() if now is None else now) - at.timestamp()


def refresh_due(source: CloudWatchSource, manifest: Mapping[str, Any] | None, data_dir: Path,
                now: float | None = None) -> bool:
    """True when ``source.refresh_every_s`` is set and the data (or, after a failure, the last attempt) is older
    than that. A failed attempt waits a full interval before the next automatic try, so an unreachable endpoint
    does not stall every page run."""
    if source.refresh_every_s is None:
        return False
    t = time.time() if now is None else now
    age = data_age_s(manifest, t)
    failed = last_failure(data_dir)
    if failed is not None:
        since_failure = t - failed[0]
        age = since_failure if age is None else min(age, since_failure)
    return age is None or age >= source.refresh_every_s


@dataclass(frozen=True)
class SourceStatus:
    """What the sidebar shows about the source, read from the manifest.

    log_groups: the log groups the last collection queried (the configured names/prefixes before the first one).
    collected_at: last successful collection (UTC) or None. cost_usd / bytes_scanned / runs: Logs Insights cost and
    bytes scanned over the runs the manifest keeps (``queries.all_runs``; the collector keeps the last 50 runs).
    incomplete: tables whose status is ``truncated`` or ``failed``.
    """

    log_groups: Sequence[str]
    collected_at: datetime | None
    cost_usd: float
    bytes_scanned: int
    runs: int
    region: str | None
    incomplete: Sequence[str] = ()


def source_status(source: CloudWatchSource, manifest: Mapping[str, Any] | None) -> SourceStatus:
    """Summarize ``manifest`` (tolerant of a manifest from another collector: then nothing collected yet)."""
    m = manifest if manifest and manifest.get("source") == "cloudwatch" else {}
    q = m.get("queries") or {}
    all_runs = q.get("all_runs") or {}
    tables = m.get("tables") or {}
    return SourceStatus(
        log_groups=list(m.get("log_groups") or source.describe()),
        collected_at=last_collected_at(m),
        cost_usd=float(all_runs.get("cost_usd") or 0.0),
        bytes_scanned=int((all_runs.get("stats") or {}).get("bytes_scanned") or 0),
        runs=len(m.get("runs") or []),
        region=m.get("region") or source.region,
        incomplete=sorted(n for n, e in tables.items() if isinstance(e, Mapping)
                          and e.get("status") in ("truncated", "failed")),
    )
