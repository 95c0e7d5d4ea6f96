"""Contributor Insights rules generated from the emitter's contract: who is behind a conflict, a duplicate or a
stuck key, live, next to the alarm (``contributor_insights`` in the stack config).

For each outcome and key of the section (default: payload_conflict, duplicate_completed, duplicate_in_progress and
stale_claim_takeover, ranked by idempotency_key, tenant_id and event_source) one rule
``<prefix><Outcome>-Top<Key>s`` over the log groups of the stack's functions::

    {"Schema": {"Name": "CloudWatchLogRule", "Version": 1}, "LogGroupNames": ["/aws/lambda/orders-consumer", ...],
     "LogFormat": "JSON",
     "Contribution": {"Keys": ["$.idempotency_key"],
                      "Filters": [{"Match": "$.outcome", "In": ["payload_conflict"]},
                                  {"Match": "$.service", "In": ["shop"]},
                                  {"Match": "$.idempotency_key", "IsPresent": true}]},
     "AggregateOn": "Count"}

Field names are the contract's (:class:`emitter.contract.LogKey`, :class:`emitter.contract.Outcome`). The emitter
writes one JSON record per outcome, and the Powertools integration (``emitter.powertools``) writes the same records
for what Powertools decides, so one rule covers both; the key is ranked as logged: a key hashed by the emitter
(``hash_idempotency_keys``, ``tenant:sha256:...``) or by Powertools (``<function>#<md5>``) stays hashed.

:func:`check_rule_body` checks a rule definition against the documented syntax ("Contributor Insights rule syntax
in CloudWatch", CloudWatch User Guide): Schema, exactly one of LogGroupNames / LogGroupARNs, LogFormat JSON or CLF,
1-4 Keys, at most one ValueOf (with ``AggregateOn: Sum`` only), at most 4 Filters each with a Match and one
operator (In / NotIn / StartsWith with 1-10 strings, GreaterThan / LessThan / EqualTo / NotEqualTo with a number,
IsPresent with true or false), fields in JSON property notation (``$.a.b``, ``$.a[0]``). PutInsightRule's own
limits (name 1-128 printable ASCII, definition 1-8,192 ASCII) come from the API model botocore ships.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from alarms import constants as C
from alarms.exceptions import ConfigError
from alarms.settings import InsightSettings
from emitter.contract import LogKey

INSIGHT_SIGNAL = "contributor_insights"
"""Value of the ``idemwatch:signal`` tag of the rules, and their runbook anchor."""
SCHEMA = {"Name": "CloudWatchLogRule", "Version": 1}
MAX_KEYS = 4
MAX_FILTERS = 4
MAX_FILTER_VALUES = 10
_JSON_PATH = re.compile(r"^\$(\.[^.\[\]\s]+(\[\d+\])*)+$")
_STRING_OPS = ("In", "NotIn", "StartsWith")
_NUMBER_OPS = ("GreaterThan", "LessThan", "EqualTo", "NotEqualTo")
_OPERATORS = (*_STRING_OPS, *_NUMBER_OPS, "IsPresent")
_TOP_KEYS = {"Schema", "LogGroupNames", "LogGroupARNs", "LogFormat", "Fields", "Contribution", "AggregateOn"}
_LABELS = {"idempotency_key": "Keys", "tenant_id": "Tenants", "event_source": "EventSources",
           "operation": "Operations", "error_code": "ErrorCodes", "function_name": "Functions"}
_RULE_NAME = re.compile(r"^[\x20-\x7E]{1,128}$")  # API model: InsightRuleName


def _camel(snake: str) -> str:
    return "".join(p.capitalize() for p in snake.split("_"))


@dataclass(frozen=True)
class InsightRuleDefinition:
    """One Contributor Insights rule: records of ``outcome`` (service ``service``) in ``log_groups``, counted per
    value of the log key ``key``."""

    name: str
    title: str
    outcome: str
    key: str
    service: str
    log_groups: tuple[str, ...]
    state: str = "ENABLED"
    tags: tuple[tuple[str, str], ...] = ()
    prefix: str = ""

    def body(self) -> dict[str, Any]:
        """The rule definition as a JSON object (see the module docstring)."""
        path = f"$.{self.key}"
        return {
            "Schema": dict(SCHEMA),
            "LogGroupNames": list(self.log_groups),
            "LogFormat": "JSON",
            "Contribution": {
                "Keys": [path],
                "Filters": [{"Match": f"$.{LogKey.OUTCOME.value}", "In": [self.outcome]},
                            {"Match": f"$.{LogKey.SERVICE.value}", "In": [self.service]},
                            {"Match": path, "IsPresent": True}],
            },
            "AggregateOn": "Count",
        }

    def definition(self) -> str:
        """``RuleDefinition``: :meth:`body` as compact JSON text (key order kept: byte-stable)."""
        return json.dumps(self.body(), separators=(",", ":"))

    def to_request(self) -> dict[str, Any]:
        """The PutInsightRule request (boto3 keyword arguments / ``--cli-input-json`` document)."""
        return {"RuleName": self.name, "RuleState": self.state, "RuleDefinition": self.definition(),
                "Tags": [{"Key": k, "Value": v} for k, v in self.tags]}


def build_insight_rules(config: Any) -> list[InsightRuleDefinition]:
    """The rules of ``config``'s ``contributor_insights`` section, outcome by outcome then key by key; empty without
    it. Raises :class:`ConfigError` when a rule name breaks PutInsightRule's (1-128 printable ASCII characters)."""
    settings: InsightSettings | None = config.insights
    if settings is None:
        return []
    groups = tuple(dict.fromkeys(fn.log_group for fn in config.functions))
    out = []
    for outcome in settings.outcomes:
        for key in settings.keys:
            label = _LABELS.get(key, _camel(key) + "s")
            name = f"{config.alarm_name_prefix}{_camel(outcome)}-Top{label}"
            if not _RULE_NAME.match(name):
                raise ConfigError(f"the Contributor Insights rule name {name!r} must be 1-128 printable ASCII "
                                  "characters (PutInsightRule); shorten or change alarm_name_prefix",
                                  "contributor_insights")
            tags = ((C.TAG_MANAGED_BY, C.TAG_MANAGED_BY_VALUE), (C.TAG_STACK, config.stack),
                    (C.TAG_SIGNAL, INSIGHT_SIGNAL)) + tuple(sorted(config.tags.items()))
            out.append(InsightRuleDefinition(
                name=name, title=f"Top {label[0].lower() + label[1:]} of {outcome}", outcome=outcome, key=key,
                service=config.service, log_groups=groups, state=settings.state, tags=tags,
                prefix=config.alarm_name_prefix))
    return out


# --------------------------------------------------------------------------- rule syntax
def check_rule_body(text: Any) -> list[tuple[str, str, str]]:
    """Every way ``text`` (a RuleDefinition) breaks the documented rule syntax, as (field, rule id, message);
    empty = valid. Never raises."""
    out: list[tuple[str, str, str]] = []

    def bad(field: str, rule: str, message: str) -> None:
        out.append((field, f"insight.{rule}", message))

    if not isinstance(text, str):
        return [("RuleDefinition", "insight.json", "must be a string holding a JSON object")]
    try:
        body = json.loads(text)
    except ValueError as exc:
        return [("RuleDefinition", "insight.json", f"not JSON: {exc}")]
    if not isinstance(body, dict):
        return [("RuleDefinition", "insight.json", "must be a JSON object")]
    for k in body:
        if k not in _TOP_KEYS:
            bad(f"RuleDefinition.{k}", "unknown_field", f"unknown field (known: {', '.join(sorted(_TOP_KEYS))})")
    if body.get("Schema") != SCHEMA:
        bad("RuleDefinition.Schema", "schema", f"must be {json.dumps(SCHEMA)}")
    names, arns = body.get("LogGroupNames"), body.get("LogGroupARNs")
    if (names is None) == (arns is None):
        bad("RuleDefinition.LogGroupNames", "log_groups", "give exactly one of LogGroupNames and LogGroupARNs")
    for field, groups in (("LogGroupNames", names), ("LogGroupARNs", arns)):
        if groups is None:
            continue
        if not isinstance(groups, list) or not groups or not all(isinstance(g, str) and g for g in groups):
            bad(f"RuleDefinition.{field}", "log_groups", "must be a non-empty array of non-empty strings")
        elif field == "LogGroupNames" and any("*" in g[:-1] for g in groups):
            bad(f"RuleDefinition.{field}", "wildcard", "a * may only end a log group name (a prefix)")
    fmt = body.get("LogFormat")
    if fmt not in ("JSON", "CLF"):
        bad("RuleDefinition.LogFormat", "log_format", f"must be JSON or CLF, got {fmt!r}")
    aliases = body.get("Fields") or {}
    if "Fields" in body and (fmt != "CLF" or not isinstance(aliases, dict)):
        bad("RuleDefinition.Fields", "fields", "Fields (aliases of CLF field positions) is for LogFormat CLF only")
        aliases = {}

    def field_ok(value: Any) -> bool:
        if not isinstance(value, str):
            return False
        if fmt == "CLF":
            return value.isdigit() or value in set(aliases.values())
        return bool(_JSON_PATH.match(value))

    contribution = body.get("Contribution")
    if not isinstance(contribution, dict):
        bad("RuleDefinition.Contribution", "contribution", "is required: an object with Keys (and Filters, ValueOf)")
        contribution = {}
    for k in contribution:
        if k not in ("Keys", "ValueOf", "Filters"):
            bad(f"RuleDefinition.Contribution.{k}", "unknown_field", "unknown field (known: Keys, ValueOf, Filters)")
    keys = contribution.get("Keys")
    if not isinstance(keys, list) or not 1 <= len(keys) <= MAX_KEYS:
        bad("RuleDefinition.Contribution.Keys", "keys", f"must be an array of 1 to {MAX_KEYS} log fields")
    else:
        for i, k in enumerate(keys):
            if not field_ok(k):
                bad(f"RuleDefinition.Contribution.Keys[{i}]", "field", f"{k!r} is not a log field in "
                    + ("JSON property notation ($.name, $.a.b, $.a[0])" if fmt != "CLF" else "CLF position or alias"))
    aggregate = body.get("AggregateOn")
    if aggregate not in ("Count", "Sum"):
        bad("RuleDefinition.AggregateOn", "aggregate_on", f"must be Count or Sum, got {aggregate!r}")
    value_of = contribution.get("ValueOf")
    if aggregate == "Sum" and value_of is None:
        bad("RuleDefinition.Contribution.ValueOf", "value_of", "AggregateOn Sum needs ValueOf (the field summed)")
    if value_of is not None and aggregate != "Sum":
        bad("RuleDefinition.Contribution.ValueOf", "value_of", "ValueOf is only for AggregateOn Sum")
    if value_of is not None and not field_ok(value_of):
        bad("RuleDefinition.Contribution.ValueOf", "field", f"{value_of!r} is not a log field")
    filters = contribution.get("Filters", [])
    if not isinstance(filters, list) or len(filters) > MAX_FILTERS:
        bad("RuleDefinition.Contribution.Filters", "filters", f"must be an array of at most {MAX_FILTERS} filters")
        filters = []
    for i, f in enumerate(filters):
        here = f"RuleDefinition.Contribution.Filters[{i}]"
        if not isinstance(f, dict):
            bad(here, "filter", "must be an object with Match and one operator")
            continue
        if not field_ok(f.get("Match")):
            bad(f"{here}.Match", "field", f"Match {f.get('Match')!r} is not a log field")
        ops = [k for k in f if k != "Match"]
        if len(ops) != 1 or ops[0] not in _OPERATORS:
            bad(here, "operator", f"needs exactly one operator of {', '.join(_OPERATORS)}, got {ops}")
            continue
        op, arg = ops[0], f[ops[0]]
        if op in _STRING_OPS and not (isinstance(arg, list) and 1 <= len(arg) <= MAX_FILTER_VALUES
                                      and all(isinstance(x, str) for x in arg)):
            bad(f"{here}.{op}", "operand", f"{op} takes an array of 1 to {MAX_FILTER_VALUES} strings")
        elif op in _NUMBER_OPS and (isinstance(arg, bool) or not isinstance(arg, (int, float))):
            bad(f"{here}.{op}", "operand", f"{op} takes one number")
        elif op == "IsPresent" and not isinstance(arg, bool):
            bad(f"{here}.{op}", "operand", "IsPresent takes true or false")
    return out


def rule_fields(body: dict[str, Any]) -> list[str]:
    """The log fields (JSON paths without ``$.``) a valid JSON rule reads: its Keys, then its Filters' Match."""
    contribution = body.get("Contribution") or {}
    paths = list(contribution.get("Keys") or []) + [f.get("Match") for f in contribution.get("Filters") or []]
    return [p[2:] for p in dict.fromkeys(paths) if isinstance(p, str) and p.startswith("$.")]
