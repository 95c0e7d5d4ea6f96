"""The dashboard's Alarms page (Streamlit AppTest): the stack config box never reads a file outside the allowed
roots nor lets the browser probe the file system; tiers and custom alarms are shown; the timeline has the
threshold line and a state band on its own row."""

from __future__ import annotations

import importlib.util
import itertools
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
APP = ROOT / "dashboard" / "app.py"
DEMO = ROOT / "alarms" / "demo-stack.yaml"
NOT_ALLOWED_START = "Not an allowed alarm stack config."


def _dashboard_test_module(name: str):
    """A helper module of tests/unit/dashboard (sample_tables, app_read), loaded by path."""
    spec = importlib.util.spec_from_file_location(f"alarms_page_{name}", ROOT / "tests" / "unit" / "dashboard" /
                                                  f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def _sample():
    return _dashboard_test_module("sample_tables")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return _sample().write_data_dir(tmp_path_factory.mktemp("alarms-page-data"))


@pytest.fixture()
def page(monkeypatch, data_dir):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("IDEMWATCH_DATA", str(data_dir))
    monkeypatch.delenv("IDEMWATCH_ALARMS_CONFIG", raising=False)

    def open_with(config: str):
        at = AppTest.from_file(str(APP), default_timeout=60)
        at.run()
        at.switch_page("app_pages/alarms.py").run()
        at.text_input(key="alarm_cfg").set_value(config).run()
        assert not at.exception
        return at

    return open_with


def _all_text(at) -> str:
    parts = []
    for kind in ("error", "warning", "info", "markdown", "caption", "text", "code", "success", "metric"):
        for el in getattr(at, kind):
            parts.append(str(getattr(el, "value", "")))
    return "\n".join(parts)


def _errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_etc_shadow_is_refused_without_reading_it(page):
    at = page("/etc/shadow")
    assert _errors(at) and _errors(at)[0].startswith(NOT_ALLOWED_START)
    text = _all_text(at)
    assert "root:" not in text and "shadow" not in text  # no content, not even the typed path echoed


def test_relative_escape_is_refused_and_the_file_content_never_shown(page):
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").is_file() else None
    at = page("../../../../etc/hostname")
    assert _errors(at)[0].startswith(NOT_ALLOWED_START)
    if hostname:
        assert hostname not in _all_text(at)


def test_symlink_out_of_the_data_directory_is_refused(page, data_dir):
    link = data_dir / "stack.yaml"
    link.symlink_to("/etc/hostname")
    try:
        at = page(str(link))
        assert _errors(at)[0].startswith(NOT_ALLOWED_START)
    finally:
        link.unlink()


def test_missing_and_existing_forbidden_paths_get_the_same_answer(page, data_dir):
    # existing file outside, missing file outside, missing file inside, a directory inside: one message, so the
    # box tells nothing about what exists on the server
    answers = {p: _errors(page(p)) for p in ("/etc/passwd", "/etc/no-such-file.yaml", "/root/.ssh/id_rsa",
                                             str(data_dir / "missing.yaml"), str(data_dir / "tables"))}
    assert len({json.dumps(a) for a in answers.values()}) == 1, answers
    assert next(iter(answers.values()))[0].startswith(NOT_ALLOWED_START)


def test_a_config_inside_the_data_directory_loads(page, data_dir):
    import alarms

    cfg = data_dir / "team-stack.yaml"
    shutil.copy(DEMO, cfg)
    try:
        at = page(str(cfg))
        assert not _errors(at)
        m = {x.label: x.value for x in at.metric}
        assert m["Alarms"] == f"{len(alarms.build_catalogue(alarms.load_config(cfg))):,}"
    finally:
        cfg.unlink()


def test_broken_yaml_error_shows_position_not_content(page, data_dir):
    cfg = data_dir / "broken.yaml"
    cfg.write_text("service: shop\nsecret_line: [hunter2-s3cr3t\n")
    try:
        at = page(str(cfg))
        err = _errors(at)[0]
        assert "not valid YAML at line" in err and "hunter2" not in _all_text(at)
    finally:
        cfg.unlink()


def test_tiers_and_custom_alarms_are_on_the_page(page, data_dir):
    data = yaml.safe_load(DEMO.read_text())
    data["custom_alarms"] = [{
        "name": "orders-consumer-DurationP99", "title": "Orders consumer slow", "severity": "warning",
        "metric": {"namespace": "AWS/Lambda", "name": "Duration", "dimensions": {"FunctionName": "orders-consumer"},
                   "statistic": "p99"},
        "period": 60, "evaluation_periods": 5, "datapoints_to_alarm": 3, "threshold": 5000, "unit": "Milliseconds",
        "treat_missing_data": "notBreaching", "treat_missing_reason": "no invocations, no duration",
    }]
    cfg = data_dir / "custom-stack.yaml"
    cfg.write_text(yaml.safe_dump(data))
    try:
        at = page(str(cfg))
        s = at.get_by_key("table-alarm_summary").dataframe[0].value.set_index("alarm")
        assert s.loc["shop-orders-consumer-RetryRate-Critical", "tier"] == "critical"
        assert s.loc["shop-orders-consumer-RetryRate", "tier"] == "base"
        assert "shop-orders-consumer-DurationP99" in s.index
        defs = at.get_by_key("table-alarm_defs").dataframe[0].value.set_index("alarm")
        assert defs.loc["shop-orders-consumer-DurationP99", "condition"].startswith("p99(Duration) > 5000")
        assert defs.loc["shop-orders-consumer-RetryRate-Critical", "condition"].startswith(
            "100 * FILL(retryable, 0) / received > 25")
    finally:
        cfg.unlink()


def test_timeline_has_threshold_line_and_a_separate_state_band(page):
    import alarms

    read = _dashboard_test_module("app_read")
    defs = {d.name: d for d in alarms.build_catalogue(alarms.load_config(DEMO))}
    at = page(str(DEMO))
    fig = read.figure(at, "alarm_timeline")
    names = list(at.get_by_key("table-alarm_summary").dataframe[0].value["alarm"])
    picked = defs[names[at.selectbox(key="alarm_pick").value]]
    t = read.traces(fig)
    # the value plot with the picked alarm's threshold as a dashed line across the whole history
    (rule,) = [tr for n, tr in t.items() if n.startswith(f"threshold {picked.threshold:g}")]
    assert set(rule["y"]) == {picked.threshold} and rule["line"]["dash"] == "dash"
    value = t["value"]
    # the state band is its own row (yaxis2) with ALARM on top; one bar per run of periods in one state, the runs
    # covering every period once, none overlapping
    assert fig["layout"]["yaxis2"]["categoryarray"] == ["NO DATA", "OK", "ALARM"]
    bars = [tr for n, tr in t.items() if n in ("ALARM", "OK", "NO DATA")]
    assert bars and all(tr["orientation"] == "h" and tr.get("yaxis") == "y2" for tr in bars)
    spans = sorted((pd.Timestamp(b), w) for tr in bars for b, w in zip(tr["base"], tr["x"]))
    assert sum(w for _, w in spans) == len(value["x"]) * picked.period * 1000
    assert all(a + pd.Timedelta(milliseconds=w) <= b for (a, w), (b, _) in itertools.pairwise(spans))
    assert rule["x"][0] == min(value["x"])


def test_stuck_keys_link_to_the_keys_records_in_logs_insights(monkeypatch, data_dir, tmp_path):
    from streamlit.testing.v1 import AppTest

    from alarms.links import decode_insights_url

    sample = _sample()
    stack = tmp_path / "stack.yaml"
    stack.write_text(yaml.safe_dump({"service": "orders", "region": "eu-west-1", "functions": [
        {"name": "orders-consumer", "operation": "ProcessOrders", "event_source": "sqs"}]}))
    monkeypatch.setenv("IDEMWATCH_DATA", str(data_dir))
    monkeypatch.setenv("IDEMWATCH_ALARMS_CONFIG", str(stack))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.switch_page("app_pages/stuck_keys.py").run()
    assert not at.exception
    # the key cells hold the keys themselves (a click opens the explorer: dashboard.links)
    table = at.get_by_key("table-stuck").dataframe[0].value.set_index("key")
    url = table.loc[sample.XSS_KEY, "logs"]
    detail = decode_insights_url(url)
    assert url.startswith("https://eu-west-1.console.aws.amazon.com/")
    assert detail["source"] == ["/aws/lambda/orders-consumer"]
    assert detail["editorString"].startswith(f'filter idempotency_key = "{sample.XSS_KEY}" | fields @timestamp')
    # claimed and last seen 10:27 (2026-01-05): the range is 10:22 to 10:32
    assert (detail["start"], detail["end"]) == ("2026-01-05T10:22:00.000Z", "2026-01-05T10:32:00.000Z")
    import pandas as pd

    assert pd.isna(table.loc[sample.XSS_LINK, "logs"])  # service "payments" is not in the stack config


def test_key_query_cannot_be_broken_out_of():
    from alarms.links import decode_insights_url, key_query, key_trail_url

    key = 'a" | filter 1 = 1 | display \\"'
    q = key_query(key)
    assert q.startswith('filter idempotency_key = "a\\" | filter 1 = 1 | display \\\\\\"" | fields')
    assert decode_insights_url(key_trail_url(key, ["/g"], 0, 60))["editorString"] == q
