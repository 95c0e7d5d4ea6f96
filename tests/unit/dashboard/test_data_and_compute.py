"""dashboard.data (loading, cache keyed on the manifest, bad data reported) and dashboard.compute helpers."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta

import pytest

from dashboard.compute import Filters, choose_bin, default_preset, format_value, preset_window, signal_value
from dashboard.constants import SIGNAL_BY_KEY
from dashboard.data import DataStatus, load_dataset


def test_missing_dir(tmp_path):
    ds = load_dataset(tmp_path / "nope")
    assert ds.status == DataStatus.NO_DIR and not ds.ok


def test_dir_without_tables(tmp_path):
    ds = load_dataset(tmp_path)
    assert ds.status == DataStatus.NO_TABLES
    assert "manifest.json is missing" in ds.problems


def test_empty_tables(tmp_path, sample_mod):
    sample_mod.write_data_dir(tmp_path, {name: [] for name in sample_mod.TABLE_ROWS})
    ds = load_dataset(tmp_path)
    assert ds.status == DataStatus.EMPTY and ds.start is None


def test_loads_types_window_and_counts(data_dir):
    ds = load_dataset(data_dir)
    assert ds.ok and ds.problems == ()
    assert (ds.start, ds.end) == (datetime(2026, 1, 5, 10, 5), datetime(2026, 1, 5, 10, 40))
    assert ds.trail_rows == 16
    o = ds.table("outcomes")
    assert str(o["time"].dtype) == "datetime64[ms]" and int(o["events"].sum()) == 177  # 20 + 41 + 62 + 20 + 10 + 16 + 8
    assert ds.table("stuck_keys")["expired"].tolist() == [True, True, False]


def test_cache_is_keyed_on_manifest(tmp_path, sample_mod):
    sample_mod.write_data_dir(tmp_path)
    a = load_dataset(tmp_path)
    assert load_dataset(tmp_path) is a  # same manifest: cached object
    m = tmp_path / "manifest.json"
    doc = json.loads(m.read_text())
    doc["collected_at"] = "2026-01-05T11:00:00Z"
    m.write_text(json.dumps(doc))
    b = load_dataset(tmp_path)
    assert b is not a and b.fingerprint != a.fingerprint
    assert b.manifest["collected_at"] == "2026-01-05T11:00:00Z"


def test_malformed_and_missing_tables_are_reported(tmp_path, sample_mod):
    rows = dict(sample_mod.TABLE_ROWS)
    del rows["record_age"]
    sample_mod.write_data_dir(tmp_path, rows)
    (tmp_path / "tables" / "attempts.parquet").write_bytes(b"not parquet")
    import duckdb

    with duckdb.connect() as con:
        con.execute(f"COPY (SELECT 1 AS x) TO '{tmp_path / 'tables' / 'rates.parquet'}' (FORMAT parquet)")
    ds = load_dataset(tmp_path)
    assert ds.ok
    joined = " | ".join(ds.problems)
    assert "table 'record_age' was not collected" in joined
    assert "table 'attempts': unreadable" in joined
    assert "table 'rates': missing columns" in joined
    assert ds.table("record_age").empty and ds.table("attempts").empty and ds.table("rates").empty
    assert signal_value(ds, SIGNAL_BY_KEY["iterator_age"], Filters(ds.start, ds.end)) is None


@pytest.mark.parametrize("span,expected", [
    (timedelta(minutes=30), timedelta(minutes=1)),
    (timedelta(hours=2), timedelta(minutes=1)),  # 120 bins: the limit itself
    (timedelta(hours=2, minutes=1), timedelta(minutes=5)),
    (timedelta(days=1), timedelta(minutes=15)),
    (timedelta(days=3), timedelta(hours=1)),
    (timedelta(days=7), timedelta(hours=6)),
    (timedelta(days=400), timedelta(days=1)),
])
def test_choose_bin(span, expected):
    s = datetime(2026, 1, 1)
    assert choose_bin(s, s + span) == expected


@pytest.mark.parametrize("span,label", [
    (timedelta(minutes=5), "All data"),
    (timedelta(minutes=10), "Last 5 minutes"),
    (timedelta(minutes=35), "Last 15 minutes"),
    (timedelta(hours=2), "Last hour"),
    (timedelta(days=30), "Last 7 days"),
])
def test_default_preset(span, label):
    s = datetime(2026, 1, 1)
    assert default_preset(s, s + span) == label


def test_preset_window_clamps_to_data():
    s, e = datetime(2026, 1, 1, 10), datetime(2026, 1, 1, 10, 20)
    assert preset_window(s, e, timedelta(hours=1)) == (s, e)
    assert preset_window(s, e, timedelta(minutes=5)) == (datetime(2026, 1, 1, 10, 15), e)
    assert preset_window(s, e, None) == (s, e)


def test_previous_window():
    f = Filters(datetime(2026, 1, 1, 10, 30), datetime(2026, 1, 1, 11), ("a",))
    p = f.previous()
    assert (p.start, p.end, p.services) == (datetime(2026, 1, 1, 10), datetime(2026, 1, 1, 10, 30), ("a",))


@pytest.mark.parametrize("key,value,text", [
    ("duplicates", 1234.0, "1,234"), ("poison", 0.12345, "12.35%"), ("iterator_age", 999.0, "999 ms"),
    ("iterator_age", 61_000.0, "1.0 min"), ("iterator_age", 7_200_000.0, "2.0 h"), ("duplicates", None, "–"),
])
def test_format_value(key, value, text):
    assert format_value(SIGNAL_BY_KEY[key], value) == text


def test_env_points_app_at_data(monkeypatch, tmp_path):
    from dashboard import ui

    monkeypatch.setenv("IDEMWATCH_DATA", str(tmp_path))
    assert ui.data_dir() == tmp_path
    assert os.environ["IDEMWATCH_DATA"] == str(tmp_path)


@pytest.mark.parametrize("raw", ["<script>alert(1)</script>", "[x](javascript:alert(1))", ":red[boom] $x$ **b**",
                                 "a\nb"])
def test_md_escape_round_trips_through_commonmark(raw):
    """Escaped text, rendered by a CommonMark renderer, yields exactly the raw text (HTML-escaped), no tags/links."""
    from dashboard.ui import md_escape

    esc = md_escape(raw)
    # every ASCII punctuation character is backslash-escaped: nothing is left for markdown/HTML to interpret
    unescaped = [c for i, c in enumerate(esc) if not c.isalnum() and not c.isspace() and c != "\\"
                 and (i == 0 or esc[i - 1] != "\\")]
    assert unescaped == []
    assert esc.replace("\\", "") == raw.replace("\\", "").replace("\n", " ")


def test_no_page_renders_raw_html():
    """Guard: no dashboard module may render HTML (untrusted log text must never reach an HTML sink): tables are data
    grids, charts plotly figures."""
    from pathlib import Path

    import dashboard

    root = Path(dashboard.__file__).parent
    offenders = []
    for py in root.rglob("*.py"):
        if "demo" in py.relative_to(root).parts:
            continue
        text = py.read_text()
        for pattern in (r"unsafe_allow_html\s*=", r"\bst\.html\(", r"components\.html\(", r"st\.components",
                        r"\bhtml\s*\("):
            if re.search(pattern, text):
                offenders.append((py.name, pattern))
    assert offenders == []


def test_trail_filters_match_null_dimensions_like_tables(tmp_path, sample_mod):
    """A trail record without event_source is selected by the "(none)" filter value, as in the outcomes table."""
    from dashboard import trail
    from dashboard.data import NOT_SET

    rows = dict(sample_mod.TABLE_ROWS)
    t = sample_mod.t
    rows["trail"] = [(t(30), "/aws/lambda/x", sample_mod.ACCOUNT, "svc", "Op", None, "duplicate_completed", "k-null", "COMPLETED", "e-1",
                      None, "r-1", 2, None, None, None, "")]
    sample_mod.write_data_dir(tmp_path, rows)
    ds = load_dataset(tmp_path)
    got = trail.top_keys(ds, "duplicate_completed", Filters(ds.start, ds.end, event_sources=(NOT_SET,)))
    assert list(got["idempotency_key"]) == ["k-null"]
    got = trail.top_keys(ds, "duplicate_completed", Filters(ds.start, ds.end, event_sources=("sqs",)))
    assert got.empty
