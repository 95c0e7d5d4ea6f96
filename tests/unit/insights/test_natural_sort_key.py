"""The natural sort key of Logs Insights text ordering (collector/insights/sql.py ``_NATURAL_KEY``) tells digit runs
by their first character: the runs ``regexp_extract_all(s, '[0-9]+|[^0-9]+')`` yields are all digits or none, so
that equals testing the whole run with ``regexp_full_match(ch, '[0-9]+')`` (the former, slower form)."""

from __future__ import annotations

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.insights.sql import _NATURAL_KEY

_REGEX_FORM = ("list_transform(regexp_extract_all({s}, '[0-9]+|[^0-9]+'), lambda ch: CASE WHEN "
               "regexp_full_match(ch, '[0-9]+') THEN '0' || lpad(CAST(length(ch) AS VARCHAR), 9, '0') || ch "
               "ELSE ch END)")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.sampled_from("0123456789abc-_é٣0\x00 ") | st.characters(blacklist_categories=("Cs",)),
                        max_size=20), min_size=1, max_size=30))
def test_natural_key_equals_the_regex_form(values):
    con = duckdb.connect()
    got = con.execute(f"SELECT list({_NATURAL_KEY.format(s='v')} ORDER BY i), list({_REGEX_FORM.format(s='v')} ORDER BY i) "
                      "FROM (SELECT unnest($1) AS v, generate_subscripts($1, 1) AS i)", [values]).fetchone()
    assert got[0] == got[1]
    assert sorted(range(len(values)), key=lambda i: (got[0][i], i)) == sorted(range(len(values)),
                                                                            key=lambda i: (got[1][i], i))
