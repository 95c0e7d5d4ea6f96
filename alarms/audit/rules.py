"""The audit rules: ONE table (:data:`RULES`), one engine (:func:`evaluate`).

Each rule is a :class:`Rule` row: id, severity, the kind of resource it checks, a one-line rationale, the AWS
documentation page it rests on, the dashboard signals a failure explains, and a check function. A check gets
one resource of its kind plus the whole :class:`~alarms.audit.model.Inventory` and the :class:`AuditOptions`,
and yields ``(status, message)`` pairs (nothing = the rule does not apply to that resource). Adding a rule is
one row here (and one test that it fails once and passes once).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from alarms.audit import constants as C
from alarms.audit.exceptions import EmptyAuditError, SuppressionError
from alarms.audit.model import UNKNOWN, Expected, Function, Inventory, Location, Mapping_, Queue, Table, is_unknown
from alarms.audit.types import FindingStatus, ResourceKind, Severity

__all__ = ["RULES", "RULES_BY_ID", "AuditOptions", "Finding", "Rule", "evaluate"]

Check = Callable[[Any, Inventory, "AuditOptions"], Iterable[tuple[FindingStatus, str]]]
FAIL, PASS, UNK = FindingStatus.FAIL, FindingStatus.PASS, FindingStatus.UNKNOWN


@dataclass(frozen=True)
class AuditOptions:
    """What the rules compare against besides the inventory.

    - ``key_attr`` / ``expiry_attr``: the idempotency record layout (Powertools defaults ``id`` / ``expiration``).
    - ``expected_alarms``: function name -> alarm names the idemwatch catalogue defines for it (from the stack
      config); empty = the catalogue rule does not run.
    """

    key_attr: str = C.POWERTOOLS_KEY_ATTR
    expiry_attr: str = C.POWERTOOLS_EXPIRY_ATTR
    expected_alarms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Rule:
    """One row of the rule table. ``signals``: dashboard signal keys (``dashboard.constants.SIGNALS``) whose
    numbers a failure of this rule explains."""

    id: str
    slug: str
    severity: Severity
    kind: ResourceKind
    rationale: str
    doc: str
    check: Check
    signals: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finding:
    """The outcome of one rule on one resource (``resource`` is its name; see ``model``)."""

    rule: str
    severity: Severity
    kind: ResourceKind
    resource: str
    status: FindingStatus
    message: str
    location: Location | None = None
    suppressed_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"rule": self.rule, "severity": self.severity.value, "kind": self.kind.value,
                             "resource": self.resource, "status": self.status.value, "message": self.message}
        if self.location is not None:
            d["location"] = {"uri": self.location.uri, "logical_id": self.location.logical_id,
                             "line": self.location.line, "column": self.location.column}
        if self.suppressed_reason is not None:
            d["suppressed_reason"] = self.suppressed_reason
        return d


# --------------------------------------------------------------------------- helpers
def _unk(what: str) -> tuple[FindingStatus, str]:
    return UNK, f"{what} could not be resolved statically"


def _is_stream(m: Mapping_) -> bool:
    return m.source_kind in ("kinesis", "dynamodb")


# --------------------------------------------------------------------------- checks
def _visibility(m: Mapping_, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    if m.source_kind != "sqs":
        return
    q, f = inv.queue(m.source), inv.function(m.function)
    if is_unknown(m.source) or is_unknown(m.function):
        yield _unk("the mapping's queue or function")
        return
    if q is None or f is None:
        yield UNK, f"queue {m.source} or function {m.function} is not in the audited inventory"
        return
    if is_unknown(q.visibility_timeout_s) or is_unknown(f.timeout_s):
        yield _unk("VisibilityTimeout or the function Timeout")
        return
    need = C.SQS_VISIBILITY_FACTOR * int(f.timeout_s)
    vis = int(q.visibility_timeout_s)
    if vis < need:
        yield FAIL, (f"queue {q.name} VisibilityTimeout {vis} s < {C.SQS_VISIBILITY_FACTOR} x function {f.name} "
                     f"Timeout {f.timeout_s} s = {need} s")
    else:
        yield PASS, f"VisibilityTimeout {vis} s >= {need} s"


def _batch_item_failures(sqs: bool) -> Check:
    def check(m: Mapping_, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
        if (m.source_kind == "sqs") != sqs:
            return
        types = m.function_response_types
        if is_unknown(types):
            yield _unk("FunctionResponseTypes")
        elif "ReportBatchItemFailures" in (types or ()):
            yield PASS, "FunctionResponseTypes has ReportBatchItemFailures"
        else:
            yield FAIL, "FunctionResponseTypes lacks ReportBatchItemFailures: one failed record retries the whole batch"
    return check


def _redrive(q: Queue, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    if q.name not in inv.sqs_sources:
        return  # only source queues of a Lambda mapping need one (a DLQ itself does not)
    if is_unknown(q.dead_letter) or is_unknown(q.max_receive_count):
        yield _unk("RedrivePolicy")
    elif q.dead_letter is None or q.max_receive_count is None:
        yield FAIL, f"queue {q.name} has no RedrivePolicy: a poison message is retried until retention expires"
    elif not 1 <= int(q.max_receive_count) <= C.SQS_MAX_RECEIVE_COUNT_MAX:
        yield FAIL, f"maxReceiveCount {q.max_receive_count} is outside 1..{C.SQS_MAX_RECEIVE_COUNT_MAX}"
    elif inv.queue(q.dead_letter) is None:
        yield FAIL, f"RedrivePolicy names dead-letter queue {q.dead_letter}, which does not exist"
    else:
        yield PASS, f"redrive to {q.dead_letter} after {q.max_receive_count} receives"


def _flag(value: Any, what: str, ok: str, bad: str) -> tuple[FindingStatus, str]:
    """A setting that must be ``True``: unknown, pass with ``ok`` or fail with ``bad``."""
    if is_unknown(value):
        return _unk(what)
    return (PASS, ok) if value is True else (FAIL, bad)


def _bisect(m: Mapping_, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    if _is_stream(m):
        yield _flag(m.bisect, "BisectBatchOnFunctionError", "BisectBatchOnFunctionError is true",
                    "BisectBatchOnFunctionError is false: a poison record fails its whole batch until it expires")


def _stream_on_failure(m: Mapping_, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    if not _is_stream(m):
        return
    if is_unknown(m.on_failure):
        yield _unk("DestinationConfig.OnFailure")
    elif m.on_failure:
        yield PASS, f"discarded batches go to {m.on_failure}"
    else:
        yield FAIL, "no DestinationConfig.OnFailure: records discarded after the retry limit are lost without trace"


def _stream_bounded(m: Mapping_, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    if not _is_stream(m):
        return
    if is_unknown(m.max_retry_attempts) or is_unknown(m.max_record_age_s):
        yield _unk("MaximumRetryAttempts or MaximumRecordAgeInSeconds")
    elif int(m.max_retry_attempts) == C.STREAM_UNBOUNDED and int(m.max_record_age_s) == C.STREAM_UNBOUNDED:
        yield FAIL, ("MaximumRetryAttempts and MaximumRecordAgeInSeconds are both -1 (infinite): a failing batch "
                     "blocks its shard until the records expire")
    else:
        yield PASS, f"MaximumRetryAttempts {m.max_retry_attempts}, MaximumRecordAgeInSeconds {m.max_record_age_s}"


def _idem(t: Table, inv: Inventory) -> bool:
    return t.name in inv.idempotency_tables


def _ttl(t: Table, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    if not _idem(t, inv):
        return
    if is_unknown(t.ttl_attribute):
        yield _unk("TimeToLiveSpecification")
    elif t.ttl_attribute is None:
        yield FAIL, "TTL is disabled: expired idempotency records are never deleted"
    elif t.ttl_attribute != o.expiry_attr:
        yield FAIL, f"TTL attribute is {t.ttl_attribute!r}, the idempotency records expire on {o.expiry_attr!r}"
    else:
        yield PASS, f"TTL enabled on {t.ttl_attribute!r}"


def _key_schema(t: Table, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    if not _idem(t, inv):
        return
    if is_unknown(t.hash_key) or is_unknown(t.range_key):
        yield _unk("KeySchema")
    elif t.hash_key != o.key_attr or t.range_key is not None:
        got = t.hash_key + (f" + sort key {t.range_key}" if t.range_key else "") if t.hash_key else "none"
        yield FAIL, f"key schema is {got}; the idempotency record layout needs partition key {o.key_attr!r} only"
    else:
        yield PASS, f"partition key {t.hash_key!r}"


def _pitr(t: Table, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    if _idem(t, inv):
        yield _flag(t.pitr, "PointInTimeRecoverySpecification", "point-in-time recovery enabled",
                    "point-in-time recovery disabled")


def _in_progress_expiry(f: Function, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    raw = f.environment.get(C.ENV_IN_PROGRESS_EXPIRY) if not is_unknown(f.environment) else UNKNOWN
    if raw is None:
        return  # set in code (Powertools): not readable from configuration
    if is_unknown(raw) or is_unknown(f.timeout_s):
        yield _unk(f"{C.ENV_IN_PROGRESS_EXPIRY} or Timeout")
        return
    try:
        expiry = float(raw)
    except (TypeError, ValueError):
        yield FAIL, f"{C.ENV_IN_PROGRESS_EXPIRY}={raw!r} is not a number of seconds"
        return
    if expiry < float(f.timeout_s):
        yield FAIL, (f"in-progress expiry {raw} s < Timeout {f.timeout_s} s: a claim expires while its invocation "
                     "still runs, and a redelivery runs the same event concurrently")
    else:
        yield PASS, f"in-progress expiry {raw} s >= Timeout {f.timeout_s} s"


def _async_failure(f: Function, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    if is_unknown(f.async_invoked):
        yield _unk("whether the function is invoked asynchronously")
        return
    if f.async_invoked is not True:
        return
    if is_unknown(f.dead_letter) or is_unknown(f.on_failure):
        yield _unk("DeadLetterConfig or the on-failure destination")
    elif f.dead_letter or f.on_failure:
        yield PASS, f"failed async events go to {f.on_failure or f.dead_letter}"
    else:
        yield FAIL, "invoked asynchronously without an on-failure destination or DLQ: events that fail their retries are dropped"


def _alarm_on(inv: Inventory, namespace: str, metric: str, dim: str, value: Any, passed: str,
              missing: str) -> Iterator[tuple[FindingStatus, str]]:
    """PASS when an alarm of ``inv`` watches ``namespace``/``metric`` for ``dim=value``, else FAIL
    (``"<missing> <namespace> <metric> for <dim>=<value>"``); unknown while the alarms could not be read."""
    if (u := _alarms_unknown(inv)) is not None:
        yield u
    elif any(a.watches(namespace, metric, dim, value) for a in inv.alarms):
        yield PASS, passed
    else:
        yield FAIL, f"{missing} {namespace} {metric} for {dim}={value}"


def _alarms_unknown(inv: Inventory) -> tuple[FindingStatus, str] | None:
    return None if inv.alarms_known else (UNK, "no alarm information (pass --alarms-template)")


def _iterator_age_alarm(m: Mapping_, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    if not _is_stream(m):
        return
    if is_unknown(m.function):
        yield _unk("the mapping's function")
        return
    yield from _alarm_on(inv, C.LAMBDA_NS, C.ITERATOR_AGE, "FunctionName", m.function,
                         f"an alarm watches IteratorAge of {m.function}", "no alarm on")


def _dlq_alarm(q: Queue, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    if q.name not in inv.dead_letter_queues:
        return
    yield from _alarm_on(inv, C.SQS_NS, C.SQS_VISIBLE, "QueueName", q.name,
                         f"an alarm watches the depth of {q.name}", "dead-letter queue without an alarm on")


def _catalogue_alarms(f: Function, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    expected = o.expected_alarms.get(f.name)
    if not expected:
        return
    if (u := _alarms_unknown(inv)) is not None:
        yield u
        return
    have = {a.name for a in inv.alarms}
    missing = [n for n in expected if n not in have]
    if missing:
        yield FAIL, f"{len(missing)} of {len(expected)} catalogue alarms missing: {', '.join(missing)}"
    else:
        yield PASS, f"all {len(expected)} catalogue alarms present"


def _expected_found(e: Expected, inv: Inventory, o: AuditOptions) -> Iterator[tuple[FindingStatus, str]]:
    if e.found:
        yield PASS, f"{e.kind.value} {e.name} found"
    else:
        yield FAIL, (f"{e.kind.value} {e.name} ({e.named_by}) was not found in {inv.source}: wrong account, Region "
                     "or profile, or not deployed; none of its checks ran")


_L = "https://docs.aws.amazon.com/lambda/latest/dg/"
_DDB = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
_POWERTOOLS_IDEMPOTENCY = "https://docs.aws.amazon.com/powertools/python/latest/utilities/idempotency/"
_F, _M, _Q, _T = ResourceKind.FUNCTION, ResourceKind.MAPPING, ResourceKind.QUEUE, ResourceKind.TABLE
_E = ResourceKind.EXPECTED
H, MED, LOW = Severity.HIGH, Severity.MEDIUM, Severity.LOW

RULES: tuple[Rule, ...] = (
    Rule("IW001", "sqs-visibility-timeout", H, _M,
         "The source queue's visibility timeout is at least 6x the function timeout, so a message is not "
         "redelivered while its first invocation still runs.",
         _L + "services-sqs-configure.html", _visibility, ("in_progress", "duplicates")),
    Rule("IW002", "sqs-report-batch-item-failures", H, _M,
         "SQS mappings report partial batch failures, so one failed message does not redeliver the whole batch.",
         _L + "services-sqs-errorhandling.html", _batch_item_failures(True), ("duplicates", "retries")),
    Rule("IW003", "stream-report-batch-item-failures", H, _M,
         "Stream mappings report the first failed record, so a retry resumes there instead of replaying the batch.",
         _L + "services-kinesis-batchfailurereporting.html", _batch_item_failures(False), ("duplicates", "retries")),
    Rule("IW004", "sqs-redrive-policy", H, _Q,
         "A source queue has a redrive policy with a finite maxReceiveCount to a dead-letter queue that exists, "
         "so a poison message stops being retried.",
         "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html",
         _redrive, ("poison", "retries")),
    Rule("IW005", "stream-bisect-on-error", MED, _M,
         "Stream mappings split a failing batch, isolating a poison record instead of retrying it with its batch.",
         _L + "kinesis-on-failure-destination.html", _bisect, ("iterator_age", "retries")),
    Rule("IW006", "stream-on-failure-destination", H, _M,
         "Stream mappings send discarded batches to an on-failure destination, so nothing is dropped unseen.",
         _L + "kinesis-on-failure-destination.html", _stream_on_failure, ("poison",)),
    Rule("IW007", "stream-bounded-retry", H, _M,
         "Stream mappings bound MaximumRetryAttempts or MaximumRecordAgeInSeconds (default -1 = infinite), so "
         "one failing record cannot block its shard until the data expires.",
         _L + "services-kinesis-parameters.html", _stream_bounded, ("iterator_age", "retries")),
    Rule("IW008", "idempotency-table-ttl", H, _T,
         "The idempotency table has TTL enabled on the record's expiry attribute, so expired records are deleted.",
         _DDB + "TTL.html", _ttl, ("stuck",)),
    Rule("IW009", "idempotency-table-key-schema", H, _T,
         "The idempotency table's key schema matches the record layout (partition key 'id', no sort key, unless "
         "configured), or every write fails.",
         _POWERTOOLS_IDEMPOTENCY, _key_schema, ()),
    Rule("IW010", "idempotency-table-pitr", LOW, _T,
         "The idempotency table has point-in-time recovery, so a bad deploy or delete can be rolled back.",
         _DDB + "PointInTimeRecovery.html", _pitr, ()),
    Rule("IW011", "in-progress-expiry", H, _F,
         "The idempotency in-progress expiry (IDEMWATCH_IN_PROGRESS_EXPIRY_S) is at least the function timeout, "
         "so a running invocation's claim cannot be taken over.",
         _POWERTOOLS_IDEMPOTENCY, _in_progress_expiry, ("in_progress", "stuck")),
    Rule("IW012", "async-failure-destination", H, _F,
         "Asynchronously invoked functions have an on-failure destination or a DLQ, so events that fail all "
         "retries are kept.",
         _L + "invocation-async-retain-records.html", _async_failure, ("retries",)),
    Rule("IW013", "iterator-age-alarm", MED, _M,
         "Every stream consumer has an IteratorAge alarm, so a blocked shard pages someone.",
         _L + "monitoring-metrics-types.html", _iterator_age_alarm, ("iterator_age",)),
    Rule("IW014", "dlq-depth-alarm", MED, _Q,
         "Every dead-letter queue has an ApproximateNumberOfMessagesVisible alarm, so dead letters are noticed.",
         "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/"
         "sqs-available-cloudwatch-metrics.html", _dlq_alarm, ("poison",)),
    Rule("IW015", "idemwatch-catalogue-alarms", MED, _F,
         "Every function in the stack config has the idemwatch catalogue's alarms deployed.",
         "https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html",
         _catalogue_alarms, ("duplicates", "conflicts", "in_progress", "stuck")),
    Rule("IW016", "expected-resource-found", H, _E,
         "Every resource the stack config (or --function / --table) names exists where the audit looked, so an "
         "audit of the wrong account or Region fails instead of passing with nothing checked.",
         "https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html", _expected_found, ()),
)
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}
assert len(RULES_BY_ID) == len(RULES), "rule ids must be unique"


def _resources(inv: Inventory, kind: ResourceKind) -> tuple[Any, ...]:
    return {_F: inv.functions, _M: inv.mappings, _Q: inv.queues, _T: inv.tables, _E: inv.expected}[kind]


def evaluate(inv: Inventory, options: AuditOptions | None = None,
             suppressions: Iterable[Any] = ()) -> list[Finding]:
    """Run every rule on every resource of its kind. Returns findings (pass, fail, unknown, suppressed) in rule
    order, then resource order; an expected resource the source does not hold is a failed IW016 finding.

    ``suppressions``: objects with ``rule``, ``resource`` and ``reason`` (``alarms.config.Suppression``); a
    matching failed or unknown finding becomes ``suppressed`` with the reason (a pass stays a pass).
    Raises :class:`~alarms.audit.exceptions.SuppressionError` for a suppression naming an unknown rule id and
    :class:`~alarms.audit.exceptions.EmptyAuditError` when no rule applied to anything (an empty report would
    read as a pass: docs/audit.md, "unknown is not a pass").
    """
    options = options or AuditOptions()
    sup: dict[tuple[str, str], str] = {}
    for s in suppressions:
        if s.rule not in RULES_BY_ID:
            raise SuppressionError(f"suppression names unknown rule {s.rule!r} (known: {', '.join(RULES_BY_ID)})")
        sup[(s.rule, s.resource)] = s.reason
    out: list[Finding] = []
    for rule in RULES:
        for res in _resources(inv, rule.kind):
            for status, message in rule.check(res, inv, options):
                reason = sup.get((rule.id, res.name))
                if reason is not None and status is not PASS:
                    status = FindingStatus.SUPPRESSED
                out.append(Finding(rule.id, rule.severity, rule.kind, res.name, status, message, res.location,
                                   reason if status is FindingStatus.SUPPRESSED else None))
    if not out:
        read = (f"{len(inv.functions)} function(s), {len(inv.mappings)} event source mapping(s), "
                f"{len(inv.queues)} queue(s), {len(inv.tables)} table(s)")
        raise EmptyAuditError(f"nothing to audit in {inv.source}: {read}, and no rule applies to them (check the "
                              "account, Region or template; name the functions with --config or --function)")
    return out
