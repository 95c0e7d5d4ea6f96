"""A small fleet of Lambda REPORT lines, in both formats Lambda writes, as `aws logs filter-log-events` output:
``orders`` in the text format (``REPORT RequestId: ... Init Duration: ... ms``), ``payments`` in the JSON log
format (``platform.report`` records with ``record.metrics``). ``write_data_dir`` collects them with
``collect_local`` (the real ingest and the real invocations query), so the Lambda health page is tested from
the log line up.

Hand-derived figures (bins are minutes; M0 = 10:00, M1 = 10:01 on 2026-01-05 UTC):

| group    | bin | invocations | cold | timeouts | durations (ms)  | init (ms) | max used / size (MB) |
|----------|-----|-------------|------|----------|-----------------|-----------|----------------------|
| orders   | M0  | 2           | 2    | 0        | 100, 50         | 300, 150  | 64 / 128  (50%)      |
| orders   | M1  | 2           | 1    | 1        | 200, 3000       | 500       | 96 / 128  (75%)      |
| payments | M0  | 1           | 1    | 0        | 40              | 250       | 100 / 256 (39.06%)   |
| payments | M1  | 1           | 0    | 0        | 60              | -         | 128 / 256 (50%)      |

All data: 6 invocations, 4 cold (66.7%), 1 timeout, avg duration 3450 / 6 = 575 ms, max 3.0 s; avg init
(300 + 150 + 500 + 250) / 4 = 300 ms (weighted by cold starts: the 1-minute means' mean would be 325), max
500 ms; peak memory used 128 MB; largest 1-minute share 75%.
Per group: orders avg duration 3350 / 4 = 837.5 ms, avg init 950 / 3 = 316.7 ms (not (225 + 500) / 2),
max init 500 ms, 96 of 128 MB (75%); payments avg 50 ms, init 250 ms, 128 of 256 MB (50%).
[10:01, 10:02): 3 invocations, 1 cold, 1 timeout, avg duration 3260 / 3 = 1.1 s, init 500 ms, 128 MB (75%).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

T0 = datetime(2026, 1, 5, 10, 0)  # naive UTC, as the dashboard's window is
T0_MS = 1_767_607_200_000  # T0 in epoch ms
STREAM = "2026/01/05/[$LATEST]0123456789abcdef0123456789abcdef"


def _text(rid: str, duration: float, used: int, *, init: float | None = None, timeout: bool = False) -> str:
    parts = [f"REPORT RequestId: {rid}", f"Duration: {duration:.2f} ms", f"Billed Duration: {int(duration) + 1} ms",
             "Memory Size: 128 MB", f"Max Memory Used: {used} MB"]
    if init is not None:
        parts.append(f"Init Duration: {init:.2f} ms")
    if timeout:
        parts.append("Status: timeout")
    return "\t".join(parts) + "\t\n"


def _json(rid: str, duration: float, used: int, *, init: float | None = None) -> str:
    metrics = {"durationMs": duration, "billedDurationMs": int(duration) + 1, "memorySizeMB": 256,
               "maxMemoryUsedMB": used}
    if init is not None:
        metrics["initDurationMs"] = init
    return json.dumps({"time": "2026-01-05T10:00:00.000Z", "type": "platform.report",
                       "record": {"requestId": rid, "metrics": metrics, "status": "success"}})


def _events(rows: list[tuple[int, str]]) -> dict:
    return {"events": [{"logStreamName": STREAM, "timestamp": T0_MS + ms, "message": msg,
                        "ingestionTime": T0_MS + ms + 500, "eventId": str(i)} for i, (ms, msg) in enumerate(rows)]}


ORDERS = _events([
    (10_000, _text("r1", 100.0, 60, init=300.0)),  # 60 MB: the bin's peak is r2's 64
    (40_000, _text("r2", 50.0, 64, init=150.0)),
    (65_000, _text("r3", 200.0, 70, init=500.0)),
    (90_000, _text("r4", 3000.0, 96, timeout=True)),
])
PAYMENTS = _events([
    (20_000, _json("r5", 40.0, 100, init=250.0)),
    (110_000, _json("r6", 60.0, 128)),
])


def write_data_dir(root: Path) -> Path:
    """<root>/logs/{orders,payments}.json collected into <root> (tables/*.parquet, manifest.json)."""
    from collector.collect import collect_local

    logs = root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "orders.json").write_text(json.dumps(ORDERS), encoding="utf-8")
    (logs / "payments.json").write_text(json.dumps(PAYMENTS), encoding="utf-8")
    collect_local([logs], root)
    return root
