"""AppTest of the Lambda health page over REPORT lines collected by the real ingest and invocations query
(report_lines.py: text-format and JSON-format REPORTs; every expected figure is derived by hand there)."""

from __future__ import annotations

import importlib.util
import json
from datetime import timedelta
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)

_spec = importlib.util.spec_from_file_location("dashboard_report_lines", Path(__file__).with_name("report_lines.py"))
report_lines = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report_lines)  # type: ignore[union-attr]

ORDERS, PAYMENTS = "/aws/lambda/orders", "/aws/lambda/payments"


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    return report_lines.write_data_dir(tmp_path_factory.mktemp("report-lines"))


@pytest.fixture()
def page(app_factory, report_dir):
    at = app_factory(report_dir)
    at.sidebar.selectbox(key="f_range").select("All data").run()
    at.switch_page("app_pages/lambda_health.py").run()
    assert not at.exception
    return at


def _metrics(at):
    return {m.label: (m.value, m.delta or None) for m in at.main.metric}


def _figure(at, key):
    return json.loads(at.get_by_key(key).proto.spec)


def test_tiles_init_duration_and_memory(page):
    m = _metrics(page)
    assert m["Invocations"] == ("6", None)
    assert m["Cold starts"] == ("4", "66.7%")
    assert m["Timeouts"] == ("1", None)
    assert m["Avg duration"] == ("575 ms", None)  # 3450 / 6
    assert m["Max duration"] == ("3.0 s", None)
    assert m["Avg init duration"] == ("300 ms", "max 500 ms")  # (300 + 150 + 500 + 250) / 4
    assert m["Peak memory used"] == ("128 MB", "75% of memory size")  # payments' 128 MB; orders' 96 / 128


def test_per_log_group_table_has_init_and_memory_size(page):
    g = page.get_by_key("table-lambda_groups").dataframe[0].value.set_index("log_group").join(
        page.get_by_key("table-lambda_memory_groups").dataframe[0].value.set_index("log_group"))
    # each duration column in the unit of its largest value: avg 837.5 ms -> ms, max 3000 ms -> s, init -> ms
    assert g.loc[ORDERS, "avg_duration_ms"] == pytest.approx(837.5)  # 3350 / 4
    assert g.loc[ORDERS, "max_duration_ms"] == pytest.approx(3.0)
    assert g.loc[ORDERS, "avg_init_duration_ms"] == pytest.approx(950 / 3)  # (300 + 150 + 500) / 3, not 362.5
    assert g.loc[ORDERS, "max_init_duration_ms"] == pytest.approx(500)
    assert (g.loc[ORDERS, "max_memory_used_mb"], g.loc[ORDERS, "memory_size_mb"]) == (96, 128)
    assert g.loc[ORDERS, "peak_memory_pct"] == pytest.approx(0.75)
    assert g.loc[PAYMENTS, "avg_init_duration_ms"] == pytest.approx(250)  # its one cold start
    assert (g.loc[PAYMENTS, "max_memory_used_mb"], g.loc[PAYMENTS, "memory_size_mb"]) == (128, 256)
    assert g.loc[PAYMENTS, "peak_memory_pct"] == pytest.approx(0.5)  # 128 / 256 at 10:01
    assert list(g.index) == [ORDERS, PAYMENTS]  # most invocations first
    cfg = json.loads(page.get_by_key("table-lambda_groups").dataframe[0].proto.columns)
    assert cfg["max_duration_ms"]["label"] == "max (s)"
    cfg = json.loads(page.get_by_key("table-lambda_memory_groups").dataframe[0].proto.columns)
    assert cfg["avg_init_duration_ms"]["label"] == "init avg (ms)"
    assert cfg["memory_size_mb"]["label"] == "mem size (MB)"


def test_memory_chart_shows_used_against_size(page):
    fig = _figure(page, "lambda_memory")
    lines = {(d["name"], d.get("line", {}).get("dash")): d["y"] for d in fig["data"]}
    assert lines == {
        (ORDERS, None): [64, 96], (f"{ORDERS} size", "dash"): [128, 128],
        (PAYMENTS, None): [100, 128], (f"{PAYMENTS} size", "dash"): [256, 256],
    }


def test_init_duration_chart_per_cold_bin(page):
    fig = _figure(page, "lambda_init")
    series = {d["name"]: d["y"] for d in fig["data"]}
    # only bins with a cold start; unit ms (the largest is 500 ms)
    assert series == {ORDERS: [300, 500], f"{ORDERS} avg": [225, 500], PAYMENTS: [250], f"{PAYMENTS} avg": [250]}
    assert fig["layout"]["yaxis"]["title"]["text"] == "init duration (ms)"


def test_a_narrower_window_reweights(page):
    """[10:01, 10:02) leaves orders' third cold start and both groups' 10:01 memory."""
    lo = report_lines.T0 + timedelta(minutes=1)
    page.sidebar.selectbox(key="f_range").select("Custom range").run()
    page.sidebar.slider(key="f_custom").set_value((lo, lo + timedelta(minutes=1))).run()
    assert not page.exception
    m = _metrics(page)
    assert m["Invocations"] == ("3", None) and m["Cold starts"] == ("1", "33.3%")
    assert m["Avg duration"] == ("1.1 s", None)  # (200 + 3000 + 60) / 3 ms
    assert m["Avg init duration"] == ("500 ms", "max 500 ms")
    assert m["Peak memory used"] == ("128 MB", "75% of memory size")
