"""The CloudFormation export, bound for a CDK stack: no parameters, CDK tokens where the names are (pure Python:
this module imports no aws_cdk, so it is tested without Node.js).

The construct never builds an alarm itself. It writes a stack config whose resource names are
:class:`Placeholders` (plain names that survive every encoding the catalogue applies: alarm names, dimension
values, the percent- and ``*xx``-encoded console links, the dashboard body), runs the one generator of the
CloudFormation export (:func:`alarms.cfn_template.build_template`: catalogue, tiers, custom alarms,
treat-missing-data, descriptions with links, dashboard, outputs), and then :func:`bind` turns that parameterised
template into resources for the stack:

- logical ids are the export's with placeholders as labels (``ShopOrdersConsumerRetryRateAlarm``, or ``ShopName0RetryRateAlarm``
  for a function named by a token labelled ``Name0``); a ``Ref`` /
  ``Fn::GetAtt`` to a resource of the template names it by that id (the construct links it to the resource it
  made), and so does a ``${LogicalId}`` in an ``Fn::Sub`` (a composite alarm's ``AlarmRule`` naming its
  children): the variable becomes a ``Ref`` in the ``Fn::Sub``'s variable map;
- ``Ref`` to a template parameter becomes its value (the config's: name prefix, namespace, topic ARNs per
  severity), each ``Fn::If`` is decided by its condition (evaluated by :func:`alarms.cfn_template.resolve`),
  ``AWS::NoValue`` drops the key;
- a placeholder inside a string becomes ``${IdemwatchN}`` of an ``Fn::Sub`` whose variable map gives the token
  (``{"Fn::Sub": ["shop-${Idemwatch0}-RetryRate", {"Idemwatch0": <fn.function_name>}]}``); a string that is
  exactly one placeholder becomes the token itself; pseudo parameters (``${AWS::Region}``,
  ``${AWS::Partition}``) stay.

Every resource type the export writes (metric alarms, composite alarms with their suppressor, Contributor Insights
rules, the dashboard, and whatever kinds it gains) passes through unchanged apart from that binding, so the
construct follows the export by construction.

Placeholders are as long as the longest name AWS allows for their kind (a function 64 characters, a queue 80, a
stream 128, a table 255, an SNS topic ARN 1024 at most but written at 256), so descriptions fitted to the 1024
characters of AlarmDescription with the placeholder still fit with any real name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from alarms.catalogue import build_catalogue
from alarms.cfn_template import build_template, resolve
from alarms.config import StackConfig

__all__ = ["MAX_NAME", "BoundTemplate", "Placeholders", "bind", "monitoring_template"]

MAX_NAME = {"function": 64, "queue": 80, "stream": 128, "table": 255, "topic": 256, "name": 64}
"""Longest name per kind (Lambda FunctionName 64, SQS QueueName 80, Kinesis StreamName 128, DynamoDB TableName
255; a topic placeholder is a whole ARN). ``name``: anything else."""
_STEM = "Idemwatchref"
"""Capitalised: a description sentence that starts with a name capitalises it (the catalogue's ``_cap``), which
must leave a placeholder intact. (With a real name that starts in lower case the export writes ``Orders-...``
there and the construct the name itself.)"""
_DROP = object()
_SUB_VARIABLE = re.compile(r"\$\{([^!}][^}]*)\}")
"""A variable of an ``Fn::Sub`` text (``${!...}`` is literal text)."""


@dataclass
class Placeholders:
    """Placeholder name -> the value it stands for (a CDK token, or any CloudFormation value). The same value
    asked twice gets the same placeholder."""

    values: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    _by_value: dict[str, str] = field(default_factory=dict)

    def name(self, value: Any, kind: str = "name", label: str = "") -> str:
        """The placeholder for ``value`` (a string token is keyed by its text). ``kind`` sets its length
        (:data:`MAX_NAME`); ``label`` is a readable id for construct ids (alphanumerics kept)."""
        key = value if isinstance(value, str) else repr(value)
        if key in self._by_value:
            return self._by_value[key]
        n = len(self.values)
        stem = f"{_STEM}{n:04d}z"
        if kind == "topic":
            stem = f"arn:aws:sns:us-east-1:000000000000:{stem}"
        placeholder = stem + "x" * max(0, MAX_NAME.get(kind, MAX_NAME["name"]) - len(stem))
        self.values[placeholder] = value
        self.labels[placeholder] = re.sub(r"[^A-Za-z0-9]", "", label) or f"Ref{n}"
        self._by_value[key] = placeholder
        return placeholder

    def variable(self, placeholder: str) -> str:
        """The ``Fn::Sub`` variable that stands for ``placeholder``."""
        return "Idemwatch" + placeholder.split(_STEM, 1)[1][:4]

    def readable(self, text: str) -> str:
        """``text`` (a logical id, an output's description) with each placeholder replaced by its label."""
        for placeholder, label in self.labels.items():
            text = text.replace(placeholder.rsplit(":", 1)[-1], label)
        return text


@dataclass(frozen=True)
class BoundTemplate:
    """What the construct adds: ``resources`` (logical id -> ``{"Type", "Properties"}``) and ``outputs`` (output
    id -> ``{"Description", "Value"}``), both bound (see the module docstring). Logical ids, output ids, the
    ``Ref`` / ``Fn::GetAtt`` between the resources and the outputs' descriptions are the export's with each
    placeholder replaced by its label (:meth:`Placeholders.readable`): the construct's ids, free of tokens."""

    resources: dict[str, dict[str, Any]]
    outputs: dict[str, dict[str, Any]]


def monitoring_template(config: StackConfig, placeholders: Placeholders, dashboard: bool = True) -> BoundTemplate:
    """The export of ``config`` (whose names are ``placeholders``) bound for a CDK stack. Raises as
    :func:`alarms.cfn_template.build_template` (``ValueError`` beyond a CloudFormation quota) and
    :func:`alarms.catalogue.build_catalogue` (``ConfigError``)."""
    template = build_template(config, build_catalogue(config), dashboard=dashboard)
    return bind(template, placeholders)


def bind(template: Mapping[str, Any], placeholders: Placeholders) -> BoundTemplate:
    """``template`` (an :func:`~alarms.cfn_template.build_template` document) with its parameters and conditions
    decided and its placeholders turned into tokens (see the module docstring)."""
    params = {}
    for name, spec in (template.get("Parameters") or {}).items():
        value = spec.get("Default", "")
        params[name] = [v for v in value.split(",") if v] if spec.get("Type") == "CommaDelimitedList" else value
    conditions = _conditions(template)
    resources = template.get("Resources") or {}
    outputs = template.get("Outputs") or {}
    binder = _Binder(params, conditions, placeholders, _readable_ids(resources, placeholders))
    bound = {binder.lids[lid]: binder.value(res) for lid, res in resources.items()}
    # an output's Description takes no intrinsic function: its placeholders become labels (Placeholders.readable)
    bound_outputs = {ids: {**out, "Description": placeholders.readable(str(out.get("Description", ""))),
                           "Value": binder.value(out.get("Value"))}
                     for ids, out in zip(_readable_ids(outputs, placeholders).values(), outputs.values())}
    return BoundTemplate(bound, bound_outputs)


def _readable_ids(ids: Mapping[str, Any], placeholders: Placeholders) -> dict[str, str]:
    """Each id with its placeholders as labels; ``ValueError`` when two ids become one (two resources named by
    tokens of constructs with the same id: give one a physical name or a construct id of its own)."""
    out: dict[str, str] = {}
    seen: dict[str, str] = {}
    for i in ids:
        out[i] = placeholders.readable(i)
        if seen.setdefault(out[i], i) != i:
            raise ValueError(f"two resources of the export would have the logical id {out[i]}: name the "
                             "constructs their names come from apart")
    return out


def _conditions(template: Mapping[str, Any]) -> dict[str, bool]:
    """Each condition's value with the parameters' defaults, by the export's own evaluator."""
    conditions = template.get("Conditions") or {}
    if not conditions:
        return {}
    probe = {"Parameters": template.get("Parameters") or {}, "Conditions": conditions,
             "Resources": {"Probe": {"Type": "Probe", "Properties": {c: {"Fn::If": [c, True, False]}
                                                                       for c in conditions}}}}
    return dict(resolve(probe)["Resources"]["Probe"]["Properties"])


class _Binder:
    def __init__(self, params: Mapping[str, Any], conditions: Mapping[str, bool], placeholders: Placeholders,
                 lids: Mapping[str, str]):
        self.params = params
        self.conditions = conditions
        self.placeholders = placeholders
        self.lids = lids  # the export's logical id -> the bound one
        # longest first: no placeholder is a prefix of another (fixed-width numbers), but be safe
        self.order = sorted(placeholders.values, key=len, reverse=True)

    def value(self, v: Any) -> Any:
        if isinstance(v, list):
            return [x for x in (self.value(i) for i in v) if x is not _DROP]
        if isinstance(v, str):
            return self._string(v)
        if not isinstance(v, dict):
            return v
        if len(v) == 1:
            (key, arg), = v.items()
            if key == "Ref" and arg in self.params:
                return self.value(self.params[arg])  # a topic ARN in it may be a placeholder
            if key == "Ref" and arg == "AWS::NoValue":
                return _DROP
            if key == "Ref" and arg in self.lids:  # a resource of the template, by its bound logical id
                return {"Ref": self.lids[arg]}
            if key == "Fn::GetAtt" and isinstance(arg, list) and arg and arg[0] in self.lids:
                return {"Fn::GetAtt": [self.lids[arg[0]], *arg[1:]]}
            if key == "Ref" or key == "Fn::GetAtt":
                return dict(v)
            if key == "Fn::If":
                cond, yes, no = arg
                return self.value(yes if self.conditions[cond] else no)
            if key == "Fn::Sub":
                text, variables = (arg, {}) if isinstance(arg, str) else (arg[0], dict(arg[1]))
                return self._sub(text, {k: self.value(x) for k, x in variables.items()})
        return {k: x for k, x in ((k, self.value(x)) for k, x in v.items()) if x is not _DROP}

    def _string(self, s: str) -> Any:
        if s in self.placeholders.values:
            return self.placeholders.values[s]
        if not any(p in s for p in self.order):
            return s
        return self._sub(s.replace("${", "${!"), {})

    def _sub(self, text: str, variables: dict[str, Any]) -> Any:
        def variable(m: re.Match[str]) -> str:
            name = m.group(1)
            value = self.params.get(name)
            if isinstance(value, str):  # a String parameter: its value, literal
                return value.replace("${", "${!")
            if name in self.lids:  # a resource of the template (a composite's child): a Ref in the map
                var, ref = self.lids[name], {"Ref": self.lids[name]}
                if variables.setdefault(var, ref) != ref:
                    raise ValueError(f"Fn::Sub variable {var} stands for two values")
                return "${" + var + "}"
            return m.group(0)  # a pseudo parameter, or a variable of the map

        # one pass, before the placeholders: a logical id of the export may hold one
        text = _SUB_VARIABLE.sub(variable, text)
        for p in self.order:
            if p in text:
                var = self.placeholders.variable(p)
                text = text.replace(p, "${" + var + "}")
                variables[var] = self.placeholders.values[p]
        if "${" not in text:
            return text
        return {"Fn::Sub": [text, variables] if variables else text}
