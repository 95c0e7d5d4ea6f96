"""Static source: CloudFormation and SAM templates (JSON or YAML with the short intrinsic tags) -> Inventory.

YAML is read with PyYAML (a runtime dependency of the collector extra; cfn-lint's decoder is dev-only) through a
safe loader subclass (libyaml's C parser when available) that turns ``!Ref x`` into ``{"Ref": "x"}``, ``!GetAtt a.b`` into
``{"Fn::GetAtt": ["a", "b"]}`` and every other ``!Fn`` into ``{"Fn::Fn": ...}``, the long forms CloudFormation
itself uses; YAML 1.1 timestamps stay strings (``AWSTemplateFormatVersion: 2010-09-09``).

Resolved statically: ``Ref``/``Fn::GetAtt`` to resources of the template (-> the resource's name), ``Ref`` to a
parameter with a ``Default``, ``Fn::Sub`` and ``Fn::Join`` whose parts resolve, ``Fn::FindInMap`` with literal
keys, SAM ``Globals.Function``, SAM ``Events`` (SQS, Kinesis, DynamoDB -> mappings; EventBridgeRule, Schedule,
SNS, S3, CloudWatchEvent, ... -> asynchronous invocation), SAM ``DeadLetterQueue`` and ``EventInvokeConfig``.
Anything else (``Fn::If``, ``Fn::ImportValue``, pseudo parameters, a parameter without a default) is
:data:`~alarms.audit.model.UNKNOWN` and the rules report it as unknown, never as a pass.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

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

__all__ = ["is_cloudformation", "load_template", "read_cfn"]

_ASYNC_EVENTS = {"EventBridgeRule", "Schedule", "ScheduleV2", "SNS", "S3", "CloudWatchEvent", "CloudWatchLogs",
                 "IoTRule", "AlexaSkill", "Cognito"}
_STREAM_EVENTS = {"Kinesis": "kinesis", "DynamoDB": "dynamodb"}


_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when PyYAML was built with it


class _CfnLoader(_BaseLoader):
    """Safe loader + CloudFormation short-form tags; no implicit timestamps; no aliases (a nested alias "bomb"
    would make every later walk of the document exponential)."""

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        # an alias is the same node constructed a second time
        if node in self.constructed_objects:
            raise yaml.YAMLError(f"YAML aliases are not accepted (line {node.start_mark.line + 1})")
        return super().construct_object(node, deep=deep)


_CfnLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _construct(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    if suffix == "Ref":
        return {"Ref": value}
    if suffix == "Condition":
        return {"Condition": value}
    if suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {f"Fn::{suffix}": value}


_CfnLoader.add_multi_constructor("!", _construct)


def load_template(path: Path) -> Any:
    """Decode a JSON or YAML template. Raises :class:`TemplateError` when unreadable or not a mapping."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TemplateError(f"cannot read ({exc.strerror})", str(path)) from exc
    try:
        data = json.loads(text) if text.lstrip().startswith("{") else yaml.load(text, Loader=_CfnLoader)
    except (ValueError, yaml.YAMLError) as exc:
        raise TemplateError(f"not valid JSON/YAML: {exc}", str(path)) from exc
    if not isinstance(data, dict):
        raise TemplateError("a template must be a mapping at the top level", str(path))
    return data


def is_cloudformation(doc: dict) -> bool:
    return isinstance(doc.get("Resources"), dict)


class _Resolver:
    """Static evaluation of intrinsic functions within one template."""

    def __init__(self, doc: dict) -> None:
        self.resources: dict[str, dict] = doc.get("Resources") or {}
        self.params: dict[str, Any] = {k: (v or {}).get("Default", UNKNOWN)
                                       for k, v in (doc.get("Parameters") or {}).items()}
        self.mappings: dict = doc.get("Mappings") or {}

    def name(self, logical_id: str) -> str:
        """The physical name a resource gets: its name property when literal, else the logical id."""
        res = self.resources.get(logical_id) or {}
        props = res.get("Properties") or {}
        for key in ("FunctionName", "QueueName", "TableName", "StreamName", "Name", "AlarmName", "TopicName"):
            if key in props:
                v = self.value(props[key])
                if isinstance(v, str):
                    return v
        return logical_id

    def value(self, v: Any) -> Any:
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if not isinstance(v, dict):
            return v
        if len(v) != 1:
            return {k: self.value(x) for k, x in v.items()}
        (k, arg), = v.items()
        if k == "Ref":
            if arg == "AWS::NoValue":
                return None
            if arg in self.resources:
                return self.name(arg)
            return self.value(self.params.get(arg, UNKNOWN))
        if k == "Fn::GetAtt":
            parts = arg if isinstance(arg, list) else str(arg).split(".", 1)
            return self.name(parts[0]) if parts and parts[0] in self.resources else UNKNOWN
        if k == "Fn::Sub":
            return self._sub(arg)
        if k == "Fn::Join" and isinstance(arg, list) and len(arg) == 2:
            parts = self.value(arg[1])
            if not isinstance(parts, list) or any(is_unknown(p) or not isinstance(p, (str, int)) for p in parts):
                return UNKNOWN
            return str(arg[0]).join(str(p) for p in parts)
        if k == "Fn::FindInMap" and isinstance(arg, list) and len(arg) == 3:
            keys = [self.value(a) for a in arg]
            try:
                return self.value(self.mappings[keys[0]][keys[1]][keys[2]])
            except (KeyError, TypeError):
                return UNKNOWN
        if k.startswith("Fn::") or k == "Condition":
            return UNKNOWN
        return {k: self.value(arg)}

    def _sub(self, arg: Any) -> Any:
        template, local = (arg[0], arg[1] if len(arg) > 1 else {}) if isinstance(arg, list) else (arg, {})
        if not isinstance(template, str):
            return UNKNOWN
        unknown = False

        def repl(m: re.Match) -> str:
            nonlocal unknown
            var = m.group(1)
            if var.startswith("!"):
                return "${" + var[1:] + "}"
            if var in local:
                v = self.value(local[var])
            elif "." in var:
                v = self.value({"Fn::GetAtt": var.split(".", 1)})
            else:
                v = self.value({"Ref": var})
            if is_unknown(v) or not isinstance(v, (str, int, float)):
                unknown = True
                return ""
            return str(v)

        out = re.sub(r"\$\{([^}]+)\}", repl, template)
        return UNKNOWN if unknown else out


def _get(r: _Resolver, props: dict, key: str, default: Any = None) -> Any:
    return r.value(props[key]) if key in props else default


def _dest(v: Any) -> Any:
    """A destination (ARN or resolved resource name) -> name."""
    return name_from_arn(v)


def _line_index(text: str) -> dict[str, int]:
    """logical id -> 1-based line of its key after the ``Resources`` key (YAML or JSON), first occurrence."""
    out: dict[str, int] = {}
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r'^\s*"?Resources"?\s*:', line)), len(lines))
    for i, line in enumerate(lines[start + 1:], start + 2):
        m = re.match(r'^\s{1,8}"?([A-Za-z0-9]+)"?\s*:\s*(\{|$)', line)
        if m and m.group(1) not in out:
            out[m.group(1)] = i
    return out


def read_cfn(path: Path, doc: dict | None = None) -> Inventory:
    """A CloudFormation / SAM template -> :class:`Inventory` (see the module docstring for what resolves).

    Raises :class:`TemplateError` for a file that is not a template."""
    doc = doc if doc is not None else load_template(path)
    if not is_cloudformation(doc):
        raise TemplateError("no Resources mapping: not a CloudFormation template", str(path))
    r = _Resolver(doc)
    lines = _line_index(path.read_text(encoding="utf-8"))
    uri = str(path)
    glob = ((doc.get("Globals") or {}).get("Function") or {})
    functions: dict[str, dict[str, Any]] = {}
    mappings: list[Mapping_] = []
    queues: list[Queue] = []
    tables: list[Table] = []
    alarms: list[Alarm] = []
    async_targets: set[str] = set()
    invoke_cfg: dict[str, Any] = {}

    def loc(lid: str) -> Location:
        return Location(uri, lid, lines.get(lid))

    for lid, res in r.resources.items():
        if not isinstance(res, dict):
            raise TemplateError(f"resource {lid} is not a mapping", uri)
        typ = res.get("Type")
        props = res.get("Properties") or {}
        if typ in ("AWS::Lambda::Function", "AWS::Serverless::Function"):
            p = {**glob, **props} if typ == "AWS::Serverless::Function" else props
            env = r.value(((p.get("Environment") or {}).get("Variables")) or {})
            if isinstance(glob.get("Environment"), dict) and typ == "AWS::Serverless::Function":
                env = {**r.value(glob["Environment"].get("Variables") or {}), **env}
            dlq = p.get("DeadLetterConfig") or {}
            dead = _dest(r.value(dlq.get("TargetArn"))) if dlq else None
            if typ == "AWS::Serverless::Function" and p.get("DeadLetterQueue"):
                dead = _dest(r.value((p["DeadLetterQueue"] or {}).get("TargetArn")))
            on_failure = None
            if typ == "AWS::Serverless::Function" and p.get("EventInvokeConfig"):
                on_failure = _dest(r.value(((p["EventInvokeConfig"].get("DestinationConfig") or {})
                                             .get("OnFailure") or {}).get("Destination")))
            name = r.name(lid)
            functions[lid] = {"name": name, "timeout_s": as_int(_get(r, p, "Timeout", C.LAMBDA_TIMEOUT_DEFAULT_S)),
                              "environment": env if isinstance(env, dict) else UNKNOWN, "dead_letter": dead,
                              "on_failure": on_failure, "location": loc(lid), "async_invoked": False}
            for ev in (props.get("Events") or {}).values():
                et, ep = ev.get("Type"), ev.get("Properties") or {}
                if et == "SQS":
                    mappings.append(_mapping(r, name, "sqs", ep.get("Queue"), ep, loc(lid)))
                elif et in _STREAM_EVENTS:
                    mappings.append(_mapping(r, name, _STREAM_EVENTS[et], ep.get("Stream"), ep, loc(lid)))
                elif et in _ASYNC_EVENTS:
                    functions[lid]["async_invoked"] = True
        elif typ == "AWS::Lambda::EventSourceMapping":
            src = props.get("EventSourceArn")
            kind = _source_kind(r, src)
            mappings.append(_mapping(r, name_from_arn(_get(r, props, "FunctionName")), kind, src, props, loc(lid)))
        elif typ == "AWS::Lambda::EventInvokeConfig":
            fn = name_from_arn(_get(r, props, "FunctionName"))
            dest = r.value(((props.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination"))
            invoke_cfg[fn if isinstance(fn, str) else "?"] = _dest(dest)
        elif typ == "AWS::Events::Rule":
            for t in props.get("Targets") or []:
                target = name_from_arn(r.value(t.get("Arn")))
                if isinstance(target, str):
                    async_targets.add(target)
        elif typ == "AWS::Lambda::Permission":
            principal = r.value(props.get("Principal"))
            fn = name_from_arn(_get(r, props, "FunctionName"))
            if isinstance(principal, str) and principal in C.ASYNC_PRINCIPALS and isinstance(fn, str):
                async_targets.add(fn)
        elif typ == "AWS::SQS::Queue":
            dead, count = redrive_from_policy(_get(r, props, "RedrivePolicy"))
            queues.append(Queue(r.name(lid), as_int(_get(r, props, "VisibilityTimeout", C.SQS_VISIBILITY_DEFAULT_S)),
                                as_bool(_get(r, props, "FifoQueue", False)), dead, as_int(count), loc(lid)))
        elif typ in ("AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable"):
            tables.append(_table(r, r.name(lid), props, loc(lid)))
        elif typ == "AWS::Serverless::SimpleTable":
            pk = r.value((props.get("PrimaryKey") or {}).get("Name", "id"))
            tables.append(Table(r.name(lid), pk, None, None, False, loc(lid)))
        elif typ == "AWS::CloudWatch::Alarm":
            alarms.append(_alarm(r, r.name(lid), props, loc(lid)))

    fns: list[Function] = []
    for f in functions.values():
        if f["name"] in async_targets:
            f["async_invoked"] = True
        if f["name"] in invoke_cfg and f["on_failure"] is None:
            f["on_failure"] = invoke_cfg[f["name"]]
        fns.append(Function(**f))
    idem = _idempotency_tables(fns, tables)
    return Inventory(source=uri, functions=tuple(fns), mappings=tuple(mappings), queues=tuple(queues),
                     tables=tuple(tables), alarms=tuple(alarms), idempotency_tables=idem,
                     alarms_known=bool(alarms))


def _idempotency_tables(fns: list[Function], tables: list[Table]) -> frozenset[str]:
    """Tables named by a function's idempotency-table environment variable (constants.IDEMPOTENCY_TABLE_ENV_KEYS)."""
    names = {t.name for t in tables}
    out = set()
    for f in fns:
        if is_unknown(f.environment):
            continue
        for k in C.IDEMPOTENCY_TABLE_ENV_KEYS:
            v = name_from_arn(f.environment.get(k))
            if isinstance(v, str) and v in names:
                out.add(v)
    return frozenset(out)


def _source_kind(r: _Resolver, src: Any) -> str:
    """sqs | kinesis | dynamodb from an EventSourceArn (literal ARN, or a GetAtt/Ref to a template resource)."""
    if isinstance(src, dict) and len(src) == 1:
        (k, arg), = src.items()
        lid = arg[0] if k == "Fn::GetAtt" and isinstance(arg, list) else arg if k == "Ref" else None
        typ = (r.resources.get(lid) or {}).get("Type", "") if isinstance(lid, str) else ""
        if typ == "AWS::SQS::Queue":
            return "sqs"
        if typ == "AWS::Kinesis::Stream":
            return "kinesis"
        if typ.startswith("AWS::DynamoDB::"):
            return "dynamodb"
    v = r.value(src)
    if isinstance(v, str) and v.startswith("arn:"):
        return {"sqs": "sqs", "kinesis": "kinesis", "dynamodb": "dynamodb"}.get(v.split(":")[2], "unknown")
    return "unknown"


def _mapping(r: _Resolver, fn: Any, kind: str, src: Any, p: dict, location: Location) -> Mapping_:
    dest = r.value(((p.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination"))
    return Mapping_(
        function=fn, source_kind=kind, source=name_from_arn(r.value(src)),
        batch_size=as_int(_get(r, p, "BatchSize")),
        batching_window_s=as_int(_get(r, p, "MaximumBatchingWindowInSeconds")),
        function_response_types=_tuple(_get(r, p, "FunctionResponseTypes", ())),
        bisect=as_bool(_get(r, p, "BisectBatchOnFunctionError", False)),
        max_retry_attempts=as_int(_get(r, p, "MaximumRetryAttempts", C.STREAM_UNBOUNDED)),
        max_record_age_s=as_int(_get(r, p, "MaximumRecordAgeInSeconds", C.STREAM_UNBOUNDED)),
        on_failure=_dest(dest), location=location)


def _tuple(v: Any) -> Any:
    if is_unknown(v) or (isinstance(v, list) and any(is_unknown(x) for x in v)):
        return UNKNOWN
    return tuple(v) if isinstance(v, list) else v


def _table(r: _Resolver, name: str, props: dict, location: Location) -> Table:
    keys = r.value(props.get("KeySchema") or [])
    if is_unknown(keys) or not isinstance(keys, list):
        hash_key = range_key = UNKNOWN
    else:
        hash_key = next((k.get("AttributeName") for k in keys if k.get("KeyType") == "HASH"), None)
        range_key = next((k.get("AttributeName") for k in keys if k.get("KeyType") == "RANGE"), None)
    ttl = r.value(props.get("TimeToLiveSpecification"))
    if is_unknown(ttl):
        ttl_attr = UNKNOWN
    elif not ttl:
        ttl_attr = None
    else:
        enabled = as_bool(ttl.get("Enabled"))
        ttl_attr = UNKNOWN if is_unknown(enabled) else (ttl.get("AttributeName") if enabled is True else None)
    pitr = r.value(props.get("PointInTimeRecoverySpecification"))
    pitr_on = UNKNOWN if is_unknown(pitr) else as_bool((pitr or {}).get("PointInTimeRecoveryEnabled", False))
    return Table(name, hash_key, range_key, ttl_attr, pitr_on, location)


def _alarm(r: _Resolver, name: str, props: dict, location: Location) -> Alarm:
    metrics = []
    if "MetricName" in props:
        metrics.append(_metric(r, props.get("Namespace"), props.get("MetricName"), props.get("Dimensions")))
    for q in props.get("Metrics") or []:
        m = ((q.get("MetricStat") or {}).get("Metric")) or {}
        if m:
            metrics.append(_metric(r, m.get("Namespace"), m.get("MetricName"), m.get("Dimensions")))
    return Alarm(name, tuple(metrics), location)


def _metric(r: _Resolver, ns: Any, name: Any, dims: Any) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    dv = r.value(dims or [])
    pairs = tuple((str(d.get("Name")), str(name_from_arn(d.get("Value")))) for d in dv
                  if isinstance(d, dict) and isinstance(d.get("Value"), str)) if isinstance(dv, list) else ()
    return str(r.value(ns)), str(r.value(name)), pairs
