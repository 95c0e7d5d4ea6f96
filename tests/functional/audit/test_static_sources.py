"""The rule-pair stack as CloudFormation YAML (stack.yaml) and as Terraform JSON (stack.tf.json, written
independently): both give exactly the hand-written findings. The project's own exported alarms
(alarms/exported/) satisfy the alarm rules for the demo template, in both export formats."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from alarms.audit.rules import evaluate
from alarms.audit.sources import audit_paths, options_from_config, with_config_tables
from alarms.config import load_config

ROOT = Path(__file__).resolve().parents[3]
EXPORTED = ROOT / "alarms" / "exported"
DEMO = ROOT / "alarms" / "demo-template.yaml"
CONFIG = ROOT / "alarms" / "demo-stack.yaml"

DEMO_FAILURES = [
    ("IW005", "ledger-stream -> ledger-stream", "fail",
     "BisectBatchOnFunctionError is false: a poison record fails its whole batch until it expires"),
    ("IW007", "ledger-stream -> ledger-stream", "fail",
     ("MaximumRetryAttempts and MaximumRecordAgeInSeconds are both -1 (infinite): a failing batch blocks its shard "
     "until the records expire")),
]


def test_cloudformation_findings(pairs):
    assert pairs.rows(evaluate(audit_paths([pairs.stack]), pairs.options)) == pairs.expected


def test_terraform_json_findings(pairs):
    tf = pairs.stack.with_name("stack.tf.json")
    assert pairs.rows(evaluate(audit_paths([tf]), pairs.options)) == pairs.expected


def _demo(alarm_file: Path):
    cfg = load_config(CONFIG)
    inv = with_config_tables(audit_paths([DEMO, alarm_file]), [cfg.idempotency_table])
    return evaluate(inv, options_from_config(cfg))


def test_demo_template_with_exported_alarms_cloudformation_and_terraform_agree():
    cfn = _demo(EXPORTED / "cloudformation" / "shop-alarms.json")
    tf = _demo(EXPORTED / "terraform" / "shop-alarms.tf.json")
    rows = sorted((f.rule, f.resource, f.status.value, f.message) for f in cfn)
    assert rows == sorted((f.rule, f.resource, f.status.value, f.message) for f in tf)
    assert [r for r in rows if r[2] != "pass"] == DEMO_FAILURES
    cat = {r[1]: r[3] for r in rows if r[0] == "IW015"}
    # catalogue sizes from alarms/exported/cli (one file per alarm): per function, its own, queue and DLQ alarms
    # an extra tier is "<base name>-Critical" / "-Warning" / "-Info" (alarms.catalogue): it belongs to the same target
    files = [re.sub(r"-(Critical|Warning|Info)$", "", p.stem) for p in (EXPORTED / "cli").glob("*.json")]
    for fn, extra in (("orders-consumer", ("orders-queue", "orders-dlq")), ("ledger-stream", ("ledger-stream-failures",)),
                      ("create-case-api", ()), ("payment-capture", ("payment-capture-dlq",))):
        n = sum(1 for s in files if s.rsplit("-", 1)[0] in {f"shop-{fn}", *(f"shop-{x}" for x in extra)})
        assert cat[fn] == f"all {n} catalogue alarms present"


def test_a_missing_exported_alarm_is_named(tmp_path):
    doc = json.loads((EXPORTED / "cloudformation" / "shop-alarms.json").read_text())
    # the exported template names alarms through its NamePrefix parameter (default "shop-")
    name = {"Fn::Sub": "${NamePrefix}ledger-stream-IteratorAge"}
    gone = [k for k, v in doc["Resources"].items() if v["Properties"].get("AlarmName") == name]
    assert len(gone) == 1
    del doc["Resources"][gone[0]]
    p = tmp_path / "alarms.json"
    p.write_text(json.dumps(doc))
    bad = {(f.rule, f.resource): (f.status.value, f.message) for f in _demo(p) if f.status.value != "pass"}
    assert bad[("IW013", "ledger-stream -> ledger-stream")] == (
        "fail", "no alarm on AWS/Lambda IteratorAge for FunctionName=ledger-stream")
    assert bad[("IW015", "ledger-stream")] == ("fail", "1 of 19 catalogue alarms missing: shop-ledger-stream-IteratorAge")


def test_demo_writes_audit_json(tmp_path):
    from alarms.audit.demo import run_demo_audit

    doc = run_demo_audit(tmp_path)
    assert json.loads((tmp_path / "audit.json").read_text()) == doc
    assert [(f["rule"], f["resource"], f["status"], f["message"]) for f in doc["findings"]
            if f["status"] != "pass"] == DEMO_FAILURES
    assert doc["rules"]["IW007"]["signals"] == ["iterator_age", "retries"]


def test_cli_static_exit_codes_and_table(pairs):
    from idemwatch.cli import main

    run = CliRunner().invoke
    r = run(main, ["audit", "static", str(pairs.stack)])
    assert r.exit_code == 1
    high_fails = sum(1 for rule, _, s, _ in pairs.expected if s == "fail" and rule not in
                     {"IW005", "IW010", "IW013", "IW014", "IW015"})  # IW015 needs a config: not run here
    assert f"{high_fails} failed check(s) at or above high" in r.stderr
    assert "queue bad-q" in r.stdout and "IW004 sqs-redrive-policy" in r.stdout and "PASS" not in r.stdout
    assert run(main, ["audit", "static", str(pairs.stack), "--fail-on", "none"]).exit_code == 0
    r = run(main, ["audit", "static", str(pairs.stack), "--fail-on", "low"])
    assert f"{high_fails + 4} failed check(s) at or above low" in r.stderr  # + IW005, IW010, IW013, IW014
    r = run(main, ["audit", "static", str(pairs.stack), "--show-passed", "--fail-on", "none"])
    assert "PASS" in r.stdout and "14 fail, 14 pass, 0 unknown, 0 suppressed" in r.stdout
