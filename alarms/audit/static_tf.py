"""Static source: Terraform JSON configuration (``*.tf.json``) -> Inventory.

References ``${<type>.<name>.<attr>}`` to resources of the same file resolve to that resource's name (its
``function_name`` / ``name`` / ``alarm_name`` when literal, else the Terraform resource name); strings with any
other interpolation (variables, functions such as ``jsonencode(...)``, data sources) are
:data:`~alarms.audit.model.UNKNOWN`. Absent attributes take the provider's defaults (``timeout`` 3 s,
``visibility_timeout_seconds`` 30 s, stream limits -1). Nested blocks may be a mapping or a list of mappings;
anything else where a block belongs is a :class:`~alarms.audit.exceptions.MalformedTemplateError` naming the
Terraform address and argument.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from alarms.audit import constants as C
from alarms.audit.exceptions import MalformedTemplateError
from alarms.audit.loading import Position, integer, key_positions, load_template, read_text, string
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
    idempotency_tables,
    is_unknown,
    name_from_arn,
    redrive_from_policy,
)

__all__ = ["is_terraform", "read_tf"]

_REF = re.compile(r"\$\{([^}]*)\}")
_ADDR = re.compile(r"^(aws_[a-z0-9_]+)\.([A-Za-z0-9_-]+)\.[a-z_]+$")
_NAME_ATTR = ("function_name", "name", "alarm_name")
_SOURCE_KINDS = {"aws_sqs_queue": "sqs", "aws_kinesis_stream": "kinesis", "aws_dynamodb_table": "dynamodb"}


def is_terraform(doc: dict) -> bool:
    return isinstance(doc.get("resource"), (dict, list))


class _Blocks:
    """Nested blocks of one file, shape-checked: a block is a mapping or a list of mappings."""

    def __init__(self, file: str) -> None:
        self.file = file

    def all(self, v: Any, where: str) -> list[dict]:
        if v is None:
            return []
        if isinstance(v, dict):
            return [v]
        if isinstance(v, list) and all(isinstance(b, dict) for b in v):
            return v
        raise MalformedTemplateError("must be a block (a mapping or a list of mappings)", self.file, where)

    def one(self, v: Any, where: str) -> dict:
        b = self.all(v, where)
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


def _name(v: Any) -> Any:
    """A resource reference (ARN or resolved name) as a name; only a string can name anything."""
    n = name_from_arn(v)
    return n if isinstance(n, str) else None


def read_tf(path: Path, doc: dict | None = None) -> Inventory:
    """A Terraform JSON file -> :class:`Inventory`. Raises :class:`MalformedTemplateError` when it has no
    ``resource`` or a block of the wrong shape."""
    text = read_text(path)
    doc = doc if doc is not None else load_template(path, text)
    uri = str(path)
    if not is_terraform(doc):
        raise MalformedTemplateError("no resource block: not a Terraform JSON configuration", uri)
    blocks = _Blocks(uri)
    resources: dict[str, dict[str, dict]] = {}
    positions = key_positions(text)
    lines: dict[tuple[str, str], Position] = {}
    listed = isinstance(doc["resource"], list)
    for i, blk in enumerate(blocks.all(doc["resource"], "resource")):
        for typ, named in blk.items():
            if not isinstance(named, dict):
                raise MalformedTemplateError("must map resource names to bodies", uri, f"resource.{typ}")
            for rname, body in named.items():
                resources.setdefault(typ, {})[rname] = blocks.one(body, f"resource.{typ}.{rname}")
                key: tuple[str | int, ...] = ("resource", i, typ, rname) if listed else ("resource", typ, rname)
                if key in positions:
                    lines[(typ, rname)] = positions[key]
    r = _TfResolver(resources)

    def loc(typ: str, rn: str) -> Location:
        line, column = lines.get((typ, rn), (None, None))
        return Location(uri, f"{typ}.{rn}", line, column)

    def each(typ: str) -> Iterator[tuple[str, dict, str]]:
        for rn, b in resources.get(typ, {}).items():
            yield rn, b, f"resource.{typ}.{rn}"

    def num(b: dict, key: str, at: str, default: Any = None) -> Any:
        return integer(r.value(b.get(key, default)), uri, f"{at}.{key}")

    def on_failure(b: dict, at: str, key: str) -> Any:
        dest = blocks.one(b.get("destination_config"), f"{at}.destination_config")
        return r.value(blocks.one(dest.get("on_failure"), f"{at}.destination_config.on_failure").get(key))

    invoke_cfg: dict[str, Any] = {}
    for _, b, at in each("aws_lambda_function_event_invoke_config"):
        fn = _name(r.value(b.get("function_name")))
        if fn is not None:
            invoke_cfg[fn] = name_from_arn(on_failure(b, at, "destination"))
    async_targets = {_name(r.value(b.get("arn"))) for _, b, _ in each("aws_cloudwatch_event_target")}
    triggers: dict[str, list[str]] = {}  # function name -> EventSource values of what invokes it
    for fn in async_targets:
        if fn is not None:
            triggers.setdefault(fn, []).append("eventbridge")
    for _, b, at in each("aws_lambda_permission"):
        principal = string(r.value(b.get("principal")), uri, f"{at}.principal")
        fn = _name(r.value(b.get("function_name")))
        if principal in C.ASYNC_PRINCIPALS:
            async_targets.add(fn)
        if isinstance(principal, str) and principal in C.TRIGGER_PRINCIPALS and fn is not None:
            trigger = C.TRIGGER_PRINCIPALS[principal]
            source = b.get("source_arn")
            if trigger == "apigateway-rest" and isinstance(source, str) and any(
                    a is not None and a.group(1) in C.HTTP_API_TYPES for a in map(_ADDR.match, _REF.findall(source))):
                trigger = "apigateway-http"
            triggers.setdefault(fn, []).append(trigger)
    for _, b, _ in each("aws_lambda_function_url"):
        fn = _name(r.value(b.get("function_name")))
        if fn is not None:
            triggers.setdefault(fn, []).append("function-url")

    fns = []
    for rn, b, at in each("aws_lambda_function"):
        name = r.name("aws_lambda_function", rn)
        env = r.value(blocks.one(b.get("environment"), f"{at}.environment").get("variables") or {})
        dlq = blocks.one(b.get("dead_letter_config"), f"{at}.dead_letter_config")
        tags = r.value(b.get("tags") or {})
        fns.append(Function(name, num(b, "timeout", at, C.LAMBDA_TIMEOUT_DEFAULT_S),
                            env if isinstance(env, dict) else UNKNOWN, name in async_targets,
                            name_from_arn(r.value(dlq.get("target_arn"))) if dlq else None,
                            invoke_cfg.get(name), loc("aws_lambda_function", rn), handler=r.value(b.get("handler")),
                            tags=tags if isinstance(tags, dict) else UNKNOWN,
                            invoked_by=tuple(dict.fromkeys(triggers.get(name, ())))))
    mappings = []
    for rn, b, at in each("aws_lambda_event_source_mapping"):
        src_raw = b.get("event_source_arn")
        a = _REF.fullmatch(src_raw) if isinstance(src_raw, str) else None
        addr = _ADDR.match(a.group(1)) if a else None
        src = r.value(src_raw)
        kind = _SOURCE_KINDS.get(addr.group(1)) if addr else None
        if kind is None:
            kind = src.split(":")[2] if isinstance(src, str) and src.startswith("arn:") and src.count(":") >= 2 \
                else "unknown"
        frt = r.value(b.get("function_response_types", []))
        mappings.append(Mapping_(
            function=name_from_arn(r.value(b.get("function_name"))), source_kind=kind, source=name_from_arn(src),
            batch_size=num(b, "batch_size", at),
            batching_window_s=num(b, "maximum_batching_window_in_seconds", at),
            function_response_types=UNKNOWN if is_unknown(frt) or not isinstance(frt, list) else tuple(frt),
            bisect=as_bool(r.value(b.get("bisect_batch_on_function_error", False))),
            max_retry_attempts=num(b, "maximum_retry_attempts", at, C.STREAM_UNBOUNDED),
            max_record_age_s=num(b, "maximum_record_age_in_seconds", at, C.STREAM_UNBOUNDED),
            on_failure=name_from_arn(on_failure(b, at, "destination_arn")),
            location=loc("aws_lambda_event_source_mapping", rn)))
    queues = []
    for rn, b, at in each("aws_sqs_queue"):
        dead, count = redrive_from_policy(r.value(b.get("redrive_policy")))
        queues.append(Queue(r.name("aws_sqs_queue", rn), num(b, "visibility_timeout_seconds", at,
                                                             C.SQS_VISIBILITY_DEFAULT_S),
                            as_bool(r.value(b.get("fifo_queue", False))), dead,
                            integer(count, uri, f"{at}.redrive_policy.maxReceiveCount"), loc("aws_sqs_queue", rn)))
    tables = []
    for rn, b, at in each("aws_dynamodb_table"):
        ttl = blocks.one(b.get("ttl"), f"{at}.ttl")
        enabled = as_bool(r.value(ttl.get("enabled", False))) if ttl else False
        ttl_attr = UNKNOWN if is_unknown(enabled) else (string(r.value(ttl.get("attribute_name")), uri,
                                                              f"{at}.ttl.attribute_name") if enabled else None)
        pitr = as_bool(r.value(blocks.one(b.get("point_in_time_recovery"), f"{at}.point_in_time_recovery")
                               .get("enabled", False)))
        tables.append(Table(r.name("aws_dynamodb_table", rn), string(r.value(b.get("hash_key")), uri, f"{at}.hash_key"),
                            string(r.value(b.get("range_key")), uri, f"{at}.range_key"), ttl_attr, pitr,
                            loc("aws_dynamodb_table", rn)))
    alarms = []
    for rn, b, at in each("aws_cloudwatch_metric_alarm"):
        metrics = []
        if b.get("metric_name"):
            metrics.append(_metric(r, b.get("namespace"), b.get("metric_name"), b.get("dimensions")))
        for i, q in enumerate(blocks.all(b.get("metric_query"), f"{at}.metric_query")):
            m = blocks.one(q.get("metric"), f"{at}.metric_query[{i}].metric")
            if m:
                metrics.append(_metric(r, m.get("namespace"), m.get("metric_name"), m.get("dimensions")))
        alarms.append(Alarm(r.name("aws_cloudwatch_metric_alarm", rn), tuple(metrics),
                            loc("aws_cloudwatch_metric_alarm", rn)))
    return Inventory(source=uri, functions=tuple(fns), mappings=tuple(mappings), queues=tuple(queues),
                     tables=tuple(tables), alarms=tuple(alarms), idempotency_tables=idempotency_tables(fns, tables),
                     alarms_known=bool(alarms))


def _metric(r: _TfResolver, ns: Any, name: Any, dims: Any) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    d = r.value(dims or {})
    pairs = tuple((str(k), str(name_from_arn(v))) for k, v in d.items() if isinstance(v, str)) \
        if isinstance(d, dict) else ()
    return str(r.value(ns)), str(r.value(name)), pairs
