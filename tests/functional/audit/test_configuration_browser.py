"""The Configuration page in real headless Chromium on a small seeded demo run (simulate, collect, and the demo's
audit step): the demo template's two ledger-stream findings are shown beside ledger-stream's max iterator age
and retries, as the page computes them; no exception box; a screenshot under test-artifacts/dashboard/."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[3]
ARTIFACTS = ROOT / "test-artifacts" / "dashboard"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]


@pytest.fixture(scope="module")
def demo_data(tmp_path_factory) -> Path:
    from alarms.audit.demo import run_demo_audit
    from collector.collect import collect_local
    from dashboard.demo import run_demo

    out = tmp_path_factory.mktemp("audit-demo")
    run_demo(out, seed=7, events=1500, duration_s=3600, start_ms=1_767_607_200_000)
    collect_local([out / "logs"], out)
    run_demo_audit(out)
    return out


def test_configuration_page_explains_the_demo_findings(demo_data):
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if exe is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium not found")
        pytest.skip("chromium not found")
    from playwright.sync_api import sync_playwright

    from dashboard.serve import DashboardServer

    with DashboardServer(demo_data) as srv, sync_playwright() as p:
        assert srv.url.startswith("http://127.0.0.1:")
        b = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        page = b.new_page(viewport={"width": 1440, "height": 1000})
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(srv.url + "/configuration")
        page.get_by_text("idemwatch · Configuration · rendered in").wait_for(timeout=60_000)
        # idle (no rerun in flight, nothing stale) and the four tiles drawn
        page.wait_for_function("""() => document.querySelectorAll('[data-stale="true"]').length === 0
            && !document.querySelector('[data-testid="stStatusWidget"]')
            && document.querySelectorAll('[data-testid="stMetricValue"]').length >= 4""", timeout=60_000)
        assert page.locator('[data-testid="stException"]').count() == 0
        metrics = page.locator('[data-testid="stMetricValue"]').all_inner_texts()
        assert metrics[:4] == ["2", "0", "0", "21"]  # failed, unknown, suppressed, passed (demo template)
        grid = page.locator(".st-key-table-audit")
        grid.wait_for(timeout=60_000)
        # the links come after the grid in the same run: wait for them instead of reading mid-render
        page.locator("[data-testid=\"stPageLink\"]").nth(2).wait_for(timeout=60_000)
        links = page.locator("[data-testid=\"stPageLink\"]").all_inner_texts()
        # the signals IW005 and IW007 explain, then the evidence page (no diagnosis in this data directory)
        assert links == ["Max iterator age", "Retries", "Diagnose"], links
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "audit-configuration.png"), full_page=True)
        b.close()
    assert all(u.startswith((srv.url, "data:", "blob:")) for u in requests), \
        [u for u in requests if not u.startswith(srv.url)][:5]
