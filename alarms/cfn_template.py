"""CloudFormation templates of the alarms: the plain one (:func:`to_cloudformation`) and one an existing stack
can include (:func:`build_template`: Parameters, Conditions, alarms, composite alarms, Contributor Insights rules,
dashboard, Outputs). Every resource is mapped from its API request (:mod:`alarms.kinds`): property names are the
API's, but ``RuleBody`` for ``RuleDefinition``; a composite names the alarms of the template by reference
(``${LogicalId}`` in its rule, ``Ref`` as its suppressor), so CloudFormation creates them first.

Parameters of the included template (defaults = the stack config's values, so it deploys as-is):

- ``NamePrefix`` (String): the alarm name prefix (``AlarmName: !Sub "${NamePrefix}<rest>"``);
- ``Namespace`` (String): this project's EMF namespace, on every metric of it;
- console links in ``AlarmDescription`` use ``${AWS::Region}`` (``Fn::Sub``);
- ``<Severity>AlarmActions`` / ``<Severity>OkActions`` (CommaDelimitedList) per severity in use: the
  SNS topic ARNs. An empty value means no action: a condition ``Has<Severity>AlarmActions`` turns the
  property into ``AWS::NoValue`` (an empty CommaDelimitedList is ``[""]``, which PutMetricAlarm refuses).

Alarms whose actions the stack config sets explicitly (a tier's or a custom alarm's ``actions``) keep
them literal. Outputs: ``<LogicalId>Arn`` per alarm, composite and rule (``Fn::GetAtt Arn``) and ``DashboardName``. With
``dashboard=True`` an ``AWS::CloudWatch::Dashboard`` whose ``DashboardBody`` is an ``Fn::Sub`` of the console
dashboard body (``${AWS::Region}``, ``${AWS::AccountId}``, ``${NamePrefix}``, ``${Namespace}``).

Literal text: a string from the stack config that holds ``${...}`` is written as an ``Fn::Sub`` with
``${!`` ("to write a dollar sign and curly braces literally, add an exclamation point after the open curly
brace": Fn::Sub reference), so a dimension value ``${AWS::Region}`` stays that text and cfn-lint finds no
variable outside a Sub (E1029). :func:`check_limits` refuses, before anything is built, a template beyond the
CloudFormation quotas (500 resources, 200 outputs, 200 parameters per template).

:func:`resolve` evaluates the intrinsics these templates use (Ref, also of an alarm or rule resource: its name;
Fn::Sub, Fn::If, Fn::Equals, Fn::Not, Fn::Or, Fn::And, Fn::Join, Fn::GetAtt left as is) with given parameter
values for a Region (``AWS::Partition`` from botocore's partition data), which is how ``validate``
reads a template and how the deploy test substitutes values. It is not a general CloudFormation
engine: other intrinsics raise ``ValueError``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from alarms import alarm_rule
from alarms.composite import CompositeDefinition, build_composites
from alarms.constants import RESOURCE_NAME_PROPERTIES
from alarms.console_dashboard import dashboard_name, templated_body
from alarms.definitions import AlarmDefinition
from alarms.insight_rules import InsightRuleDefinition, build_insight_rules
from alarms.kinds import COMPOSITE_ALARM, INSIGHT_RULE, KINDS, METRIC_ALARM, kind_of, name_of
from alarms.links import console_base
from alarms.naming import logical_id
from alarms.regions import DEFAULT_REGION, partition_of
from alarms.types import Severity

CFN_ALARM_TYPE = KINDS[METRIC_ALARM].cfn_type
CFN_COMPOSITE_TYPE = KINDS[COMPOSITE_ALARM].cfn_type
CFN_INSIGHT_RULE_TYPE = KINDS[INSIGHT_RULE].cfn_type
CFN_DASHBOARD_TYPE = "AWS::CloudWatch::Dashboard"
_TYPE_KIND = {k.cfn_type: op for op, k in KINDS.items()}
_RENAMED = {INSIGHT_RULE: {"RuleDefinition": "RuleBody"}}
"""API member -> CloudFormation property where the two differ (AWS::CloudWatch::InsightRule takes RuleBody)."""
# CloudFormation quotas, per template ("AWS CloudFormation quotas", CloudFormation User Guide)
MAX_RESOURCES = 500
MAX_OUTPUTS = 200
_NO_VALUE = object()
_VARIABLE = re.compile(r"\$\{[^}]*\}")


def literal(value: Any) -> Any:
    """``value`` with every string that holds ``${...}`` written as ``{"Fn::Sub": ...}`` with ``${!`` (a literal
    in CloudFormation); intrinsic functions already in ``value`` (``{"Ref": ...}``, ``{"Fn::...": ...}``) are
    left as they are."""
    if isinstance(value, str):
        return {"Fn::Sub": value.replace("${", "${!")} if _VARIABLE.search(value) else value
    if isinstance(value, Mapping):
        if len(value) == 1 and next(iter(value)) in ("Ref", "Condition") or any(
                str(k).startswith("Fn::") for k in value):
            return dict(value)
        return {k: literal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [literal(v) for v in value]
    return value


def check_limits(alarms: int, dashboard: bool = False, outputs: bool = True) -> None:
    """Raise ``ValueError`` when a template of ``alarms`` alarm resources (plus the dashboard, and an output per
    resource when ``outputs``) would break a CloudFormation quota. Called before the template is built or
    validated, so an export that cannot deploy fails at once. (The parameters, at most 8, are far below theirs.)"""
    resources = alarms + (1 if dashboard else 0)
    problems = []
    if resources > MAX_RESOURCES:
        problems.append(f"{resources} resources (at most {MAX_RESOURCES})")
    if outputs and resources > MAX_OUTPUTS:
        problems.append(f"{resources} outputs (at most {MAX_OUTPUTS})")
    if problems:
        raise ValueError(f"the CloudFormation template would have {' and '.join(problems)} per template; split "
                         "the stack config into several stacks")


def to_cloudformation(requests: Iterable[Mapping[str, Any]], stack: str) -> dict[str, Any]:
    """A template with one resource per request: ``AWS::CloudWatch::Alarm`` per PutMetricAlarm request,
    ``AWS::CloudWatch::CompositeAlarm`` per PutCompositeAlarm request (the alarms its rule and suppressor name, when
    the template defines them, by reference: ``${LogicalId}`` in the rule, so CloudFormation creates them first),
    ``AWS::CloudWatch::InsightRule`` per PutInsightRule request. Logical ids come from the names, properties are
    :func:`literal`. Raises ``ValueError`` when two resources map to one logical id."""
    requests = list(requests)
    logicals = _logicals(requests)
    resources: dict[str, Any] = {}
    for r in requests:
        kind = kind_of(r)
        logical = logicals[kind, name_of(r)]
        if logical in resources:
            raise ValueError(f"two resources map to the logical id {logical}")
        props = literal(_properties(r))
        if kind == COMPOSITE_ALARM:
            _reference_alarms(props, r, logicals)
        resources[logical] = {"Type": KINDS[kind].cfn_type, "Properties": props}
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": _description(stack),
        "Resources": resources,
    }


def _logicals(requests: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """(kind, name) -> logical id (:func:`alarms.naming.logical_id` with the kind's suffix)."""
    return {(kind_of(r), name_of(r)): logical_id(name_of(r), KINDS[kind_of(r)].logical_suffix) for r in requests}


def _properties(request: Mapping[str, Any]) -> dict[str, Any]:
    """The resource properties of an API request: the members, renamed where CloudFormation differs, empty lists
    left out."""
    renamed = _RENAMED.get(kind_of(request), {})
    return {renamed.get(k, k): v for k, v in request.items() if not (isinstance(v, list) and not v)}


def _reference_alarms(props: dict[str, Any], request: Mapping[str, Any], logicals: Mapping[tuple[str, str], str]
                      ) -> None:
    """A composite's ``AlarmRule`` and ``ActionsSuppressor`` naming alarms of the template by reference (Ref of an
    alarm resource is its name), so that CloudFormation creates them first and a changed NamePrefix follows."""
    alarms = {name: lid for (kind, name), lid in logicals.items() if kind in (METRIC_ALARM, COMPOSITE_ALARM)}
    rule = request.get("AlarmRule")
    if isinstance(rule, str):
        def ref(name: str) -> str | None:
            return "${" + alarms[name] + "}" if name in alarms else None

        text = alarm_rule.rewrite(rule, ref, lambda t: t.replace("${", "${!"))
        props["AlarmRule"] = {"Fn::Sub": text} if "${" in text else text
    sup = request.get("ActionsSuppressor")
    if isinstance(sup, str) and alarm_rule.alarm_name_of(sup) in alarms:
        props["ActionsSuppressor"] = {"Ref": alarms[alarm_rule.alarm_name_of(sup)]}


def requests_from_cloudformation(template: Mapping[str, Any], parameters: Mapping[str, Any] | None = None,
                                 region: str = DEFAULT_REGION) -> list[dict[str, Any]]:
    """The API requests of a template's ``AWS::CloudWatch::Alarm``, ``CompositeAlarm`` and ``InsightRule``
    resources (other types skipped), read through :func:`resolve` (``parameters`` over the defaults) for ``region``.
    References to the template's other resources (a stack's template, e.g. ``cdk synth`` output: ``Ref`` to a
    function, ``Fn::GetAtt`` of a queue's name) read as those resources' names. Raises ``ValueError`` as
    :func:`resolve`."""
    resources = template.get("Resources") or {}
    monitoring = {k: v for k, v in resources.items()
                  if isinstance(v, Mapping) and str(v.get("Type")) in _TYPE_KIND}
    # a stack's template (cdk synth, a hand-written one) names its other resources with Ref / Fn::GetAtt
    others = {k: v for k, v in resources.items() if k not in monitoring and isinstance(v, Mapping)}
    bound = _resource_references(monitoring, others, region) if others else monitoring
    resolved = resolve({**template, "Resources": bound}, parameters, region=region)
    out = []
    for res in (resolved.get("Resources") or {}).values():
        kind = _TYPE_KIND.get(str(res.get("Type"))) if isinstance(res, Mapping) else None
        if kind is None:
            continue
        back = {v: k for k, v in _RENAMED.get(kind, {}).items()}
        out.append({back.get(k, k): v for k, v in (res.get("Properties") or {}).items()})
    return out


def _resource_references(value: Any, others: Mapping[str, Mapping[str, Any]], region: str) -> Any:
    """``value`` with each ``Ref`` / ``Fn::GetAtt`` to one of ``others`` (logical id -> resource) replaced by what
    it returns once deployed, as far as a check needs it: the resource's literal name property (else its logical
    id), or an ARN of that name (in ``region``'s partition) for ``Arn`` and for the ``Ref`` of an SNS topic."""
    if isinstance(value, list):
        return [_resource_references(v, others, region) for v in value]
    if not isinstance(value, Mapping):
        return value
    if len(value) == 1:
        (key, arg), = value.items()
        lid, attr = (arg, None) if key == "Ref" else (arg[0], arg[1]) if key == "Fn::GetAtt" and isinstance(
            arg, list) and len(arg) == 2 else (None, None)
        if isinstance(lid, str) and lid in others:
            res = others[lid]
            props = res.get("Properties") or {}
            name = next((props[k] for k in RESOURCE_NAME_PROPERTIES if isinstance(props.get(k), str)), lid)
            typ = str(res.get("Type", ""))
            if attr == "Arn" or (attr is None and typ == "AWS::SNS::Topic"):
                service = typ.split("::")[1].lower() if typ.count("::") == 2 else "unknown"
                return f"arn:{partition_of(region)}:{service}:{region}:123456789012:{name}"
            return name
    return {k: _resource_references(v, others, region) for k, v in value.items()}


def _param(sev: Severity, kind: str) -> str:
    return f"{sev.value.capitalize()}{kind}"


def build_template(config: Any, definitions: Sequence[AlarmDefinition], dashboard: bool = False
                   ) -> dict[str, Any]:
    """The parameterised template of ``definitions`` (built from ``config``, the
    :class:`~alarms.config.StackConfig`), with the config's composite alarms and Contributor Insights rules
    (:func:`alarms.composite.build_composites`, :func:`alarms.insight_rules.build_insight_rules`). Raises
    ``ValueError`` when the template would break a CloudFormation quota (:func:`check_limits`) or two resources map
    to one logical id."""
    composites = build_composites(config, definitions)
    rules = build_insight_rules(config)
    check_limits(len(definitions) + len(composites) + len(rules), dashboard)
    params: dict[str, Any] = {
        "NamePrefix": {"Type": "String", "Default": config.alarm_name_prefix,
                       "Description": "Prefix of every alarm name (and of the dashboard name)."},
        "Namespace": {"Type": "String", "Default": config.namespace,
                      "Description": "CloudWatch namespace of the idemwatch/Powertools metrics."},
    }
    conditions: dict[str, Any] = {}
    used: set[Severity] = set()
    alarms: tuple[Any, ...] = (*definitions, *composites)
    for d in alarms:
        if d.alarm_actions == config.actions.get(d.severity, ()):
            used.add(d.severity)
    for sev in Severity:
        if sev not in used:
            continue
        topics = ",".join(config.actions.get(sev, ()))
        for kind, default in (("AlarmActions", topics), ("OkActions", topics if config.notify_ok else "")):
            name = _param(sev, kind)
            params[name] = {"Type": "CommaDelimitedList", "Default": default,
                            "Description": f"SNS topic ARNs notified on {'ALARM' if kind == 'AlarmActions' else 'OK'}"
                                           f" by {sev.value} alarms (empty: none)."}
            conditions[f"Has{name}"] = {"Fn::Not": [{"Fn::Equals": [{"Fn::Join": ["", {"Ref": name}]}, ""]}]}
    items: tuple[Any, ...] = (*alarms, *rules)
    requests = [x.to_request() for x in items]
    logicals = _logicals(requests)
    resources: dict[str, Any] = {}
    outputs: dict[str, Any] = {}
    for x, req in zip(items, requests):
        kind = kind_of(req)
        logical = logicals[kind, x.name]
        if logical in resources:
            raise ValueError(f"two resources map to the logical id {logical}")
        if isinstance(x, InsightRuleDefinition):
            props = _rule_properties(x, req)
        else:
            props = _alarm_properties(x, req, config)
            if isinstance(x, CompositeDefinition):
                _reference_alarms(props, req, logicals)
        resources[logical] = {"Type": KINDS[kind].cfn_type, "Properties": props}
        outputs[f"{logical}Arn"] = {"Description": _no_variables(x.name), "Value": {"Fn::GetAtt": [logical, "Arn"]}}
    if dashboard:
        text = templated_body(config, definitions, {"region": "${AWS::Region}", "account": "${AWS::AccountId}",
                                                    "prefix": "${NamePrefix}", "namespace": "${Namespace}",
                                                    "partition": "${AWS::Partition}"},
                              escape=lambda s: s.replace("${", "${!"), composites=composites, rules=rules)
        resources["IdemwatchDashboard"] = {
            "Type": CFN_DASHBOARD_TYPE,
            "Properties": {"DashboardName": {"Fn::Sub": dashboard_name("${NamePrefix}")},
                           "DashboardBody": {"Fn::Sub": text}},
        }
        outputs["DashboardName"] = {"Description": "CloudWatch console dashboard", "Value": {"Ref": "IdemwatchDashboard"}}
    doc: dict[str, Any] = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": _description(config.stack),
        "Parameters": params,
    }
    if conditions:
        doc["Conditions"] = conditions
    doc["Resources"] = resources
    doc["Outputs"] = outputs
    return doc


def _description(stack: str) -> str:
    return _no_variables(f"idemwatch alarms for stack {stack} (generated by `idemwatch alarms export`; do not edit)")


def _no_variables(text: str) -> str:
    """Text for a field that takes no intrinsic function (a template's or an output's Description): ``${``
    written as ``$ {`` so that neither CloudFormation nor cfn-lint reads a variable in it."""
    return text.replace("${", "$ {")


def _alarm_properties(d: AlarmDefinition | CompositeDefinition, req: Mapping[str, Any], config: Any
                      ) -> dict[str, Any]:
    """Properties of a metric or composite alarm in the parameterised template: the name under ``NamePrefix``,
    console links in the deployment's Region, the severity's topics as parameters, this project's namespace as the
    ``Namespace`` parameter."""
    props = _properties(req)
    props["AlarmName"] = {"Fn::Sub": "${NamePrefix}" + d.name[len(d.prefix):].replace("${", "${!")}
    if config.region and props.get("AlarmDescription"):
        # console links open the region the stack is deployed in, not the one the config names
        regional = props["AlarmDescription"].replace("${", "${!")
        here = console_base("${AWS::Region}")
        if console_base(config.region) in regional:
            props["AlarmDescription"] = {"Fn::Sub": regional.replace(console_base(config.region), here)}
    for kind, field, actions in (("AlarmActions", "AlarmActions", d.alarm_actions),
                                 ("OkActions", "OKActions", d.ok_actions)):
        if d.alarm_actions == config.actions.get(d.severity, ()):
            name = _param(d.severity, kind)
            props[field] = {"Fn::If": [f"Has{name}", {"Ref": name}, {"Ref": "AWS::NoValue"}]}
        elif not actions:
            props.pop(field, None)
    if props.get("Namespace") == config.namespace:
        props["Namespace"] = {"Ref": "Namespace"}
    for q in props.get("Metrics") or []:
        metric = (q.get("MetricStat") or {}).get("Metric")
        if metric and metric.get("Namespace") == config.namespace:
            metric["Namespace"] = {"Ref": "Namespace"}
        if metric and not metric.get("Dimensions"):
            metric.pop("Dimensions", None)
    # canonical key order: the request's, so exports are byte-stable
    return literal({k: props[k] for k in req if k in props})


def _rule_properties(r: InsightRuleDefinition, req: Mapping[str, Any]) -> dict[str, Any]:
    """Properties of a Contributor Insights rule: the name under ``NamePrefix``, the body literal."""
    props = _properties(req)
    props["RuleName"] = {"Fn::Sub": "${NamePrefix}" + r.name[len(r.prefix):].replace("${", "${!")}
    return literal(props)


# --------------------------------------------------------------------------- resolving
def resolve(template: Mapping[str, Any], parameters: Mapping[str, Any] | None = None, *,
            region: str = DEFAULT_REGION, account_id: str = "123456789012") -> dict[str, Any]:
    """``template`` with Parameters (``parameters`` over the defaults), Conditions and the intrinsics in
    Resources evaluated. CommaDelimitedList values may be given as a list or a comma-separated string.
    Raises ``ValueError`` for a missing parameter or an intrinsic this evaluator does not know."""
    params: dict[str, Any] = {}
    given = dict(parameters or {})
    for name, spec in (template.get("Parameters") or {}).items():
        if name in given:
            value = given.pop(name)
        elif "Default" in spec:
            value = spec["Default"]
        else:
            raise ValueError(f"parameter {name} has no value and no default")
        if spec.get("Type") == "CommaDelimitedList" and isinstance(value, str):
            value = value.split(",")
        params[name] = value
    if given:
        raise ValueError(f"unknown parameter(s): {', '.join(sorted(given))}")
    refs = {**params, "AWS::Region": region, "AWS::AccountId": account_id, "AWS::Partition": partition_of(region)}
    conditions: dict[str, bool] = {}
    for name, expr in (template.get("Conditions") or {}).items():
        conditions[name] = bool(_eval(expr, refs, conditions))
    # Ref of an alarm or rule resource is its name (what a composite's rule and suppressor refer to); names depend on
    # parameters only
    for logical, res in (template.get("Resources") or {}).items():
        kind = _TYPE_KIND.get(str(res.get("Type"))) if isinstance(res, Mapping) else None
        member = _RENAMED.get(kind, {}).get(KINDS[kind].name_member, KINDS[kind].name_member) if kind else None
        if member and member in (res.get("Properties") or {}):
            refs[logical] = _eval(res["Properties"][member], refs, conditions)
    out = dict(template)
    out["Resources"] = {k: _strip(_eval(v, refs, conditions)) for k, v in (template.get("Resources") or {}).items()}
    out.pop("Parameters", None)
    out.pop("Conditions", None)
    out.pop("Outputs", None)
    return out


def _strip(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if v is not _NO_VALUE}
    if isinstance(x, list):
        return [_strip(v) for v in x if v is not _NO_VALUE]
    return x


def _eval(x: Any, refs: Mapping[str, Any], conditions: Mapping[str, bool]) -> Any:
    if isinstance(x, list):
        return [_eval(v, refs, conditions) for v in x]
    if not isinstance(x, dict):
        return x
    if len(x) == 1:
        (key, arg), = x.items()
        if key == "Ref":
            if arg == "AWS::NoValue":
                return _NO_VALUE
            if arg not in refs:
                raise ValueError(f"Ref to unknown {arg!r}")
            return refs[arg]
        if key == "Fn::Sub":
            text, extra = (arg, {}) if isinstance(arg, str) else (arg[0], _eval(arg[1], refs, conditions))
            names = {**refs, **extra}

            def sub(m: re.Match) -> str:
                inner = m.group(1)
                if inner.startswith("!"):
                    return "${" + inner[1:] + "}"
                if inner not in names:
                    raise ValueError(f"Fn::Sub refers to unknown {inner!r}")
                v = names[inner]
                return ",".join(v) if isinstance(v, list) else str(v)

            return re.sub(r"\$\{([^}]*)\}", sub, text)
        if key == "Fn::If":
            cond, yes, no = arg
            return _eval(yes if conditions[cond] else no, refs, conditions)
        if key == "Fn::Equals":
            a, b = (_eval(v, refs, conditions) for v in arg)
            return a == b
        if key == "Fn::Not":
            return not _eval(arg[0], refs, conditions)
        if key in ("Fn::Or", "Fn::And"):  # conditions of a stack's template (cdk synth writes Fn::Or)
            values = [bool(_eval(v, refs, conditions)) for v in arg]
            return any(values) if key == "Fn::Or" else all(values)
        if key == "Condition":
            return conditions[arg]
        if key == "Fn::Join":
            sep, items = arg
            items = _eval(items, refs, conditions)
            return sep.join(str(i) for i in items)
        if key == "Fn::GetAtt":
            return x
        if key.startswith("Fn::"):
            raise ValueError(f"intrinsic {key} is not supported by this evaluator")
    return {k: _eval(v, refs, conditions) for k, v in x.items()}
