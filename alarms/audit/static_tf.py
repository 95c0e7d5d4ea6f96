"""Static source: Terraform JSON configuration (``*.tf.json``) -> Inventory.

References ``${<type>.<name>.<attr>}`` to resources of the same file resolve to that resource's name (its
``function_name`` / ``name`` / ``alarm_name`` when literal, else the Terraform resource name); strings with any
other interpolation (variables, functions such as ``jsonencode(...)``, data sources) are
:data:`~alarms.audit.model.UNKNOWN`. Absent attributes take the provider's defaults (``timeout`` 3 s,
``visibility_timeout_seconds`` 30 s, stream limits -1). Nested blocks may be a mapping or a list of mappings.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from alarms.audit import constants as C
from alarms.audit.exceptions import TemplateError
from alarms.audit.model import (
    UNKNOWN,
    Alarm,
    Function,
    Inventory,
    Location,
    Mapping_,
    Queue,
    Table,
    as_bool,
    as_int,
    is_unknown,
    name_from_arn,
)
from alarms.audit.rules import redrive_from_policy
from alarms.audit.static_cfn import _idempotency_tables, load_template

__all__ = ["is_terraform", "read_tf"]

_REF = re.compile(r"\$\{([^}]*)\}")
_ADDR = re.compile(r"^(aws_[a-z0-9_]+)\.([A-Za-z0-9_-]+)\.[a-z_]+$")
_NAME_ATTR = ("function_name", "name", "alarm_name")


def is_terraform(doc: dict) -> bool:
    return isinstance(doc.get("resource"), (dict, list))


def _blocks(v: Any) -> list[dict]:
    if isinstance(v, dict):
        return [v]
    return [b for b in v if isinstance(b, dict)] if isinstance(v, list) else []


def _block(v: Any) -> dict:
    b = _blocks(v)
    return b[0] if b else {}


class _TfResolver:
    def __init__(self, resources: dict[str, dict[str, dict]]) -> None:
        self.resources = resources

    def name(self, typ: str, rname: str) -> str:
        body = self.resources.get(typ, {}).get(rname, {})
        for k in _NAME_ATTR:
            v = body.get(k)
            if isinstance(v, str) and "${" not in v:
                return v
        return rname

    def value(self, v: Any) -> Any:
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {k: self.value(x) for k, x in v.items()}
        if not isinstance(v, str) or "${" not in v:
            return v
        unknown = False

        def repl(m: re.Match) -> str:
            nonlocal unknown
            a = _ADDR.match(m.group(1).strip())
            if a and a.group(2) in self.resources.get(a.group(1), {}):
                return self.name(a.group(1), a.group(2))
            unknown = True
            return ""

        out = _REF.sub(repl, v)
        return UNKNOWN if unknown else out


def _line_index(text: str) -> dict[tuple[str, str], int]:
    """(type, name) -> 1-based line where that resource's body opens: the first ``"<name>": {`` after the
    ``"aws_<type>": {`` key that precedes it."""
    out: dict[tuple[str, str], int] = {}
    typ = None
    for i, line in enumerate(text.splitlines(), 1):
        for key in re.findall(r'"([A-Za-z0-9_-]+)"\s*:\s*\{', line):
            if key.startswith("aws_"):
                typ = key
            elif typ is not None:
                out.setdefault((typ, key), i)
    return out


def read_tf(path: Path, doc: dict | None = None) -> Inventory:
    """A Terraform JSON file -> :class:`Inventory`. Raises :class:`TemplateError` when it has no ``resource``."""
    doc = doc if doc is not None else load_template(path)
    if not is_terraform(doc):
        raise TemplateError("no resource block: not a Terraform JSON configuration", str(path))
    resources: dict[str, dict[str, dict]] = {}
    for blk in _blocks(doc["resource"]):
        for typ, named in blk.items():
            for rname, body in (named or {}).items():
                resources.setdefault(typ, {})[rname] = _block(body)
    r = _TfResolver(resources)
    uri = str(path)
    lines = _line_index(path.read_text(encoding="utf-8"))

    def loc(typ: str, rn: str) -> Location:
        return Location(uri, f"{typ}.{rn}", lines.get((typ, rn)))

    def each(typ: str):
        return resources.get(typ, {}).items()

    invoke_cfg: dict[Any, Any] = {}
    for rn, b in each("aws_lambda_function_event_invoke_config"):
        dest = r.value(_block(_block(b.get("destination_config")).get("on_failure")).get("destination"))
        invoke_cfg[name_from_arn(r.value(b.get("function_name")))] = name_from_arn(dest)
    async_targets = {name_from_arn(r.value(b.get("arn"))) for _, b in each("aws_cloudwatch_event_target")}
    async_targets |= {name_from_arn(r.value(b.get("function_name"))) for _, b in each("aws_lambda_permission")
                      if r.value(b.get("principal")) in C.ASYNC_PRINCIPALS}

    fns = []
    for rn, b in each("aws_lambda_function"):
        name = r.name("aws_lambda_function", rn)
        env = r.value(_block(b.get("environment")).get("variables") or {})
        dlq = _block(b.get("dead_letter_config"))
        fns.append(Function(name, as_int(r.value(b.get("timeout", C.LAMBDA_TIMEOUT_DEFAULT_S))),
                            env if isinstance(env, dict) else UNKNOWN, name in async_targets,
                            name_from_arn(r.value(dlq.get("target_arn"))) if dlq else None,
                            invoke_cfg.get(name), loc("aws_lambda_function", rn)))
    mappings = []
    for rn, b in each("aws_lambda_event_source_mapping"):
        src_raw = b.get("event_source_arn")
        a = _REF.fullmatch(src_raw or "") if isinstance(src_raw, str) else None
        typ = _ADDR.match(a.group(1)).group(1) if a and _ADDR.match(a.group(1)) else ""
        src = r.value(src_raw)
        kind = {"aws_sqs_queue": "sqs", "aws_kinesis_stream": "kinesis", "aws_dynamodb_table": "dynamodb"}.get(typ)
        if kind is None:
            kind = src.split(":")[2] if isinstance(src, str) and src.startswith("arn:") else "unknown"
        dest = r.value(_block(_block(b.get("destination_config")).get("on_failure")).get("destination_arn"))
        frt = r.value(b.get("function_response_types", []))
        mappings.append(Mapping_(
            function=name_from_arn(r.value(b.get("function_name"))), source_kind=kind, source=name_from_arn(src),
            batch_size=as_int(r.value(b.get("batch_size"))),
            batching_window_s=as_int(r.value(b.get("maximum_batching_window_in_seconds"))),
            function_response_types=UNKNOWN if is_unknown(frt) or not isinstance(frt, list) else tuple(frt),
            bisect=as_bool(r.value(b.get("bisect_batch_on_function_error", False))),
            max_retry_attempts=as_int(r.value(b.get("maximum_retry_attempts", C.STREAM_UNBOUNDED))),
            max_record_age_s=as_int(r.value(b.get("maximum_record_age_in_seconds", C.STREAM_UNBOUNDED))),
            on_failure=name_from_arn(dest), location=loc("aws_lambda_event_source_mapping", rn)))
    queues = []
    for rn, b in each("aws_sqs_queue"):
        dead, count = redrive_from_policy(r.value(b.get("redrive_policy")))
        queues.append(Queue(r.name("aws_sqs_queue", rn),
                            as_int(r.value(b.get("visibility_timeout_seconds", C.SQS_VISIBILITY_DEFAULT_S))),
                            as_bool(r.value(b.get("fifo_queue", False))), dead, as_int(count), loc("aws_sqs_queue", rn)))
    tables = []
    for rn, b in each("aws_dynamodb_table"):
        ttl = _block(b.get("ttl"))
        enabled = as_bool(r.value(ttl.get("enabled", False))) if ttl else False
        ttl_attr = UNKNOWN if is_unknown(enabled) else (r.value(ttl.get("attribute_name")) if enabled else None)
        pitr = as_bool(r.value(_block(b.get("point_in_time_recovery")).get("enabled", False)))
        tables.append(Table(r.name("aws_dynamodb_table", rn), r.value(b.get("hash_key")), r.value(b.get("range_key")),
                            ttl_attr, pitr, loc("aws_dynamodb_table", rn)))
    alarms = []
    for rn, b in each("aws_cloudwatch_metric_alarm"):
        metrics = []
        if b.get("metric_name"):
            metrics.append(_metric(r, b.get("namespace"), b.get("metric_name"), b.get("dimensions")))
        for q in _blocks(b.get("metric_query")):
            m = _block(q.get("metric"))
            if m:
                metrics.append(_metric(r, m.get("namespace"), m.get("metric_name"), m.get("dimensions")))
        alarms.append(Alarm(r.name("aws_cloudwatch_metric_alarm", rn), tuple(metrics),
                            loc("aws_cloudwatch_metric_alarm", rn)))
    return Inventory(source=uri, functions=tuple(fns), mappings=tuple(mappings), queues=tuple(queues),
                     tables=tuple(tables), alarms=tuple(alarms), idempotency_tables=_idempotency_tables(fns, tables),
                     alarms_known=bool(alarms))


def _metric(r: _TfResolver, ns: Any, name: Any, dims: Any) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    d = r.value(dims or {})
    pairs = tuple((str(k), str(name_from_arn(v))) for k, v in d.items() if isinstance(v, str)) \
        if isinstance(d, dict) else ()
    return str(r.value(ns)), str(r.value(name)), pairs
