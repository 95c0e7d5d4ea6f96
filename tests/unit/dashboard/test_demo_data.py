"""AppTest over a real (small, seeded) demo run: every page's numbers equal the tables (DuckDB oracle)."""

from __future__ import annotations

import pytest

from dashboard.compute import format_value
from dashboard.constants import SIGNALS, SignalKind

pytestmark = pytest.mark.timeout(600)


def test_demo_overview_and_signal_pages(app_factory, demo_dir, oracle_cls, read):
    at = app_factory(demo_dir)
    assert not at.exception
    at.sidebar.selectbox(key="f_range").select("All data").run()
    o = oracle_cls(demo_dir, *oracle_cls(demo_dir, None, None).window())
    shown = {m.label: m.value for m in at.main.metric}
    for sig in SIGNALS:
        assert shown[sig.title] == format_value(sig, o.value(sig)), sig.title
    # the demo injects every fault kind: the counts the tiles show are not all zero
    assert sum(o.count(s.outcome.value) for s in SIGNALS if s.kind is SignalKind.COUNT) > 0
    health = read.table(at, "health")
    assert health["received"].sum() == o.count("received")
    for sig in SIGNALS:
        if sig.kind is not SignalKind.COUNT:
            continue
        at.switch_page(sig.page).run()
        assert not at.exception, sig.title
        expected = o.count(sig.outcome.value)
        assert {m.label: m.value for m in at.main.metric}[f"{sig.title} in window"] == f"{expected:,}"
        if expected:
            fig = read.figure(at, "series")
            assert sum(sum(y) for y in read.ys(fig).values()) == expected, sig.title
    at.switch_page("app_pages/stuck_keys.py").run()
    assert not at.exception
    n_in_progress = o.at_end("SELECT count(*) FROM '{T}/stuck_keys.parquet' WHERE claimed_at <= ?")
    n_stuck = o.at_end("SELECT count(*) FROM '{T}/stuck_keys.parquet' WHERE claimed_at <= ? "
                       "AND in_progress_expires_at < ?")
    shown = {m.label: m.value for m in at.main.metric}
    assert shown["Still IN_PROGRESS"] == f"{n_in_progress:,}" and shown["Stuck (expired IN_PROGRESS)"] == f"{n_stuck:,}"
    for page in ("app_pages/explorer.py", "app_pages/lambda_health.py", "app_pages/alarms.py",
                 "app_pages/configuration.py", "app_pages/diagnose.py"):
        at.switch_page(page).run()
        assert not at.exception, page
