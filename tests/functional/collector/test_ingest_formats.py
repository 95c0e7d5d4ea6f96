"""The two formats without a capture in ../shared/samples (Lambda JSON log format, export-to-S3), built
from the AWS documentation's examples, and gzip/sniffing of every format."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from collector.ingest import EventStore, LogFormat
from collector.ingest.store import default_log_group

RID1 = "6d68ca91-49c9-448d-89b8-7ca3e6dc66aa"
RID2 = "79b4f56e-95b1-4643-9700-2807f4e68189"
ARN = "arn:aws:lambda:eu-west-1::runtime:7c1f4d0a9b3e52c86e1d7f4a0b9c3e5d2a8f6b1c4e7d0a3b9f2c5e8d1a4b7c0e"

# Lambda JSON log format (LoggingConfig.LogFormat = JSON): system records per the Telemetry API schema
# (https://docs.aws.amazon.com/lambda/latest/dg/telemetry-schema-reference.html) and Python runtime
# application records (https://docs.aws.amazon.com/lambda/latest/dg/python-logging.html).
LAMBDA_JSON = [
    {"time": "2026-01-05T10:00:00.100Z", "type": "platform.initStart",
     "record": {"initializationType": "on-demand", "phase": "init", "runtimeVersion": "python:3.12.v36",
                "runtimeVersionArn": ARN, "functionName": "orders", "functionVersion": "$LATEST"}},
    {"time": "2026-01-05T10:00:00.350Z", "type": "platform.start", "record": {"requestId": RID1, "version": "$LATEST"}},
    {"timestamp": "2026-01-05T10:00:00.361Z", "level": "INFO", "message": "processing order", "logger": "root",
     "requestId": RID1},
    {"timestamp": "2026-01-05T10:00:00.372Z", "level": "ERROR", "message": "payment declined", "logger": "root",
     "requestId": RID1, "errorType": "PaymentDeclined", "stackTrace": ["  File \"/var/task/app.py\", line 9"]},
    {"time": "2026-01-05T10:00:00.380Z", "type": "platform.runtimeDone",
     "record": {"requestId": RID1, "status": "success", "metrics": {"durationMs": 30.12, "producedBytes": 52}}},
    {"time": "2026-01-05T10:00:00.381Z", "type": "platform.report",
     "record": {"requestId": RID1, "status": "success",
                "metrics": {"durationMs": 30.12, "billedDurationMs": 31, "memorySizeMB": 128, "maxMemoryUsedMB": 71,
                            "initDurationMs": 245.7}}},
    {"time": "2026-01-05T10:00:05.000Z", "type": "platform.start", "record": {"requestId": RID2, "version": "$LATEST"}},
    {"time": "2026-01-05T10:00:08.001Z", "type": "platform.report",
     "record": {"requestId": RID2, "status": "timeout", "errorType": "Sandbox.Timedout",
                "metrics": {"durationMs": 3000.0, "billedDurationMs": 3000, "memorySizeMB": 128,
                            "maxMemoryUsedMB": 80}}},
]


def _write(path: Path, text: str, gz: bool = False) -> Path:
    data = text.encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_lambda_json_log_format(tmp_path: Path, gz: bool) -> None:
    path = _write(tmp_path / ("orders.log.gz" if gz else "orders.log"),
                  "".join(json.dumps(r) + "\n" for r in LAMBDA_JSON), gz)
    store = EventStore()
    report = store.ingest_path(path)
    f = report.per_file[str(path)]
    assert (f.format, f.compressed, report.events, report.skipped, report.repaired, report.by_reason) == \
        (LogFormat.LAMBDA_JSON.value, gz, 8, 0, 0, {})
    rows = store.connection.execute(
        'SELECT "@timestamp", "@type", "@requestId", "@duration", "@billedDuration", "@memorySize", "@maxMemoryUsed", '
        '"@initDuration", "@log", "@logStream", "@json" ->> \'$.level\' FROM events ORDER BY "@seq"').fetchall()
    lg = "000000000000:/aws/lambda/orders"  # @log: account-id:log-group-name (default account)
    assert rows == [
        (1767607200100, None, None, None, None, None, None, None, lg, path.name, None),
        (1767607200350, "START", RID1, None, None, None, None, None, lg, path.name, None),
        (1767607200361, None, None, None, None, None, None, None, lg, path.name, "INFO"),
        (1767607200372, None, None, None, None, None, None, None, lg, path.name, "ERROR"),
        (1767607200380, "END", RID1, None, None, None, None, None, lg, path.name, None),
        (1767607200381, "REPORT", RID1, 30.12, 31.0, 128e6, 71e6, 245.7, lg, path.name, None),
        (1767607205000, "START", RID2, None, None, None, None, None, lg, path.name, None),
        (1767607208001, "REPORT", RID2, 3000.0, 3000.0, 128e6, 80e6, None, lg, path.name, None),
    ]
    # the application records' requestId stays a discovered JSON field
    assert store.connection.execute(
        "SELECT count(*) FROM events WHERE json_extract_string(\"@json\", '$.requestId') = $1", [RID1]).fetchone()[0] == 2


def _export_lines() -> list[tuple[str, str]]:
    # CreateExportTask object body: "<ISO-8601 timestamp> <message>" per event
    # (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/S3ExportTasksConsole.html)
    emitter = {"level": "INFO", "message": "outcome", "timestamp": "2026-01-05T10:20:01.010Z", "service": "orders",
               "operation": "ProcessOrders", "outcome": "duplicate_completed", "idempotency_key": "k-1", "attempt": 2}
    return [
        ("2026-01-05T10:20:01.000Z", f"START RequestId: {RID1} Version: $LATEST"),
        ("2026-01-05T10:20:01.010Z", json.dumps(emitter, separators=(",", ":"))),
        ("2026-01-05T10:20:01.020Z", f"END RequestId: {RID1}"),
        ("2026-01-05T10:20:01.021Z", (f"REPORT RequestId: {RID1}\tDuration: 12.50 ms\tBilled Duration: 13 ms\t"
                                      "Memory Size: 256 MB\tMax Memory Used: 72 MB\tInit Duration: 180.25 ms\t")),
        ("2026-01-05T10:20:02.000Z", "plain text line with  two spaces"),
    ]


@pytest.mark.parametrize("gz", [True, False])
def test_export_to_s3_object(tmp_path: Path, gz: bool) -> None:
    lines = _export_lines()
    path = _write(tmp_path / ("000000.gz" if gz else "orders.log"), "".join(f"{t} {m}\n" for t, m in lines), gz)
    store = EventStore()
    report = store.ingest_path(path, log_group="/aws/lambda/orders", log_stream="2026/01/05/[$LATEST]abc")
    assert report.per_file[str(path)].format == LogFormat.EXPORT_S3.value
    assert (report.events, report.skipped, report.repaired, report.by_reason) == (5, 0, 0, {})
    rows = store.connection.execute(
        'SELECT "@timestamp", "@message", "@type", "@duration", "@maxMemoryUsed", "@initDuration", outcome, '
        'attempt, "@logStream" FROM events ORDER BY "@seq"').fetchall()
    ts = [1767608401000, 1767608401010, 1767608401020, 1767608401021, 1767608402000]
    assert [r[0] for r in rows] == ts
    assert [r[1] for r in rows] == [m for _, m in lines]  # message = everything after the first space
    assert rows[3][2:6] == ("REPORT", 12.5, 72e6, 180.25)
    assert rows[1][6:8] == ("duplicate_completed", "2")
    assert {r[8] for r in rows} == {"2026/01/05/[$LATEST]abc"}


def test_export_multi_line_messages_are_joined(tmp_path: Path) -> None:
    # CreateExportTask does not escape newlines: a traceback continues on lines without the prefix
    path = _write(tmp_path / "fn.log", "orphan before any event\n"
                                       "2026-01-05T10:20:01.000Z first\n"
                                       "2026-01-05T10:20:03.000Z [ERROR] Boom: bad\n"
                                       "Traceback (most recent call last):\n"
                                       "\n"
                                       '  File "/var/task/app.py", line 3, in handler\n'
                                       "\n"
                                       "2026-01-05T10:20:05.000Z fourth\n")
    store = EventStore()
    report = store.ingest_path(path)
    assert report.per_file[str(path)].format == LogFormat.EXPORT_S3.value
    # the blank line inside the traceback is kept in its event and counted with the joined lines: 4 + 1 + 3 = 8 lines
    assert (report.events, report.skipped, report.by_reason) == (4, 1, {"continuation_lines_joined": 3,
                                                                       "export_line_without_timestamp": 1,
                                                                       "blank_line": 1})
    assert store.connection.execute('SELECT "@timestamp", "@message" FROM events ORDER BY "@seq"').fetchall() == [
        (1767608401000, "orphan before any event"),  # the next event's time
        (1767608401000, "first"),
        (1767608403000, ('[ERROR] Boom: bad\nTraceback (most recent call last):\n\n  File "/var/task/app.py", line 3, '
                        "in handler")),
        (1767608405000, "fourth")]


def test_default_log_group_and_demo_layout(tmp_path: Path) -> None:
    assert default_log_group(Path("logs/payment-capture.log")) == "/aws/lambda/payment-capture"
    assert default_log_group(Path("orders.jsonl.gz")) == "/aws/lambda/orders"
    logs = tmp_path / "logs"
    logs.mkdir()
    for fn in ("ledger", "orders"):
        _write(logs / f"{fn}.log", "".join(f"{t} {m}\n" for t, m in _export_lines()))
    (logs / ".hidden.log").write_text("ignored\n")
    store = EventStore()
    report = store.ingest_path(logs)
    assert sorted(report.per_file) == [str(logs / "ledger.log"), str(logs / "orders.log")]
    assert store.connection.execute('SELECT "@log", count(*), min("@seq"), max("@seq") FROM events GROUP BY 1 ORDER BY 1'
                                    ).fetchall() == [("000000000000:/aws/lambda/ledger", 5, 0, 4),
                                                     ("000000000000:/aws/lambda/orders", 5, 5, 9)]


@pytest.mark.parametrize("name", ["filter-log-events.json", "powertools-real.jsonl", "emf-library-real.jsonl",
                                  "lambda-text-format.log", "console-export.csv"])
def test_gzipped_samples_give_the_same_events(shared_dir: Path, tmp_path: Path, name: str) -> None:
    src = shared_dir / "samples" / name
    gz = tmp_path / (name + ".gz")
    gz.write_bytes(gzip.compress(src.read_bytes()))
    plain, zipped = EventStore(), EventStore()
    plain.ingest_path(src, log_group="/aws/lambda/x")
    r = zipped.ingest_path(gz, log_group="/aws/lambda/x", log_stream=src.name)
    assert r.per_file[str(gz)].compressed
    q = 'SELECT * EXCLUDE ("@ingestionTime") FROM events ORDER BY "@seq"'
    assert zipped.connection.execute(q).fetchall() == plain.connection.execute(q).fetchall()


def test_ingest_events_matches_the_file(shared_dir: Path) -> None:
    doc = json.loads((shared_dir / "samples" / "filter-log-events.json").read_text())
    a, b = EventStore(), EventStore()
    a.ingest_events(doc["events"], "/aws/lambda/settlement-worker")
    b.ingest_path(shared_dir / "samples" / "filter-log-events.json", log_group="/aws/lambda/settlement-worker")
    q = 'SELECT * FROM events ORDER BY "@seq"'
    assert a.connection.execute(q).fetchall() == b.connection.execute(q).fetchall()
    assert a.count() == len(doc["events"]) == 28
