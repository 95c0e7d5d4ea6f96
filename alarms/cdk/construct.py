"""``IdempotencyMonitoring``: idemwatch's alarms, console dashboard and outputs next to the functions of a CDK stack.

    from alarms.cdk import IdempotencyMonitoring, MonitoredFunction

    IdempotencyMonitoring(self, "Idempotency", service="shop", table=idempotency_table,
                          functions=[MonitoredFunction(orders_fn, "ProcessOrders", queue=orders_queue,
                                                       dlq=orders_dlq)],
                          config="stack.yaml")          # thresholds, actions, overrides, custom alarms ...

    IdempotencyMonitoring(self, "Idempotency", service="shop", table=idempotency_table, discover=True)

What it adds is the CloudFormation export of the same stack config (:mod:`alarms.cdk.template`: one generator),
with CDK tokens for the names. ``discover=True`` adds an Aspect that, at synthesis, finds every Lambda function of
the stack with an event source mapping (or an API Gateway, EventBridge, SNS or URL trigger), its queue, the
queue's redrive DLQ, the stream and its on-failure destination, the function's DLQ, and the ``idemwatch:operation``
tag (:mod:`alarms.cdk.discovery` reads the construct tree into the audit's resource model;
:func:`alarms.stack_init.derive` decides, as for ``idemwatch init``).

Service and namespace follow the stack config's rule (the value given, else ``$IDEMWATCH_SERVICE`` /
``$POWERTOOLS_SERVICE_NAME`` of the synthesizing process, else the emitter's default); with
``set_environment=True`` (the default) the construct also sets ``IDEMWATCH_SERVICE`` and ``IDEMWATCH_NAMESPACE``
on each monitored ``lambda.Function``, so the emitter in the function writes the dimensions the alarms watch.
(A CDK construct cannot read a function's environment before synthesis: jsii hands the lazily rendered value
over as an empty struct.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import jsii
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IConstruct

from alarms.cdk.discovery import discover_functions, name_of, operation_of
from alarms.cdk.template import Placeholders, monitoring_template
from alarms.config import parse_config
from alarms.exceptions import ConfigError
from emitter.contract import ENV_NAMESPACE, ENV_SERVICE, EventSource

__all__ = ["IdempotencyMonitoring", "MonitoredFunction"]

_FUNCTION_SETTINGS = {"overrides", "dimensions", "disabled_signals", "log_group"}


class MonitoredFunction:
    """One function to monitor, with what the construct cannot see: ``operation`` (the Operation dimension its
    handler writes; default: the function's ``idemwatch:operation`` tag, else the handler's function name, the
    emitter's default), ``event_source`` (an ``emitter.contract.EventSource`` value; default sqs with a queue,
    kinesis with a stream, dynamodb with a table as the stream, else required), ``queue`` / ``dlq`` (``sqs.IQueue``; ``dlq`` defaults to the
    ``sqs.Queue``'s redrive dead-letter queue), ``stream`` (``kinesis.IStream``,
    or a ``dynamodb.ITable`` for DynamoDB Streams) and the stack config's per-function ``settings``
    (``overrides``, ``dimensions``, ``disabled_signals``, ``log_group`` as a literal name)."""

    def __init__(self, function: lambda_.IFunction, operation: str | None = None, *, event_source: str | None = None,
                 queue: Any = None, dlq: Any = None, stream: Any = None, **settings: Any) -> None:
        unknown = set(settings) - _FUNCTION_SETTINGS
        if unknown:
            raise TypeError(f"MonitoredFunction got unknown setting(s) {', '.join(sorted(unknown))} "
                            f"(known: {', '.join(sorted(_FUNCTION_SETTINGS))})")
        self.function = function
        self.operation = operation
        self.event_source = event_source
        self.queue = queue
        self.dlq = dlq
        self.stream = stream
        self.settings = settings


class IdempotencyMonitoring(Construct):
    """idemwatch's alarms, console dashboard and outputs for some functions of a stack (see the module docstring).

    ``config``: a stack config file (path) or mapping with the team's settings (thresholds, ``overrides``,
    ``actions``, ``tags``, ``custom_alarms``, ``region``, ...; its ``functions`` and ``idempotency_table`` come
    from here instead); ``settings``: stack config keys that win over ``config`` (``service``, ``namespace``,
    ``stack``, ``alarm_name_prefix``, ...); ``actions``: severity -> SNS topics (``sns.ITopic`` or ARNs), over the
    config's. ``dashboard`` adds the console dashboard, ``outputs`` the export's Outputs (an ARN per alarm,
    composite alarm and Contributor Insights rule, and the dashboard name). Raises
    :class:`~alarms.exceptions.ConfigError` for a config the CLI would refuse and ``ValueError`` beyond a
    CloudFormation quota or when two resources named by tokens of same-id constructs would share a logical id, at
    construction (or, with ``discover``, at synthesis).

    Attributes after building: ``alarms`` (the export's logical id, placeholders as labels -> ``CfnResource``: the
    metric alarms, composite alarms and Contributor Insights rules),
    ``dashboard`` (``CfnResource`` or None), ``config`` (the :class:`~alarms.config.StackConfig`, with placeholder
    names) and ``placeholders`` (:class:`~alarms.cdk.template.Placeholders`: each placeholder's token).
    """

    def __init__(self, scope: Construct, construct_id: str, *, functions: Sequence[MonitoredFunction | Any] = (),
                 table: dynamodb.ITable | None = None, config: str | Path | Mapping[str, Any] | None = None,
                 actions: Mapping[str, Sequence[Any]] | None = None, discover: bool = False,
                 dashboard: bool = True, outputs: bool = True, set_environment: bool = True,
                 **settings: Any) -> None:
        super().__init__(scope, construct_id)
        self._functions = [f if isinstance(f, MonitoredFunction) else MonitoredFunction(f) for f in functions]
        self._table = table
        self._settings = {**_config_settings(config), **settings}
        self._actions = actions
        self._dashboard = dashboard
        self._outputs = outputs
        self._set_environment = set_environment
        self.alarms: dict[str, cdk.CfnResource] = {}
        self.dashboard: cdk.CfnResource | None = None
        self.config: Any = None
        self.placeholders = Placeholders()
        if discover:
            cdk.Aspects.of(self).add(_Discovery(self))
        else:
            if not self._functions:
                raise ConfigError("give functions=[...] or discover=True", "functions")
            self._build([], Placeholders())

    # ------------------------------------------------------------------ building
    def _build(self, discovered: list[tuple[dict[str, Any], lambda_.Function]], ph: Placeholders) -> None:
        explicit = [self._entry(f, ph) for f in self._functions]
        names = {e["name"] for e in explicit}
        found = [(entry, fn) for entry, fn in discovered if entry["name"] not in names]
        entries = explicit + [entry for entry, _ in found]
        if not entries:
            raise ConfigError("no function to monitor: none was given and discovery found no function with an "
                              "event source mapping or trigger", "functions")
        data: dict[str, Any] = {**self._settings, "functions": entries}
        if self._table is not None:
            data["idempotency_table"] = name_of(self._table, "table", ph)
        if self._actions is not None:
            data["actions"] = {sev: [_arn(t, ph) for t in topics] for sev, topics in self._actions.items()}
        self.config = parse_config(data)
        self.placeholders = ph
        bound = monitoring_template(self.config, ph, dashboard=self._dashboard)
        made: dict[str, cdk.CfnResource] = {}
        for lid, res in bound.resources.items():
            made[lid] = cdk.CfnResource(self, lid, type=res["Type"])
            if res["Type"] == "AWS::CloudWatch::Dashboard":
                self.dashboard = made[lid]
        for lid, res in bound.resources.items():  # all made first: a resource may refer to a later one
            if res.get("Properties"):
                made[lid].add_override("Properties", _link(res["Properties"], made))
        self.alarms = {lid: r for lid, r in made.items() if r is not self.dashboard}
        if self._outputs:
            for oid, out in bound.outputs.items():
                cdk.CfnOutput(self, oid, value=_output_value(out["Value"], made),
                              description=out["Description"])
        if self._set_environment:
            for fn in [*(f.function for f in self._functions), *(fn for _, fn in found)]:
                if isinstance(fn, lambda_.Function):
                    fn.add_environment(ENV_SERVICE, self.config.service)
                    fn.add_environment(ENV_NAMESPACE, self.config.namespace)

    def _entry(self, f: MonitoredFunction, ph: Placeholders) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": name_of(f.function, "function", ph)}
        operation = f.operation
        if operation is None:
            operation, note = operation_of(f.function)
            if operation is None:
                raise ConfigError(f"{f.function.node.path}: say its operation (MonitoredFunction(fn, \"<Operation>\") "
                                  "or the tag idemwatch:operation): the function has no readable handler",
                                  "functions")
            if note:
                cdk.Annotations.of(f.function).add_warning_v2("idemwatch:operation", note)
        entry["operation"] = operation
        streamed = EventSource.DYNAMODB.value if hasattr(f.stream, "table_stream_arn") else EventSource.KINESIS.value
        event_source = f.event_source or (EventSource.SQS.value if f.queue is not None else
                                          streamed if f.stream is not None else None)
        if event_source is None:
            raise ConfigError(f"{f.function.node.path}: say its event_source (one of: "
                              + ", ".join(e.value for e in EventSource) + ")", "functions")
        entry["event_source"] = event_source
        if f.queue is not None:
            entry["queue"] = name_of(f.queue, "queue", ph)
        if f.stream is not None:
            entry["stream"] = name_of(f.stream, "stream", ph)
        dlq = f.dlq
        if dlq is None and isinstance(f.queue, sqs.Queue) and f.queue.dead_letter_queue is not None:
            dlq = f.queue.dead_letter_queue.queue  # the source queue's redrive target
        if dlq is not None:
            entry["dlq"] = name_of(dlq, "queue", ph)
        entry.update(f.settings)
        return entry


@jsii.implements(cdk.IAspect)
class _Discovery:
    """The Aspect of ``discover=True``: visited at synthesis, on the monitoring construct (every construct of the
    app exists by then), it discovers and builds once."""

    def __init__(self, owner: IdempotencyMonitoring) -> None:
        self.owner = owner
        self.done = False

    def visit(self, node: IConstruct) -> None:
        if self.done or node is not self.owner:
            return
        self.done = True
        ph = Placeholders()
        skip = frozenset(f.function.node.path for f in self.owner._functions)
        self.owner._build(discover_functions(cdk.Stack.of(self.owner), ph, skip=skip), ph)


def _config_settings(config: str | Path | Mapping[str, Any] | None) -> dict[str, Any]:
    if config is None:
        return {}
    if isinstance(config, Mapping):
        data = dict(config)
    else:
        import yaml

        try:
            data = yaml.safe_load(Path(config).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read the stack config: {exc}", file=str(config)) from None
        if not isinstance(data, dict):
            raise ConfigError("the config must be a mapping at the top level", file=str(config))
    data.pop("functions", None)  # the construct's own
    data.pop("idempotency_table", None)
    return data


def _arn(topic: Any, ph: Placeholders) -> str:
    if isinstance(topic, str) and not cdk.Token.is_unresolved(topic):
        return topic
    arn = getattr(topic, "topic_arn", topic)
    return ph.name(arn, "topic", getattr(getattr(topic, "node", None), "id", "Topic"))


def _link(value: Any, made: Mapping[str, cdk.CfnResource]) -> Any:
    """``value`` with each ``Ref`` / ``Fn::GetAtt`` to a resource of the export (its logical id) made a token of
    the resource the construct made for it (CDK allocates the logical ids in the stack)."""
    if isinstance(value, list):
        return [_link(v, made) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"Ref"} and value["Ref"] in made:
        return made[value["Ref"]].ref
    if set(value) == {"Fn::GetAtt"} and isinstance(value["Fn::GetAtt"], list) and value["Fn::GetAtt"][0] in made:
        lid, attr = value["Fn::GetAtt"]
        return made[lid].get_att(attr).to_string()
    return {k: _link(v, made) for k, v in value.items()}


def _output_value(value: Any, made: Mapping[str, cdk.CfnResource]) -> str:
    linked = _link(value, made)
    return linked if isinstance(linked, str) else cdk.Token.as_string(linked)
