"""Empty/missing data shows how to get data; the Alarms page shows the alarms part's backtest."""

from __future__ import annotations

from datetime import datetime

import pytest

from emitter.contract import EventSource, Outcome

pytestmark = pytest.mark.timeout(300)

PAGES = ["app_pages/overview.py", "app_pages/duplicates.py", "app_pages/stuck_keys.py", "app_pages/explorer.py",
         "app_pages/alarms.py"]


@pytest.mark.parametrize("page", PAGES)
def test_missing_data_dir_shows_commands(app_factory, tmp_path, page):
    at = app_factory(tmp_path / "missing")
    if page != PAGES[0]:
        at.switch_page(page).run()
    assert not at.exception
    assert at.title[0].value == "No data to show yet"
    assert "does not exist" in at.info[0].value
    code = at.code[0].value
    assert f"idemwatch demo --out {tmp_path / 'missing'} --no-serve" in code
    assert "idemwatch collect local" in code and "idemwatch dashboard --data" in code
    assert not at.metric


def test_empty_tables_show_commands(app_factory, tmp_path, sample_mod):
    sample_mod.write_data_dir(tmp_path, {name: [] for name in sample_mod.TABLE_ROWS})
    at = app_factory(tmp_path)
    assert not at.exception
    assert at.title[0].value == "No data to show yet" and "empty" in at.info[0].value


def _conflict_history(tmp_path, sample_mod):
    """Service "shop" / ProcessOrders as in alarms/demo-stack.yaml; conflicts at 10:05 and 10:07 only."""
    t = sample_mod.t
    rows = {name: [] for name in sample_mod.TABLE_ROWS}
    sqs = EventSource.SQS.value
    rows["outcomes"] = [(t(m), "shop", "ProcessOrders", sqs, Outcome.RECEIVED.value, 10) for m in range(16)]
    rows["outcomes"] += [(t(5), "shop", "ProcessOrders", sqs, Outcome.PAYLOAD_CONFLICT.value, 1),
                         (t(7), "shop", "ProcessOrders", sqs, Outcome.PAYLOAD_CONFLICT.value, 3)]
    return sample_mod.write_data_dir(tmp_path, rows)


def test_alarms_page_shows_backtest(app_factory, tmp_path, sample_mod, read):
    from pathlib import Path

    import alarms

    cfg = Path(alarms.__file__).parent / "demo-stack.yaml"
    n_defs = len(alarms.build_catalogue(alarms.load_config(cfg)))
    at = app_factory(_conflict_history(tmp_path, sample_mod))
    at.switch_page("app_pages/alarms.py").run()
    assert not at.exception
    m = {x.label: x.value for x in at.main.metric}
    assert m["Alarms"] == f"{n_defs:,}"
    s = at.get_by_key("table-alarm_summary").dataframe[0].value.set_index("alarm")
    row = s.loc["shop-orders-consumer-PayloadConflict"]
    # Sum(PayloadConflict) > 0, 1 of 1 x 60 s, notBreaching, evaluation range N + 2 = 3 periods. CloudWatch
    # evaluates the most recent datapoint that exists in the range (missing ones are filled only when fewer
    # than M exist): 10:05 (1), 10:06 (-> 10:05), 10:07 (3), 10:08 and 10:09 (-> 10:07) are ALARM; from 10:10
    # the range [10:08, 10:10] has no datapoint -> filled notBreaching -> OK. One interval, 5 periods.
    assert (row["periods in ALARM"], row["ALARM intervals"], row["last state"]) == (5, 1, "OK")
    assert row["first ALARM"].replace(tzinfo=None) == datetime(2026, 1, 5, 10, 5)
    assert m["Alarms that fired"] == f"{int((s['ALARM intervals'] > 0).sum()):,}"
    # the timeline picked by default is the first alarm that fired
    assert at.selectbox(key="alarm_pick").value == list(s.index).index(s.index[s["ALARM intervals"] > 0][0])
    from dashboard.views.alarms import STATE_COLORS

    fig = read.figure(at, "alarm_timeline")
    band = {tr["name"]: tr for tr in fig["data"] if tr["type"] == "bar"}
    # the five ALARM periods, 10:05 to 10:09, one bar on the state band from 10:05 to 10:10, in the state's colour
    assert band["ALARM"]["base"] == ["2026-01-05T10:05:00"]
    assert band["ALARM"]["x"] == [5 * 60_000] and band["ALARM"]["y"] == ["ALARM"]
    assert {n: tr["marker"]["color"] for n, tr in band.items()} == {
        label: STATE_COLORS[s] for s, label in (("ALARM", "ALARM"), ("OK", "OK"), ("INSUFFICIENT_DATA", "NO DATA"))
        if label in band}
    assert band["ALARM"]["customdata"] == ["2026-01-05 10:05–10:10 UTC · 5 periods"]  # the whole run, UTC times
    # the shaded ALARM interval: one rectangle from 10:05 to 10:10
    assert [(sh["x0"], sh["x1"]) for sh in fig["layout"]["shapes"]] == [("2026-01-05T10:05:00", "2026-01-05T10:10:00")]
    defs = at.get_by_key("table-alarm_defs").dataframe[0].value
    assert len(defs) == n_defs
    assert defs.set_index("alarm").loc["shop-orders-consumer-PayloadConflict", "condition"].startswith(
        "Sum(PayloadConflict) > 0")


def test_alarms_page_bad_config_path(app_factory, data_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("IDEMWATCH_ALARMS_CONFIG", str(tmp_path / "nope.yaml"))
    at = app_factory(data_dir)
    at.switch_page("app_pages/alarms.py").run()
    assert not at.exception
    assert "Config file not found" in at.error[0].value


def test_skipped_lines_and_table_problems_are_reported(app_factory, tmp_path, sample_mod):
    import json

    rows = dict(sample_mod.TABLE_ROWS)
    del rows["invocations"]
    sample_mod.write_data_dir(tmp_path, rows)
    m = json.loads((tmp_path / "manifest.json").read_text())
    m["ingest"] = {"events": 120, "skipped": 3, "repaired": 1, "by_reason": {"not-json": 2, "bad-timestamp": 1}}
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    at = app_factory(tmp_path)
    assert not at.exception
    warnings = [w.value for w in at.sidebar.warning]
    assert "The collector skipped 3 log line(s) it could not parse; see Data below." in warnings
    assert "1 table problem(s); see Data below." in warnings
    captions = [c.value for c in at.sidebar.caption]
    assert "skipped lines: 3" in captions and "repaired lines: 1" in captions
    assert "skipped by reason: not\\-json\\: 2\\, bad\\-timestamp\\: 1" in captions
    assert any("invocations" in c and "not collected" in c for c in captions)


def test_without_trail_pages_say_so(app_factory, tmp_path, sample_mod):
    rows = dict(sample_mod.TABLE_ROWS)
    del rows["trail"]
    sample_mod.write_data_dir(tmp_path, rows)
    at = app_factory(tmp_path)
    assert not at.exception
    assert {m.label: m.value for m in at.main.metric}["Duplicates"] == "5"  # tiles need no trail
    at.switch_page("app_pages/duplicates.py").run()
    assert not at.exception
    assert "The trail table was not collected: no per-key detail." in [c.value for c in at.main.caption]
    at.switch_page("app_pages/explorer.py").run()
    assert not at.exception
    assert at.main.warning[0].value == "The trail table was not collected, so there is nothing to search."
