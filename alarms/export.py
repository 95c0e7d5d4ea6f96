"""Render alarm definitions as files: AWS CLI requests, a CloudFormation template, Terraform JSON.

- ``cli``: ``<out>/cli/<AlarmName>.json``, one PutMetricAlarm request each, for
  ``aws cloudwatch put-metric-alarm --cli-input-json file://<file>``; ``cli/composite-alarms/<NNN>-<AlarmName>.json``
  (PutCompositeAlarm, numbered children first) and ``cli/insight-rules/<RuleName>.json`` (PutInsightRule);
- ``cloudformation``: ``<out>/cloudformation/<stack>-alarms.json``, ``AWS::CloudWatch::Alarm``
  resources (property names are the API's); with the stack config, a template an existing stack
  includes (Parameters, Conditions, Outputs, optional dashboard: :mod:`alarms.cfn_template`);
- ``terraform``: ``<out>/terraform/<stack>-alarms.tf.json``, ``aws_cloudwatch_metric_alarm``
  resources in Terraform's JSON syntax (``metric_query`` blocks for metric math); with the stack
  config also the module ``<out>/terraform-module/`` (:mod:`alarms.tf_module`);
- ``dashboard`` (``--dashboard``): ``<out>/dashboard/<stack>-dashboard.json``, the PutDashboard body
  (``aws cloudwatch put-dashboard --dashboard-name <prefix>idemwatch --dashboard-body file://...``).

Every definition is validated first (:mod:`alarms.validate`); nothing is written when one fails, nor
when a CloudFormation template would break a quota (checked before anything is built). Every string from
the stack config is written as a literal of the target language (Terraform ``$${``/``%%{``, CloudFormation
``${!``), and numbers only as JSON numbers (``NaN``/``Infinity`` are refused). Output is deterministic (same
config -> byte-identical files), so the committed exports can be checked for staleness. The inverse
mappings (:func:`alarms.cfn_template.requests_from_cloudformation`,
:func:`alarms.terraform.requests_from_terraform`) let ``validate`` read any of the three formats.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alarms import cfn_template, terraform
from alarms.composite import build_composites
from alarms.console_dashboard import build_body, concrete
from alarms.constants import TAG_MANAGED_BY
from alarms.dashboard_body import validate_body
from alarms.definitions import AlarmDefinition
from alarms.exceptions import ValidationFailed
from alarms.insight_rules import build_insight_rules
from alarms.kinds import COMPOSITE_ALARM, KINDS, kind_of, name_of
from alarms.naming import file_safe
from alarms.settings import MAINTENANCE_WINDOW
from alarms.signals import SIGNALS
from alarms.tf_module import build_module
from alarms.types import ExportFormat
from alarms.validate import validate_requests
from alarms.violation import Violation, errors


def render(definitions: Sequence[AlarmDefinition], fmt: ExportFormat | str, stack: str,
           config: Any = None, dashboard: bool = False) -> dict[str, str]:
    """Relative path (``<format>/<file>``) -> file text for ``definitions``. ``config`` (the
    :class:`~alarms.config.StackConfig`) makes the CloudFormation template parameterised, adds the Terraform module,
    and adds the config's composite alarms and Contributor Insights rules to every format; ``dashboard`` adds the
    console dashboard (needs ``config``). Raises :class:`ValidationFailed` (any request, or the dashboard body) and
    ``ValueError`` (a CloudFormation quota, no config for the dashboard)."""
    fmt = ExportFormat(fmt)
    if dashboard and config is None:
        raise ValueError("the console dashboard needs the stack config")
    composites = build_composites(config, definitions) if config is not None else []
    rules = build_insight_rules(config) if config is not None else []
    if fmt is ExportFormat.CLOUDFORMATION:
        cfn_template.check_limits(len(definitions) + len(composites) + len(rules), dashboard and config is not None,
                                  outputs=config is not None)
    items: tuple[Any, ...] = (*definitions, *composites, *rules)
    requests = [x.to_request() for x in items]
    violations = errors(validate_requests(requests, external=external_alarms(config, definitions)
                                          if config is not None else ()))
    if violations:
        raise ValidationFailed(violations)
    name = file_safe(stack)
    if fmt is ExportFormat.CLI:
        out: dict[str, str] = {}
        for i, r in enumerate(composites):  # numbered: a shell loop over the folder puts children first
            out[f"cli/{KINDS[COMPOSITE_ALARM].cli_folder}/{i + 1:03d}-{file_safe(r.name)}.json"] = dump(
                requests[len(definitions) + i])
        for r in requests:
            if kind_of(r) != COMPOSITE_ALARM:
                folder = KINDS[kind_of(r)].cli_folder
                out[f"cli/{folder + '/' if folder else ''}{file_safe(name_of(r))}.json"] = dump(r)
        return out
    if fmt is ExportFormat.CLOUDFORMATION:
        template = cfn_template.to_cloudformation(requests, stack) if config is None else \
            cfn_template.build_template(config, definitions, dashboard)
        return {f"cloudformation/{name}-alarms.json": dump(template)}
    if fmt is ExportFormat.DASHBOARD:
        if config is None:
            raise ValueError("the console dashboard needs the stack config")
        return {f"dashboard/{name}-dashboard.json": dump(dashboard_body(config, definitions))}
    files = {f"terraform/{name}-alarms.tf.json": dump(terraform.to_terraform(requests))}
    if config is not None:
        files.update({f"terraform-module/{file}": dump(doc)
                      for file, doc in build_module(config, definitions, dashboard).items()})
    return files


def external_alarms(config: Any, definitions: Sequence[AlarmDefinition]) -> tuple[str, ...]:
    """The alarms the config's composites name that this export does not define (``composite_alarms.suppressors``
    naming an alarm of the account): they must exist before the composites are created."""
    settings = getattr(config, "composites", None)
    if settings is None:
        return ()
    defined = {d.name for d in definitions}
    return tuple(s for s in settings.suppressors if s not in defined and s not in SIGNALS and s != MAINTENANCE_WINDOW)


def dashboard_body(config: Any, definitions: Sequence[AlarmDefinition], region: str | None = None,
                   account_id: str | None = None) -> dict[str, Any]:
    """The checked console dashboard body for ``region``/``account_id`` (default: the config's).
    Raises :class:`ValidationFailed` when the body breaks the documented structure, ``ValueError``
    without a region or account id."""
    body = build_body(config, definitions, concrete(config, region, account_id),
                      build_composites(config, definitions), build_insight_rules(config))
    problems = validate_body(body)
    if problems:
        raise ValidationFailed([Violation("<dashboard>", p.where, p.rule, p.message) for p in problems])
    return body


def export(
    definitions: Sequence[AlarmDefinition], out: str | Path, fmt: ExportFormat | str, stack: str,
    config: Any = None, dashboard: bool = False,
) -> list[Path]:
    """Write the files of :func:`render` under ``out`` and return their paths.

    Earlier exports of alarms no longer defined (``*.json`` files in the format's folder that
    carry this project's managed-by tag) are removed; other files are left alone. Raises as :func:`render`
    (before writing anything) and ``OSError``.
    """
    files = render(definitions, fmt, stack, config, dashboard)
    out = Path(out)
    written: list[Path] = []
    for rel, text in files.items():
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        written.append(p)
    folder = out / ExportFormat(fmt).value
    keep = {out / rel for rel in files}
    for old in folder.rglob("*.json"):
        if old not in keep and TAG_MANAGED_BY in old.read_text(encoding="utf-8", errors="replace"):
            old.unlink()
    return written


def dump(doc: Any) -> str:
    """The file text of an exported document: indented JSON, UTF-8 as is, finite numbers only (JSON has no
    NaN or Infinity; ``ValueError`` for one)."""
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
