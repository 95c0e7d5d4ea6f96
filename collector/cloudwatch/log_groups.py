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
    if not names and not prefixes:
        raise NotFoundError("no log group given: pass --log-group NAME or --log-group-prefix PREFIX")
    found: set[str] = set()
    for prefix in prefixes:
        matched = _describe(client, prefix)
        if not matched:
            raise NotFoundError(f"no log group matches prefix {prefix!r}")
        found.update(matched)
    for name in names:
        if name not in _describe(client, name):
            raise NotFoundError(f"log group not found: {name}")
        found.add(name)
    return sorted(found)


def _describe(client: Any, prefix: str) -> list[str]:
    out: list[str] = []
    try:
        for page in client.get_paginator("describe_log_groups").paginate(logGroupNamePrefix=prefix):
            out.extend(g["logGroupName"] for g in page.get("logGroups", []))
    except Exception as exc:
        raise translate(exc, action="logs:DescribeLogGroups", resource=prefix) from exc
    return out
