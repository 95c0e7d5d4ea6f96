"""The CloudFormation export, bound for a CDK stack: no parameters, CDK tokens where the names are (pure Python:
this module imports no aws_cdk, so it is tested without Node.js).

The construct never builds an alarm itself. It writes a stack config whose resource names are
:class:`Placeholders` (plain names that survive every encoding the catalogue applies: alarm names, dimension
values, the percent- and ``*xx``-encoded console links, the dashboard body), runs the one generator of the
CloudFormation export (:func:`alarms.cfn_template.build_template`: catalogue, tiers, custom alarms,
treat-missing-data, descriptions with links, dashboard, outputs), and then :func:`bind` turns that parameterised
template into resources for the stack:

- a ``Ref`` / ``Fn::GetAtt`` to a resource of the template keeps its logical id (the construct links it to the
  resource it made); ``Ref`` to a template parameter becomes its value (the config's: name prefix, namespace, topic ARNs), each
  ``Fn::If`` is decided by its condition (evaluated by :func:`alarms.cfn_template.resolve`), ``AWS::NoValue``
  drops the key;
- a placeholder inside a string becomes ``${IdemwatchN}`` of an ``Fn::Sub`` whose variable map gives the token
  (``{"Fn::Sub": ["shop-${Idemwatch0}-RetryRate", {"Idemwatch0": <fn.function_name>}]}``); a string that is
  exactly one placeholder becomes the token itself; pseudo parameters (``${AWS::Region}``) stay.

Every resource type the export writes (alarms, the dashboard, and whatever kinds it gains) passes through
unchanged apart from that binding, so the construct follows the export by construction.

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
    """What the construct adds: ``resources`` (logical id of the export -> ``{"Type", "Properties"}``) and
    ``outputs`` (output id -> ``{"Description", "Value"}``), both bound (see the module docstring; an output's
    description names resources by their labels)."""

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
    binder = _Binder(params, conditions, placeholders)
    resources = {lid: binder.value(res) for lid, res in (template.get("Resources") or {}).items()}
    # an output's Description takes no intrinsic function: its placeholders become labels (Placeholders.readable)
    outputs = {oid: {**out, "Description": placeholders.readable(str(out.get("Description", "")))}
               for oid, out in (template.get("Outputs") or {}).items()}
    return BoundTemplate(resources, outputs)


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
    def __init__(self, params: Mapping[str, Any], conditions: Mapping[str, bool], placeholders: Placeholders):
        self.params = params
        self.conditions = conditions
        self.placeholders = placeholders
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
            if key == "Ref" or key == "Fn::GetAtt":  # a resource of the template: its logical id stays
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
        for name, value in self.params.items():
            if isinstance(value, str):
                text = text.replace("${" + name + "}", value.replace("${", "${!"))
        for p in self.order:
            if p in text:
                var = self.placeholders.variable(p)
                text = text.replace(p, "${" + var + "}")
                variables[var] = self.placeholders.values[p]
        if "${" not in text:
            return text
        return {"Fn::Sub": [text, variables] if variables else text}
