"""A Terraform module (Terraform JSON syntax) of the stack's alarms and, optionally, its console dashboard.

Files (``<out>/terraform-module/``): ``versions.tf.json`` (aws provider >= 5.0), ``variables.tf.json``,
``main.tf.json`` (``aws_cloudwatch_metric_alarm`` per alarm, ``aws_cloudwatch_dashboard``),
``outputs.tf.json``. Variables (defaults = the stack config's values):

- ``name_prefix`` (string), ``namespace`` (string);
- ``<severity>_alarm_actions`` / ``<severity>_ok_actions`` (list(string)) per severity in use.

Outputs: ``alarm_arns`` (map alarm resource name -> ARN), ``alarm_names``, and ``dashboard_name``.
Alarm arguments come from the flat export's mapping (:func:`alarms.export.to_terraform`), so both
Terraform outputs describe the same alarms. Literal ``${`` / ``%{`` of the dashboard body are
escaped (``$${``, ``%%{``) before the module's own interpolations are put in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from alarms.types import Severity

TF_DASHBOARD_TYPE = "aws_cloudwatch_dashboard"
_REGION = "${data.aws_region.current.name}"


def _var(sev: Severity, kind: str) -> str:
    return f"{sev.value}_{kind}"


def build_module(config: Any, definitions: Sequence[Any], dashboard: bool = False) -> dict[str, dict[str, Any]]:
    """File name -> Terraform JSON document of the module."""
    from alarms.export import TF_ALARM_TYPE, _tf_name, to_terraform

    variables: dict[str, Any] = {
        "name_prefix": {"type": "string", "default": config.alarm_name_prefix,
                        "description": "Prefix of every alarm name (and of the dashboard name)."},
        "namespace": {"type": "string", "default": config.namespace,
                      "description": "CloudWatch namespace of the idemwatch/Powertools metrics."},
    }
    used = {d.severity for d in definitions if d.alarm_actions == config.actions.get(d.severity, ())}
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
    flat = to_terraform([d.to_request() for d in definitions])["resource"][TF_ALARM_TYPE]
    alarms: dict[str, Any] = {}
    for d in definitions:
        name = _tf_name(d.name)
        body = dict(flat[name])
        body["alarm_name"] = "${var.name_prefix}" + _tf_escape(d.name[len(d.prefix):])
        body["alarm_description"] = _tf_escape(body.get("alarm_description", ""))
        if config.region:  # console links open the provider's region, not the one the config names
            from alarms.links import console_base

            body["alarm_description"] = body["alarm_description"].replace(
                console_base(config.region), console_base(_REGION))
        if d.alarm_actions == config.actions.get(d.severity, ()):
            body["alarm_actions"] = "${var." + _var(d.severity, "alarm_actions") + "}"
            body["ok_actions"] = "${var." + _var(d.severity, "ok_actions") + "}"
        if body.get("namespace") == config.namespace:
            body["namespace"] = "${var.namespace}"
        for q in body.get("metric_query") or []:
            if q.get("metric", {}).get("namespace") == config.namespace:
                q["metric"]["namespace"] = "${var.namespace}"
        if "tags" in body:
            body["tags"] = {k: _tf_escape(v) for k, v in body["tags"].items()}
        alarms[name] = {k: body[k] for k in sorted(body, key=_order(flat[name]))}
    main: dict[str, Any] = {"resource": {TF_ALARM_TYPE: alarms}}
    if config.region or dashboard:
        main["data"] = {"aws_region": {"current": {}}}
    outputs: dict[str, Any] = {
        "alarm_arns": {"description": "Alarm ARN per alarm resource name",
                       "value": {n: f"${{{TF_ALARM_TYPE}.{n}.arn}}" for n in alarms}},
        "alarm_names": {"description": "Alarm names",
                        "value": [f"${{{TF_ALARM_TYPE}.{n}.alarm_name}}" for n in alarms]},
    }
    if dashboard:
        from alarms.cfn_template import templated_body
        from alarms.console_dashboard import dashboard_name

        text = templated_body(config, definitions,
                              {"region": _REGION,
                               "account": "${data.aws_caller_identity.current.account_id}",
                               "prefix": "${var.name_prefix}", "namespace": "${var.namespace}"},
                              escape=_tf_escape)
        main["data"] = {"aws_region": {"current": {}}, "aws_caller_identity": {"current": {}}}
        main["resource"][TF_DASHBOARD_TYPE] = {"idemwatch": {"dashboard_name": dashboard_name("${var.name_prefix}"),
                                                             "dashboard_body": text}}
        outputs["dashboard_name"] = {"description": "CloudWatch console dashboard",
                                     "value": f"${{{TF_DASHBOARD_TYPE}.idemwatch.dashboard_name}}"}
    return {
        "versions.tf.json": {"terraform": {"required_providers": {"aws": {"source": "hashicorp/aws",
                                                                          "version": ">= 5.0"}}}},
        "variables.tf.json": {"variable": variables},
        "main.tf.json": main,
        "outputs.tf.json": {"output": outputs},
    }


def _tf_escape(s: str) -> str:
    """Terraform template syntax: a literal ``${`` is ``$${`` and a literal ``%{`` is ``%%{``."""
    return s.replace("${", "$${").replace("%{", "%%{")


def resolve_module(main: dict[str, Any], variables: dict[str, Any],
                   values: dict[str, Any] | None = None, region: str | None = None) -> dict[str, Any]:
    """``main`` (a module's main.tf.json) with ``${var.<name>}`` replaced by ``values`` over the variables'
    defaults, the region data source by ``region`` (when given), and ``$${`` / ``%%{`` unescaped: what
    Terraform would pass to the provider for the arguments this module writes. Other interpolations (the
    account id data source) are left as they are."""
    import re

    vals = {k: v.get("default") for k, v in (variables.get("variable") or {}).items()}
    vals.update(values or {})

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        if not isinstance(x, str):
            return x
        whole = re.fullmatch(r"\$\{var\.([A-Za-z0-9_]+)\}", x)
        if whole:
            return vals[whole.group(1)]
        if region is not None:
            x = x.replace(_REGION, region)
        parts = re.split(r"(\$\$\{|%%\{|\$\{var\.[A-Za-z0-9_]+\})", x)
        out = []
        for part in parts:
            m = re.fullmatch(r"\$\{var\.([A-Za-z0-9_]+)\}", part)
            out.append(str(vals[m.group(1)]) if m else {"$${": "${", "%%{": "%{"}.get(part, part))
        return "".join(out)

    return walk(main)


def _order(reference: dict[str, Any]) -> Any:
    keys = list(reference)
    return lambda k: keys.index(k) if k in keys else len(keys)
