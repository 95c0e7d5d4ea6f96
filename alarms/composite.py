""""Page once" composite alarms built from the catalogue's tiers (``composite_alarms`` in the stack config).

One incident on a function fires several of its alarms at once (RetryRate, RetryRate-Critical, StaleClaimTakeover,
DuplicateInProgressSustained, Errors, ...). With ``composite_alarms``, for each severity listed:

- a **function composite** ``<prefix><function>-Composite-<Severity>``: ALARM while any alarm of that function (its
  own, its queue's and its DLQ's) of that severity is in ALARM;
- a **service composite** ``<prefix>ServiceComposite-<Severity>`` over the function composites and the alarms that
  belong to no function (the idempotency table's, the custom alarms).

``page: function`` (the default) gives the function composites the severity's topics and the service composite
none; ``page: service`` the other way round. The alarms a paging composite covers notify nobody themselves (their
actions are dropped in every export), so one incident pages once. Alarms of the function level that no function
composite covers keep their topics.

``suppressors`` become the paging composites' ``ActionsSuppressor`` (PutCompositeAlarm): while it is in ALARM they
change state but notify nobody; ``wait_period`` gives a suppressor that alarms a little later time to do so,
``extension_period`` keeps the silence a little after it recovers. Several suppressors are combined into one
composite, ``<prefix>Suppressor``. ``maintenance_window`` adds ``<prefix>MaintenanceWindow``, a metric alarm on a
metric nothing publishes that treats missing data as ``ignore``: it keeps whatever state ``aws cloudwatch
set-alarm-state`` gives it, so an operator opens a window with ``--state-value ALARM`` and closes it with ``OK``.

Rules are ``ALARM("a") OR ALARM("b") ...`` with every name quoted (:mod:`alarms.alarm_rule`). A
:class:`CompositeDefinition` renders the PutCompositeAlarm request; the exports map that request like every other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from alarms import alarm_rule
from alarms import constants as C
from alarms import links as L
from alarms.definitions import AlarmDefinition, MetricRef, alarm_request_head
from alarms.descriptions import fit_description
from alarms.exceptions import ConfigError
from alarms.settings import MAINTENANCE_WINDOW, PAGE_FUNCTION, PAGE_SERVICE, CompositeSettings
from alarms.signals import SIGNALS
from alarms.types import ComparisonOperator, Severity, TreatMissingData
from emitter.contract import Dimension

COMPOSITE_SIGNAL = "composite"
"""Value of the ``idemwatch:signal`` tag of composite alarms."""
RUNBOOK_ANCHOR = "composite_alarms"
"""Runbook section of the composites (``<runbook_url>#runbook-composite-alarms``)."""
MAINTENANCE_ANCHOR = MAINTENANCE_WINDOW


@dataclass(frozen=True)
class CompositeDefinition:
    """One composite alarm: ALARM while any of ``children`` (alarm names) is in ALARM.

    ``scope``: "function" (``target`` = the function), "service" (``target`` = the service) or "suppressor".
    ``suppressor``: the ``ActionsSuppressor`` alarm name or ARN (None: none), with ``wait_period`` and
    ``extension_period`` in seconds.
    """

    name: str
    title: str
    severity: Severity
    scope: str
    target: str
    children: tuple[str, ...]
    description: str
    alarm_actions: tuple[str, ...] = ()
    ok_actions: tuple[str, ...] = ()
    suppressor: str | None = None
    wait_period: int | None = None
    extension_period: int | None = None
    tags: tuple[tuple[str, str], ...] = ()
    prefix: str = ""
    paging: bool = False
    """Whether this composite is the one that notifies (``page``): the severity's topics, the suppressor."""

    @property
    def rule(self) -> str:
        """The AlarmRule: ``ALARM("child") OR ...`` in ``children`` order."""
        return alarm_rule.render_any(self.children)

    def to_request(self) -> dict[str, Any]:
        """The PutCompositeAlarm request (boto3 keyword arguments / ``--cli-input-json`` document)."""
        req = alarm_request_head(self.name, self.description, self.ok_actions, self.alarm_actions)
        req["AlarmRule"] = self.rule
        if self.suppressor is not None:
            req["ActionsSuppressor"] = self.suppressor
            req["ActionsSuppressorWaitPeriod"] = self.wait_period
            req["ActionsSuppressorExtensionPeriod"] = self.extension_period
        req["Tags"] = [{"Key": k, "Value": v} for k, v in self.tags]
        return req


# --------------------------------------------------------------------------- membership
def _suppressor_names(config: Any, defs: Sequence[AlarmDefinition]) -> list[str]:
    """The alarm names (or ARNs) the ``suppressors`` entries stand for. Raises :class:`ConfigError` for a table
    signal the catalogue does not build."""
    settings: CompositeSettings = config.composites
    out = []
    for i, entry in enumerate(settings.suppressors):
        if entry == MAINTENANCE_WINDOW:
            out.append(maintenance_name(config))
        elif entry in SIGNALS:
            found = [d.name for d in defs if d.signal == entry and not d.tier]
            if not found:
                raise ConfigError(f"{entry} builds no alarm here (it needs idempotency_table and must be enabled)",
                                  f"composite_alarms.suppressors[{i}]")
            out.append(found[0])
        else:
            out.append(entry)
    return out


def maintenance_name(config: Any) -> str:
    """``<prefix>MaintenanceWindow``."""
    return f"{config.alarm_name_prefix}{C.MAINTENANCE_METRIC}"


def suppressor_name(config: Any) -> str:
    """``<prefix>Suppressor``: the composite of several suppressors."""
    return f"{config.alarm_name_prefix}Suppressor"


def _membership(config: Any, defs: Sequence[AlarmDefinition]
                ) -> tuple[dict[tuple[str, Severity], list[str]], dict[Severity, list[str]]]:
    """(function, severity) -> alarm names, and severity -> names of the alarms that belong to no function, for
    the severities of ``composite_alarms``; suppressors and the maintenance alarm are no one's children."""
    settings: CompositeSettings = config.composites
    not_children = set(_suppressor_names(config, defs)) | {maintenance_name(config)}
    per_fn: dict[tuple[str, Severity], list[str]] = {}
    stack: dict[Severity, list[str]] = {}
    for d in defs:
        if d.severity not in settings.severities or d.name in not_children:
            continue
        if d.function:
            per_fn.setdefault((d.function, d.severity), []).append(d.name)
        else:
            stack.setdefault(d.severity, []).append(d.name)
    return per_fn, stack


def apply_composites(config: Any, defs: list[AlarmDefinition]) -> list[AlarmDefinition]:
    """``defs`` as the composites need them: the maintenance-window alarm added when a suppressor asks for it, and
    the alarms a paging composite covers without actions. ``defs`` unchanged without ``composite_alarms``."""
    settings: CompositeSettings | None = config.composites
    if settings is None:
        return defs
    out = list(defs)
    if MAINTENANCE_WINDOW in settings.suppressors:
        out.append(_maintenance_alarm(config))
    per_fn, stack = _membership(config, out)
    covered = {n for names in per_fn.values() for n in names}
    if settings.page == PAGE_SERVICE:
        covered |= {n for names in stack.values() for n in names}
    return [replace(d, alarm_actions=(), ok_actions=()) if d.name in covered else d for d in out]


def _maintenance_alarm(config: Any) -> AlarmDefinition:
    name = maintenance_name(config)
    reason = ("nothing publishes its metric: the alarm keeps the state set-alarm-state gives it until it is set "
              "again")
    links = (("runbook", L.runbook_url(config.runbook_url, MAINTENANCE_ANCHOR)),)
    description = fit_description(
        [(f"[info] Maintenance window: while this alarm is in ALARM the paging composite alarms of {config.stack} "
          "notify nobody."),
         # not the name itself: a CloudFormation or Terraform stack may deploy it under another name prefix
         ("Open a window: aws cloudwatch set-alarm-state --alarm-name <this alarm's name> --state-value ALARM "
          "--state-reason '<why>'; close it with --state-value OK."),
         f"Missing data: ignore, because {reason}."],
        links, region=config.region)
    tags = ((C.TAG_MANAGED_BY, C.TAG_MANAGED_BY_VALUE), (C.TAG_STACK, config.stack), (C.TAG_SIGNAL, MAINTENANCE_WINDOW),
            (C.TAG_SEVERITY, Severity.INFO.value)) + tuple(sorted(config.tags.items()))
    return AlarmDefinition(
        name=name, signal=MAINTENANCE_WINDOW, title="Maintenance window", severity=Severity.INFO,
        target=config.service, description=description, period=60, evaluation_periods=1, datapoints_to_alarm=1,
        threshold=0.0, comparison=ComparisonOperator.GREATER_THAN, treat_missing_data=TreatMissingData.IGNORE,
        treat_missing_reason=reason, unit="Count",
        metric=MetricRef(config.namespace, C.MAINTENANCE_METRIC, ((Dimension.SERVICE.value, config.service),)),
        statistic="Maximum", tags=tags, prefix=config.alarm_name_prefix, links=links)


# --------------------------------------------------------------------------- the composites
def build_composites(config: Any, defs: Sequence[AlarmDefinition]) -> list[CompositeDefinition]:
    """The composite alarms of ``config`` over ``defs`` (the catalogue :func:`~alarms.catalogue.build_catalogue`
    built from it), children before the composites that name them: the suppressor composite, the function
    composites, the service composites. Empty without ``composite_alarms``. Raises :class:`ConfigError` for a child
    name an AlarmRule cannot quote."""
    settings: CompositeSettings | None = config.composites
    if settings is None:
        return []
    suppressors = _suppressor_names(config, defs)
    per_fn, stack = _membership(config, defs)
    prefix = config.alarm_name_prefix
    out: list[CompositeDefinition] = []
    suppressor: str | None = None
    if len(suppressors) == 1:
        suppressor = suppressors[0]
    elif suppressors:
        suppressor = suppressor_name(config)
        out.append(_composite(config, suppressor, "Suppressor of the paging composites", Severity.INFO, "suppressor",
                              config.service, tuple(suppressors), paging=False, suppressor=None,
                              summary="ALARM while any of its children is in ALARM: the paging composites notify "
                                      "nobody meanwhile."))
    function_level = settings.page == PAGE_FUNCTION
    for sev in settings.severities:
        service_children: list[str] = []
        for fn in config.functions:
            children = per_fn.get((fn.name, sev))
            if not children:
                continue
            name = f"{prefix}{fn.name}-Composite-{sev.value.capitalize()}"
            out.append(_composite(config, name, f"{fn.name}: any {sev.value} alarm", sev, "function", fn.name,
                                  tuple(children), paging=function_level, suppressor=suppressor,
                                  summary=f"ALARM while any of the {len(children)} {sev.value} alarms of {fn.name} "
                                          f"({fn.operation}) is in ALARM."))
            service_children.append(name)
        service_children += stack.get(sev, [])
        if service_children:
            name = f"{prefix}ServiceComposite-{sev.value.capitalize()}"
            out.append(_composite(config, name, f"{config.service}: any {sev.value} alarm", sev, "service",
                                  config.service, tuple(service_children), paging=not function_level,
                                  suppressor=suppressor,
                                  summary=f"ALARM while any {sev.value} composite or alarm of service "
                                          f"{config.service} is in ALARM."))
    return out


def _composite(config: Any, name: str, title: str, severity: Severity, scope: str, target: str,
               children: tuple[str, ...], paging: bool, suppressor: str | None, summary: str) -> CompositeDefinition:
    settings: CompositeSettings = config.composites
    for child in children:
        try:
            alarm_rule.quote(child)
        except ValueError as exc:
            raise ConfigError(str(exc), "composite_alarms") from None
    actions = config.actions.get(severity, ()) if paging else ()
    sup = suppressor if paging else None
    notify = ("It notifies the severity's topics; the alarms it covers notify nobody themselves, so an incident "
              "pages once." if paging else "It notifies nobody (a summary for the dashboard and other composites).")
    if sup is not None:
        shown_sup = sup.removeprefix(config.alarm_name_prefix)
        notify += (f" Its notifications are suppressed while {shown_sup} is in ALARM (waiting {settings.wait_period} "
                   f"s for it to alarm, and {settings.extension_period} s after it recovers).")
    links = (("runbook", L.runbook_url(config.runbook_url, RUNBOOK_ANCHOR)),)
    prefix = config.alarm_name_prefix
    # names after the prefix: the templates take the prefix as a parameter, and the text must stay true
    shown = [c.removeprefix(prefix) for c in children]
    description = fit_description([f"[{severity.value}] {title}. {summary}", notify,
                                   "Children (after the name prefix): " + ", ".join(shown) + "."], links,
                                  region=config.region)
    tags = ((C.TAG_MANAGED_BY, C.TAG_MANAGED_BY_VALUE), (C.TAG_STACK, config.stack), (C.TAG_SIGNAL, COMPOSITE_SIGNAL),
            (C.TAG_SEVERITY, severity.value)) + tuple(sorted(config.tags.items()))
    return CompositeDefinition(
        name=name, title=title, severity=severity, scope=scope, target=target, children=children,
        description=description, alarm_actions=actions, ok_actions=actions if config.notify_ok else (),
        suppressor=sup, wait_period=settings.wait_period if sup else None,
        extension_period=settings.extension_period if sup else None, tags=tags, prefix=config.alarm_name_prefix,
        paging=paging)


def check_composite_names(config: Any, defs: Sequence[AlarmDefinition]) -> None:
    """Raise :class:`ConfigError` when a composite's name is also a metric alarm's (both are alarm names)."""
    names = {d.name for d in defs}
    clash = sorted(c.name for c in build_composites(config, defs) if c.name in names)
    if clash:
        raise ConfigError(f"composite alarm name(s) {', '.join(clash)} also name a metric alarm (rename the custom "
                          "alarm or the function)", "composite_alarms")
