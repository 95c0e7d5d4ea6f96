"""Every diagnose query gives the same answer offline and on CloudWatch Logs Insights (the fake server: boto3 over
real HTTP on 127.0.0.1, answering with the offline engine restricted to each StartQuery window and log groups).

Offline, values come back typed (numbers); from the API every value is text and a query's rows arrive through the
collector's runner (paging, log groups in batches). The findings built from either must be the same, value for
value: the evidence queries' rows (normalized), and every finding with its examples.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from alarms.diagnose.evaluate import diagnose
from alarms.diagnose.inventory import INVENTORY_QUERIES
from alarms.diagnose.rules import RULES, render_query
from alarms.diagnose.sources import CloudWatchSource, EngineSource
from alarms.diagnose.types import DiagnoseOptions
from collector.cloudwatch.runner import LogsInsightsRunner
from tests.support.fake_logs_insights import FakeLogsInsightsServer
from tests.support.fake_logs_insights_engines import FAKE_ACCOUNT_ID, InsightsEngine
from tests.unit.diagnose.trails import CASES, all_cases_events


def _offline(groups: dict[str, list[dict[str, Any]]]) -> EngineSource:
    from collector.ingest import EventStore
    from collector.insights import harden_connection

    store = EventStore(account_id=FAKE_ACCOUNT_ID)  # the account the fake server's @log carries
    for group, events in sorted(groups.items()):
        store.ingest_events(events, group)
    harden_connection(store.connection)
    return EngineSource(store.connection, "offline", keep=store)


def _window(groups: dict[str, list[dict[str, Any]]]) -> tuple[int, int]:
    times = [e["timestamp"] for evs in groups.values() for e in evs]
    return min(times) // 1000 - 60, max(times) // 1000 + 60


def _norm(v: Any) -> Any:
    """A value as both paths can agree on: numbers (or numeric text) as floats, other text as is."""
    if v is None or isinstance(v, bool):
        return v
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


def _rows(rows: Any) -> list[tuple]:
    return sorted((tuple(sorted((k, _norm(v)) for k, v in r.items() if v is not None)) for r in rows), key=repr)


def _compare(groups: dict[str, list[dict[str, Any]]], logs_client: Any, fast_config: Any,
             options: DiagnoseOptions) -> list[Any]:
    start, end = _window(groups)
    offline = _offline(groups)
    queries = [*INVENTORY_QUERIES, *dict.fromkeys(render_query(r.query, options.query_params()) for r in RULES)]
    with FakeLogsInsightsServer(engine=InsightsEngine()) as srv:
        for group, events in groups.items():
            srv.put_events(group, events)
        cloud = CloudWatchSource(LogsInsightsRunner(logs_client(srv.url), fast_config(max_concurrency=8)),
                                 sorted(groups), start, end)
        try:
            for q, off, cw in zip(queries, offline.run_many(queries), cloud.run_many(queries), strict=True):
                assert not cw.truncated
                assert _rows(off.rows) == _rows(cw.rows), q.splitlines()[0]
            found_cloud = diagnose(cloud, options)
        finally:
            cloud.close()
    try:
        found_offline = diagnose(offline, options)
    finally:
        offline.close()
    assert [f.to_dict() for f in found_cloud] == [f.to_dict() for f in found_offline]
    return found_offline


@pytest.mark.slow
def test_every_case_same_offline_and_on_cloudwatch(fake_aws_env, logs_client, fast_config) -> None:
    found = _compare(all_cases_events(), logs_client, fast_config, DiagnoseOptions())
    statuses = {(f.function, f.rule): f.status.value for f in found}
    for i, case in enumerate(CASES):
        assert statuses[(f"case-{i:02d}", case.rule)] == case.status, case.name


@pytest.mark.slow
def test_injected_demo_same_offline_and_on_cloudwatch(fake_aws_env, logs_client, fast_config, tmp_path) -> None:
    """The demo fleet with every anti-pattern built in (its logs keep their log streams): the same findings from
    the fake server as offline, and each injected anti-pattern found in its function."""
    from dashboard.demo import run_demo
    from dashboard.demo.faults import AntiPattern

    truth = run_demo(tmp_path, seed=5, events=4_000, duration_s=2 * 3600, start_ms=1_767_600_000_000,
                     anti_patterns=list(AntiPattern))
    groups = {f"/aws/lambda/{p.stem}": json.loads(p.read_text())["events"]
              for p in sorted(Path(tmp_path, "logs").glob("*.log"))}
    found = _compare(groups, logs_client, fast_config, DiagnoseOptions())
    got = {fn: {f.rule for f in found if f.function == fn and f.status.value == "fail"} for fn in truth.functions}
    assert got == truth.expected_rules()
