"""The log shapes users bring, written as AWS and its tools really write them, for ``collector_bench.py --formats``.

Every shape carries the same CloudWatch events (``invocations``: per invocation ``INIT_START`` on a cold start,
``START``, the emitter's outcome records, its EMF document, Powertools' ColdStart document, ``END`` and ``REPORT``; in
the text style also ``[INFO]`` runtime lines and, every 10th invocation, an ``[ERROR]`` with its traceback as one
multi-line event), in the container each source writes (compare ../shared/samples):

- ``json-lines``: one event per line, ``INIT_START``/``START`` first (a Lambda log of a function that prints JSON);
  ``json-lines-record-first``: the same from the first JSON record on (a download cut mid-invocation);
- ``lambda-text``: the Lambda text format (text style): ``[LEVEL]\\t<ts>\\t<request id>\\t<msg>``, tracebacks on the
  lines after their event (lambda-text-format.log);
- ``lambda-json``: the Lambda JSON log format: ``platform.initStart`` / ``platform.start`` / ``platform.runtimeDone``
  / ``platform.report`` records (``time``, ``type``, ``record``) around the function's own JSON lines;
- ``filter-log-events``: ``aws logs filter-log-events`` output, the CLI's ONE merged document (``json.dumps``
  indent 4, ``ensure_ascii=False``), events keyed ``logStreamName, timestamp, message, ingestionTime, eventId``, each
  message ending ``\\n`` as Lambda sends it (filter-log-events.json);
- ``aws-logs-tail`` / ``aws-logs-tail-short``: ``aws logs tail --format detailed|short`` output (aws-cli v2
  ``customizations/logs/tail.py``: ``isoformat(timespec='microseconds')`` + stream / ``%Y-%m-%dT%H:%M:%S``, message
  ``rstrip()``-ed);
- ``sam-logs``: ``sam logs`` text output (``<stream> <isoformat()> <message>``, JSON messages re-indented by 2);
- ``console-csv``: the console's CSV download (``timestamp,message``, messages quoted with their ``\\n``:
  console-export.csv);
- ``export-s3-gz``: ``CreateExportTask`` objects, ``<ISO ms Z> <message>`` per event, text style (tracebacks on
  the following lines, not escaped), gzip, in objects of ``EXPORT_OBJECT_EVENTS`` events each.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from emitter.contract import IdempotencyStatus, LogKey, Metric, Outcome

T0_MS = 1767607200000  # 2026-01-05T10:00:00Z
EXPORT_OBJECT_EVENTS = 200_000
"""Events per export object: CloudWatch splits an export into objects (and the ingest keeps at most
``MAX_DECOMPRESSED_BYTES`` of one)."""

SHAPES = ("json-lines", "json-lines-record-first", "lambda-text", "lambda-json", "filter-log-events",
          "aws-logs-tail", "aws-logs-tail-short", "sam-logs", "console-csv", "export-s3-gz")

_TRACEBACK = ("Traceback (most recent call last):\n"
              '  File "/var/task/app.py", line 41, in handler\n'
              "    result = capture(record)\n"
              '  File "/var/task/app.py", line 28, in capture\n'
              "    raise PaymentDeclined(code)\n"
              "app.PaymentDeclined: card_declined")


def _iso_ms(ms: int) -> str:
    s, m = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{m:03d}Z"


def invocations(n: int, text: bool, seed: int = 7) -> Iterator[tuple[int, str, str, dict | None]]:
    """``n`` CloudWatch events ``(timestamp ms, log stream, message, platform record or None)``; ``text``: the
    function also logs text lines and tracebacks (the Lambda text format)."""
    rnd = random.Random(seed)
    K = LogKey
    outcomes = [Outcome.SUCCEEDED, Outcome.SUCCEEDED, Outcome.SUCCEEDED, Outcome.DUPLICATE_COMPLETED,
                Outcome.DUPLICATE_IN_PROGRESS, Outcome.RETRYABLE_FAILURE, Outcome.PAYLOAD_CONFLICT,
                Outcome.POISON_MESSAGE, Outcome.TIMEOUT_BUDGET_ABORT, Outcome.AMBIGUOUS_COMMIT]
    ops = ["ProcessOrders", "CapturePayment", "ProjectLedger"]
    written, ts, inv = 0, T0_MS, 0
    stream = ""
    while written < n:
        inv += 1
        rid = (f"{rnd.getrandbits(32):08x}-{rnd.getrandbits(16):04x}-4{rnd.getrandbits(12):03x}-"
               f"a{rnd.getrandbits(12):03x}-{rnd.getrandbits(48):012x}")
        op = ops[inv % 3]
        cold = inv % 8 == 1
        out: list[tuple[int, str, dict | None]] = []
        if cold:
            stream = f"2026/01/05/[$LATEST]{rnd.getrandbits(128):032x}"
            out.append((ts, ("INIT_START Runtime Version: python:3.12.v38\tRuntime Version ARN: arn:aws:lambda:"
                             "eu-west-1::runtime:0c6a5b7e9d"), {"type": "platform.initStart", "record": {
                                "initializationType": "on-demand", "phase": "init",
                                "runtimeVersion": "python:3.12.v38", "functionName": "orders-bench",
                                "functionVersion": "$LATEST"}}))
        out.append((ts, f"START RequestId: {rid} Version: $LATEST",
                    {"type": "platform.start", "record": {"requestId": rid, "version": "$LATEST"}}))
        base = {K.LEVEL.value: "INFO", K.SERVICE.value: "orders", K.OPERATION.value: op,
                K.FUNCTION_NAME.value: "orders-bench", K.FUNCTION_REQUEST_ID.value: rid,
                K.EVENT_SOURCE.value: "sqs", K.SCHEMA_VERSION.value: "1"}
        counts: dict[str, int] = {}
        for _ in range(2):
            ts += rnd.randint(1, 5)
            key = f"order-{rnd.randint(1, 200_000)}"
            ev_id = f"{rnd.getrandbits(64):016x}"
            if text:
                out.append((ts, f"[INFO]\t{_iso_ms(ts)}\t{rid}\tprocessing record {ev_id}", None))
            rec = dict(base, **{K.MESSAGE.value: "received", K.TIMESTAMP.value: _iso_ms(ts),
                                K.OUTCOME.value: Outcome.RECEIVED.value, K.EVENT_ID.value: ev_id,
                                K.ATTEMPT.value: 1 if rnd.random() < 0.9 else rnd.randint(2, 4),
                                K.RECORD_AGE_MS.value: rnd.randint(5, 90_000), K.IDEMPOTENCY_KEY.value: key})
            out.append((ts, json.dumps(rec, separators=(",", ":")), None))
            counts[Metric.EVENTS_RECEIVED.value] = counts.get(Metric.EVENTS_RECEIVED.value, 0) + 1
            ts += rnd.randint(1, 5)
            rec = dict(base, **{K.MESSAGE.value: "claimed", K.TIMESTAMP.value: _iso_ms(ts),
                                K.OUTCOME.value: Outcome.CLAIMED.value, K.EVENT_ID.value: ev_id,
                                K.IDEMPOTENCY_KEY.value: key,
                                K.IDEMPOTENCY_STATUS.value: IdempotencyStatus.IN_PROGRESS.value,
                                K.IN_PROGRESS_EXPIRES_AT_MS.value: ts + 60_000})
            out.append((ts, json.dumps(rec, separators=(",", ":")), None))
            ts += rnd.randint(2, 40)
            o = rnd.choice(outcomes)
            extra = {}
            if o in (Outcome.RETRYABLE_FAILURE, Outcome.POISON_MESSAGE):
                extra = {K.ERROR_CODE.value: rnd.choice(["Throttled", "ValidationError", "Timeout"]),
                         K.ERROR_CLASS.value: "retryable" if o is Outcome.RETRYABLE_FAILURE else "poison",
                         K.LEVEL.value: "ERROR"}
            rec = dict(base, **{K.MESSAGE.value: o.value, K.TIMESTAMP.value: _iso_ms(ts), K.OUTCOME.value: o.value,
                                K.EVENT_ID.value: ev_id, K.IDEMPOTENCY_KEY.value: key, **extra})
            out.append((ts, json.dumps(rec, separators=(",", ":")), None))
            counts[o.value] = counts.get(o.value, 0) + 1
        if text and inv % 10 == 0:
            out.append((ts, f"[ERROR]\t{_iso_ms(ts)}\t{rid}\tcapture failed\n{_TRACEBACK}", None))
        ts += 1
        emf = {"_aws": {"Timestamp": ts, "CloudWatchMetrics": [{
            "Namespace": "Idempotency", "Dimensions": [["Service", "Operation"], ["Service"]],
            "Metrics": [{"Name": k, "Unit": "Count"} for k in counts]}]},
            "Service": "orders", "Operation": op, K.SCHEMA_VERSION.value: "1", **counts}
        out.append((ts, json.dumps(emf, separators=(",", ":")), None))
        if cold:
            out.append((ts, json.dumps({"_aws": {"Timestamp": ts, "CloudWatchMetrics": [{
                "Namespace": "Idempotency", "Dimensions": [["function_name", "service"]],
                "Metrics": [{"Name": "ColdStart", "Unit": "Count"}]}]},
                "function_name": "orders-bench", "service": "orders", "ColdStart": [1.0]}, separators=(",", ":")),
                None))
        ts += 1
        dur = 3000.0 if inv % 200 == 0 else rnd.uniform(3, 900)
        out.append((ts, f"END RequestId: {rid}", {"type": "platform.runtimeDone", "record": {
            "requestId": rid, "status": "timeout" if dur == 3000.0 else "success",
            "metrics": {"durationMs": round(dur, 2), "producedBytes": 0}}}))
        mem = rnd.randint(60, 120)
        init = rnd.uniform(150, 400) if cold else None
        report = (f"REPORT RequestId: {rid}\tDuration: {dur:.2f} ms\tBilled Duration: {int(dur) + 1} ms\t"
                  f"Memory Size: 256 MB\tMax Memory Used: {mem} MB\t")
        metrics = {"durationMs": round(dur, 2), "billedDurationMs": int(dur) + 1, "memorySizeMB": 256,
                   "maxMemoryUsedMB": mem}
        if init is not None:
            report += f"Init Duration: {init:.2f} ms\t"
            metrics["initDurationMs"] = round(init, 2)
        if dur == 3000.0:
            report += "Status: timeout"
        out.append((ts, report, {"type": "platform.report", "record": {
            "requestId": rid, "metrics": metrics, "status": "timeout" if dur == 3000.0 else "success"}}))
        ts += rnd.randint(5, 60)
        for t, msg, platform in out[: n - written]:
            yield t, stream, msg, platform
        written += min(len(out), n - written)


def _iso_us(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="microseconds")


def _sam_message(msg: str) -> str:
    if msg.startswith("{"):
        try:
            return json.dumps(json.loads(msg), indent=2)
        except ValueError:
            pass
    return msg


def write_shape(path: Path, n: int, shape: str) -> Path:
    """Write ``n`` events in ``shape`` under ``path`` (a file, or a directory of objects for ``export-s3-gz``);
    returns what ``collect local`` reads."""
    text = shape in ("lambda-text", "export-s3-gz")
    events = invocations(n, text)
    if shape == "export-s3-gz":
        path.mkdir(parents=True, exist_ok=True)
        part, buf, k = 0, io.StringIO(), 0
        for ts, _, msg, _ in events:
            buf.write(f"{_iso_ms(ts)} {msg}\n")
            k += 1
            if k == EXPORT_OBJECT_EVENTS:
                (path / f"{part:06d}.gz").write_bytes(gzip.compress(buf.getvalue().encode(), compresslevel=6))
                part, buf, k = part + 1, io.StringIO(), 0
        if k:
            (path / f"{part:06d}.gz").write_bytes(gzip.compress(buf.getvalue().encode(), compresslevel=6))
        return path
    with open(path, "w", encoding="utf-8", newline="") as out:
        if shape == "filter-log-events":
            out.write('{\n    "events": [')
            for i, (ts, stream, msg, _) in enumerate(events):
                ev = {"logStreamName": stream, "timestamp": ts, "message": msg + "\n", "ingestionTime": ts + 700,
                      "eventId": f"{ts:020d}{i:036d}"}
                block = json.dumps(ev, indent=4, ensure_ascii=False).replace("\n", "\n        ")
                out.write(("," if i else "") + "\n        " + block)
            out.write('\n    ],\n    "searchedLogStreams": []\n}\n')
            return path
        if shape == "console-csv":
            w = csv.writer(out, lineterminator="\n")
            w.writerow(["timestamp", "message"])
            for ts, _, msg, _ in events:
                w.writerow([ts, msg + "\n"])
            return path
        seen_record = shape != "json-lines-record-first"
        for ts, stream, msg, platform in events:
            if shape in ("json-lines", "lambda-text", "json-lines-record-first"):
                seen_record = seen_record or msg.startswith("{")
                if seen_record:
                    out.write(msg + "\n")
            elif shape == "lambda-json":
                out.write((json.dumps({"time": _iso_ms(ts), **platform}, separators=(",", ":")) if platform
                           else msg) + "\n")
            elif shape == "aws-logs-tail":
                out.write(f"{_iso_us(ts)} {stream} {msg.rstrip()}\n")
            elif shape == "aws-logs-tail-short":
                out.write(f"{datetime.fromtimestamp(ts / 1000, UTC).strftime('%Y-%m-%dT%H:%M:%S')} {msg.rstrip()}\n")
            elif shape == "sam-logs":
                out.write(f"{stream} {datetime.fromtimestamp(ts / 1000, UTC).isoformat()} {_sam_message(msg)}\n")
            else:
                raise ValueError(f"unknown shape {shape!r}")
    return path


def message_sql(shape: str) -> str | None:
    """DuckDB ``SELECT msg FROM ...`` of the CloudWatch messages of a ``shape`` written at ``$1``, the cheapest way
    DuckDB reads that container (no framing: a continuation line is a row of its own), for the floor; None for the
    JSON-lines shapes, whose floor reads the records with ``read_json``."""
    lines = ("read_csv($1, columns={'line': 'VARCHAR'}, delim=chr(1), quote='', escape='', header=false, "
             "auto_detect=false)")
    return {
        "lambda-text": f"SELECT line AS msg FROM {lines}",
        "aws-logs-tail": f"SELECT regexp_extract(line, '^\\S+ \\S+ (.*)$', 1) AS msg FROM {lines}",
        "aws-logs-tail-short": f"SELECT regexp_extract(line, '^\\S+ (.*)$', 1) AS msg FROM {lines}",
        "sam-logs": f"SELECT regexp_extract(line, '^\\S+ \\S+ (.*)$', 1) AS msg FROM {lines}",
        "export-s3-gz": f"SELECT regexp_extract(line, '^\\S+ (.*)$', 1) AS msg FROM {lines}",  # $1: <dir>/*.gz
        "console-csv": ("SELECT message AS msg FROM read_csv($1, header=true, columns={'timestamp': 'VARCHAR', "
                        "'message': 'VARCHAR'}, quote='\"', escape='\"', auto_detect=false)"),
        "filter-log-events": ("SELECT e.message AS msg FROM (SELECT unnest(events) AS e FROM read_json($1, "
                              "columns={'events': 'STRUCT(\"timestamp\" BIGINT, message VARCHAR, "
                              "\"logStreamName\" VARCHAR)[]'}, format='unstructured', "
                              "maximum_object_size=4000000000))"),
    }.get(shape)
