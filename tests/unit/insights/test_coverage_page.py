"""[fidelity] docs/logs-insights-coverage.md is generated from the engine's registries and is not stale."""

from __future__ import annotations

import pytest

from collector.insights import QueryError, compile_query
from collector.insights.catalog import SUPPORTED_COMMANDS, UNSUPPORTED_COMMANDS, UNSUPPORTED_FUNCTIONS
from collector.insights.coverage import COVERAGE_PAGE, render_coverage
from collector.insights.functions import AGGREGATE_FUNCTIONS, SCALAR_FUNCTIONS


def test_committed_coverage_page_matches_the_registries():
    assert COVERAGE_PAGE.read_text(encoding="utf-8") == render_coverage(), (
        "docs/logs-insights-coverage.md is stale: run .venv/bin/python -m collector.insights.coverage")


def test_every_registered_name_is_on_the_page():
    page = render_coverage()
    for name in [c.name for c in (*SUPPORTED_COMMANDS.values(), *UNSUPPORTED_COMMANDS.values())] + \
            [f.name for f in (*AGGREGATE_FUNCTIONS.values(), *SCALAR_FUNCTIONS.values(), *UNSUPPORTED_FUNCTIONS.values())]:
        assert f"| `{name}`" in page, name


@pytest.mark.parametrize("name", sorted(UNSUPPORTED_COMMANDS))
def test_every_refused_command_is_refused_with_its_registered_reason(name):
    info = UNSUPPORTED_COMMANDS[name]
    with pytest.raises(QueryError) as e:
        compile_query(f"fields a | {info.name} x")
    assert e.value.message == f"unsupported command '{info.name}': {info.notes}"
