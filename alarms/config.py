"""Stack config: which alarms apply to which resources, and the team's overrides.

The file is YAML (JSON is valid YAML too), read with ``yaml.safe_load``. Every key is checked:
unknown keys, wrong types and unknown signal ids are a :class:`~alarms.exceptions.ConfigError`
naming the key path, never silently ignored. Shape (only ``service`` and ``functions`` are required)::

    stack: shop                    # names the alarms (prefix) and the idemwatch:stack tag; default = service
    service: shop                  # the Service dimension value the emitter writes (default: the emitter's
                                   #   rule, emitter.contract.resolve_service: $IDEMWATCH_SERVICE,
                                   #   $POWERTOOLS_SERVICE_NAME, then "service_undefined")
    namespace: Idempotency         # EMF namespace (default: emitter.contract.resolve_namespace:
                                   #   $IDEMWATCH_NAMESPACE, $POWERTOOLS_METRICS_NAMESPACE, "Idempotency")
    dimensions: {Environment: prod} # default dimensions the functions publish (Emitter(dimensions=...) or
                                   #   set_default_dimensions): added to every alarm on this project's metrics
    region: us-east-1              # console links and dashboard widgets (default: links without a region)
    account_id: "123456789012"     # alarm ARNs in the console dashboard (export --dashboard)
    runbook_url: https://wiki.example.com/idemwatch   # base of the runbook links (default docs/platform.md)
    alarm_name_prefix: "shop-"     # default "<stack>-"
    idempotency_table: idempotency # named in descriptions
    actions:                       # SNS topic ARNs per severity (critical | warning | info); default none
      critical: [arn:aws:sns:...:pager]
    notify_ok: true                # also send OK transitions to the same topics (default true)
    tags: {team: payments}         # extra tags on every alarm
    disabled_signals: [lambda_throttles]
    suppressions:                  # `idemwatch audit` findings accepted on purpose (rule id, resource name, why)
      - {rule: IW010, resource: idempotency, reason: "table is rebuilt from the stream"}
    overrides:                     # per signal id, for every target
      record_age_max: {threshold: 120000}
    functions:
      - name: orders-consumer      # Lambda function name (FunctionName dimension, log group /aws/lambda/<name>)
        operation: ProcessOrders   # the Operation dimension the emitter writes
        event_source: sqs          # emitter.contract.EventSource value
        queue: orders-queue        # SQS source queue (AgeOfOldestMessage)
        dlq: orders-dlq            # its dead-letter queue (ApproximateNumberOfMessagesVisible)
        stream: null               # Kinesis / DynamoDB stream name (descriptions; IteratorAge is per function)
        log_group: null            # default /aws/lambda/<name>
        dimensions: {}             # this function's extra default dimensions (win over the stack's)
        overrides: {}              # per signal id, this function only (wins over the global ones)
        disabled_signals: []

    custom_alarms: []              # any metric or metric math, see alarms.custom (validated like the catalogue)
    composite_alarms: {...}        # "page once" composites and their suppressors (alarms.settings; off by default)
    contributor_insights: {...}    # Contributor Insights rules over the outcome records (alarms.settings; off)

Override keys: threshold, period, evaluation_periods, datapoints_to_alarm, severity,
treat_missing_data (needs treat_missing_reason), treat_missing_reason, enabled (true also turns on a signal that is
off by default), anomaly (true | false | {width, comparison}: an anomaly-detection band), and ``tiers``:
severity -> {threshold, period, evaluation_periods, datapoints_to_alarm, actions, enabled} for the
signal's extra tiers (e.g. ``retry_rate: {tiers: {critical: {threshold: 20}}}``; a tier the signal
has no default for is added, with the base tier's settings for what it does not set).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from alarms import fields as F
from alarms.constants import LAMBDA_LOG_GROUP_PREFIX
from alarms.custom import CustomAlarm, parse_custom_alarms
from alarms.exceptions import ConfigError
from alarms.settings import CompositeSettings, InsightSettings, parse_anomaly, parse_composites, parse_insights
from alarms.signals import SIGNALS, AnomalyBand
from alarms.types import Severity, TreatMissingData
from emitter import emf
from emitter.contract import Dimension, EventSource, resolve_namespace, resolve_service

_COUNT_KEYS = ("period", "evaluation_periods", "datapoints_to_alarm")
_OVERRIDE_KEYS = {"threshold", *_COUNT_KEYS, "severity", "treat_missing_data", "treat_missing_reason", "enabled",
                  "anomaly"}
_TIER_KEYS = {"threshold", *_COUNT_KEYS, "enabled", "actions"}
_TOP_KEYS = {
    "stack", "service", "namespace", "alarm_name_prefix", "idempotency_table", "actions", "notify_ok", "tags",
    "disabled_signals", "overrides", "functions", "dimensions", "region", "account_id", "runbook_url",
    "custom_alarms", "suppressions", "composite_alarms", "contributor_insights",
}
_FUNCTION_KEYS = {
    "name", "operation", "event_source", "queue", "dlq", "stream", "log_group", "overrides", "disabled_signals",
    "dimensions",
}
DEFAULT_RUNBOOK_URL = "docs/platform.md"
"""Runbook base when the config names none: the runbook section of this project's platform docs."""
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d{1,2}$")
"""AWS Region codes (us-east-1, ap-southeast-2, us-gov-west-1): they are written into console URLs."""

# What each name becomes in a PutMetricAlarm request, and so the rule it is held to.
_DIMENSION_VALUE = emf.check_dimension_value  # FunctionName, Operation, Service, QueueName, TableName, LogGroupName
_ALARM_NAME_PART = F.name_part(255, "an alarm name")  # API model: AlarmName 1-255
_TAG_KEY = F.name_part(128, "a tag key")  # API model: TagKey 1-128
_TAG_VALUE = F.name_part(256, "a tag value")  # API model: TagValue 0-256
_PROSE = F.free_text(1024)  # AlarmDescription 0-1024 (the stream name, runbook URL and reasons end up there)
_PREFIX_VARIABLE = ("must not contain '${': the CloudFormation export takes the prefix as the NamePrefix "
                    "parameter's default, where no escape exists (override NamePrefix at deploy time instead)")


@dataclass(frozen=True)
class TierOverride:
    """Team settings of one tier of a signal (``None`` = the tier's default). ``actions`` replace the
    severity's topics for this tier only."""

    threshold: float | None = None
    period: int | None = None
    evaluation_periods: int | None = None
    datapoints_to_alarm: int | None = None
    actions: tuple[str, ...] | None = None
    enabled: bool | None = None

    def merged(self, other: TierOverride | None) -> TierOverride:
        if other is None:
            return self
        return TierOverride(**{k: (getattr(other, k) if getattr(other, k) is not None else getattr(self, k))
                               for k in self.__dataclass_fields__})


@dataclass(frozen=True)
class SignalOverride:
    """Team overrides of one signal's defaults (``None`` = keep the default)."""

    threshold: float | None = None
    period: int | None = None
    evaluation_periods: int | None = None
    datapoints_to_alarm: int | None = None
    severity: Severity | None = None
    treat_missing_data: TreatMissingData | None = None
    treat_missing_reason: str | None = None
    enabled: bool | None = None
    anomaly: AnomalyBand | bool | None = None
    """An anomaly-detection band for the base tier (False: a static threshold; None: the signal's default)."""
    tiers: Mapping[Severity, TierOverride] = field(default_factory=dict)

    def merged(self, other: SignalOverride | None) -> SignalOverride:
        """``other``'s set fields win over this one's (tiers merged per severity)."""
        if other is None:
            return self
        kw: dict[str, Any] = {k: (getattr(other, k) if getattr(other, k) is not None else getattr(self, k))
                              for k in _OVERRIDE_KEYS}
        tiers = dict(self.tiers)
        for sev, t in other.tiers.items():
            tiers[sev] = tiers.get(sev, TierOverride()).merged(t)
        return SignalOverride(**kw, tiers=MappingProxyType(tiers))


@dataclass(frozen=True)
class Suppression:
    """An accepted ``idemwatch audit`` finding: rule id (e.g. ``IW001``), resource name, and why (required)."""

    rule: str
    resource: str
    reason: str


@dataclass(frozen=True)
class FunctionConfig:
    """One Lambda function of the stack."""

    name: str
    operation: str
    event_source: EventSource
    queue: str | None = None
    dlq: str | None = None
    stream: str | None = None
    log_group: str = ""
    overrides: Mapping[str, SignalOverride] = field(default_factory=dict)
    disabled_signals: frozenset[str] = frozenset()
    dimensions: Mapping[str, str] = field(default_factory=dict)
    """Extra default dimensions this function's emitter publishes (stack-wide ones merged in, this wins)."""


@dataclass(frozen=True)
class StackConfig:
    """The whole stack config (see the module docstring for the file shape)."""

    stack: str
    service: str
    namespace: str
    alarm_name_prefix: str
    functions: tuple[FunctionConfig, ...]
    idempotency_table: str | None = None
    actions: Mapping[Severity, tuple[str, ...]] = field(default_factory=dict)
    notify_ok: bool = True
    tags: Mapping[str, str] = field(default_factory=dict)
    disabled_signals: frozenset[str] = frozenset()
    overrides: Mapping[str, SignalOverride] = field(default_factory=dict)
    suppressions: tuple[Suppression, ...] = ()
    source: Path | None = None
    dimensions: Mapping[str, str] = field(default_factory=dict)
    region: str | None = None
    account_id: str | None = None
    runbook_url: str = DEFAULT_RUNBOOK_URL
    custom_alarms: tuple[CustomAlarm, ...] = ()
    """The ``custom_alarms`` entries, in file order."""
    composites: CompositeSettings | None = None
    """The ``composite_alarms`` section (None: no composite alarms)."""
    insights: InsightSettings | None = None
    """The ``contributor_insights`` section (None: no Contributor Insights rules)."""


def load_config(path: str | Path) -> StackConfig:
    """Read and check a stack config file (YAML or JSON).

    Raises :class:`ConfigError` (with the file and key path) when the file is missing, not
    YAML, or any key is unknown, of the wrong type or inconsistent.
    """
    import yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the config file ({exc.strerror})", file=str(p)) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})",
                          file=str(p)) from None
    try:
        data = yaml.safe_load(text)
    except RecursionError:
        raise ConfigError("not a stack config: nested too deeply", file=str(p)) from None
    except yaml.YAMLError as exc:
        # Never echo the file's text (yaml's message quotes the offending line): position and problem only.
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ConfigError(f"not valid YAML{where}: {problem}", file=str(p)) from None
    try:
        cfg = parse_config(data)
    except ConfigError as exc:
        raise ConfigError(str(exc), file=str(p)) from None
    return StackConfig(**{**cfg.__dict__, "source": p})


def parse_config(data: Any) -> StackConfig:
    """Build a :class:`StackConfig` from the decoded document (a mapping). Raises :class:`ConfigError`."""
    if not isinstance(data, dict):
        raise ConfigError("the config must be a mapping at the top level")
    F.no_unknown(data, _TOP_KEYS, "")
    # One rule with the emitter: the config's value, else idemwatch's variable, else Powertools', else the default.
    service = resolve_service(F.text(data, "service", ""))
    if reason := _DIMENSION_VALUE(service):
        raise ConfigError(f"the Service dimension: {reason}", "service")
    stack = F.text(data, "stack", "", default=service, check=_TAG_VALUE)
    namespace = resolve_namespace(F.text(data, "namespace", ""))
    if reason := emf.check_namespace(namespace):
        raise ConfigError(reason, "namespace")
    prefix = data.get("alarm_name_prefix", f"{stack}-")
    if not isinstance(prefix, str):
        raise ConfigError("must be a string", "alarm_name_prefix")
    if reason := _ALARM_NAME_PART(prefix) or (_PREFIX_VARIABLE if "${" in prefix else None):
        raise ConfigError(reason, "alarm_name_prefix" if "alarm_name_prefix" in data else "stack")
    functions_raw = data.get("functions")
    if not isinstance(functions_raw, list) or not functions_raw:
        raise ConfigError("must be a non-empty list of functions", "functions")
    stack_dims = _dimensions(data.get("dimensions"), "dimensions")
    functions = tuple(_function(f, i, stack_dims) for i, f in enumerate(functions_raw))
    names = [f.name for f in functions]
    dupes = sorted(n for n, c in Counter(names).items() if c > 1)
    if dupes:
        raise ConfigError(f"duplicate function name(s): {', '.join(dupes)}", "functions")
    actions_raw = data.get("actions") or {}
    if not isinstance(actions_raw, dict):
        raise ConfigError("must be a mapping of severity -> list of SNS topic ARNs", "actions")
    actions: dict[Severity, tuple[str, ...]] = {}
    for sev, arns in actions_raw.items():
        severity = F.enum_value(Severity, sev, f"actions.{sev}")
        actions[severity] = F.arns(arns, f"actions.{sev}")
    notify_ok = data.get("notify_ok", True)
    if not isinstance(notify_ok, bool):
        raise ConfigError("must be true or false", "notify_ok")
    table = F.text(data, "idempotency_table", "", check=_DIMENSION_VALUE)
    account = data.get("account_id")
    if account is not None and not (isinstance(account, str) and account.isdigit() and len(account) == 12):
        raise ConfigError("must be a 12-digit string (quote it in YAML)", "account_id")
    region = F.text(data, "region", "")
    if region is not None and not _REGION.match(region):
        raise ConfigError(f"{region!r} is not an AWS Region code (e.g. us-east-1)", "region")
    overrides = _overrides(data.get("overrides"), "overrides")
    for i, fn in enumerate(functions):
        _check_tiers(overrides, fn.overrides, f"functions[{i}].overrides")
    return StackConfig(
        stack=stack,
        service=service,
        namespace=namespace,
        alarm_name_prefix=prefix,
        functions=functions,
        idempotency_table=table,
        actions=MappingProxyType(actions),
        notify_ok=notify_ok,
        tags=_tags(data.get("tags")),
        disabled_signals=_signal_set(data.get("disabled_signals"), "disabled_signals"),
        overrides=overrides,
        suppressions=_suppressions(data.get("suppressions")),
        dimensions=stack_dims,
        region=region,
        account_id=account,
        runbook_url=F.text(data, "runbook_url", "", default=DEFAULT_RUNBOOK_URL, check=_PROSE),
        custom_alarms=parse_custom_alarms(data.get("custom_alarms"), "custom_alarms"),
        composites=parse_composites(data.get("composite_alarms")),
        insights=parse_insights(data.get("contributor_insights")),
    )


def _tags(raw: Any) -> Mapping[str, str]:
    """Extra tags: string keys, string or number values, within the API model's TagKey/TagValue limits."""
    tags = raw or {}
    if not isinstance(tags, dict) or not all(isinstance(k, str) and isinstance(v, (str, int, float))
                                            and not isinstance(v, bool) for k, v in tags.items()):
        raise ConfigError("must be a mapping of string -> string", "tags")
    out: dict[str, str] = {}
    for key, value in tags.items():
        if reason := _TAG_KEY(key) or _TAG_VALUE(str(value)):
            raise ConfigError(reason, f"tags.{key}")
        out[key] = str(value)
    return MappingProxyType(out)


def _check_tiers(stack: Mapping[str, SignalOverride], function: Mapping[str, SignalOverride], at: str) -> None:
    """No enabled tier may repeat its signal's base severity (both alarms would get one name): checked on the
    overrides as they merge for one function (stack-wide, then the function's), over the signal's default tiers
    and the added ones. ``at``: the key path of the function's overrides."""
    for sid in sorted(set(stack) | set(function)):
        ov = (stack.get(sid) or SignalOverride()).merged(function.get(sid))
        base = ov.severity or SIGNALS[sid].severity
        tiers = {t.severity for t in SIGNALS[sid].tiers} | set(ov.tiers)
        if base in tiers and ov.tiers.get(base, TierOverride()).enabled is not False:
            own = function.get(sid)
            where = f"{at}.{sid}" if own is not None and (base in own.tiers or own.severity is not None) \
                else f"overrides.{sid}"
            raise ConfigError(f"a {base.value} tier repeats the base severity of {sid}; change the base severity "
                              f"or disable the tier ({base.value}: {{enabled: false}})", f"{where}.tiers.{base.value}")


def _suppressions(raw: Any) -> tuple[Suppression, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError("must be a list of {rule, resource, reason}", "suppressions")
    out = []
    for i, item in enumerate(raw):
        at = f"suppressions[{i}]"
        if not isinstance(item, dict):
            raise ConfigError("must be a mapping", at)
        F.no_unknown(item, {"rule", "resource", "reason"}, at)
        out.append(Suppression(*(F.text(item, k, at, required=True, check=_PROSE)
                                 for k in ("rule", "resource", "reason"))))
    return tuple(out)


def _dimensions(raw: Any, at: str, base: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """A dimension name -> value mapping, checked with the emitter's own EMF rules (emitter.emf)."""
    out = dict(base or {})
    if raw is None:
        return MappingProxyType(out)
    if not isinstance(raw, dict):
        raise ConfigError("must be a mapping of dimension name -> value", at)
    for name, value in raw.items():
        here = f"{at}.{name}"
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        reason = emf.check_dimension_name(name) or emf.check_dimension_value(value)
        if reason:
            raise ConfigError(reason, here)
        if name in {d.value for d in Dimension}:
            raise ConfigError(f"{name} is a contract dimension; set it with service/operation", here)
        out[name] = value
    return MappingProxyType(out)


def _function(raw: Any, i: int, stack_dims: Mapping[str, str] | None = None) -> FunctionConfig:
    at = f"functions[{i}]"
    if not isinstance(raw, dict):
        raise ConfigError("must be a mapping", at)
    F.no_unknown(raw, _FUNCTION_KEYS, at)
    name = F.text(raw, "name", at, required=True, check=_DIMENSION_VALUE)
    es = raw.get("event_source")
    if es is None:
        raise ConfigError("is required (one of: " + ", ".join(e.value for e in EventSource) + ")",
                          f"{at}.event_source")
    event_source = F.enum_value(EventSource, es, f"{at}.event_source")
    queue = F.text(raw, "queue", at, check=_DIMENSION_VALUE)
    if queue and event_source is not EventSource.SQS:
        raise ConfigError(f"a source queue needs event_source sqs (got {event_source.value})", f"{at}.queue")
    log_group = F.text(raw, "log_group", at, check=_DIMENSION_VALUE)
    if log_group is None and (reason := _DIMENSION_VALUE(f"{LAMBDA_LOG_GROUP_PREFIX}{name}")):
        raise ConfigError(f"its log group {LAMBDA_LOG_GROUP_PREFIX}<name>: {reason}", f"{at}.name")
    return FunctionConfig(
        name=name,
        operation=F.text(raw, "operation", at, required=True, check=_DIMENSION_VALUE),
        event_source=event_source,
        queue=queue,
        dlq=F.text(raw, "dlq", at, check=_DIMENSION_VALUE),
        stream=F.text(raw, "stream", at, check=_PROSE),
        log_group=log_group or f"{LAMBDA_LOG_GROUP_PREFIX}{name}",
        overrides=_overrides(raw.get("overrides"), f"{at}.overrides"),
        disabled_signals=_signal_set(raw.get("disabled_signals"), f"{at}.disabled_signals"),
        dimensions=_dimensions(raw.get("dimensions"), f"{at}.dimensions", stack_dims),
    )


def _overrides(raw: Any, at: str) -> Mapping[str, SignalOverride]:
    if raw is None:
        return MappingProxyType({})
    if not isinstance(raw, dict):
        raise ConfigError("must be a mapping of signal id -> settings", at)
    out: dict[str, SignalOverride] = {}
    for sid, settings in raw.items():
        here = f"{at}.{sid}"
        if sid not in SIGNALS:
            raise ConfigError(f"unknown signal id (known: {', '.join(SIGNALS)})", here)
        if not isinstance(settings, dict):
            raise ConfigError("must be a mapping", here)
        F.no_unknown(settings, _OVERRIDE_KEYS | {"tiers"}, here)
        kw: dict[str, Any] = {}
        for key, value in settings.items():
            if key == "tiers":
                kw["tiers"] = _tiers(value, f"{here}.tiers")
            elif key == "severity":
                kw[key] = F.enum_value(Severity, value, f"{here}.{key}")
            elif key == "treat_missing_data":
                kw[key] = F.enum_value(TreatMissingData, value, f"{here}.{key}")
            elif key == "treat_missing_reason":
                kw[key] = F.text(settings, key, here, check=_PROSE)
            elif key == "anomaly":
                kw[key] = parse_anomaly(value, f"{here}.{key}")
            else:
                kw[key] = _setting(value, key, f"{here}.{key}")
        if "treat_missing_data" in kw and not kw.get("treat_missing_reason"):
            raise ConfigError("changing treat_missing_data needs treat_missing_reason (why that choice)", here)
        out[sid] = SignalOverride(**kw)
    return MappingProxyType(out)


def _tiers(raw: Any, at: str) -> Mapping[Severity, TierOverride]:
    if not isinstance(raw, dict):
        raise ConfigError("must be a mapping of severity -> tier settings", at)
    out: dict[Severity, TierOverride] = {}
    for sev, settings in raw.items():
        here = f"{at}.{sev}"
        severity = F.enum_value(Severity, sev, here)
        if not isinstance(settings, dict):
            raise ConfigError("must be a mapping", here)
        F.no_unknown(settings, _TIER_KEYS, here)
        kw: dict[str, Any] = {}
        for key, value in settings.items():
            if key == "actions":
                kw["actions"] = F.arns(value, f"{here}.actions")
            else:
                kw[key] = _setting(value, key, f"{here}.{key}")
        out[severity] = TierOverride(**kw)
    return MappingProxyType(out)


def _setting(value: Any, key: str, at: str) -> Any:
    """One numeric or boolean override/tier setting: ``threshold`` a finite number, ``enabled`` true/false,
    the counts integers >= 1."""
    if key == "threshold":
        return F.number(value, at)
    if key == "enabled":
        if not isinstance(value, bool):
            raise ConfigError(f"must be true or false, got {value!r}", at)
        return value
    return F.count(value, at)


def _signal_set(raw: Any, at: str) -> frozenset[str]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
        raise ConfigError("must be a list of signal ids", at)
    unknown = [s for s in raw if s not in SIGNALS]
    if unknown:
        raise ConfigError(f"unknown signal id(s) {', '.join(unknown)} (known: {', '.join(SIGNALS)})", at)
    return frozenset(raw)
