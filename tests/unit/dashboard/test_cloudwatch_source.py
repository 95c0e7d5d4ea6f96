"""The dashboard collecting from CloudWatch: sidebar panel, "Collect now" button, refresh interval (AppTest).

CloudWatch Logs is the FakeLogsInsightsServer on 127.0.0.1 (CloudWatch Logs JSON protocol, answered by the offline
Logs Insights engine) serving the small hand-counted log set of cw_logset.py; fake credentials only.
Expected tile values are the hand counts written in cw_logset.py.
"""

from __future__ import annotations

import importlib.util
import json
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dashboard.cloudwatch_panel import BUTTON_KEY, PANEL_KEY, cost_caption
from dashboard.cloudwatch_source import (
    ENV_CLOUDWATCH_SOURCE,
    CloudWatchSource,
    collect_now,
    configured_source,
    refresh_due,
)
from dashboard.ui import md_escape
from tests.support.fake_logs_insights import FakeLogsInsightsServer

pytestmark = pytest.mark.timeout(300)
HERE = Path(__file__).resolve().parent
APP = HERE.parents[2] / "dashboard" / "app.py"

_spec = importlib.util.spec_from_file_location("dashboard_cw_logset", HERE / "cw_logset.py")
logset = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(logset)  # type: ignore[union-attr]


@pytest.fixture(autouse=True)
def _aws(fake_aws_env: None) -> None:
    """Fake credentials, no profile files: nothing but 127.0.0.1 is reachable."""


@pytest.fixture()
def server():
    with FakeLogsInsightsServer() as srv:
        assert srv.url.startswith("http://127.0.0.1:")
        yield srv


def source(srv_url: str, **kw) -> CloudWatchSource:
    return CloudWatchSource(log_groups=(logset.GROUP,), since="1h", region="us-east-1", endpoint_url=srv_url, **kw)


def app_for(monkeypatch, data: Path, src: CloudWatchSource | None):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("IDEMWATCH_DATA", str(data))
    if src is None:
        monkeypatch.delenv(ENV_CLOUDWATCH_SOURCE, raising=False)
    else:
        monkeypatch.setenv(ENV_CLOUDWATCH_SOURCE, src.to_json())
    return AppTest.from_file(str(APP), default_timeout=120)


def tiles(at) -> dict[str, str]:
    # the emitter's tiles (the Lambda row under them is the REPORT lines' view)
    return {m.label: m.value for m in at.main.metric if m.label not in ("Lambda invocations", "Lambda timeouts",
                                                                        "Cold starts")}


def panel_text(at) -> list[str]:
    return [c.value for c in at.sidebar.get_by_key(PANEL_KEY).caption] if _has_panel(at) else []


def _has_panel(at) -> bool:
    try:
        at.sidebar.get_by_key(PANEL_KEY)
    except KeyError:
        return False
    return True


def no_exception(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.slow  # whole collects against the local Logs Insights server
def test_button_collects_and_tiles_show_the_collected_tables(monkeypatch, tmp_path, server):
    base = logset.base_ms()
    server.put_events(logset.GROUP, logset.batch(0, base))
    data = tmp_path / "data"  # does not exist yet: the first collection creates it
    at = app_for(monkeypatch, data, source(server.url)).run()
    no_exception(at)
    assert at.title[0].value == "No data to show yet"
    assert server.count("StartQuery") == 0  # nothing collected without the button (no --refresh-every)
    caps = panel_text(at)
    assert "log groups: " + md_escape(logset.GROUP) in caps and "last collected: never" in caps
    assert "Logs Insights cost so far: $0.0000 (0 B scanned, 0 runs)" in caps

    at.button(key=BUTTON_KEY).click().run()
    no_exception(at)
    assert server.count("StartQuery") > 0
    assert tiles(at) == logset.TILES_AFTER_BATCH_0
    m = json.loads((data / "manifest.json").read_text())
    assert [s.value.replace("\\", "") for s in at.sidebar.success] == [
        f"collected from CloudWatch: {server.count('StartQuery')} queries, $0.0000"]
    assert m["source"] == "cloudwatch" and m["tables"]["trail"]["rows"] == logset.RECORDS_BATCH_0
    caps = panel_text(at)
    collected = datetime.fromisoformat(m["collected_at"])
    assert f"last collected: {collected:%Y-%m-%d %H:%M:%S} UTC" in caps
    stats = m["queries"]["all_runs"]
    assert stats["stats"]["bytes_scanned"] > 0
    assert cost_caption(stats["cost_usd"], stats["stats"]["bytes_scanned"], 1) in caps

    # new events in CloudWatch; a second click collects again (recent windows are re-queried) and the tiles move
    server.put_events(logset.GROUP, logset.batch(1, base))
    before = server.count("StartQuery")
    at.button(key=BUTTON_KEY).click().run()
    no_exception(at)
    assert server.count("StartQuery") > before
    assert tiles(at) == logset.TILES_AFTER_BATCH_1
    assert json.loads((data / "manifest.json").read_text())["tables"]["trail"]["rows"] == logset.RECORDS_BATCH_0 + 14
    assert any(c.endswith("2 runs)") for c in panel_text(at))


@pytest.mark.slow  # whole collects against the local Logs Insights server
def test_refresh_every_collects_when_the_data_is_older_than_the_interval(monkeypatch, tmp_path, server):
    base = logset.base_ms()
    server.put_events(logset.GROUP, logset.batch(0, base))
    data = tmp_path / "data"
    src = source(server.url, refresh_every_s=300)
    # no data yet: the first page run collects (data of unknown age is due)
    at = app_for(monkeypatch, data, src).run()
    no_exception(at)
    n1 = server.count("StartQuery")
    assert n1 > 0 and tiles(at) == logset.TILES_AFTER_BATCH_0
    assert "refresh: when the data is older than 5m" in panel_text(at)
    # fresh data: the next page run does not query CloudWatch
    server.put_events(logset.GROUP, logset.batch(1, base))
    at.run()
    assert server.count("StartQuery") == n1 and tiles(at) == logset.TILES_AFTER_BATCH_0
    # the manifest says the last collection was 6 minutes ago: the next page run collects again
    mpath = data / "manifest.json"
    m = json.loads(mpath.read_text())
    m["collected_at"] = (datetime.now(UTC) - timedelta(minutes=6)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    mpath.write_text(json.dumps(m))
    at.run()
    no_exception(at)
    assert server.count("StartQuery") > n1
    assert tiles(at) == logset.TILES_AFTER_BATCH_1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again on exit: nothing listens there


def test_unreachable_endpoint_is_a_one_line_error_in_the_sidebar(monkeypatch, tmp_path, data_dir):
    src = source(f"http://127.0.0.1:{_closed_port()}")
    at = app_for(monkeypatch, data_dir, src).run()  # existing data stays visible
    no_exception(at)
    before = tiles(at)
    at.button(key=BUTTON_KEY).click().run()
    no_exception(at)
    errors = [e.value for e in at.sidebar.error]
    assert len(errors) == 1 and "\n" not in errors[0], errors
    assert "cannot reach the AWS endpoint for logs:DescribeLogGroups" in errors[0].replace("\\", "")
    assert "Traceback" not in errors[0]
    assert tiles(at) == before  # nothing lost: the previous tables are still shown
    at.run()  # the failure stays visible on later runs (until a collection succeeds)
    assert any("last collection failed: " in e.value for e in at.sidebar.error)


def test_not_configured_changes_nothing(monkeypatch, data_dir):
    monkeypatch.setenv(ENV_CLOUDWATCH_SOURCE, "")
    at = app_for(monkeypatch, data_dir, None).run()
    no_exception(at)
    assert not _has_panel(at)
    assert [b for b in at.button if b.key == BUTTON_KEY] == []


def test_malformed_source_is_shown_not_ignored(monkeypatch, data_dir):
    at = app_for(monkeypatch, data_dir, None)
    monkeypatch.setenv(ENV_CLOUDWATCH_SOURCE, '{"log_groups": []}')
    at.run()
    no_exception(at)
    errors = [e.value.replace("\\", "") for e in at.sidebar.error]
    assert errors == [f"${ENV_CLOUDWATCH_SOURCE} is malformed: a CloudWatch source needs a log group name or prefix"]
    assert not _has_panel(at)


def test_source_json_round_trip_has_no_credentials():
    src = CloudWatchSource(log_group_prefixes=("/aws/lambda/orders-",), since="7d", region="eu-west-1",
                           profile="prod-readonly", endpoint_url=None, refresh_every_s=300)
    text = src.to_json()
    assert json.loads(text) == {"log_groups": [], "log_group_prefixes": ["/aws/lambda/orders-"], "since": "7d",
                                "region": "eu-west-1", "profile": "prod-readonly", "endpoint_url": None,
                                "refresh_every_s": 300}
    assert configured_source({ENV_CLOUDWATCH_SOURCE: text}) == src
    assert configured_source({}) is None
    with pytest.raises(ValueError, match="unknown keys"):
        configured_source({ENV_CLOUDWATCH_SOURCE: '{"log_groups": ["g"], "aws_secret_access_key": "x"}'})


def test_refresh_due_rules(tmp_path):
    src = CloudWatchSource(log_groups=("g",), refresh_every_s=300)
    now = 1_767_607_200.0  # 2026-01-05T10:00:00Z
    manifest = {"source": "cloudwatch", "collected_at": "2026-01-05T09:55:01.000Z"}  # 299 s old
    assert not refresh_due(src, manifest, tmp_path, now=now)
    assert refresh_due(src, {**manifest, "collected_at": "2026-01-05T09:55:00.000Z"}, tmp_path, now=now)  # 300 s
    assert refresh_due(src, None, tmp_path, now=now)  # never collected
    assert refresh_due(src, {"source": "local", "collected_at": "2026-01-05T09:59:00.000Z"}, tmp_path, now=now)
    assert not refresh_due(CloudWatchSource(log_groups=("g",)), None, tmp_path, now=now)  # no interval: button only


def test_cost_caption_units():
    assert cost_caption(0.0, 0, 0) == "Logs Insights cost so far: $0.0000 (0 B scanned, 0 runs)"
    assert cost_caption(0.0, 58_770, 1) == "Logs Insights cost so far: $0.0000 (57.4 KB scanned, 1 run)"
    # 2.5 GB at $0.005/GB = $0.0125
    assert cost_caption(0.0125, int(2.5 * 2**30), 3) == "Logs Insights cost so far: $0.0125 (2.5 GB scanned, 3 runs)"


def test_collect_now_failure_then_success_clears_the_error(tmp_path, server):
    from collector.cloudwatch import CloudWatchCollectorError
    from dashboard.cloudwatch_source import last_failure

    data = tmp_path / "d"
    with pytest.raises(CloudWatchCollectorError, match="log group not found: /aws/lambda/orders"):
        collect_now(source(server.url), data)  # the group has no events yet
    assert last_failure(data) is not None
    server.put_events(logset.GROUP, logset.batch(0, logset.base_ms()))
    m = collect_now(source(server.url), data)
    assert m["tables"]["outcomes"]["rows"] > 0 and last_failure(data) is None
