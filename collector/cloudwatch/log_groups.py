"""Log group discovery: explicit names are checked, prefixes are expanded with DescribeLogGroups (paginated)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from idemwatch.aws import NotFoundError, translate


def discover_log_groups(client: Any, names: Sequence[str] = (), prefixes: Sequence[str] = ()) -> list[str]:
    """Resolve ``names`` and ``prefixes`` to existing log group names (sorted, without duplicates).

    Uses ``DescribeLogGroups`` (``logGroupNamePrefix``, followed through ``nextToken``; IAM action
    logs:DescribeLogGroups). Raises ``idemwatch.aws.NotFoundError`` naming a log group that does not exist or a prefix that
    matches none; other AWS errors are translated (``idemwatch.aws.translate``).
    """
    return list(describe_log_groups(client, names, prefixes))


def describe_log_groups(client: Any, names: Sequence[str] = (), prefixes: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """Like ``discover_log_groups``, with each group's DescribeLogGroups entry (``storedBytes``, ``creationTime``
    epoch ms, ``retentionInDays`` when set, ...), sorted by name."""
    if not names and not prefixes:
        raise NotFoundError("no log group given: pass --log-group NAME or --log-group-prefix PREFIX")
    found: dict[str, dict[str, Any]] = {}
    for prefix in prefixes:
        matched = _describe(client, prefix)
        if not matched:
            raise NotFoundError(f"no log group matches prefix {prefix!r}")
        found.update(matched)
    for name in names:
        matched = _describe(client, name)
        if name not in matched:
            raise NotFoundError(f"log group not found: {name}")
        found[name] = matched[name]
    return dict(sorted(found.items()))


def _describe(client: Any, prefix: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    try:
        for page in client.get_paginator("describe_log_groups").paginate(logGroupNamePrefix=prefix):
            out.update((g["logGroupName"], g) for g in page.get("logGroups", []))
    except Exception as exc:
        raise translate(exc, action="logs:DescribeLogGroups", resource=prefix) from exc
    return out
