"""The evidence inventory: what each function/operation's logs hold (:class:`~alarms.diagnose.types.Facts`), from
five small Logs Insights queries that run beside the rules' evidence queries (each reads only the records it needs:
a field that is not a hot column of the events table is read from the JSON of the few records that carry it).

A rule reads it to tell "found nothing" (the evidence was there: pass) from "could not look" (not observable, with
the reason): no ``side_effect_started`` records, no redelivery, a single log stream, no ``REPORT`` lines.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from alarms.diagnose.rules import num
from alarms.diagnose.types import Facts

__all__ = ["BUDGETS_QUERY", "INVENTORY_QUERIES", "OUTCOMES_QUERY", "REDELIVERIES_QUERY", "REPORTS_QUERY",
           "STREAMS_QUERY", "build_facts"]

OUTCOMES_QUERY = """\
# diagnose inventory: records per function/operation, event source and outcome
filter ispresent(schema_version) and ispresent(outcome)
| fields coalesce(event_source, "") as source
| stats count(*) as records, count(idempotency_key) as keyed, count(remaining_time_ms) as timed
  by @log as log_group, operation, source, outcome
"""

REDELIVERIES_QUERY = """\
# diagnose inventory: redeliveries (received records with attempt > 1) per function/operation
filter ispresent(schema_version) and outcome = "received" and attempt > 1
| stats count(*) as redeliveries by @log as log_group, operation
"""

BUDGETS_QUERY = """\
# diagnose inventory: the safe budget timeout_budget_abort records state, per function/operation
filter ispresent(schema_version) and outcome = "timeout_budget_abort" and ispresent(required_time_ms)
| stats max(required_time_ms) as required_time_ms by @log as log_group, operation
"""

STREAMS_QUERY = """\
# diagnose inventory: log streams (execution environments) per log group
filter ispresent(schema_version)
| stats count_distinct(@logStream) as streams by @log as log_group
"""

REPORTS_QUERY = """\
# diagnose inventory: REPORT lines, timeouts and cold starts per log group
filter @type = "REPORT"
| fields strcontains(@message, "Status: timeout") + coalesce(strcontains(record.status, "timeout"), 0) as is_timeout
| stats count(*) as reports, sum(is_timeout) as timeouts, count(@initDuration) as cold_starts by @log as log_group
"""

INVENTORY_QUERIES = (OUTCOMES_QUERY, REDELIVERIES_QUERY, BUDGETS_QUERY, STREAMS_QUERY, REPORTS_QUERY)
"""The inventory, in the order :func:`build_facts` takes their rows."""


def _int(row: Mapping[str, Any], name: str) -> int:
    v = num(row, name)
    return 0 if v is None else int(v)


def build_facts(outcomes: Sequence[Mapping[str, Any]], redeliveries: Sequence[Mapping[str, Any]],
                budgets: Sequence[Mapping[str, Any]], streams: Sequence[Mapping[str, Any]],
                reports: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], Facts]:
    """:class:`Facts` per (``@log``, operation) from the rows of the :data:`INVENTORY_QUERIES` (values as numbers or
    numeric text). Only operations with outcome records appear; a log group's stream and REPORT counts are given
    to each of its operations."""
    per: dict[tuple[str, str], dict[str, Any]] = defaultdict(
        lambda: {"outcomes": defaultdict(int), "keyed": defaultdict(int), "sources": set(), "timed": 0})
    for r in outcomes:
        key = (str(r.get("log_group") or ""), str(r.get("operation") or ""))
        d = per[key]
        outcome = str(r.get("outcome") or "")
        d["outcomes"][outcome] += _int(r, "records")
        d["keyed"][outcome] += _int(r, "keyed")
        if r.get("source"):
            d["sources"].add(str(r["source"]))
        if outcome == "side_effect_started":
            d["timed"] += _int(r, "timed")
    again = {_unit(r): _int(r, "redeliveries") for r in redeliveries}
    budget = {_unit(r): num(r, "required_time_ms") for r in budgets}
    n_streams = {str(r.get("log_group") or ""): _int(r, "streams") for r in streams}
    by_group = {str(r.get("log_group") or ""): r for r in reports}
    out: dict[tuple[str, str], Facts] = {}
    for (log, op), d in per.items():
        g = by_group.get(log, {})
        out[(log, op)] = Facts(
            log=log, operation=op, outcomes=dict(d["outcomes"]), keyed=dict(d["keyed"]),
            event_sources=frozenset(d["sources"]), timed_side_effects=d["timed"], redeliveries=again.get((log, op), 0),
            required_time_ms=budget.get((log, op)), streams=n_streams.get(log, 0), reports=_int(g, "reports"),
            timeouts=_int(g, "timeouts"), cold_starts=_int(g, "cold_starts"))
    return out


def _unit(row: Mapping[str, Any]) -> tuple[str, str]:
    return str(row.get("log_group") or ""), str(row.get("operation") or "")
