"""AppTest of the Lambda health page over REPORT lines collected by the real ingest and invocations query
(report_lines.py: text-format and JSON-format REPORTs; every expected figure is derived by hand there)."""

from __future__ import annotations

import importlib.util
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




def test_tiles_init_duration_and_memory(page):
    m = _metrics(page)
    assert m["Invocations"] == ("6", None)
    assert m["Cold starts"] == ("4", "66.7%")
    assert m["Timeouts"] == ("1", None)
    assert m["Avg duration"] == ("575 ms", None)  # 3450 / 6
    assert m["Max duration"] == ("3.0 s", None)
    assert m["Avg init duration"] == ("300 ms", "max 500 ms")  # (300 + 150 + 500 + 250) / 4
    assert m["Peak memory used"] == ("128 MB", "75% of memory size")  # payments' 128 MB; orders' 96 / 128


def test_per_log_group_table_has_init_and_memory_size(page, html_table):
    g = html_table.values(page, "lambda_groups").set_index("log_group").join(
        html_table.values(page, "lambda_memory_groups").set_index("log_group"))
    # each duration column in the unit of its largest value: avg 837.5 ms -> ms, max 3000 ms -> s, init -> ms;
    # shown rounded: whole ms, two decimals of a larger unit
    assert g.loc[ORDERS, "avg_duration_ms"] == 838  # 3350 / 4 = 837.5
    assert g.loc[ORDERS, "max_duration_ms"] == pytest.approx(3.0)
    assert g.loc[ORDERS, "avg_init_duration_ms"] == 317  # (300 + 150 + 500) / 3 = 316.7, not 362.5
    assert g.loc[ORDERS, "max_init_duration_ms"] == 500
    assert (g.loc[ORDERS, "max_memory_used_mb"], g.loc[ORDERS, "memory_size_mb"]) == (96, 128)
    assert g.loc[ORDERS, "peak_memory_pct"] == pytest.approx(0.75)
    assert g.loc[PAYMENTS, "avg_init_duration_ms"] == 250  # its one cold start
    assert (g.loc[PAYMENTS, "max_memory_used_mb"], g.loc[PAYMENTS, "memory_size_mb"]) == (128, 256)
    assert g.loc[PAYMENTS, "peak_memory_pct"] == pytest.approx(0.5)  # 128 / 256 at 10:01
    assert list(g.index) == [ORDERS, PAYMENTS]  # most invocations first
    assert html_table.labels(page, "lambda_groups")["max_duration_ms"] == "max (s)"
    labels = html_table.labels(page, "lambda_memory_groups")
    assert labels["avg_init_duration_ms"] == "init avg (ms)"
    assert labels["memory_size_mb"] == "mem size (MB)"


def test_memory_chart_shows_used_against_size(page, vega):
    spec, rows = vega.read(page, "lambda_memory")
    assert vega.series(rows, statistic="used") == {ORDERS: [64, 96], PAYMENTS: [100, 128]}
    assert vega.series(rows, statistic="size") == {ORDERS: [128, 128], PAYMENTS: [256, 256]}
    used, size = vega.layers(spec)
    # used is a solid line, size a dashed one, each layer showing only its statistic
    assert "strokeDash" not in used["mark"] and size["mark"]["strokeDash"]
    assert "'used'" in used["transform"][0]["filter"].replace('"', "'")
    assert used["encoding"]["y"]["title"] == "memory (MB)"


def test_init_duration_chart_per_cold_bin(page, vega):
    spec, rows = vega.read(page, "lambda_init")
    # only bins with a cold start; unit ms (the largest is 500 ms)
    assert vega.series(rows, statistic="max") == {ORDERS: [300, 500], PAYMENTS: [250]}
    assert vega.series(rows, statistic="avg") == {ORDERS: [225, 500], PAYMENTS: [250]}
    dots, rings = vega.layers(spec)
    assert (dots["mark"]["filled"], rings["mark"]["filled"]) == (True, False)
    assert dots["encoding"]["y"]["title"] == "init duration (ms)"


def test_invocation_duration_and_timeout_charts(page, vega):
    spec, rows = vega.read(page, "lambda_invocations")
    assert vega.series(rows) == {ORDERS: [2, 2], PAYMENTS: [1, 1]}  # invocations per minute
    assert vega.series(rows, "cold_starts") == {ORDERS: [2, 1], PAYMENTS: [1, 0]}
    bars, cold = vega.layers(spec)
    assert bars["mark"]["type"] == "bar" and cold["mark"]["type"] == "point"
    assert cold["transform"] == [{"filter": 'datum["cold_starts"] > 0'}]  # a diamond only where there was one
    # counts: integer ticks, every integer up to the largest stacked total (3 at both minutes)
    assert bars["encoding"]["y"]["axis"]["values"] == [0, 1, 2, 3]
    assert bars["encoding"]["y"]["axis"]["format"] == ",d"
    # bins are [10:00, 10:01) and [10:01, 10:02) in epoch ms
    assert sorted(set(rows["t"])) == [report_lines.T0_MS, report_lines.T0_MS + 60_000]
    assert set(rows["t_end"] - rows["t"]) == {60_000}
    spec, rows = vega.read(page, "lambda_duration")
    # the axis unit is that of the largest max (3000 ms -> s)
    got = vega.series(rows, statistic="max")
    assert got[ORDERS] == pytest.approx([0.1, 3.0]) and got[PAYMENTS] == pytest.approx([0.04, 0.06])
    assert vega.layers(spec)[0]["encoding"]["y"]["title"] == "duration (s)"
    _, rows = vega.read(page, "lambda_timeouts")
    assert vega.series(rows) == {ORDERS: [1]}
    assert list(rows["t"]) == [report_lines.T0_MS + 60_000]


def test_log_groups_have_one_colour_on_every_chart(page, vega):
    colours = []
    for key in ("lambda_invocations", "lambda_duration", "lambda_memory", "lambda_init"):
        spec, _ = vega.read(page, key)
        scale = vega.layers(spec)[0]["encoding"]["color"]["scale"]
        colours.append(dict(zip(scale["domain"], scale["range"])))
    assert all(c == colours[0] for c in colours) and colours[0][ORDERS] != colours[0][PAYMENTS]


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
