"""The Events explorer pages a large result: exact totals, every record on some page, the page in the URL.

Data: the sample tables plus 1,234 trail records of one correlation id (sample_tables.bulk_trail), one key each,
100 ms apart, so the trail order is the records' index and a search for the correlation id returns exactly them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard import trail
from dashboard.data import load_dataset

APP = Path(__file__).resolve().parents[2].parent / "dashboard" / "app.py"
N = 1234  # 3 pages of 500: 1-500, 501-1,000, 1,001-1,234

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def bulk_dir(tmp_path_factory, sample_mod) -> Path:
    return sample_mod.write_data_dir(tmp_path_factory.mktemp("bulk"), sample_mod.with_bulk_trail(N))


@pytest.fixture()
def explorer(monkeypatch, bulk_dir):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("IDEMWATCH_DATA", str(bulk_dir))

    def open_(**params):
        at = AppTest.from_file(str(APP), default_timeout=60)
        for k, v in params.items():
            at.query_params[k] = v
        at.switch_page("app_pages/explorer.py").run()
        assert not at.exception, at.exception
        return at

    return open_


def requests(at) -> list[str]:
    """The request ids of the shown page."""
    return list(at.get_by_key("table-trail_rows").dataframe[0].value["function_request_id"])


def expected(lo: int, hi: int) -> list[str]:
    """Request ids of bulk records lo..hi (1-based, inclusive) of the trail order."""
    return [f"rb-{i:05d}" for i in range(lo - 1, hi)]


def shown(at) -> str:
    return next(c.value for c in at.main.caption if c.value.startswith("Showing records"))


def test_search_pages_with_exact_total(explorer):
    at = explorer()
    at.selectbox(key="ex_field").select("Correlation id").run()
    at.text_input(key="ex_value").input("corr-bulk").run()
    m = {x.label: x.value for x in at.main.metric}
    assert m == {"Records": "1,234", "Matched directly": "1,234", "Keys": "1,234", "Events": "1,234"}
    assert requests(at) == expected(1, 500)
    assert shown(at).startswith("Showing records 1–500 of 1,234")
    assert at.number_input(key="ex_page").label == "Page (of 3)"
    assert "page" not in at.query_params  # page 1 is the default: a plain search link stays plain
    at.number_input(key="ex_page").increment().run()
    assert requests(at) == expected(501, 1000) and at.query_params["page"] == "2"
    at.number_input(key="ex_page").set_value(3).run()
    assert requests(at) == expected(1001, 1234) and shown(at).startswith("Showing records 1,001–1,234 of 1,234")
    # the counts are the whole result's on every page
    assert {x.label: x.value for x in at.main.metric}["Records"] == "1,234"


def test_every_record_is_on_exactly_one_page(explorer):
    seen = []
    for page in (1, 2, 3):
        seen += requests(explorer(field="Correlation id", q="corr-bulk", page=str(page)))
    assert seen == expected(1, N)


def test_page_from_the_url_and_clamped(explorer):
    at = explorer(field="Correlation id", q="corr-bulk", page="2")
    assert requests(at) == expected(501, 1000) and at.number_input(key="ex_page").value == 2
    at = explorer(field="Correlation id", q="corr-bulk", page="9")  # past the last page: the last one
    assert requests(at) == expected(1001, 1234) and at.number_input(key="ex_page").value == 3
    assert at.query_params["page"] == "3"
    # "9" * 5000: int() refuses over 4,300 digits (CPython's limit); a typed URL must not become a traceback
    for bad in ("0", "-1", "abc", "²", "1e3", "", "9" * 5000, "0" * 5000 + "2"):
        at = explorer(field="Correlation id", q="corr-bulk", page=bad)
        assert requests(at) == expected(1, 500), bad
        assert "page" not in at.query_params, bad


def test_a_new_search_starts_at_page_one(explorer):
    at = explorer(field="Correlation id", q="corr-bulk", page="3")
    at.checkbox(key="ex_partial").uncheck().run()  # a different search (exact), same text: page 1 again
    assert requests(at) == expected(1, 500) and at.number_input(key="ex_page").value == 1
    assert "page" not in at.query_params
    at.text_input(key="ex_value").input("corr-9").run()  # 9 records: one page, no page box
    assert len(requests(at)) == 9 and not [n for n in at.number_input if n.key == "ex_page"]
    assert not [c for c in at.main.caption if c.value.startswith("Showing records")]


def test_search_page_counts_and_order(bulk_dir):
    ds = load_dataset(bulk_dir)
    p = trail.search_page(ds, "Any id", "bulk-00", partial=True, page=2, page_size=300)
    # keys bulk-00000..bulk-00999 contain "bulk-00" (1,000 records; bulk-01000.. do not), each a record of its own
    assert (p.total, p.matched, p.keys, p.events, p.pages, p.page, p.first) == (1000, 1000, 1000, 1000, 4, 2, 301)
    assert list(p.rows["idempotency_key"]) == [f"bulk-{i:05d}" for i in range(300, 600)]
    assert p.rows["matched"].all() and p.rows["timestamp"].is_monotonic_increasing
    last = trail.search_page(ds, "Any id", "bulk-00", partial=True, page=99, page_size=300)
    assert (last.page, last.first, len(last.rows)) == (4, 901, 100)
    none = trail.search_page(ds, "Any id", "no-such-id")
    assert (none.total, none.pages, none.first, len(none.rows)) == (0, 0, 0, 0)
    with pytest.raises(ValueError):
        trail.search_page(ds, "Any id", "bulk", page_size=0)
    rows, truncated = trail.search(ds, "Correlation id", "corr-bulk")  # the first MAX_TRAIL_ROWS, flagged
    assert len(rows) == N and not truncated


def test_search_keeps_related_records_on_their_page(bulk_dir, sample_mod):
    ds = load_dataset(bulk_dir)
    # corr-9 matches 9 records directly; nothing else shares their key or event id
    p = trail.search_page(ds, "Correlation id", "corr-9", page_size=4)
    assert (p.total, p.matched, p.keys, p.events, p.pages) == (9, 9, 1, 1, 3)
    whole = trail.search_page(ds, "Correlation id", "corr-9", page_size=9).rows
    pages = [trail.search_page(ds, "Correlation id", "corr-9", page=i, page_size=4).rows for i in (1, 2, 3)]
    assert [list(x["function_request_id"]) for x in pages] == [list(whole["function_request_id"][i:i + 4])
                                                                for i in (0, 4, 8)]
    # r-5 matches one record; its key's two duplicates are added, not matched
    p = trail.search_page(ds, "Request id", "r-5")
    assert (p.total, p.matched, p.keys) == (3, 1, 1)
