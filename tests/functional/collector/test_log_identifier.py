"""``@log`` offline is what AWS documents: "@log is a log group identifier in the form of
account-id:log-group-name. When querying multiple log groups, this can be useful to identify which log group a
particular event belongs to." (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_AnalyzeLogData-discoverable-fields.html)

The account of local files is ``--account-id`` / ``IDEMWATCH_ACCOUNT_ID`` (default 000000000000); the tables keep
the bare log group name in ``log_group`` and the account in ``account_id``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.insights.log_identifier import check_account_id, log_identifier
from collector.postprocess import split_log_identifier

RID = "6d68ca91-49c9-448d-89b8-7ca3e6dc66aa"


def _write_logs(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    rec = {"timestamp": "2026-01-05T10:00:01.000Z", "schema_version": "1", "service": "shop",
           "operation": "Orders", "outcome": "received", "event_source": "sqs", "attempt": 1}
    (d / "orders.log").write_text(
        f"2026-01-05T10:00:00.000Z START RequestId: {RID} Version: $LATEST\n"
        f"2026-01-05T10:00:01.000Z {json.dumps(rec)}\n"
        f"2026-01-05T10:00:02.000Z REPORT RequestId: {RID}\tDuration: 12.50 ms\tBilled Duration: 13 ms\t"
        "Memory Size: 128 MB\tMax Memory Used: 70 MB\t\n")
    (d / "billing.log").write_text(f"2026-01-05T10:00:03.000Z {json.dumps({**rec, 'operation': 'Bill'})}\n")
    return d


def _query(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    from idemwatch.cli import main

    res = CliRunner().invoke(main, ["query", "--format", "json", *args], env=env or {}, catch_exceptions=False)
    return res.exit_code, res.output


def test_offline_at_log_is_account_id_colon_group_name(tmp_path):
    logs = _write_logs(tmp_path / "logs")
    code, out = _query(["stats count(*) as n by @log | sort @log", str(logs)])
    assert code == 0, out
    assert json.loads(out) == [{"@log": "000000000000:/aws/lambda/billing", "n": 1},
                               {"@log": "000000000000:/aws/lambda/orders", "n": 3}]
    code, out = _query(["--account-id", "111122223333", "fields @log | limit 1", str(logs / "orders.log")])
    assert code == 0 and json.loads(out) == [{"@log": "111122223333:/aws/lambda/orders"}]
    # the environment default of every command with --account-id
    code, out = _query(["fields @log | limit 1", str(logs / "orders.log")], env={"IDEMWATCH_ACCOUNT_ID": "444455556666"})
    assert code == 0 and json.loads(out) == [{"@log": "444455556666:/aws/lambda/orders"}]


@pytest.mark.parametrize("bad", ["12345", "1234567890123", "12345678901a", "", "١٢٣٤٥٦٧٨٩٠١٢"])
def test_account_id_must_be_twelve_digits(tmp_path, bad):
    logs = _write_logs(tmp_path / "logs")
    code, out = _query(["--account-id", bad, "fields @log", str(logs)])
    assert code == 2 and "account ID must be 12 digits" in out
    with pytest.raises(ValueError, match="12 digits"):
        check_account_id(bad)


def test_source_log_groups_over_account_qualified_log(tmp_path):
    logs = _write_logs(tmp_path / "logs")
    q = "SOURCE logGroups(namePrefix: ['/aws/lambda/ord']) | stats count(*) as n by @log"
    code, out = _query(["--account-id", "111122223333", q, str(logs)])
    assert code == 0 and json.loads(out) == [{"@log": "111122223333:/aws/lambda/orders", "n": 3}]
    # accountIdentifiers select on the account part of @log
    for acct, want in (("111122223333", 4), ("999999999999", 0)):
        q = f"SOURCE logGroups(namePrefix: ['/aws/lambda/'], accountIdentifiers: ['{acct}']) | stats count(*) as n"
        code, out = _query(["--account-id", "111122223333", q, str(logs)])
        assert code == 0 and json.loads(out) == ([{"n": want}] if want else [{"n": 0}]), out


def test_collect_local_tables_split_account_and_group(tmp_path):
    from collector.collect import CollectError, collect_local

    logs = _write_logs(tmp_path / "logs")
    m = collect_local([logs], tmp_path / "out", account_id="111122223333")
    assert m["account_id"] == "111122223333"
    tables = tmp_path / "out" / "tables"
    inv = pd.read_parquet(tables / "invocations.parquet")
    assert inv[["log_group", "account_id", "invocations"]].to_dict("records") == [
        {"log_group": "/aws/lambda/orders", "account_id": "111122223333", "invocations": 1}]
    trail = pd.read_parquet(tables / "trail.parquet").sort_values("timestamp")
    assert list(zip(trail["log_group"], trail["account_id"])) == [("/aws/lambda/orders", "111122223333"),
                                                                  ("/aws/lambda/billing", "111122223333")]
    # the store keeps its events' account: another account into the same --out is refused, the same one is fine
    with pytest.raises(CollectError, match="holds events of account 111122223333, not 000000000000"):
        collect_local([logs], tmp_path / "out")
    assert collect_local([logs], tmp_path / "out", account_id="111122223333")["this_run"]["unchanged"] == 2


def test_collect_local_cli_account_default_and_env(tmp_path):
    from idemwatch.cli import main

    logs = _write_logs(tmp_path / "logs")
    for out, env, want in ((tmp_path / "a", {}, "000000000000"),
                           (tmp_path / "b", {"IDEMWATCH_ACCOUNT_ID": "444455556666"}, "444455556666")):
        res = CliRunner().invoke(main, ["collect", "local", str(logs), "--out", str(out)], env=env,
                                 catch_exceptions=False)
        assert res.exit_code == 0, res.output
        lib = pd.read_parquet(out / "tables" / "trail.parquet")
        assert set(lib["account_id"]) == {want} and set(lib["log_group"]) == {"/aws/lambda/orders",
                                                                            "/aws/lambda/billing"}
    res = CliRunner().invoke(main, ["collect", "local", str(logs), "--out", str(tmp_path / "c"), "--account-id", "x"])
    assert res.exit_code == 2 and "account ID must be 12 digits" in res.output


_GROUP = st.text(st.sampled_from("abcXYZ019._-/#"), min_size=1, max_size=40)  # CreateLogGroup's character set


@settings(deadline=None)  # a pure function: a deadline only measures the shared machine's load
@given(st.from_regex(r"\A[0-9]{12}\Z"), _GROUP)
def test_split_inverts_log_identifier(account, group):
    value = log_identifier(account, group)
    assert value == f"{account}:{group}"
    t = pa.table({"log_group": [value, group, None], "account_id": pa.array([None, None, None], pa.string())})
    got = split_log_identifier(t).to_pylist()
    # a bare name (a table built without an account) stays as it is, with no account
    assert got == [{"log_group": group, "account_id": account}, {"log_group": group, "account_id": None},
                   {"log_group": None, "account_id": None}]
    assert log_identifier("000000000000", value) == value  # an account-qualified name keeps its account


def test_store_collected_before_accounts_existed_is_qualified(tmp_path):
    """An --out whose events.duckdb holds bare @log values (collected before @log carried the account) gets the
    run's account on the next collection: no table mixes bare and qualified names."""
    import duckdb

    from collector.collect import collect_local

    logs = _write_logs(tmp_path / "logs")
    out = tmp_path / "out"
    collect_local([logs / "orders.log"], out)
    con = duckdb.connect(str(out / "events.duckdb"))  # as the previous version left it
    con.execute("""UPDATE events SET "@log" = regexp_replace("@log", '^[0-9]{12}:', '')""")
    con.close()
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["account_id"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    collect_local([logs], out, account_id="111122223333")
    trail = pd.read_parquet(out / "tables" / "trail.parquet")
    assert sorted(zip(trail["log_group"], trail["account_id"])) == [("/aws/lambda/billing", "111122223333"),
                                                                    ("/aws/lambda/orders", "111122223333")]
