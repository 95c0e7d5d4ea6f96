"""Log group discovery, GetMetricData and the idempotency-table scan over real HTTP against moto on 127.0.0.1."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from collector.cloudwatch.log_groups import discover_log_groups
from collector.cloudwatch.metrics import (
    METRICS_TABLE,
    MetricsOptions,
    MetricSpec,
    collect_metrics,
    get_metric_data,
    plan_metrics,
)
from collector.cloudwatch.stuck_keys import StuckKeysOptions, collect_stuck_keys, scan_stuck_keys, schema_from
from emitter.contract import NAMESPACE_DEFAULT, Metric
from idemwatch.aws import NotFoundError


def test_discover_by_prefix_follows_pagination(aws):
    logs = aws("logs")
    tag = uuid.uuid4().hex[:6]
    names = [f"/aws/lambda/{tag}-fn-{i:03d}" for i in range(75)]  # > 50 = one DescribeLogGroups page
    for n in names:
        logs.create_log_group(logGroupName=n)
    logs.create_log_group(logGroupName=f"/aws/lambda/other-{tag}")
    assert discover_log_groups(logs, prefixes=[f"/aws/lambda/{tag}-"]) == sorted(names)
    assert discover_log_groups(logs, names=[names[3]], prefixes=[]) == [names[3]]


def test_unknown_log_group_and_empty_prefix_are_clear_errors(aws):
    logs = aws("logs")
    with pytest.raises(NotFoundError, match="log group not found: /aws/lambda/missing-xyz"):
        discover_log_groups(logs, names=["/aws/lambda/missing-xyz"])
    with pytest.raises(NotFoundError, match="no log group matches prefix"):
        discover_log_groups(logs, prefixes=["/nothing-here/"])


def _minute(dt: datetime) -> datetime:
    return dt.replace(second=0, microsecond=0)


def test_get_metric_data_chunks_at_500_queries_and_values_match(aws):
    cw = aws("cloudwatch")
    calls: list[int] = []
    cw.meta.events.register("provide-client-params.cloudwatch.GetMetricData",
                            lambda params, **kw: calls.append(len(params["MetricDataQueries"])))
    t = _minute(datetime.now(UTC) - timedelta(minutes=10))
    ns = f"Test/{uuid.uuid4().hex[:6]}"
    # 520 metrics (different dimension values), value = i, one datapoint each in the same minute
    for base in range(0, 520, 20):
        cw.put_metric_data(Namespace=ns, MetricData=[
            {"MetricName": "Work", "Dimensions": [{"Name": "Shard", "Value": str(i)}], "Timestamp": t,
             "Value": float(i), "Unit": "Count"} for i in range(base, base + 20)])
    specs = [MetricSpec(ns, "Work", (("Shard", str(i)),), "Sum") for i in range(520)]
    start = int(t.timestamp()) - 60
    rows = get_metric_data(cw, specs, start, start + 299, 60)
    assert calls == [500, 20]  # the 500-per-call limit
    got = {json.loads(r["dimensions"])["Shard"]: float(r["value"]) for r in rows}
    assert got == {str(i): float(i) for i in range(520)}
    assert {r["time"] for r in rows} == {str(int(t.timestamp()) * 1000)}


def test_collect_metrics_lambda_and_own_namespace(aws, tmp_path):
    cw = aws("cloudwatch")
    t = _minute(datetime.now(UTC) - timedelta(minutes=5))
    ns = f"{NAMESPACE_DEFAULT}-{uuid.uuid4().hex[:6]}"
    dims = [{"Name": "Service", "Value": "orders"}, {"Name": "Operation", "Value": "Pay"}]
    cw.put_metric_data(Namespace=ns, MetricData=[
        {"MetricName": Metric.EVENTS_RECEIVED.value, "Dimensions": dims, "Timestamp": t, "Value": 3.0, "Unit": "Count"},
        {"MetricName": Metric.EVENTS_RECEIVED.value, "Dimensions": dims, "Timestamp": t, "Value": 4.0, "Unit": "Count"},
        {"MetricName": Metric.RECORD_AGE.value, "Dimensions": dims, "Timestamp": t, "Value": 100.0,
         "Unit": "Milliseconds"},
        {"MetricName": Metric.RECORD_AGE.value, "Dimensions": dims, "Timestamp": t, "Value": 300.0,
         "Unit": "Milliseconds"},
    ])
    cw.put_metric_data(Namespace="AWS/Lambda", MetricData=[
        {"MetricName": "Errors", "Dimensions": [{"Name": "FunctionName", "Value": "orders-fn"}], "Timestamp": t,
         "Value": 2.0, "Unit": "Count"}])
    opts = MetricsOptions(namespace=ns, queues=["orders-q"], dlqs=["orders-dlq"])
    specs = plan_metrics(cw, opts, ["/aws/lambda/orders-fn", "/custom/group"])
    # 5 Lambda (IteratorAge, Errors, Throttles, Duration x2) + 2 SQS + EventsReceived Sum + RecordAge Avg/Max
    assert len(specs) == 5 + 2 + 3
    start = int(t.timestamp()) - 120
    section = collect_metrics(cw, tmp_path, opts, start, start + 599, log_groups=["/aws/lambda/orders-fn"])
    df = pd.read_parquet(tmp_path / "tables" / f"{METRICS_TABLE.name}.parquet")
    assert list(df.columns) == list(METRICS_TABLE.column_names)
    own = df[df.namespace == ns].set_index(["metric_name", "stat"])["value"].to_dict()
    assert own == {("EventsReceived", "Sum"): 7.0, ("RecordAge", "Average"): 200.0, ("RecordAge", "Maximum"): 300.0}
    errors = df[(df.namespace == "AWS/Lambda") & (df.metric_name == "Errors")]
    assert errors.value.tolist() == [2.0] and json.loads(errors.dimensions.iloc[0]) == {"FunctionName": "orders-fn"}
    assert section["metrics_requested"] == 10 and section["datapoints"] == len(df)
    assert section["cost_usd"] == pytest.approx(10 / 1000 * 0.01)


# ------------------------------------------------------------------ idempotency table
NOW_S = 1_767_607_200  # scan time


def _make_table(ddb, name: str, key: str) -> None:
    ddb.create_table(TableName=name, KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}],
                     BillingMode="PAY_PER_REQUEST")


def test_powertools_preset_finds_stuck_records_with_segments_and_pages(aws, tmp_path):
    ddb = aws("dynamodb")
    name = f"idem-{uuid.uuid4().hex[:6]}"
    _make_table(ddb, name, "id")
    expected = set()
    for i in range(60):
        status = ["INPROGRESS", "COMPLETED", "EXPIRED"][i % 3]
        # in-progress expiry (ms): odd i already passed (stuck), even i still in the future (in flight)
        exp_ms = (NOW_S - 30) * 1000 if i % 2 else (NOW_S + 30) * 1000
        item = {"id": {"S": f"fn#key-{i}"}, "status": {"S": status}, "in_progress_expiration": {"N": str(exp_ms)},
                "expiration": {"N": str(NOW_S + 3600 if i % 4 != 3 else NOW_S - 10)}, "data": {"S": "x" * 50}}
        ddb.put_item(TableName=name, Item=item)
        if status == "INPROGRESS" and i % 2:
            expected.add(f"fn#key-{i}")
    writes: list[str] = []
    ddb.meta.events.register("before-call.dynamodb.*", lambda model, **kw: writes.append(model.name))
    opts = StuckKeysOptions(name, schema_from("powertools"), segments=3, page_size=7)
    rows, report = scan_stuck_keys(ddb, opts, NOW_S)
    assert {r["idempotency_key"] for r in rows} == expected and report.stuck == len(expected) == 10
    assert report.in_progress == 20 and report.scanned == 60 and report.segments == 3
    assert report.pages > 3  # 60 items / 7 per page over 3 segments: several pages followed
    assert set(writes) == {"Scan"}  # read-only
    stuck_i = sorted(int(k.rsplit("-", 1)[1]) for k in expected)
    by_key = {r["idempotency_key"]: r for r in rows}
    assert all(float(by_key[f"fn#key-{i}"]["overdue_s"]) == 30.0 for i in stuck_i)
    assert {i for i in stuck_i if by_key[f"fn#key-{i}"]["ttl_passed"] == "true"} == {i for i in stuck_i if i % 4 == 3}
    section = collect_stuck_keys(ddb, tmp_path, opts, NOW_S)
    df = pd.read_parquet(tmp_path / "tables" / "idempotency_table_stuck.parquet")
    assert len(df) == 10 and section["stuck"] == 10
    assert df.in_progress_expires_at.iloc[0] == pd.Timestamp((NOW_S - 30) * 1000, unit="ms", tz="UTC")


def test_record_preset_and_custom_attribute_names(aws):
    ddb = aws("dynamodb")
    name = f"records-{uuid.uuid4().hex[:6]}"
    _make_table(ddb, name, "idempotencyKey")
    ddb.put_item(TableName=name, Item={"idempotencyKey": {"S": "a"}, "status": {"S": "IN_PROGRESS"},
                                       "inProgressExpiresAt": {"N": str((NOW_S - 5) * 1000)}})
    ddb.put_item(TableName=name, Item={"idempotencyKey": {"S": "b"}, "status": {"S": "IN_PROGRESS"}})  # no expiry
    ddb.put_item(TableName=name, Item={"idempotencyKey": {"S": "c"}, "status": {"S": "COMPLETED"},
                                       "inProgressExpiresAt": {"N": str((NOW_S - 5) * 1000)}})
    rows, report = scan_stuck_keys(ddb, StuckKeysOptions(name, schema_from("record")), NOW_S)
    assert [r["idempotency_key"] for r in rows] == ["a"] and report.missing_expiry == 1
    # custom: expiry in epoch seconds under another name
    custom = f"custom-{uuid.uuid4().hex[:6]}"
    _make_table(ddb, custom, "pk")
    ddb.put_item(TableName=custom, Item={"pk": {"S": "k1"}, "state": {"S": "CLAIMED"}, "lockUntil": {"N": str(NOW_S - 1)}})
    ddb.put_item(TableName=custom, Item={"pk": {"S": "k2"}, "state": {"S": "CLAIMED"}, "lockUntil": {"S": "oops"}})
    schema = schema_from("record", key_attr="pk", status_attr="state", in_progress_value="CLAIMED",
                         in_progress_expiry_attr="lockUntil", in_progress_expiry_unit="s")
    rows, report = scan_stuck_keys(ddb, StuckKeysOptions(custom, schema, segments=2), NOW_S)
    assert [(r["idempotency_key"], r["overdue_s"]) for r in rows] == [("k1", "1.0")]
    assert report.bad_expiry == 1 and report.in_progress == 2


def test_missing_table_is_a_clear_error(aws):
    with pytest.raises(NotFoundError, match="DynamoDB table not found: no-such-table"):
        scan_stuck_keys(aws("dynamodb"), StuckKeysOptions("no-such-table", schema_from("powertools")), NOW_S)


def test_get_metric_data_follows_next_token(moto_url, aws):
    """moto answers GetMetricData in one page; the fake server in front of it cuts the answer into pages of 7
    datapoints with NextToken, as CloudWatch does past 100,800 datapoints."""
    import boto3

    from tests.support.fake_logs_insights import FakeLogsInsightsServer, Faults

    cw = aws("cloudwatch")
    ns = f"Paged/{uuid.uuid4().hex[:6]}"
    t0 = _minute(datetime.now(UTC) - timedelta(minutes=30))
    for shard in range(3):  # 3 metrics x 10 minutes, value = 100 * shard + minute
        cw.put_metric_data(Namespace=ns, MetricData=[
            {"MetricName": "Work", "Dimensions": [{"Name": "Shard", "Value": str(shard)}],
             "Timestamp": t0 + timedelta(minutes=m), "Value": float(100 * shard + m)} for m in range(10)])
    with FakeLogsInsightsServer(upstream=moto_url, faults=Faults(metric_page_datapoints=7)) as srv:
        paged = boto3.client("cloudwatch", endpoint_url=srv.url, region_name="us-east-1")
        specs = [MetricSpec(ns, "Work", (("Shard", str(s)),), "Sum") for s in range(3)]
        calls: dict[str, int] = {}
        start = int(t0.timestamp())
        rows = get_metric_data(paged, specs, start, start + 10 * 60 - 1, 60, calls)
    assert calls["GetMetricData"] == 5 == srv.count("GetMetricData")  # 30 datapoints / 7 per page
    got = sorted((json.loads(r["dimensions"])["Shard"], int(r["time"]) // 1000 - start, float(r["value"])) for r in rows)
    assert got == sorted((str(s), 60 * m, float(100 * s + m)) for s in range(3) for m in range(10))
