"""The cloud path and the offline path give identical tables for the same events.

Events: the demo fleet's logs (real emitter records, START/END/REPORT lines). Cloud path: the events served by the
fake Logs Insights server (answering with the offline engine over the same events, restricted to each StartQuery
window), collected by collect_cloudwatch with every standard query, 1-hour windows, a 300-row query limit so that
windows are split (``[a, m]``, ``[m + 1, b]``) and pieces merged. Offline path: each standard query run once over all
events with no row cap, by the offline engine. Every table must match value for value and type for type.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from collector.cloudwatch import Backoff, PollSchedule, RunnerConfig
from collector.cloudwatch.collect import (
    Clients,
    CollectOptions,
    collect_cloudwatch,
    derive_stuck_columns,
    load_standard_queries,
)
from collector.cloudwatch.convert import arrow_schema, frame_from_arrow
from collector.cloudwatch.testing import FakeLogsInsightsServer, InsightsEngine, insights_engine
from collector.tables import TABLES


def _events(logs: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f in sorted(logs.glob("*.log")):
        evs = []
        for i, line in enumerate(f.read_text().splitlines()):
            ts, _, msg = line.partition(" ")
            ms = int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000 + 0.5)
            evs.append({"timestamp": ms, "message": msg, "logStreamName": "s1", "eventId": f"{i:08d}"})
        out[f"/aws/lambda/{f.stem}"] = evs
    return out


@pytest.fixture(scope="module")
def demo_events(tmp_path_factory) -> dict[str, list[dict]]:
    from dashboard.demo import run_demo

    out = tmp_path_factory.mktemp("demo")
    run_demo(out, seed=11, events=500, duration_s=2 * 3600)
    return _events(out / "logs")


def _offline(query: str, groups: dict[str, list[dict]], start: int, end: int, table) -> pd.DataFrame:
    rows = insights_engine(query, groups, start, end)  # one query over everything, no cap
    from collector.cloudwatch.convert import to_frame

    return to_frame([dict(r) for r in rows], table)[0]


def _canon(df: pd.DataFrame) -> pd.DataFrame:
    cols = list(df.columns)
    return df.sort_values(cols, kind="stable", na_position="first").reset_index(drop=True)


def test_every_standard_table_identical(demo_events, logs_client, tmp_path):
    lo = min(e["timestamp"] for evs in demo_events.values() for e in evs) // 1000
    hi = max(e["timestamp"] for evs in demo_events.values() for e in evs) // 1000
    start, end = (lo // 60) * 60, (hi // 60 + 1) * 60 - 1
    queries = load_standard_queries()
    assert set(queries) == set(TABLES)
    with FakeLogsInsightsServer(engine=InsightsEngine()) as srv:
        for g, evs in demo_events.items():
            srv.put_events(g, evs)
        opts = CollectOptions(since=start, until=end, log_group_prefixes=["/aws/lambda/"], queries=queries,
                              runner=RunnerConfig(limit=300, poll=PollSchedule(0.01, 1.5, 0.05),
                                                  backoff=Backoff(0.005, 0.02), max_polls_per_s=0))
        m = collect_cloudwatch(tmp_path, opts, clients=Clients(logs=logs_client(srv.url)), now=lambda: end + 86400)
    splits = {n: e["queries"] - e["queried_windows"] for n, e in m["tables"].items()}
    assert splits["trail"] > 0  # the 300-row limit forced splits, so merging is exercised
    for name, table in TABLES.items():
        entry = m["tables"][name]
        assert entry["status"] == "complete", (name, entry)
        assert entry["unmerged_duplicates"] == 0 and entry["conversion"]["bad_values"] == {}, name
        cloud = pd.read_parquet(tmp_path / "tables" / f"{name}.parquet")
        # one query over everything; endTime end + 1 because the engine, like the service, compares endTime at the
        # millisecond (aws/aws-sdk#280) and events of second `end` (end.001 .. end.999) belong to the range
        offline = _offline(queries[name], demo_events, start, end + 1, table)
        if name == "stuck_keys":
            offline = derive_stuck_columns(offline, end * 1000)
        import pyarrow as pa

        offline = frame_from_arrow(pa.Table.from_pandas(offline, schema=arrow_schema(table), preserve_index=False))
        cloud = frame_from_arrow(pa.Table.from_pandas(cloud, schema=arrow_schema(table), preserve_index=False))
        assert len(offline) > 0 or name in ("conflicting_keys", "stuck_keys", "library_signals"), name
        assert list(cloud.columns) == list(table.column_names)
        pd.testing.assert_frame_equal(_canon(cloud), _canon(offline), check_exact=False, rtol=1e-9, obj=name)
    assert json.loads((tmp_path / "manifest.json").read_text())["tables"]["outcomes"]["rows"] > 0
