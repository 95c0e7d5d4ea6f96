"""collect local holds under crashes and concurrency: SIGKILL at any point then a re-run gives exactly the tables and
the events of a clean run; a run aborted by a bad file leaves nothing of it; bytes appended while a file is read are
left for the next run; a second run on the same --out is refused with one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from collector.collect import collect_local
from collector.exceptions import CollectError, CollectLockedError
from collector.tables import TABLES

T0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
OUTCOMES = ("received", "claimed", "succeeded", "retryable_failure", "payload_conflict")


def _line(ms: int, i: int) -> str:
    ts = (T0 + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    doc = {"level": "INFO", "timestamp": ts, "service": "orders", "operation": "Pay", "schema_version": "1",
           "outcome": OUTCOMES[i % len(OUTCOMES)], "event_source": "sqs", "attempt": 1 + i % 3,
           "idempotency_key": f"k{i % 97}", "idempotency_status": "IN_PROGRESS" if i % 5 == 1 else "COMPLETED",
           "record_age_ms": i % 1000, "function_request_id": f"r{i}"}
    return f"{ts} {json.dumps(doc, separators=(',', ':'))}\n"


def _write_logs(root: Path, files: int, lines: int) -> Path:
    logs = root / "logs"
    logs.mkdir()
    for f in range(files):
        (logs / f"fn{f}.log").write_text("".join(_line(f * 7 + i * 250, f * lines + i) for i in range(lines)))
    return logs


def snapshot(out: Path) -> dict[str, list[str]]:
    """Every table as its sorted rows (JSON text), plus the number of stored events."""
    import duckdb
    import pyarrow.parquet as pq

    snap = {name: sorted(json.dumps(r, sort_keys=True, default=str)
                         for r in pq.read_table(out / "tables" / f"{name}.parquet").to_pylist()) for name in TABLES}
    con = duckdb.connect(str(out / "events.duckdb"), read_only=True)
    snap["events"] = [str(con.execute("SELECT count(*) FROM events").fetchall()[0][0])]
    con.close()
    return snap


def _cli(*args: str) -> list[str]:
    return [str(Path(sys.executable).parent / "idemwatch"), *args]


@pytest.mark.slow
@pytest.mark.timeout(1500)  # 13 collect runs; minutes on a busy 2-core machine
def test_sigkill_at_many_points_then_rerun_equals_a_clean_run(tmp_path):
    logs = _write_logs(tmp_path, files=1, lines=15_000)  # ~4.4 MB (over FAST_PATH_MIN_BYTES): the fast path
    (logs / "small.log").write_text("".join(_line(5 + i * 1000, i) for i in range(300)))  # the general path
    clean = tmp_path / "clean"
    t0 = time.monotonic()
    subprocess.run(_cli("collect", "local", str(logs), "--out", str(clean)), check=True, capture_output=True)
    duration = time.monotonic() - t0
    expected = snapshot(clean)
    assert int(expected["events"][0]) == 15_000 + 300
    # spread over the run (ingest, commits, tables); the clean run may have been slower than these (busy machine)
    killed_mid_run = kill_then_rerun(logs, tmp_path, [0.8 * duration * k / 7 for k in range(1, 7)],
                                     lambda out, why: snapshot(out) == expected)
    assert killed_mid_run >= 3, killed_mid_run  # at least three points really interrupted a run


def kill_then_rerun(logs: Path, tmp_path: Path, points: list[float], same: Callable[[Path, str], bool]) -> int:
    """For each delay in ``points`` (seconds): start ``idemwatch collect local logs`` into a new out directory, SIGKILL
    it after the delay if it still runs, run it again to its end and assert ``same(out, why)``. When the points are
    used up with fewer than three kills mid-run (the machine got faster than a timed clean run), earlier points are
    added, up to 12 runs. Returns how many kills landed mid-run."""
    points = list(points)
    killed_mid_run = 0
    n = 0
    while points:
        delay = points.pop(0)
        n += 1
        out = tmp_path / f"k{n}"
        proc = subprocess.Popen(_cli("collect", "local", str(logs), "--out", str(out)),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        if proc.poll() is None:
            killed_mid_run += 1
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        subprocess.run(_cli("collect", "local", str(logs), "--out", str(out)), check=True, capture_output=True)
        assert same(out, f"kill after {delay:.2f} s"), f"kill after {delay:.2f} s"
        if not points and killed_mid_run < 3 and n < 12:
            points = [0.5 * delay]
    return killed_mid_run


def test_a_run_aborted_by_a_bad_file_then_rerun_equals_a_clean_run(tmp_path):
    logs = _write_logs(tmp_path, files=3, lines=200)
    binary = tmp_path / "image.log"
    binary.write_bytes(b"\x89PNG\x00\x00\x00binary")
    out = tmp_path / "out"
    with pytest.raises(CollectError, match="binary"):
        collect_local([logs / "fn0.log", logs / "fn1.log", binary, logs / "fn2.log"], out)
    collect_local([logs], out)
    clean = tmp_path / "clean"
    collect_local([logs], clean)
    assert snapshot(out) == snapshot(clean)
    assert snapshot(out)["events"] == ["600"]


def test_bytes_appended_while_a_file_is_read_are_left_for_the_next_run(tmp_path, monkeypatch):
    import collector.collect as collect_mod

    logs = _write_logs(tmp_path, files=1, lines=100)
    real = collect_mod._ingest_range
    grown = []

    def append_then_ingest(store, path, start, end, fmt, **kw):
        if not grown:  # after the size is recorded (the hash of that many bytes runs meanwhile), before the read
            with open(path, "a") as fh:
                fh.write("".join(_line(100_000 + i, 1000 + i) for i in range(40)))
            grown.append(True)
        return real(store, path, start, end, fmt, **kw)

    monkeypatch.setattr(collect_mod, "_ingest_range", append_then_ingest)
    out = tmp_path / "out"
    first = collect_local([logs], out)
    assert first["ingest"]["events"] == 100  # only the 100 lines of the recorded size
    monkeypatch.setattr(collect_mod, "_ingest_range", real)
    second = collect_local([logs], out)
    assert second["this_run"]["appended"] == 1 and second["this_run"]["events_added"] == 40
    assert snapshot(out)["events"] == ["140"]
    clean = tmp_path / "clean"
    collect_local([logs], clean)
    assert snapshot(out) == snapshot(clean)


def test_a_second_run_on_the_same_out_is_refused_with_one_line(tmp_path):
    from click.testing import CliRunner

    from collector.run_lock import run_lock
    from idemwatch.cli import main as cli_main

    logs = _write_logs(tmp_path, files=1, lines=10)
    out = tmp_path / "out"
    with run_lock(out, "collect local"):
        with pytest.raises(CollectLockedError, match=rf"another collect local \(pid {os.getpid()}\) is writing to"):
            collect_local([logs], out)
        res = CliRunner().invoke(cli_main, ["collect", "local", str(logs), "--out", str(out)])
    assert res.exit_code == 1
    assert res.output.strip().count("\n") == 0 and "is writing to" in res.output
    collect_local([logs], out)  # released: the next run goes ahead
    assert snapshot(out)["events"] == ["10"]
