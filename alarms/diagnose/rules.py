"""The diagnose rules: ONE table (:data:`RULES`) of the handler checklist judged from evidence.

Each rule is a :class:`Rule` row: id, the checklist line it tests, severity, rationale, the AWS or Powertools page
it rests on, the **evidence query** (Logs Insights QL: the same text runs offline on the collected events and on
CloudWatch Logs Insights; ``{name}`` placeholders take the integer thresholds of
:meth:`~alarms.diagnose.types.DiagnoseOptions.query_params`), the threshold in words, the entity a violation is
counted by, and a ``judge``. The query returns one row per candidate entity (an event, a key, an invocation) with
``log_group`` (``@log``) and ``operation``; the judge turns one function/operation's rows and its
:class:`~alarms.diagnose.types.Facts` (the evidence inventory) into a :class:`~alarms.diagnose.types.Verdict`:
found, not found, or **not observable** (with the reason) - never a pass without evidence.

The language has no ``if``: a query counts the records of one outcome as ``sum(strcontains(outcome, "..."))``
(``strcontains`` returns 1 or 0), keeps the times of one outcome only with ``t * is_x`` in a ``max`` (0
elsewhere) and ``t + (1 - is_x) * 1e15`` in a ``min`` (1e15 ms is the year 33658: never the minimum of real times),
and compares numbers with ``least``/``greatest``. Every query uses at most two ``stats`` commands (CloudWatch's
limit) and only documented commands and functions.

Adding a rule is one row here, a test per case (found, a look-alike that is not, not observable) in
``tests/unit/diagnose/test_rules.py``, and its section in docs/diagnose.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from alarms.audit.types import FindingStatus, ResourceKind, Severity
from alarms.diagnose.types import DiagnoseOptions, Evidence, Facts, Verdict

__all__ = ["FAR_MS", "RULES", "RULES_BY_ID", "Rule", "num", "render_query"]

FAIL, PASS, UNK = FindingStatus.FAIL, FindingStatus.PASS, FindingStatus.UNKNOWN
FAR_MS = 1e15
"""Sentinel time (epoch ms, the year 33658) the queries add to the records a ``min`` must skip."""

Judge = Callable[[Evidence, Facts, DiagnoseOptions], "Verdict | None"]
"""(this function/operation's evidence rows, its inventory, the options) -> verdict; None = the rule does not apply
to it (e.g. an SQS rule on a Kinesis consumer): no finding at all."""

CLAIM_OUTCOMES = ("claimed", "stale_claim_takeover", "duplicate_completed", "duplicate_in_progress", "payload_conflict")
"""Outcomes of the claim step: each delivery that reaches the claim writes one per key."""
STREAM_SOURCES = ("kinesis", "dynamodb", "msk", "self-managed-kafka")
"""Event sources read in order per shard or partition: a record that keeps failing holds back the ones behind it."""


def num(row: Mapping[str, Any], name: str) -> float | None:
    """A numeric column of an evidence row as float (the offline engine gives numbers, CloudWatch gives text);
    None when missing or not a number."""
    v = row.get(name)
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def render_query(query: str, params: Mapping[str, int]) -> str:
    """``query`` with each ``{name}`` of ``params`` replaced by its integer; other text is untouched (the language
    itself has no braces). Raises KeyError for a placeholder without a value, TypeError for a non-integer."""
    out = query
    for name, value in params.items():
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"query parameter {name} must be an integer, got {value!r}")
        out = out.replace("{" + name + "}", str(value))
    if "{" in out:
        start = out.index("{")
        raise KeyError(f"query placeholder without a value: {out[start:out.index('}', start) + 1]}")
    return out


@dataclass(frozen=True)
class Rule:
    """One row of the rule table.

    Every evidence query names the column that identifies one violation ``entity`` (an event id, a key, a request
    id); ``entity_label`` is what it is called in messages; ``example_field``: the log field the proving records
    are looked up by (``request_id`` means the invocation: ``function_request_id`` or a ``REPORT`` line's
    ``@requestId``);
    ``signals``: dashboard signal keys (``dashboard.constants.SIGNALS``) whose numbers a finding explains;
    ``related``: audit rule ids (``alarms.audit.rules``) that check the same thing from configuration."""

    id: str
    slug: str
    checklist: str
    severity: Severity
    rationale: str
    doc: str
    query: str
    threshold: str
    entity_label: str
    example_field: str
    judge: Judge
    signals: tuple[str, ...] = ()
    related: tuple[str, ...] = ()

    @property
    def kind(self) -> ResourceKind:
        """What a finding concerns: a function (and its operation), for the audit's report and SARIF writers."""
        return ResourceKind.FUNCTION


# --------------------------------------------------------------------------- judge helpers
def _ordered(rows: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    """Violating rows oldest first (ties by entity text), the order examples are taken in."""
    return tuple(sorted(rows, key=lambda r: (num(r, "first_ms") or 0.0, str(r.get("entity") or ""))))


def _seconds(ms: float | None) -> str:
    """A duration in ms as seconds for a message (``4.2 s``, ``95 s``, ``3.1 h``)."""
    if ms is None:
        return "?"
    s = ms / 1000.0
    if s >= 7200:
        return f"{s / 3600:.1f} h"
    return f"{s:.1f} s" if s < 100 else f"{s:.0f} s"


def _plural(n: int, word: str) -> str:
    """``1 event``, ``2 events``, ``3 redeliveries``."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else f"{n} {word}s"


Requirement = tuple[Callable[[Facts], bool], str]
"""(what the inventory must show, the reason given when it does not)."""


def _verdict(ev: Evidence, facts: Facts, requires: Sequence[Requirement], found: Callable[[tuple], str],
             clear: Callable[[Facts], str], rows: Iterable[Mapping[str, Any]] | None = None) -> Verdict:
    """The common shape: the violating rows (``rows``, default all of ``ev``) found -> FAIL with ``found(rows)``;
    otherwise the first unmet requirement -> not observable with its reason; otherwise PASS with ``clear``."""
    bad = _ordered(ev.rows if rows is None else rows)
    if bad:
        return Verdict(FAIL, found(bad), bad)
    for ok, reason in requires:
        if not ok(facts):
            return Verdict(UNK, reason)
    return Verdict(PASS, clear(facts))


def _claims(f: Facts) -> int:
    return f.keyed_count("claimed", "stale_claim_takeover")


# --------------------------------------------------------------------------- IW101
KEY_FROM_DELIVERY_QUERY = """\
# IW101: per event, which deliveries (Lambda request ids) used which idempotency key
filter ispresent(schema_version) and ispresent(event_id) and ispresent(idempotency_key)
  and outcome in ["claimed", "stale_claim_takeover", "duplicate_completed", "duplicate_in_progress",
                  "payload_conflict"]
| fields toMillis(@timestamp) as t, strcontains(idempotency_key, function_request_id) as key_holds_request_id
| stats count_distinct(function_request_id) as key_deliveries, earliest(function_request_id) as introduced_by,
        max(key_holds_request_id) as holds_request_id, min(t) as key_first_ms, max(t) as key_last_ms
  by @log as log_group, operation, event_id, idempotency_key
| stats count(*) as keys, max(key_deliveries) as max_key_deliveries,
        count_distinct(introduced_by) as introducing_deliveries, max(holds_request_id) as request_id_in_key,
        min(key_first_ms) as first_ms, max(key_last_ms) as last_ms
  by log_group, operation, event_id as entity
| fields least(1, coalesce(request_id_in_key, 0) + greatest(0, keys - 1) * greatest(0, 2 - max_key_deliveries)
                 * greatest(0, introducing_deliveries - 1)) as found
# kept: events delivered more than once (the evidence) and keys holding the request id; found: a key that holds
# the invocation's request id, or every key used by one delivery only while the event came in more than one (a
# fan-out event keeps its several keys on every delivery)
| filter request_id_in_key > 0 or max_key_deliveries > 1 or introducing_deliveries > 1
"""


def _key_from_delivery(ev: Evidence, facts: Facts, o: DiagnoseOptions) -> Verdict:
    bad = [r for r in ev.rows if (num(r, "found") or 0) > 0]
    again = len(ev.rows) - len(bad)

    def found(rows: tuple) -> str:
        rid = sum(1 for r in rows if (num(r, "request_id_in_key") or 0) > 0)
        changed = len(rows) - rid
        parts = []
        if rid:
            parts.append(f"{_plural(rid, 'event')} claimed under a key holding the Lambda request id")
        if changed:
            parts.append(f"{_plural(changed, 'event')} claimed under a new key on each delivery")
        return "; ".join(parts) + ": every retry is a new transaction"

    return _verdict(ev, facts, [
        (lambda f: f.keyed_count(*CLAIM_OUTCOMES) > 0, "no claim record carries an idempotency key"),
        (lambda f: again > 0, ("no event reached the claim on two deliveries in the window, so a key that changes "
                               "between deliveries cannot show (and no key holds the Lambda request id)")),
    ], found, lambda f: (f"{_plural(again, 'event')} delivered more than once kept their key; no key holds the "
                         "Lambda request id"), rows=bad)


# --------------------------------------------------------------------------- IW102 / IW103
SIDE_EFFECT_ORDER_QUERY = """\
# IW102 and IW103: per invocation and key, the first claim, the first and last side effect, the first completion
filter ispresent(schema_version) and ispresent(idempotency_key)
  and outcome in ["claimed", "stale_claim_takeover", "side_effect_started", "succeeded"]
| fields toMillis(@timestamp) as t, strcontains(outcome, "side_effect_started") as is_side,
         strcontains(outcome, "succeeded") as is_done
| fields 1 - is_side - is_done as is_claim
| fields t + (1 - is_side) * 1e15 as side_t, t + (1 - is_claim) * 1e15 as claim_t, t + (1 - is_done) * 1e15 as done_t,
         t * is_side as last_side_t
| stats sum(is_side) as side_effects, sum(is_claim) as claims, sum(is_done) as completions,
        min(side_t) as first_side_ms, min(claim_t) as first_claim_ms, min(done_t) as first_done_ms,
        max(last_side_t) as last_side_ms, min(t) as first_ms, max(t) as last_ms, earliest(event_id) as event_id
  by @log as log_group, operation, function_request_id as entity, idempotency_key
# IW102 found: a side effect strictly before the key's first claim in the invocation, or with no claim at all;
# IW103 found: the key marked COMPLETED strictly before a side effect of the invocation started
# (two records in the same millisecond cannot be ordered: not counted)
| fields least(1, greatest(0, first_claim_ms - first_side_ms)) as side_effect_first,
         least(1, greatest(0, last_side_ms - first_done_ms)) as completed_first
| filter side_effects > 0 and side_effect_first + completed_first > 0
"""


def _flagged(ev: Evidence, column: str) -> list[Mapping[str, Any]]:
    return [r for r in ev.rows if (num(r, column) or 0) > 0]


def _side_effect_before_claim(ev: Evidence, facts: Facts, o: DiagnoseOptions) -> Verdict:
    def found(rows: tuple) -> str:
        unclaimed = sum(1 for r in rows if (num(r, "first_claim_ms") or FAR_MS) >= FAR_MS)
        tail = f" ({unclaimed} with no claim at all in that invocation)" if unclaimed else ""
        return (f"{_plural(len(rows), 'invocation')} started a side effect before claiming its key{tail}: "
                "a concurrent or retried delivery repeats it")

    return _verdict(ev, facts, [
        (lambda f: f.keyed_count("side_effect_started") > 0,
         ("no side_effect_started record carries an idempotency key (record em.side_effect_started(rec, key=...) "
          "before the call)")),
        (lambda f: _claims(f) > 0, "no claimed record: the claim step is not recorded"),
    ], found, lambda f: (f"{_plural(f.keyed_count('side_effect_started'), 'side effect')} each started after "
                         "its key was claimed"), rows=_flagged(ev, "side_effect_first"))


def _completed_before_side_effect(ev: Evidence, facts: Facts, o: DiagnoseOptions) -> Verdict:
    return _verdict(ev, facts, [
        (lambda f: f.keyed_count("side_effect_started") > 0,
         "no side_effect_started record carries an idempotency key"),
        (lambda f: f.keyed_count("succeeded") > 0, "no succeeded record carries an idempotency key"),
    ], lambda rows: (f"{_plural(len(rows), 'invocation')} marked the key COMPLETED before a side effect started: "
                     "if the side effect fails, every retry skips it"),
        lambda f: "every completion came after the invocation's side effects started",
        rows=_flagged(ev, "completed_first"))


# --------------------------------------------------------------------------- IW104 / IW105
REPROCESSED_KEYS_QUERY = """\
# IW104 and IW105: per key, completions and caught duplicates, by the log stream (execution environment)
filter ispresent(schema_version) and ispresent(idempotency_key) and outcome in ["succeeded", "duplicate_completed"]
| fields toMillis(@timestamp) as t, strcontains(outcome, "succeeded") as is_done
| fields 1 - is_done as is_dup, t + (1 - is_done) * 1e15 as done_first_t, t * is_done as done_last_t,
         t * (1 - is_done) as dup_t
| stats sum(is_done) as completions, sum(is_dup) as detections, min(done_first_t) as first_done_ms,
        max(done_last_t) as last_done_ms, max(dup_t) as last_detect_ms, min(t) as stream_first_ms,
        max(t) as stream_last_ms
  by @log as log_group, operation, idempotency_key, @logStream as stream
| fields least(1, completions) as completed_here, greatest(0, completions - 1) as repeats_here
| fields detections * completed_here as same_stream, detections * (1 - completed_here) as other_stream
| stats sum(completions) as completions, sum(completed_here) as completion_streams,
        sum(repeats_here) as same_stream_repeats, sum(same_stream) as same_stream_detections,
        sum(other_stream) as other_stream_detections, min(first_done_ms) as first_done_ms,
        max(last_done_ms) as last_done_ms, max(last_detect_ms) as last_detect_ms, min(stream_first_ms) as first_ms,
        max(stream_last_ms) as last_ms
  by log_group, operation, idempotency_key as entity
# kept: keys completed more than once (processed again), and keys whose duplicate was caught
| filter completions > 0 and (completions > 1 or same_stream_detections + other_stream_detections > 0)
"""


@dataclass(frozen=True)
class _Reprocessing:
    """What the per-key rows of REPROCESSED_KEYS_QUERY say about one function/operation."""

    reprocessed: tuple[Mapping[str, Any], ...]  # keys completed more than once
    detections_same: int  # caught duplicates on a stream that completed the key
    detections_other: int  # caught duplicates on a stream that never completed it: the record is shared
    max_detect_gap_ms: float | None  # latest caught duplicate after the key's first completion
    all_elsewhere: bool  # every key processed again was completed on another stream each time, never twice on one

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]]) -> _Reprocessing:
        again = tuple(r for r in rows if (num(r, "completions") or 0) > 1)
        gaps = [(num(r, "last_detect_ms") or 0) - (num(r, "first_done_ms") or 0) for r in rows
                if (num(r, "last_detect_ms") or 0) > 0]
        return cls(again, int(sum(num(r, "same_stream_detections") or 0 for r in rows)),
                   int(sum(num(r, "other_stream_detections") or 0 for r in rows)), max(gaps) if gaps else None,
                   all((num(r, "same_stream_repeats") or 0) == 0 for r in again))

    def in_memory(self, facts: Facts) -> bool:
        """The in-memory pattern: duplicates caught only on the stream that completed the key, keys processed again
        only on other streams (several streams in the log group)."""
        return (facts.streams >= 2 and bool(self.reprocessed) and self.all_elsewhere and self.detections_other == 0
                and self.detections_same > 0)

    def gaps(self) -> str:
        g = [(num(r, "last_done_ms") or 0) - (num(r, "first_done_ms") or 0) for r in self.reprocessed]
        caught = ("" if self.max_detect_gap_ms is None else
                  f"; duplicates up to {_seconds(self.max_detect_gap_ms)} after completion were caught")
        return f"processed again {_seconds(min(g))} to {_seconds(max(g))} after the first completion{caught}"


def _streams_known(f: Facts) -> bool:
    return f.streams >= 2


_NO_STREAMS = ("the log group's events carry a single log stream ({cold} cold starts wrote into it), so execution "
               "environments cannot be told apart: collect with log streams (CloudWatch, filter-log-events output)")


def _in_memory(ev: Evidence, facts: Facts, o: DiagnoseOptions) -> Verdict:
    rp = _Reprocessing.of(ev.rows)
    if rp.in_memory(facts):
        return Verdict(FAIL, (f"{_plural(len(rp.reprocessed), 'key')} processed again on another execution "
                              f"environment, while {_plural(rp.detections_same, 'duplicate')} were caught only on the "
                              f"environment that completed the key: the deduplication lives in memory "
                              f"({rp.gaps()})"), _ordered(rp.reprocessed))
    if not _streams_known(facts):
        return Verdict(UNK, _NO_STREAMS.format(cold=facts.cold_starts))
    if rp.detections_other:
        return Verdict(PASS, (f"{_plural(rp.detections_other, 'duplicate')} caught on an execution environment other "
                              "than the one that completed the key: the record is shared"))
    if rp.reprocessed:
        return Verdict(PASS, "keys processed again do not follow the in-memory pattern (see IW105)")
    if rp.detections_same:
        return Verdict(UNK, ("every caught duplicate landed on the execution environment that had "
                             "completed its key"))
    return Verdict(UNK, "no duplicate of a completed key in the window")


def _outlived(ev: Evidence, facts: Facts, o: DiagnoseOptions) -> Verdict:
    rp = _Reprocessing.of(ev.rows)
    if rp.reprocessed and not rp.in_memory(facts):
        unsure = ("" if _streams_known(facts) else
                  "; the events carry no log streams, so a deduplication kept in memory (IW104) looks the same")
        return Verdict(FAIL, (f"{_plural(len(rp.reprocessed), 'key')} completed again after a fresh claim: the "
                              f"idempotency record was gone when the replay came ({rp.gaps()}); keep records "
                              f"longer than the source can replay{unsure}"), _ordered(rp.reprocessed))
    if rp.reprocessed:
        return Verdict(PASS, "keys processed again follow the in-memory pattern (see IW104), not an expiry")
    if rp.detections_same or rp.detections_other:
        n = rp.detections_same + rp.detections_other
        return Verdict(PASS, (f"{_plural(n, 'duplicate')} of completed keys caught, up to "
                              f"{_seconds(rp.max_detect_gap_ms)} after completion; none processed again"))
    return Verdict(UNK, "no duplicate of a completed key in the window")


# --------------------------------------------------------------------------- IW106
REDELIVERED_DURING_PROCESSING_QUERY = """\
# IW106: per SQS message, when each delivery (attempt) received it, hit an in-progress claim, finished it
filter ispresent(schema_version) and event_source = "sqs" and ispresent(event_id) and attempt >= 1
  and outcome in ["received", "duplicate_in_progress", "succeeded", "retryable_failure", "permanent_failure",
                  "poison_message", "ambiguous_commit", "timeout_budget_abort"]
| fields toMillis(@timestamp) as t, strcontains(outcome, "received") as is_rcv,
         strcontains(outcome, "duplicate_in_progress") as is_dip
| fields t + (1 - is_rcv) * 1e15 as rcv_t, t + (1 - is_dip) * 1e15 as dip_t, t * (1 - is_rcv - is_dip) as done_t
| stats min(rcv_t) as received_ms, min(dip_t) as dip_ms, max(done_t) as done_ms, sum(is_dip) as dips
  by @log as log_group, operation, event_id, attempt
| fields greatest(0, 2 - attempt) as is_first
| fields received_ms + (1 - is_first) * 1e15 as first_rcv, done_ms * is_first as first_done,
         done_ms * (1 - is_first) as later_done, dip_ms + is_first * 1e15 as later_dip,
         dip_ms + (1 - is_first) * 1e15 as first_dip
| stats min(first_rcv) as first_received_ms, max(first_done) as first_done_ms, max(later_done) as later_done_ms,
        min(later_dip) as later_dip_ms, min(first_dip) as first_dip_ms, sum(dips) as dips,
        max(attempt) as max_attempt
  by log_group, operation, event_id as entity
| fields least(later_dip_ms, first_dip_ms) - first_received_ms as redelivered_after_ms,
         first_received_ms as first_ms, greatest(first_done_ms, later_done_ms) as last_ms
# found: a delivery hit the in-progress claim of another delivery that then finished the message, at least
# {min_redelivery_gap_ms} ms after the first receive (a visibility timeout is never shorter than 1 s)
| filter (later_dip_ms < first_done_ms or first_dip_ms < later_done_ms)
  and redelivered_after_ms >= {min_redelivery_gap_ms}
"""


def _visibility(ev: Evidence, facts: Facts, o: DiagnoseOptions) -> Verdict | None:
    if "sqs" not in facts.event_sources:
        return None

    def found(rows: tuple) -> str:
        gaps = [num(r, "redelivered_after_ms") or 0 for r in rows]
        return (f"{_plural(len(rows), 'message')} redelivered {_seconds(min(gaps))} to {_seconds(max(gaps))} after "
                "the first receive, while the first delivery was still processing it: the queue's visibility "
                "timeout is shorter than the processing time")

    return _verdict(ev, facts, [(lambda f: f.redeliveries > 0, "no SQS redelivery (attempt > 1) in the window")],
                    found, lambda f: (f"{_plural(f.redeliveries, 'redelivery')}, none while an earlier delivery "
                                      "was still processing the message"))


# --------------------------------------------------------------------------- IW107
PERMANENT_RETRIED_QUERY = """\
# IW107: per event, the deliveries that failed it permanently without recording it as done
filter ispresent(schema_version) and outcome = "permanent_failure" and ispresent(event_id)
  and coalesce(idempotency_status, "") != "COMPLETED"
| fields toMillis(@timestamp) as t
| stats count_distinct(function_request_id) as failed_deliveries, max(attempt) as max_attempt,
        min(t) as first_ms, max(t) as last_ms, earliest(error_code) as error_code
  by @log as log_group, operation, event_id as entity
# found: the same event failed permanently on two deliveries or more (a permanent failure recorded COMPLETED is
# final: a later delivery of that event is a duplicate, not a retry)
| filter failed_deliveries >= 2
"""


def _permanent_retried(ev: Evidence, facts: Facts, o: DiagnoseOptions) -> Verdict:
    def found(rows: tuple) -> str:
        most = int(max(num(r, "failed_deliveries") or 0 for r in rows))
        return (f"{_plural(len(rows), 'event')} failed permanently on delivery after delivery (up to {most}): "
                "a permanent failure is retried instead of quarantined")

    return _verdict(ev, facts, [(lambda f: f.count("permanent_failure") > 0,
                                 "no permanent_failure record in the window")], found,
                    lambda f: f"{_plural(f.count('permanent_failure'), 'permanent failure')}, none retried")


# --------------------------------------------------------------------------- IW108
SHARD_BLOCKED_QUERY = """\
# IW108: per stream record, failed deliveries and the record age at each delivery
filter ispresent(schema_version) and event_source in ["kinesis", "dynamodb", "msk", "self-managed-kafka"]
  and ispresent(event_id) and outcome in ["received", "retryable_failure", "permanent_failure"]
| fields toMillis(@timestamp) as t, 1 - strcontains(outcome, "received") as is_fail
| stats sum(is_fail) as failures, count_distinct(function_request_id) as deliveries,
        min(record_age_ms) as first_age_ms, max(record_age_ms) as max_age_ms, min(t) as first_ms, max(t) as last_ms
  by @log as log_group, operation, event_id as entity
# found: the same record failed on {min_shard_failures} deliveries or more while its age grew (the shard waited)
| filter failures >= {min_shard_failures} and max_age_ms > first_age_ms
"""


def _shard_blocked(ev: Evidence, facts: Facts, o: DiagnoseOptions) -> Verdict | None:
    if not facts.event_sources & set(STREAM_SOURCES):
        return None

    def found(rows: tuple) -> str:
        age = max(num(r, "max_age_ms") or 0 for r in rows)
        return (f"{_plural(len(rows), 'stream record')} failed on {o.min_shard_failures} deliveries or more while "
                f"their age grew to {_seconds(age)}: a poison record blocks its shard instead of being quarantined")

    failures = ("retryable_failure", "permanent_failure")
    return _verdict(ev, facts, [(lambda f: f.count(*failures) > 0, "no failed stream record in the window")],
                    found, lambda f: (f"{_plural(f.count(*failures), 'failure')}, no record failed "
                                      f"{o.min_shard_failures} times"))


# --------------------------------------------------------------------------- IW109
BUDGET_IGNORED_QUERY = """\
# IW109: per invocation, side effects with the time left when they started, and whether it timed out
filter (ispresent(schema_version) and outcome = "side_effect_started" and ispresent(remaining_time_ms))
  or @type = "REPORT"
| fields coalesce(function_request_id, @requestId) as request_id, toMillis(@timestamp) as t,
         strcontains(@message, "Status: timeout") + coalesce(strcontains(record.status, "timeout"), 0) as is_timeout
| stats count(remaining_time_ms) as side_effects, min(remaining_time_ms) as min_remaining_ms,
        sum(is_timeout) as timeouts, earliest(operation) as operation, earliest(idempotency_key) as idempotency_key,
        min(t) as first_ms, max(t) as last_ms
  by @log as log_group, request_id as entity
# kept: invocations that started a side effect and then timed out (the budget is compared by the rule)
| filter side_effects > 0 and timeouts > 0
"""


def _budget_ignored(ev: Evidence, facts: Facts, o: DiagnoseOptions) -> Verdict:
    budget = o.safe_budget_ms if o.safe_budget_ms is not None else facts.required_time_ms
    rows = [r for r in ev.rows if budget is None or (num(r, "min_remaining_ms") or 0) < budget]
    where = (f"below the {budget:.0f} ms safe budget" if budget is not None else
             "(no safe budget known: pass --safe-budget-ms, or record timeout_budget_abort with required_time_ms)")

    def found(bad: tuple) -> str:
        left = [num(r, "min_remaining_ms") or 0 for r in bad]
        return (f"{_plural(len(bad), 'invocation')} started a side effect with {min(left):.0f} to {max(left):.0f} ms "
                f"left {where} and then timed out: ambiguous commits")

    return _verdict(ev, facts, [
        (lambda f: f.timed_side_effects > 0, "no side_effect_started record carries remaining_time_ms"),
        (lambda f: f.reports > 0, "no REPORT line in the log group, so timeouts are not visible"),
    ], found, lambda f: (f"{_plural(f.timed_side_effects, 'side effect')} started; none was followed by a timeout "
                         + ("" if budget is None else f"with less than {budget:.0f} ms left")), rows=rows)


# --------------------------------------------------------------------------- the table
_L = "https://docs.aws.amazon.com/lambda/latest/dg/"
_PT = "https://docs.aws.amazon.com/powertools/python/latest/utilities/idempotency/"
H, MED = Severity.HIGH, Severity.MEDIUM

RULES: tuple[Rule, ...] = (
    Rule("IW101", "key-from-delivery",
         "The idempotency key is derived from the business operation, never from the delivery or the invocation.",
         H, "A key built from the Lambda request id (or anything else that changes between deliveries) makes every "
            "redelivery a new transaction, so duplicates are processed again.",
         _PT + "#choosing-a-payload-subset-for-idempotency", KEY_FROM_DELIVERY_QUERY,
         "one event: a key holding the request id, or a new key on each of two deliveries or more (the found "
         "column)",
         "event", "event_id", _key_from_delivery, ("duplicates",)),
    Rule("IW102", "side-effect-before-claim",
         "The key is claimed atomically before the side effect starts.",
         H, "A side effect started before the claim runs again when a concurrent or retried delivery arrives, "
            "because nothing held the key.",
         _PT + "#idempotency-request-flow", SIDE_EFFECT_ORDER_QUERY,
         "one invocation: side_effect_started earlier than the key's first claim, or with no claim (the "
         "side_effect_first column)",
         "invocation", "request_id", _side_effect_before_claim, ("duplicates", "in_progress")),
    Rule("IW103", "completed-before-side-effect",
         "The record is marked COMPLETED only after the side effect succeeded.",
         H, "A key marked COMPLETED before its side effect runs turns a failed side effect into a lost one: every "
            "retry finds the key completed and skips it.",
         _PT + "#idempotency-request-flow", SIDE_EFFECT_ORDER_QUERY,
         "one invocation: succeeded earlier than a side_effect_started of the same key (the completed_first "
         "column)",
         "invocation", "request_id", _completed_before_side_effect, ("duplicates",)),
    Rule("IW104", "in-memory-dedupe",
         "Deduplication survives execution environments: the record lives in a durable store every environment "
         "shares.", H,
         "Duplicates caught only in the environment that processed the original, while copies landing in another "
         "environment are processed again, show a deduplication kept in memory.",
         _PT + "#persistence-layers", REPROCESSED_KEYS_QUERY,
         "one key processed again on another log stream, with caught duplicates only on the completing stream",
         "key", "idempotency_key", _in_memory, ("duplicates",)),
    Rule("IW105", "replay-outlived-record",
         "The idempotency record outlives every replay: its expiry covers the source's redelivery window "
         "(queue retention and redrive, stream retention, client retries).", H,
         "A key completed twice after a fresh claim means the record had expired (or was lost) when the replay "
         "came, so the replay was processed as new.",
         _PT + "#expiring-idempotency-records", REPROCESSED_KEYS_QUERY,
         "one key completed again after a fresh claim (not the in-memory pattern of IW104)",
         "key", "idempotency_key", _outlived, ("duplicates", "stuck"), ("IW008",)),
    Rule("IW106", "redelivered-during-processing",
         "The SQS visibility timeout covers the function: a message is not redelivered while its first delivery "
         "still runs.", H,
         "A message that becomes visible again while it is still being processed is delivered to a second "
         "environment, which meets the in-progress claim (or, once the claim expires, processes it twice).",
         _L + "services-sqs-configure.html", REDELIVERED_DURING_PROCESSING_QUERY,
         "one message: duplicate_in_progress in one delivery while another delivery later finished it, at least "
         "--min-redelivery-gap (1 s) after the first receive",
         "message", "event_id", _visibility, ("in_progress", "duplicates"), ("IW001",)),
    Rule("IW107", "permanent-failure-retried",
         "Permanent failures are not retried: a record that can never succeed is quarantined at once.", MED,
         "A permanent failure reported as retryable comes back on every redelivery until the source gives up, "
         "delaying the records behind it and hiding the failure.",
         _L + "services-sqs-errorhandling.html", PERMANENT_RETRIED_QUERY,
         "one event: permanent_failure (not recorded COMPLETED) on two deliveries or more",
         "event", "event_id", _permanent_retried, ("retries", "poison"), ("IW004",)),
    Rule("IW108", "poison-blocks-shard",
         "A poison stream record is quarantined (bisect, on-failure destination), not retried while its shard "
         "waits.", H,
         "Stream sources retry a failing record in order: until it is quarantined, every record behind it in the "
         "shard waits and the iterator age grows.",
         _L + "services-kinesis-errors.html", SHARD_BLOCKED_QUERY,
         "one stream record: --min-shard-failures (3) failed deliveries while its record age grew",
         "stream record", "event_id", _shard_blocked, ("iterator_age", "retries"),
         ("IW005", "IW006", "IW007")),
    Rule("IW109", "budget-ignored",
         "A side effect starts only with enough time left; below the safe budget the handler refuses "
         "(timeout_budget_abort).", H,
         "A side effect started with too little time left is cut by the timeout: whether it happened is unknown "
         "(an ambiguous commit), and the retry must reconcile it.",
         _L + "configuration-timeout.html", BUDGET_IGNORED_QUERY,
         "one invocation: side_effect_started with remaining_time_ms below the safe budget, then Status: timeout",
         "invocation", "request_id", _budget_ignored, ("timeout_aborts",)),
)
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}
assert len(RULES_BY_ID) == len(RULES), "rule ids must be unique"
