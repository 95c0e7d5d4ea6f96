"""`idemwatch dashboard --cloudwatch-log-group ...`: collects from CloudWatch before serving; clear one-line errors.

CloudWatch Logs is the FakeLogsInsightsServer on 127.0.0.1 serving the hand-counted log set of
tests/unit/dashboard/cw_logset.py; fake credentials only (fixture ``fake_aws_env``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from dashboard.cloudwatch_source import ENV_CLOUDWATCH_SOURCE, CloudWatchSource
from dashboard.serve import free_port
from tests.support.fake_logs_insights import FakeLogsInsightsServer

pytestmark = pytest.mark.timeout(240)
ROOT = Path(__file__).resolve().parents[3]
IDEMWATCH = Path(sys.executable).parent / "idemwatch"

_spec = importlib.util.spec_from_file_location("dashboard_cw_logset_f", ROOT / "tests/unit/dashboard/cw_logset.py")
logset = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(logset)  # type: ignore[union-attr]


@pytest.fixture(autouse=True)
def _aws(fake_aws_env: None) -> None:
    """Fake credentials, no profile files: nothing but 127.0.0.1 is reachable."""


@pytest.fixture()
def server():
    with FakeLogsInsightsServer() as srv:
        srv.put_events(logset.GROUP, logset.batch(0, logset.base_ms()))
        yield srv


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cli_collects_before_serving(server, tmp_path):
    """A real `idemwatch dashboard` process: the tables exist (hand counts) before the URL is printed."""
    assert IDEMWATCH.exists(), "idemwatch console script not installed in this venv"
    data = tmp_path / "data"
    port = free_port()
    proc = subprocess.Popen([str(IDEMWATCH), "dashboard", "--data", str(data), "--port", str(port),
                             "--cloudwatch-log-group", logset.GROUP, "--since", "1h", "--region", "us-east-1",
                             "--endpoint-url", server.url],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ))
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 120
        url = None
        while time.monotonic() < deadline and url is None:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line and proc.poll() is not None:
                break
            lines.append(line)
            m = re.search(r"idemwatch dashboard: (http://127\.0\.0\.1:\d+)", line)
            url = m.group(1) if m else None
        assert url == f"http://127.0.0.1:{port}", "".join(lines)
        queries_before_url = server.count("StartQuery")
        assert queries_before_url > 0
        # the collection summary came before the URL, and the tables hold the hand counts
        assert any(ln.startswith("collected 1 log group(s): ") for ln in lines[:-1]), lines
        outcomes = pd.read_parquet(data / "tables" / "outcomes.parquet").groupby("outcome")["events"].sum()
        assert outcomes.to_dict() == {"claimed": 2, "duplicate_completed": 2, "duplicate_in_progress": 3,
                                      "payload_conflict": 1, "poison_message": 1, "received": 10,
                                      "retryable_failure": 2, "succeeded": 1, "timeout_budget_abort": 1}
        assert len(pd.read_parquet(data / "tables" / "trail.parquet")) == logset.RECORDS_BATCH_0
        m = json.loads((data / "manifest.json").read_text())
        assert m["source"] == "cloudwatch" and m["log_groups"] == [logset.GROUP]
        with urllib.request.urlopen(url + "/_stcore/health", timeout=10) as r:
            assert r.status == 200
        assert server.count("StartQuery") == queries_before_url  # serving alone queries nothing
    finally:
        proc.send_signal(signal.SIGINT)  # DashboardServer.wait stops the streamlit child on Ctrl-C
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_cli_passes_the_source_to_the_app_without_credentials(server, tmp_path, monkeypatch):
    from dashboard.commands import dashboard

    seen: dict = {}

    def fake_serve(data_dir, port=None, headless=True, env=None, **kw):
        seen.update(env=env, tables=sorted(p.name for p in (Path(data_dir) / "tables").glob("*.parquet")))
        return 0

    monkeypatch.setattr("dashboard.serve.serve", fake_serve)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "manifest.json").write_text('{"collector": "local"}')  # an earlier `collect local` run
    res = CliRunner().invoke(dashboard, ["--data", str(tmp_path / "d"), "--cloudwatch-log-group-prefix",
                                   "/aws/lambda/ord", "--since", "1h", "--endpoint-url", server.url,
                                   "--refresh-every", "5m"])
    assert res.exit_code == 0, res.output
    assert "holds tables collected by `local`; the CloudWatch collection replaces them" in res.output
    assert "outcomes.parquet" in seen["tables"] and "trail.parquet" in seen["tables"]  # collected before serve
    src = CloudWatchSource.from_json(seen["env"][ENV_CLOUDWATCH_SOURCE])
    assert src == CloudWatchSource(log_group_prefixes=("/aws/lambda/ord",), since="1h", endpoint_url=server.url,
                                   refresh_every_s=300)
    assert "testing" not in seen["env"][ENV_CLOUDWATCH_SOURCE]  # the fake credentials never travel in the config


def test_cli_without_cloudwatch_options_turns_the_source_off(tmp_path, monkeypatch):
    from dashboard.commands import dashboard

    seen: dict = {}
    monkeypatch.setenv(ENV_CLOUDWATCH_SOURCE, '{"log_groups": ["/inherited"]}')
    monkeypatch.setattr("dashboard.serve.serve", lambda data_dir, **kw: seen.update(kw) or 0)
    res = CliRunner().invoke(dashboard, ["--data", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert seen["env"] == {ENV_CLOUDWATCH_SOURCE: ""}


def test_cli_unreachable_endpoint_is_one_line_error(tmp_path, monkeypatch):
    from dashboard.commands import dashboard

    monkeypatch.setattr("dashboard.serve.serve", lambda *a, **kw: pytest.fail("served after a failed collection"))
    url = f"http://127.0.0.1:{_closed_port()}"
    res = CliRunner().invoke(dashboard, ["--data", str(tmp_path / "d"), "--cloudwatch-log-group",
                                   logset.GROUP, "--endpoint-url", url, "--region", "us-east-1"])
    assert res.exit_code == 1
    errors = [ln for ln in res.output.splitlines() if ln.startswith("Error:")]
    expected = ("Error: cannot reach the AWS endpoint for logs:DescribeLogGroups: "
                f'Could not connect to the endpoint URL: "{url}/"')
    assert errors == [expected], res.output
    assert "Traceback" not in res.output and not (tmp_path / "d" / "tables").exists()


def test_cli_unknown_log_group_and_usage_errors(server, tmp_path, monkeypatch):
    from dashboard.commands import dashboard

    monkeypatch.setattr("dashboard.serve.serve", lambda *a, **kw: pytest.fail("must not serve"))
    res = CliRunner().invoke(dashboard, ["--data", str(tmp_path), "--cloudwatch-log-group", "/aws/lambda/nope",
                                   "--endpoint-url", server.url])
    assert res.exit_code == 1 and "Error: log group not found: /aws/lambda/nope" in res.output
    res = CliRunner().invoke(dashboard, ["--data", str(tmp_path), "--region", "us-east-1"])
    assert res.exit_code == 2
    assert "--region only apply with --cloudwatch-log-group or --cloudwatch-log-group-prefix" in res.output
    res = CliRunner().invoke(dashboard, ["--data", str(tmp_path), "--cloudwatch-log-group", "g",
                                   "--since", "yesterday"])
    assert res.exit_code == 2 and "'yesterday': expected epoch seconds, ISO-8601 or a duration like 24h" in res.output


def test_cli_access_denied_and_missing_credentials_are_one_line_errors(tmp_path, monkeypatch):
    from dashboard.commands import dashboard
    from tests.support.fake_logs_insights import Faults

    monkeypatch.setattr("dashboard.serve.serve", lambda *a, **kw: pytest.fail("must not serve"))
    with FakeLogsInsightsServer(faults=Faults(deny_operations={"DescribeLogGroups"})) as srv:
        res = CliRunner().invoke(dashboard, ["--data", str(tmp_path), "--cloudwatch-log-group", logset.GROUP,
                                             "--endpoint-url", srv.url])
        assert res.exit_code == 1 and "Traceback" not in res.output
        expected = (f"Error: access denied: logs:DescribeLogGroups on {logset.GROUP} (AccessDeniedException); "
                    "the IAM policy needs logs:DescribeLogGroups")
        assert [ln for ln in res.output.splitlines() if ln.startswith("Error:")] == [expected]
        for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
            monkeypatch.delenv(k)
        res = CliRunner().invoke(dashboard, ["--data", str(tmp_path), "--cloudwatch-log-group", logset.GROUP,
                                             "--endpoint-url", srv.url])
        assert res.exit_code == 1 and "Traceback" not in res.output
        assert "Error: no AWS credentials found: set AWS_PROFILE / --profile" in res.output
        assert srv.count("StartQuery") == 0
