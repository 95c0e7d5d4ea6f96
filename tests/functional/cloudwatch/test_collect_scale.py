"""Shared scans, field indexes, incremental stuck keys and the dry run, end to end over HTTP on 127.0.0.1.

The fake server answers with the offline engine (``InsightsEngine``) and models field indexes as the CloudWatch Logs
pages describe them (``tests.support.fake_field_indexes``); the oracles are the events put in: their bytes (what a
scan must bill) and the tables of a collection that uses no index.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from collector.cloudwatch import Backoff, PollSchedule, RunnerConfig
from collector.cloudwatch.collect import Clients, CollectOptions, collect_cloudwatch
from collector.cloudwatch.commands import cloudwatch
from collector.standard_queries import load_standard_queries
from tests.support.fake_logs_insights import FakeLogsInsightsServer, Faults
from tests.support.fake_logs_insights_engines import InsightsEngine

T0 = 1_767_607_200  # 2026-01-05 10:00:00 UTC
A, B = "/aws/lambda/a", "/aws/lambda/b"
EMITTER_TABLES = ["outcomes", "trail", "stuck_keys", "attempts"]


def record(t_ms: int, i: int, **extra) -> dict:
    rec = {"schema_version": "1", "service": "shop", "operation": "Pay", "event_source": "sqs",
           "outcome": "received", "idempotency_key": f"k{i}", "attempt": 1 + i % 2, **extra}
    return {"timestamp": t_ms, "message": json.dumps(rec)}


def noise(t_ms: int, i: int) -> dict:
    return {"timestamp": t_ms, "message": f"INFO app line {i} " + "x" * 120}


def fleet(hours: int, per_hour: int = 20) -> list[dict]:
    """Per hour: emitter records, twice as many application lines, and one claim never completed."""
    evs = []
    for h in range(hours):
        for i in range(per_hour):
            t = (T0 + h * 3600 + i * 60) * 1000
            evs.append(record(t, h * 1000 + i))
            evs += [noise(t + 1, i), noise(t + 2, i)]
        t = (T0 + h * 3600 + 1800) * 1000 + 7
        evs.append(record(t, -h, outcome="claimed", idempotency_status="IN_PROGRESS",
                          in_progress_expires_at_ms=t + 30_000, idempotency_key=f"stuck-{h}"))
    return evs


def nbytes(evs: list[dict]) -> int:
    return sum(len(e["message"].encode()) for e in evs)


def options(hours: int, tables=EMITTER_TABLES, **kw) -> CollectOptions:
    return CollectOptions(since=T0, until=T0 + hours * 3600 - 1, log_groups=[A, B],
                          queries=load_standard_queries(tables),
                          runner=RunnerConfig(poll=PollSchedule(0.01, 1.5, 0.05), backoff=Backoff(0.005, 0.02),
                                              max_polls_per_s=0, max_starts_per_s=0), **kw)


def tables(out: Path, names=EMITTER_TABLES) -> dict[str, pd.DataFrame]:
    return {n: pd.read_parquet(out / "tables" / f"{n}.parquet") for n in names}


def assert_same_tables(a: Path, b: Path, names=EMITTER_TABLES) -> None:
    ta, tb = tables(a, names), tables(b, names)
    for n in names:
        assert len(ta[n]) > 0, n
        pd.testing.assert_frame_equal(ta[n], tb[n], obj=n)


@pytest.fixture
def server():
    with FakeLogsInsightsServer(engine=InsightsEngine()) as srv:
        srv.clock = lambda: T0 + 86400  # "now" for the server: index life, policy times
        yield srv


def test_indexed_windows_scan_only_emitter_records_and_unindexed_ones_fall_back(server, logs_client, tmp_path):
    """Log group a indexes schema_version from T0+1h (windows from T0+3h are covered: 2 hours of allowed timestamp
    skew), b has no policy. Indexed scans read a's emitter records only; everything else is scanned whole; the tables
    are the ones of a collection that uses no index."""
    evs_a, evs_b = fleet(5), fleet(5)
    server.put_events(A, evs_a)
    server.put_events(B, evs_b)
    server.put_index_policy(A, ["schema_version", "outcome", "idempotency_key"], at_s=T0 + 3600)
    client = Clients(logs=logs_client(server.url))
    m = collect_cloudwatch(tmp_path / "idx", options(5), clients=client, now=lambda: T0 + 86400)
    m_plain = collect_cloudwatch(tmp_path / "plain", options(5, use_indexes=False), clients=client,
                                 now=lambda: T0 + 86400)
    assert_same_tables(tmp_path / "idx", tmp_path / "plain")
    assert all(e["status"] == "complete" for e in m["tables"].values())
    scan = m["scan"]["this_run"]
    assert scan["indexed_group_windows"] == 2 and scan["field_indexes"]["groups_with_policy"] == 1
    assert m["queries"]["this_run"]["api_calls"]["DescribeIndexPolicies"] == 2 == server.count("DescribeIndexPolicies")
    # what was billed: all of b, a's first three hours whole, a's last two hours' emitter records only
    late_a = [e for e in evs_a if e["timestamp"] >= (T0 + 3 * 3600) * 1000]
    expected = nbytes(evs_b) + nbytes(evs_a) - nbytes(late_a) + nbytes([e for e in late_a if "schema_version" in
                                                                       e["message"]])
    assert scan["stats"]["bytes_scanned"] == expected < m_plain["scan"]["this_run"]["stats"]["bytes_scanned"]
    assert m_plain["scan"]["this_run"]["stats"]["bytes_scanned"] == nbytes(evs_a) + nbytes(evs_b)
    sent = [b for op, b in server.calls if op == "StartQuery"]
    indexed = [b for b in sent if "filterIndex" in b["queryString"]]
    assert len(indexed) == 2 and all(b["logGroupNames"] == [A] and b["startTime"] >= T0 + 3 * 3600 for b in indexed)


def test_filter_index_without_an_index_would_lose_rows(server, logs_client):
    """Why the collector checks coverage: filterIndex skips a log group without the index, and events ingested
    before the policy (CWL_QuerySyntax-FilterIndex.html)."""
    from collector.cloudwatch.scan import scan_query

    server.put_events(A, fleet(2))
    server.put_events(B, fleet(2))
    server.put_index_policy(A, ["schema_version"], at_s=T0 + 3600)
    c = logs_client(server.url)

    def count(groups: list[str], indexed: bool) -> int:
        qid = c.start_query(logGroupNames=groups, startTime=T0, endTime=T0 + 7200,
                            queryString=scan_query(['ispresent(schema_version)'], indexed=indexed))["queryId"]
        return len(c.get_query_results(queryId=qid)["results"])

    assert count([B], indexed=False) == 42 and count([B], indexed=True) == 0  # no index: skipped whole
    assert count([A], indexed=False) == 42 and count([A], indexed=True) == 21  # the first hour predates the policy


def test_no_permission_to_read_index_policies_scans_without_them(logs_client, tmp_path):
    with FakeLogsInsightsServer(engine=InsightsEngine(), faults=Faults(deny_operations={"DescribeIndexPolicies"})) as srv:
        srv.put_events(A, fleet(2))
        srv.put_events(B, fleet(2))
        srv.put_index_policy(A, ["schema_version"], at_s=T0 - 86400)
        m = collect_cloudwatch(tmp_path, options(2), clients=Clients(logs=logs_client(srv.url)),
                               now=lambda: T0 + 86400)
    scan = m["scan"]["this_run"]
    assert scan["indexed_group_windows"] == 0 and "logs:DescribeIndexPolicies" in scan["field_indexes"]["notes"][0]
    assert all(e["status"] == "complete" for e in m["tables"].values())


def test_a_full_scan_table_makes_the_scan_read_everything_once(server, logs_client, tmp_path):
    """invocations needs Lambda's REPORT lines, which no index selects: one plain scan per window serves every
    table, and indexes are not read at all (an indexed scan beside it would only add bytes)."""
    evs = fleet(2)
    server.put_events(A, evs)
    server.put_events(B, evs)
    server.put_index_policy(A, ["schema_version"], at_s=T0 - 86400)
    m = collect_cloudwatch(tmp_path, options(2, tables=[*EMITTER_TABLES, "invocations"]),
                           clients=Clients(logs=logs_client(server.url)), now=lambda: T0 + 86400)
    assert server.count("DescribeIndexPolicies") == 0
    assert m["scan"]["this_run"]["stats"]["bytes_scanned"] == 2 * nbytes(evs)  # each byte once
    assert m["scan"]["this_run"]["queries"] == 2  # one per window (both groups in one batch)


def test_stuck_keys_read_stored_windows_instead_of_scanning_the_range_again(server, logs_client, tmp_path):
    evs = fleet(4)
    server.put_events(A, [e for e in evs if e["timestamp"] < (T0 + 3 * 3600) * 1000])
    server.put_events(B, [])
    client = Clients(logs=logs_client(server.url))
    out = tmp_path / "incremental"
    m1 = collect_cloudwatch(out, options(3, use_indexes=False), clients=client, now=lambda: T0 + 3 * 3600 + 600)
    assert m1["scan"]["this_run"]["windows_scanned"] == 3
    # an hour later: hour 3 arrives, and the stuck claim of hour 0 completes in it
    done = record((T0 + 3 * 3600 + 5) * 1000, 0, outcome="succeeded", idempotency_status="COMPLETED",
                  idempotency_key="stuck-0")
    hour3 = [e for e in evs if e["timestamp"] >= (T0 + 3 * 3600) * 1000] + [done]
    server.put_events(A, hour3)
    m2 = collect_cloudwatch(out, options(4, use_indexes=False), clients=client, now=lambda: T0 + 4 * 3600 + 600)
    scan = m2["scan"]["this_run"]
    assert scan["windows_scanned"] == 1 and scan["windows_from_earlier_scans"] == 3
    assert scan["stats"]["bytes_scanned"] == nbytes(hour3)  # only the new hour was billed
    stuck = pd.read_parquet(out / "tables" / "stuck_keys.parquet")
    assert sorted(stuck.idempotency_key) == ["stuck-1", "stuck-2", "stuck-3"]
    # the same as one collection of the four hours at once
    fresh = collect_cloudwatch(tmp_path / "fresh", options(4, use_indexes=False), clients=client,
                               now=lambda: T0 + 4 * 3600 + 600)
    assert fresh["scan"]["this_run"]["windows_scanned"] == 4
    assert_same_tables(out, tmp_path / "fresh")


def test_dry_run_estimates_bytes_and_usd_and_touches_nothing(server, logs_client, tmp_path):
    evs = fleet(2)
    server.put_events(A, evs)
    server.put_events(B, evs)
    now = T0 + 7200
    # each group: created 10 days before now, no retention: its stored bytes spread over those 10 days
    for g in (A, B):
        server.group_meta[g] = {"creationTime": (now - 10 * 86400) * 1000}
    out = tmp_path / "data"
    opts = options(2, tables=[*EMITTER_TABLES, "invocations"])
    opts.queries["trail"] = "fields @timestamp | filter ispresent(outcome)"  # runs on its own
    est = collect_cloudwatch(out, opts, clients=Clients(logs=logs_client(server.url)), now=lambda: now, dry_run=True)
    assert server.count("StartQuery") == 0 and server.count("DescribeIndexPolicies") == 0 and not out.exists()
    per_group = nbytes(evs) / (10 * 86400) * 7200  # bytes per second x the two hours
    assert est["by_query"]["scan"]["bytes_scanned"] == round(2 * per_group)
    assert est["by_query"]["scan"]["tables"] == ["attempts", "invocations", "outcomes", "stuck_keys"]
    assert est["by_query"]["trail"]["bytes_scanned"] == round(2 * per_group) and est["by_query"]["trail"]["windows"] == 2
    assert est["total"]["cost_usd"] == pytest.approx(round(4 * per_group / 2**30 * 0.005, 6), abs=1e-6)
    assert est["stored_bytes"] == 2 * nbytes(evs)
    # the CLI prints it and still queries and writes nothing
    res = CliRunner().invoke(cloudwatch, ["--log-group", A, "--log-group", B, "--since", "2h", "--out", str(out),
                                          "--endpoint-url", server.url, "--region", "us-east-1", "--dry-run"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert server.count("StartQuery") == 0 and not out.exists()
    assert "Estimate (dry run" in res.output and "2 log group(s)" in res.output and "storedBytes" in res.output


def test_cli_reports_bytes_and_usd_per_query(server, tmp_path):
    server.put_events(A, fleet(1))
    server.put_events(B, fleet(1))
    qfile = tmp_path / "own.insights"
    qfile.write_text("fields @timestamp, @message | filter ispresent(outcome) | sort @timestamp asc")
    out = tmp_path / "data"
    res = CliRunner().invoke(cloudwatch, ["--log-group-prefix", "/aws/lambda/", "--since", str(T0), "--until",
                                          str(T0 + 3599), "--out", str(out), "--endpoint-url", server.url,
                                          "--region", "us-east-1", "--table", "outcomes", "--table", "attempts",
                                          "--query-file", f"trail={qfile}", "--no-progress", "--allow-partial"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    m = json.loads((out / "manifest.json").read_text())
    by = m["queries"]["by_query"]
    assert set(by) == {"scan", "trail"} and by["scan"]["tables"] == ["attempts", "outcomes"]
    assert by["scan"]["bytes_scanned"] + by["trail"]["bytes_scanned"] == m["queries"]["this_run"]["stats"]["bytes_scanned"]
    assert m["tables"]["trail"]["source"] == "query" and m["tables"]["outcomes"]["source"] == "scan"
    assert "shared scan" in res.output and "own query (1)" in res.output and "Logs Insights this run" in res.output


@pytest.mark.parametrize("where", ["queries", "manifest"])
def test_run_killed_then_run_again_gives_the_tables_of_one_run(server, logs_client, tmp_path, monkeypatch, where):
    """A --full run dies (as SIGKILL would leave it) while its queries run (its stored files already dropped) or
    just before its manifest is written (its scans and table pieces stored): the next run trusts only the files the
    last manifest lists and that exist, and its tables equal those of one clean run."""
    from collector.cloudwatch import manifest as mf
    from collector.cloudwatch.runner import LogsInsightsRunner

    server.put_events(A, fleet(3))
    server.put_events(B, fleet(3))
    client = Clients(logs=logs_client(server.url))
    out = tmp_path / "killed"
    collect_cloudwatch(out, options(2, use_indexes=False), clients=client, now=lambda: T0 + 86400)

    def die(*a, **kw):
        raise KeyboardInterrupt  # the process ends here

    with monkeypatch.context() as mp:
        if where == "queries":
            mp.setattr(LogsInsightsRunner, "run_jobs", die)
        else:
            mp.setattr(mf, "save", die)
        with pytest.raises(KeyboardInterrupt):
            collect_cloudwatch(out, options(3, use_indexes=False, full=True), clients=client, now=lambda: T0 + 86400)
    m = collect_cloudwatch(out, options(3, use_indexes=False), clients=client, now=lambda: T0 + 86400)
    assert all(e["status"] == "complete" for e in m["tables"].values())
    collect_cloudwatch(tmp_path / "clean", options(3, use_indexes=False), clients=client, now=lambda: T0 + 86400)
    assert_same_tables(out, tmp_path / "clean")
