"""What a stack config can say about a stack, from the audit's resource model (:class:`~alarms.audit.model.Inventory`).

One rule per key, each from the same resolution the audit uses (function -> event source mapping -> queue ->
redrive DLQ; stream mapping -> on-failure destination; asynchronous invocation -> DLQ / on-failure destination;
idempotency table from the functions' environment):

- which functions: those something invokes (an event source mapping, API Gateway, EventBridge, SNS, a function
  URL, ...) or that carry an idemwatch/Powertools setting (``IDEMWATCH_*``/``POWERTOOLS_*`` variables, an
  idempotency-table variable, the ``idemwatch:operation`` tag). The others (custom-resource handlers, log
  retention helpers) are listed as skipped, never monitored by surprise;
- ``operation``: the function's ``idemwatch:operation`` tag; else the handler's function name (``orders.handler``
  -> ``handler``), which is the emitter's default (``@em.handler`` without ``operation=``), written with a
  comment saying so; without either, a TODO;
- ``event_source``: the mapping's kind (sqs, kinesis, dynamodb), else what invokes the function;
- ``service`` / ``namespace``: the emitter's own rule (:func:`emitter.contract.resolve_service`,
  :func:`~emitter.contract.resolve_namespace`) over each function's environment; functions that disagree are a
  TODO;
- ``idempotency_table``: the table the functions' idempotency-table variable names.

A value that does not resolve (``Fn::ImportValue``, a parameter without a default, a Terraform variable, a queue
outside the template) is never guessed: it becomes a :class:`Todo`, written as a comment.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from alarms.audit import constants as AC
from alarms.audit.model import Function, Inventory, Mapping_, is_unknown
from emitter.contract import (
    ENV_NAMESPACE,
    ENV_NAMESPACE_FALLBACK,
    ENV_SERVICE,
    ENV_SERVICE_FALLBACK,
    EventSource,
    resolve_namespace,
    resolve_service,
)

__all__ = ["FUNCTION_KEYS", "OPERATION_NOTE", "Derived", "DerivedFunction", "Todo", "derive", "operation_for"]

FUNCTION_KEYS = ("name", "operation", "event_source", "queue", "stream", "dlq")
"""The keys of a function entry init writes, in the order it writes them."""
_SETTING_PREFIXES = ("IDEMWATCH_", "POWERTOOLS_")
_MAPPING_SOURCES = {"sqs": EventSource.SQS.value, "kinesis": EventSource.KINESIS.value,
                    "dynamodb": EventSource.DYNAMODB.value}


@dataclass(frozen=True)
class Todo:
    """A key that could not be resolved: ``key`` (a stack config key of the function, or top-level) and why."""

    key: str
    reason: str

    def comment(self) -> str:
        return f"TODO(idemwatch init): {self.key}: {self.reason}"


@dataclass
class DerivedFunction:
    """One function entry: ``values`` (keys of :data:`FUNCTION_KEYS` that resolved), ``notes`` (key -> an
    end-of-line comment) and ``todos``; ``logical_id`` where the template declares it."""

    values: dict[str, str]
    notes: dict[str, str] = field(default_factory=dict)
    todos: list[Todo] = field(default_factory=list)
    logical_id: str | None = None


@dataclass
class Derived:
    """The stack config init proposes: top-level ``settings`` (service, namespace, idempotency_table, and
    stack/region/account_id when the source states them), their ``notes`` and ``todos``, the ``functions`` and
    the names of the functions ``skipped``."""

    settings: dict[str, str]
    functions: list[DerivedFunction]
    notes: dict[str, str] = field(default_factory=dict)
    todos: list[Todo] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def todo_count(self) -> int:
        return len(self.todos) + sum(len(f.todos) for f in self.functions)


def derive(inv: Inventory, *, stack: str | None = None, region: str | None = None,
           account_id: str | None = None) -> Derived:
    """The proposal for ``inv`` (see the module docstring). ``stack``, ``region`` and ``account_id`` are what
    the source states beside the template (a cloud assembly's manifest); None leaves them out. Never raises on
    unresolved values: they become :class:`Todo` entries."""
    by_function: dict[str, list[Mapping_]] = {}
    unnamed: list[Mapping_] = []
    for m in inv.mappings:
        if isinstance(m.function, str):
            by_function.setdefault(m.function, []).append(m)
        else:
            unnamed.append(m)
    functions: list[DerivedFunction] = []
    chosen: list[Function] = []
    skipped: list[str] = []
    for fn in inv.functions:
        if fn.name in by_function or fn.invoked_by or _has_settings(fn):
            chosen.append(fn)
            functions.append(_function(inv, fn, by_function.get(fn.name, [])))
        else:
            skipped.append(fn.name)
    derived = Derived(settings={}, functions=functions, skipped=skipped)
    for m in unnamed:
        derived.todos.append(Todo("functions", f"the {m.source_kind} event source mapping "
                                  f"{_lid(m)} names a function outside the template or unresolved; add it by hand"))
    if stack:
        derived.settings["stack"] = stack
    _environment_setting(derived, chosen, "service", (ENV_SERVICE, ENV_SERVICE_FALLBACK), resolve_service)
    _environment_setting(derived, chosen, "namespace", (ENV_NAMESPACE, ENV_NAMESPACE_FALLBACK), resolve_namespace)
    tables = sorted(inv.idempotency_tables)
    if len(tables) == 1:
        derived.settings["idempotency_table"] = tables[0]
    elif tables:
        derived.todos.append(Todo("idempotency_table", f"the functions name several idempotency tables "
                                  f"({', '.join(tables)}); the config takes one: split the stack config"))
    if region:
        derived.settings["region"] = region
    if account_id:
        derived.settings["account_id"] = account_id
    return derived


def _has_settings(fn: Function) -> bool:
    env = fn.environment if isinstance(fn.environment, dict) else {}
    tags = fn.tags if isinstance(fn.tags, dict) else {}
    return AC.OPERATION_TAG in tags or any(
        k.startswith(_SETTING_PREFIXES) or k in AC.IDEMPOTENCY_TABLE_ENV_KEYS for k in env)


def _lid(m: Mapping_) -> str:
    return m.location.logical_id if m.location is not None and m.location.logical_id else f"of {m.name}"


def _function(inv: Inventory, fn: Function, mappings: list[Mapping_]) -> DerivedFunction:
    out = DerivedFunction(values={"name": fn.name},
                          logical_id=fn.location.logical_id if fn.location is not None else None)
    _operation(fn, out)
    if mappings:
        m = mappings[0]
        for extra in mappings[1:]:
            out.todos.append(Todo("event_source", f"mapping {_lid(extra)} ({extra.source_kind}, "
                                  f"{_text(extra.source)}) also invokes it; a config entry has one source: "
                                  "add a second function entry by hand if its alarms should differ"))
        kind = _MAPPING_SOURCES.get(m.source_kind)
        if kind is None:
            out.todos.append(Todo("event_source", f"the source of mapping {_lid(m)} could not be resolved "
                                  "(sqs, kinesis or dynamodb)"))
            return out
        out.values["event_source"] = kind
        if kind == EventSource.SQS.value:
            _sqs(inv, m, out)
        else:
            _stream(m, out)
        return out
    if fn.invoked_by:
        out.values["event_source"] = fn.invoked_by[0]
        if len(set(fn.invoked_by)) > 1:
            out.notes["event_source"] = f"also invoked by {', '.join(sorted(set(fn.invoked_by[1:])))}"
    else:
        out.values["event_source"] = EventSource.GENERIC.value
        out.notes["event_source"] = "nothing in the template invokes it; name its event source"
    _async_dlq(fn, out)
    return out


OPERATION_NOTE = "the handler's name: check it (see the header)"


def operation_for(tags: Any, handler: Any) -> tuple[str | None, str | None]:
    """(operation, note) of a function: its ``idemwatch:operation`` tag (note None); else the handler's function
    name (``orders.handler`` -> ``handler``, the emitter's default) with :data:`OPERATION_NOTE`; else (None,
    None): nothing says it."""
    tagged = tags.get(AC.OPERATION_TAG) if isinstance(tags, dict) else None
    if isinstance(tagged, str) and tagged:
        return tagged, None
    if isinstance(handler, str) and handler.rsplit(".", 1)[-1]:
        return handler.rsplit(".", 1)[-1], OPERATION_NOTE
    return None, None


def _operation(fn: Function, out: DerivedFunction) -> None:
    operation, note = operation_for(fn.tags, fn.handler)
    if operation is None:
        out.todos.append(Todo("operation", "the Operation dimension the handler writes (@em.handler(operation="
                              f"...)); the template has no {AC.OPERATION_TAG} tag and no readable Handler"))
        return
    out.values["operation"] = operation
    if note:
        out.notes["operation"] = note


def _sqs(inv: Inventory, m: Mapping_, out: DerivedFunction) -> None:
    if not isinstance(m.source, str):
        out.todos.append(Todo("queue", f"the SQS source of mapping {_lid(m)} could not be resolved (an import, a "
                              "parameter without a default or an expression); name the queue"))
        out.todos.append(Todo("dlq", "its dead-letter queue, once the source queue is known"))
        return
    out.values["queue"] = m.source
    queue = inv.queue(m.source)
    if queue is None:
        out.todos.append(Todo("dlq", f"queue {m.source} is not declared in the template, so its redrive policy is "
                              "unknown; name its dead-letter queue (or leave dlq out if it has none)"))
        return
    if is_unknown(queue.dead_letter):
        out.todos.append(Todo("dlq", f"the redrive policy of queue {m.source} could not be resolved; name its "
                              "dead-letter queue"))
    elif queue.dead_letter is not None:
        out.values["dlq"] = queue.dead_letter


def _stream(m: Mapping_, out: DerivedFunction) -> None:
    if isinstance(m.source, str):
        out.values["stream"] = m.source
    else:
        out.todos.append(Todo("stream", f"the stream of mapping {_lid(m)} could not be resolved; name it"))
    if is_unknown(m.on_failure):
        out.todos.append(Todo("dlq", f"the on-failure destination of mapping {_lid(m)} could not be resolved; name "
                              "the SQS queue"))
    elif isinstance(m.on_failure, str):
        out.values["dlq"] = m.on_failure


def _async_dlq(fn: Function, out: DerivedFunction) -> None:
    for value, what in ((fn.dead_letter, "dead-letter queue"), (fn.on_failure, "on-failure destination")):
        if is_unknown(value):
            out.todos.append(Todo("dlq", f"the {what} could not be resolved; name the SQS queue"))
            return
        if isinstance(value, str):
            out.values["dlq"] = value
            return


def _environment_setting(derived: Derived, functions: list[Function], key: str, variables: tuple[str, str],
                         rule: Any) -> None:
    """``service``/``namespace``: the emitter's rule over each function's environment (only the variables the
    rule reads), one value for the stack; a variable that does not resolve, or functions that disagree, a TODO."""
    values: Counter[str] = Counter()
    for fn in functions:
        env = fn.environment
        if is_unknown(env) or any(is_unknown(env.get(v)) or (env.get(v) is not None and not isinstance(env.get(v), str))
                                  for v in variables):
            derived.todos.append(Todo(key, f"function {fn.name}'s {' / '.join(variables)} could not be resolved"))
            return
        values[rule(None, {v: env[v] for v in variables if env.get(v)})] += 1
    if len(values) == 1:
        (value,) = values
        derived.settings[key] = value
        if all(not (fn.environment.get(variables[0]) or fn.environment.get(variables[1])) for fn in functions):
            derived.notes[key] = f"no function sets {' or '.join(variables)}: the emitter's default"
    elif values:
        derived.todos.append(Todo(key, "the functions write different values (" + ", ".join(
            f"{v}: {n}" for v, n in sorted(values.items())) + "); a stack config has one: split it"))


def _text(v: Any) -> str:
    return v if isinstance(v, str) else "unresolved"
