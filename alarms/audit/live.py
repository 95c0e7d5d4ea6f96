"""Live source: read a deployed account through boto3 (read-only calls) -> Inventory.

Sessions, credentials, Region, ``--profile`` and ``--role-arn`` come from the one session builder,
:class:`idemwatch.aws.AwsTarget`; AWS errors are translated by ``idemwatch.aws.translate`` into one-line messages
naming the IAM action. The calls made are exactly the ones in
:data:`IAM_ACTIONS` (the policy documented in docs/audit.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from alarms.audit import constants as C
from alarms.audit.exceptions import MalformedResponseError
from alarms.audit.model import (
    Alarm,
    Expected,
    Function,
    Inventory,
    Location,
    Mapping_,
    Queue,
    Table,
    name_from_arn,
    redrive_from_policy,
)
from alarms.audit.types import ResourceKind

__all__ = ["IAM_ACTIONS", "read_live"]

IAM_ACTIONS: tuple[str, ...] = (
    "lambda:ListFunctions", "lambda:ListEventSourceMappings",
    "lambda:GetFunctionEventInvokeConfig", "lambda:GetPolicy",
    "sqs:ListQueues", "sqs:GetQueueAttributes",
    "dynamodb:DescribeTable", "dynamodb:DescribeTimeToLive", "dynamodb:DescribeContinuousBackups",
    "cloudwatch:DescribeAlarms",
)
"""Every IAM action the live audit calls (all read-only; a test records the calls it makes against moto and
compares). ``sts:AssumeRole`` on the role is needed only with ``--role-arn``."""


def _code(exc: BaseException) -> str | None:
    from idemwatch.aws import error_code

    return error_code(exc)


def _call(fn: Any, action: str, resource: str | None = None, missing_ok: bool = False, **kw: Any) -> Any:
    from idemwatch.aws import translate

    try:
        return fn(**kw)
    except Exception as exc:
        if missing_ok and _code(exc) in ("ResourceNotFoundException", "ResourceNotFound"):
            return None
        raise translate(exc, action=action, resource=resource) from exc


def _pages(client: Any, op: str, key: str, action: str, required: bool = False, **kw: Any) -> Iterable[Any]:
    """The ``key`` entries of every page of ``op``. ``required``: the API always answers with ``key`` (Lambda's
    list operations), so a page without it is a malformed response (botocore turns a body that is not JSON into
    an empty page); otherwise a page without ``key`` is empty (SQS ListQueues leaves QueueUrls out when there is
    no queue)."""
    from idemwatch.aws import translate

    try:
        for page in client.get_paginator(op).paginate(**kw):
            if required and key not in page:
                raise MalformedResponseError(f"{action} returned a malformed response (no {key}; the body is not "
                                             "the documented JSON)")
            entries = page.get(key, [])
            if not isinstance(entries, list):
                raise MalformedResponseError(f"{action} returned a malformed response ({key} is not a list)")
            yield from entries
    except MalformedResponseError:
        raise
    except Exception as exc:
        raise translate(exc, action=action) from exc


def _member(response: Any, key: str, action: str) -> Any:
    """``response[key]``, or :class:`MalformedResponseError` naming the API action: a 200 response whose body is
    not the documented JSON (botocore then hands back the raw text, without the members)."""
    if not isinstance(response, dict) or key not in response:
        raise MalformedResponseError(f"{action} returned a malformed response (no {key}; the body is not the "
                                     "documented JSON)")
    return response[key]


def read_live(target: Any, functions: Iterable[str] = (), tables: Iterable[str] = (),
              queues: Iterable[str] = ()) -> Inventory:
    """Read the account ``target`` (an ``AwsTarget``) points at.

    ``functions``: audit only these function names (empty = every function in the Region). ``tables``: extra
    idempotency table names (besides those named by the functions' environment, constants
    ``IDEMPOTENCY_TABLE_ENV_KEYS``). ``queues``: queue names that must exist (the stack config's source queues
    and DLQs). Each named function, table and queue is in ``Inventory.expected``, found or not.
    Raises ``idemwatch.aws.AwsError`` subclasses (access denied, no credentials, ...) with the IAM action in the
    message, and :class:`MalformedResponseError`.
    """
    session = target.session()
    lam, sqs, ddb, cw = (target.client(s, session) for s in ("lambda", "sqs", "dynamodb", "cloudwatch"))
    wanted = set(functions)
    queues_wanted = list(queues)
    fns: list[Function] = []
    for f in _pages(lam, "list_functions", "Functions", "lambda:ListFunctions", required=True):
        name = _member(f, "FunctionName", "lambda:ListFunctions")
        if wanted and name not in wanted:
            continue
        inv_cfg = _call(lam.get_function_event_invoke_config, "lambda:GetFunctionEventInvokeConfig", name,
                        missing_ok=True, FunctionName=name) or {}
        on_failure = ((inv_cfg.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")
        fns.append(Function(
            name=name, timeout_s=f.get("Timeout", C.LAMBDA_TIMEOUT_DEFAULT_S),
            environment=dict((f.get("Environment") or {}).get("Variables") or {}),
            async_invoked=_async_invoked(lam, name),
            dead_letter=name_from_arn((f.get("DeadLetterConfig") or {}).get("TargetArn")),
            on_failure=name_from_arn(on_failure), location=Location(f.get("FunctionArn", name))))
    names = {f.name for f in fns}
    mappings = [_mapping(m) for m in _pages(lam, "list_event_source_mappings", "EventSourceMappings",
                                            "lambda:ListEventSourceMappings", required=True)
                if name_from_arn(m.get("FunctionArn")) in names]
    found_queues = []
    for url in _pages(sqs, "list_queues", "QueueUrls", "sqs:ListQueues"):
        attrs = _member(_call(sqs.get_queue_attributes, "sqs:GetQueueAttributes", url, QueueUrl=url,
                              AttributeNames=["All"]), "Attributes", "sqs:GetQueueAttributes")
        dead, count = redrive_from_policy(attrs.get("RedrivePolicy"))
        found_queues.append(Queue(url.rstrip("/").rsplit("/", 1)[-1], int(attrs.get("VisibilityTimeout", 30)),
                                  attrs.get("FifoQueue") == "true", dead, count,
                                  Location(attrs.get("QueueArn", url))))
    idem = set(tables)
    for fn in fns:
        for k in C.IDEMPOTENCY_TABLE_ENV_KEYS:
            v = fn.environment.get(k)
            if v:
                idem.add(name_from_arn(v))
    tbls = [t for t in (_table(ddb, n) for n in sorted(idem)) if t is not None]
    alarms = [_alarm(a) for a in _pages(cw, "describe_alarms", "MetricAlarms", "cloudwatch:DescribeAlarms")]
    have_queues, have_tables = {q.name for q in found_queues}, {t.name for t in tbls}
    expected = [Expected(n, ResourceKind.FUNCTION, n in names, "named by the stack config or --function")
                for n in sorted(wanted)]
    expected += [Expected(n, ResourceKind.QUEUE, n in have_queues, "named by the stack config")
                 for n in sorted(set(queues_wanted))]
    expected += [Expected(n, ResourceKind.TABLE, n in have_tables, "named by the stack config or --table")
                 for n in sorted(set(tables))]
    return Inventory(source=f"aws:{session.region_name}", functions=tuple(fns), mappings=tuple(mappings),
                     queues=tuple(found_queues), tables=tuple(tbls), alarms=tuple(alarms),
                     idempotency_tables=frozenset(t.name for t in tbls), alarms_known=True, expected=tuple(expected))


def _async_invoked(lam: Any, name: str) -> bool:
    """True when the resource policy lets an asynchronous service principal (EventBridge, SNS, S3, ...) invoke."""
    pol = _call(lam.get_policy, "lambda:GetPolicy", name, missing_ok=True, FunctionName=name)
    if not pol:
        return False
    try:
        statements = json.loads(pol["Policy"]).get("Statement", [])
    except (ValueError, KeyError):
        return False
    for s in statements if isinstance(statements, list) else [statements]:
        principal = (s.get("Principal") or {})
        service = principal.get("Service") if isinstance(principal, dict) else None
        for svc in [service] if isinstance(service, str) else service or []:
            if svc in C.ASYNC_PRINCIPALS:
                return True
    return False


def _mapping(m: dict) -> Mapping_:
    arn = m.get("EventSourceArn", "")
    kind = arn.split(":")[2] if arn.startswith("arn:") else "unknown"
    return Mapping_(
        function=name_from_arn(m.get("FunctionArn")), source_kind=kind, source=name_from_arn(arn),
        batch_size=m.get("BatchSize"), batching_window_s=m.get("MaximumBatchingWindowInSeconds"),
        function_response_types=tuple(m.get("FunctionResponseTypes") or ()),
        bisect=bool(m.get("BisectBatchOnFunctionError", False)),
        max_retry_attempts=m.get("MaximumRetryAttempts", C.STREAM_UNBOUNDED),
        max_record_age_s=m.get("MaximumRecordAgeInSeconds", C.STREAM_UNBOUNDED),
        on_failure=name_from_arn(((m.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")),
        location=Location(m.get("EventSourceMappingArn") or m.get("UUID", "")))


def _table(ddb: Any, name: str) -> Table | None:
    desc = _call(ddb.describe_table, "dynamodb:DescribeTable", name, missing_ok=True, TableName=name)
    if desc is None:
        return None
    t = _member(desc, "Table", "dynamodb:DescribeTable")
    keys = [k for k in t.get("KeySchema", []) if isinstance(k, dict)]
    ttl = _member(_call(ddb.describe_time_to_live, "dynamodb:DescribeTimeToLive", name, TableName=name),
                  "TimeToLiveDescription", "dynamodb:DescribeTimeToLive")
    backups = _member(_call(ddb.describe_continuous_backups, "dynamodb:DescribeContinuousBackups", name,
                            TableName=name), "ContinuousBackupsDescription", "dynamodb:DescribeContinuousBackups")
    pitr = (backups.get("PointInTimeRecoveryDescription") or {}).get("PointInTimeRecoveryStatus") == "ENABLED"
    return Table(name,
                 next((k.get("AttributeName") for k in keys if k.get("KeyType") == "HASH"), None),
                 next((k.get("AttributeName") for k in keys if k.get("KeyType") == "RANGE"), None),
                 ttl.get("AttributeName") if ttl.get("TimeToLiveStatus") in ("ENABLED", "ENABLING") else None,
                 pitr, Location(t.get("TableArn", name)))


def _alarm(a: dict) -> Alarm:
    metrics = []

    def add(ns: Any, name: Any, dims: Any) -> None:
        metrics.append((str(ns), str(name), tuple((str(d.get("Name")), str(d.get("Value"))) for d in dims or []
                                                  if isinstance(d, dict))))

    name = _member(a, "AlarmName", "cloudwatch:DescribeAlarms")
    if a.get("MetricName"):
        add(a.get("Namespace"), a["MetricName"], a.get("Dimensions"))
    for q in a.get("Metrics") or []:
        m = (q.get("MetricStat") or {}).get("Metric")
        if m:
            add(m.get("Namespace"), m.get("MetricName"), m.get("Dimensions"))
    return Alarm(name, tuple(metrics), Location(a.get("AlarmArn", name)))
