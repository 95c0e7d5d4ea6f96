"""AppTest of the Lambda health page over REPORT lines collected by the real ingest and invocations query
(report_lines.py: text-format and JSON-format REPORTs; every expected figure is derived by hand there)."""

from __future__ import annotations

import base64
import importlib.util
import re
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


def _images(drawn) -> list[str]:
    """The SVG text of each line/point image of a drawn chart."""
    return [base64.b64decode(src.split(",", 1)[1]).decode() for src in drawn.lines]


def test_memory_chart_shows_used_against_size(page, html_chart):
    drawn = html_chart.read(page, "lambda_memory")
    assert html_chart.series(drawn.rows, statistic="used") == {ORDERS: [64, 96], PAYMENTS: [100, 128]}
    assert html_chart.series(drawn.rows, statistic="size") == {ORDERS: [128, 128], PAYMENTS: [256, 256]}
    assert drawn.meta["stats"] == "used size" and drawn.meta["y-title"] == "memory (MB)"
    # used is a solid line, size a dashed one: one image per statistic and log group
    svgs = _images(drawn)
    assert len(svgs) == 4
    assert sum('stroke-dasharray="6 4"' in x for x in svgs) == 2 and sum("stroke-dasharray" not in x for x in svgs) == 2
    # a bin's tooltip names each log group's statistic
    tip = drawn.rows[drawn.rows["t"] == report_lines.T0_MS]["tip"].iloc[0]
    assert f"{ORDERS} used: 64" in tip and f"{PAYMENTS} size: 256" in tip


def test_init_duration_chart_per_cold_bin(page, html_chart):
    drawn = html_chart.read(page, "lambda_init")
    # only bins with a cold start; unit ms (the largest is 500 ms)
    assert html_chart.series(drawn.rows, statistic="max") == {ORDERS: [300, 500], PAYMENTS: [250]}
    assert html_chart.series(drawn.rows, statistic="avg") == {ORDERS: [225, 500], PAYMENTS: [250]}
    assert drawn.meta["y-title"] == "init duration (ms)"
    # points alone (no line): max as the larger dots, drawn first, avg as the smaller ones on top
    svgs = _images(drawn)
    assert not any("<polyline" in x for x in svgs)
    widths = [int(re.search(r'stroke-width="(\d+)"', x).group(1)) for x in svgs]
    assert widths == [8, 8, 4, 4]


def test_invocation_duration_and_timeout_charts(page, html_chart):
    drawn = html_chart.read(page, "lambda_invocations")
    assert html_chart.series(drawn.rows) == {ORDERS: [2, 2], PAYMENTS: [1, 1]}  # invocations per minute
    assert html_chart.series(drawn.rows, "points") == {ORDERS: [2, 1], PAYMENTS: [1, 0]}  # cold starts
    assert drawn.rows["bar"].notna().all()  # stacked bars
    # a dot only where there was a cold start: orders at both minutes, payments at the first (image of dots alone)
    svgs = _images(drawn)
    assert len(svgs) == 2 and not any("<polyline" in x for x in svgs)
    paths = [re.findall(r'<path d="([^"]*)" stroke="(#[0-9A-Fa-f]+)"', x) for x in svgs]
    assert [[d.count("h0") for d, _ in p] for p in paths] == [[2, 2], [1, 1]]  # a dark outline under each dot
    assert all(p[0][1] == "#000000" and p[0][0] == p[1][0] for p in paths)
    first = drawn.rows[drawn.rows["t"] == report_lines.T0_MS + 60_000]["tip"].iloc[0]
    assert f"{ORDERS} cold starts: 1" in first and f"{PAYMENTS} cold starts" not in first
    # counts: integer ticks, every integer up to the largest stacked total (3 at both minutes)
    assert drawn.y_labels == ["0", "1", "2", "3"]
    # bins are [10:00, 10:01) and [10:01, 10:02) in epoch ms
    assert sorted(set(drawn.rows["t"])) == [report_lines.T0_MS, report_lines.T0_MS + 60_000]
    assert set(drawn.rows["t_end"] - drawn.rows["t"]) == {60_000}
    drawn = html_chart.read(page, "lambda_duration")
    # the axis unit is that of the largest max (3000 ms -> s)
    got = html_chart.series(drawn.rows, statistic="max")
    assert got[ORDERS] == pytest.approx([0.1, 3.0]) and got[PAYMENTS] == pytest.approx([0.04, 0.06])
    assert drawn.meta["y-title"] == "duration (s)"
    assert sum('stroke-dasharray="2 3"' in x for x in _images(drawn)) == 2  # max dotted, p95 solid
    drawn = html_chart.read(page, "lambda_timeouts")
    assert html_chart.series(drawn.rows) == {ORDERS: [1]}
    assert list(drawn.rows["t"]) == [report_lines.T0_MS + 60_000]


def test_log_groups_have_one_colour_on_every_chart(page, html_chart):
    legends = [html_chart.read(page, key).legend
               for key in ("lambda_invocations", "lambda_duration", "lambda_memory", "lambda_init")]
    assert all(c == legends[0] for c in legends) and legends[0][ORDERS] != legends[0][PAYMENTS]


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
