"""The dashboard's Configuration page (Streamlit AppTest): the last audit beside the signals it explains.

The data directory is hand-made (tests/unit/dashboard/sample_tables.py schemas): ProcessOrders (orders-consumer in
alarms/demo-stack.yaml) has 3 + 3 in-progress collisions and 4 completed duplicates; audit.json is the real
audit of a template whose orders-queue visibility timeout (30 s) is below 6 x orders-consumer's timeout (30 s).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from alarms.audit.report import to_json
from alarms.audit.rules import evaluate
from alarms.audit.sources import audit_paths
from emitter.contract import EventSource, Outcome

ROOT = Path(__file__).resolve().parents[3]
APP = ROOT / "dashboard" / "app.py"
TEMPLATE = """\
AWSTemplateFormatVersion: 2010-09-09
Transform: AWS::Serverless-2016-10-31
Resources:
  OrdersConsumer:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: orders-consumer
      Timeout: 30
      Events:
        Orders:
          Type: SQS
          Properties: {Queue: !GetAtt OrdersQueue.Arn, FunctionResponseTypes: [ReportBatchItemFailures]}
  OrdersQueue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: orders-queue
      RedrivePolicy: {deadLetterTargetArn: !GetAtt OrdersDlq.Arn, maxReceiveCount: 3}
  OrdersDlq:
    Type: AWS::SQS::Queue
    Properties: {QueueName: orders-dlq}
"""


def _sample():
    spec = importlib.util.spec_from_file_location("audit_sample_tables",
                                                  ROOT / "tests" / "unit" / "dashboard" / "sample_tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


@pytest.fixture()
def data_dir(tmp_path: Path) -> Path:
    s = _sample()
    rows: dict[str, list] = {name: [] for name in s.TABLE_ROWS}
    sqs = EventSource.SQS.value
    rows["outcomes"] = [(s.t(m), "shop", "ProcessOrders", sqs, Outcome.RECEIVED.value, 10) for m in range(16)]
    rows["outcomes"] += [(s.t(m), "shop", "ProcessOrders", sqs, Outcome.DUPLICATE_IN_PROGRESS.value, 3)
                         for m in (2, 5)]
    rows["outcomes"] += [(s.t(7), "shop", "ProcessOrders", sqs, Outcome.DUPLICATE_COMPLETED.value, 4)]
    s.write_data_dir(tmp_path, rows)
    (tmp_path / "t.yaml").write_text(TEMPLATE, encoding="utf-8")
    doc = to_json(evaluate(audit_paths([tmp_path / "t.yaml"])), "t.yaml")
    (tmp_path / "audit.json").write_text(json.dumps(doc), encoding="utf-8")
    return tmp_path


def _run(monkeypatch, path: Path):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("IDEMWATCH_DATA", str(path))
    monkeypatch.delenv("IDEMWATCH_ALARMS_CONFIG", raising=False)  # the demo stack config: orders-consumer
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    return at.switch_page("app_pages/configuration.py").run()


def test_finding_beside_the_signals_it_explains(monkeypatch, data_dir):
    at = _run(monkeypatch, data_dir)
    at.selectbox(key="f_range").set_value("Last 15 minutes").run()  # 10:01-10:16: minutes 2, 5 and 7
    assert not at.exception
    m = {x.label: x.value for x in at.main.metric}
    # IW001 fails; IW002 and IW004 pass; IW014: orders-dlq has no alarm and alarms are unknown here -> unknown
    assert m == {"Failed": "1", "Unknown": "1", "Suppressed": "0", "Passed": "2"}
    df = at.get_by_key("table-audit").dataframe[0].value
    assert list(df["rule"]) == ["IW001", "IW014"]
    first = df.iloc[0]
    assert first["status"] == "fail" and first["resource"] == "event-source-mapping orders-queue -> orders-consumer"
    assert first["message"] == ("queue orders-queue VisibilityTimeout 30 s < 6 x function orders-consumer Timeout "
                                "30 s = 180 s")
    assert first["explains"] == "In-progress collisions: 6 · Duplicates: 4"
    assert first["doc"] == "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html"
    assert df.iloc[1]["status"] == "unknown" and df.iloc[1]["explains"] == ""
    at.selectbox(key="f_range").set_value("Last 5 minutes").run()  # 10:11-10:16: none of them
    df = at.get_by_key("table-audit").dataframe[0].value
    assert df.iloc[0]["explains"] == "In-progress collisions: 0 · Duplicates: 0"


def test_no_audit_file_says_how_to_write_one(monkeypatch, data_dir):
    (data_dir / "audit.json").unlink()
    at = _run(monkeypatch, data_dir)
    assert not at.exception
    assert "No audit" in at.info[0].value
    assert f"--out {data_dir / 'audit.json'}" in at.code[0].value


def test_malformed_audit_file_is_an_error_not_a_traceback(monkeypatch, data_dir):
    (data_dir / "audit.json").write_text('{"findings": 3}', encoding="utf-8")
    at = _run(monkeypatch, data_dir)
    assert not at.exception
    assert "not an idemwatch audit JSON" in at.error[0].value
