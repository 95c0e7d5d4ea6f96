"""Platform-team CLI behaviour: every tier backtested, an 80-column backtest that never cuts a name, one
``--format table|json`` across list/validate/backtest/deploy --dry-run, region errors and --role-arn."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from idemwatch.cli import main
from tests.support.alarm_tables import minute, write_tables

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
OP = ("shop", "ProcessOrders", "sqs")
A, O = "ALARM", "OK"


def _run(*args, env=None):
    return CliRunner().invoke(main, ["alarms", *args], env=env)


def _retry_history(tmp_path):
    # 6 periods of 300 s, 500 received each; retryable 10, 50, 50, 150, 150, 0 -> 2 %, 10 %, 10 %, 30 %, 30 %, 0 %
    rows = [(minute(i), *OP, "received", 100) for i in range(30)]
    for p, n in enumerate((10, 50, 50, 150, 150, 0)):
        if n:
            rows.append((minute(p * 5), *OP, "retryable_failure", n))
    write_tables(tmp_path, {"outcomes": rows})


def test_backtest_evaluates_each_tier(tmp_path):
    _retry_history(tmp_path)
    res = _run("backtest", "--config", str(DEMO), "--data", str(tmp_path), "--format", "json",
               "--alarm", "shop-orders-consumer-RetryRate", "--alarm", "shop-orders-consumer-RetryRate-Critical")
    assert res.exit_code == 0, res.output
    base, crit = json.loads(res.output)
    # base: > 5 %, 3 of 3 -> breaching 0XXXX0: ALARM after p3 and p4 (XXX), OK after p5 (XX0)
    assert base["tier"] == "base" and base["last_state"] == O
    assert base["alarm_intervals"] == [[minute(15).isoformat(), minute(25).isoformat()]]
    assert [(t["from"], t["to"]) for t in base["transitions"]] == [("INSUFFICIENT_DATA", O), (O, A), (A, O)]
    assert [t["time"] for t in base["transitions"]] == [minute(5).isoformat(), minute(20).isoformat(),
                                                          minute(30).isoformat()]
    assert base["time_in_alarm_s"] == 600
    # critical: > 25 %, 2 of 3 -> breaching 000XX0: ALARM after p4 (0XX) and p5 (XX0), still ALARM at the end
    assert crit["tier"] == "critical" and crit["severity"] == "critical" and crit["last_state"] == A
    assert crit["alarm_intervals"] == [[minute(20).isoformat(), minute(30).isoformat()]]
    assert [(t["from"], t["to"]) for t in crit["transitions"]] == [("INSUFFICIENT_DATA", O), (O, A)]
    assert crit["time_in_alarm_s"] == 600


def test_backtest_table_fits_80_columns_and_never_cuts_a_name(tmp_path):
    _retry_history(tmp_path)
    res = _run("backtest", "--config", str(DEMO), "--data", str(tmp_path), env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    from alarms import build_catalogue, load_config

    names = [d.name for d in build_catalogue(load_config(DEMO))]
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    for name in names:  # each name whole, on its own line, exactly once
        assert lines.count(name) == 1, name
    i = lines.index("shop-orders-consumer-RetryRate-Critical")
    assert lines[i + 2].startswith("  last ALARM | 2 transition(s) | ALARM 10 min")
    summary = " ".join(lines[-4:])
    assert "in ALARM at the end" in summary and "7 anomaly-detection alarm(s) skipped" in summary


def test_format_json_is_the_same_flag_on_list_validate_backtest(tmp_path):
    listed = json.loads(_run("list", "--config", str(DEMO), "--format", "json").output)
    assert [sum(1 for x in listed if x["kind"] == k) for k in ("metric", "composite", "insight_rule")] == [74, 11, 12]
    crit = next(x for x in listed if x["alarm"] == "shop-orders-queue-AgeOfOldestMessage-Critical")
    assert (crit["tier"], crit["severity"], crit["signal"]) == ("critical", "critical", "sqs_age_of_oldest_message")
    assert crit["condition"] == "Maximum(ApproximateAgeOfOldestMessage) > 1800 Seconds for 5 of 5 x 60s"
    exported = ROOT / "alarms" / "exported"
    folders = [str(exported / f) for f in ("cli", "cloudformation", "terraform", "terraform-module", "dashboard")]
    res = _run("validate", *folders, "--config", str(DEMO), "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["ok"] is True and doc["violations"] == []
    sources = {Path(s["source"]).name: s for s in doc["sources"]}
    assert [sources[f]["requests"] for f in ("cli", "cloudformation", "terraform", "terraform-module")] == [97] * 4
    assert sources["shop-dashboard.json"]["dashboard_widgets"] is True and sources["dashboard"]["requests"] == 0
    bad = json.loads((ROOT / "alarms" / "exported" / "cli" / "shop-orders-dlq-MessagesVisible.json").read_text())
    bad["Period"] = 45
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    res = _run("validate", str(tmp_path / "bad.json"), "--format", "json")
    assert res.exit_code == 1
    assert [v["rule"] for v in json.loads(res.output)["violations"]] == ["period.valid_value"]


def test_export_without_region_refuses_the_dashboard(tmp_path):
    import yaml

    data = yaml.safe_load(DEMO.read_text())
    del data["region"]
    cfg = tmp_path / "stack.yaml"
    cfg.write_text(yaml.safe_dump(data))
    res = _run("export", "--config", str(cfg), "--out", str(tmp_path / "o"), "--dashboard")
    assert res.exit_code == 2 and "set region: and account_id:" in res.output


def test_region_error_names_what_works(monkeypatch, tmp_path):
    for v in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    res = _run("deploy", "--config", str(DEMO), "--dry-run", "--endpoint-url", "http://127.0.0.1:9")
    assert res.exit_code == 1
    assert ("no AWS region: pass --region, or set AWS_DEFAULT_REGION (read by botocore) or AWS_REGION (read by "
            "idemwatch; botocore ignores it)") in res.output
    assert "You must specify a region" not in res.output  # not botocore's own text


def test_deploy_dry_run_json_and_role_arn_against_moto(monkeypatch, endpoint):
    import boto3

    url = endpoint
    # a role in another account: moto serves the assumed credentials from that account's backends, so the
    # alarms landing there (and not in the caller's account) proves the CloudWatch calls used the role
    role = "arn:aws:iam::111122223333:role/alarms-deployer"
    # the region comes from AWS_REGION, which botocore alone would ignore
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    res = _run("deploy", "--config", str(DEMO), "--endpoint-url", url, "--role-arn", role, "--dashboard",
               "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["counts"]["create"] == 97 and doc["applied"] == 98  # 74 alarms, 11 composites, 12 rules + dashboard
    mine = boto3.client("cloudwatch", region_name="eu-west-1", endpoint_url=url)
    assert mine.describe_alarms()["MetricAlarms"] == []
    creds = boto3.client("sts", region_name="eu-west-1", endpoint_url=url).assume_role(
        RoleArn=role, RoleSessionName="check")["Credentials"]
    cw = boto3.client("cloudwatch", region_name="eu-west-1", endpoint_url=url,
                      aws_access_key_id=creds["AccessKeyId"], aws_secret_access_key=creds["SecretAccessKey"],
                      aws_session_token=creds["SessionToken"])
    assert len([a for p in cw.get_paginator("describe_alarms").paginate() for a in p["MetricAlarms"]]) == 74
    body = json.loads(cw.get_dashboard(DashboardName="shop-idemwatch")["DashboardBody"])
    assert {w["properties"]["region"] for w in body["widgets"] if w["type"] in ("metric", "log")} == {"eu-west-1"}
    # the alarm ARNs in the dashboard name the role's account (STS GetCallerIdentity), not the config's
    arns = {a for w in body["widgets"] if w["type"] == "alarm" for a in w["properties"]["alarms"]}
    assert {a.split(":")[4] for a in arns} == {"111122223333"} and len(arns) == 74 + 11
    res = _run("deploy", "--config", str(DEMO), "--endpoint-url", url, "--role-arn", role, "--dry-run",
               "--dashboard", "--format", "json")
    items = json.loads(res.output)["items"]
    assert {i["action"] for i in items} == {"unchanged"} and len(items) == 98
    res = _run("deploy", "--config", str(DEMO), "--endpoint-url", "http://127.0.0.1:9", "--role-arn", role,
               "--dry-run", env={"AWS_MAX_ATTEMPTS": "1", "AWS_REGION": "eu-west-1"})
    assert res.exit_code == 1 and "cannot assume arn:aws:iam::111122223333:role/alarms-deployer (--role-arn)" in \
        res.output
