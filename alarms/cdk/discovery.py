"""A CDK construct tree read into the audit's resource model, so that one rule (:func:`alarms.stack_init.derive`)
decides what to monitor, for ``idemwatch init`` and for the construct's ``discover=True`` alike.

Read from public CDK APIs only (no synthesis): ``lambda.Function`` (name, handler, tags, DLQ), the
``CfnEventSourceMapping`` of each mapping (function and source ARN tokens, on-failure destination), ``sqs.Queue``
(name, redrive DLQ), ``kinesis.Stream``, ``dynamodb`` tables (stream ARN), ``CfnPermission`` (the service principal
that invokes a function; under an ``apigatewayv2`` API: apigateway-http) and ``CfnUrl``. A token names the same
resource wherever CDK hands it out (``queue.queue_arn`` is one string), so mappings are matched to queues and
functions by token text. Names are literal when the L1 resource has one, else :class:`Placeholders` for the
token. Functions whose environment only synthesis reveals are read without it (see ``alarms.cdk.construct``).
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kinesis as kinesis
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import IConstruct

from alarms.audit import constants as AC
from alarms.audit.model import UNKNOWN, Function, Inventory, Location, Mapping_, Queue
from alarms.cdk.template import Placeholders
from alarms.stack_init.derive import derive, operation_for

__all__ = ["discover_functions", "name_of", "operation_of", "tags_of"]

_NAME = {"function": ("function_name", "function_name"), "queue": ("queue_name", "queue_name"),
         "stream": ("name", "stream_name"), "table": ("table_name", "table_name")}
"""kind -> (the L1 resource's name property, the L2's name attribute)."""


def name_of(resource: Any, kind: str, ph: Placeholders) -> str:
    """The name of a CDK resource for the stack config: the literal physical name when the L1 resource has one,
    else a placeholder for the L2's name token (``fn.function_name``, ``queue.queue_name``,
    ``stream.stream_name``, ``table.table_name``; a DynamoDB table given as a stream is named by its table).
    A plain string is taken as the name."""
    if isinstance(resource, str):
        return resource if not cdk.Token.is_unresolved(resource) else ph.name(resource, kind)
    if kind == "stream" and hasattr(resource, "table_stream_arn"):  # a DynamoDB table: its stream
        kind = "table"
    l1_attr, l2_attr = _NAME[kind]
    l1 = resource.node.default_child if isinstance(resource, cdk.Resource) else None
    literal = getattr(l1, l1_attr, None) if l1 is not None else None
    if isinstance(literal, str) and not cdk.Token.is_unresolved(literal):
        return literal
    token = getattr(resource, l2_attr)
    if not cdk.Token.is_unresolved(token):
        return str(token)
    return ph.name(token, kind, resource.node.id)


def tags_of(construct: IConstruct) -> dict[str, str]:
    """A construct's tags: those of ``Tags.of(x).add`` on it or an ancestor (Tag aspects, applied only at
    synthesis) and those of its L1 resource's tag manager."""
    out: dict[str, str] = {}
    chain = list(reversed(construct.node.scopes))  # the construct first, then its ancestors
    for scope in reversed(chain):  # ancestors first, so the nearest tag wins
        for aspect in cdk.Aspects.of(scope).all:
            if isinstance(aspect, cdk.Tag):
                out[aspect.key] = aspect.value
    l1 = construct.node.default_child if isinstance(construct, cdk.Resource) else None
    manager = getattr(l1, "tags", None)
    if isinstance(manager, cdk.TagManager):
        out.update(manager.tag_values())
    return out


def operation_of(function: Any) -> tuple[str | None, str | None]:
    """(operation, note) of a CDK function by :func:`alarms.stack_init.derive.operation_for`: its
    ``idemwatch:operation`` tag, else its handler's function name (with the note saying so)."""
    l1 = function.node.default_child if isinstance(function, cdk.Resource) else None
    handler = getattr(l1, "handler", None)
    return operation_for(tags_of(function) if isinstance(function, cdk.Resource) else {},
                         handler if isinstance(handler, str) and not cdk.Token.is_unresolved(handler) else None)


def discover_functions(stack: cdk.Stack, ph: Placeholders, skip: frozenset[str] = frozenset()
                       ) -> list[tuple[dict[str, Any], lambda_.Function]]:
    """The function entries of the stack config for every ``lambda.Function`` of ``stack`` that something
    invokes (see :func:`alarms.stack_init.derive`), each with its function; construct paths in ``skip`` are
    left out. What does not resolve (a queue imported by ARN, an unknown operation) is a warning annotation
    on the function (``cdk synth`` prints it), and that value is left out, never guessed."""
    nodes = stack.node.find_all()
    functions = [n for n in nodes if isinstance(n, lambda_.Function) and n.node.path not in skip]
    fn_names: dict[str, str] = {}
    by_name: dict[str, lambda_.Function] = {}
    inv_functions: list[Function] = []
    queues_by_arn: dict[str, str] = {}
    inv_queues: list[Queue] = []
    for q in (n for n in nodes if isinstance(n, sqs.Queue)):
        queues_by_arn[q.queue_arn] = name_of(q, "queue", ph)
    for q in (n for n in nodes if isinstance(n, sqs.Queue)):
        redrive = q.dead_letter_queue
        dead = (queues_by_arn.get(redrive.queue.queue_arn) or name_of(redrive.queue, "queue", ph)) if redrive else None
        inv_queues.append(Queue(queues_by_arn[q.queue_arn], dead_letter=dead, location=_loc(q)))
    sources: dict[str, tuple[str, str]] = {}  # source ARN token -> (kind, name)
    for s in (n for n in nodes if isinstance(n, kinesis.Stream)):
        sources[s.stream_arn] = ("kinesis", name_of(s, "stream", ph))
    for t in (n for n in nodes if isinstance(n, (dynamodb.Table, dynamodb.TableV2))):
        if t.table_stream_arn:
            sources[t.table_stream_arn] = ("dynamodb", name_of(t, "table", ph))
    sources.update({arn: ("sqs", name) for arn, name in queues_by_arn.items()})
    triggers: dict[str, list[str]] = {}
    for fn in functions:
        name = name_of(fn, "function", ph)
        fn_names[fn.function_name] = fn_names[fn.function_arn] = name
        by_name[name] = fn
    for n in nodes:
        if isinstance(n, lambda_.CfnPermission):
            principal = n.principal
            target = fn_names.get(n.function_name)
            if target is not None and principal in AC.TRIGGER_PRINCIPALS:
                kind = AC.TRIGGER_PRINCIPALS[principal]
                if kind == "apigateway-rest" and _under_http_api(n):
                    kind = "apigateway-http"
                triggers.setdefault(target, []).append(kind)
        elif isinstance(n, lambda_.CfnUrl) and n.target_function_arn in fn_names:
            triggers.setdefault(fn_names[n.target_function_arn], []).append("function-url")
    mappings: list[Mapping_] = []
    for n in nodes:
        if isinstance(n, lambda_.CfnEventSourceMapping) and n.function_name in fn_names:
            kind, source = sources.get(n.event_source_arn or "", ("unknown", None))
            mappings.append(Mapping_(fn_names[n.function_name], kind, source if source is not None else UNKNOWN,
                                     on_failure=_on_failure(n, queues_by_arn), location=_loc(n)))
    for name, fn in by_name.items():
        fn_dlq = fn.dead_letter_queue
        dead = (queues_by_arn.get(fn_dlq.queue_arn) or name_of(fn_dlq, "queue", ph)) if fn_dlq is not None else None
        l1 = fn.node.default_child
        handler = getattr(l1, "handler", None)
        inv_functions.append(Function(name, environment={}, dead_letter=dead, location=_loc(fn),
                                      handler=handler if isinstance(handler, str) else None, tags=tags_of(fn),
                                      invoked_by=tuple(dict.fromkeys(triggers.get(name, ())))))
    inventory = Inventory(cdk.Stack.of(stack).node.path, functions=tuple(inv_functions), mappings=tuple(mappings),
                          queues=tuple(inv_queues))
    derived = derive(inventory)
    out: list[tuple[dict[str, Any], lambda_.Function]] = []
    for d in derived.functions:
        fn = by_name[d.values["name"]]
        for todo in d.todos:
            cdk.Annotations.of(fn).add_warning_v2(f"idemwatch:{todo.key}", todo.comment())
        for key, note in d.notes.items():
            cdk.Annotations.of(fn).add_warning_v2(f"idemwatch:{key}", f"{key} {d.values.get(key)}: {note}")
        if "operation" in d.values and "event_source" in d.values:
            out.append((dict(d.values), fn))
    return out


def _loc(construct: IConstruct) -> Location:
    return Location(cdk.Stack.of(construct).node.path, construct.node.path)


def _on_failure(mapping: lambda_.CfnEventSourceMapping, queues_by_arn: dict[str, str]) -> Any:
    config = mapping.destination_config
    on_failure = getattr(config, "on_failure", None)
    destination = getattr(on_failure, "destination", None)
    return queues_by_arn.get(destination) if isinstance(destination, str) else None


def _under_http_api(construct: IConstruct) -> bool:
    from aws_cdk import aws_apigatewayv2 as apigwv2

    return any(isinstance(s, (apigwv2.HttpApi, apigwv2.WebSocketApi)) for s in construct.node.scopes)
