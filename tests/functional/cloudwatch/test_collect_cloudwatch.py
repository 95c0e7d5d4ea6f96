"""collect_cloudwatch end to end over HTTP on 127.0.0.1: windows, splits, incremental runs, manifest, cost, CLI.

The fake Logs Insights server answers the ``trail`` query with ``trail_engine`` (one row per emitter record), so the
oracle is simply the list of records put in: every record of the range exactly once, typed like tables.py says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from collector.cloudwatch.collect import Clients, CollectOptions, collect_cloudwatch
from collector.cloudwatch.commands import cloudwatch
from collector.cloudwatch.constants import BYTES_PER_GB
from collector.tables import TABLES
from emitter.contract import LogKey, Outcome
from tests.support.fake_logs_insights import FakeLogsInsightsServer, Faults
from tests.support.fake_logs_insights_engines import format_ts, trail_engine

T0 = 1_767_607_200  # 2026-01-05 10:00:00 UTC
GROUP = "/aws/lambda/orders"
TRAIL_QUERY = "fields @timestamp | filter ispresent(outcome)"  # the trail engine ignores the text


def record(i: int, t_ms: int) -> dict:
    outcome = [Outcome.RECEIVED, Outcome.SUCCEEDED, Outcome.RETRYABLE_FAILURE][i % 3].value
    msg = {LogKey.TIMESTAMP.value: format_ts(t_ms), LogKey.SERVICE.value: "orders",
           LogKey.OPERATION.value: "Pay", LogKey.EVENT_SOURCE.value: "sqs", LogKey.OUTCOME.value: outcome,
           LogKey.IDEMPOTENCY_KEY.value: f"k{i}", LogKey.ATTEMPT.value: 1 + i % 2,
           LogKey.RECORD_AGE_MS.value: 10.5 * i}
    return {"timestamp": t_ms, "message": json.dumps(msg)}


def put_records(srv: FakeLogsInsightsServer, start_s: int, seconds: int, per_second: int, first: int = 0) -> list[dict]:
    evs = [record(first + i, (start_s + i // per_second) * 1000 + (i % per_second)) for i in range(seconds * per_second)]
    srv.put_events(GROUP, evs + [{"timestamp": start_s * 1000, "message": "START RequestId: x"}])  # not a record
    return evs


def trail(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "tables" / "trail.parquet")


def options(since: int, until: int, **kw) -> CollectOptions:
    from collector.cloudwatch import Backoff, PollSchedule, RunnerConfig

    return CollectOptions(since=since, until=until, log_groups=[GROUP], queries={"trail": TRAIL_QUERY},
                          runner=RunnerConfig(poll=PollSchedule(0.01, 1.5, 0.05), backoff=Backoff(0.005, 0.02),
                                              max_polls_per_s=0, max_starts_per_s=0, **kw.pop("runner_kw", {})), **kw)


def test_trail_collected_exactly_once_across_splits_with_types_and_cost(logs_client, tmp_path):
    with FakeLogsInsightsServer(engine=trail_engine, faults=Faults(no_pagination=True)) as srv:
        evs = put_records(srv, T0, 2 * 3600, 1)  # 3,600 records per hour: each hour window hits a 3,000-row limit
        m = collect_cloudwatch(tmp_path, options(T0, T0 + 2 * 3600 - 1, runner_kw={"paginate": False, "limit": 3000}),
                               clients=Clients(logs=logs_client(srv.url)), now=lambda: T0 + 86400)
        df = trail(tmp_path)
        assert len(df) == len(evs)
        assert df.idempotency_key.tolist() == [f"k{i}" for i in range(len(evs))]  # time order, none lost/doubled
        assert list(df.columns) == list(TABLES["trail"].column_names)
        assert str(df.timestamp.dtype) == "datetime64[ms, UTC]" and df.attempt.tolist()[:3] == [1, 2, 1]
        assert df.record_age_ms.iloc[3] == pytest.approx(31.5)
        assert df.timestamp.iloc[4] == pd.Timestamp((T0 + 4) * 1000, unit="ms", tz="UTC")
        entry = m["tables"]["trail"]
        assert entry["status"] == "complete" and entry["rows"] == len(evs)
        assert entry["windows"]["complete"] == [[T0 + h * 3600, T0 + h * 3600 + 3599] for h in range(2)]
        assert entry["queries"] == 2 * 3  # per hour: one capped query, then its two halves of 1,800 rows
        scanned = sum(len(e["message"].encode()) for e in srv.groups[GROUP])
        done_bytes = sum(a["bytesScanned"] for a in [q.stats for q in srv.queries.values()])
        assert m["queries"]["this_run"]["stats"]["bytes_scanned"] == done_bytes >= scanned
        assert m["queries"]["this_run"]["cost_usd"] == pytest.approx(round(done_bytes / BYTES_PER_GB * 0.005, 6))
        assert entry["conversion"]["bad_values"] == {}


def test_incremental_runs_query_only_new_windows_and_requery_recent_ones(logs_client, tmp_path):
    with FakeLogsInsightsServer(engine=trail_engine) as srv:
        evs = put_records(srv, T0, 3 * 3600, 1)
        clients = Clients(logs=logs_client(srv.url))
        # run 1 at T0+2h+10min: hours 1-2 settled (complete), nothing of hour 3 yet
        m1 = collect_cloudwatch(tmp_path, options(T0, T0 + 2 * 3600 - 1), clients=clients,
                                now=lambda: T0 + 2 * 3600 + 600)
        assert m1["tables"]["trail"]["windows"]["complete"] == [[T0, T0 + 3599], [T0 + 3600, T0 + 7199]]
        assert srv.count("StartQuery") == 2
        # run 2 at T0+2h+30min up to now: only hour 3 (so far) queried; recorded partial (not settled)
        m2 = collect_cloudwatch(tmp_path, options(T0, T0 + 2 * 3600 + 1799), clients=clients,
                                now=lambda: T0 + 2 * 3600 + 1800)
        assert srv.count("StartQuery") == 3
        assert m2["tables"]["trail"]["windows"]["partial"] == [[T0 + 7200, T0 + 7200 + 1799]]
        assert m2["tables"]["trail"]["status"] == "partial"
        assert len(trail(tmp_path)) == 2 * 3600 + 1800
        # a late event arrives for the partial window; run 3 a day later re-queries that hour only
        late = record(10**6, (T0 + 7200 + 5) * 1000 + 500)
        srv.put_events(GROUP, [late])
        m3 = collect_cloudwatch(tmp_path, options(T0, T0 + 3 * 3600 - 1), clients=clients, now=lambda: T0 + 86400)
        assert srv.count("StartQuery") == 4
        assert m3["tables"]["trail"]["status"] == "complete" and m3["tables"]["trail"]["windows"]["partial"] == []
        df = trail(tmp_path)
        assert len(df) == len(evs) + 1 and df.idempotency_key.is_unique
        # run 4: nothing new to query
        collect_cloudwatch(tmp_path, options(T0, T0 + 3 * 3600 - 1), clients=clients, now=lambda: T0 + 86400)
        assert srv.count("StartQuery") == 4
        assert len(json.loads((tmp_path / "manifest.json").read_text())["runs"]) == 4
        # a changed query text invalidates the table's windows: all three hours queried again, nothing doubled
        changed = options(T0, T0 + 3 * 3600 - 1)
        changed.queries = {"trail": TRAIL_QUERY + " | sort @timestamp asc"}
        collect_cloudwatch(tmp_path, changed, clients=clients, now=lambda: T0 + 86400)
        assert srv.count("StartQuery") == 7 and len(trail(tmp_path)) == len(evs) + 1


def test_failed_window_is_recorded_and_retried_next_run(logs_client, tmp_path):
    with FakeLogsInsightsServer(engine=trail_engine, faults=Faults(terminal_statuses=["Failed"] * 3)) as srv:
        put_records(srv, T0, 7200, 1)
        clients = Clients(logs=logs_client(srv.url))
        opts = options(T0, T0 + 7199, runner_kw={"max_concurrency": 1, "max_retries": 2})
        m = collect_cloudwatch(tmp_path, opts, clients=clients, now=lambda: T0 + 86400)
        e = m["tables"]["trail"]
        assert e["status"] == "failed" and e["windows"]["failed"] == [[T0, T0 + 3599]]
        assert e["windows"]["complete"] == [[T0 + 3600, T0 + 7199]] and e["rows"] == 3600
        m = collect_cloudwatch(tmp_path, opts, clients=clients, now=lambda: T0 + 86400)
        assert m["tables"]["trail"]["status"] == "complete" and m["tables"]["trail"]["rows"] == 7200


# ------------------------------------------------------------------ CLI
def _cli(args: list[str]):
    return CliRunner().invoke(cloudwatch, args, catch_exceptions=False)


def test_cli_collects_logs_metrics_and_stuck_keys_through_one_endpoint(tmp_path, moto_url, aws):
    ddb = aws("dynamodb")
    ddb.create_table(TableName="idem", KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
    ddb.put_item(TableName="idem", Item={"id": {"S": "stuck-1"}, "status": {"S": "INPROGRESS"},
                                         "in_progress_expiration": {"N": str(T0 * 1000)}})
    qfile = tmp_path / "trail.insights"
    qfile.write_text(TRAIL_QUERY)
    out = tmp_path / "data"
    with FakeLogsInsightsServer(engine=trail_engine, upstream=moto_url) as srv:
        evs = put_records(srv, T0, 600, 1)
        res = _cli(["--log-group-prefix", "/aws/lambda/", "--since", str(T0), "--until", str(T0 + 599),
                    "--out", str(out), "--query-file", f"trail={qfile}", "--metrics", "--idempotency-table", "idem",
                    "--schema", "powertools", "--endpoint-url", srv.url, "--region", "us-east-1"])  # with progress bar
        assert res.exit_code == 0, res.output
        assert len(trail(out)) == len(evs)
        m = json.loads((out / "manifest.json").read_text())
        assert m["idempotency_table"]["stuck"] == 1 and m["log_groups"] == [GROUP]
        assert m["metrics"]["metrics_requested"] >= 5  # the Lambda metrics of /aws/lambda/orders
        assert (out / "tables" / "cloudwatch_metrics.parquet").exists()
        assert "trail" in res.output and "cost this run" in res.output and "Logs Insights" in res.output


@pytest.mark.parametrize("args, message", [
    (["--log-group", "/aws/lambda/missing"], "Error: log group not found: /aws/lambda/missing"),
    (["--log-group-prefix", "/nothing/"], "Error: no log group matches prefix '/nothing/'"),
])
def test_cli_one_line_errors(tmp_path, args, message):
    with FakeLogsInsightsServer(engine=trail_engine) as srv:
        srv.put_events(GROUP, [record(0, T0 * 1000)])
        res = CliRunner().invoke(cloudwatch, [*args, "--out", str(tmp_path), "--endpoint-url", srv.url,
                                              "--query-file", f"trail={_qf(tmp_path)}", "--no-progress"])
    assert res.exit_code == 1 and res.output.strip() == message and "Traceback" not in res.output


def _qf(tmp: Path) -> Path:
    p = tmp / "q.insights"
    p.write_text(TRAIL_QUERY)
    return p


def test_cli_missing_credentials_and_throttled_account(tmp_path, monkeypatch):
    from collector.cloudwatch.backoff import Backoff

    monkeypatch.setattr(Backoff, "delay", lambda self, attempt, rng=None: 0.001)  # the default backs off ~40 s
    with FakeLogsInsightsServer(engine=trail_engine, faults=Faults(limit_exceeded_first_n=10**6)) as srv:
        srv.put_events(GROUP, [record(0, T0 * 1000)])
        base = ["--log-group", GROUP, "--since", str(T0), "--until", str(T0 + 59), "--out", str(tmp_path),
                "--endpoint-url", srv.url, "--query-file", f"trail={_qf(tmp_path)}", "--no-progress"]
        res = CliRunner().invoke(cloudwatch, base)
        assert res.exit_code == 1 and res.output.startswith("Error: throttled: logs:StartQuery")
        assert len(res.output.strip().splitlines()) == 1
        for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
            monkeypatch.delenv(k)
        res = CliRunner().invoke(cloudwatch, base)
        assert res.exit_code == 1 and res.output.startswith("Error: no AWS credentials found")


def test_role_arn_is_assumed_through_sts(moto_url, monkeypatch):
    """--role-arn: credentials come from sts:AssumeRole (moto behind the fake server), then every call uses them."""
    from idemwatch.aws import AwsTarget

    with FakeLogsInsightsServer(engine=trail_engine, upstream=moto_url) as srv:
        srv.put_events(GROUP, [record(0, T0 * 1000)])
        target = AwsTarget(region="us-east-1", endpoint_url=srv.url,
                           role_arn="arn:aws:iam::123456789012:role/idemwatch-reader")
        session = target.session()
        creds = session.get_credentials().get_frozen_credentials()
        assert creds.access_key != "testing" and creds.token  # temporary credentials from AssumeRole
        logs = target.client("logs", session, retries=1)
        assert [g["logGroupName"] for g in logs.describe_log_groups()["logGroups"]] == [GROUP]


def test_cli_access_denied_names_the_permission(tmp_path):
    with FakeLogsInsightsServer(engine=trail_engine, faults=Faults(deny_operations={"StartQuery"})) as srv:
        srv.put_events(GROUP, [record(0, T0 * 1000)])
        res = CliRunner().invoke(cloudwatch, ["--log-group", GROUP, "--since", str(T0), "--until", str(T0 + 59),
                                              "--out", str(tmp_path), "--endpoint-url", srv.url,
                                              "--query-file", f"trail={_qf(tmp_path)}", "--no-progress"])
    assert res.exit_code == 1
    assert res.output.strip() == ("Error: access denied: logs:StartQuery on /aws/lambda/orders "
                                  "(AccessDeniedException); the IAM policy needs logs:StartQuery")


def test_capped_second_flags_table_truncated_in_manifest(logs_client, tmp_path):
    with FakeLogsInsightsServer(engine=trail_engine, faults=Faults(no_pagination=True)) as srv:
        burst = [record(i, (T0 + 30) * 1000 + i % 1000) for i in range(550)]  # 550 records in one second
        srv.put_events(GROUP, burst + [record(20_000, (T0 + 50) * 1000)])
        # a 500-row query limit stands in for the 10,000-row cap (same code path, 20x less data)
        m = collect_cloudwatch(tmp_path, options(T0, T0 + 59, runner_kw={"paginate": False, "limit": 500}),
                               clients=Clients(logs=logs_client(srv.url)), now=lambda: T0 + 86400)
    e = m["tables"]["trail"]
    assert e["status"] == "truncated" and m["truncated"] == ["trail"]
    assert e["windows"]["truncated"] == [[T0, T0 + 59]] and e["windows"]["complete"] == []
    assert e["truncated_sub_windows"] == [[T0 + 30, T0 + 30]]
    assert e["rows"] == 500 + 1  # the capped second's 500 + the record at T0+50, nothing passed off as all
