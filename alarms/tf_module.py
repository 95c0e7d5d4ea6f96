"""A Terraform module (Terraform JSON syntax) of the stack's alarms and, optionally, its console dashboard.

Files (``<out>/terraform-module/``): ``versions.tf.json`` (aws provider >= 5.0), ``variables.tf.json``,
``main.tf.json`` (``aws_cloudwatch_metric_alarm`` per alarm, ``aws_cloudwatch_composite_alarm`` per composite,
``aws_cloudwatch_contributor_insight_rule`` per rule, ``aws_cloudwatch_dashboard``), ``outputs.tf.json``. Variables
(defaults = the stack config's values):

- ``name_prefix`` (string), ``namespace`` (string);
- ``<severity>_alarm_actions`` / ``<severity>_ok_actions`` (list(string)) per severity in use.

Outputs: ``alarm_arns`` (map alarm resource name -> ARN), ``alarm_names``, ``composite_alarm_arns`` and
``insight_rule_arns`` (when there are any), and ``dashboard_name``.
Alarm arguments come from the flat export's mapping (:func:`alarms.terraform.to_terraform`), so both
Terraform outputs describe the same alarms, with every literal string escaped there (``$${``, ``%%{``); the
dashboard body is escaped the same way before the module's own interpolations are put in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from alarms import terraform as tf
from alarms.composite import build_composites
from alarms.console_dashboard import dashboard_name, templated_body
from alarms.definitions import AlarmDefinition
from alarms.insight_rules import build_insight_rules
from alarms.kinds import INSIGHT_RULE, KINDS, kind_of
from alarms.links import console_base
from alarms.naming import tf_name
from alarms.types import Severity

TF_DASHBOARD_TYPE = "aws_cloudwatch_dashboard"
REGION = "${data.aws_region.current.name}"
"""The module's expression for the Region it is applied in (console links and dashboard widgets)."""
PARTITION = "${data.aws_partition.current.partition}"
"""The module's expression for the partition of that Region (alarm ARNs in the dashboard)."""


def _var(sev: Severity, kind: str) -> str:
    return f"{sev.value}_{kind}"


def build_module(config: Any, definitions: Sequence[AlarmDefinition], dashboard: bool = False
                 ) -> dict[str, dict[str, Any]]:
    """File name -> Terraform JSON document of the module (``config``: the
    :class:`~alarms.config.StackConfig` the definitions were built from), with the config's composite alarms and
    Contributor Insights rules."""
    composites = build_composites(config, definitions)
    rules = build_insight_rules(config)
    variables: dict[str, Any] = {
        "name_prefix": {"type": "string", "default": config.alarm_name_prefix,
                        "description": "Prefix of every alarm name (and of the dashboard name)."},
        "namespace": {"type": "string", "default": config.namespace,
                      "description": "CloudWatch namespace of the idemwatch/Powertools metrics."},
    }
    alarms: tuple[Any, ...] = (*definitions, *composites)
    used = {d.severity for d in alarms if d.alarm_actions == config.actions.get(d.severity, ())}
    for sev in Severity:
        if sev in used:
            topics = list(config.actions.get(sev, ()))
            variables[_var(sev, "alarm_actions")] = {"type": "list(string)", "default": topics,
                                                     "description": f"SNS topic ARNs notified on ALARM by {sev.value} "
                                                                    "alarms."}
            variables[_var(sev, "ok_actions")] = {"type": "list(string)",
                                                  "default": topics if config.notify_ok else [],
                                                  "description": f"SNS topic ARNs notified on OK by {sev.value} "
                                                                 "alarms."}
    items: tuple[Any, ...] = (*alarms, *rules)
    requests = [x.to_request() for x in items]
    flat = tf.to_terraform(requests)["resource"]
    namespace = tf.escape(config.namespace)
    main_resources: dict[str, dict[str, Any]] = {}
    for x, request in zip(items, requests, strict=True):
        kind = kind_of(request)
        tf_type = KINDS[kind].tf_type
        name = tf_name(x.name)
        body = dict(flat[tf_type][name])
        if kind == INSIGHT_RULE:
            body["rule_name"] = "${var.name_prefix}" + tf.escape(x.name[len(x.prefix):])
        else:
            body["alarm_name"] = "${var.name_prefix}" + tf.escape(x.name[len(x.prefix):])
            body.setdefault("alarm_description", "")
            if config.region:  # console links open the provider's region, not the one the config names
                body["alarm_description"] = body["alarm_description"].replace(console_base(config.region),
                                                                              console_base(REGION))
            if x.alarm_actions == config.actions.get(x.severity, ()):
                body["alarm_actions"] = "${var." + _var(x.severity, "alarm_actions") + "}"
                body["ok_actions"] = "${var." + _var(x.severity, "ok_actions") + "}"
        if body.get("namespace") == namespace:
            body["namespace"] = "${var.namespace}"
        for q in body.get("metric_query") or []:
            if q.get("metric", {}).get("namespace") == namespace:
                q["metric"]["namespace"] = "${var.namespace}"
        main_resources.setdefault(tf_type, {})[name] = {k: body[k] for k in sorted(body, key=_order(flat[tf_type][name]))}
    main: dict[str, Any] = {"resource": main_resources}
    if config.region or dashboard:
        main["data"] = {"aws_region": {"current": {}}}
    outputs: dict[str, Any] = {
        "alarm_arns": {"description": "Alarm ARN per alarm resource name",
                       "value": {n: f"${{{tf.TF_ALARM_TYPE}.{n}.arn}}"
                                 for n in main_resources.get(tf.TF_ALARM_TYPE, {})}},
        "alarm_names": {"description": "Alarm names",
                        "value": [f"${{{tf.TF_ALARM_TYPE}.{n}.alarm_name}}"
                                  for n in main_resources.get(tf.TF_ALARM_TYPE, {})]},
    }
    if composites:
        outputs["composite_alarm_arns"] = {"description": "Composite alarm ARN per resource name",
                                           "value": {n: f"${{{tf.TF_COMPOSITE_TYPE}.{n}.arn}}"
                                                     for n in main_resources[tf.TF_COMPOSITE_TYPE]}}
    if rules:
        outputs["insight_rule_arns"] = {"description": "Contributor Insights rule ARN per resource name",
                                        "value": {n: f"${{{tf.TF_INSIGHT_RULE_TYPE}.{n}.resource_arn}}"
                                                  for n in main_resources[tf.TF_INSIGHT_RULE_TYPE]}}
    if dashboard:
        text = templated_body(config, definitions,
                              {"region": REGION,
                               "account": "${data.aws_caller_identity.current.account_id}",
                               "prefix": "${var.name_prefix}", "namespace": "${var.namespace}",
                               "partition": PARTITION},
                              escape=tf.escape, composites=composites, rules=rules)
        main["data"] = {"aws_region": {"current": {}}, "aws_caller_identity": {"current": {}},
                        "aws_partition": {"current": {}}}
        main["resource"][TF_DASHBOARD_TYPE] = {"idemwatch": {"dashboard_name": dashboard_name("${var.name_prefix}"),
                                                             "dashboard_body": text}}
        outputs["dashboard_name"] = {"description": "CloudWatch console dashboard",
                                     "value": f"${{{TF_DASHBOARD_TYPE}.idemwatch.dashboard_name}}"}
    return {
        "versions.tf.json": {"terraform": {"required_providers": tf.REQUIRED_PROVIDERS}},
        "variables.tf.json": {"variable": variables},
        "main.tf.json": main,
        "outputs.tf.json": {"output": outputs},
    }


def resolve_module(main: dict[str, Any], variables: dict[str, Any],
                   values: dict[str, Any] | None = None, region: str | None = None) -> dict[str, Any]:
    """``main`` (a module's main.tf.json) with ``${var.<name>}`` replaced by ``values`` over the variables'
    defaults, the region data source by ``region`` (when given), and ``$${`` / ``%%{`` unescaped: what
    Terraform would pass to the provider for the arguments this module writes (:func:`alarms.terraform.evaluate`).
    Other interpolations (the account id data source) are left as they are."""
    vals = {k: v.get("default") for k, v in (variables.get("variable") or {}).items()}
    vals.update(values or {})
    return tf.evaluate(main, vals, region, REGION)


def _order(reference: dict[str, Any]) -> Any:
    keys = list(reference)
    return lambda k: keys.index(k) if k in keys else len(keys)
