"""The cloud path and the offline path give identical tables for the same events.

Events: the demo fleet's logs (real emitter records, START/END/REPORT lines). Cloud path: the events served by the
fake Logs Insights server (answering with the offline engine over the same events, restricted to each StartQuery
window), collected by collect_cloudwatch with every standard query, 1-hour windows, a 300-row query limit so that
windows are split (``[a, m]``, ``[m + 1, b]``) and pieces merged. Offline path: each standard query run once over all
events with no row cap, by the offline engine. Every table must match value for value and type for type.

``@log``: "@log is a log group identifier in the form of account-id:log-group-name"
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_AnalyzeLogData-discoverable-fields.html). The fake
server answers like CloudWatch (``123456789012:/aws/lambda/<fn>``), the local collector builds the same form from
``account_id``; both tables hold ``log_group`` = the bare name and ``account_id`` = the account.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from collector.cloudwatch import Backoff, PollSchedule, RunnerConfig
from collector.cloudwatch.collect import (
    Clients,
    CollectOptions,
    collect_cloudwatch,
    load_standard_queries,
)
from collector.parquet import arrow_schema, frame_from_arrow
from collector.tables import TABLES
from tests.support.fake_logs_insights import FakeLogsInsightsServer
from tests.support.fake_logs_insights_engines import FAKE_ACCOUNT_ID, InsightsEngine


def _events(logs: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f in sorted(logs.glob("*.log")):
        evs = []
        for i, line in enumerate(f.read_text().splitlines()):
            ts, _, msg = line.partition(" ")
            ms = int(datetime.fromisoformat(ts).timestamp() * 1000 + 0.5)
            evs.append({"timestamp": ms, "message": msg, "logStreamName": "s1", "eventId": f"{i:08d}"})
        out[f"/aws/lambda/{f.stem}"] = evs
    return out


@pytest.fixture(scope="module")
def demo_logs(tmp_path_factory) -> Path:
    from dashboard.demo import run_demo

    out = tmp_path_factory.mktemp("demo")
    run_demo(out, seed=11, events=500, duration_s=2 * 3600)
    logs = out / "logs"
    t0 = min(_events(logs)[g][0]["timestamp"] for g in _events(logs)) + 60_000
    # real Powertools and aws-embedded-metrics output (library_signals) and claims never completed (stuck_keys),
    # in the same export-to-S3 line format, inside the demo's time range
    samples = Path(__file__).resolve().parents[3].parent / "shared" / "samples"
    for stem, src in (("powertools-fn", "powertools-real.jsonl"), ("emf-fn", "emf-library-real.jsonl")):
        lines = [ln for ln in (samples / src).read_text().splitlines() if ln.strip()]
        (logs / f"{stem}.log").write_text("".join(f"{_iso(t0 + 1500 * i)} {ln}\n" for i, ln in enumerate(lines)))
    claims = []
    for i in range(6):
        t = t0 + 45_000 * i
        rec = {"timestamp": _iso(t), "service": "shop", "operation": "Stuck", "schema_version": "1",
               "idempotency_key": f"stuck-{i}", "function_request_id": f"req-{i}", "attempt": 1}
        claims.append(json.dumps({**rec, "outcome": "claimed", "idempotency_status": "IN_PROGRESS",
                                  "in_progress_expires_at_ms": t + 30_000}))
        if i % 3 == 0:  # completed later: not stuck
            claims.append(json.dumps({**rec, "outcome": "succeeded", "idempotency_status": "COMPLETED"}))
    (logs / "stuck-fn.log").write_text("".join(f"{_iso(t0 + 45_000 * (i // 2) + 10 * (i % 2))} {c}\n"
                                               for i, c in enumerate(claims)))
    return logs


def _iso(ms: int) -> str:

    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _canon(df: pd.DataFrame) -> pd.DataFrame:
    cols = list(df.columns)
    return df.sort_values(cols, kind="stable", na_position="first").reset_index(drop=True)


@pytest.mark.parametrize("combine", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_every_standard_table_identical(demo_logs, logs_client, tmp_path, combine):
    """``combine``: the standard queries share one scan per window and each table is computed from the scanned
    events (the default); False: each standard query runs in Logs Insights on its own (the collector before the
    shared scans). Both must give the offline tables."""
    from collector.collect import collect_local

    demo_events = _events(demo_logs)
    lo = min(e["timestamp"] for evs in demo_events.values() for e in evs) // 1000
    hi = max(e["timestamp"] for evs in demo_events.values() for e in evs) // 1000
    # a range strictly containing the data (the end second after the last event), same for both paths
    start, end = (lo // 60) * 60, (hi // 60 + 2) * 60 - 1
    collect_local([demo_logs], tmp_path / "local", since=start, until=end, account_id=FAKE_ACCOUNT_ID)
    queries = load_standard_queries()
    assert set(queries) == set(TABLES)
    with FakeLogsInsightsServer(engine=InsightsEngine()) as srv:
        for g, evs in demo_events.items():
            srv.put_events(g, evs)
        opts = CollectOptions(since=start, until=end, log_group_prefixes=["/aws/lambda/"], queries=queries,
                              combine=combine,
                              runner=RunnerConfig(limit=300, poll=PollSchedule(0.01, 1.5, 0.05),
                                                  backoff=Backoff(0.005, 0.02), max_polls_per_s=0,
                                                  max_starts_per_s=0))
        client = logs_client(srv.url)
        # the server's @log is account-qualified, as CloudWatch's: what "@log as log_group" returns
        qid = client.start_query(logGroupNames=sorted(demo_events), startTime=start, endTime=end,
                                 queryString="stats count(*) by @log as log_group")["queryId"]
        for _ in range(200):
            got = client.get_query_results(queryId=qid)
            if got["status"] == "Complete":
                break
        raw = {f["value"] for row in got["results"] for f in row if f["field"] == "log_group"}
        assert raw == {f"{FAKE_ACCOUNT_ID}:{g}" for g in demo_events}
        m = collect_cloudwatch(tmp_path / "cloud", opts, clients=Clients(logs=client), now=lambda: end + 86400)
    if combine:
        assert all(e["source"] == "scan" and e["queries"] == 0 for e in m["tables"].values())
        # the 300-row limit forced splits of the scans (more queries than windows), so pieces are joined
        assert m["scan"]["this_run"]["queries"] > m["scan"]["this_run"]["windows_scanned"] == 3
    else:
        splits = {n: e["queries"] - e["queried_windows"] for n, e in m["tables"].items()}
        assert splits["trail"] > 0  # the 300-row limit forced splits, so merging is exercised
    rows_seen: dict[str, int] = {}
    for name, table in TABLES.items():
        entry = m["tables"][name]
        assert entry["status"] == "complete", (name, entry)
        assert entry["unmerged_duplicates"] == 0 and entry["conversion"]["bad_values"] == {}, name
        cloud = pd.read_parquet(tmp_path / "cloud" / "tables" / f"{name}.parquet")
        offline = pd.read_parquet(tmp_path / "local" / "tables" / f"{name}.parquet")
        assert cloud.dtypes.to_dict() == offline.dtypes.to_dict(), name  # same Parquet schema

        import pyarrow as pa

        offline = frame_from_arrow(pa.Table.from_pandas(offline, schema=arrow_schema(table), preserve_index=False))
        cloud = frame_from_arrow(pa.Table.from_pandas(cloud, schema=arrow_schema(table), preserve_index=False))
        assert len(offline) > 0, name
        rows_seen[name] = len(offline)
        assert list(cloud.columns) == list(table.column_names)
        pd.testing.assert_frame_equal(_canon(cloud), _canon(offline), check_exact=False, rtol=1e-9, obj=name)
        if "log_group" in table.column_names:  # split: bare names of the demo's groups, and the account
            assert set(cloud["log_group"]) <= set(demo_events), name
            assert set(cloud["account_id"]) == {FAKE_ACCOUNT_ID}, name
    assert json.loads((tmp_path / "cloud" / "manifest.json").read_text())["tables"]["outcomes"]["rows"] > 0
    assert sum(rows_seen.values()) > 3000


@pytest.mark.slow
def test_run_cut_by_the_deadline_then_resumed_gives_the_same_tables(demo_logs, logs_client, tmp_path):
    """Two scans hang until the run's --deadline: their windows are recorded failed and the tables incomplete; the
    next run scans only those windows and every table equals the offline one."""
    from collector.collect import collect_local

    demo_events = _events(demo_logs)
    lo = min(e["timestamp"] for evs in demo_events.values() for e in evs) // 1000
    hi = max(e["timestamp"] for evs in demo_events.values() for e in evs) // 1000
    start, end = (lo // 60) * 60, (hi // 60 + 2) * 60 - 1
    collect_local([demo_logs], tmp_path / "local", since=start, until=end, account_id=FAKE_ACCOUNT_ID)
    from tests.support.fake_logs_insights import Faults

    with FakeLogsInsightsServer(engine=InsightsEngine(), faults=Faults(hang_first_n=2)) as srv:
        for g, evs in demo_events.items():
            srv.put_events(g, evs)
        client = Clients(logs=logs_client(srv.url))

        def run(deadline: float | None):
            opts = CollectOptions(since=start, until=end, log_group_prefixes=["/aws/lambda/"],
                                  runner=RunnerConfig(poll=PollSchedule(0.01, 1.5, 0.05), backoff=Backoff(0.005, 0.02),
                                                      max_polls_per_s=0, max_starts_per_s=0,
                                                      overall_deadline_s=deadline))
            return collect_cloudwatch(tmp_path / "cloud", opts, clients=client, now=lambda: end + 86400)

        first = run(deadline=1.5)
        assert first["scan"]["this_run"]["windows_failed"] == 2
        assert {e["status"] for e in first["tables"].values()} == {"failed"}
        assert srv.count("StopQuery") == 2
        second = run(deadline=None)
    assert second["scan"]["this_run"]["windows_scanned"] == 2 == second["scan"]["this_run"]["windows_from_earlier_scans"] + 1
    for name, table in TABLES.items():
        assert second["tables"][name]["status"] == "complete", name
        cloud = pd.read_parquet(tmp_path / "cloud" / "tables" / f"{name}.parquet")
        offline = pd.read_parquet(tmp_path / "local" / "tables" / f"{name}.parquet")
        import pyarrow as pa

        offline = frame_from_arrow(pa.Table.from_pandas(offline, schema=arrow_schema(table), preserve_index=False))
        cloud = frame_from_arrow(pa.Table.from_pandas(cloud, schema=arrow_schema(table), preserve_index=False))
        pd.testing.assert_frame_equal(_canon(cloud), _canon(offline), check_exact=False, rtol=1e-9, obj=name)
