"""Backtest on datapoints fetched from CloudWatch: PutMetricData into moto's server (127.0.0.1, real HTTP),
the collector-cloudwatch part's GetMetricData writer (collector.cloudwatch.metrics.collect_metrics), then
the DLQ alarm's backtest on the table it wrote."""

from __future__ import annotations

import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import boto3
from moto.server import ThreadedMotoServer

from alarms import build_catalogue, load_config, run_backtest

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-stack.yaml"


def test_dlq_alarm_backtested_on_getmetricdata_datapoints(tmp_path, monkeypatch):
    from collector.cloudwatch.metrics import MetricsOptions, collect_metrics

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        _, port = server.get_host_and_port()
        url = f"http://127.0.0.1:{port}"
        urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=10).read()
        cw = boto3.client("cloudwatch", region_name="us-east-1", endpoint_url=url)
        base = int(time.time()) // 60 * 60 - 20 * 60
        depth = [0, 0, 3, 2, 0, 0, 0, 5, 0, 0]  # one datapoint per minute
        for i, v in enumerate(depth):
            cw.put_metric_data(Namespace="AWS/SQS", MetricData=[{
                "MetricName": "ApproximateNumberOfMessagesVisible",
                "Dimensions": [{"Name": "QueueName", "Value": "orders-dlq"}],
                "Timestamp": datetime.fromtimestamp(base + i * 60 + 5, tz=UTC), "Value": v}])
        section = collect_metrics(cw, tmp_path, MetricsOptions(dlqs=["orders-dlq"], namespace=None),
                                  base, base + len(depth) * 60 - 1)
        assert section["datapoints"] == 10
    finally:
        server.stop()
    [dlq] = [d for d in build_catalogue(load_config(DEMO)) if d.name == "shop-orders-dlq-MessagesVisible"]
    [r] = run_backtest([dlq], tmp_path)
    assert r.status == "ok" and r.source == "cloudwatch_metrics[ApproximateNumberOfMessagesVisible Maximum 60s]"
    assert list(r.timeline["value"]) == depth
    # Maximum > 0, 1 of 1, every period has a datapoint: the newest one decides
    assert list(r.timeline["state"]) == ["OK", "OK", "ALARM", "ALARM", "OK", "OK", "OK", "ALARM", "OK", "OK"]
    t = lambda i: datetime.fromtimestamp(base + i * 60, tz=UTC)
    assert r.alarm_intervals == [(t(2), t(4)), (t(7), t(8))]
