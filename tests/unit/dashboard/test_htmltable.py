"""The escaped HTML table (dashboard/htmltable.py): every cell reads back, through the standard library's HTML
parser, as exactly the text it was given; no value becomes markup, an attribute or a link target."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.htmltable import MISSING, Column, frame_columns, html_table, safe_href

_spec = importlib.util.spec_from_file_location("html_rows_t", Path(__file__).with_name("html_rows.py"))
html_rows = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(html_rows)  # type: ignore[union-attr]

HOSTILE = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "**bold** $x$ :red[y]", '"><b>x</b>',
           "' onmouseover='alert(1)", "a | b", "&amp; &lt;", "[x](javascript:alert(1))", "</td></tr></table>",
           "<style>*{display:none}</style>", "line\nbreak", ":material/home:"]
TAGS = {"style", "div", "table", "thead", "tbody", "tr", "th", "td", "span", "a"}
ATTRS = {"class", "title", "href", "target", "rel", "aria-label", "data-col", "style"}


def link(row) -> str:
    return "explorer?" + urlencode({"field": "Idempotency key", "q": row["key"]})


COLUMNS = [Column("key", "key", link=link), Column("n", "count", lambda v: f"{int(v):,}", "right", help="How many."),
           Column("state", "state", badge={"BAD": "red", "OK": "green"})]


def _check(body: str, frame: pd.DataFrame) -> html_rows.TableParser:
    p = html_rows.parse(body)
    assert {t for t, _ in p.tags} <= TAGS, p.tags
    assert all(set(a) <= ATTRS for _, a in p.tags), p.tags
    assert sum(1 for t, _ in p.tags if t == "style") == 1  # ours, first; no value opened another
    assert p.headers == ["key", "count", "state"]
    assert len(p.rows) == len(frame)
    return p


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1) | st.sampled_from(HOSTILE), st.integers(0, 10**12),
                          st.sampled_from(["BAD", "OK", "<b>x</b>"])), min_size=1, max_size=5))
def test_every_cell_reads_back_as_its_text(rows):
    frame = pd.DataFrame(rows, columns=["key", "n", "state"])
    p = _check(html_table(frame, COLUMNS, caption="t <b>"), frame)
    for (key, n, state), cells, hrefs in zip(rows, p.rows, p.hrefs):
        assert cells == [key, f"{n:,}", state]
        # the link searches exactly the key (percent-encoded, decoded back by urllib), on the explorer path
        u = urlsplit(hrefs[0])
        assert (u.scheme, u.netloc, u.path) == ("", "", "explorer") and parse_qs(u.query)["q"] == [key]
        assert hrefs[1:] == [None, None]
    # a badge is drawn only for the listed values, never from the value's own text
    badges = [a.get("class") for t, a in p.tags if t == "span"]
    assert badges == [{"BAD": "b b-red", "OK": "b b-green"}[s] for _, _, s in rows if s in ("BAD", "OK")]


def test_hostile_values_by_hand():
    frame = pd.DataFrame({"key": HOSTILE, "n": range(len(HOSTILE)), "state": ["OK"] * len(HOSTILE)})
    body = html_table(frame, COLUMNS)
    p = _check(body, frame)
    assert [r[0] for r in p.rows] == HOSTILE
    assert "<img" not in body and "<script" not in body and "</td></tr></table>" not in body
    assert '<td class="nw"><a href="explorer?field=Idempotency+key&amp;q=%3Cimg+src%3Dx+onerror%3Dalert%281%29%3E"' \
           ' target="_blank" rel="noopener noreferrer">&lt;img src=x onerror=alert(1)&gt;</a></td>' in body


def test_missing_values_show_a_dash_without_a_link():
    frame = pd.DataFrame({"key": [None, "k"], "n": [math.nan, 3.0], "state": [pd.NA, "OK"]}, dtype=object)
    p = html_rows.parse(html_table(frame, COLUMNS))
    assert p.rows == [[MISSING, MISSING, MISSING], ["k", "3", "OK"]]
    assert p.hrefs[0] == [None, None, None]


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JavaScript:alert(1)", "//evil.example/x", "https://x.y/",
                                 'x"onmouseover=alert(1)', "x'y", "a b", "x<y", "data:text/html,x", "x\\y",
                                 "explorer?q=(x)", "/\x00"])
def test_unsafe_link_targets_are_refused(url):
    with pytest.raises(ValueError):
        safe_href(url)
    frame = pd.DataFrame({"key": ["k"], "n": [1], "state": ["OK"]})
    with pytest.raises(ValueError):
        html_table(frame, [Column("key", "key", link=lambda r: url)])


def test_relative_encoded_targets_pass():
    for url in ("explorer?field=Request+id&q=%3Cscript%3E", "poison", "../stuck?service=a&operation=b%26c"):
        assert safe_href(url) == url


def test_bad_column_or_badge_colour():
    frame = pd.DataFrame({"key": ["k"]})
    with pytest.raises(KeyError):
        html_table(frame, [Column("nope", "nope")])
    with pytest.raises(ValueError):
        html_table(frame, [Column("key", "key", badge={"k": "purple;x"})])


def test_frame_columns_by_dtype_and_bars():
    """Ids link into the explorer, integers get thousands separators, datetimes show to the second, a bar column
    draws value / largest of the width."""
    from datetime import datetime

    frame = pd.DataFrame({"events": [1234, 3], "idempotency_key": ["k<1>", "k2"], "share": [0.5, 0.25],
                          "last_seen": [datetime(2026, 1, 5, 10, 30, 1, 500_000), datetime(2026, 1, 5, 10, 31)]})
    bar = Column("events", "events", lambda v: f"{int(v):,}", "right", bar=1234.0)
    p = html_rows.parse(html_table(frame, frame_columns(frame, {"events": bar})))
    assert p.rows == [["1,234", "k<1>", "0.50", "2026-01-05 10:30:01"], ["3", "k2", "0.25", "2026-01-05 10:31:00"]]
    assert parse_qs(urlsplit(p.hrefs[0][1]).query) == {"field": ["Idempotency key"], "q": ["k<1>"]}
    widths = [a["style"] for t, a in p.tags if t == "span" and "style" in a]
    assert widths == ["width:100.0%", f"width:{3 / 1234 * 100:.1f}%"]
    assert p.cols == ["events", "idempotency_key", "share", "last_seen"]
