"""AppTest (streamlit.testing.v1) over every page: the numbers shown equal the tables.

Expected values are derived by hand from tests/unit/dashboard/sample_tables.py (see the
comments there), not by calling the dashboard's own computations.
"""

from __future__ import annotations

import importlib.util
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from emitter.contract import Outcome

_spec = importlib.util.spec_from_file_location("app_read_app", Path(__file__).with_name("app_read.py"))
read = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(read)  # type: ignore[union-attr]

pytestmark = pytest.mark.timeout(300)

PAGES = ["app_pages/overview.py", "app_pages/duplicates.py", "app_pages/conflicts.py", "app_pages/in_progress.py",
         "app_pages/retries.py", "app_pages/poison.py", "app_pages/timeout_aborts.py", "app_pages/iterator_age.py",
         "app_pages/stuck_keys.py", "app_pages/explorer.py", "app_pages/lambda_health.py", "app_pages/alarms.py",
         "app_pages/configuration.py", "app_pages/diagnose.py"]


def metrics(at) -> dict[str, tuple[str, str | None]]:
    return {m.label: (m.value, m.delta or None) for m in at.main.metric}




def frame(at, key: str):
    """The frame of the table keyed ``table-<key>``."""
    return read.table(at, key)


def column_labels(at, key: str) -> dict[str, str]:
    """Column name -> header label of the table keyed ``table-<key>`` (its column config)."""
    return read.labels(at, key)


def by(at, dimension: str) -> None:
    """Pick the breakdown dimension (segmented control) and rerun."""
    at.get_by_key("bd_by").set_value(dimension).run()


def footer(at) -> str:
    caps = [c.value for c in at.main.caption if "rendered in" in c.value]
    assert len(caps) == 1, caps
    return caps[0]


def no_exception(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_overview_tiles_equal_tables(app, sample_mod):
    no_exception(app)
    got = metrics(app)
    for title, (value, delta) in sample_mod.EXPECTED["tiles"].items():
        assert got[title] == (value, delta), title
    assert "Overview" in footer(app)


def test_overview_window_is_default_preset(app):
    assert app.sidebar.selectbox(key="f_range").value == "Last 15 minutes"
    assert any("2026-01-05 10:25 – 2026-01-05 10:40 UTC · bin 1 min" in c.value for c in app.sidebar.caption)


def test_health_table(app, sample_mod):
    h = frame(app, "health").set_index("operation")
    assert list(h.index) == [sample_mod.XSS_OP, "ProcessOrders", "CapturePayment"]  # CRITICAL first, then by service
    orders = h.loc["ProcessOrders"]
    # [10:25, 10:40): received 30 + 10, duplicates 5, in-progress 2, retryable 3, poison 2 of 40
    assert (orders.received, orders.succeeded, orders.duplicates, orders.in_progress_collisions) == (40, 30, 5, 2)
    assert (orders.retryable_failures, orders.poison_messages, orders.stuck_keys) == (3, 2, 1)  # XSS_KEY
    assert (orders.poison_rate, orders.retry_rate) == pytest.approx((2 / 40, 3 / 40))
    assert orders.max_record_age_ms == pytest.approx(65000 / 60000)  # in min: 65 s = 1.08 min
    assert column_labels(app, "health")["max_record_age_ms"] == "max record age (min)"
    assert orders.health == "CRITICAL" and orders.reasons == "1 stuck key, poison 5.00%, retry 7.5%"
    assert orders.event_source == "sqs"
    pay = h.loc["CapturePayment"]
    # XSS_LINK (claimed 10:12, expired 10:17) is still stuck at 10:40: CRITICAL although claimed before the window
    assert (pay.received, pay.conflicts, pay.timeout_budget_aborts, pay.stuck_keys) == (8, 2, 1, 1)
    assert pay.health == "CRITICAL" and pay.reasons == "1 stuck key, 2 conflicts, 1 timeout abort"
    assert pd.isna(pay.max_record_age_ms)  # no record age measured for it (an API source)
    evil = h.loc[sample_mod.XSS_OP]
    assert (evil.received, evil.poison_messages, evil.health) == (4, 1, "CRITICAL")
    assert evil.poison_rate == pytest.approx(0.25)
    # the verdict and its inputs are shown by default; every other column is hidden, one click away in the grid's column menu
    assert read.shown(app, "health") == ["health", "operation", "received", "stuck_keys", "poison_rate", "retry_rate",
                                         "conflicts", "reasons"]
    assert sorted(read.shown(app, "health") + read.hidden(app, "health")) == sorted(frame(app, "health").columns)
    assert not any("↗" in label for label in column_labels(app, "health").values())  # no abbreviations, no marks


def test_all_data_range_has_no_delta(app, sample_mod):
    app.sidebar.selectbox(key="f_range").select("All data").run()
    no_exception(app)
    got = metrics(app)
    for title, value in sample_mod.EXPECTED["all_data_tiles"].items():
        assert got[title] == (value, None), title


def test_service_filter(app):
    app.sidebar.multiselect(key="f_service").select("payments").run()
    got = metrics(app)
    assert got["Duplicates"] == ("0", "+0")
    assert got["Payload conflicts"] == ("2", "+1")  # 10:26 x2 vs 10:20 x1
    assert got["Poison rate"] == ("0.00%", "+0.00 pp")
    assert got["Stuck keys"] == ("1", None)  # XSS_LINK (payments, claimed 10:12) is still stuck at 10:40
    assert got["Max iterator age"] == ("–", None)
    assert list(frame(app, "health")["operation"]) == ["CapturePayment"]
    # operations offered follow the service selection
    assert app.sidebar.multiselect(key="f_operation").options == ["CapturePayment"]


def test_event_source_filter_reaches_tables_without_event_source(app):
    app.sidebar.multiselect(key="f_source").select("sqs").run()
    got = metrics(app)
    assert got["Duplicates"] == ("5", "+3")
    assert got["Poison rate"] == ("5.00%", "+0.00 pp")  # 2/40 vs 1/20
    assert got["Stuck keys"] == ("1", None)  # stuck_keys has no event_source: filtered via (service, operation)


def test_custom_range(app):
    app.sidebar.selectbox(key="f_range").select("Custom range").run()
    app.sidebar.slider(key="f_custom").set_value((datetime(2026, 1, 5, 10, 10), datetime(2026, 1, 5, 10, 20))).run()
    got = metrics(app)
    # [10:10, 10:20): only the 10:15 bin; previous [10:00, 10:10) starts before the data -> no delta
    assert got["Duplicates"] == ("2", None)
    assert got["Poison rate"] == ("5.00%", None)  # 1/20
    assert got["Max iterator age"] == ("1.5 s", None)
    assert got["Stuck keys"] == ("1", None)  # at 10:20: XSS_LINK (expiry 10:17); XSS_KEY claimed later


@pytest.mark.parametrize("page,title,total,series", [
    ("app_pages/duplicates.py", "Duplicates", "5", {"ProcessOrders": [5]}),
    ("app_pages/conflicts.py", "Payload conflicts", "2", {"CapturePayment": [2]}),
    ("app_pages/in_progress.py", "In-progress collisions", "2", {"ProcessOrders": [2]}),
    ("app_pages/retries.py", "Retries", "3", {"ProcessOrders": [3]}),
    ("app_pages/timeout_aborts.py", "Timeout-budget aborts", "1", {"CapturePayment": [1]}),
])
def test_count_signal_pages(app, page, title, total, series):
    app.switch_page(page).run()
    no_exception(app)
    assert metrics(app)[f"{title} in window"] == (total, None)
    fig = read.figure(app, "series")
    assert read.ys(fig) == series
    for tr in fig["data"]:
        # a stacked bar per 1-minute bin, starting at its bin (offset 0), as wide as the bin (60,000 ms)
        assert tr["type"] == "bar" and tr["width"] == 60_000 and tr["offset"] == 0
        assert all(x.endswith(":00.000") for x in tr["x"])  # whole minutes (numpy ms timestamps)
    lay = fig["layout"]
    assert lay["barmode"] == "stack"
    assert lay["xaxis"]["range"] == ["2026-01-05T10:25:00", "2026-01-05T10:40:00"]  # the default window, UTC
    assert lay["xaxis"]["title"]["text"] == "time (UTC)"
    # an integer count axis from zero: a step of 1 below 5 (no half ticks), titled with its unit
    assert lay["yaxis"]["tickformat"] == ",d" and lay["yaxis"]["dtick"] == 1 and lay["yaxis"]["tick0"] == 0
    assert lay["yaxis"]["title"]["text"] == f"{title.lower()} (count)"
    # dragging selects a time span (the page's range follows); no browser-only zoom
    assert lay["dragmode"] == "select" and lay["selectdirection"] == "h"
    assert title in footer(app)


def test_duplicates_breakdown_and_offenders(app, sample_mod):
    app.switch_page("app_pages/duplicates.py").run()
    assert frame(app, "bdt_service").to_dict("records") == [{"events": 5, "service": "orders"}]
    by(app, "operation")
    assert frame(app, "bdt_operation").to_dict("records") == [{"events": 5, "operation": "ProcessOrders"}]
    by(app, "event_source")
    assert frame(app, "bdt_event_source").to_dict("records") == [{"events": 5, "event_source": "sqs"}]
    keys = frame(app, "top_keys")
    # trail: order-1 duplicate_completed x3 at 10:30, the script-tag key x2 at 10:31
    assert list(zip(keys["idempotency_key"], keys["events"])) == [("order-1", 3), (sample_mod.XSS_KEY, 2)]
    assert column_labels(app, "top_keys")["idempotency_key"] == "idempotency key ↗"  # a click opens its trail
    ev = frame(app, "top_events")
    assert list(zip(ev["event_id"], ev["events"], ev["max_attempt"])) == [("m-1", 3, 4), (sample_mod.XSS_LINK, 2, 2)]
    # an untrusted operation name is escaped plotly text: the HTML entities draw the literal name, no tag
    app.switch_page("app_pages/poison.py").run()
    fig = read.figure(app, "series")
    assert sample_mod.XSS_OP in read.traces(fig)
    assert all("<" not in tr["name"] for tr in fig["data"])


def test_retries_page_extras(app):
    app.switch_page("app_pages/retries.py").run()
    assert metrics(app)["Redeliveries in window (Redelivery)"] == ("4", None)  # rates 10:30 redeliveries = 4
    by(app, "error_code")
    codes = frame(app, "codes")
    assert list(zip(codes["error_code"], codes["events"])) == [("Throttled", 2), ("ServiceUnavailable", 1)]
    att = frame(app, "attempts")
    # received records of the window [10:25, 10:40) in the trail: order-1 at 10:30, attempts 2, 3 and 4
    assert list(zip(att["attempt"], att["received"])) == [(2, 1), (3, 1), (4, 1)]


def test_poison_page(app, sample_mod):
    app.switch_page("app_pages/poison.py").run()
    no_exception(app)
    m = metrics(app)
    assert m["Poison rate in window"] == ("5.77%", None)
    assert m["Poison messages / received"] == ("3 / 52", None)
    fig = read.figure(app, "series")
    series = read.ys(fig)
    # per-bin poison rate (a fraction, the axis shows %): ProcessOrders 10:30 2/30, 10:39 0/10; evil 10:35 1/4
    assert series["ProcessOrders"] == pytest.approx([2 / 30, 0.0])
    assert series[sample_mod.XSS_OP] == pytest.approx([0.25])
    evil = read.traces(fig)[sample_mod.XSS_OP]
    assert evil["x"] == ["2026-01-05T10:35:00.000"] and evil["customdata"] == ["2026-01-05 10:35–10:36 UTC"]
    # a rate is a line per series with a point per bin, on a percent axis
    assert {tr["mode"] for tr in fig["data"]} == {"lines+markers"} and len(fig["data"]) == 3
    assert fig["layout"]["yaxis"]["tickformat"] == ".1~%"
    assert fig["layout"]["yaxis"]["title"]["text"] == "poison rate (%)"
    by(app, "operation")
    bd = frame(app, "bdt_operation")
    assert list(bd["operation"]) == [sample_mod.XSS_OP, "ProcessOrders", "CapturePayment"]
    assert list(bd["rate"]) == pytest.approx([0.25, 0.05, 0.0])
    by(app, "error_code")
    codes = frame(app, "codes")
    assert list(zip(codes["error_code"], codes["events"])) == [("SchemaError", 2), (sample_mod.XSS_IMG, 1)]


def test_iterator_age_page(app):
    app.switch_page("app_pages/iterator_age.py").run()
    no_exception(app)
    assert metrics(app)["Max iterator age in window"] == ("1.1 min", None)
    fig = read.figure(app, "series")
    # the axis uses the unit of its largest value, the one the tile shows (65 s -> min)
    assert read.ys(fig)["max"] == pytest.approx([65000.0 / 60000, 70.0 / 60000])
    assert fig["layout"]["yaxis"]["title"]["text"] == "record age (min)"
    assert set(read.traces(fig)) == {"max", "p95 (max of 1-min p95)", "p50 (weighted)"}
    ages = frame(app, "top_age")
    # received records of order-1 at 10:30 in the column's one unit (min): 65 s, 900 ms, 900 ms; age column first
    assert list(ages["record_age_ms"]) == pytest.approx([65000 / 60000, 900 / 60000, 900 / 60000])
    assert read.shown(app, "top_age")[0] == "record_age_ms"  # the age first
    assert column_labels(app, "top_age")["record_age_ms"] == "record age (min)"


def test_conflicts_page_lists_conflicting_keys(app):
    app.switch_page("app_pages/conflicts.py").run()
    ck = frame(app, "conflicting")
    assert list(zip(ck["idempotency_key"], ck["conflicts"])) == [("pay-7", 2)]  # pay-3 last seen 10:20


def test_stuck_keys_page(app, sample_mod):
    app.switch_page("app_pages/stuck_keys.py").run()
    no_exception(app)
    m = metrics(app)
    # window [10:25, 10:40): every key IN_PROGRESS at 10:40 counts, including XSS_LINK claimed at 10:12
    assert m["Stuck (expired IN_PROGRESS)"] == ("2", None) and m["Still IN_PROGRESS"] == ("3", None)
    s = frame(app, "stuck")
    assert list(s["key"]) == [sample_mod.XSS_LINK, sample_mod.XSS_KEY, "k-live"]
    assert list(s["expired"]) == [True, True, False]
    assert list(s["age_s"]) == [1680.0, 780.0, 120.0]  # 10:40 - 10:12, 10:40 - 10:27, 10:40 - 10:38
    assert str(s["expiry"].iloc[0]) == "2026-01-05 10:17:00"
    assert "Stuck is a state, not an event" in app.main.caption[0].value
    app.toggle(key="stuck_only").set_value(True).run()
    assert list(frame(app, "stuck")["key"]) == [sample_mod.XSS_LINK, sample_mod.XSS_KEY]


def test_stuck_keys_relative_to_window_end(app, sample_mod):
    """A custom window ending at 10:30: k-live (claimed 10:38) is not yet claimed; XSS_KEY (claimed 10:27,
    expiry 10:32) is IN_PROGRESS but not yet expired; ages are measured to 10:30."""
    app.sidebar.selectbox(key="f_range").select("Custom range").run()
    app.sidebar.slider(key="f_custom").set_value((datetime(2026, 1, 5, 10, 20), datetime(2026, 1, 5, 10, 30))).run()
    assert metrics(app)["Stuck keys"] == ("1", None)
    app.switch_page("app_pages/stuck_keys.py").run()
    s = frame(app, "stuck")
    assert list(s["key"]) == [sample_mod.XSS_LINK, sample_mod.XSS_KEY]
    assert list(s["expired"]) == [True, False]
    assert list(s["age_s"]) == [1080.0, 180.0]


def test_explorer_search_by_correlation_id(app):
    app.switch_page("app_pages/explorer.py").run()
    app.selectbox(key="ex_field").select("Correlation id").run()
    app.text_input(key="ex_value").input("corr-9").run()
    no_exception(app)
    rows = frame(app, "trail_rows")
    assert len(rows) == 9 and rows["matched"].all()
    assert list(rows["outcome"]) == [Outcome.RECEIVED.value, Outcome.CLAIMED.value, Outcome.SUCCEEDED.value] + [
        Outcome.RECEIVED.value, Outcome.DUPLICATE_COMPLETED.value] * 3
    assert rows["timestamp"].is_monotonic_increasing
    assert metrics(app)["Keys"] == ("1", None)


def test_explorer_link_prefills_search(app):
    app.query_params["field"] = "Correlation id"
    app.query_params["q"] = "corr-p"
    app.switch_page("app_pages/explorer.py").run()
    rows = frame(app, "trail_rows")
    assert list(rows["idempotency_key"]) == ["pay-7", "pay-7"]  # the two conflicting requests of pay-7
    assert app.checkbox(key="ex_partial").value is True  # substring search is on by default
    assert app.text_input(key="ex_value").value == "corr-p"
    assert app.query_params["q"] == "corr-p"


def test_explorer_request_id_expands_to_whole_key_trail(app, sample_mod):
    app.switch_page("app_pages/explorer.py").run()
    app.selectbox(key="ex_field").select("Request id").run()
    app.text_input(key="ex_value").input("r-5").run()
    rows = frame(app, "trail_rows")
    # r-5 is the claim of the script-tag key; its trail adds the two duplicates (same key / event id)
    assert list(rows["function_request_id"]) == ["r-5", "r-60", "r-61"]
    assert list(rows["matched"]) == [True, False, False]
    assert list(rows["idempotency_key"]) == [sample_mod.XSS_KEY] * 3


def test_explorer_untrusted_value_shown_as_text(app, sample_mod):
    app.switch_page("app_pages/explorer.py").run()
    app.text_input(key="ex_value").input(sample_mod.XSS_LINK).run()
    rows = frame(app, "trail_rows")
    # XSS_LINK is an event id (x2 duplicates, plus the claim sharing the key) and a key (poison record)
    assert set(rows["function_request_id"]) == {"r-5", "r-60", "r-61", "r-10"}
    app.text_input(key="ex_value").input("no-such-<b>key</b> [x](javascript:alert(1))").run()
    info = app.main.info[0].value
    assert "<b>" not in info and "](" not in info
    assert "no\\-such\\-\\<b\\>key\\<\\/b\\> \\[x\\]\\(javascript\\:alert\\(1\\)\\)" in info


def test_explorer_substring_search_escapes_like_wildcards(app):
    app.switch_page("app_pages/explorer.py").run()
    assert app.checkbox(key="ex_partial").value is True  # on by default: a partial key finds its records
    app.text_input(key="ex_value").input("ORDER-").run()
    assert set(frame(app, "trail_rows")["idempotency_key"]) == {"order-1"}
    app.text_input(key="ex_value").input("%").run()  # a literal percent sign matches nothing here
    assert app.main.info and "No trail records" in app.main.info[0].value
    app.checkbox(key="ex_partial").uncheck().run()  # exact: a part of a key finds nothing
    app.text_input(key="ex_value").input("order-").run()
    assert app.main.info and "No trail records" in app.main.info[0].value


@pytest.mark.parametrize("page", PAGES)
def test_no_unescaped_untrusted_text_in_markdown(app, sample_mod, page):
    """Every markdown-rendered element (markdown, caption, info, title, metric labels, ...) of every page
    must not carry a planted string raw; dataframes carry it as data (rendered as text by the grid)."""
    app.switch_page(page).run()
    no_exception(app)
    planted = (sample_mod.XSS_KEY, sample_mod.XSS_LINK, sample_mod.XSS_IMG, sample_mod.XSS_OP, "javascript:")
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "title", "subheader", "header"):
        for el in getattr(app, kind):
            for s in planted:
                assert s not in str(el.value), (kind, el.value)
    for m in app.metric:
        for s in planted:
            assert s not in m.label and s not in str(m.value)


def test_untrusted_operation_is_a_plain_filter_option(app, sample_mod):
    assert sample_mod.XSS_OP in app.sidebar.multiselect(key="f_operation").options
    app.sidebar.multiselect(key="f_operation").select(sample_mod.XSS_OP).run()
    assert metrics(app)["Poison rate"] == ("25.00%", None)  # 1/4; previous window had no evil traffic -> 0 rec


def test_alarms_page_renders(app):
    app.switch_page("app_pages/alarms.py").run()
    no_exception(app)
    assert app.main.title[0].value == "Alarms"
    assert "Alarms" in footer(app)
