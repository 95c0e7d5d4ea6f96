"""Real-browser test: `streamlit run` on a free loopback port, Debian chromium via Playwright.

Opens every page, checks that tiles and charts render with the values an independent
DuckDB oracle computes from the Parquet tables, that no exception box (stException)
appears, that planted script/link strings never execute or become elements, and saves a
screenshot per page under test-artifacts/dashboard/.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from dashboard.compute import format_value
from dashboard.constants import SIGNALS, SignalKind
from dashboard.serve import DashboardServer

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

TIMEOUT_MS = 60_000
NAV = '[data-testid="stSidebarNav"] a'
PAGES = [s.title for s in SIGNALS if s.key != "stuck"] + ["Stuck keys", "Events explorer", "Lambda health", "Alarms",
                                                               "Configuration"]
WINDOW = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d) – (\d{4}-\d\d-\d\d \d\d:\d\d) UTC")


_SETTLED = """() => document.querySelectorAll('[data-stale="true"]').length === 0
    && !document.querySelector('[data-testid="stStatusWidget"]')"""


def wait_rendered(page, title: str) -> None:
    """The page's footer is on screen and the app is idle (no rerun in flight, no stale element)."""
    page.get_by_text(f"idemwatch · {title} · rendered in").wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(_SETTLED, timeout=TIMEOUT_MS)


def choose(page, key: str, option: str) -> None:
    """Open the select widget keyed ``key`` once the app is idle and pick ``option`` (retried: a click
    that lands while the app re-renders can be swallowed)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(3):
        page.wait_for_function(_SETTLED, timeout=TIMEOUT_MS)
        page.locator(f".st-key-{key} input").first.click()
        opt = page.get_by_role("option", name=option, exact=True)
        try:
            opt.wait_for(timeout=10_000)
        except PlaywrightTimeout:  # the dropdown did not open
            page.keyboard.press("Escape")
            if attempt == 2:
                raise
            continue
        opt.click()
        return


def assert_clean(page, dialogs: list) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator(
        '[data-testid="stException"]').first.inner_text()
    assert dialogs == [], dialogs
    assert page.get_by_text("Page not found").count() == 0
    # the favicon is served by the dashboard itself (a ":material/...:" page_icon points at fonts.gstatic.com)
    icons = page.evaluate("""() => [...document.querySelectorAll('link[rel~="icon"]')].map(l => l.href)""")
    assert icons and all(_loopback(h) for h in icons), icons
    injected = page.evaluate("""() => ({
        scripts: [...document.querySelectorAll('script')].filter(s => (s.textContent || '').includes('alert(')).length,
        jsLinks: document.querySelectorAll('a[href^="javascript:" i]').length,
        imgs: document.querySelectorAll('img[src="x"]').length,
    })""")
    assert injected == {"scripts": 0, "jsLinks": 0, "imgs": 0}, injected


def _loopback(url: str) -> bool:
    u = urlsplit(url)
    return u.scheme in ("data", "blob", "about") or u.hostname == "127.0.0.1"


def tiles_rendered(page) -> None:
    """Every Overview tile is drawn: its value and its "Details" link (so link counts are complete)."""
    page.wait_for_function(f"""() => document.querySelectorAll('[data-testid="stMetricValue"]').length === {len(SIGNALS)}
        && [...document.querySelectorAll('a')].filter(a => a.innerText.trim() === 'Details').length === {len(SIGNALS)}""",
                           timeout=TIMEOUT_MS)
    page.wait_for_function(_SETTLED, timeout=TIMEOUT_MS)


VEGA = '[data-testid="stVegaLiteChart"]'
_VEGA_DRAWN = "svg.marks > g, canvas.marks"


def vega_drawn(page, key: str) -> None:
    """The Vega-Lite chart in the container keyed ``key`` has drawn its marks (not just mounted its element)."""
    page.locator(f".st-key-{key} {VEGA}").first.wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(f"""() => !!document.querySelector('.st-key-{key} {VEGA}')
        .querySelector('{_VEGA_DRAWN}')""", timeout=TIMEOUT_MS)


CHART = ".idw-chart"
"""A server-drawn chart (``dashboard.htmlchart``): the signal pages' and Lambda health's time series."""
CHART_TAGS = {"div", "span", "b", "i", "img"}
"""Every element a server-drawn chart is made of (its line images are ``img.ln``)."""


def chart_drawn(page, key: str) -> None:
    """The server-drawn chart in the container keyed ``key`` is on the page with its legend."""
    page.locator(f".st-key-{key} {CHART} .legend").first.wait_for(timeout=TIMEOUT_MS)


def chart_marks(page, key: str) -> list[dict]:
    """Each bin column of the server-drawn chart ``key`` as the browser has it: the series in it (legend names),
    their values, its hover tooltip text, its bar's drawn height (0 for lines) and the tags inside its tooltip."""
    return page.evaluate(f"""() => {{
        const box = document.querySelector('.st-key-{key} {CHART}');
        const names = [...box.querySelectorAll('.legend span')].map(e => e.textContent);
        return [...box.querySelectorAll('.m')].map(m => {{
            const tip = m.querySelector('.tip'), bar = m.querySelector('.bar');
            return {{series: m.dataset.s.split(' ').map(i => names[Number(i)]), values: m.dataset.v.split(' ').map(Number),
                     tip: tip.textContent, height: bar ? bar.getBoundingClientRect().height : 0,
                     tags: [...tip.querySelectorAll('*')].map(e => e.tagName)}}; }}); }}""")


def chart_total(page, key: str) -> float:
    """Sum of the stacked bars drawn in the server-drawn chart ``key`` (each a visible box)."""
    marks = chart_marks(page, key)
    assert marks and all(m["height"] > 0 for m in marks), marks[:3]
    return sum(sum(m["values"]) for m in marks)


def chart_legend(page, key: str) -> list[str]:
    return page.evaluate(f"""() => [...document.querySelectorAll('.st-key-{key} {CHART} .legend span')]
        .map(e => e.textContent)""")


def chart_tags(page, key: str) -> set[str]:
    """Tags of every element inside the server-drawn chart ``key`` (its style sheet excluded)."""
    return set(page.evaluate(f"""() => [...document.querySelectorAll('.st-key-{key} {CHART} *')]
        .map(e => e.tagName.toLowerCase() + (e.tagName === 'IMG' && !e.classList.contains('ln') ? ':foreign' : ''))"""))


def open_overview(browser, srv, artifacts: Path, tag: str):
    """The Overview in a fresh 1440 px page. The returned list collects problems assert_clean reports: JS
    dialogs, and any request that leaves 127.0.0.1 (the dashboard promises loopback-only traffic)."""
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    dialogs: list = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: None if _loopback(r.url) else dialogs.append(f"request left 127.0.0.1: {r.url}"))
    page.goto(srv.url + "/")
    wait_rendered(page, "Overview")
    page.locator(".st-key-table-health table").first.wait_for(timeout=TIMEOUT_MS)
    return page, dialogs


def window_of(page) -> tuple[datetime, datetime]:
    text = page.locator('[data-testid="stSidebar"]').inner_text()
    m = WINDOW.search(text)
    assert m, text
    return tuple(datetime.strptime(x, "%Y-%m-%d %H:%M") for x in m.groups())  # type: ignore[return-value]


def check_all_pages(browser, data_dir: Path, artifacts: Path, tag: str, Oracle) -> dict[str, str]:
    shown: dict[str, str] = {}
    with DashboardServer(data_dir) as srv:
        page, dialogs = open_overview(browser, srv, artifacts, tag)
        assert_clean(page, dialogs)
        oracle = Oracle(data_dir, *window_of(page))
        page.wait_for_function(f"""() => document.querySelectorAll('[data-testid="stMetricValue"]').length
            === {len(SIGNALS)}""", timeout=TIMEOUT_MS)
        labels = page.locator('[data-testid="stMetricLabel"]').all_inner_texts()
        values = page.locator('[data-testid="stMetricValue"]').all_inner_texts()
        shown = dict(zip([x.strip() for x in labels], [v.strip() for v in values]))
        assert len(shown) == len(SIGNALS)
        for sig in SIGNALS:
            assert shown[sig.title] == format_value(sig, oracle.value(sig)), sig.title
        # every tile trend is an SVG image the browser decoded (Stuck keys has none: a state, not a trend)
        page.wait_for_function("""() => { const i = [...document.querySelectorAll('[class*="st-key-tile-"] img')];
            return i.length > 0 && i.every(x => x.complete && x.naturalWidth > 0 && x.src.startsWith('data:image/svg+xml')); }""",
                               timeout=TIMEOUT_MS)
        page.screenshot(path=str(artifacts / f"{tag}-overview.png"), full_page=True)

        assert page.locator(NAV).all_inner_texts() == ["Overview"] + PAGES
        for sig in SIGNALS:
            title = sig.title
            page.locator(NAV, has_text=re.compile(f"^{re.escape(title)}$")).click()
            wait_rendered(page, title)
            assert_clean(page, dialogs)
            if sig.kind is SignalKind.COUNT:
                expected = oracle.count(sig.outcome.value)
                if expected:
                    chart_drawn(page, "series")
                    assert chart_total(page, "series") == expected, title  # the bars drawn add up to the oracle
            elif sig.kind in (SignalKind.RATE, SignalKind.AGE) and oracle.value(sig) is not None:
                chart_drawn(page, "series")
            page.screenshot(path=str(artifacts / f"{tag}-{sig.key}.png"), full_page=True)
        for title in ("Events explorer", "Lambda health", "Alarms", "Configuration"):
            page.locator(NAV, has_text=title).click()
            wait_rendered(page, title)
            assert_clean(page, dialogs)
            if title == "Lambda health" and page.locator(".st-key-lambda_invocations").count():
                chart_drawn(page, "lambda_invocations")
            if title == "Alarms" and page.locator(".st-key-alarm_timeline").count():
                vega_drawn(page, "alarm_timeline")
            page.screenshot(path=str(artifacts / f"{tag}-{title.split()[0].lower()}.png"), full_page=True)
        page.close()
    return shown


def test_every_page_on_sample_tables(browser, sample_data, artifacts, oracle_cls):
    shown = check_all_pages(browser, sample_data, artifacts, "sample", oracle_cls)
    assert shown["Duplicates"] == "5" and shown["Poison rate"] == "5.77%"  # hand-derived (sample_tables.py)


def test_untrusted_strings_stay_text(browser, sample_data, sample_mod, artifacts):
    """Planted keys/ids/operation/error code: searched, filtered and charted; never executed or linked."""
    xss_key, xss_link, xss_op = sample_mod.XSS_KEY, sample_mod.XSS_LINK, sample_mod.XSS_OP
    with DashboardServer(sample_data) as srv:
        page, dialogs = open_overview(browser, srv, artifacts, "xss")
        # filter by the script-tag operation: the option is plain text
        choose(page, "f_operation", xss_op)
        page.keyboard.press("Escape")
        wait_rendered(page, "Overview")
        page.wait_for_function("""() => [...document.querySelectorAll('[data-testid="stMetricValue"]')]
            .some(e => e.innerText.trim() === '25.00%')""", timeout=TIMEOUT_MS)
        assert_clean(page, dialogs)
        page.goto(srv.url + "/poison")
        wait_rendered(page, "Poison rate")
        chart_drawn(page, "series")
        assert xss_op in chart_legend(page, "series")  # shown literally, as text
        assert chart_tags(page, "series") <= CHART_TAGS
        assert_clean(page, dialogs)
        # a planted key as a selectbox option (top offenders of the duplicates page), picked
        page.goto(srv.url + "/duplicates")
        wait_rendered(page, "Duplicates")
        choose(page, "offender_pick", xss_key)
        page.locator(".st-key-table-offender_trail").wait_for(timeout=TIMEOUT_MS)
        assert_clean(page, dialogs)
        page.goto(srv.url + "/explorer")
        wait_rendered(page, "Events explorer")
        for value, records in ((xss_key, 3), (xss_link, 4)):
            box = page.locator(".st-key-ex_value input")
            box.fill(value)
            box.press("Enter")
            page.wait_for_function(f"""() => [...document.querySelectorAll('[data-testid="stMetricValue"]')]
                .map(e => e.innerText.trim())[0] === '{records}'""", timeout=TIMEOUT_MS)
            assert_clean(page, dialogs)
        box = page.locator(".st-key-ex_value input")
        box.fill("nothing " + xss_link)
        box.press("Enter")
        alert = page.locator('[data-testid="stAlertContentInfo"]')
        alert.wait_for(timeout=TIMEOUT_MS)
        assert "nothing [x](javascript:alert(1))" in alert.inner_text()  # the literal text, no link
        assert alert.locator("a").count() == 0
        assert_clean(page, dialogs)
        page.screenshot(path=str(artifacts / "xss-explorer.png"), full_page=True)
        page.close()


def app_links(page) -> set[str]:
    """Every link the app renders (sidebar navigation, tile "Details" links, ...), as absolute URLs."""
    return set(page.evaluate("""() => [...document.querySelectorAll('a[href]')].map(a => a.href)"""))


def test_every_app_link_opens_a_page(browser, sample_data, artifacts):
    """No link the app generates leads to streamlit's "Page not found" dialog (the default page is served at
    "/" only, so nothing may link to /overview); every page keeps its traffic on 127.0.0.1."""
    with DashboardServer(sample_data) as srv:
        page, dialogs = open_overview(browser, srv, artifacts, "links")
        tiles_rendered(page)  # counting links before the tiles are drawn was flaky
        links = app_links(page)
        details = page.get_by_role("link", name="Details")
        assert details.count() == len(SIGNALS)
        paths = {urlsplit(h).path for h in links if _loopback(h)}
        # navigation: "/" for the Overview plus one path per other page; the Details links reuse those paths
        assert "/" in paths and "/overview" not in paths
        assert len(paths) == 1 + len(PAGES), sorted(paths)
        assert all(_loopback(h) for h in links), sorted(links)
        for href in sorted(links):
            page.goto(href)
            page.get_by_text(re.compile(r"idemwatch · .+ · rendered in")).first.wait_for(timeout=TIMEOUT_MS)
            page.wait_for_function(_SETTLED, timeout=TIMEOUT_MS)
            assert_clean(page, dialogs)
        page.close()


def visible_columns(page, key: str) -> list[str]:
    """Header labels of the columns the grid keyed ``table-<key>`` draws without scrolling (the data grid
    mirrors its visible region into an accessibility table)."""
    grid = page.locator(f".st-key-table-{key} [data-testid='stDataFrame']")
    grid.wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(f"""() => document.querySelectorAll('.st-key-table-{key} th').length > 0""",
                           timeout=TIMEOUT_MS)
    return [t.strip() for t in grid.locator("th").all_inner_texts()]


HOSTILE_OPS = {"ProcessOrders": "<img src=x onerror=alert(1)>", "CapturePayment": "**bold** $x$ :red[y]"}
"""Operation renames for the hostile-names data: an HTML payload and Streamlit markdown (bold, LaTeX, colour)."""


@pytest.fixture(scope="module")
def hostile_data(tmp_path_factory, sample_mod) -> Path:
    """The sample tables with two operations renamed to hostile strings, in every table."""
    rows = {name: [tuple(HOSTILE_OPS.get(v, v) if isinstance(v, str) else v for v in r) for r in table]
            for name, table in sample_mod.TABLE_ROWS.items()}
    return sample_mod.write_data_dir(tmp_path_factory.mktemp("browser-hostile"), rows)


def test_hostile_series_names_are_literal_text_in_legends_and_tooltips(browser, hostile_data, sample_mod,
                                                                        artifacts):
    """Operation names with HTML and markdown: the legend and the hover tooltip of the server-drawn charts show the
    literal strings (and the tooltip shows on hover); no element is made of them and no script runs."""
    img, md = HOSTILE_OPS["ProcessOrders"], HOSTILE_OPS["CapturePayment"]
    with DashboardServer(hostile_data) as srv:
        page, dialogs = open_overview(browser, srv, artifacts, "hostile")
        for path, title in (("/poison", "Poison rate"), ("/duplicates", "Duplicates"), ("/conflicts",
                                                                                       "Payload conflicts")):
            page.goto(srv.url + path)
            wait_rendered(page, title)
            chart_drawn(page, "series")
            shown = chart_legend(page, "series")
            name = md if path == "/conflicts" else img
            assert name in shown, (path, shown)
            marks = [m for m in chart_marks(page, "series") if name in m["series"]]
            assert marks and all(f"\n{name}: " in m["tip"] and m["tags"] == [] for m in marks), marks
            # hovering the bin shows its tooltip, the name as text
            mark = page.locator(f".st-key-series {CHART} .m").nth(
                next(i for i, m in enumerate(chart_marks(page, "series")) if name in m["series"]))
            mark.scroll_into_view_if_needed()
            assert not mark.locator(".tip").is_visible()
            mark.hover(force=True)
            mark.locator(".tip").wait_for(state="visible", timeout=TIMEOUT_MS)
            assert name in mark.locator(".tip").inner_text()
            assert chart_tags(page, "series") <= CHART_TAGS, path  # no <img> of the name, no <b>, no KaTeX
            assert_clean(page, dialogs)
            page.screenshot(path=str(artifacts / f"hostile{path.replace('/', '-')}.png"))
        # the poison chart also holds the script-tag operation of the sample: drawn as text
        page.goto(srv.url + "/poison")
        wait_rendered(page, "Poison rate")
        chart_drawn(page, "series")
        assert sample_mod.XSS_OP in chart_legend(page, "series")
        assert any(f"\n{sample_mod.XSS_OP}: " in m["tip"] for m in chart_marks(page, "series"))
        assert page.locator("img[src='x']").count() == 0
        assert_clean(page, dialogs)
        page.close()


def health_rows(page) -> list[dict]:
    """Each row of the Overview's health table as the browser drew it: cell texts by header, each cell's child
    element tags, and its link target."""
    return page.evaluate("""() => { const t = document.querySelector('.st-key-table-health table');
        const heads = [...t.querySelectorAll('th')].map(th => th.innerText.trim());
        return [...t.querySelectorAll('tbody tr')].map(tr => Object.fromEntries([...tr.children].map((td, i) =>
            [heads[i], {text: td.innerText, tags: [...td.querySelectorAll('*')].map(e => e.tagName.toLowerCase()),
                        href: (td.querySelector('a') || {}).href || null}]))); }""")


def test_hostile_names_are_literal_text_in_the_health_table(browser, hostile_data, sample_mod, artifacts):
    """Operation names with HTML, a script tag and markdown/LaTeX: the health table (escaped HTML) shows each
    literally, makes no element of it, and its links open the signal page filtered to exactly that operation."""
    img, md = HOSTILE_OPS["ProcessOrders"], HOSTILE_OPS["CapturePayment"]
    with DashboardServer(hostile_data) as srv:
        page, dialogs = open_overview(browser, srv, artifacts, "hostile-health")
        rows = {r["operation"]["text"]: r for r in health_rows(page)}
        assert set(rows) == {img, md, sample_mod.XSS_OP}, list(rows)
        for row in rows.values():
            assert row["operation"]["tags"] == [], row  # text only: no <img>, no <b>, no KaTeX
            assert row["health"]["text"] == "CRITICAL"
        # the poison count of the <img> operation: a link on this server to the poison page of that operation
        href = rows[img]["poison"]["href"]
        u = urlsplit(href)
        assert _loopback(href) and u.path == "/poison" and parse_qs(u.query)["operation"] == [img], href
        assert page.locator("img[src='x']").count() == 0
        assert_clean(page, dialogs)
        page.locator(".st-key-table-health").screenshot(path=str(artifacts / "hostile-health.png"))
        with page.context.expect_page() as opened:  # the link opens a new tab (target=_blank)
            links = page.locator(".st-key-table-health td a")
            links.nth(links.evaluate_all("(as, h) => as.findIndex(a => a.href === h)", href)).click()
        tab = opened.value
        wait_rendered(tab, "Poison rate")
        tab.wait_for_function("""name => (document.querySelector('.st-key-f_operation') || {innerText: ''})
            .innerText.includes(name)""", arg=img, timeout=TIMEOUT_MS)
        assert_clean(tab, [])
        tab.close()
        page.close()


def test_chart_pages_load_no_plotly(browser, sample_data, artifacts):
    """A signal page's chart and Lambda health's are drawn on the server (HTML): from the Overview to a signal page
    and on to Lambda health the browser fetches no chart chunk at all (no Vega, no Plotly)."""
    with DashboardServer(sample_data) as srv:
        page, dialogs = open_overview(browser, srv, artifacts, "no-plotly")
        page.locator(NAV, has_text=re.compile("^Duplicates$")).click()
        wait_rendered(page, "Duplicates")
        chart_drawn(page, "series")
        assert page.evaluate("""() => performance.getEntriesByType('resource').map(e => e.name)
            .filter(n => /VegaLiteChart|PlotlyChart/.test(n))""") == []
        page.locator(NAV, has_text="Lambda health").click()
        wait_rendered(page, "Lambda health")
        for key in ("lambda_invocations", "lambda_duration", "lambda_memory"):
            chart_drawn(page, key)
        assert page.locator('[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]').count() == 0
        fetched = page.evaluate("""() => performance.getEntriesByType('resource').map(e => e.name)
            .filter(n => /VegaLiteChart|PlotlyChart/.test(n))""")
        assert fetched == []
        assert_clean(page, dialogs)
        page.close()


def test_key_columns_visible_at_1440px(browser, sample_data, artifacts):
    """The health table and the alarms table show their key columns without horizontal scrolling."""
    with DashboardServer(sample_data) as srv:
        page, dialogs = open_overview(browser, srv, artifacts, "columns")
        # the health table (HTML): the headers drawn inside the viewport's width without scrolling sideways
        shown = page.evaluate("""() => [...document.querySelectorAll('.st-key-table-health th')].filter(th =>
            th.getBoundingClientRect().right <= th.closest('.idw-table').getBoundingClientRect().right + 1)
            .map(th => th.innerText.trim())""")
        # the row's identity, its verdict, its volume and every input of the verdict
        for col in ("service", "operation", "health", "received", "succeeded", "reasons", "stuck", "ambiguous",
                    "poison", "retry", "conflicts", "t/o aborts", "store err"):
            assert col in shown, (col, shown)
        page.goto(srv.url + "/alarms")
        wait_rendered(page, "Alarms")
        shown = visible_columns(page, "alarm_summary")
        for col in ("alarm", "severity", "last state", "ALARM intervals", "first ALARM (UTC)"):
            assert col in shown, (col, shown)
        assert {"alarm", "severity", "condition"} <= set(visible_columns(page, "alarm_defs"))
        assert_clean(page, dialogs)
        page.close()


def test_every_page_on_seeded_demo(browser, demo_data, artifacts, oracle_cls):
    shown = check_all_pages(browser, demo_data, artifacts, "demo", oracle_cls)
    assert shown  # values were compared with the oracle page by page


def sidebar_state(page) -> tuple:
    """What the sidebar shows: the time range, the selected services, the window caption."""
    rng = page.locator(".st-key-f_range input").first.input_value().strip()
    chips = tuple(x.strip() for x in page.locator(".st-key-f_service").inner_text().replace("Service", "").split()
                  if x.strip() not in ("All", ""))
    return rng, chips, window_of(page)


def wait_url(page, *parts: str) -> None:
    page.wait_for_function("parts => parts.every(p => window.location.search.includes(p))", arg=list(parts),
                           timeout=TIMEOUT_MS)


def test_every_page_keeps_its_filters_in_the_url(browser, sample_data, artifacts):
    """On every page: change the time range and a filter, reload the URL in a fresh tab (a new session, as a
    shared link would be) and see the same state; Back undoes the last filter change."""
    with DashboardServer(sample_data) as srv:
        page, dialogs = open_overview(browser, srv, artifacts, "url")
        hrefs = dict(zip([t.strip() for t in page.locator(NAV).all_inner_texts()],
                         page.locator(NAV).evaluate_all("els => els.map(a => a.href)")))
        assert list(hrefs) == ["Overview"] + PAGES
        for title, href in hrefs.items():
            page.goto(href)
            wait_rendered(page, title)
            choose(page, "f_range", "All data")
            wait_rendered(page, title)
            wait_url(page, "range=all")
            choose(page, "f_service", "orders")
            page.keyboard.press("Escape")
            wait_rendered(page, title)
            wait_url(page, "range=all", "service=orders")
            state = sidebar_state(page)
            assert state[:2] == ("All data", ("orders",)), (title, state)
            fresh = browser.new_page(viewport={"width": 1440, "height": 1000})
            fresh.goto(page.url)
            wait_rendered(fresh, title)
            fresh.wait_for_function("""() => (document.querySelector('.st-key-f_service') || {innerText: ''})
                .innerText.includes('orders')""", timeout=TIMEOUT_MS)
            assert sidebar_state(fresh) == state, (title, page.url)
            assert_clean(fresh, [])
            fresh.close()
            # Back: the service filter change is undone, the range stays
            page.go_back()
            page.wait_for_function("() => !window.location.search.includes('service=')", timeout=TIMEOUT_MS)
            wait_rendered(page, title)
            page.wait_for_function("""() => !document.querySelector('.st-key-f_service').innerText
                .includes('orders')""", timeout=TIMEOUT_MS)
            assert sidebar_state(page)[:2] == ("All data", ()), title
            assert_clean(page, dialogs)
        # a page's own choices travel too: the explorer's search
        page.goto(srv.url + "/explorer")
        wait_rendered(page, "Events explorer")
        box = page.locator(".st-key-ex_value input")
        box.fill("corr-9")
        box.press("Enter")
        wait_url(page, "q=corr-9")
        page.locator(".st-key-table-trail_rows canvas").first.wait_for(timeout=TIMEOUT_MS)
        fresh = browser.new_page(viewport={"width": 1440, "height": 1000})
        fresh.goto(page.url)
        wait_rendered(fresh, "Events explorer")
        # the box is filled from the URL once the page's script has run: wait for it rather than read it early
        fresh.wait_for_function("""() => (document.querySelector('.st-key-ex_value input') || {value: ''})
            .value === 'corr-9'""", timeout=TIMEOUT_MS)
        fresh.wait_for_function("""() => [...document.querySelectorAll('[data-testid="stMetricValue"]')]
            .map(e => e.innerText.trim())[0] === '9'""", timeout=TIMEOUT_MS)  # the 9 records of corr-9
        fresh.close()
        page.close()



def test_explorer_pages_a_large_result(browser, tmp_path_factory, sample_mod, artifacts):
    """A search of more records than a page (1,234 records of one correlation id, 500 a page): the exact total, the
    stepper to the next page, the page in the URL (a fresh tab opens the same page), Back to the previous page."""
    n = 1234
    data = sample_mod.write_data_dir(tmp_path_factory.mktemp("browser-bulk"), sample_mod.with_bulk_trail(n))
    with DashboardServer(data) as srv:
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        dialogs: list = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(srv.url + f"/explorer?field=Correlation+id&q={sample_mod.BULK_CORRELATION}&page=2")
        wait_rendered(page, "Events explorer")

        def on_page(p, first: int, last: int) -> None:
            p.get_by_text(f"Showing records {first:,}–{last:,} of {n:,}").wait_for(timeout=TIMEOUT_MS)
            wait_rendered(p, "Events explorer")
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
        page.screenshot(path=str(artifacts / "explorer-paging.png"), full_page=True)
        fresh = browser.new_page(viewport={"width": 1440, "height": 1000})
        fresh.goto(page.url)
        wait_rendered(fresh, "Events explorer")
        on_page(fresh, 1001, n)
        assert fresh.locator(".st-key-ex_page input").input_value() == "3"
        fresh.close()
        page.go_back()
        page.wait_for_function("() => window.location.search.includes('page=2')", timeout=TIMEOUT_MS)
        on_page(page, 501, 1000)
        assert_clean(page, dialogs)
        page.close()
