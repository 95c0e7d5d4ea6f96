"""AppTest over what issue 14 added: the Lambda health page, other sources beside the emitter's signals
(library_signals, the idempotency-table scan), tile trends, URL state, explorer links, units and colours.

Expected values are derived by hand from sample_tables.py (comments there and below).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[3] / "dashboard" / "app.py"

pytestmark = pytest.mark.timeout(300)


_spec = importlib.util.spec_from_file_location("app_read_depth", Path(__file__).with_name("app_read.py"))
read = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(read)  # type: ignore[union-attr]


def metrics(at) -> dict[str, tuple[str, str | None]]:
    return {m.label: (m.value, m.delta or None) for m in at.main.metric}


def captions(at) -> list[str]:
    return [c.value for c in at.main.caption]


def frame(at, key: str):
    """The frame of the table keyed ``table-<key>``."""
    return read.table(at, key)


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
    assert g.iloc[0]["max_duration_ms"] == pytest.approx(3000.0)  # in ms: the unit of the smallest duration (200 ms)
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


def test_library_signal_beside_the_emitter_tile(app):
    # Powertools DuplicateCompleted: 4 in [10:25, 10:40), 1 in the previous window [10:10, 10:25)
    assert metrics(app)["Duplicates"] == ("5", "+3")  # the emitter's value is unchanged (never summed)
    assert "Powertools metrics: 4 (Δ +3)" in captions(app)
    app.switch_page("app_pages/duplicates.py").run()
    fig = read.figure(app, "series_library")
    assert read.ys(fig) == {"Powertools": [4]}  # the legend names the source
    assert read.xs(fig) == {"Powertools": ["2026-01-05T10:30:00.000"]}
    assert any("Powertools metrics: 4" in c for c in captions(app))


def tile_spark(at, signal_key: str) -> tuple[str, list[float]] | None:
    """The tile's trend figure: ("area" or "line", its y values), None when the tile has none."""
    try:
        fig = read.figure(at, f"spark-{signal_key}")
    except (KeyError, AssertionError):
        return None
    (tr,) = fig["data"]
    return "area" if tr.get("fill") == "tozeroy" else "line", tr["y"]


def test_tile_trends_are_sparklines_per_bin(app):
    chart, ys = tile_spark(app, "duplicates")
    # duplicates per 1-minute bin of [10:25, 10:40): 5 at 10:30, none elsewhere (15 bins); counts are areas
    assert chart == "area" and ys == [0.0] * 5 + [5.0] + [0.0] * 9
    chart, ys = tile_spark(app, "iterator_age")
    # max RecordAge per bin: 65000 ms at 10:30, 70 ms at 10:39, in minutes (the tile's unit); ages are lines
    assert chart == "line" and ys == pytest.approx([65000 / 60000, 70 / 60000])
    assert tile_spark(app, "poison")[0] == "line"
    assert tile_spark(app, "stuck") is None  # a state at the window end: no trend
    # the metric draws no sparkline of its own (the figure is the trend), and the tile help says what it shows
    dup = next(m for m in app.main.metric if m.label == "Duplicates")
    assert not list(dup.proto.chart_data)
    assert "Trend: the count per bin of the window" in dup.help
    fig = read.figure(app, "spark-duplicates")
    assert fig["layout"]["xaxis"]["range"] == ["2026-01-05T10:25:00", "2026-01-05T10:40:00"]


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
    assert list(scan["idempotency_key"]) == ["orders#9", "orders#3"]
    assert read.labels(at, "table_stuck")["idempotency_key"] == "idempotency key ↗"  # a click opens its trail


def test_stuck_ages_are_human(app):
    app.switch_page("app_pages/stuck_keys.py").run()
    s = frame(app, "stuck")
    assert list(s["age"]) == ["28.0 min", "13.0 min", "2.0 min"]  # 1680 s, 780 s, 120 s
    assert s.columns[0] == "age"


def test_id_columns_read_as_explorer_links(app):
    """Every id column of a table says (header and help) that a click opens the explorer; counts come first."""
    app.switch_page("app_pages/duplicates.py").run()
    keys = frame(app, "top_keys")
    assert keys["idempotency_key"][0] == "order-1" and read.shown(app, "top_keys")[:2] == ["idempotency_key", "events"]
    labels = read.labels(app, "top_keys")
    assert labels["idempotency_key"] == "idempotency key ↗" and labels["events"] == "events"
    assert read.labels(app, "top_events")["event_id"] == "event id ↗"


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


def test_counts_have_integer_ticks_and_operations_one_colour(app):
    def colours(page: str) -> dict[str, str]:
        app.switch_page(page).run()
        fig = read.figure(app, "series")
        return {n: tr["marker"]["color"] for n, tr in read.traces(fig).items()}

    app.switch_page("app_pages/duplicates.py").run()
    y = read.figure(app, "series")["layout"]["yaxis"]
    # 5 duplicates in one bin: a tick per whole number from 0, none fractional
    assert (y["tick0"], y["dtick"], y["tickformat"], y["range"]) == (0, 1, ",d", [0, 5 * 1.05])
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
    them as logged: the Overview still renders and draws them as they are, below the zero line."""
    rows = dict(sample_mod.TABLE_ROWS)
    rows["record_age"] = [(sample_mod.t(30), "orders", "ProcessOrders", "sqs", 3, -9.0, -6.0, -5.0)]
    sample_mod.write_data_dir(tmp_path, rows)
    at = app_factory(tmp_path)
    assert not at.exception
    chart, ys = tile_spark(at, "iterator_age")
    assert chart == "line" and ys == pytest.approx([-5.0])  # -5 ms, in ms
    fig = read.figure(at, "spark-iterator_age")
    assert fig["layout"]["yaxis"]["range"][0] < -5.0 < 0 < fig["layout"]["yaxis"]["range"][1]
    assert tile_spark(at, "duplicates")[0] == "area"  # the other tiles keep theirs
