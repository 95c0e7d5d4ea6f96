"""[fidelity-vended] Fuzzing the tokenizer and parser (and the compiler, which needs no data): any text gives a parse
tree or the engine's own one-line QueryError with a line and column - never another exception, never the
internal-error net. Words and punctuation of the whole grammar, the new forms included (join, subqueries, SOURCE
'<group>', list indexes, '!', bin with two arguments)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.insights import QueryError, compile_query, parse_query
from collector.insights.tokenizer import tokenize

_WORDS = ["fields", "filter", "stats", "sort", "by", "limit", "parse", "dedup", "display", "unnest", "into", "as",
          "and", "or", "not", "in", "like", "desc", "asc", "offset", "count(*)", "count()", "bin(5m)",
          "bin(@timestamp, 1h)", "a", "b", "a.b", "users[1].action", "x[0][2]", "@message", "@timestamp", "@@k",
          "`odd name`", "jsonParse(@message)", "SOURCE", "logGroups(", "namePrefix:", "'/aws/lambda/x'", "filterIndex",
          "unmask", "join", "type=inner", "type=left", "left=api", "right=fn", "where", "api.k", "fn.k", "isPresent(",
          "!", "strlen(", "pct(a,", "1e999", "99999999999999999999", "5m", "0", "-", "pattern", "anomaly"]
_PUNCT = list("|,()[]=<>!+-*/%^~:\"'`#@.\n\\ ") + ["/x/", "/(?<g>\\w+)/", '"a*"', "'* *'", "[]", "=~", "(?<", "\\(",
                                                   "( SOURCE 'g' | fields a )", "in (", "!="]
_QUERY = st.lists(st.sampled_from(_WORDS + _PUNCT), min_size=1, max_size=30).map(" ".join)
_TEXT = st.one_of(_QUERY, _QUERY.map(lambda q: q.replace(" ", "")), st.text(max_size=80))


def _only_query_errors(text: str) -> None:
    try:
        tokenize(text)
    except QueryError as exc:
        assert exc.line is not None and exc.column is not None and "\n" not in str(exc), str(exc)
    try:
        compile_query(parse_query(text))
    except QueryError as exc:
        assert "internal error" not in exc.message, exc.message
        assert "\n" not in str(exc), str(exc)
        assert exc.line is not None and exc.column is not None, str(exc)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT)
def test_fuzz_tokenizer_parser_and_compiler_raise_only_positioned_query_errors(text):
    _only_query_errors(text)


@pytest.mark.slow
@settings(max_examples=8_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT)
def test_fuzz_tokenizer_parser_and_compiler_many_examples(text):
    _only_query_errors(text)
