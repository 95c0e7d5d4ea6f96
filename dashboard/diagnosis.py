"""The last ``idemwatch diagnose`` of a data directory (``<data>/diagnose.json``) as the dashboard shows it.

Loading (a clear one-line error, never a traceback), the findings table (``alarms.diagnose.finding_rows``), the
evidence records of one finding, what the page could not show (counted, never silently dropped) and the links
between evidence findings and the audit's static findings of the same function (a diagnose rule's ``related`` audit
rules, e.g. IW106 redelivery during processing and IW001 SQS visibility timeout). No Streamlit layout here:
``dashboard/views/diagnose.py`` and ``dashboard/views/configuration.py`` draw it.

The document is untrusted (a file in the data directory): every value becomes text or a number here, and the pages
show it through ``st.dataframe`` or ``ui.md_escape`` only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from alarms.diagnose.report import DIAGNOSE_JSON_FILE, finding_rows, load_diagnosis
from dashboard.cache import answer

__all__ = ["DIAGNOSE_FILE", "STATUSES", "Diagnosis", "audit_links", "command", "evidence", "finding_id", "findings",
           "function_of", "load", "problems", "related_audit", "status_counts"]

DIAGNOSE_FILE = DIAGNOSE_JSON_FILE
"""``diagnose.json``: where the demo (and ``idemwatch diagnose --format json --out``) writes the diagnosis."""
STATUSES: dict[str, str] = {"fail": "found", "unknown": "not observable", "pass": "not found",
                            "suppressed": "suppressed"}
"""JSON status -> the label diagnose shows (``alarms.diagnose.types.STATUS_LABELS``), in the page's order."""
EVIDENCE_FIRST = ("example", "time", "outcome", "event_id", "function_request_id", "attempt", "operation", "key_hash",
                  "idempotency_status", "log_stream")
"""Evidence columns in this order; the records' other fields follow in order of appearance."""


@dataclass(frozen=True)
class Diagnosis:
    """The diagnosis in ``path``: ``doc`` (None when there is none or it cannot be read), ``error`` (one line, when
    the file exists but is not a diagnose JSON document)."""

    path: Path
    doc: dict[str, Any] | None = None
    error: str | None = None


def command(data_dir: Path) -> str:
    """The shell commands that write a diagnosis the page reads (offline from collected logs, or CloudWatch)."""
    out = Path(data_dir) / DIAGNOSE_FILE
    return (f"idemwatch diagnose --data {data_dir} --format json --out {out}\n"
            f"# or over CloudWatch Logs Insights\n"
            f"idemwatch diagnose --log-group-prefix /aws/lambda/ --start 24h --format json --out {out}\n"
            f"# the demo writes one too (--inject all builds every anti-pattern into one function each)\n"
            f"idemwatch demo --out {data_dir} --inject all --no-serve")


def load(data_dir: Path) -> Diagnosis:
    """The diagnosis of ``data_dir``, read again when the file changes (cached on its size and mtime)."""
    p = Path(data_dir) / DIAGNOSE_FILE
    try:
        st = p.stat()
    except OSError:
        return Diagnosis(p)
    return _load(str(p), st.st_mtime_ns, st.st_size)


@answer
def _load(path: str, mtime_ns: int, size: int) -> Diagnosis:
    p = Path(path)
    try:
        doc = load_diagnosis(p.parent)
    except ValueError as exc:  # not JSON (JSONDecodeError, UnicodeDecodeError) or no findings list
        msg = str(exc) if str(p) in str(exc) else f"{p} is not valid JSON: {exc}"
        return Diagnosis(p, error=" ".join(msg.split())[:500])
    except OSError as exc:
        return Diagnosis(p, error=f"cannot read {p}: {exc.strerror or type(exc).__name__}")
    return Diagnosis(p, doc)


def finding_id(row: Mapping[str, Any]) -> str:
    """What names one finding in the URL and the finding picker: ``rule · function (operation)``."""
    return f"{row['rule']} · {row['function']} ({row['operation']})"


def findings(doc: Mapping[str, Any], show_passed: bool = True) -> pd.DataFrame:
    """One row per finding (``alarms.diagnose.finding_rows``: found first, then not observable, then not found),
    ``signals`` and ``related`` as comma-separated text, plus ``id`` (:func:`finding_id`)."""
    rows = finding_rows(doc, show_passed=show_passed)
    for r in rows:
        r["signals"] = ", ".join(r["signals"])
        r["related"] = ", ".join(r["related"])
        r["id"] = finding_id(r)
    cols = ["id", "status", "rule", "slug", "severity", "function", "operation", "count", "first", "last", "message",
            "checklist", "signals", "related", "event_id", "function_request_id", "doc"]
    return pd.DataFrame(rows, columns=cols)


def _raw_findings(doc: Mapping[str, Any]) -> list[Any]:
    fs = doc.get("findings")
    return fs if isinstance(fs, list) else []


def status_counts(doc: Mapping[str, Any]) -> Counter[str]:
    """JSON status -> findings with it (a status the page does not know counted under its own text)."""
    return Counter(str(fd.get("status")) for fd in _raw_findings(doc) if isinstance(fd, Mapping))


def problems(doc: Mapping[str, Any]) -> list[str]:
    """What in ``doc`` the page cannot show as it should, one sentence each (empty when all is well): entries of the
    findings list that are not objects, unknown statuses, rules the document does not describe, a summary that
    disagrees with the findings listed."""
    out: list[str] = []
    raw = _raw_findings(doc)
    bad = sum(1 for fd in raw if not isinstance(fd, Mapping))
    if bad:
        out.append(f"{bad:,} of {len(raw):,} entries of the findings list are not objects and cannot be shown.")
    counts = status_counts(doc)
    odd = sum(n for s, n in counts.items() if s not in STATUSES)
    if odd:
        out.append(f"{odd:,} finding(s) have a status diagnose does not write; shown with the status as given.")
    rules = _mapping(doc.get("rules"))
    unknown = sorted({_text(fd.get("rule")) for fd in raw if isinstance(fd, Mapping) and _text(fd.get("rule")) not in rules})
    if unknown:
        out.append(f"{len(unknown):,} rule id(s) the document does not describe (no checklist line): "
                   f"{', '.join(unknown[:5])}{', ...' if len(unknown) > 5 else ''}.")
    summary = doc.get("summary")
    if isinstance(summary, Mapping):
        differ = [s for s in STATUSES if _int(summary.get(s)) is not None and _int(summary.get(s)) != counts.get(s, 0)]
        if differ:
            out.append("The document's summary disagrees with its findings list ("
                       + ", ".join(f"{STATUSES[s]}: summary {summary.get(s)}, listed {counts.get(s, 0)}"
                                   for s in differ)
                       + "); the page counts the findings listed.")
    return out


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def evidence(doc: Mapping[str, Any], rule: str, function: str, operation: str) -> tuple[pd.DataFrame, int]:
    """The proving records of the finding(s) of ``rule`` on ``function``/``operation``: one row per record, oldest
    first within each example, ``example`` naming the proving entity (an event id, a hashed key, a request id).

    The record's ``idempotency_key`` becomes ``key_hash``: diagnose hashes keys as the emitter's
    ``hash_idempotency_keys`` does, so it is not what the trail holds when the emitter logs keys in clear; the event
    id and request id columns are the links into the explorer. Returns (frame, entries skipped: examples or records
    that are not objects)."""
    rows: list[dict[str, Any]] = []
    skipped = 0
    for fd in _raw_findings(doc):
        if not isinstance(fd, Mapping) or (_text(fd.get("rule")), _text(fd.get("function")),
                                           _text(fd.get("operation"))) != (rule, function, operation):
            continue
        examples = fd.get("examples")
        for ex in examples if isinstance(examples, list) else []:
            if not isinstance(ex, Mapping):
                skipped += 1
                continue
            recs = ex.get("records")
            for rec in recs if isinstance(recs, list) else []:
                if not isinstance(rec, Mapping):
                    skipped += 1
                    continue
                row = {"example": _text(ex.get("entity"))}
                for k, v in rec.items():
                    row["key_hash" if k == "idempotency_key" else str(k)] = v
                rows.append(row)
    cols = [c for c in EVIDENCE_FIRST if any(c in r for r in rows) or c in ("example", "time", "outcome")]
    cols += list(dict.fromkeys(k for r in rows for k in r if k not in cols))
    df = pd.DataFrame(rows, columns=cols)
    for c in df.columns:
        df[c] = _column(df[c])
    return df, skipped


def _column(s: pd.Series) -> pd.Series:
    """A column of untrusted values the grid can draw: numbers when every value is one, else text (None empty)."""
    vals = [v for v in s if v is not None and not (isinstance(v, float) and pd.isna(v))]
    if vals and all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals):
        return pd.to_numeric(s)
    return s.map(lambda v: "" if v is None or (isinstance(v, float) and pd.isna(v)) else _text(v))


def _text(v: Any) -> str:
    return "" if v is None else str(v)


def function_of(audit_finding: Mapping[str, Any]) -> str:
    """The function an audit finding names: the last part of its resource (``orders-queue -> orders-consumer`` for an
    event source mapping, the function name for a function)."""
    return str(audit_finding.get("resource", "")).split(" -> ")[-1].strip()


def _sources(audit: Mapping[str, Any]) -> dict[str, set[str]]:
    """Event source (queue, stream) -> the functions it feeds, from the audit's event-source-mapping resources."""
    out: dict[str, set[str]] = {}
    for fd in _raw_findings(audit):
        res = str(fd.get("resource", "")) if isinstance(fd, Mapping) else ""
        if " -> " in res:
            src, fn = (x.strip() for x in res.rsplit(" -> ", 1))
            out.setdefault(src, set()).add(fn)
    return out


def _concerns(fd: Mapping[str, Any], sources: Mapping[str, set[str]]) -> set[str] | None:
    """The functions an audit finding concerns: a function's or its event source mapping's own; a queue's or a
    stream's: those it feeds (per :func:`_sources`); None for a shared resource (the idempotency table): every
    function."""
    kind = str(fd.get("kind", ""))
    if kind in ("function", "event-source-mapping") or " -> " in str(fd.get("resource", "")):
        return {function_of(fd)}
    if kind == "table":
        return None
    return set(sources.get(str(fd.get("resource", "")), set()))


def _label(fd: Mapping[str, Any]) -> str:
    shared = str(fd.get("kind", "")) not in ("function", "event-source-mapping")
    return f"{fd.get('rule')} {fd.get('status')}" + (f" ({fd.get('kind')} {fd.get('resource')})" if shared else "")


def _related(diag: Mapping[str, Any]) -> dict[str, list[str]]:
    rules = _mapping(diag.get("rules"))
    return {str(rid): [str(a) for a in r.get("related") or [] if isinstance(a, str)]
            for rid, r in rules.items() if isinstance(r, Mapping)}


def related_audit(audit: Mapping[str, Any] | None, diag: Mapping[str, Any], rule: str, function: str) -> str:
    """The audit's findings (static configuration checks) of the rules diagnose ``rule`` relates to that concern
    ``function`` (its own resources, the queues and streams that feed it, the shared idempotency table):
    ``IW005 fail · IW007 fail``; the related rule ids with "(no audit)" without an audit, "(no audit finding)" when
    the audit has none for this function."""
    related = _related(diag).get(rule, [])
    if not related:
        return ""
    if audit is None:
        return f"{', '.join(related)} (no audit)"
    sources = _sources(audit)
    parts = []
    for fd in _raw_findings(audit):
        if isinstance(fd, Mapping) and fd.get("rule") in related:
            fns = _concerns(fd, sources)
            if fns is None or function in fns:
                parts.append(_label(fd))
    return " · ".join(parts) if parts else f"{', '.join(related)} (no audit finding)"


def audit_links(audit: Mapping[str, Any], diag: Mapping[str, Any] | None) -> list[str]:
    """Per finding of ``audit`` (in its findings list's order): the diagnose findings of rules that relate to that
    audit rule on the functions it concerns (``IW106 found: 30 · IW107 not observable``), "" when none or without a
    diagnosis."""
    by_audit: dict[str, set[str]] = {}
    for rid, related in _related(diag or {}).items():
        for a in related:
            by_audit.setdefault(a, set()).add(rid)
    diag_findings = [fd for fd in _raw_findings(diag or {}) if isinstance(fd, Mapping)]
    sources = _sources(audit)
    out: list[str] = []
    for fd in _raw_findings(audit):
        if not isinstance(fd, Mapping):
            out.append("")
            continue
        rules = by_audit.get(str(fd.get("rule")), set())
        fns = _concerns(fd, sources)
        parts = []
        for d in diag_findings:
            if _text(d.get("rule")) in rules and (fns is None or _text(d.get("function")) in fns):
                status = STATUSES.get(_text(d.get("status")), _text(d.get("status")))
                count = _int(d.get("count"))
                many = d.get("status") == "fail" and count
                parts.append(f"{d.get('rule')} {status}" + (f" {d.get('function')}" if fns is None or len(fns) > 1
                                                            else "") + (f": {count:,}" if many else ""))
        out.append(" · ".join(parts))
    return out


def _mapping(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}
