"""Static source: CloudFormation and SAM templates (JSON or YAML with the short intrinsic tags) -> Inventory.

Decoding and shape checks: :mod:`alarms.audit.loading` (every malformed input is one
:class:`~alarms.audit.exceptions.MalformedTemplateError` naming the file, the path inside it and the problem).

Resolved statically: ``Ref``/``Fn::GetAtt`` to resources of the template (-> the resource's name), ``Ref`` to a
parameter with a ``Default``, ``Fn::Sub`` and ``Fn::Join`` whose parts resolve, ``Fn::FindInMap`` with literal
keys, SAM ``Globals.Function``, SAM ``Events`` (SQS, Kinesis, DynamoDB -> mappings; EventBridgeRule, Schedule,
SNS, S3, CloudWatchEvent, ... -> asynchronous invocation), SAM ``DeadLetterQueue`` and ``EventInvokeConfig``.
Anything else (``Fn::If``, ``Fn::ImportValue``, pseudo parameters, a parameter without a default) is
:data:`~alarms.audit.model.UNKNOWN` and the rules report it as unknown, never as a pass. A reference cycle
(a resource named by a ``Ref`` to itself, parameter defaults or ``Fn::Sub`` / ``Fn::GetAtt`` that refer to each
other in a ring) and resolution deeper than :data:`~alarms.audit.constants.MAX_TEMPLATE_DEPTH` are malformed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from alarms.audit import constants as C
from alarms.audit.exceptions import MalformedTemplateError
from alarms.audit.loading import Position, integer, key_positions, load_template, mapping, read_text, sequence, string
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
from alarms.constants import RESOURCE_NAME_PROPERTIES

__all__ = ["is_cloudformation", "load_template", "read_cfn"]

_ASYNC_EVENTS = {"EventBridgeRule", "Schedule", "ScheduleV2", "SNS", "S3", "CloudWatchEvent", "CloudWatchLogs",
                 "IoTRule", "AlexaSkill", "Cognito"}
_STREAM_EVENTS = {"Kinesis": "kinesis", "DynamoDB": "dynamodb"}


def is_cloudformation(doc: dict) -> bool:
    return isinstance(doc.get("Resources"), dict)


class _Resolver:
    """Static evaluation of intrinsic functions within one template, with cycle and depth checks."""

    def __init__(self, doc: dict, file: str) -> None:
        self.file = file
        self.resources: dict[str, Any] = mapping(doc.get("Resources"), file, "Resources")
        self.params: dict[str, Any] = {}
        for k, v in mapping(doc.get("Parameters"), file, "Parameters").items():
            self.params[k] = mapping(v, file, f"Parameters.{k}").get("Default", UNKNOWN)
        self.mappings: dict = mapping(doc.get("Mappings"), file, "Mappings")
        self._active: list[str] = []  # references being resolved, outermost first
        self._depth = 0

    def _enter(self, ref: str) -> None:
        if ref in self._active:
            ring = self._active[self._active.index(ref):] + [ref]
            raise MalformedTemplateError(f"reference cycle: {' -> '.join(ring)}", self.file, ring[0])
        self._active.append(ref)

    def name(self, logical_id: str) -> str:
        """The physical name a resource gets: its name property when literal, else the logical id."""
        res = mapping(self.resources.get(logical_id), self.file, f"Resources.{logical_id}")
        props = mapping(res.get("Properties"), self.file, f"Resources.{logical_id}.Properties")
        for key in RESOURCE_NAME_PROPERTIES:
            if key in props:
                self._enter(f"Resources.{logical_id}.Properties.{key}")
                try:
                    v = self.value(props[key])
                finally:
                    self._active.pop()
                if isinstance(v, str):
                    return v
        return logical_id

    def value(self, v: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > C.MAX_TEMPLATE_DEPTH:
                where = self._active[-1] if self._active else ""
                raise MalformedTemplateError(f"intrinsic functions and references nested deeper than "
                                             f"{C.MAX_TEMPLATE_DEPTH} levels", self.file, where)
            return self._value(v)
        finally:
            self._depth -= 1

    def _value(self, v: Any) -> Any:
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if not isinstance(v, dict):
            return v
        if len(v) != 1:
            return {k: self.value(x) for k, x in v.items()}
        (k, arg), = v.items()
        if k == "Ref":
            if not isinstance(arg, str):
                return UNKNOWN
            if arg == "AWS::NoValue":
                return None
            if arg in self.resources:
                return self.name(arg)
            if arg not in self.params:
                return UNKNOWN
            self._enter(f"Parameters.{arg}.Default")
            try:
                return self.value(self.params[arg])
            finally:
                self._active.pop()
        if k == "Fn::GetAtt":
            parts = arg if isinstance(arg, list) else str(arg).split(".", 1)
            return self.name(parts[0]) if parts and isinstance(parts[0], str) and parts[0] in self.resources \
                else UNKNOWN
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
        template, local = (arg[0], arg[1] if len(arg) > 1 else {}) if isinstance(arg, list) and arg else (arg, {})
        if not isinstance(template, str) or not isinstance(local, dict):
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


def _arn_shape(v: Any) -> str | None:
    """The literal text of an ``Fn::Sub`` / ``Fn::Join`` ARN with ``?`` for each part that is not literal
    (``arn:${AWS::Partition}:sqs:${AWS::Region}:...`` -> ``arn:?:sqs:?:...``), or None: enough to read the
    service of an ARN whose account or name does not resolve."""
    if isinstance(v, dict) and len(v) == 1:
        (k, arg), = v.items()
        if k == "Fn::Sub":
            text = arg[0] if isinstance(arg, list) and arg else arg
            return re.sub(r"\$\{[^}]*\}", "?", text) if isinstance(text, str) else None
        if k == "Fn::Join" and isinstance(arg, list) and len(arg) == 2 and isinstance(arg[1], list):
            return str(arg[0]).join(p if isinstance(p, str) else "?" for p in arg[1])
    return None


def _dest(v: Any) -> Any:
    """A destination (ARN or resolved resource name) -> name."""
    return name_from_arn(v)


def read_cfn(path: Path, doc: dict | None = None) -> Inventory:
    """A CloudFormation / SAM template -> :class:`Inventory` (see the module docstring for what resolves).

    Raises :class:`~alarms.audit.exceptions.TemplateError` for a file that is not a template and
    :class:`MalformedTemplateError` for one of the wrong shape."""
    text = read_text(path)
    doc = doc if doc is not None else load_template(path, text)
    uri = str(path)
    if not is_cloudformation(doc):
        raise MalformedTemplateError("no Resources mapping: not a CloudFormation template", uri)
    positions = key_positions(text)
    lines = {key[1]: pos for key, pos in positions.items() if len(key) == 2 and key[0] == "Resources"}
    return _Reader(doc, uri, lines).inventory()


class _Reader:
    """One pass over the resources of a template; every lookup of a nested value checks its shape."""

    def __init__(self, doc: dict, uri: str, lines: dict[str | int, Position]) -> None:
        self.r = _Resolver(doc, uri)
        self.uri = uri
        self.lines = lines
        self.glob = self.map(self.map(doc.get("Globals"), "Globals").get("Function"), "Globals.Function")
        self.functions: dict[str, dict[str, Any]] = {}
        self.mappings: list[Mapping_] = []
        self.queues: list[Queue] = []
        self.tables: list[Table] = []
        self.alarms: list[Alarm] = []
        self.async_targets: set[str] = set()
        self.triggers: dict[str, list[str]] = {}  # function name -> EventSource values, beside its own events
        self.invoke_cfg: dict[str, Any] = {}

    # ----------------------------------------------------------------- shape-checked access
    def map(self, value: Any, where: str) -> Any:
        return mapping(value, self.uri, where)

    def seq(self, value: Any, where: str) -> Any:
        return sequence(value, self.uri, where)

    def val(self, props: dict, key: str, where: str, default: Any = None) -> Any:
        """The resolved value of ``props[key]`` (``default`` when absent)."""
        if key not in props:
            return default
        self.r._active.append(f"{where}.{key}")
        try:
            return self.r.value(props[key])
        finally:
            self.r._active.pop()

    def int(self, props: dict, key: str, where: str, default: Any = None) -> Any:
        return integer(self.val(props, key, where, default), self.uri, f"{where}.{key}")

    def text(self, value: Any, where: str) -> Any:
        return string(value, self.uri, where)

    def resolved_map(self, props: dict, key: str, where: str) -> Any:
        """A resolved value that must be a mapping (UNKNOWN when it cannot be resolved; {} when absent)."""
        return self.map(self.val(props, key, where), f"{where}.{key}")

    def loc(self, lid: str) -> Location:
        line, column = self.lines.get(lid, (None, None))
        return Location(self.uri, lid, line, column)

    # ----------------------------------------------------------------- resources
    def inventory(self) -> Inventory:
        for lid, res in self.r.resources.items():
            at = f"Resources.{lid}"
            res = self.map(res, at)
            typ = res.get("Type")
            if not isinstance(typ, str):
                raise MalformedTemplateError(f"Type must be a string, got {typ!r}"[:120], self.uri, at)
            props = self.map(res.get("Properties"), f"{at}.Properties")
            handler = _HANDLERS.get(typ)
            if handler is not None:
                handler(self, lid, typ, props, f"{at}.Properties")
        fns: list[Function] = []
        for f in self.functions.values():
            if f["name"] in self.async_targets:
                f["async_invoked"] = True
            if f["name"] in self.invoke_cfg and f["on_failure"] is None:
                f["on_failure"] = self.invoke_cfg[f["name"]]
            f["invoked_by"] = tuple(dict.fromkeys((*f["invoked_by"], *self.triggers.get(f["name"], ()))))
            fns.append(Function(**f))
        return Inventory(source=self.uri, functions=tuple(fns), mappings=tuple(self.mappings),
                         queues=tuple(self.queues), tables=tuple(self.tables), alarms=tuple(self.alarms),
                         idempotency_tables=idempotency_tables(fns, self.tables), alarms_known=bool(self.alarms))

    def function(self, lid: str, typ: str, props: dict, at: str) -> None:
        sam = typ == "AWS::Serverless::Function"
        p = {**self.glob, **props} if sam else props
        environment = self.map(p.get("Environment"), f"{at}.Environment")
        env = self.resolved_map(environment, "Variables", f"{at}.Environment")
        if sam and "Environment" in self.glob:
            glob_env = self.map(self.glob["Environment"], "Globals.Function.Environment")
            base = self.resolved_map(glob_env, "Variables", "Globals.Function.Environment")
            env = {**base, **env} if isinstance(base, dict) and isinstance(env, dict) else UNKNOWN
        dlq = self.map(p.get("DeadLetterConfig"), f"{at}.DeadLetterConfig")
        dead = _dest(self.val(dlq, "TargetArn", f"{at}.DeadLetterConfig")) if dlq else None
        if sam and p.get("DeadLetterQueue"):
            sam_dlq = self.map(p["DeadLetterQueue"], f"{at}.DeadLetterQueue")
            dead = _dest(self.val(sam_dlq, "TargetArn", f"{at}.DeadLetterQueue"))
        on_failure = None
        if sam and p.get("EventInvokeConfig"):
            on_failure = self._on_failure(self.map(p["EventInvokeConfig"], f"{at}.EventInvokeConfig"),
                                          f"{at}.EventInvokeConfig", "Destination")
        name = self.r.name(lid)
        invoked_by: list[str] = []
        self.functions[lid] = {"name": name, "timeout_s": self.int(p, "Timeout", at, C.LAMBDA_TIMEOUT_DEFAULT_S),
                               "environment": env, "dead_letter": dead, "on_failure": on_failure,
                               "location": self.loc(lid), "async_invoked": False,
                               "handler": self.val(p, "Handler", at), "tags": self._tags(p, at),
                               "invoked_by": invoked_by}
        for ev_name, ev in self.map(props.get("Events"), f"{at}.Events").items():
            here = f"{at}.Events.{ev_name}"
            ev = self.map(ev, here)
            et = self.text(ev.get("Type"), f"{here}.Type")
            ep = self.map(ev.get("Properties"), f"{here}.Properties")
            if et == "SQS":
                self.mappings.append(self._mapping(name, "sqs", ep.get("Queue"), ep, f"{here}.Properties", lid))
            elif et in _STREAM_EVENTS:
                self.mappings.append(self._mapping(name, _STREAM_EVENTS[et], ep.get("Stream"), ep,
                                                   f"{here}.Properties", lid))
            elif et in _ASYNC_EVENTS:
                self.functions[lid]["async_invoked"] = True
            if isinstance(et, str) and et in C.SAM_EVENT_SOURCES:
                invoked_by.append(C.SAM_EVENT_SOURCES[et])

    def _tags(self, p: dict, at: str) -> Any:
        """A function's tags as a mapping: SAM's ``Tags`` map or CloudFormation's ``[{Key, Value}]`` list
        (UNKNOWN when they do not resolve)."""
        tags = self.val(p, "Tags", at, {})
        if isinstance(tags, dict):
            return tags
        if isinstance(tags, list) and all(isinstance(t, dict) and isinstance(t.get("Key"), str) for t in tags):
            return {t["Key"]: t.get("Value") for t in tags}
        return UNKNOWN

    def _trigger(self, fn: Any, kind: str) -> None:
        if isinstance(fn, str):
            self.triggers.setdefault(fn, []).append(kind)

    def _on_failure(self, p: dict, at: str, key: str) -> Any:
        """The ``DestinationConfig.OnFailure.<key>`` destination of ``p`` as a name."""
        dest_cfg = self.map(p.get("DestinationConfig"), f"{at}.DestinationConfig")
        on_failure = self.map(dest_cfg.get("OnFailure"), f"{at}.DestinationConfig.OnFailure")
        return _dest(self.val(on_failure, key, f"{at}.DestinationConfig.OnFailure"))

    def event_source_mapping(self, lid: str, typ: str, props: dict, at: str) -> None:
        src = props.get("EventSourceArn")
        fn = name_from_arn(self.val(props, "FunctionName", at))
        self.mappings.append(self._mapping(fn, self._source_kind(src, f"{at}.EventSourceArn"), src, props, at, lid))

    def event_invoke_config(self, lid: str, typ: str, props: dict, at: str) -> None:
        fn = name_from_arn(self.val(props, "FunctionName", at))
        self.invoke_cfg[fn if isinstance(fn, str) else "?"] = self._on_failure(props, at, "Destination")

    def events_rule(self, lid: str, typ: str, props: dict, at: str) -> None:
        for i, t in enumerate(self.seq(props.get("Targets"), f"{at}.Targets")):
            t = self.map(t, f"{at}.Targets[{i}]")
            target = name_from_arn(self.val(t, "Arn", f"{at}.Targets[{i}]"))
            if isinstance(target, str):
                self.async_targets.add(target)
                self._trigger(target, "eventbridge")

    def permission(self, lid: str, typ: str, props: dict, at: str) -> None:
        principal = self.val(props, "Principal", at)
        fn = name_from_arn(self.val(props, "FunctionName", at))
        if isinstance(principal, str) and principal in C.ASYNC_PRINCIPALS and isinstance(fn, str):
            self.async_targets.add(fn)
        if isinstance(principal, str) and principal in C.TRIGGER_PRINCIPALS:
            kind = C.TRIGGER_PRINCIPALS[principal]
            if kind == "apigateway-rest" and self._refers_to(props.get("SourceArn"), C.HTTP_API_TYPES):
                kind = "apigateway-http"
            self._trigger(fn, kind)

    def function_url(self, lid: str, typ: str, props: dict, at: str) -> None:
        self._trigger(name_from_arn(self.val(props, "TargetFunctionArn", at)), "function-url")

    def _refers_to(self, value: Any, types: frozenset[str]) -> bool:
        """Whether ``value`` (unresolved) holds a ``Ref``/``Fn::GetAtt``/``${...}`` to a resource of one of
        ``types``."""
        stack = [value]
        while stack:
            v = stack.pop()
            if isinstance(v, list):
                stack.extend(v)
            elif isinstance(v, dict):
                for k, arg in v.items():
                    lid = arg if k == "Ref" else arg[0] if k == "Fn::GetAtt" and isinstance(arg, list) and arg \
                        else None
                    res = self.r.resources.get(lid) if isinstance(lid, str) else None
                    if isinstance(res, dict) and res.get("Type") in types:
                        return True
                    if k == "Fn::Sub":
                        text = arg[0] if isinstance(arg, list) and arg else arg
                        names = re.findall(r"\$\{([^}.!]+)", text) if isinstance(text, str) else []
                        if any(isinstance(self.r.resources.get(n), dict)
                               and self.r.resources[n].get("Type") in types for n in names):
                            return True
                    stack.append(arg)
        return False

    def queue(self, lid: str, typ: str, props: dict, at: str) -> None:
        dead, count = redrive_from_policy(self.val(props, "RedrivePolicy", at))
        self.queues.append(Queue(self.r.name(lid), self.int(props, "VisibilityTimeout", at,
                                                            C.SQS_VISIBILITY_DEFAULT_S),
                                 as_bool(self.val(props, "FifoQueue", at, False)), dead,
                                 integer(count, self.uri, f"{at}.RedrivePolicy.maxReceiveCount"), self.loc(lid)))

    def table(self, lid: str, typ: str, props: dict, at: str) -> None:
        keys = self.seq(self.val(props, "KeySchema", at), f"{at}.KeySchema")
        if is_unknown(keys):
            hash_key = range_key = UNKNOWN
        else:
            schema = [(self.map(k, f"{at}.KeySchema[{i}]"), f"{at}.KeySchema[{i}].AttributeName")
                      for i, k in enumerate(keys)]
            hash_key = next((self.text(k.get("AttributeName"), w) for k, w in schema if k.get("KeyType") == "HASH"),
                            None)
            range_key = next((self.text(k.get("AttributeName"), w) for k, w in schema
                              if k.get("KeyType") == "RANGE"), None)
        ttl = self.resolved_map(props, "TimeToLiveSpecification", at)
        if is_unknown(ttl):
            ttl_attr = UNKNOWN
        elif not ttl:
            ttl_attr = None
        else:
            enabled = as_bool(ttl.get("Enabled"))
            ttl_attr = UNKNOWN if is_unknown(enabled) else (
                self.text(ttl.get("AttributeName"), f"{at}.TimeToLiveSpecification.AttributeName")
                if enabled is True else None)
        pitr = self.resolved_map(props, "PointInTimeRecoverySpecification", at)
        pitr_on = UNKNOWN if is_unknown(pitr) else as_bool(pitr.get("PointInTimeRecoveryEnabled", False))
        self.tables.append(Table(self.r.name(lid), hash_key, range_key, ttl_attr, pitr_on, self.loc(lid)))

    def simple_table(self, lid: str, typ: str, props: dict, at: str) -> None:
        key = self.map(props.get("PrimaryKey"), f"{at}.PrimaryKey")
        pk = self.text(self.val(key, "Name", f"{at}.PrimaryKey", "id"), f"{at}.PrimaryKey.Name")
        self.tables.append(Table(self.r.name(lid), pk, None, None, False, self.loc(lid)))

    def alarm(self, lid: str, typ: str, props: dict, at: str) -> None:
        metrics = []
        if "MetricName" in props:
            metrics.append(self._metric(props, at))
        for i, q in enumerate(self.seq(props.get("Metrics"), f"{at}.Metrics")):
            here = f"{at}.Metrics[{i}]"
            stat = self.map(self.map(q, here).get("MetricStat"), f"{here}.MetricStat")
            m = self.map(stat.get("Metric"), f"{here}.MetricStat.Metric")
            if m:
                metrics.append(self._metric(m, f"{here}.MetricStat.Metric"))
        self.alarms.append(Alarm(self.r.name(lid), tuple(metrics), self.loc(lid)))

    # ----------------------------------------------------------------- parts
    def _source_kind(self, src: Any, at: str) -> str:
        """sqs | kinesis | dynamodb from an EventSourceArn (literal ARN, or a GetAtt/Ref to a template resource)."""
        if isinstance(src, dict) and len(src) == 1:
            (k, arg), = src.items()
            lid = arg[0] if k == "Fn::GetAtt" and isinstance(arg, list) and arg else arg if k == "Ref" else None
            res = self.r.resources.get(lid) if isinstance(lid, str) else None
            typ = res.get("Type") if isinstance(res, dict) else None
            if typ == "AWS::SQS::Queue":
                return "sqs"
            if typ == "AWS::Kinesis::Stream":
                return "kinesis"
            if isinstance(typ, str) and typ.startswith("AWS::DynamoDB::"):
                return "dynamodb"
        self.r._active.append(at)
        try:
            v = self.r.value(src)
        finally:
            self.r._active.pop()
        if not isinstance(v, str):
            v = _arn_shape(src)  # an ARN built from parts that do not all resolve: its service may be literal
        if isinstance(v, str) and v.startswith("arn:") and v.count(":") >= 2:
            return {"sqs": "sqs", "kinesis": "kinesis", "dynamodb": "dynamodb"}.get(v.split(":")[2], "unknown")
        return "unknown"

    def _mapping(self, fn: Any, kind: str, src: Any, p: dict, at: str, lid: str) -> Mapping_:
        self.r._active.append(at)
        try:
            source = name_from_arn(self.r.value(src))
        finally:
            self.r._active.pop()
        frt = self.seq(self.val(p, "FunctionResponseTypes", at, ()) or [], f"{at}.FunctionResponseTypes")
        return Mapping_(
            function=fn, source_kind=kind, source=source,
            batch_size=self.int(p, "BatchSize", at),
            batching_window_s=self.int(p, "MaximumBatchingWindowInSeconds", at),
            function_response_types=UNKNOWN if is_unknown(frt) or any(is_unknown(x) for x in frt) else tuple(frt),
            bisect=as_bool(self.val(p, "BisectBatchOnFunctionError", at, False)),
            max_retry_attempts=self.int(p, "MaximumRetryAttempts", at, C.STREAM_UNBOUNDED),
            max_record_age_s=self.int(p, "MaximumRecordAgeInSeconds", at, C.STREAM_UNBOUNDED),
            on_failure=self._on_failure(p, at, "Destination"), location=self.loc(lid))

    def _metric(self, m: dict, at: str) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        dims = self.val(m, "Dimensions", at, [])
        pairs = tuple((str(d.get("Name")), str(name_from_arn(d.get("Value")))) for d in dims
                      if isinstance(d, dict) and isinstance(d.get("Value"), str)) if isinstance(dims, list) else ()
        return str(self.val(m, "Namespace", at)), str(self.val(m, "MetricName", at)), pairs


_HANDLERS = {
    "AWS::Lambda::Function": _Reader.function,
    "AWS::Serverless::Function": _Reader.function,
    "AWS::Lambda::EventSourceMapping": _Reader.event_source_mapping,
    "AWS::Lambda::EventInvokeConfig": _Reader.event_invoke_config,
    "AWS::Events::Rule": _Reader.events_rule,
    "AWS::Lambda::Permission": _Reader.permission,
    "AWS::Lambda::Url": _Reader.function_url,
    "AWS::SQS::Queue": _Reader.queue,
    "AWS::DynamoDB::Table": _Reader.table,
    "AWS::DynamoDB::GlobalTable": _Reader.table,
    "AWS::Serverless::SimpleTable": _Reader.simple_table,
    "AWS::CloudWatch::Alarm": _Reader.alarm,
}
"""Resource type -> the reader of its properties (other types are not audited)."""
