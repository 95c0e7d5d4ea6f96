"""The optional sections of the stack config that add billed CloudWatch resources, each off until the config asks:

``composite_alarms`` ("page once" composites, :mod:`alarms.composite`)::

    composite_alarms:
      severities: [critical]        # a composite per function and per service for these severities (default critical)
      page: function                # function (default): each function's composite notifies; service: one per service
      suppressors: [table_throttled_requests, maintenance_window]   # ActionsSuppressor: while one is in ALARM the
                                    #   paging composites notify nobody. Each entry: maintenance_window (an alarm this
                                    #   export adds, set with `aws cloudwatch set-alarm-state`), a signal id of the
                                    #   idempotency table (table_throttled_requests, table_system_errors), or the name
                                    #   or ARN of any alarm (one of this export's, or one that exists in the account)
      wait_period: 120              # ActionsSuppressorWaitPeriod, seconds (default 120)
      extension_period: 300         # ActionsSuppressorExtensionPeriod, seconds (default 300)

``contributor_insights`` (Contributor Insights rules over the outcome records, :mod:`alarms.insight_rules`)::

    contributor_insights:
      outcomes: [payload_conflict, duplicate_completed, duplicate_in_progress, stale_claim_takeover]   # the default
      keys: [idempotency_key, tenant_id, event_source]   # one rule per outcome and key (the default)
      state: ENABLED                # or DISABLED (the rule exists, matches nothing, costs only the rule-month)

and, per signal in ``overrides``, ``anomaly: true | false | {width: 2, comparison: above | below | outside}``: the
signal's base tier compares with a CloudWatch anomaly-detection band (:class:`alarms.signals.AnomalyBand`).

Each reader raises :class:`~alarms.exceptions.ConfigError` naming the key path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from alarms import fields as F
from alarms.exceptions import ConfigError
from alarms.signals import SIGNALS, AnomalyBand, Scope
from alarms.types import ComparisonOperator, Severity
from emitter.contract import Outcome

MAINTENANCE_WINDOW = "maintenance_window"
"""Suppressor entry: an alarm this export adds, put into ALARM by hand for a maintenance window."""
PAGE_FUNCTION = "function"
PAGE_SERVICE = "service"
_SIDES = {"above": ComparisonOperator.GREATER_THAN_UPPER, "below": ComparisonOperator.LESS_THAN_LOWER,
          "outside": ComparisonOperator.OUTSIDE_BAND}
DEFAULT_INSIGHT_OUTCOMES = (Outcome.PAYLOAD_CONFLICT, Outcome.DUPLICATE_COMPLETED, Outcome.DUPLICATE_IN_PROGRESS,
                            Outcome.STALE_CLAIM_TAKEOVER)
"""The outcomes whose keys a team asks about first: conflicts, duplicates (completed, in progress) and stuck keys
taken over."""
INSIGHT_KEYS = ("idempotency_key", "tenant_id", "event_source", "operation", "error_code", "function_name")
"""Log keys a Contributor Insights rule may rank by (string-valued keys of the emitter's records)."""
DEFAULT_INSIGHT_KEYS = ("idempotency_key", "tenant_id", "event_source")
_SUPPRESSOR_NAME = F.name_part(1600, "an ActionsSuppressor")  # API model: AlarmArn 1-1600, names 1-255


@dataclass(frozen=True)
class CompositeSettings:
    """The ``composite_alarms`` section (see the module docstring)."""

    severities: tuple[Severity, ...] = (Severity.CRITICAL,)
    page: str = PAGE_FUNCTION
    suppressors: tuple[str, ...] = ()
    wait_period: int = 120
    extension_period: int = 300


@dataclass(frozen=True)
class InsightSettings:
    """The ``contributor_insights`` section (see the module docstring)."""

    outcomes: tuple[str, ...] = tuple(o.value for o in DEFAULT_INSIGHT_OUTCOMES)
    keys: tuple[str, ...] = DEFAULT_INSIGHT_KEYS
    state: str = "ENABLED"


def parse_composites(raw: Any, at: str = "composite_alarms") -> CompositeSettings | None:
    """The checked ``composite_alarms`` section; None when absent (no composites)."""
    if raw is None:
        return None
    if raw is True:
        return CompositeSettings()
    if not isinstance(raw, dict):
        raise ConfigError("must be a mapping (severities, page, suppressors, wait_period, extension_period)", at)
    F.no_unknown(raw, {"severities", "page", "suppressors", "wait_period", "extension_period"}, at)
    sev_raw = raw.get("severities", ["critical"])
    if not isinstance(sev_raw, list) or not sev_raw:
        raise ConfigError("must be a non-empty list of severities", f"{at}.severities")
    severities = tuple(dict.fromkeys(F.enum_value(Severity, s, f"{at}.severities") for s in sev_raw))
    page = raw.get("page", PAGE_FUNCTION)
    if page not in (PAGE_FUNCTION, PAGE_SERVICE):
        raise ConfigError(f"{page!r} is not one of: {PAGE_FUNCTION}, {PAGE_SERVICE}", f"{at}.page")
    sup_raw = raw.get("suppressors") or []
    if isinstance(sup_raw, str):
        sup_raw = [sup_raw]
    if not isinstance(sup_raw, list) or not all(isinstance(x, str) and x.strip() for x in sup_raw):
        raise ConfigError("must be a list of alarm names, ARNs, table signal ids or maintenance_window",
                          f"{at}.suppressors")
    for i, x in enumerate(sup_raw):
        if x in SIGNALS and SIGNALS[x].scope != Scope.TABLE:
            raise ConfigError(f"{x} has one alarm per function; a suppressor must be one alarm (use a table signal, "
                              "maintenance_window or an alarm name)", f"{at}.suppressors[{i}]")
        if reason := _SUPPRESSOR_NAME(x):
            raise ConfigError(reason, f"{at}.suppressors[{i}]")
    return CompositeSettings(
        severities=severities, page=page, suppressors=tuple(dict.fromkeys(sup_raw)),
        wait_period=_seconds(raw, "wait_period", at, 120), extension_period=_seconds(raw, "extension_period", at, 300))


def _seconds(raw: dict, key: str, at: str, default: int) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"must be an integer number of seconds >= 0, got {value!r}", f"{at}.{key}")
    return value


def parse_insights(raw: Any, at: str = "contributor_insights") -> InsightSettings | None:
    """The checked ``contributor_insights`` section; None when absent (no rules)."""
    if raw is None:
        return None
    if raw is True:
        return InsightSettings()
    if not isinstance(raw, dict):
        raise ConfigError("must be a mapping (outcomes, keys, state)", at)
    F.no_unknown(raw, {"outcomes", "keys", "state"}, at)
    outcomes = raw.get("outcomes", [o.value for o in DEFAULT_INSIGHT_OUTCOMES])
    if not isinstance(outcomes, list) or not outcomes:
        raise ConfigError("must be a non-empty list of outcome values", f"{at}.outcomes")
    for o in outcomes:
        F.enum_value(Outcome, o, f"{at}.outcomes")
    keys = raw.get("keys", list(DEFAULT_INSIGHT_KEYS))
    if not isinstance(keys, list) or not keys:
        raise ConfigError("must be a non-empty list of log keys", f"{at}.keys")
    for k in keys:
        if k not in INSIGHT_KEYS:
            raise ConfigError(f"{k!r} is not one of: {', '.join(INSIGHT_KEYS)}", f"{at}.keys")
    state = raw.get("state", "ENABLED")
    if state not in ("ENABLED", "DISABLED"):
        raise ConfigError(f"{state!r} is not one of: ENABLED, DISABLED", f"{at}.state")
    return InsightSettings(outcomes=tuple(dict.fromkeys(outcomes)), keys=tuple(dict.fromkeys(keys)), state=state)


def parse_anomaly(raw: Any, at: str) -> AnomalyBand | bool:
    """``overrides.<signal>.anomaly``: False (a static threshold), True (a band of 2 standard deviations, above) or
    ``{width: <number > 0>, comparison: above | below | outside}``."""
    if isinstance(raw, bool):
        return AnomalyBand() if raw else False
    if not isinstance(raw, dict):
        raise ConfigError("must be true, false or {width, comparison}", at)
    F.no_unknown(raw, {"width", "comparison"}, at)
    width = F.number(raw.get("width", 2), f"{at}.width")
    if width <= 0:
        raise ConfigError(f"must be a number of standard deviations > 0, got {width!r}", f"{at}.width")
    side = raw.get("comparison", "above")
    if not isinstance(side, str) or side not in _SIDES:
        raise ConfigError(f"{side!r} is not one of: {', '.join(_SIDES)}", f"{at}.comparison")
    return AnomalyBand(width, _SIDES[side])
