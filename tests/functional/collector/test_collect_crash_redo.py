"""collect local's two commits per source (events appended first, then the rows the ingest must change: neighbour
timestamps, file-time fallback, fields of wide or embedded JSON) hold under crashes: a run killed between them, or by
SIGKILL at any point of the ingest, then re-run gives every event exactly once, the same events and the same tables
as a clean run. The data makes every kind of change happen: Lambda text lines without a time of their own, an
out-of-range record time, a file without any timestamp, a JSON message over 200 fields and an embedded fragment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from collector.ingest.constants import PENDING_FIELDS_TABLE, PENDING_TIMESTAMPS_TABLE
from collector.ingest.store import FAST_PATH_MIN_BYTES
from tests.functional.collector.test_collect_trust import _cli, kill_then_rerun, snapshot

T0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
OUTCOMES = ("received", "claimed", "succeeded", "retryable_failure", "duplicate_completed")


def _iso(ms: int) -> str:
    return (T0 + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _invocation(i: int, ms: int) -> list[str]:
    """One invocation as the Lambda runtime and the emitter write it: START/END/REPORT (no time of their own: they
    take a neighbour's), two outcome records with a time."""
    rid = f"{i:08x}-0000-4000-a000-000000000000"
    recs = [json.dumps({"level": "INFO", "timestamp": _iso(ms + k), "service": "orders", "operation": "Pay",
                        "schema_version": "1", "event_source": "sqs", "outcome": OUTCOMES[(i + k) % len(OUTCOMES)],
                        "idempotency_key": f"k{i % 89}", "attempt": 1 + i % 3, "record_age_ms": i % 700,
                        "idempotency_status": "IN_PROGRESS" if (i + k) % 5 == 1 else "COMPLETED",
                        "function_request_id": rid}, separators=(",", ":")) for k in range(2)]
    return [f"START RequestId: {rid} Version: $LATEST", *recs, f"END RequestId: {rid}",
            (f"REPORT RequestId: {rid}\tDuration: {1 + i % 900}.25 ms\tBilled Duration: {2 + i % 900} ms\t"
             f"Memory Size: 256 MB\tMax Memory Used: {60 + i % 50} MB\t")]


def _odd_lines(i: int, ms: int) -> list[str]:
    wide = {"outcome": "succeeded", "service": "orders", "operation": "Wide", **{f"f{j}": j for j in range(250)}}
    return [
        json.dumps({"timestamp": 1e300, "service": "orders", "operation": "Pay", "outcome": "received",
                    "schema_version": "1", "event_source": "sqs"}),  # out of range: a neighbour's time
        json.dumps(wide),  # over 200 fields, no time of its own
        # a runtime log line: its own event in the Lambda text format too (the small files are: most lines are not JSON)
        (f'[INFO]\t{_iso(ms + 3)}\t00000000-0000-4000-a000-{i:012x}\thandler said '
         '{"outcome": "succeeded", "service": "orders", "operation": "Frag"} and went on'),
    ]


def write_logs(root: Path, big_invocations: int) -> Path:
    """``logs/``: one large JSON-lines file (the DuckDB-reader path), three small Lambda text ones, one
    without any timestamp (the file-time fallback)."""
    logs = root / "logs"
    logs.mkdir()
    with open(logs / "big.jsonl", "w") as fh:
        fh.writelines("\n".join(_invocation(i, i * 40) + (_odd_lines(i, i * 40) if i % 997 == 0 else [])) + "\n"
                      for i in range(big_invocations))
    for f in range(3):
        (logs / f"small{f}.log").write_text(
            "\n".join(line for i in range(30) for line in _invocation(10_000 * (f + 1) + i, 5 + i * 300)
                      + (_odd_lines(i, i) if i % 10 == 0 else [])) + "\n")
    notime = logs / "notime.log"
    notime.write_text("".join(f"START RequestId: n{i} Version: $LATEST\nEND RequestId: n{i}\n" for i in range(20)))
    os.utime(notime, (1767600000, 1767600000))
    return logs


def events_rows(out: Path) -> list[str]:
    """Every stored event but its ``@seq`` (a crashed run's numbers may be reused), sorted, as text."""
    con = duckdb.connect(str(out / "events.duckdb"), read_only=True)
    try:
        rows = con.execute('SELECT * EXCLUDE ("@seq") FROM events').fetchall()
    finally:
        con.close()
    return sorted(json.dumps(r, default=str) for r in rows)


def pending(out: Path) -> int:
    con = duckdb.connect(str(out / "events.duckdb"), read_only=True)
    try:
        return sum(con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
                   for t in (PENDING_TIMESTAMPS_TABLE, PENDING_FIELDS_TABLE))
    finally:
        con.close()


_KILLED_BETWEEN_COMMITS = r"""
import os, sys
from pathlib import Path
from collector.ingest.store import EventStore
from collector.collect import collect_local

calls = []

def die_at_the_nth(self):  # the nth source's first commit is in; the process dies before its second one starts
    calls.append(1)
    if len(calls) == int(sys.argv[3]):
        os._exit(9)
    real(self)

real, EventStore._apply_pending = EventStore._apply_pending, die_at_the_nth
collect_local([Path(sys.argv[1])], Path(sys.argv[2]))
"""


@pytest.mark.parametrize("source", [1, 5])  # the first source (big.jsonl, in path order), the last one (small2.log)
def test_killed_between_the_two_commits_then_rerun_equals_a_clean_run(tmp_path, source):
    logs = write_logs(tmp_path, big_invocations=300)
    clean = tmp_path / "clean"
    subprocess.run(_cli("collect", "local", str(logs), "--out", str(clean)), check=True, capture_output=True)
    out = tmp_path / "out"
    died = subprocess.run([sys.executable, "-c", _KILLED_BETWEEN_COMMITS, str(logs), str(out), str(source)],
                          capture_output=True, check=False)
    assert died.returncode == 9, died.stderr[-2000:]
    assert pending(out) > 0  # it died with the second commit's work recorded and not done
    con = duckdb.connect(str(out / "events.duckdb"), read_only=True)
    assert con.execute('SELECT count(*) FROM events WHERE "@timestamp" IS NULL').fetchall()[0][0] > 0
    con.close()
    subprocess.run(_cli("collect", "local", str(logs), "--out", str(out)), check=True, capture_output=True)
    assert pending(out) == 0
    assert events_rows(out) == events_rows(clean)
    assert snapshot(out) == snapshot(clean)
    manifest = json.loads((out / "manifest.json").read_text())
    # the killed source was recorded by its first commit: not collected again (the last one: nothing is)
    assert manifest["this_run"]["unchanged"] == source and manifest["this_run"]["new"] == 5 - source
    assert manifest["ingest"] == json.loads((clean / "manifest.json").read_text())["ingest"]
    reasons = manifest["ingest"]["by_reason"]
    # the odd lines: 3 per small file and 1 in big.jsonl, each once
    assert reasons["json_fields_over_200_dropped"] == reasons["fields_from_embedded_json_fragment"] == 3 * 3 + 1
    assert reasons["timestamp_out_of_range_replaced"] == 3 * 3 + 1
    assert reasons["timestamp_from_file_mtime"] == 40


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_sigkill_at_several_points_during_ingest_then_rerun_equals_a_clean_run(tmp_path):
    logs = write_logs(tmp_path, big_invocations=14_000)
    assert (logs / "big.jsonl").stat().st_size > FAST_PATH_MIN_BYTES  # read by DuckDB's reader, the bulk path
    clean = tmp_path / "clean"
    t0 = time.monotonic()
    subprocess.run(_cli("collect", "local", str(logs), "--out", str(clean)), check=True, capture_output=True)
    duration = time.monotonic() - t0
    expected, expected_events = snapshot(clean), events_rows(clean)
    assert int(expected["events"][0]) == 14_000 * 5 + 15 * 3 + 3 * (30 * 5 + 3 * 3) + 40

    def same(out: Path, why: str) -> bool:
        assert pending(out) == 0, why
        assert snapshot(out) == expected, why
        assert events_rows(out) == expected_events, why
        return True

    # the first 60% of a run: imports, then the sources (the ingest), then the tables
    killed = kill_then_rerun(logs, tmp_path, [duration * k / 10 for k in range(1, 7)], same)
    assert killed >= 3, killed
