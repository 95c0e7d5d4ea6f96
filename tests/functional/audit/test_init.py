"""``idemwatch init``: the demo template (SAM YAML) and its Terraform JSON equivalent give the demo stack config's
functions; with the team's settings (the rest of alarms/demo-stack.yaml) edited in and init re-run, the exported
alarms are byte for byte those of alarms/demo-stack.yaml. Unresolvable values are TODO comments, exit 0."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from ruamel.yaml import YAML

from alarms.catalogue import build_catalogue
from alarms.config import load_config
from alarms.export import render
from idemwatch.cli import main

ROOT = Path(__file__).resolve().parents[3]
DEMO_TEMPLATE = ROOT / "alarms" / "demo-template.yaml"
DEMO_TF = Path(__file__).with_name("demo-template.tf.json")
DEMO_STACK = ROOT / "alarms" / "demo-stack.yaml"
_DERIVED = {"service", "namespace", "idempotency_table", "functions"}
"""Top-level keys init writes; the demo stack config's others are the team's settings."""


def _init(*args: str):
    result = CliRunner().invoke(main, ["init", *args])
    return result


def _exports(config_path: Path) -> dict[str, str]:
    cfg = load_config(config_path)
    defs = build_catalogue(cfg)
    out: dict[str, str] = {}
    for fmt in ("cli", "cloudformation", "terraform"):
        out.update(render(defs, fmt, cfg.stack, cfg, dashboard=True))
    out.update(render(defs, "dashboard", cfg.stack, cfg, dashboard=True))
    return out


def _team_edits(path: Path) -> None:
    """What the team adds by hand, the way a person would: every setting of the demo stack config that init does
    not derive, the function-level overrides, and a comment of theirs."""
    rt = YAML()
    rt.indent(mapping=2, sequence=4, offset=2)
    doc = rt.load(path.read_text(encoding="utf-8"))
    demo = rt.load(DEMO_STACK.read_text(encoding="utf-8"))
    for key, value in demo.items():
        if key not in _DERIVED:
            doc[key] = value
    mine = {f["name"]: f for f in doc["functions"]}
    for f in demo["functions"]:
        for key in set(f) - {"name", "operation", "event_source", "queue", "dlq", "stream"}:
            mine[f["name"]][key] = f[key]
    doc.yaml_set_comment_before_after_key("overrides", before="ours: the ledger replays old entries on purpose")
    buf = io.StringIO()
    rt.dump(doc, buf)
    path.write_text(buf.getvalue(), encoding="utf-8")


@pytest.mark.parametrize("template", [DEMO_TEMPLATE, DEMO_TF], ids=["sam-yaml", "terraform-json"])
def test_init_then_team_edits_export_the_demo_stacks_alarms(tmp_path, template):
    out = tmp_path / "stack.yaml"
    first = _init("--from", str(template), "--out", str(out))
    assert first.exit_code == 0, first.output
    assert first.stderr.count("\n") == 1 and "wrote" in first.stderr and "TODO" not in first.stderr
    written = yaml.safe_load(out.read_text(encoding="utf-8"))
    demo = yaml.safe_load(DEMO_STACK.read_text(encoding="utf-8"))
    assert written["functions"] == [{k: v for k, v in f.items() if k != "overrides"} for f in demo["functions"]]
    assert (written["service"], written["idempotency_table"]) == ("shop", "idempotency")

    _team_edits(out)
    edited = out.read_text(encoding="utf-8")
    again = _init("--from", str(template), "--out", str(out))
    assert again.exit_code == 0, again.output
    assert "merged into" in again.stderr and "differ" not in again.stderr and "does not load" not in again.stderr
    text = out.read_text(encoding="utf-8")
    assert text == edited  # nothing new in the template: the re-run changes nothing, comments included
    assert "# ours: the ledger replays old entries on purpose" in text
    assert _exports(out) == _exports(DEMO_STACK)


def test_rerun_keeps_thresholds_suppressions_comments_and_reports_differences(tmp_path):
    out = tmp_path / "stack.yaml"
    assert _init("--from", str(DEMO_TEMPLATE), "--out", str(out)).exit_code == 0
    text = out.read_text(encoding="utf-8")
    text = text.replace("    queue: orders-queue\n", "    queue: orders-queue-v2  # moved in March\n")
    text = text.replace("functions:\n", "overrides:\n  retry_rate: {threshold: 7}  # tuned\nsuppressions:\n"
                        "  - {rule: IW010, resource: idempotency, reason: rebuilt from the stream}\nfunctions:\n")
    text = text.replace("  - name: create-case-api\n", "  - name: create-case-api  # the public API\n")
    text += "  - name: legacy-fn\n    operation: Legacy\n    event_source: sqs\n"
    out.write_text(text, encoding="utf-8")
    result = _init("--from", str(DEMO_TEMPLATE), "--out", str(out))
    assert result.exit_code == 0
    assert out.read_text(encoding="utf-8") == text
    notice = result.stderr
    assert notice.count("\n") == 1
    assert "orders-consumer.queue (file: orders-queue-v2, template: orders-queue)" in notice
    assert "1 kept that the template lacks (legacy-fn)" in notice


def test_rerun_adds_what_the_template_gained(tmp_path):
    template = tmp_path / "t.yaml"
    base = DEMO_TEMPLATE.read_text(encoding="utf-8")
    template.write_text(base.replace("      DeadLetterQueue:\n        Type: SQS\n"
                                     "        TargetArn: !GetAtt PaymentCaptureDlq.Arn\n", ""), encoding="utf-8")
    out = tmp_path / "stack.yaml"
    assert _init("--from", str(template), "--out", str(out)).exit_code == 0
    assert "payment-capture-dlq" not in out.read_text(encoding="utf-8")
    out.write_text(out.read_text(encoding="utf-8").replace("namespace: Idempotency", "namespace: Shop  # ours"),
                   encoding="utf-8")
    template.write_text(base, encoding="utf-8")
    result = _init("--from", str(template), "--out", str(out))
    assert result.exit_code == 0
    doc = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert doc["functions"][3] == {"name": "payment-capture", "operation": "CapturePayment",
                                   "event_source": "eventbridge", "dlq": "payment-capture-dlq"}
    assert "namespace: Shop  # ours" in out.read_text(encoding="utf-8")
    assert "namespace (file: Shop, template: Idempotency)" in result.stderr


_UNRESOLVED = """\
AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Worker:
    Type: AWS::Lambda::Function
    Properties:
      FunctionName: worker
      Handler: app.handle
      Runtime: python3.12
      Role: arn:aws:iam::123456789012:role/r
      Code: {ZipFile: "x"}
      Environment: {Variables: {POWERTOOLS_SERVICE_NAME: billing}}
  WorkerMapping:
    Type: AWS::Lambda::EventSourceMapping
    Properties:
      FunctionName: !Ref Worker
      EventSourceArn: !ImportValue shared-jobs-queue-arn
  Helper:
    Type: AWS::Lambda::Function
    Properties: {FunctionName: log-retention-helper, Handler: index.handler, Runtime: nodejs20.x,
                 Role: arn:aws:iam::123456789012:role/r, Code: {ZipFile: "x"}}
"""


def test_unresolvable_source_is_a_todo_exit_0_one_line(tmp_path):
    template = tmp_path / "t.yaml"
    template.write_text(_UNRESOLVED, encoding="utf-8")
    out = tmp_path / "stack.yaml"
    result = _init("--from", str(template), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert result.stderr.count("\n") == 1
    assert "TODO(s) to resolve by hand (worker.event_source: the source of mapping WorkerMapping" in result.stderr
    text = out.read_text(encoding="utf-8")
    # the source kind is not known either (an import): no event_source, so the config says what is missing
    assert "# TODO(idemwatch init): event_source: the source of mapping WorkerMapping could not be resolved" in text
    doc = yaml.safe_load(text)
    assert doc["functions"] == [{"name": "worker", "operation": "handle"}]
    assert doc["service"] == "billing"
    assert "log-retention-helper" in text and "log-retention-helper" not in str(doc)  # skipped, said in a comment
    assert "does not load yet" in result.stderr


def test_unresolvable_queue_is_a_todo_exit_0_one_line(tmp_path):
    template = tmp_path / "t.yaml"
    template.write_text(_UNRESOLVED.replace("      EventSourceArn: !ImportValue shared-jobs-queue-arn\n",
                                            "      EventSourceArn: !Sub 'arn:aws:sqs:${AWS::Region}:111122223333:"
                                            "${QueueName}'\nParameters:\n  QueueName: {Type: String}\n"),
                        encoding="utf-8")
    out = tmp_path / "stack.yaml"
    result = _init("--from", str(template), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert result.stderr.count("\n") == 1
    assert "TODO(s) to resolve by hand (worker.queue: the SQS source of mapping WorkerMapping" in result.stderr
    text = out.read_text(encoding="utf-8")
    assert re.search(r"\n    event_source: sqs +# TODO\(idemwatch init\): queue: the SQS source of mapping WorkerMapping", text)
    cfg = load_config(out)  # loads: the queue alarms are missing until the TODO is resolved, nothing is invented
    assert cfg.functions[0].queue is None and cfg.functions[0].event_source.value == "sqs"
    assert "does not load" not in result.stderr


def test_cloud_assembly_needs_a_stack_when_several(tmp_path):
    asm = tmp_path / "cdk.out"
    asm.mkdir()
    (asm / "A.template.json").write_text('{"Resources": {}}', encoding="utf-8")
    (asm / "manifest.json").write_text(
        '{"artifacts": {"A": {"type": "aws:cloudformation:stack", "environment": "aws://123456789012/eu-west-1",'
        ' "properties": {"templateFile": "A.template.json"}},'
        ' "B": {"type": "aws:cloudformation:stack", "environment": "aws://unknown-account/unknown-region",'
        ' "properties": {"templateFile": "A.template.json"}}}}', encoding="utf-8")
    result = _init("--from", str(asm), "--out", str(tmp_path / "s.yaml"))
    assert result.exit_code == 2 and "2 stacks (A, B): pick one with --stack" in result.output
    result = _init("--from", str(asm), "--stack", "A", "--out", str(tmp_path / "s.yaml"))
    assert result.exit_code == 2 and "no function to monitor" in result.output
    assert not (tmp_path / "s.yaml").exists()


def test_broken_existing_config_is_left_alone(tmp_path):
    out = tmp_path / "stack.yaml"
    out.write_text("functions: [\n", encoding="utf-8")
    result = _init("--from", str(DEMO_TEMPLATE), "--out", str(out))
    assert result.exit_code == 2 and "not valid YAML at line 2" in result.output and "left unchanged" in result.output
    assert out.read_text(encoding="utf-8") == "functions: [\n"
