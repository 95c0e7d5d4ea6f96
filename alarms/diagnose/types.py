"""Types of ``idemwatch diagnose``: the evidence inventory of one function/operation (:class:`Facts`), the rows an
evidence query returns (:class:`Evidence`), a rule's verdict (:class:`Verdict`) and the thresholds
(:class:`DiagnoseOptions`).

Statuses and severities are the audit's (:class:`~alarms.audit.types.FindingStatus`,
:class:`~alarms.audit.types.Severity`), so ``--fail-on``, the JSON summary and SARIF levels mean the same in both
commands. What diagnose reports under each status (:data:`STATUS_LABELS`): ``fail`` = the anti-pattern was
found, ``pass`` = the evidence was there and shows no instance, ``unknown`` = **not observable** (the logs hold too
little evidence to tell; the message says what is missing) - never a pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from alarms.audit.rules import Finding as AuditFinding
from alarms.audit.types import FindingStatus, OutputFormat, ResourceKind, Severity
from collector.insights.log_identifier import LOG_IDENTIFIER_RE

__all__ = ["STATUS_LABELS", "DiagnoseOptions", "Evidence", "Example", "Facts", "Finding", "FindingStatus",
           "OutputFormat", "ResourceKind", "Severity", "Verdict", "split_log"]

_LOG_RE = re.compile(LOG_IDENTIFIER_RE, re.DOTALL)

STATUS_LABELS: Mapping[FindingStatus, str] = {
    FindingStatus.FAIL: "found",
    FindingStatus.PASS: "not found",
    FindingStatus.UNKNOWN: "not observable",
    FindingStatus.SUPPRESSED: "suppressed",
}
"""How diagnose names each status in its table and on the dashboard (the JSON keeps the audit's values)."""


@dataclass(frozen=True)
class DiagnoseOptions:
    """Thresholds of the rules and the size of the report. Times in milliseconds.

    - ``min_redelivery_gap_ms`` (IW106): a redelivery counts as a visibility-timeout expiry only this long after
      the message's first receive. Lambda refuses an SQS event source whose queue visibility timeout is shorter
      than the function timeout, itself at least 1 s (AWS Lambda guide, "Creating and configuring an Amazon SQS
      event source mapping"), so nothing sooner can be one: a sooner copy is SQS's at-least-once delivery.
    - ``min_shard_failures`` (IW108): failed deliveries of one stream record before it counts as blocking its
      shard (a transient failure retried once or twice is normal).
    - ``safe_budget_ms`` (IW109): the remaining time below which a side effect must not start; None = the largest
      ``required_time_ms`` the operation's own ``timeout_budget_abort`` records state, else any side effect
      followed by a timeout counts.
    - ``examples``: proving entities (events, keys, invocations) shown per finding, with their records.
    - ``max_example_records``: records shown per example entity at most.
    - ``key_hash_salt``: idempotency keys in the report are hashed as the emitter's ``hash_idempotency_keys``
      hashes them (``emitter.redact.KeyHasher``: the tenant prefix before ``:`` kept, SHA-256, or HMAC-SHA256 with
      this salt); a key the emitter already hashed is shown as it is.
    """

    min_redelivery_gap_ms: int = 1_000
    min_shard_failures: int = 3
    safe_budget_ms: float | None = None
    examples: int = 3
    max_example_records: int = 20
    key_hash_salt: str | None = None

    def __post_init__(self) -> None:
        if self.min_redelivery_gap_ms < 0:
            raise ValueError(f"min_redelivery_gap_ms must be >= 0, got {self.min_redelivery_gap_ms}")
        if self.min_shard_failures < 2:
            raise ValueError(f"min_shard_failures must be >= 2 (one failure is not a retry), "
                             f"got {self.min_shard_failures}")
        if self.safe_budget_ms is not None and self.safe_budget_ms <= 0:
            raise ValueError(f"safe_budget_ms must be > 0, got {self.safe_budget_ms}")
        if not 0 <= self.examples <= 50:
            raise ValueError(f"examples must be within 0..50, got {self.examples}")
        if not 1 <= self.max_example_records <= 200:
            raise ValueError(f"max_example_records must be within 1..200, got {self.max_example_records}")

    def query_params(self) -> dict[str, int]:
        """The values the evidence queries' ``{name}`` placeholders take (integers only)."""
        return {"min_redelivery_gap_ms": int(self.min_redelivery_gap_ms),
                "min_shard_failures": int(self.min_shard_failures)}


@dataclass(frozen=True)
class Facts:
    """The evidence inventory of one function/operation over the window (from the inventory queries).

    ``outcomes``: outcome -> records; ``keyed``: outcome -> records carrying an idempotency key;
    ``timed_side_effects``: ``side_effect_started`` records with ``remaining_time_ms``; ``redeliveries``:
    ``received`` records with ``attempt`` > 1; ``required_time_ms``: the largest budget ``timeout_budget_abort``
    records state (None: none did); ``streams``/``reports``/``timeouts``/``cold_starts``: of the whole log group
    (distinct ``@logStream``, ``REPORT`` lines, those with ``Status: timeout``, those with an ``Init Duration``).
    ``log``: the ``@log`` value, ``account-id:log-group-name`` (as CloudWatch and the offline engine give it)."""

    log: str
    operation: str
    outcomes: Mapping[str, int] = field(default_factory=dict)
    keyed: Mapping[str, int] = field(default_factory=dict)
    event_sources: frozenset[str] = frozenset()
    timed_side_effects: int = 0
    redeliveries: int = 0
    required_time_ms: float | None = None
    streams: int = 0
    reports: int = 0
    timeouts: int = 0
    cold_starts: int = 0

    def count(self, *outcomes: str) -> int:
        """Records of these outcomes."""
        return sum(self.outcomes.get(o, 0) for o in outcomes)

    def keyed_count(self, *outcomes: str) -> int:
        """Records of these outcomes that carry an idempotency key."""
        return sum(self.keyed.get(o, 0) for o in outcomes)

    @property
    def log_group(self) -> str:
        """The log group name (``@log`` without its account)."""
        return split_log(self.log)[1]

    @property
    def account_id(self) -> str | None:
        """The 12-digit account of ``@log`` (None when it carries none)."""
        return split_log(self.log)[0]

    @property
    def function(self) -> str:
        """The function name: ``orders`` for the log group ``/aws/lambda/orders``, else the log group name."""
        group = self.log_group
        prefix = "/aws/lambda/"
        return group[len(prefix):] if group.startswith(prefix) and len(group) > len(prefix) else group


def split_log(log: str) -> tuple[str | None, str]:
    """``"123456789012:/aws/lambda/fn"`` -> ``("123456789012", "/aws/lambda/fn")``; a value without the account
    prefix -> ``(None, value)`` (``collector.insights.log_identifier.LOG_IDENTIFIER_RE``)."""
    m = _LOG_RE.match(log)
    return (m.group(1), m.group(2)) if m else (None, log)


@dataclass(frozen=True)
class Evidence:
    """The rows one evidence query returned (each a dict of the query's columns, values as the source gave them:
    numbers or numeric text), and whether the source cut them short (CloudWatch's row limit)."""

    rows: tuple[Mapping[str, Any], ...]
    truncated: bool = False


@dataclass(frozen=True)
class Verdict:
    """A rule's judgement on one function/operation: ``status``, a one-line ``message``, and the violating rows
    (the proof; empty unless ``status`` is FAIL), oldest first."""

    status: FindingStatus
    message: str
    violations: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class Example:
    """One proving entity of a finding (an event id, a hashed key, a request id) and its log records, oldest
    first: each record a dict of ``time`` (ISO-8601 UTC), ``log_stream``, ``outcome`` (``REPORT`` for a Lambda
    REPORT line, with ``timed_out``), ``event_id``, ``idempotency_key`` (hashed as the emitter hashes it),
    ``function_request_id``, ``attempt``, ``remaining_time_ms``, ``idempotency_status``, ``error_code``,
    ``record_age_ms`` (the keys a record has)."""

    entity: str
    records: tuple[Mapping[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"entity": self.entity, "records": [dict(r) for r in self.records]}


@dataclass(frozen=True)
class Finding(AuditFinding):
    """One rule's verdict on one function/operation: an audit finding (``rule``, ``severity``, ``kind``,
    ``resource`` = ``"<function> (<operation>)"``, ``status``, ``message``; no ``location``, so a SARIF result gets a
    logical one), so the audit's report and SARIF writers take it as it is. Then the evidence: ``count`` violating
    entities (events, keys or invocations; at least that many when ``truncated``: CloudWatch's row limit cut the
    rows), ``first`` and ``last`` occurrence (ISO-8601 UTC), up to ``DiagnoseOptions.examples`` :class:`Example` s.
    """

    log_group: str = ""
    account_id: str | None = None
    function: str = ""
    operation: str = ""
    count: int = 0
    first: str | None = None
    last: str | None = None
    truncated: bool = False
    examples: tuple[Example, ...] = ()

    @property
    def label(self) -> str:
        """The status as diagnose names it (:data:`STATUS_LABELS`: found, not found, not observable)."""
        return STATUS_LABELS[self.status]

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update(label=self.label, log_group=self.log_group, account_id=self.account_id, function=self.function,
                 operation=self.operation, count=self.count, first=self.first, last=self.last,
                 truncated=self.truncated, examples=[e.to_dict() for e in self.examples])
        return d
