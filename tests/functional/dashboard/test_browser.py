"""Real-browser tests: `streamlit run` on a free loopback port, Debian chromium via Playwright.

Every page is opened the way a person does (the sidebar navigation), its numbers compared with an independent DuckDB
oracle over the Parquet tables, its console checked for errors and its tables for columns hidden out of reach; a chart
is zoomed (the time range follows: URL and numbers), a key opens the explorer in the same tab with the filters kept,
and Back returns to what was shown before. Untrusted names stay text in charts and tables. Screenshots go to
test-artifacts/dashboard/.

The helpers wait for the app to be idle (no rerun in flight, no stale element, the page's footer drawn) before each
action and never retry one: a flaky step is a defect to fix.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from dashboard.compute import format_value
from dashboard.constants import SIGNALS, SignalKind
from dashboard.serve import DashboardServer

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]  # each starts a server: 15-60 s

TIMEOUT_MS = 60_000
VIEWPORT = {"width": 1280, "height": 1000}
NAV = '[data-testid="stSidebarNav"] a'
PAGES = [s.title for s in SIGNALS if s.key != "stuck"] + ["Stuck keys", "Events explorer", "Lambda health", "Alarms",
                                                               "Configuration", "Diagnose"]
WINDOW = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d) – (\d{4}-\d\d-\d\d \d\d:\d\d) UTC")
_IDLE = """() => document.querySelectorAll('[data-stale="true"]').length === 0
    && !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSkeleton"]')"""
PROBE_404 = re.compile(r"/[a-z_]+/_stcore/(health|host-config)$")
"""Streamlit's frontend, loaded at a page's own URL (``/poison``), first tries that path as the app's base URL
(``/poison/_stcore/health``, ``/poison/_stcore/host-config``: 404) and then ``/``. Only a tab opened at a page's URL
does this; navigating inside the app never does. See docs/dashboard.md ("Console")."""


class Tab:
    """A browser page plus what went wrong in it: console errors, uncaught exceptions, dialogs, requests that leave
    127.0.0.1, failed responses."""

    def __init__(self, browser, url: str) -> None:
        self.page = browser.new_page(viewport=VIEWPORT)
        self.errors: list[str] = []
        self.probes: list[str] = []
        p = self.page
        p.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        p.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        p.on("dialog", lambda d: (self.errors.append(f"dialog: {d.message}"), d.dismiss()))
        p.on("request", lambda r: None if _loopback(r.url) else self.errors.append(f"left 127.0.0.1: {r.url}"))
        p.on("response", self._response)
        p.goto(url)

    def _response(self, r) -> None:
        if r.status >= 400:
            (self.probes if PROBE_404.search(urlsplit(r.url).path) else self.errors).append(f"{r.status} {r.url}")

    def clean(self, deep_link: bool = False) -> None:
        """No console error, no exception box, no script run from data. ``deep_link``: the tab was opened at a
        page's URL, so Streamlit's two base-URL probes (:data:`PROBE_404`) are expected and nothing else."""
        p = self.page
        if deep_link:
            # each 404 also logs one console line ("Failed to load resource")
            n = len(self.probes)
            extra = [e for e in self.errors if "Failed to load resource" in e][n:]
            others = [e for e in self.errors if "Failed to load resource" not in e]
            assert n in (0, 2) and extra == [] and others == [], (self.probes, self.errors)
        else:
            assert self.errors == [] and self.probes == [], (self.errors, self.probes)
        exc = p.locator('[data-testid="stException"]')
        assert exc.count() == 0, exc.first.inner_text()
        assert p.get_by_text("Page not found").count() == 0
        injected = p.evaluate("""() => ({
            scripts: [...document.querySelectorAll('script')].filter(s => (s.textContent || '').includes('alert(')).length,
            jsLinks: document.querySelectorAll('a[href^="javascript:" i]').length,
            imgs: document.querySelectorAll('img[src="x"]').length,
        })""")
        assert injected == {"scripts": 0, "jsLinks": 0, "imgs": 0}, injected

    def close(self) -> None:
        self.page.close()


def _loopback(url: str) -> bool:
    u = urlsplit(url)
    return u.scheme in ("data", "blob", "about") or u.hostname == "127.0.0.1"


def idle(page, title: str | None = None) -> None:
    """The app is idle: no rerun in flight, no stale element, no loading skeleton (and, with ``title``, that page's
    footer is drawn)."""
    if title is not None:
        page.get_by_text(f"idemwatch · {title} · rendered in").wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(_IDLE, timeout=TIMEOUT_MS)


def choose(page, key: str, option: str) -> None:
    """Pick ``option`` in the select widget keyed ``key``, once the app is idle."""
    idle(page)
    page.locator(f".st-key-{key} input").first.click()
    page.get_by_role("option", name=option, exact=True).click(timeout=TIMEOUT_MS)


def go(page, title: str) -> None:
    """Open a page through the sidebar navigation and wait until it is drawn."""
    idle(page)
    page.locator(NAV, has_text=re.compile(f"^{re.escape(title)}$")).click()
    idle(page, title)


def window_of(page) -> tuple[datetime, datetime]:
    text = page.locator('[data-testid="stSidebar"]').inner_text()
    m = WINDOW.search(text)
    assert m, text
    return tuple(datetime.strptime(x, "%Y-%m-%d %H:%M") for x in m.groups())  # type: ignore[return-value]


def metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]', has=page.locator('[data-testid="stMetricLabel"]',
                                                                    has_text=re.compile(f"^{re.escape(label)}$")))
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def plotted(page, key: str) -> list[dict]:
    """The traces plotly drew in the chart keyed ``key``: name (as drawn), type, y values."""
    page.locator(f".st-key-{key} .js-plotly-plot .main-svg").first.wait_for(timeout=TIMEOUT_MS)
    # a numpy array arrives as a typed array ({dtype, bdata}); plotly.js keeps the decoded values in _inputArray
    return page.evaluate(f"""() => document.querySelector('.st-key-{key} .js-plotly-plot').data
        .map(t => ({{name: t.name, type: t.type,
                     y: Array.from((t.y && t.y._inputArray) || t.y || [])}}))""")


def legend(page, key: str) -> list[str]:
    return page.evaluate(f"""() => [...document.querySelectorAll('.st-key-{key} .legendtext')]
        .map(e => e.textContent)""")


def hidden_overflow(page) -> list[str]:
    """Tables whose default columns do not fit their grid (a column reachable only by scrolling sideways)."""
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].filter(g => {
        const s = g.querySelector('.dvn-scroller');
        return s && s.scrollWidth > s.clientWidth + 1; })
        .map(g => (g.closest('[class*="st-key-table-"]') || {className: '?'}).className.match(/st-key-table-\\S+|\\?/)[0])""")


def tables_drawn(page) -> None:
    page.wait_for_function("""() => [...document.querySelectorAll('[data-testid="stDataFrame"]')]
        .every(g => g.querySelector('canvas'))""", timeout=TIMEOUT_MS)


def check_all_pages(browser, data_dir: Path, artifacts: Path, tag: str, Oracle) -> dict[str, str]:
    """Open the Overview, then every page through the navigation: values against the oracle, every chart drawn,
    no console error, no table hiding a default column off its grid, a screenshot each."""
    with DashboardServer(data_dir) as srv:
        tab = Tab(browser, srv.url + "/")
        page = tab.page
        idle(page, "Overview")
        oracle = Oracle(data_dir, *window_of(page))
        page.wait_for_function(f"""() => document.querySelectorAll('[class*="st-key-tile-"] [data-testid="stMetricValue"]')
            .length >= {len(SIGNALS)}""", timeout=TIMEOUT_MS)
        shown = {sig.title: metric(page, sig.title) for sig in SIGNALS}
        for sig in SIGNALS:
            assert shown[sig.title] == format_value(sig, oracle.value(sig)), sig.title
        # every trend is a drawn plotly figure (Stuck keys has none: a state, not a trend)
        for sig in SIGNALS:
            if sig.kind is not SignalKind.STUCK and page.locator(f".st-key-spark-{sig.key}").count():
                plotted(page, f"spark-{sig.key}")
        tables_drawn(page)
        assert hidden_overflow(page) == []
        tab.clean()
        page.screenshot(path=str(artifacts / f"{tag}-overview.png"), full_page=True)
        assert page.locator(NAV).all_inner_texts() == ["Overview"] + PAGES
        for sig in SIGNALS:
            go(page, sig.title)
            if sig.kind is SignalKind.COUNT and oracle.count(sig.outcome.value):
                drawn = plotted(page, "series")
                assert sum(sum(t["y"]) for t in drawn) == oracle.count(sig.outcome.value), sig.title
            elif sig.kind in (SignalKind.RATE, SignalKind.AGE) and oracle.value(sig) is not None:
                plotted(page, "series")
            tables_drawn(page)
            assert hidden_overflow(page) == [], sig.title
            tab.clean()
            page.screenshot(path=str(artifacts / f"{tag}-{sig.key}.png"), full_page=True)
        for title in ("Events explorer", "Lambda health", "Alarms", "Configuration", "Diagnose"):
            go(page, title)
            for key in ("lambda_invocations", "alarm_timeline"):
                if page.locator(f".st-key-{key}").count():
                    plotted(page, key)
            tables_drawn(page)
            assert hidden_overflow(page) == [], title
            tab.clean()
            page.screenshot(path=str(artifacts / f"{tag}-{title.split()[0].lower()}.png"), full_page=True)
        tab.close()
    return shown


def test_every_page_on_sample_tables(browser, sample_data, artifacts, oracle_cls):
    shown = check_all_pages(browser, sample_data, artifacts, "sample", oracle_cls)
    assert shown["Duplicates"] == "5" and shown["Poison rate"] == "5.77%"  # hand-derived (sample_tables.py)


def test_every_page_on_seeded_demo(browser, demo_data, artifacts, oracle_cls):
    assert check_all_pages(browser, demo_data, artifacts, "demo", oracle_cls)


def test_diagnose_evidence_opens_the_explorer_in_this_tab(browser, demo_data, artifacts):
    """The Diagnose page of the demo with every anti-pattern built in: its found findings are diagnose.json's
    (read here with json); a click on the first evidence record's event id opens the explorer in the same tab,
    searching that id, with the time range kept; Back returns to the Diagnose page."""
    doc = json.loads((demo_data / "diagnose.json").read_text(encoding="utf-8"))
    found = [f for f in doc["findings"] if f["status"] == "fail"]
    with DashboardServer(demo_data) as srv:
        tab = overview_all_data(browser, srv)
        page = tab.page
        go(page, "Diagnose")
        assert metric(page, "Found") == str(len(found))
        tables_drawn(page)
        assert hidden_overflow(page) == []
        # the default pick: the first found finding in the page's order (by function, operation, rule)
        first = min(found, key=lambda f: (f["function"], f["operation"], f["rule"]))
        rec = first["examples"][0]["records"][0]
        pick = f"{first['rule']} · {first['function']} ({first['operation']})"
        assert page.locator(".st-key-dg_finding input").first.input_value() == pick
        page.screenshot(path=str(artifacts / "demo-diagnose-found.png"), full_page=True)
        grid = page.locator(".st-key-table-evidence [data-testid='stDataFrame']")
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        # default columns: example 130, time 170, outcome 120, then the event id; the first row below the header
        page.mouse.click(box["x"] + 130 + 170 + 120 + 40, box["y"] + 35 + 17)
        page.wait_for_url(re.compile(r"/explorer\?"), timeout=TIMEOUT_MS)
        idle(page, "Events explorer")
        q = parse_qs(urlsplit(page.url).query)
        assert q == {"range": ["all"], "field": ["Event id"], "q": [rec["event_id"]]}, q
        assert int(metric(page, "Matched directly").replace(",", "")) >= 1
        page.go_back()
        page.wait_for_url(re.compile(r"/diagnose\?"), timeout=TIMEOUT_MS)
        idle(page, "Diagnose")
        tab.clean()
        tab.close()


def overview_all_data(browser, srv) -> Tab:
    """A new tab on the Overview with the time range set to "All data" in the sidebar."""
    tab = Tab(browser, srv.url + "/")
    idle(tab.page, "Overview")
    choose(tab.page, "f_range", "All data")
    wait_url(tab.page, "range=all")  # the rerun has run (idle alone can pass before it starts)
    idle(tab.page, "Overview")
    return tab


def drag(page, key: str, x0: float, x1: float) -> None:
    """Drag across the chart keyed ``key`` from ``x0`` to ``x1`` (fractions of the plot's width), mid-height."""
    area = page.locator(f".st-key-{key} .nsewdrag").first
    area.scroll_into_view_if_needed()
    box = area.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * x0, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * x1, y, steps=8)
    page.mouse.up()


def test_zooming_a_chart_sets_the_time_range_and_back_undoes_it(browser, sample_data, oracle_cls, artifacts):
    """Drag across the Duplicates chart: the sidebar's window becomes the span dragged, the URL says so, the numbers
    are the oracle's for it; one history entry, and Back once returns to the whole range."""
    with DashboardServer(sample_data) as srv:
        tab = overview_all_data(browser, srv)
        page = tab.page
        go(page, "Duplicates")
        whole = window_of(page)
        assert metric(page, "Duplicates in window") == f"{oracle_cls(sample_data, *whole).count('duplicate_completed')}"
        before = page.evaluate("history.length")
        drag(page, "series", 0.25, 0.75)
        page.wait_for_function("() => location.search.includes('range=custom')", timeout=TIMEOUT_MS)
        idle(page, "Duplicates")
        lo, hi = window_of(page)
        assert whole[0] < lo < hi < whole[1], (whole, lo, hi)
        q = parse_qs(urlsplit(page.url).query)
        assert q["range"] == ["custom"] and q["window"] == [f"{lo:%Y-%m-%dT%H:%M}/{hi:%Y-%m-%dT%H:%M}"]
        page.wait_for_function("() => document.querySelector('.st-key-f_range input').value === 'Custom range'",
                               timeout=TIMEOUT_MS)
        expected = oracle_cls(sample_data, lo, hi).count("duplicate_completed")
        assert metric(page, "Duplicates in window") == f"{expected}"
        if expected:
            assert sum(sum(t["y"]) for t in plotted(page, "series")) == expected
        assert page.evaluate("history.length") == before + 1  # one entry for one drag
        page.screenshot(path=str(artifacts / "zoomed-duplicates.png"), full_page=True)
        page.go_back()
        page.wait_for_function("() => location.search === '?range=all'", timeout=TIMEOUT_MS)
        # the same page reruns for the URL Back restored: until that rerun starts, the page is idle with the zoomed
        # window still drawn, so wait for the sidebar to show the whole range (a timeout if it never comes back)
        shown = f"{whole[0]:%Y-%m-%d %H:%M} – {whole[1]:%Y-%m-%d %H:%M} UTC"
        page.wait_for_function("t => document.querySelector('[data-testid=\"stSidebar\"]').innerText.includes(t)",
                               arg=shown, timeout=TIMEOUT_MS)
        idle(page, "Duplicates")
        assert window_of(page) == whole
        assert metric(page, "Duplicates in window") == f"{oracle_cls(sample_data, *whole).count('duplicate_completed')}"
        tab.clean()
        tab.close()


def test_a_key_opens_the_explorer_in_this_tab_with_the_filters(browser, sample_data, artifacts):
    """A click on a top key: the explorer in the same tab (no new page), searching that key, with the time range and
    service filter kept; Back once shows the Duplicates page as it was."""
    with DashboardServer(sample_data) as srv:
        tab = overview_all_data(browser, srv)
        page = tab.page
        choose(page, "f_service", "orders")
        page.keyboard.press("Escape")
        wait_url(page, "service=orders")
        idle(page, "Overview")
        go(page, "Duplicates")
        assert parse_qs(urlsplit(page.url).query) == {"range": ["all"], "service": ["orders"]}
        tables_drawn(page)
        grid = page.locator(".st-key-table-top_keys [data-testid='stDataFrame']")
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        pages_before = len(page.context.pages)
        page.mouse.click(box["x"] + 30, box["y"] + 35 + 17)  # the first key (order-1), below the header row
        page.wait_for_url(re.compile(r"/explorer\?"), timeout=TIMEOUT_MS)
        idle(page, "Events explorer")
        assert len(page.context.pages) == pages_before  # the same tab
        q = parse_qs(urlsplit(page.url).query)
        assert q == {"range": ["all"], "service": ["orders"], "field": ["Idempotency key"], "q": ["order-1"]}, q
        page.wait_for_function("""() => document.querySelector('.st-key-ex_value input').value === 'order-1'""",
                               timeout=TIMEOUT_MS)
        assert page.locator(".st-key-f_range input").first.input_value() == "All data"
        assert "orders" in page.locator(".st-key-f_service").inner_text()
        assert metric(page, "Keys") == "1"
        page.screenshot(path=str(artifacts / "key-link-explorer.png"), full_page=True)
        page.go_back()
        page.wait_for_url(re.compile(r"/duplicates\?"), timeout=TIMEOUT_MS)
        idle(page, "Duplicates")
        assert page.locator(".st-key-f_range input").first.input_value() == "All data"
        assert "orders" in page.locator(".st-key-f_service").inner_text()
        tab.clean()
        tab.close()


def test_details_and_navigation_are_one_history_entry(browser, sample_data):
    """A tile's Details link keeps the range and adds one history entry: Back once is the Overview again."""
    with DashboardServer(sample_data) as srv:
        tab = overview_all_data(browser, srv)
        page = tab.page
        before = page.evaluate("history.length")
        page.locator(".st-key-tile-poison a", has_text="Details").click()
        idle(page, "Poison rate")
        assert urlsplit(page.url).path == "/poison" and parse_qs(urlsplit(page.url).query) == {"range": ["all"]}
        assert page.evaluate("history.length") == before + 1
        page.go_back()
        idle(page, "Overview")
        assert urlsplit(page.url).path == "/" and parse_qs(urlsplit(page.url).query) == {"range": ["all"]}
        tab.clean()
        tab.close()


def test_lambda_health_draws_its_capacity_charts_when_opened_and_back_closes_them(browser, sample_data):
    """The memory and init duration charts are drawn only once their expander is opened: the URL gets ``more=1``
    (one history entry), and Back shows the page as it was, expander closed."""
    with DashboardServer(sample_data) as srv:
        tab = overview_all_data(browser, srv)
        page = tab.page
        go(page, "Lambda health")
        assert page.locator(".st-key-lambda_memory, .st-key-lambda_init").count() == 0
        before = page.evaluate("history.length")
        page.get_by_text("Memory and cold-start init duration per bin").click()
        wait_url(page, "more=1")
        idle(page, "Lambda health")
        for key in ("lambda_memory", "lambda_init"):
            assert plotted(page, key), key
        assert parse_qs(urlsplit(page.url).query) == {"range": ["all"], "more": ["1"]}
        assert page.evaluate("history.length") == before + 1
        page.go_back()
        idle(page, "Lambda health")
        page.wait_for_function("() => !document.querySelector('.st-key-lambda_memory')", timeout=TIMEOUT_MS)
        assert parse_qs(urlsplit(page.url).query) == {"range": ["all"]}
        tab.clean()
        tab.close()


HOSTILE_OPS = {"ProcessOrders": "<img src=x onerror=alert(1)>", "CapturePayment": "**bold** $x$ :red[y]"}
"""Operation renames for the hostile-names data: an HTML payload and Streamlit markdown (bold, LaTeX, colour)."""


@pytest.fixture(scope="module")
def hostile_data(tmp_path_factory, sample_mod) -> Path:
    """The sample tables with two operations renamed to hostile strings, in every table."""
    rows = {name: [tuple(HOSTILE_OPS.get(v, v) if isinstance(v, str) else v for v in r) for r in table]
            for name, table in sample_mod.TABLE_ROWS.items()}
    return sample_mod.write_data_dir(tmp_path_factory.mktemp("browser-hostile"), rows)


def test_hostile_names_are_literal_text_in_charts_and_tables(browser, hostile_data, sample_mod, artifacts):
    """Operation names with HTML, a script tag and markdown/LaTeX: plotly's legends draw each literally and make no
    element of it; the health grid lists them as text; the explorer shows a planted link as text."""
    img, md = HOSTILE_OPS["ProcessOrders"], HOSTILE_OPS["CapturePayment"]
    with DashboardServer(hostile_data) as srv:
        tab = Tab(browser, srv.url + "/")
        page = tab.page
        idle(page, "Overview")
        tables_drawn(page)
        for title, name in (("Poison rate", img), ("Duplicates", img), ("Payload conflicts", md)):
            go(page, title)
            plotted(page, "series")
            assert name in legend(page, "series"), (title, legend(page, "series"))
            tags = page.evaluate("""() => [...document.querySelectorAll('.st-key-series .legend *')]
                .map(e => e.tagName.toLowerCase())""")
            assert not {"img", "b", "a", "script", "span"} & set(tags) - {"text"}, tags
            tab.clean()
            page.screenshot(path=str(artifacts / f"hostile-{title.split()[0].lower()}.png"))
        go(page, "Poison rate")
        assert sample_mod.XSS_OP in legend(page, "series")
        go(page, "Events explorer")
        box = page.locator(".st-key-ex_value input")
        box.fill("nothing " + sample_mod.XSS_LINK)
        box.press("Enter")
        alert = page.locator('[data-testid="stAlertContentInfo"]')
        alert.wait_for(timeout=TIMEOUT_MS)
        assert "nothing [x](javascript:alert(1))" in alert.inner_text() and alert.locator("a").count() == 0
        tab.clean()
        tab.close()


def sidebar_state(page) -> tuple:
    """What the sidebar shows: the time range, the selected services, the window caption."""
    rng = page.locator(".st-key-f_range input").first.input_value().strip()
    chips = tuple(x.strip() for x in page.locator(".st-key-f_service").inner_text().replace("Service", "").split()
                  if x.strip() not in ("All", ""))
    return rng, chips, window_of(page)


def wait_url(page, *parts: str) -> None:
    page.wait_for_function("parts => parts.every(p => window.location.search.includes(p))", arg=list(parts),
                           timeout=TIMEOUT_MS)


URL_PAGES = ("Overview", "Poison rate", "Events explorer", "Lambda health", "Alarms")
"""Pages the URL-state test walks: the sidebar's state is one mechanism for every page (``dashboard.urlstate``), so
a page of each kind (tiles, a signal, the explorer, Lambda health, the alarms) rather than all thirteen."""


def test_every_page_keeps_its_filters_in_the_url(browser, sample_data):
    """On a page of each kind: change the time range and a filter, open the URL in a fresh tab (a new session, as a
    shared link would be) and see the same state; Back undoes the last filter change."""
    with DashboardServer(sample_data) as srv:
        tab = Tab(browser, srv.url + "/")
        page = tab.page
        idle(page, "Overview")
        for title in URL_PAGES:
            go(page, title)
            choose(page, "f_range", "All data")
            idle(page, title)
            wait_url(page, "range=all")
            choose(page, "f_service", "orders")
            page.keyboard.press("Escape")
            idle(page, title)
            wait_url(page, "range=all", "service=orders")
            state = sidebar_state(page)
            assert state[:2] == ("All data", ("orders",)), (title, state)
            fresh = Tab(browser, page.url)
            idle(fresh.page, title)
            fresh.page.wait_for_function("""() => (document.querySelector('.st-key-f_service') || {innerText: ''})
                .innerText.includes('orders')""", timeout=TIMEOUT_MS)
            assert sidebar_state(fresh.page) == state, (title, page.url)
            fresh.clean(deep_link=True)
            fresh.close()
            # Back: the service filter change is undone, the range stays
            page.go_back()
            page.wait_for_function("() => !window.location.search.includes('service=')", timeout=TIMEOUT_MS)
            idle(page, title)
            page.wait_for_function("""() => !document.querySelector('.st-key-f_service').innerText
                .includes('orders')""", timeout=TIMEOUT_MS)
            assert sidebar_state(page)[:2] == ("All data", ()), title
            # the next page starts from the whole range again
            choose(page, "f_range", "Last 15 minutes")
            idle(page, title)
        tab.clean()
        tab.close()


def test_explorer_pages_a_large_result(browser, tmp_path_factory, sample_mod, artifacts):
    """A search of more records than a page (1,234 records of one correlation id, 500 a page): the exact total, the
    stepper to the next page, the page in the URL (a fresh tab opens the same page), Back to the previous page."""
    n = 1234
    data = sample_mod.write_data_dir(tmp_path_factory.mktemp("browser-bulk"), sample_mod.with_bulk_trail(n))
    with DashboardServer(data) as srv:
        tab = Tab(browser, srv.url + f"/explorer?field=Correlation+id&q={sample_mod.BULK_CORRELATION}&page=2")
        page = tab.page

        def on_page(p, first: int, last: int) -> None:
            p.get_by_text(f"Showing records {first:,}–{last:,} of {n:,}").wait_for(timeout=TIMEOUT_MS)
            idle(p, "Events explorer")
            assert p.locator('[data-testid="stMetricValue"]').first.inner_text().strip() == f"{n:,}"
            # the grid holds this page's rows only (glide's accessibility table: header row + one per record)
            p.wait_for_function("""n => { const g = document.querySelector('.st-key-table-trail_rows [aria-rowcount]');
                return g && Number(g.getAttribute('aria-rowcount')) === n + 1; }""", arg=last - first + 1,
                                timeout=TIMEOUT_MS)

        on_page(page, 501, 1000)
        assert page.locator(".st-key-ex_page input").input_value() == "2"
        page.locator('.st-key-ex_page [data-testid="stNumberInputStepUp"]').click()
        wait_url(page, "page=3")
        on_page(page, 1001, n)
        fresh = Tab(browser, page.url)
        on_page(fresh.page, 1001, n)
        assert fresh.page.locator(".st-key-ex_page input").input_value() == "3"
        fresh.clean(deep_link=True)
        fresh.close()
        page.go_back()
        page.wait_for_function("() => window.location.search.includes('page=2')", timeout=TIMEOUT_MS)
        on_page(page, 501, 1000)
        tab.clean(deep_link=True)
        tab.close()
