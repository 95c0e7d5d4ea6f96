"""alarms.cdk.template without CDK: the CloudFormation export bound for a stack (parameters decided, placeholders
turned into tokens) resolves to the export of the same config with the real names; descriptions fitted with the
placeholders fit with any real name."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from alarms.catalogue import build_catalogue
from alarms.cdk.template import MAX_NAME, Placeholders, monitoring_template
from alarms.cfn_template import build_template, resolve
from alarms.config import load_config, parse_config
from tests.support.cfn_resources import resources_by_name

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
_KINDS = {"name": "function", "queue": "queue", "dlq": "queue", "stream": "stream"}


def _placeheld(ph: Placeholders) -> tuple[dict, dict[str, tuple[str, str]]]:
    """The demo stack config with every resource name a placeholder for a token ``{"Ref": "<Kind><i>"}``;
    returns (config data, placeholder -> (logical id, kind))."""
    data = yaml.safe_load(DEMO.read_text(encoding="utf-8"))
    refs: dict[str, tuple[str, str]] = {}
    for i, fn in enumerate(data["functions"]):
        for key, kind in _KINDS.items():
            if fn.get(key):
                lid = f"{key.capitalize()}{i}"
                fn[key] = ph.name({"Ref": lid}, kind, lid)
                refs[fn[key]] = (lid, kind)
    data["idempotency_table"] = ph.name({"Ref": "Table"}, "table", "Table")
    refs[data["idempotency_table"]] = ("Table", "table")
    topic = ph.name({"Ref": "Oncall"}, "topic", "Oncall")
    data["actions"]["critical"] = [topic]
    refs[topic] = ("Oncall", "topic")
    return data, refs


def _real(data: dict, names: dict[str, str]) -> dict:
    text = yaml.safe_dump(data)
    for placeholder, name in names.items():
        text = text.replace(placeholder, name)
    return yaml.safe_load(text)


def _substitute(value, by_ref: dict[str, str]):
    if isinstance(value, list):
        return [_substitute(v, by_ref) for v in value]
    if isinstance(value, dict):
        if set(value) == {"Ref"} and value["Ref"] in by_ref:
            return by_ref[value["Ref"]]
        return {k: _substitute(v, by_ref) for k, v in value.items()}
    return value


_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-"


def _names(refs: dict[str, tuple[str, str]], seed: int) -> dict[str, str]:
    """A generated name per placeholder, as long as the placeholder (descriptions are then fitted the same),
    unique, from the characters CloudFormation's generated names use, starting with a capital (a description
    that starts with a name capitalises it in the export; the construct writes the name as it is)."""
    rnd = random.Random(seed)
    out = {}
    for i, placeholder in enumerate(refs):
        if refs[placeholder][1] == "topic":
            out[placeholder] = f"arn:aws:sns:us-east-1:123456789012:t{i}-".ljust(len(placeholder), "x")
        else:
            tail = "".join(rnd.choice(_ALPHABET) for _ in range(len(placeholder)))
            out[placeholder] = (f"N{i}-" + tail)[:len(placeholder)]  # a stack name first: capitalised
    return out


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_bound_template_resolves_to_the_export_of_the_real_names(seed):
    ph = Placeholders()
    config_data, refs = _placeheld(ph)
    names = _names(refs, seed)
    bound = monitoring_template(parse_config(config_data), ph)
    by_ref = {lid: names[p] for p, (lid, _) in refs.items()}
    mine = resolve({"Resources": _substitute(bound.resources, by_ref)}, region="eu-west-1", account_id="111122223333")
    real = parse_config(_real(config_data, names))
    theirs = resolve(build_template(real, build_catalogue(real), dashboard=True), region="eu-west-1",
                     account_id="111122223333")
    assert resources_by_name(mine["Resources"]) == resources_by_name(theirs["Resources"])
    assert {o["Description"] for o in bound.outputs.values()} == {
        ph.readable(o["Description"]) for o in build_template(parse_config(config_data), build_catalogue(
            parse_config(config_data)), dashboard=True)["Outputs"].values()}


@settings(max_examples=10, deadline=None)
@given(lengths=st.lists(st.integers(1, 64), min_size=12, max_size=12))
def test_any_real_name_keeps_descriptions_within_1024(lengths):
    ph = Placeholders()
    config_data, refs = _placeheld(ph)
    bound = monitoring_template(parse_config(config_data), ph)
    by_ref = {lid: "n" * min(n, MAX_NAME[kind]) for n, (p, (lid, kind)) in zip(lengths * 2, refs.items())}
    resolved = resolve({"Resources": _substitute(bound.resources, by_ref)})
    for res in resolved["Resources"].values():
        assert len(res["Properties"].get("AlarmDescription", "")) <= 1024


def test_parameters_are_decided_and_no_parameter_is_left():
    ph = Placeholders()
    config_data, _ = _placeheld(ph)
    config_data["actions"]["warning"] = []  # an empty topic list: no AlarmActions at all
    config = parse_config(config_data)
    bound = monitoring_template(config, ph)
    text = repr(bound.resources)  # logical ids and the Refs between resources included
    for param in ("NamePrefix", "'Ref': 'Namespace'", "${Namespace}", "CriticalAlarmActions", "Fn::If",
                  "AWS::NoValue", "Idemwatchref"):
        assert param not in text
    warning = [r["Properties"] for r in bound.resources.values()
               if r["Properties"].get("Tags") and {"Key": "idemwatch:severity", "Value": "warning"}
               in r["Properties"]["Tags"]]
    assert warning and all("AlarmActions" not in p for p in warning)
    # who notifies (alarms/demo-stack.yaml): the critical composite of each function (the alarms it covers notify
    # nobody) and the table's critical alarms (no function's composite covers them); the service composites and
    # the info Suppressor and MaintenanceWindow notify nobody (no info topics)
    notifying = {lid: r["Properties"] for lid, r in bound.resources.items() if "AlarmActions" in r["Properties"]}
    assert sorted(notifying) == sorted([*(f"ShopName{i}CompositeCriticalAlarm" for i in range(4)),
                                        "ShopTableThrottledRequestsAlarm", "ShopTableSystemErrorsAlarm"])
    for props in notifying.values():  # a whole-placeholder string is the token itself
        assert props["AlarmActions"] == props["OKActions"] == [{"Ref": "Oncall"}]


def test_names_with_dollar_braces_stay_literal():
    """A dimension value ${AWS::Region} (legal in a stack config) stays that text beside a token."""
    ph = Placeholders()
    config_data, _ = _placeheld(ph)
    config_data["functions"][0]["dimensions"] = {"Env": "${AWS::Region}"}
    bound = monitoring_template(parse_config(config_data), ph)
    resolved = resolve({"Resources": _substitute(bound.resources, {k: "x" for k in ("Name0", "Queue0", "Dlq0", "Name1",
                        "Stream1", "Dlq1", "Name2", "Name3", "Dlq3", "Table", "Oncall")})})
    dims = [d for r in resolved["Resources"].values() for d in r["Properties"].get("Dimensions", [])
            if d["Name"] == "Env"]
    assert dims and all(d["Value"] == "${AWS::Region}" for d in dims)


def test_demo_export_unchanged_by_binding_when_names_are_literal():
    """No placeholder at all: the bound resources resolve to exactly the export."""
    config = load_config(DEMO)
    bound = monitoring_template(config, Placeholders())
    mine = resolve({"Resources": bound.resources})
    theirs = resolve(build_template(config, build_catalogue(config), dashboard=True))
    assert mine["Resources"] == theirs["Resources"]
    assert replace(config) == config


def _refs(value, out: list) -> list:
    """Every ``Ref`` / ``Fn::GetAtt`` target in ``value``."""
    if isinstance(value, list):
        for v in value:
            _refs(v, out)
    elif isinstance(value, dict):
        if set(value) == {"Ref"}:
            out.append(value["Ref"])
        elif set(value) == {"Fn::GetAtt"}:
            out.append(value["Fn::GetAtt"][0])
        else:
            for v in value.values():
                _refs(v, out)
    return out


def test_composites_name_their_children_and_suppressor_by_reference():
    """A composite's AlarmRule and ActionsSuppressor refer to the bound resources (CloudFormation then creates the
    children first), outputs to the bound ids; every other Ref is a token the stack config was given."""
    ph = Placeholders()
    config_data, refs = _placeheld(ph)
    bound = monitoring_template(parse_config(config_data), ph)
    given = {lid for lid, _ in refs.values()}
    targets = _refs(list(bound.resources.values()), []) + _refs([o["Value"] for o in bound.outputs.values()], [])
    assert targets and set(targets) <= set(bound.resources) | given
    composite = bound.resources["ShopName0CompositeCriticalAlarm"]["Properties"]
    text, variables = composite["AlarmRule"]["Fn::Sub"]
    # alarms/demo-stack.yaml: an SQS consumer's critical alarms (the catalogue's critical tier and its overrides)
    assert text == " OR ".join(f'ALARM("${{ShopName0{s}Alarm}}")' for s in (
        "PoisonRate", "RetryRateCritical", "AmbiguousCommit", "IdempotencyStoreError", "RecordAgeMaxCritical")) + \
        ' OR ALARM("${ShopQueue0AgeOfOldestMessageCriticalAlarm}") OR ALARM("${ShopDlq0MessagesVisibleAlarm}") OR ' + \
        " OR ".join(f'ALARM("${{ShopName0{s}Alarm}}")' for s in ("EMFValidationErrors", "EMFParsingErrors"))
    assert variables == {v: {"Ref": v} for v in re.findall(r"\$\{(\w+)\}", text)}
    assert composite["ActionsSuppressor"] == {"Ref": "ShopSuppressorAlarm"}
    assert bound.outputs["ShopName0CompositeCriticalAlarmArn"]["Value"] == {
        "Fn::GetAtt": ["ShopName0CompositeCriticalAlarm", "Arn"]}
