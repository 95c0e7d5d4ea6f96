"""The normalized resource model both audit sources produce (live: :mod:`.live`, static: :mod:`.static_cfn`,
:mod:`.static_tf`); the one rule engine (:mod:`.rules`) evaluates only this model, so the same
mis-configuration gives the same findings whichever source it was read from.

Resources are identified by name (function name, queue name, table name, stream name), never by ARN: an ARN,
a ``!GetAtt Queue.Arn`` and a Terraform ``${aws_sqs_queue.q.arn}`` all normalize to the queue's name.
A value the source could not resolve is :data:`UNKNOWN` (not ``None``: ``None`` means "not set").
Times are seconds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from alarms.audit import constants as C
from alarms.audit.types import ResourceKind

__all__ = [
    "UNKNOWN",
    "Alarm",
    "Expected",
    "Function",
    "Inventory",
    "Location",
    "Mapping_",
    "Queue",
    "Table",
    "as_bool",
    "as_int",
    "idempotency_tables",
    "is_unknown",
    "name_from_arn",
    "redrive_from_policy",
]


class _Unknown:
    """The type of :data:`UNKNOWN`, a value a static source could not resolve; made once (copies and pickles
    give back the module's instance, so ``is`` comparisons hold)."""

    __slots__ = ()

    def __reduce__(self) -> str:
        return "UNKNOWN"

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:  # never truthy by accident: checks must ask is_unknown() first
        raise TypeError("UNKNOWN has no truth value; test is_unknown(x) first")


UNKNOWN: Any = _Unknown()


def is_unknown(value: Any) -> bool:
    return value is UNKNOWN


def as_int(v: Any) -> Any:
    """A template value as int (``"30"`` -> 30); None and UNKNOWN pass through; anything else is UNKNOWN."""
    if v is None or is_unknown(v):
        return v
    try:
        return int(v)
    except (TypeError, ValueError):
        return UNKNOWN


def as_bool(v: Any) -> Any:
    """``"true"``/``"false"`` (any case) as bool; other values unchanged (a non-bool then fails ``is True``)."""
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    return v


def name_from_arn(arn: Any) -> Any:
    """Resource name from an ARN: ``arn:aws:sqs:r:a:q`` -> ``q``; ``...:function:f[:alias]`` -> ``f``;
    ``...:stream/s[/consumer/...]`` -> ``s``; ``...:table/t/stream/...`` -> ``t``. A non-ARN is returned as is;
    None and UNKNOWN pass through."""
    if arn is None or is_unknown(arn) or not isinstance(arn, str) or not arn.startswith("arn:"):
        return arn
    parts = arn.split(":", 6)
    if len(parts) < 6:
        return arn
    service, rest = parts[2], ":".join(parts[5:])
    if service == "lambda" and rest.startswith("function:"):
        return rest.split(":")[1]
    if "/" in rest:
        return rest.split("/")[1]
    return rest


@dataclass(frozen=True)
class Location:
    """Where a resource was read from: a template file and logical id / Terraform address (static), or the
    resource ARN (live). ``line`` and ``column`` (1-based) are where the logical id (the Terraform resource name)
    is written in the file, None when unknown."""

    uri: str
    logical_id: str | None = None
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class Function:
    """A Lambda function. ``async_invoked``: invoked asynchronously by a service (EventBridge, SNS, S3, ...);
    ``dead_letter`` / ``on_failure``: the async-invocation DLQ (``DeadLetterConfig``) and the
    ``EventInvokeConfig`` on-failure destination, as names. ``handler``: the ``Handler`` setting
    (``module.function``); ``tags``: its tags; ``invoked_by``: the ``emitter.contract.EventSource`` values of
    what invokes it other than an event source mapping (API Gateway, EventBridge, SNS, ...), in template order."""

    name: str
    timeout_s: Any = 3
    environment: Mapping[str, Any] = field(default_factory=dict)
    async_invoked: Any = False
    dead_letter: Any = None
    on_failure: Any = None
    location: Location | None = None
    handler: Any = None
    tags: Mapping[str, Any] = field(default_factory=dict)
    invoked_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mapping_:
    """An event source mapping. ``source_kind``: sqs | kinesis | dynamodb; ``source``: queue / stream / table
    name; ``on_failure``: destination name; -1 = unbounded for the two stream limits."""

    function: Any
    source_kind: str
    source: Any
    batch_size: Any = None
    batching_window_s: Any = None
    function_response_types: Any = ()
    bisect: Any = False
    max_retry_attempts: Any = -1
    max_record_age_s: Any = -1
    on_failure: Any = None
    location: Location | None = None

    @property
    def name(self) -> str:
        """Display name: ``<source> -> <function>``."""
        return f"{_txt(self.source)} -> {_txt(self.function)}"


@dataclass(frozen=True)
class Queue:
    """An SQS queue. ``dead_letter``: the redrive target's name; ``max_receive_count`` None without a policy."""

    name: str
    visibility_timeout_s: Any = 30
    fifo: Any = False
    dead_letter: Any = None
    max_receive_count: Any = None
    location: Location | None = None


@dataclass(frozen=True)
class Table:
    """A DynamoDB table. ``ttl_attribute`` None when TTL is disabled."""

    name: str
    hash_key: Any = None
    range_key: Any = None
    ttl_attribute: Any = None
    pitr: Any = False
    location: Location | None = None


@dataclass(frozen=True)
class Alarm:
    """A CloudWatch alarm: the metrics it reads as (namespace, metric name, dimensions) triples
    (a metric-math alarm has several)."""

    name: str
    metrics: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = ()
    location: Location | None = None

    def watches(self, namespace: str, metric: str, dimension: str, value: str) -> bool:
        return any(ns == namespace and m == metric and (dimension, value) in dims for ns, m, dims in self.metrics)


@dataclass(frozen=True)
class Expected:
    """A resource the audit was told to expect (stack config, ``--function``, ``--table``): ``kind`` what it is
    (function, queue, table), ``named_by`` who named it, ``found`` whether the source holds it."""

    name: str
    kind: ResourceKind
    found: bool
    named_by: str = ""
    location: Location | None = None


@dataclass(frozen=True)
class Inventory:
    """Everything one source read. ``idempotency_tables``: names of the tables audited as idempotency tables.
    ``alarms_known``: False when the source holds no alarm information at all (a template without alarms and
    no alarm template given): alarm rules then report unknown rather than fail. ``expected``: see below."""

    source: str
    functions: tuple[Function, ...] = ()
    mappings: tuple[Mapping_, ...] = ()
    queues: tuple[Queue, ...] = ()
    tables: tuple[Table, ...] = ()
    alarms: tuple[Alarm, ...] = ()
    idempotency_tables: frozenset[str] = frozenset()
    alarms_known: bool = True
    expected: tuple[Expected, ...] = ()
    """Resources the audit was told to expect, found or not (one not found is a failed check: auditing the wrong
    account or Region must not read as a pass)."""

    # name indexes, built once per inventory (cached_property writes the instance __dict__, which a frozen
    # dataclass allows): the rules look resources up by name for every mapping and queue
    @cached_property
    def _functions_by_name(self) -> dict[str, Function]:
        return {f.name: f for f in reversed(self.functions)}

    @cached_property
    def _queues_by_name(self) -> dict[str, Queue]:
        return {q.name: q for q in reversed(self.queues)}

    def function(self, name: Any) -> Function | None:
        """The first function named ``name`` (None for UNKNOWN or a missing one)."""
        return self._functions_by_name.get(name) if isinstance(name, str) else None

    def queue(self, name: Any) -> Queue | None:
        """The first queue named ``name`` (None for UNKNOWN or a missing one)."""
        return self._queues_by_name.get(name) if isinstance(name, str) else None

    @cached_property
    def sqs_sources(self) -> frozenset[str]:
        """Names of the queues an SQS event source mapping reads."""
        return frozenset(m.source for m in self.mappings if m.source_kind == "sqs" and isinstance(m.source, str))

    @cached_property
    def dead_letter_queues(self) -> frozenset[str]:
        """Every queue of the inventory used as a dead-letter target: redrive target, stream on-failure
        destination, async DLQ or on-failure destination."""
        names = {q.dead_letter for q in self.queues} | {m.on_failure for m in self.mappings}
        names |= {f.dead_letter for f in self.functions} | {f.on_failure for f in self.functions}
        return frozenset(n for n in names if isinstance(n, str) and n in self._queues_by_name)


def _txt(v: Any) -> str:
    return "?" if is_unknown(v) else str(v)


def redrive_from_policy(policy: Any) -> tuple[Any, Any]:
    """(dead-letter queue name, maxReceiveCount) from an SQS ``RedrivePolicy`` (a JSON string or mapping), as
    both sources store it; ``(None, None)`` without one, ``(UNKNOWN, UNKNOWN)`` when unreadable."""
    if policy is None or policy == "":
        return None, None
    if is_unknown(policy):
        return UNKNOWN, UNKNOWN
    if isinstance(policy, str):
        try:
            policy = json.loads(policy)
        except ValueError:
            return UNKNOWN, UNKNOWN
    if not isinstance(policy, dict):
        return UNKNOWN, UNKNOWN
    target = policy.get("deadLetterTargetArn")
    count = policy.get("maxReceiveCount")
    if isinstance(count, str) and count.strip().lstrip("-").isdigit():
        count = int(count)
    return name_from_arn(target) if target is not None else None, count


def idempotency_tables(functions: Iterable[Function], tables: Iterable[Table]) -> frozenset[str]:
    """Names of the ``tables`` a function's idempotency-table environment variable names
    (:data:`~alarms.audit.constants.IDEMPOTENCY_TABLE_ENV_KEYS`; a name or an ARN)."""
    names = {t.name for t in tables}
    out = set()
    for f in functions:
        if is_unknown(f.environment):
            continue
        for k in C.IDEMPOTENCY_TABLE_ENV_KEYS:
            v = name_from_arn(f.environment.get(k))
            if isinstance(v, str) and v in names:
                out.add(v)
    return frozenset(out)
