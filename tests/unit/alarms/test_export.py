"""Export: the committed exports of the demo stack are current, valid, cfn-lint clean, and the three
formats describe the same alarms (round trip back to PutMetricAlarm requests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from alarms.catalogue import build_catalogue
from alarms.cfn_template import requests_from_cloudformation, to_cloudformation
from alarms.composite import build_composites
from alarms.config import load_config
from alarms.exceptions import ValidationFailed
from alarms.export import export, render
from alarms.insight_rules import build_insight_rules
from alarms.terraform import evaluate, requests_from_terraform, to_terraform
from alarms.validate import load_requests, validate_requests

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"
EXPORTED = ROOT / "alarms" / "exported"
REGENERATE = "idemwatch alarms export --config alarms/demo-stack.yaml --out alarms/exported --format all --dashboard"


def _demo():
    cfg = load_config(DEMO)
    return cfg, build_catalogue(cfg)


def _without_empty_lists(r: dict) -> dict:
    return {k: v for k, v in r.items() if not (isinstance(v, list) and not v)}


@pytest.mark.parametrize("fmt", ["cli", "cloudformation", "terraform", "dashboard"])
def test_committed_exports_are_not_stale(fmt):
    cfg, defs = _demo()
    expected = render(defs, fmt, cfg.stack, cfg, dashboard=True)
    folders = sorted({rel.split("/")[0] for rel in expected})  # terraform: the flat file and the module
    on_disk = {str(p.relative_to(EXPORTED)): p.read_text(encoding="utf-8")
               for folder in folders for p in sorted((EXPORTED / folder).rglob("*.json"))}
    assert sorted(on_disk) == sorted(expected), f"files differ; regenerate with: {REGENERATE}"
    stale = [name for name, text in expected.items() if on_disk[name] != text]
    assert not stale, f"stale exports {stale[:3]}...; regenerate with: {REGENERATE}"


def test_cli_files_are_exactly_the_api_requests():
    cfg, defs = _demo()
    for d in defs:
        doc = json.loads((EXPORTED / "cli" / f"{d.name}.json").read_text())
        assert doc == json.loads(json.dumps(d.to_request()))
    for i, c in enumerate(build_composites(cfg, defs)):
        doc = json.loads((EXPORTED / "cli" / "composite-alarms" / f"{i + 1:03d}-{c.name}.json").read_text())
        assert doc == json.loads(json.dumps(c.to_request()))
    for r in build_insight_rules(cfg):
        doc = json.loads((EXPORTED / "cli" / "insight-rules" / f"{r.name}.json").read_text())
        assert doc == json.loads(json.dumps(r.to_request()))


def test_the_three_formats_round_trip_to_the_same_requests():
    _, defs = _demo()
    requests = [json.loads(json.dumps(d.to_request())) for d in defs]
    want = sorted((_without_empty_lists(r) for r in requests), key=lambda r: r["AlarmName"])
    cfn = requests_from_cloudformation(json.loads(json.dumps(to_cloudformation(requests, "shop"))))
    tf = requests_from_terraform(evaluate(json.loads(json.dumps(to_terraform(requests)))))
    for got in (cfn, tf):
        got = sorted(got, key=lambda r: r["AlarmName"])
        assert len(got) == len(want) == 74
        for g, w in zip(got, want):
            # Terraform maps have no order: compare dimension/tag lists as sets
            for key in ("Dimensions", "Tags"):
                if key in w:
                    assert sorted(map(json.dumps, g.pop(key))) == sorted(map(json.dumps, w[key]))
            w2 = {k: v for k, v in w.items() if k not in ("Dimensions", "Tags")}
            if "Metrics" in w2:
                for gq, wq in zip(g["Metrics"], w2["Metrics"]):
                    if "MetricStat" in wq:
                        assert sorted(map(json.dumps, gq["MetricStat"]["Metric"].pop("Dimensions"))) == \
                            sorted(map(json.dumps, wq["MetricStat"]["Metric"]["Dimensions"]))
                w2 = json.loads(json.dumps(w2))
                for wq in w2["Metrics"]:
                    if "MetricStat" in wq:
                        wq["MetricStat"]["Metric"].pop("Dimensions")
            assert g == w2


def test_every_exported_file_validates():
    # 74 metric alarms, 11 composite alarms, 12 Contributor Insights rules (counted in test_kinds)
    for fmt in ("cli", "cloudformation", "terraform"):
        requests = load_requests(EXPORTED / fmt)
        assert len(requests) == 74 + 11 + 12
        assert validate_requests(requests) == []
    for region in ("us-east-1", "us-isof-south-1"):  # the module and the template follow the deployment's Region
        for folder in ("cloudformation", "terraform-module"):
            assert validate_requests(load_requests(EXPORTED / folder, region)) == []


def test_terraform_shape():
    doc = json.loads((EXPORTED / "terraform" / "shop-alarms.tf.json").read_text())
    alarms = doc["resource"]["aws_cloudwatch_metric_alarm"]
    rate = alarms["shop_orders_consumer_poison_rate"]
    assert [q["id"] for q in rate["metric_query"]] == ["poison", "received", "poison_rate"]
    assert rate["metric_query"][0]["metric"] == {
        "metric_name": "PoisonMessage", "namespace": "Idempotency", "period": 300, "stat": "Sum",
        "dimensions": {"Service": "shop", "Operation": "ProcessOrders"}}
    dlq = alarms["shop_orders_dlq_messages_visible"]
    assert dlq["statistic"] == "Maximum" and dlq["dimensions"] == {"QueueName": "orders-dlq"}
    assert dlq["tags"]["idemwatch:managed-by"] == "idemwatch"


def _cfn_lint(path: Path) -> subprocess.CompletedProcess:
    """cfn-lint's own command line from the venv (the console script beside this interpreter)."""
    exe = Path(sys.executable).parent / "cfn-lint"
    return subprocess.run([str(exe), "--", str(path)], check=False, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # cfn-lint loads its whole resource specification first
def test_cloudformation_template_passes_cfn_lint(tmp_path):
    template = EXPORTED / "cloudformation" / "shop-alarms.json"
    res = _cfn_lint(template)
    assert res.returncode == 0, res.stdout + res.stderr
    # and cfn-lint does look at our properties: a broken copy fails
    doc = json.loads(template.read_text())
    first = next(iter(doc["Resources"].values()))
    first["Properties"]["Statistic"] = "Avg"
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(doc))
    res = _cfn_lint(broken)
    assert res.returncode != 0 and "'Avg' is not one of" in res.stdout, res.stdout


def test_export_refuses_invalid_definitions_and_writes_nothing(tmp_path):
    import dataclasses

    cfg, defs = _demo()
    bad = [dataclasses.replace(defs[0], datapoints_to_alarm=5)]
    with pytest.raises(ValidationFailed) as err:
        export(bad, tmp_path, "cli", cfg.stack)
    assert "shop-orders-consumer-PayloadConflict: DatapointsToAlarm" in str(err.value)
    assert not any(tmp_path.iterdir())


def test_export_removes_only_its_own_stale_files(tmp_path):
    cfg, defs = _demo()
    export(defs, tmp_path, "cli", cfg.stack)
    mine = tmp_path / "cli" / "shop-old-alarm.json"
    mine.write_text(json.dumps({"AlarmName": "x", "Tags": [{"Key": "idemwatch:managed-by", "Value": "idemwatch"}]}))
    theirs = tmp_path / "cli" / "hand-written.json"
    theirs.write_text(json.dumps({"AlarmName": "y"}))
    written = export(defs[:3], tmp_path, "cli", cfg.stack)
    assert len(written) == 3
    assert not mine.exists() and theirs.exists()
    assert len(list((tmp_path / "cli").glob("*.json"))) == 4


def test_platform_docs_runbook_is_current_and_has_every_signal():
    from alarms.runbook import render_runbook
    from alarms.signals import SIGNALS

    doc = (ROOT / "docs" / "platform.md").read_text(encoding="utf-8")
    assert render_runbook() in doc, "regenerate with: python -m alarms.runbook"
    for sid in SIGNALS:  # every description's runbook link has its anchor
        assert f'<a id="runbook-{sid.replace("_", "-")}"></a>' in doc
