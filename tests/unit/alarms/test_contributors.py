"""Contributor Insights rules: their bodies, the documented rule syntax they are held to, and the offline replay on
the trail table against a top-N computed by hand for one window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alarms.config import load_config, parse_config
from alarms.contributors import Contributor, load_trail, replay_rules, top_contributors
from alarms.exceptions import ConfigError
from alarms.insight_rules import build_insight_rules, check_rule_body
from alarms.validate import validate_request
from tests.support.alarm_tables import minute, write_tables

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
ORDERS, CASES, OTHER = "/aws/lambda/orders-consumer", "/aws/lambda/create-case-api", "/aws/lambda/not-ours"


def test_the_demo_rules_and_their_body():
    rules = build_insight_rules(load_config(DEMO))
    assert [r.name for r in rules[:3]] == ["shop-PayloadConflict-TopKeys", "shop-PayloadConflict-TopTenants",
                                           "shop-PayloadConflict-TopEventSources"]
    assert len(rules) == 12 and rules[-1].name == "shop-StaleClaimTakeover-TopEventSources"
    body = rules[0].body()
    assert body == {
        "Schema": {"Name": "CloudWatchLogRule", "Version": 1},
        "LogGroupNames": ["/aws/lambda/orders-consumer", "/aws/lambda/ledger-stream", "/aws/lambda/create-case-api",
                          "/aws/lambda/payment-capture"],
        "LogFormat": "JSON",
        "Contribution": {"Keys": ["$.idempotency_key"],
                         "Filters": [{"Match": "$.outcome", "In": ["payload_conflict"]},
                                     {"Match": "$.service", "In": ["shop"]},
                                     {"Match": "$.idempotency_key", "IsPresent": True}]},
        "AggregateOn": "Count"}
    req = rules[0].to_request()
    assert json.loads(req["RuleDefinition"]) == body and req["RuleState"] == "ENABLED"
    assert {t["Key"]: t["Value"] for t in req["Tags"]}["idemwatch:signal"] == "contributor_insights"
    for r in rules:
        assert validate_request(r.to_request()) == []


@pytest.mark.parametrize(("change", "field", "rule"), [
    (lambda b: b.update(Schema={"Name": "x"}), "RuleDefinition.Schema", "insight.schema"),
    (lambda b: b.update(LogGroupARNs=["arn:x"]), "RuleDefinition.LogGroupNames", "insight.log_groups"),
    (lambda b: b.update(LogGroupNames=["/a*b"]), "RuleDefinition.LogGroupNames", "insight.wildcard"),
    (lambda b: b.update(LogFormat="XML"), "RuleDefinition.LogFormat", "insight.log_format"),
    (lambda b: b["Contribution"].update(Keys=["$.a", "$.b", "$.c", "$.d", "$.e"]), "RuleDefinition.Contribution.Keys",
     "insight.keys"),
    (lambda b: b["Contribution"].update(Keys=["idempotency_key"]), "RuleDefinition.Contribution.Keys[0]",
     "insight.field"),
    (lambda b: b["Contribution"]["Filters"].extend([{"Match": "$.a", "IsPresent": True}] * 2),
     "RuleDefinition.Contribution.Filters", "insight.filters"),
    (lambda b: b["Contribution"]["Filters"].__setitem__(0, {"Match": "$.outcome", "In": [str(i) for i in range(11)]}),
     "RuleDefinition.Contribution.Filters[0].In", "insight.operand"),
    (lambda b: b["Contribution"]["Filters"].__setitem__(0, {"Match": "$.attempt", "GreaterThan": "1"}),
     "RuleDefinition.Contribution.Filters[0].GreaterThan", "insight.operand"),
    (lambda b: b["Contribution"]["Filters"].__setitem__(0, {"Match": "$.a", "In": ["x"], "NotIn": ["y"]}),
     "RuleDefinition.Contribution.Filters[0]", "insight.operator"),
    (lambda b: b.update(AggregateOn="Sum"), "RuleDefinition.Contribution.ValueOf", "insight.value_of"),
    (lambda b: b["Contribution"].update(ValueOf="$.attempt"), "RuleDefinition.Contribution.ValueOf",
     "insight.value_of"),
    (lambda b: b.update(Extra=1), "RuleDefinition.Extra", "insight.unknown_field"),
])
def test_rule_bodies_are_held_to_the_documented_syntax(change, field, rule):
    body = build_insight_rules(load_config(DEMO))[0].body()
    change(body)
    assert (field, rule) in {(f, r) for f, r, _ in check_rule_body(json.dumps(body))}


def test_put_insight_rule_limits_come_from_the_model():
    r = build_insight_rules(load_config(DEMO))[0].to_request()
    long_name = {**r, "RuleName": "r" * 129}
    assert ("RuleName", "model.max_length") in {(v.field, v.rule) for v in validate_request(long_name)}
    big = {**r, "RuleDefinition": r["RuleDefinition"].replace('"/aws/lambda/orders-consumer"',
                                                                ", ".join(['"/aws/lambda/' + "x" * 100 + '"'] * 80))}
    assert ("RuleDefinition", "model.max_length") in {(v.field, v.rule) for v in validate_request(big)}
    accented = {**r, "RuleName": "shop-Conflit-É"}
    assert ("RuleName", "model.pattern") in {(v.field, v.rule) for v in validate_request(accented)}


def test_a_rule_name_out_of_printable_ascii_is_a_config_error():
    cfg = {"service": "s", "alarm_name_prefix": "équipe-", "contributor_insights": {},
           "functions": [{"name": "f", "operation": "O", "event_source": "sqs"}]}
    with pytest.raises(ConfigError, match="printable ASCII"):
        build_insight_rules(parse_config(cfg))
    with pytest.raises(ConfigError, match="'tenant' is not one of"):
        parse_config({**cfg, "contributor_insights": {"keys": ["tenant"]}})
    with pytest.raises(ConfigError, match="is not one of"):
        parse_config({**cfg, "contributor_insights": {"outcomes": ["conflict"]}})


@settings(max_examples=150, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                                 max_size=5), max_leaves=20))
def test_any_json_is_checked_without_raising(doc):
    check_rule_body(json.dumps(doc))
    check_rule_body(json.dumps({"Schema": {"Name": "CloudWatchLogRule", "Version": 1}, "LogFormat": "JSON",
                                "LogGroupNames": ["/g"], "AggregateOn": "Count", "Contribution": doc}))


# --------------------------------------------------------------------------- the replay
def _row(m: int, group: str, outcome: str, key: str | None, source: str = "sqs", service: str = "shop") -> tuple:
    return (minute(m), group, "123456789012", service, "Op", source, outcome, key, None, None, None, None, 1, None,
            None, None, None)


TRAIL = [
    # outside the window [10:05, 10:10): never counted
    _row(4, ORDERS, "payload_conflict", "k-early"), _row(4, ORDERS, "payload_conflict", "k-early"),
    _row(10, ORDERS, "payload_conflict", "k-late"),
    # inside the window
    _row(5, ORDERS, "payload_conflict", "k-b"), _row(5, ORDERS, "payload_conflict", "k-a"),
    _row(6, CASES, "payload_conflict", "k-b", "apigateway-rest"), _row(6, ORDERS, "payload_conflict", "k-c"),
    _row(7, ORDERS, "payload_conflict", "k-b"), _row(8, CASES, "payload_conflict", "k-a", "apigateway-rest"),
    _row(9, ORDERS, "payload_conflict", "k-d"),
    _row(7, ORDERS, "payload_conflict", None),  # no key: no contributor
    _row(7, OTHER, "payload_conflict", "k-z"), _row(7, OTHER, "payload_conflict", "k-z"),  # another log group
    _row(8, ORDERS, "payload_conflict", "k-y", service="other"),  # another service
    _row(8, ORDERS, "duplicate_completed", "k-b"), _row(8, ORDERS, "claimed", "k-b"),  # other outcomes
]


def test_top_keys_in_one_window_match_the_list_computed_by_hand(tmp_path):
    write_tables(tmp_path, {"trail": TRAIL})
    cfg = parse_config({"service": "shop", "contributor_insights": {"outcomes": ["payload_conflict"],
                                                                     "keys": ["idempotency_key", "event_source"]},
                        "functions": [{"name": "orders-consumer", "operation": "Op", "event_source": "sqs"},
                                      {"name": "create-case-api", "operation": "Op2",
                                       "event_source": "apigateway-rest"}]})
    keys, sources = replay_rules(build_insight_rules(cfg), tmp_path, start_s=minute(5).timestamp(),
                                 end_s=minute(10).timestamp(), top=3)
    # by hand, 10:05-10:10, payload_conflict of service shop in the two log groups, with a key:
    # k-b 3 (10:05, 10:06 create-case-api, 10:07), k-a 2 (10:05, 10:08), k-c 1 (10:06), k-d 1 (10:09) ->
    # top 3: k-b, k-a, then k-c before k-d (a tie: keys ascending); 7 matching records, 4 contributors
    assert keys.contributors == [Contributor(("k-b",), 3), Contributor(("k-a",), 2), Contributor(("k-c",), 1)]
    assert (keys.status, keys.matched, keys.unique) == ("ok", 7, 4)
    # the event-source rule needs no key: the 10:07 record without one counts there (sqs 6, apigateway-rest 2)
    assert sources.contributors == [Contributor(("sqs",), 6), Contributor(("apigateway-rest",), 2)]
    everything, _ = replay_rules(build_insight_rules(cfg), tmp_path)  # no window: the whole trail
    assert everything.contributors[:2] == [Contributor(("k-b",), 3), Contributor(("k-a",), 2)]
    assert everything.matched == 10  # + k-early x2, k-late


def test_a_field_the_trail_lacks_is_reported_by_name(tmp_path):
    write_tables(tmp_path, {"trail": TRAIL})
    cfg = parse_config({"service": "shop", "contributor_insights": {"outcomes": ["payload_conflict"],
                                                                     "keys": ["tenant_id"]},
                        "functions": [{"name": "orders-consumer", "operation": "Op", "event_source": "sqs"}]})
    (r,) = replay_rules(build_insight_rules(cfg), tmp_path)
    assert r.status == "unsupported" and r.note.startswith("tenant_id: not a column of the trail table")
    (tmp_path / "tables" / "trail.parquet").unlink()
    (r,) = replay_rules(build_insight_rules(cfg), tmp_path)
    assert (r.status, r.note) == ("no_data", "no trail table in this history")


def test_filters_and_wildcard_log_groups_replay_as_documented(tmp_path):
    write_tables(tmp_path, {"trail": TRAIL})
    trail = load_trail(tmp_path)
    body = {"LogFormat": "JSON", "AggregateOn": "Count", "LogGroupNames": ["/aws/lambda/*"],
            "Contribution": {"Keys": ["$.log_group", "$.outcome"],
                             "Filters": [{"Match": "$.idempotency_key", "StartsWith": ["k-z", "k-e"]},
                                         {"Match": "$.attempt", "EqualTo": 1}]}}
    found, matched, unique = top_contributors(body, trail)
    # k-early x2 in orders-consumer, k-z x2 in not-ours: a tie, keys ascending ("/aws/lambda/n..." first)
    assert found == [Contributor((OTHER, "payload_conflict"), 2), Contributor((ORDERS, "payload_conflict"), 2)]
    assert (matched, unique) == (4, 2)
    body["Contribution"]["Filters"] = [{"Match": "$.idempotency_key", "IsPresent": False}]
    assert top_contributors(body, trail)[0] == [Contributor((ORDERS, "payload_conflict"), 1)]
    with pytest.raises(ValueError, match="only JSON rules aggregating on Count"):
        top_contributors({**body, "AggregateOn": "Sum"}, trail)
