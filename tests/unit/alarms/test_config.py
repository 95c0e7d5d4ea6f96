"""Stack config loading: the demo config, defaults, and one clear error per kind of mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from alarms.config import load_config, parse_config
from alarms.exceptions import ConfigError
from alarms.types import Severity, TreatMissingData
from emitter.contract import NAMESPACE_DEFAULT, EventSource

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"

MINIMAL = {"service": "orders", "functions": [{"name": "fn", "operation": "Op", "event_source": "sqs"}]}


def test_demo_config_loads_with_the_demo_fleet_names():
    cfg = load_config(DEMO)
    assert cfg.stack == "shop" and cfg.service == "shop" and cfg.namespace == "Idempotency"
    assert [f.name for f in cfg.functions] == ["orders-consumer", "ledger-stream", "create-case-api",
                                               "payment-capture"]
    orders = cfg.functions[0]
    assert (orders.queue, orders.dlq, orders.event_source) == ("orders-queue", "orders-dlq", EventSource.SQS)
    assert orders.log_group == "/aws/lambda/orders-consumer"
    assert cfg.functions[1].stream == "ledger-stream" and cfg.functions[1].event_source is EventSource.KINESIS
    assert cfg.idempotency_table == "idempotency"
    assert cfg.overrides["record_age_max"].threshold == 120000
    assert cfg.functions[3].overrides["ambiguous_commit"].severity is Severity.CRITICAL
    assert cfg.source == DEMO


def test_safe_defaults():
    cfg = parse_config(MINIMAL)
    assert cfg.stack == "orders"  # defaults to the service
    assert cfg.alarm_name_prefix == "orders-"
    assert cfg.namespace == NAMESPACE_DEFAULT
    assert dict(cfg.actions) == {}  # no actions unless configured
    assert cfg.notify_ok is True
    assert cfg.functions[0].log_group == "/aws/lambda/fn"


@pytest.mark.parametrize(
    "patch,path,fragment",
    [
        ({"servce": "x"}, "servce", "unknown key"),
        ({"service": 3}, "service", "non-empty string"),
        ({"functions": []}, "functions", "non-empty list"),
        ({"functions": [{"name": "fn", "operation": "Op", "event_source": "kafka"}]},
         "functions[0].event_source", "'kafka' is not one of"),
        ({"functions": [{"name": "fn", "operation": "Op", "event_source": "sqs", "queeu": "q"}]},
         "functions[0].queeu", "unknown key(s) queeu"),
        ({"functions": [{"name": "fn", "operation": "Op", "event_source": "kinesis", "queue": "q"}]},
         "functions[0].queue", "needs event_source sqs"),
        ({"functions": [{"name": "fn", "operation": "Op", "event_source": "sqs"}] * 2},
         "functions", "duplicate function name(s): fn"),
        ({"overrides": {"poison_ratio": {"threshold": 1}}}, "overrides.poison_ratio", "unknown signal id"),
        ({"overrides": {"poison_rate": {"threshold": "high"}}}, "overrides.poison_rate.threshold", "must be a number"),
        ({"overrides": {"poison_rate": {"period": 0}}}, "overrides.poison_rate.period", "must be an integer >= 1"),
        ({"overrides": {"poison_rate": {"enabled": "no"}}}, "overrides.poison_rate.enabled", "must be true or false"),
        ({"overrides": {"poison_rate": {"period": True}}}, "overrides.poison_rate.period", "must be an integer >= 1"),
        ({"overrides": {"poison_rate": {"treat_missing_data": "breaching"}}}, "overrides.poison_rate",
         "needs treat_missing_reason"),
        ({"overrides": {"poison_rate": {"treat_missing_data": "sometimes", "treat_missing_reason": "x"}}},
         "overrides.poison_rate.treat_missing_data", "'sometimes' is not one of"),
        ({"actions": {"urgent": ["arn:aws:sns:us-east-1:1:t"]}}, "actions.urgent", "'urgent' is not one of"),
        ({"actions": {"critical": ["https://hooks.example"]}}, "actions.critical", "is not an ARN"),
        ({"disabled_signals": ["nope"]}, "disabled_signals", "unknown signal id(s) nope"),
        ({"notify_ok": "yes"}, "notify_ok", "true or false"),
    ],
)
def test_each_mistake_is_a_clear_error(patch, path, fragment):
    with pytest.raises(ConfigError) as err:
        parse_config({**MINIMAL, **patch})
    assert err.value.path == path
    assert fragment in str(err.value)


def test_override_with_reason_is_accepted():
    cfg = parse_config({**MINIMAL, "overrides": {"record_age_max": {
        "treat_missing_data": "breaching", "treat_missing_reason": "the queue always has traffic"}}})
    assert cfg.overrides["record_age_max"].treat_missing_data is TreatMissingData.BREACHING


def test_file_errors_name_the_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the config file"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("service: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML") as err:
        load_config(bad)
    assert err.value.file == str(bad)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("service: s\nfunctions:\n  - name: f\n    operation: O\n    event_source: sqs\n    dlq: 5\n")
    with pytest.raises(ConfigError) as err:
        load_config(wrong)
    assert str(err.value).startswith(f"{wrong}: functions[0].dlq: must be a non-empty string")
