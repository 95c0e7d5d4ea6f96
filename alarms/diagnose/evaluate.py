"""The evaluation: run the inventory queries and every rule's evidence query on one source, judge each
function/operation with each rule, and fetch the records that prove each finding.

    from alarms.diagnose import DiagnoseOptions, diagnose, open_data_dir
    source = open_data_dir(Path("idemwatch-data"))
    try:
        findings = diagnose(source, DiagnoseOptions(examples=3))
    finally:
        source.close()

Queries run at most twice per rule set: once for the inventory and the evidence (a query shared by two rules runs
once), once for the proving records of every finding.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alarms.diagnose.inventory import INVENTORY_QUERIES, build_facts
from alarms.diagnose.rules import RULES, Rule, num, render_query
from alarms.diagnose.sources import EvidenceSource, open_data_dir
from alarms.diagnose.types import (
    DiagnoseOptions,
    Evidence,
    Example,
    Facts,
    Finding,
    FindingStatus,
    Verdict,
)
from collector.insights.constants import MAX_QUERY_LENGTH

__all__ = ["diagnose", "diagnose_data_dir", "examples_query", "ql_string"]

Unit = tuple[str, str]
"""(``@log``, operation): what one finding concerns."""

_HASHED = re.compile(r"^(?:[^:]*:)?sha256:[0-9a-f]{8,64}$")
"""A key the emitter already hashed (``[tenant:]sha256:<hex>``, emitter.redact.KeyHasher)."""
_EXAMPLE_FIELDS = ("time", "log_stream", "outcome", "operation", "event_id", "idempotency_key", "function_request_id",
                   "attempt", "remaining_time_ms", "idempotency_status", "error_code", "record_age_ms", "timed_out")


def ql_string(text: str) -> str:
    """``text`` as a Logs Insights string literal: double quotes, with ``\\``, ``"``, newline, carriage return, tab
    and NUL escaped (the escapes the language reads back, ``collector.insights.tokenizer``)."""
    out = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
           .replace("\t", "\\t").replace("\0", "\\0"))
    return f'"{out}"'


EXAMPLE_ROWS = 10_000
"""Rows one example query returns at most (the Logs Insights ``limit`` maximum)."""


def _example_clause(rule: Rule, log: str, entities: Sequence[str]) -> str:
    """The filter of ``entities`` (values of ``rule.example_field``) in the log group ``log`` (an ``@log`` value):
    emitter records, and ``REPORT`` lines when the entity is an invocation."""
    values = "[" + ", ".join(ql_string(e) for e in entities) + "]"
    if rule.example_field == "request_id":
        return (f'(@log = {ql_string(log)} and (ispresent(outcome) or @type = "REPORT") and '
                f"(function_request_id in {values} or @requestId in {values}))")
    return f"(@log = {ql_string(log)} and ispresent(outcome) and {rule.example_field} in {values})"


def _examples_text(clauses: Sequence[str], limit: int | None = None) -> str:
    limit = EXAMPLE_ROWS if limit is None else limit
    return ("filter " + " or ".join(clauses) + "\n"
            "| fields toMillis(@timestamp) as t, @log as log, @logStream as log_stream, outcome, operation, event_id, "
            "idempotency_key, function_request_id, @requestId as report_request_id, attempt, remaining_time_ms, "
            "idempotency_status, error_code, record_age_ms, "
            'strcontains(@message, "Status: timeout") + coalesce(strcontains(record.status, "timeout"), 0) '
            "as timed_out\n"
            f"| sort t asc\n| limit {int(limit)}")


def examples_query(rule: Rule, log: str, entities: Sequence[str], limit: int | None = None) -> str:
    """The query returning the records of ``entities`` (values of ``rule.example_field``) in the log group ``log``
    (an ``@log`` value), oldest first, at most ``limit`` rows: emitter records, and ``REPORT`` lines when the entity
    is an invocation (``limit`` default :data:`EXAMPLE_ROWS`)."""
    return _examples_text([_example_clause(rule, log, entities)], limit)


def _iso(ms: float | None) -> str | None:
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000.0, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _key_hasher(o: DiagnoseOptions) -> Callable[[str], str]:
    from emitter.redact import KeyHasher

    hasher = KeyHasher(":", o.key_hash_salt)
    return lambda key: key if _HASHED.match(key) else hasher(key)


def _unit(row: Mapping[str, Any]) -> Unit:
    return str(row.get("log_group") or ""), str(row.get("operation") or "")


def _record(row: Mapping[str, Any], hash_key: Callable[[str], str]) -> dict[str, Any]:
    """One proving record as the report shows it (keys hashed, times ISO-8601 UTC, no empty fields)."""
    rec: dict[str, Any] = {"time": _iso(num(row, "t"))}
    for name in _EXAMPLE_FIELDS[1:]:
        v = row.get(name)
        if name == "outcome" and v is None and row.get("report_request_id"):
            v, rec["function_request_id"] = "REPORT", row["report_request_id"]
        if name == "timed_out":
            v = bool(num(row, name)) if rec.get("outcome") == "REPORT" else None
        elif name in ("attempt", "remaining_time_ms", "record_age_ms") and v is not None:
            f = num(row, name)
            v = int(f) if f is not None and f.is_integer() else f
        elif name == "idempotency_key" and v is not None:
            v = hash_key(str(v))
        if v is not None and v != "":
            rec[name] = v
    return rec


def _belongs(rule: Rule, row: Mapping[str, Any], entity: str) -> bool:
    if rule.example_field == "request_id":
        return entity in (row.get("function_request_id"), row.get("report_request_id"))
    return row.get(rule.example_field) == entity


def diagnose(source: EvidenceSource, options: DiagnoseOptions | None = None,
             rules: Sequence[Rule] = RULES) -> list[Finding]:
    """Judge every function/operation the evidence holds with every rule that applies to it.

    Returns findings ordered by function, operation, rule id: one per (rule, function/operation) the rule applies
    to, found (FAIL), not found (PASS) or not observable (UNKNOWN, the message says why).

    Raises:
        collector.insights.QueryError: a rule's query does not run on the offline engine (a defect).
        alarms.diagnose.exceptions.SourceError: the source failed (a CloudWatch query failed).
    """
    o = options or DiagnoseOptions()
    params = o.query_params()
    texts = [render_query(r.query, params) for r in rules]
    unique = list(dict.fromkeys(texts))
    n = len(INVENTORY_QUERIES)
    results = source.run_many([*INVENTORY_QUERIES, *unique])
    facts = build_facts(*(r.rows for r in results[:n]))
    evidence = dict(zip(unique, results[n:], strict=True))
    per_query: dict[str, dict[Unit, list[Mapping[str, Any]]]] = {}
    for text, ev in evidence.items():
        grouped: dict[Unit, list[Mapping[str, Any]]] = defaultdict(list)
        for row in ev.rows:
            grouped[_unit(row)].append(row)
        per_query[text] = grouped
        for unit in grouped:  # evidence of an operation the inventory did not list still gets judged
            facts.setdefault(unit, Facts(log=unit[0], operation=unit[1]))
    judged: list[tuple[Rule, Facts, Verdict, bool]] = []
    for rule, text in zip(rules, texts, strict=True):
        truncated = evidence[text].truncated
        for unit in sorted(facts):
            verdict = rule.judge(Evidence(tuple(per_query[text].get(unit, ())), truncated), facts[unit], o)
            if verdict is not None and truncated and verdict.status is FindingStatus.PASS:
                # the rows that would show it may be the ones CloudWatch's row limit cut off: no pass on a part
                verdict = Verdict(FindingStatus.UNKNOWN, "the evidence query hit CloudWatch's row limit, so the "
                                                         "rows may be incomplete: diagnose a shorter window")
            if verdict is not None:
                judged.append((rule, facts[unit], verdict, truncated))
    examples = _examples(source, [(r, f, v) for r, f, v, _ in judged if v.status is FindingStatus.FAIL], o)
    out = [_finding(rule, f, v, truncated, examples.get((rule.id, f.log, f.operation), ()))
           for rule, f, v, truncated in judged]
    out.sort(key=lambda x: (x.function, x.operation, x.log_group, x.rule))
    return out


def _examples(source: EvidenceSource, found: Sequence[tuple[Rule, Facts, Verdict]],
              o: DiagnoseOptions) -> dict[tuple[str, str, str], tuple[Example, ...]]:
    """The proving records of the first ``o.examples`` violations of each found finding. The lookups of every
    finding are joined into as few queries as Logs Insights' query length allows (each query scans every event);
    a query that reaches :data:`EXAMPLE_ROWS` is run again finding by finding, so a busy entity never crowds out
    another finding's records. An id too long for a query is shown without records."""
    if o.examples <= 0 or not found:
        return {}
    wanted = [[str(r.get("entity")) for r in v.violations[:o.examples] if r.get("entity") is not None]
              for _, _, v in found]
    clauses: list[tuple[int, str]] = []
    for i, ((rule, f, _), ents) in enumerate(zip(found, wanted, strict=True)):
        fits = [e for e in ents if len(_examples_text([_example_clause(rule, f.log, [e])])) <= MAX_QUERY_LENGTH // 2]
        while fits and len(_examples_text([_example_clause(rule, f.log, fits)])) > MAX_QUERY_LENGTH:
            fits.pop()
        if fits:
            clauses.append((i, _example_clause(rule, f.log, fits)))
    chunks: list[list[tuple[int, str]]] = []
    for item in clauses:
        if chunks and len(_examples_text([c for _, c in chunks[-1]] + [item[1]])) <= MAX_QUERY_LENGTH:
            chunks[-1].append(item)
        else:
            chunks.append([item])
    rows: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    results = source.run_many([_examples_text([c for _, c in chunk]) for chunk in chunks])
    again = []
    for chunk, ev in zip(chunks, results, strict=True):
        if len(ev.rows) >= EXAMPLE_ROWS and len(chunk) > 1:
            again.extend(chunk)
            continue
        for i, _ in chunk:
            rows[i].extend(ev.rows)
    for (i, _), ev in zip(again, source.run_many([_examples_text([c]) for _, c in again]), strict=True):
        rows[i].extend(ev.rows)
    hash_key = _key_hasher(o)
    out: dict[tuple[str, str, str], tuple[Example, ...]] = {}
    for i, _ in clauses:
        rule, f, _ = found[i]
        mine = [r for r in rows.get(i, ()) if r.get("log") == f.log]
        items = []
        for ent in wanted[i]:
            recs = [_record(r, hash_key) for r in mine if _belongs(rule, r, ent)][:o.max_example_records]
            shown = hash_key(ent) if rule.example_field == "idempotency_key" else ent
            items.append(Example(shown, tuple(recs)))
        out[(rule.id, f.log, f.operation)] = tuple(items)
    return out


def _finding(rule: Rule, f: Facts, v: Verdict, truncated: bool, examples: tuple[Example, ...]) -> Finding:
    found = v.status is FindingStatus.FAIL
    firsts = [x for x in (num(r, "first_ms") for r in v.violations) if x is not None]
    lasts = [x for x in (num(r, "last_ms") for r in v.violations) if x is not None]
    message = v.message
    if found and truncated:
        message += " (at least: the query hit CloudWatch's row limit)"
    return Finding(
        rule=rule.id, severity=rule.severity, kind=rule.kind,
        resource=f"{f.function} ({f.operation})" if f.operation else f.function, status=v.status, message=message,
        log_group=f.log_group, account_id=f.account_id, function=f.function, operation=f.operation,
        count=len(v.violations), first=_iso(min(firsts)) if firsts else None,
        last=_iso(max(lasts)) if lasts else None, truncated=found and truncated, examples=examples)


def diagnose_data_dir(data: Any, options: DiagnoseOptions | None = None, *, start: float | None = None,
                      end: float | None = None) -> tuple[str, list[Finding]]:
    """:func:`diagnose` over a data directory (``sources.open_data_dir``): returns (what was read, findings).

    Raises:
        alarms.diagnose.exceptions.SourceError: the directory holds no collected evidence, or is being written.
    """
    source = open_data_dir(Path(data), start, end)
    try:
        return source.description, diagnose(source, options)
    finally:
        source.close()
