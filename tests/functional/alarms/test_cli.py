"""The `idemwatch alarms` commands end to end through the real console entry point (click)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from idemwatch.cli import main
from tests.support.alarm_tables import minute, write_tables

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"


def _run(*args):
    return CliRunner().invoke(main, ["alarms", *args])


def test_export_all_formats_then_validate_them(tmp_path):
    res = _run("export", "--config", str(DEMO), "--out", str(tmp_path))
    assert res.exit_code == 0, res.output
    assert "cli: 97 file(s), 74 alarms, 11 composite alarms, 12 Contributor Insights rules" in res.output
    assert len(list((tmp_path / "cli").glob("*.json"))) == 74
    assert len(list((tmp_path / "cli" / "composite-alarms").glob("*.json"))) == 11
    assert len(list((tmp_path / "cli" / "insight-rules").glob("*.json"))) == 12
    assert (tmp_path / "cloudformation" / "shop-alarms.json").exists()
    assert (tmp_path / "terraform" / "shop-alarms.tf.json").exists()
    res = _run("validate", str(tmp_path / "cli"), str(tmp_path / "cloudformation" / "shop-alarms.json"),
               str(tmp_path / "terraform"), "--config", str(DEMO))
    assert res.exit_code == 0, res.output
    assert "OK: 388 request(s) valid" in res.output  # 97 requests x (cli, cloudformation, terraform, config)


def test_validate_reports_alarm_and_field_and_fails(tmp_path):
    req = json.loads((ROOT / "alarms" / "exported" / "cli" / "shop-orders-dlq-MessagesVisible.json").read_text())
    req["DatapointsToAlarm"] = 3
    req["Statistic"] = "Total"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(req))
    res = _run("validate", str(bad))
    assert res.exit_code == 1
    assert ("INVALID shop-orders-dlq-MessagesVisible: DatapointsToAlarm: DatapointsToAlarm (3) must not exceed "
            "EvaluationPeriods (1)") in res.output
    assert "INVALID shop-orders-dlq-MessagesVisible: Statistic: 'Total' is not one of" in res.output
    assert "2 problem(s) in 1 alarm(s)" in res.output
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": 1}))
    res = _run("validate", str(other))
    assert res.exit_code == 2 and "neither an alarm or rule request" in res.output


def test_bad_config_is_a_usage_error(tmp_path):
    cfg = tmp_path / "stack.yaml"
    cfg.write_text("service: s\nfunctions: []\n")
    res = _run("export", "--config", str(cfg), "--out", str(tmp_path / "o"))
    assert res.exit_code == 2 and "functions: must be a non-empty list" in res.output


def test_list_prints_every_alarm():
    res = _run("list", "--config", str(DEMO))
    assert res.exit_code == 0, res.output
    assert "shop-orders-consumer-PoisonRate" in res.output
    assert "74 alarms, 11 composite alarms, 12 Contributor Insights rules" in res.output
    assert "shop-PayloadConflict-TopKeys\n  Contributor Insights rule | payload_conflict records by idempotency_key" \
        in res.output
    assert "100 * FILL(poison, 0) / received > 1 Percent for 2 of 3 x 300s" in res.output


def test_backtest_json_lists_alarm_intervals(tmp_path):
    op = ("shop", "ProcessOrders", "sqs")
    rows = [(minute(i), *op, "received", 10) for i in range(10)] + [(minute(4), *op, "ambiguous_commit", 1)]
    write_tables(tmp_path, {"outcomes": rows})
    res = _run("backtest", "--config", str(DEMO), "--data", str(tmp_path), "--json",
               "--alarm", "shop-orders-consumer-AmbiguousCommit", "--alarm", "shop-orders-dlq-MessagesVisible")
    assert res.exit_code == 0, res.output
    amb, dlq = json.loads(res.output)
    # 1 of 1 x 60 s, evaluation range 3: ALARM while minute 4 is among the last 3 periods (minutes 4, 5, 6)
    assert amb["alarm_intervals"] == [[minute(4).isoformat(), minute(7).isoformat()]]
    assert amb["states"] == {"OK": 7, "ALARM": 3, "INSUFFICIENT_DATA": 0}
    assert dlq["backtest"] == "no_data"
    table = CliRunner().invoke(main, ["alarms", "backtest", "--config", str(DEMO), "--data", str(tmp_path),
                                      "--alarm", "shop-orders-consumer-AmbiguousCommit"], env={"COLUMNS": "250"})
    assert "01-05 10:04-10:07" in table.output
    assert "1 would have fired" in table.output
    res = _run("backtest", "--config", str(DEMO), "--data", str(tmp_path), "--alarm", "nope")
    assert res.exit_code == 2 and "not in the catalogue: nope" in res.output
    res = _run("backtest", "--config", str(DEMO), "--data", str(tmp_path / "missing"))
    assert res.exit_code == 1 and "does not exist" in res.output
