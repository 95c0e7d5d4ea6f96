"""The field index policy for the emitter's contract fields, and which log groups and windows it covers.

A field index lets a Logs Insights query skip the events that lack an indexed field or value
(CloudWatchLogs-Field-Indexing.html). idemwatch proposes one log-group-level policy (PutIndexPolicy) for
``INDEX_FIELDS``: ``schema_version`` (the contract's mark on every emitter record: the collector's scans select on it
with ``filterIndex``), ``outcome`` and ``idempotency_key`` (equality filters on them, e.g. a key's trail in the
console, read only the matching events).

Cost (docs/cloudwatch.md, "Field index policy"): the AWS pages on field indexes and PutIndexPolicy name no charge for
creating or keeping an index; the policy changes what queries scan, which is billed (USD 0.005 per GB in us-east-1).
What it does not do: "CloudWatch Logs indexes only the log events ingested after an index policy is created ...
each matching log event remains indexed for 30 days from the log event's ingestion time" (same page), and a
log-group-level policy replaces the account-level ones for that log group ("If you use PutIndexPolicy to create a
field index policy for a log group, that log group uses only that policy": PutIndexPolicy API reference), so
``plan`` keeps every field the group already indexes.

Coverage (``covers``): a window of a log group may be read with ``filterIndex`` only when every event in it was
ingested while the policy listed the field and less than 30 days ago. The policy's ``lastUpdateTime`` bounds when
indexing started; an event can carry a timestamp up to 2 hours after its ingestion ("None of the log events in the
batch can be more than 2 hours in the future": PutLogEvents API reference), so a window is covered when it starts at
least 2 hours after ``lastUpdateTime`` and less than 30 days minus 2 hours ago. Anything else is scanned without the
index (and reads the same rows).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from collector.cloudwatch.adaptive import AdaptiveRate
from collector.cloudwatch.constants import DESCRIBE_INDEX_POLICIES_PER_S
from collector.cloudwatch.windows import Window
from emitter.contract import LogKey
from idemwatch.aws import AccessDeniedError, error_code, is_throttling, translate

INDEX_FIELDS: tuple[str, ...] = tuple(k.value for k in (
    LogKey.SCHEMA_VERSION, LogKey.OUTCOME, LogKey.IDEMPOTENCY_KEY))
"""The contract's fields the proposed policy indexes (emitter.contract.LogKey)."""

MAX_FIELDS_PER_POLICY = 20
"""'As many as 20 fields can be included in the policy' (CloudWatchLogs-Field-Indexing-Syntax.html)."""

FUTURE_SKEW_S = 2 * 3600
"""PutLogEvents rejects events more than 2 hours in the future: an event's timestamp exceeds its ingestion time by
at most this."""

INDEX_LIFETIME_S = 30 * 86400
"""An indexed event stays indexed for 30 days from its ingestion time (CloudWatchLogs-Field-Indexing.html)."""


def policy_document(fields: Sequence[str] = INDEX_FIELDS) -> str:
    """The ``policyDocument`` of PutIndexPolicy: ``{"Fields": [...]}`` (JSON text). Raises ValueError past the
    policy's 20 fields."""
    fields = list(dict.fromkeys(fields))
    if not 1 <= len(fields) <= MAX_FIELDS_PER_POLICY:
        raise ValueError(f"an index policy holds 1 to {MAX_FIELDS_PER_POLICY} fields, not {len(fields)}")
    return json.dumps({"Fields": fields})


@dataclass(frozen=True)
class GroupIndex:
    """The index policy in force for one log group: its ``fields`` and ``since_s`` (lastUpdateTime, epoch s);
    ``source`` LOG_GROUP or ACCOUNT."""

    fields: tuple[str, ...]
    since_s: float
    source: str = "LOG_GROUP"


@dataclass
class IndexCoverage:
    """Index policies of the collected log groups (``groups``: name -> GroupIndex; absent = no policy) and what
    reading them said (``notes``: one line each, e.g. access denied)."""

    groups: dict[str, GroupIndex] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    calls: int = 0  # DescribeIndexPolicies calls made

    def covers(self, group: str, name: str, window: Window, now_s: float) -> bool:
        """True when every event of ``group`` in ``window`` is indexed on field ``name`` (module docstring)."""
        g = self.groups.get(group)
        if g is None or name not in g.fields:
            return False
        return window.start >= g.since_s + FUTURE_SKEW_S and window.start > now_s - INDEX_LIFETIME_S + FUTURE_SKEW_S

    def to_json(self) -> dict[str, Any]:
        return {"groups_with_policy": len(self.groups), "describe_calls": self.calls,
                "groups_indexing": {f: sum(1 for g in self.groups.values() if f in g.fields) for f in INDEX_FIELDS},
                "notes": self.notes}


def read_coverage(client: Any, log_groups: Sequence[str], *, rate: AdaptiveRate | None = None,
                  sleep: Callable[[float], None] | None = None) -> IndexCoverage:
    """DescribeIndexPolicies for each log group (one per call, botocore's model allows one), at most
    ``DESCRIBE_INDEX_POLICIES_PER_S`` calls per second. A group without a policy is left out. Access denied (the
    role lacks logs:DescribeIndexPolicies) is a note, not an error: the collection then scans without indexes.
    Raises ``idemwatch.aws`` errors for anything else."""
    import time

    rate = rate or AdaptiveRate(DESCRIBE_INDEX_POLICIES_PER_S, sleep=sleep or time.sleep)
    out = IndexCoverage()
    for g in log_groups:
        attempt = 0
        while True:
            rate.acquire()
            out.calls += 1
            try:
                resp = client.describe_index_policies(logGroupIdentifiers=[g])
                break
            except Exception as exc:
                if is_throttling(exc) and attempt < 5:
                    rate.throttled()
                    attempt += 1
                    continue
                err = translate(exc, action="logs:DescribeIndexPolicies", resource=g)
                if isinstance(err, AccessDeniedError) or error_code(exc) == "AccessDeniedException":
                    out.notes.append(f"field indexes not read ({err}); scanning without them")
                    return IndexCoverage(notes=out.notes, calls=out.calls)
                raise err from exc
        for pol in resp.get("indexPolicies") or []:
            try:
                fields = tuple(json.loads(pol.get("policyDocument") or "{}").get("Fields") or ())
            except (ValueError, AttributeError):
                out.notes.append(f"{g}: index policy document is not JSON; not used")
                continue
            out.groups[g] = GroupIndex(fields, float(pol.get("lastUpdateTime", 0)) / 1000.0,
                                       str(pol.get("source", "LOG_GROUP")))
    return out


# ---------------------------------------------------------------------------- creating the policy
@dataclass(frozen=True)
class PolicyChange:
    """What ``apply`` does to one log group: ``action`` create | update | unchanged, and the policy's ``fields``
    after it (the group's current fields first, ours added)."""

    log_group: str
    action: str
    fields: tuple[str, ...]
    replaces_account_policy: bool = False

    def line(self) -> str:
        extra = " (keeps the account-level policy's fields, which this policy replaces)" \
            if self.replaces_account_policy else ""
        return f"{self.action:9} index policy {self.log_group}: {', '.join(self.fields)}{extra}"


def plan(client: Any, log_groups: Sequence[str], fields: Sequence[str] = INDEX_FIELDS) -> list[PolicyChange]:
    """For each log group: the policy that indexes ``fields`` and keeps every field it indexes now (a log-group
    policy replaces the account-level ones for that group, so their fields are carried over). Raises ValueError when
    the union passes 20 fields, ``idemwatch.aws`` errors for AWS failures."""
    cov = read_coverage(client, log_groups)
    if cov.notes and not cov.groups:
        raise AccessDeniedError(cov.notes[0])
    out = []
    for g in log_groups:
        cur = cov.groups.get(g)
        have = cur.fields if cur else ()
        want = tuple(dict.fromkeys([*have, *fields]))
        policy_document(want)  # raises past 20 fields
        if cur is None:
            out.append(PolicyChange(g, "create", want))
        elif want == have and cur.source == "LOG_GROUP":
            out.append(PolicyChange(g, "unchanged", want))
        else:
            out.append(PolicyChange(g, "update", want, replaces_account_policy=cur.source == "ACCOUNT"))
    return out


def apply(client: Any, changes: Sequence[PolicyChange]) -> int:
    """PutIndexPolicy for every change that is not ``unchanged``; returns how many were put."""
    n = 0
    for c in changes:
        if c.action == "unchanged":
            continue
        try:
            client.put_index_policy(logGroupIdentifier=c.log_group, policyDocument=policy_document(c.fields))
        except Exception as exc:
            raise translate(exc, action="logs:PutIndexPolicy", resource=c.log_group) from exc
        n += 1
    return n


def render(log_groups: Sequence[str], stack: str, fields: Sequence[str] = INDEX_FIELDS) -> dict[str, str]:
    """Export files (relative path -> text) creating the policy on ``log_groups``:
    ``index-policy/cli/<group>.json`` (``aws logs put-index-policy --cli-input-json file://...``) and
    ``index-policy/terraform/<stack>-index-policy.tf.json`` (``aws_cloudwatch_log_index_policy`` resources).
    These put exactly ``fields``: a log group that already has a log-group policy or relies on an account-level one
    should merge its fields in first (``idemwatch alarms deploy --index-policy`` does that itself). Raises
    ValueError when two log group names map to one file or resource name."""
    doc = policy_document(fields)
    files: dict[str, str] = {}
    resources: dict[str, Any] = {}
    for g in sorted(set(log_groups)):
        path, name = f"index-policy/cli/{_safe(g)}.json", _tf_name(g)
        if path in files or name in resources:
            raise ValueError(f"two log groups map to the same export name as {g}")
        files[path] = _dump({"logGroupIdentifier": g, "policyDocument": doc})
        resources[name] = {"log_group_name": g, "policy_document": doc}
    files[f"index-policy/terraform/{_safe(stack)}-index-policy.tf.json"] = _dump({
        "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": ">= 5.80"}}},
        "resource": {"aws_cloudwatch_log_index_policy": resources}})
    return files


def _dump(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2) + "\n"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "log-group"


def _tf_name(group: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_]+", "_", group).strip("_").lower()
    return f"idemwatch_{s}" if s else "idemwatch_log_group"
