"""AppTest over what issue 14 added: the Lambda health page, other sources beside the emitter's signals
(library_signals, the idempotency-table scan), tile trends, URL state, explorer links, units and colours.

Expected values are derived by hand from sample_tables.py (comments there and below).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

APP = Path(__file__).resolve().parents[3] / "dashboard" / "app.py"

pytestmark = pytest.mark.timeout(300)


_spec = importlib.util.spec_from_file_location("html_rows_depth", Path(__file__).with_name("html_rows.py"))
html_rows = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(html_rows)  # type: ignore[union-attr]

def metrics(at) -> dict[str, tuple[str, str | None]]:
    return {m.label: (m.value, m.delta or None) for m in at.main.metric}


def captions(at) -> list[str]:
    return [c.value for c in at.main.caption]


def frame(at, key: str):
    """The table keyed ``table-<key>``: a data grid's frame, or an HTML table read back (html_rows.py)."""
    if html_rows.is_html(at, key):
        return html_rows.values(at, key)
    return at.get_by_key(f"table-{key}").dataframe[0].value


def test_lambda_health_default_window(app):
    app.switch_page("app_pages/lambda_health.py").run()
    assert not app.exception
    m = metrics(app)
    # [10:25, 10:40): only the 10:30 row: 5 invocations, 0 cold, 1 timeout, avg 200, p95 900, max 3000, 85 of 128 MB
    assert m["Invocations"] == ("5", None)
    assert m["Cold starts"] == ("0", "0.0%")
    assert m["Timeouts"] == ("1", None)
    assert m["Avg duration"] == ("200 ms", None)
    assert m["p95 duration"] == ("900 ms", None) and m["Max duration"] == ("3.0 s", None)
    assert m["Peak memory used"] == ("85 MB", "66% of memory size")  # 85 / 128 = 66.4%
    assert m["Avg init duration"] == ("–", None)  # no cold start in the window
    g = frame(app, "lambda_groups")
    assert list(g.columns[:4]) == ["log_group", "invocations", "cold_starts", "timeouts"]  # counts first
    assert g.iloc[0]["max_duration_ms"] == pytest.approx(3.0)  # the column's unit is s (its largest is 3000 ms)
    assert "Lambda health" in captions(app)[-1]


def test_lambda_health_all_data_and_cold_start_sources(app):
    app.sidebar.selectbox(key="f_range").select("All data").run()
    app.switch_page("app_pages/lambda_health.py").run()
    m = metrics(app)
    # 10:05 (3 inv, 1 cold, avg 120) + 10:30 (5 inv, avg 200): avg = (3*120 + 5*200) / 8 = 170 ms
    assert m["Invocations"] == ("8", None)
    assert m["Cold starts"] == ("1", "12.5%")
    assert m["Avg duration"] == ("170 ms", None)
    cold = frame(app, "lambda_cold").set_index("source")["cold starts"].to_dict()
    # REPORT lines: 1; the emitter recorded no cold_start outcome; Powertools ColdStart metric: 1 at 10:05
    assert cold == {"Lambda REPORT lines (Init Duration present)": 1, "idemwatch emitter (cold_start records)": 0,
                    "Powertools metrics (ColdStart)": 1}
    errors = frame(app, "lambda_errors").set_index("log_group")
    # trail failure outcomes per log group: orders none... poison (evil 10:35), timeout abort (payments 10:26)
    assert errors.loc["/aws/lambda/evil", "failures"] == 1
    assert errors.loc["/aws/lambda/payments", "failures"] == 1


def test_library_signal_beside_the_emitter_tile(app, vega, html_chart):
    # Powertools DuplicateCompleted: 4 in [10:25, 10:40), 1 in the previous window [10:10, 10:25)
    assert metrics(app)["Duplicates"] == ("5", "+3")  # the emitter's value is unchanged (never summed)
    assert "Powertools metrics: 4 (Δ +3)" in captions(app)
    app.switch_page("app_pages/duplicates.py").run()
    chart = html_chart.read(app, "series_library")
    assert html_chart.series(chart.rows) == {"Powertools": [4.0]}
    assert list(chart.rows["t"]) == [vega.utc_ms("2026-01-05 10:30")]
    assert chart.legend_title == "library" and list(chart.legend) == ["Powertools"]  # the legend names the source
    assert any("Powertools metrics: 4" in c for c in captions(app))


def _find(node, key: str):
    for c in getattr(node, "children", {}).values():
        if getattr(c, "key", None) == key:
            return c
        found = _find(c, key)
        if found is not None:
            return found
    return None


def tile_spark(at, signal_key: str) -> tuple[str, str, list[float]] | None:
    """The tile's sparkline image: (alt text, "area" or "line", each point's height as a share of the top, 0-1)."""
    import base64
    import re

    tile = _find(at.main, f"tile-{signal_key}")
    imgs = [x for x in tile.children.values() if x.proto.DESCRIPTOR.name == "ImageList"]
    if not imgs:
        return None
    (img,) = imgs
    text = base64.b64decode(img.proto.imgs[0].url.split(",", 1)[1]).decode()
    ys = [float(y) for y in re.findall(r",([\d.]+)", re.search(r'<polyline points="([^"]+)"', text).group(1))]
    # the drawing spans y 1.5 (top: the largest value) to 38.5 (zero) of a 40-unit-high viewBox
    return img.proto.imgs[0].alt, "area" if "<polygon" in text else "line", [round((38.5 - y) / 37, 3) for y in ys]


def test_tile_trends_are_sparklines_per_bin(app):
    alt, chart, heights = tile_spark(app, "duplicates")
    # duplicates per 1-minute bin of [10:25, 10:40): 5 at 10:30, none elsewhere (15 bins); counts are areas
    assert chart == "area" and heights == [0.0] * 5 + [1.0] + [0.0] * 9
    assert alt == "trend: 15 points from 0 to 5"
    alt, chart, heights = tile_spark(app, "iterator_age")
    # max RecordAge per bin: 65000 ms at 10:30, 70 ms at 10:35, in minutes (the tile's unit); ages are lines
    assert chart == "line" and heights == pytest.approx([1.0, 70 / 65000], abs=0.003)  # 0.1-unit coordinates
    assert alt == f"trend: 2 points from {round(70 / 60000, 4):g} to {round(65000 / 60000, 4):g}"
    assert tile_spark(app, "poison")[1] == "line"
    assert tile_spark(app, "stuck") is None  # a state at the window end: no trend
    # the metric draws no Vega sparkline of its own (the image is the trend), and the tile help says how bins merge
    dup = next(m for m in app.main.metric if m.label == "Duplicates")
    assert not list(dup.proto.chart_data)
    assert "each point sums consecutive bins" in dup.help
    age = next(m for m in app.main.metric if m.label == "Max iterator age")
    assert "each point is the largest of consecutive bins" in age.help


def test_powertools_only_fleet_has_no_zero_tiles(app_factory, tmp_path, sample_mod):
    """A fleet with Powertools alone (no emitter record): tiles show the library's counts, labelled, and '–' where
    nothing measures the signal."""
    rows = {name: [] for name in sample_mod.TABLE_ROWS}
    rows["library_signals"] = sample_mod.TABLE_ROWS["library_signals"]
    rows["invocations"] = sample_mod.TABLE_ROWS["invocations"]
    sample_mod.write_data_dir(tmp_path, rows)
    at = app_factory(tmp_path)
    assert not at.exception
    at.sidebar.selectbox(key="f_range").select("All data").run()
    m = metrics(at)
    assert m["Duplicates · Powertools"] == ("5", None)  # 4 + 1, all data: no previous window
    assert m["Retries"] == ("–", None) and m["Payload conflicts"] == ("–", None)


def test_idempotency_table_scan_on_the_stuck_page(app_factory, tmp_path, sample_mod):
    rows = dict(sample_mod.TABLE_ROWS)
    t = sample_mod.t
    rows["idempotency_table_stuck"] = [
        ("orders#9", "INPROGRESS", t(20), t(50), 1260.0, False),  # 21 min overdue at scan time
        ("orders#3", "INPROGRESS", t(35), None, 90.0, None),
    ]
    sample_mod.write_data_dir(tmp_path, rows)
    at = app_factory(tmp_path)
    assert "DynamoDB scan of the idempotency table: 2 stuck at scan time" in captions(at)
    at.switch_page("app_pages/stuck_keys.py").run()
    assert metrics(at)["Stuck in the idempotency table"] == ("2", None)
    scan = frame(at, "table_stuck")
    assert list(scan["overdue"]) == ["21.0 min", "1.5 min"]  # most overdue first, human units
    assert [parse_qs(urlsplit(u).query)["q"][0] for u in scan["idempotency_key"]] == ["orders#9", "orders#3"]


def test_stuck_ages_are_human(app):
    app.switch_page("app_pages/stuck_keys.py").run()
    s = frame(app, "stuck")
    assert list(s["age"]) == ["28.0 min", "13.0 min", "2.0 min"]  # 1680 s, 780 s, 120 s
    assert s.columns[0] == "age"


def test_explorer_links_carry_the_id_and_field(app, html_table):
    app.switch_page("app_pages/duplicates.py").run()
    cells, hrefs = html_table.read(app, "top_keys")
    u = urlsplit(hrefs["idempotency_key"][0])
    assert (u.scheme, u.netloc, u.path) == ("", "", "explorer")  # relative: same server, any base path
    assert parse_qs(u.query) == {"field": ["Idempotency key"], "q": ["order-1"]}
    assert cells["idempotency_key"][0] == "order-1"  # the link shows the id it searches
    assert cells.columns[0] == "events"  # the count first
    cells, hrefs = html_table.read(app, "top_events")
    assert parse_qs(urlsplit(hrefs["event_id"][0]).query) == {"field": ["Event id"], "q": ["m-1"]}
    assert hrefs["events"].isna().all()  # a count is no link


def test_filters_go_into_the_url_and_back(app):
    app.sidebar.selectbox(key="f_range").select("All data").run()
    app.sidebar.multiselect(key="f_service").select("payments").run()
    assert app.query_params["range"] == "all" and app.query_params["service"] == "payments"
    # Back: the URL changes under the session; it wins over the widgets
    app.query_params.clear()
    app.query_params["range"] = "15m"
    app.run()
    assert app.sidebar.selectbox(key="f_range").value == "Last 15 minutes"
    assert app.sidebar.multiselect(key="f_service").value == []


def test_a_widget_change_with_a_stale_query_string_keeps_the_widget(app):
    """The browser sends the query string it has when the user acts; a change made before it applied the
    session's last write arrives with the older string, which must not reset the widgets (the explorer
    race: a second search typed right after the first came back as the first)."""
    app.sidebar.selectbox(key="f_range").select("All data").run()
    app.sidebar.selectbox(key="f_range").select("Last hour").run()
    assert app.query_params["range"] == "1h"
    app.query_params.clear()
    app.query_params["range"] = "all"  # stale: what the browser had before the last write
    app.sidebar.multiselect(key="f_service").select("payments").run()
    assert app.sidebar.selectbox(key="f_range").value == "Last hour"
    assert app.sidebar.multiselect(key="f_service").value == ["payments"]
    assert app.query_params["range"] == "1h" and app.query_params["service"] == "payments"


@pytest.mark.parametrize("params,expected", [
    ({"range": "all", "service": "payments"}, ("All data", ["payments"])),
    ({"range": "nonsense", "service": ["payments", "<script>"]}, ("Last 15 minutes", ["payments"])),
])
def test_url_state_on_first_run(monkeypatch, data_dir, params, expected):
    """A link opened in a new session: its parameters set the widgets; values a widget does not offer are dropped."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("IDEMWATCH_DATA", str(data_dir))
    at = AppTest.from_file(str(APP), default_timeout=60)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    assert (at.sidebar.selectbox(key="f_range").value, at.sidebar.multiselect(key="f_service").value) == expected


def test_counts_have_integer_ticks_and_operations_one_colour(app, html_chart):
    def colours(page: str) -> dict[str, str]:
        app.switch_page(page).run()
        chart = html_chart.read(app, "series")
        # each bar's bands in its series' legend colours, bottom up in name order
        for _, g in chart.rows.groupby("t"):
            stops = re.findall(r"(#[0-9A-Fa-f]+) ", g["bar"].iloc[0])
            assert stops == [chart.legend[n] for n in sorted(g["series"])]
        return chart.legend

    app.switch_page("app_pages/duplicates.py").run()
    chart = html_chart.read(app, "series")
    # 5 duplicates in one bin: ticks 0..5 and nothing fractional; the axis starts at 0
    assert chart.y_labels == ["0", "1", "2", "3", "4", "5"]
    assert chart.legend_title == "operation"  # the legend's title
    dup = colours("app_pages/duplicates.py")
    ret = colours("app_pages/retries.py")
    con = colours("app_pages/conflicts.py")
    assert dup["ProcessOrders"] == ret["ProcessOrders"]
    assert con["CapturePayment"] != dup["ProcessOrders"]
    # the colours are the whole dataset's sorted operations' (CapturePayment, ProcessOrders, the script-tag one sorts
    # first), whatever the page shows
    from dashboard.compute import PALETTE

    ops = sorted(["ProcessOrders", "CapturePayment", "<script>alert('op')</script>"])
    assert (dup["ProcessOrders"], con["CapturePayment"]) == (PALETTE[ops.index("ProcessOrders")],
                                                            PALETTE[ops.index("CapturePayment")])



def test_a_trend_that_cannot_be_drawn_says_so(app_factory, tmp_path, sample_mod):
    """Negative ages come only from odd or hostile log lines (the emitter never writes one), but the collector keeps
    them as logged: the Overview must still render, and say why the tile has no sparkline instead of raising."""
    rows = dict(sample_mod.TABLE_ROWS)
    rows["record_age"] = [(sample_mod.t(30), "orders", "ProcessOrders", "sqs", 3, -9.0, -6.0, -5.0)]
    sample_mod.write_data_dir(tmp_path, rows)
    at = app_factory(tmp_path)
    assert not at.exception
    assert tile_spark(at, "iterator_age") is None
    assert [c for c in captions(at) if c.startswith("no trend drawn")] == [
        "no trend drawn: sparkline values must be finite and >= 0"]  # one tile: Max iterator age, just asserted
    assert tile_spark(at, "duplicates")[1] == "area"  # the other tiles keep theirs
