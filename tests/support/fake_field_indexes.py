"""Field indexes of the fake Logs Insights server, as the CloudWatch Logs documentation describes them.

- A log group's field index policy (``PutIndexPolicy``) lists up to 20 fields; "CloudWatch Logs indexes only the log
  events ingested after an index policy is created ... each matching log event remains indexed for 30 days from the
  log event's ingestion time" (CloudWatchLogs-Field-Indexing.html). Here an event is indexed for a field when the
  policy in force at its ``ingestionTime`` listed the field and that time is less than 30 days ago; its indexed value
  is the JSON value at the field's dotted path ("Fields indexes are supported only for the structured log formats of
  JSON"; child fields by dot notation: CloudWatchLogs-Field-Indexing-Syntax.html), as text.
- ``filterIndex field = value`` / ``filterIndex field in [...]``: "skip all log groups that are not indexed" on the
  field and, "within the log groups that are indexed, the query skips log events that have an IPaddress field but
  don't have the value"; it "returns only results from after the field index was created"
  (CWL_QuerySyntax-FilterIndex.html, CWL_QuerySyntax-FilterIndex-Filter.html). So only indexed events with a
  listed value are scanned, and only they reach the query.
- ``filter`` with ``field = value`` / ``field IN [...]`` on an indexed field "will attempt to process only the log
  events that are known to contain that indexed field and the queried value" (CloudWatchLogs-Field-Indexing.html);
  an event the index knows nothing about (ingested before the policy, or more than 30 days ago) may still match, so it
  is scanned too. Every event of the window still reaches the query: ``filter`` returns the same rows either way.
  A log group without the field in its policy is scanned whole ("it will scan every log event in that fifth log
  group": CWL_QuerySyntax-FilterIndex-Filter.html).

Only the leading ``filter``/``filterIndex`` commands of a query (the runner's window filter first) are read for index
use; conditions are their top-level ``and`` terms.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

INDEX_RETENTION_MS = 30 * 86_400_000
"""An indexed event stays indexed for 30 days from its ingestion time (CloudWatchLogs-Field-Indexing.html)."""

MAX_INDEXED_FIELDS = 20
"""'As many as 20 fields can be included in the policy' (CloudWatchLogs-Field-Indexing-Syntax.html)."""

MAX_FIELD_NAME = 100
"""'Each field name can include as many as 100 characters' (same page)."""


@dataclass
class IndexPolicy:
    """One log group's policy history: ``versions`` = [(in force from epoch ms, fields)], oldest first; the last one is
    the current policy (an empty field list after DeleteIndexPolicy)."""

    versions: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)

    @property
    def fields(self) -> tuple[str, ...]:
        return self.versions[-1][1] if self.versions else ()

    @property
    def last_update_ms(self) -> int:
        return self.versions[-1][0] if self.versions else 0

    def intervals(self, name: str) -> list[tuple[int, int | None]]:
        """Ingestion-time intervals [from, to) during which ``name`` was in the policy (to None = still)."""
        out: list[tuple[int, int | None]] = []
        for i, (since, fields) in enumerate(self.versions):
            if name in fields:
                until = self.versions[i + 1][0] if i + 1 < len(self.versions) else None
                if out and out[-1][1] == since:
                    out[-1] = (out[-1][0], until)
                else:
                    out.append((since, until))
        return out

    def indexed(self, name: str, ingestion_ms: int, now_ms: int) -> bool:
        """True when an event ingested at ``ingestion_ms`` is (still) indexed for ``name`` at ``now_ms``."""
        if ingestion_ms + INDEX_RETENTION_MS <= now_ms:
            return False
        return any(a <= ingestion_ms and (b is None or ingestion_ms < b) for a, b in self.intervals(name))


@dataclass(frozen=True)
class IndexUse:
    """What a query asks of field indexes: ``force`` (filterIndex: unindexed groups and events are skipped) or an
    equality ``filter`` term that an index can serve; ``field`` and the accepted ``values`` (as text)."""

    field: str
    values: frozenset[str]
    force: bool


def index_uses(query: str) -> list[IndexUse]:
    """The equality conditions of the query's leading ``filter`` / ``filterIndex`` commands an index can serve.

    Raises the offline parser's QueryError for a query it cannot parse (the caller answers MalformedQueryException).
    """
    from collector.cloudwatch.scan import and_terms
    from collector.insights.expressions import FilterCmd, FilterIndexCmd
    from collector.insights.parser import parse_query

    out: list[IndexUse] = []
    for cmd in parse_query(query).commands:
        if not isinstance(cmd, (FilterCmd, FilterIndexCmd)):
            break
        for t in and_terms(cmd.expr):
            use = _equality(t)
            if use is not None:
                out.append(IndexUse(use[0], use[1], isinstance(cmd, FilterIndexCmd)))
    return out


def _equality(expr: Any) -> tuple[str, frozenset[str]] | None:
    from collector.insights.expressions import Binary, Field, InList, Literal

    if isinstance(expr, Binary) and expr.op == "=" and not expr.negated:
        pairs = [(expr.left, expr.right), (expr.right, expr.left)]
        for f, v in pairs:
            if isinstance(f, Field) and isinstance(v, Literal):
                return f.name, frozenset({_text(v.value)})
    if isinstance(expr, InList) and not expr.negated and isinstance(expr.operand, Field) \
            and all(isinstance(i, Literal) for i in expr.items):
        return expr.operand.name, frozenset(_text(i.value) for i in expr.items)
    return None


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def indexed_value(message: str, name: str) -> str | None:
    """The text of the JSON value at dotted path ``name`` in ``message`` (None: not JSON, or no such field)."""
    try:
        doc: Any = json.loads(message)
    except ValueError:
        return None
    for part in name.split("."):
        if isinstance(doc, dict) and part in doc:
            doc = doc[part]
        elif isinstance(doc, list) and part.isdigit() and int(part) < len(doc):
            doc = doc[int(part)]
        else:
            return None
    if doc is None or isinstance(doc, (dict, list)):
        return None
    return _text(doc)


@dataclass
class ScanOfGroup:
    """How a query reads one log group: ``skipped`` (filterIndex on a field the group does not index), the events it
    scans (billed), and the events the query sees (``visible``: the scanned ones under filterIndex, else all)."""

    skipped: bool
    scanned: list[dict[str, Any]]
    visible: list[dict[str, Any]]


def scan_group(events: list[dict[str, Any]], policy: IndexPolicy | None, uses: list[IndexUse],
               now_ms: int) -> ScanOfGroup:
    """Apply the index rules of the module docstring to the window's ``events`` of one log group."""
    fields = policy.fields if policy else ()
    forced = [u for u in uses if u.force]
    if forced:
        if any(u.field not in fields for u in forced):
            return ScanOfGroup(True, [], [])
        assert policy is not None
        hit = [e for e in events if all(policy.indexed(u.field, e["ingestionTime"], now_ms)
                                        and indexed_value(e["message"], u.field) in u.values for u in forced)]
        return ScanOfGroup(False, hit, hit)
    served = [u for u in uses if u.field in fields]
    if not served:
        return ScanOfGroup(False, events, events)
    assert policy is not None
    scanned = []
    for e in events:
        keep = True
        for u in served:  # an event the index knows to lack the value is skipped; one it does not know is read
            if policy.indexed(u.field, e["ingestionTime"], now_ms) and indexed_value(e["message"], u.field) \
                    not in u.values:
                keep = False
                break
        if keep:
            scanned.append(e)
    return ScanOfGroup(False, scanned, events)
