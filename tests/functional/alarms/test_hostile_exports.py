"""[trust-surfaces] A stack config whose names hold every interpolation a template language knows exports files that
``terraform validate`` (flat file and module), cfn-lint and our own validator accept, with the names intact.

Terraform and its aws provider are not Python packages: the test runs them where they are installed (``terraform``
on PATH, the provider in ``$IDEMWATCH_TF_PLUGIN_DIR`` or /opt/tf-plugins, used offline with ``-plugin-dir``) and
is skipped elsewhere, saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from alarms.validate import load_requests

pytestmark = pytest.mark.slow

HOSTILE = {
    "service": "shop", "region": "eu-west-1", "account_id": "123456789012",
    "idempotency_table": 'idem-${file("/etc/hostname")}',
    "tags": {"team": "%{ if true }x%{ endif }", "k${x}": "v"},
    "functions": [{"name": 'fn-${file("/etc/hostname")}', "operation": "%{ if true }op%{ endif }",
                   "event_source": "sqs", "queue": "q-${AWS::Region}", "dlq": "dlq-$${x}"}],
    "custom_alarms": [{"name": "c-${!Literal}", "description": '${upper("x")} %{ for a in b }', "period": 60,
                       "evaluation_periods": 1, "threshold": 1,
                       "metric": {"name": "Duration${x}", "namespace": "AWS/Lambda", "statistic": "p99",
                                  "dimensions": {"FunctionName": 'fn-${file("/etc/hostname")}'}}}],
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from alarms.commands import alarms

    root = tmp_path_factory.mktemp("hostile")
    cfg = root / "stack.yaml"
    cfg.write_text(yaml.safe_dump(HOSTILE), encoding="utf-8")
    r = CliRunner().invoke(alarms, ["export", "--config", str(cfg), "--out", str(root / "out"), "--format", "all",
                                    "--dashboard"])
    assert r.exit_code == 0, (r.output, r.exception)
    return root / "out", cfg


def _plugin_dir() -> Path | None:
    for d in (os.environ.get("IDEMWATCH_TF_PLUGIN_DIR"), "/opt/tf-plugins"):
        if d and any(Path(d).glob("registry.terraform.io/hashicorp/aws/*/*/terraform-provider-aws*")):
            return Path(d)
    return None


@pytest.mark.parametrize("folder", ["terraform", "terraform-module"])
def test_terraform_validate_accepts_the_exports(exported, folder, tmp_path):
    terraform, plugins = shutil.which("terraform"), _plugin_dir()
    if terraform is None or plugins is None:
        pytest.skip("terraform or its aws provider is not installed here (no PyPI/Debian/npm package ships them)")
    work = tmp_path / folder
    shutil.copytree(exported[0] / folder, work)
    env = {**os.environ, "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
    init = subprocess.run([terraform, "init", "-input=false", "-no-color", f"-plugin-dir={plugins}"], cwd=work,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert init.returncode == 0, init.stdout + init.stderr
    check = subprocess.run([terraform, "validate", "-json", "-no-color"], cwd=work, env=env, capture_output=True,
                           text=True, timeout=300, check=False)
    result = json.loads(check.stdout)
    assert result["valid"] and result["error_count"] == 0, result["diagnostics"]


def test_cfn_lint_finds_no_error(exported):
    exe = Path(sys.executable).parent / "cfn-lint"
    template = exported[0] / "cloudformation" / "shop-alarms.json"
    r = subprocess.run([str(exe), "--format", "json", "--", str(template)], capture_output=True, text=True,
                       timeout=300, check=False)
    problems = json.loads(r.stdout or "[]")
    errors = [p for p in problems if p["Level"] == "Error"]
    assert errors == []
    # the only remarks are W1020 ("Fn::Sub isn't needed"): a Sub that holds only ${!...} literals, which is how a
    # name with ${...} escapes E1029 ("variable outside Fn::Sub")
    assert {p["Rule"]["Id"] for p in problems} <= {"W1020"}


@pytest.mark.parametrize("folder", ["cli", "cloudformation", "terraform", "terraform-module"])
def test_our_validator_accepts_them_and_reads_the_names_back(exported, folder):
    from alarms.commands import alarms

    out, cfg = exported
    r = CliRunner().invoke(alarms, ["validate", str(out / folder), "--config", str(cfg), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["ok"] is True
    names = {x["AlarmName"] for x in load_requests(out / folder)}
    assert 'shop-fn-${file("/etc/hostname")}-PayloadConflict' in names
    assert "shop-q-${AWS::Region}-AgeOfOldestMessage" in names and "shop-c-${!Literal}" in names
    assert "shop-dlq-$${x}-MessagesVisible" in names
