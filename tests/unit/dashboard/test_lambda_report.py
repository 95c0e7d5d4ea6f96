"""AppTest of the Lambda health page over REPORT lines collected by the real ingest and invocations query
(report_lines.py: text-format and JSON-format REPORTs; every expected figure is derived by hand there)."""

from __future__ import annotations

import html
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


def _open_more(at):
    """Open the expander of the memory and init duration charts (they are drawn only while it is open)."""
    at.session_state["lambda_more"] = True
    at.run()
    assert not at.exception
    return at


def _drawn(at, key: str) -> bool:
    try:
        at.get_by_key(key)
    except KeyError:
        return False
    return True


def test_memory_and_init_charts_are_drawn_once_their_expander_is_open(page):
    keys = ("lambda_memory", "lambda_init")
    assert not any(_drawn(page, k) for k in keys) and "more" not in page.query_params
    _open_more(page)
    assert all(_drawn(page, k) for k in keys)
    assert page.query_params["more"] == "1"  # the URL keeps it open (a link, a reload, Back)


def test_a_link_with_the_expander_open_opens_it(app_factory, report_dir):
    at = app_factory(report_dir)
    at.switch_page("app_pages/lambda_health.py")
    at.query_params.update({"range": "all", "more": "1"})  # the URL of a shared link wins over the widgets
    at.run()
    assert not at.exception and at.session_state["lambda_more"] is True
    assert _drawn(at, "lambda_memory") and _drawn(at, "lambda_init")




def test_tiles_init_duration_and_memory(page):
    m = _metrics(page)
    assert m["Invocations"] == ("6", None)
    assert m["Cold starts"] == ("4", "66.7%")
    assert m["Timeouts"] == ("1", None)
    assert m["Avg duration"] == ("575 ms", None)  # 3450 / 6
    assert m["Max duration"] == ("3.0 s", None)
    assert m["Avg init duration"] == ("300 ms", "max 500 ms")  # (300 + 150 + 500 + 250) / 4
    assert m["Peak memory used"] == ("128 MB", "75% of memory size")  # payments' 128 MB; orders' 96 / 128


def test_per_log_group_table_has_init_and_memory_size(page, read):
    g = read.table(page, "lambda_groups").set_index("log_group")
    # every duration column in one unit, that of the smallest duration shown (payments' avg 50 ms -> ms): never s
    # beside min, and no average rounded to 0.00 of a larger unit
    assert g.loc[ORDERS, "avg_duration_ms"] == 838  # 3350 / 4 = 837.5, whole ms
    assert g.loc[ORDERS, "max_duration_ms"] == pytest.approx(3000.0)
    assert g.loc[ORDERS, "avg_init_duration_ms"] == 317  # (300 + 150 + 500) / 3 = 316.7, not 362.5
    assert g.loc[ORDERS, "max_init_duration_ms"] == pytest.approx(500.0)
    assert (g.loc[ORDERS, "max_memory_used_mb"], g.loc[ORDERS, "memory_size_mb"]) == (96, 128)
    assert g.loc[ORDERS, "peak_memory_pct"] == pytest.approx(0.75)
    assert g.loc[PAYMENTS, "avg_init_duration_ms"] == pytest.approx(250.0)  # its one cold start
    assert (g.loc[PAYMENTS, "max_memory_used_mb"], g.loc[PAYMENTS, "memory_size_mb"]) == (128, 256)
    assert g.loc[PAYMENTS, "peak_memory_pct"] == pytest.approx(0.5)  # 128 / 256 at 10:01
    assert list(g.index) == [ORDERS, PAYMENTS]  # most invocations first
    labels = read.labels(page, "lambda_groups")
    assert {labels[c] for c in g.columns if c.endswith("_ms")} == {
        "avg duration (ms)", "p95 duration (ms)", "max duration (ms)", "avg init duration (ms)",
        "max init duration (ms)"}
    assert labels["memory_size_mb"] == "memory size (MB)"
    # what fits 1280 px by default; the init and memory columns hidden (the grid's column menu)
    assert "max_init_duration_ms" not in read.shown(page, "lambda_groups")
    assert "max_init_duration_ms" in read.table(page, "lambda_groups").columns


def _by(read, fig: dict, stat: str) -> dict[str, list]:
    """Log group -> y values of the traces of one statistic (a trace is named by its log group, its ``meta`` names
    the statistic)."""
    return {html.unescape(tr["name"]): tr["y"] for tr in fig["data"] if tr.get("meta") == [stat]}


def _trace(fig: dict, group: str, stat: str) -> dict:
    (tr,) = [t for t in fig["data"] if t["name"] == group and t.get("meta") == [stat]]
    return tr


def test_memory_chart_shows_used_against_size(page, read):
    fig = read.figure(_open_more(page), "lambda_memory")
    assert _by(read, fig, "used") == {ORDERS: [64, 96], PAYMENTS: [100, 128]}
    assert _by(read, fig, "size") == {ORDERS: [128, 128], PAYMENTS: [256, 256]}
    assert fig["layout"]["yaxis"]["title"]["text"] == "memory (MB)"
    # used is a solid line, size a dashed one; a log group's two traces toggle together (one legend entry)
    used, size = _trace(fig, ORDERS, "used"), _trace(fig, ORDERS, "size")
    assert (used["line"]["dash"], size["line"]["dash"]) == ("solid", "dash")
    assert used["legendgroup"] == size["legendgroup"] and used["showlegend"] and not size["showlegend"]
    assert used["customdata"][0] == "2026-01-05 10:00–10:01 UTC"


def test_init_duration_chart_per_cold_bin(page, read):
    fig = read.figure(_open_more(page), "lambda_init")
    # only bins with a cold start; unit ms (the largest is 500 ms)
    assert _by(read, fig, "max") == {ORDERS: [300, 500], PAYMENTS: [250]}
    assert _by(read, fig, "avg") == {ORDERS: [225, 500], PAYMENTS: [250]}
    assert fig["layout"]["yaxis"]["title"]["text"] == "init duration (ms)"
    assert {tr["mode"] for tr in fig["data"]} == {"markers"}  # points alone: no line between cold starts


def test_invocation_duration_and_timeout_charts(page, read):
    fig = read.figure(page, "lambda_invocations")
    bars = {tr["name"]: tr["y"] for tr in fig["data"] if tr["type"] == "bar"}
    assert bars == {ORDERS: [2, 2], PAYMENTS: [1, 1]}  # invocations per minute, stacked
    # an open dot only where there was a cold start: orders at both minutes, payments at the first
    dots = {tr["name"]: (tr["x"], tr["y"]) for tr in fig["data"] if tr.get("meta") == ["cold starts"]}
    assert dots == {ORDERS: (["2026-01-05T10:00:00.000", "2026-01-05T10:01:00.000"], [2, 1]),
                    PAYMENTS: (["2026-01-05T10:00:00.000"], [1])}
    # counts: integer ticks to the largest stacked total (3 at both minutes)
    y = fig["layout"]["yaxis"]
    assert (y["dtick"], y["range"], y["title"]["text"]) == (1, [0, 3 * 1.05], "invocations (count)")
    assert all(tr["width"] == 60_000 for tr in fig["data"] if tr["type"] == "bar")
    fig = read.figure(page, "lambda_duration")
    # the axis unit is that of the largest max (3000 ms -> s)
    got = _by(read, fig, "max")
    assert got[ORDERS] == pytest.approx([0.1, 3.0]) and got[PAYMENTS] == pytest.approx([0.04, 0.06])
    assert fig["layout"]["yaxis"]["title"]["text"] == "duration (s)"
    assert _trace(fig, ORDERS, "max")["line"]["dash"] == "dot"
    fig = read.figure(page, "lambda_timeouts")
    assert read.xs(fig) == {ORDERS: ["2026-01-05T10:01:00.000"]} and read.ys(fig) == {ORDERS: [1]}


def test_log_groups_have_one_colour_on_every_chart(page, read):
    def colours(key: str) -> dict[str, str]:
        fig = read.figure(page, key)
        return {tr["name"]: (tr.get("marker") or {}).get("color") or tr["line"]["color"] for tr in fig["data"]}

    _open_more(page)
    legends = [colours(key) for key in ("lambda_invocations", "lambda_duration", "lambda_memory", "lambda_init")]
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
