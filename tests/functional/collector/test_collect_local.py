"""collect_local end to end: tables with exactly the schema of collector/tables.py, manifest,
and incremental collection (unchanged / appended / rewritten sources, time window)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from collector.collect import collect_local
from collector.tables import TABLES

T0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)


def line(ms: int, outcome: str, **props) -> str:
    ts = (T0 + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    doc = {"level": "INFO", "message": outcome, "timestamp": ts, "service": "orders", "cold_start": False,
           "function_name": "orders-pay", "function_request_id": "r1", "operation": "Pay",
           "schema_version": "1", "outcome": outcome, "event_source": "sqs", **props}
    return f"{ts} {json.dumps(doc, separators=(',', ':'))}\n"


FIRST = [line(0, "received", attempt=1, record_age_ms=100),
         line(10, "claimed", idempotency_key="k1", idempotency_status="IN_PROGRESS",
              in_progress_expires_at_ms=1767607230000, attempt=1),
         line(20, "payload_conflict", idempotency_key="k2", idempotency_status="COMPLETED")]
MORE = [line(60_000, "received", attempt=2, record_age_ms=300),
        line(60_010, "succeeded", idempotency_key="k1", idempotency_status="COMPLETED", attempt=2)]


def outcome_counts(out):
    import pyarrow.parquet as pq

    t = pq.read_table(out / "tables" / "outcomes.parquet").to_pylist()
    counts: dict[str, int] = {}
    for r in t:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + r["events"]
    return counts


def test_tables_have_exactly_the_standard_schema(tmp_path):
    import duckdb

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "orders-pay.log").write_text("".join(FIRST))
    calls = []
    manifest = collect_local([logs], tmp_path / "out", progress=lambda *a: calls.append(a))
    assert calls[0] == ("ingest", str(logs / "orders-pay.log"), 0, 1)
    # the tables: once before the first (done 0), then as each is written (two at a time: in the order they end)
    assert all(c[0] == "tables" and c[3] == len(TABLES) for c in calls[1:])
    assert [c[2] for c in calls[1:]] == list(range(len(TABLES) + 1))
    assert sorted(c[1] for c in calls[2:]) == sorted(TABLES)
    con = duckdb.connect()
    for name, table in TABLES.items():
        path = tmp_path / "out" / "tables" / f"{name}.parquet"
        cols = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()
        assert [c[0] for c in cols] == list(table.column_names), name
        types = [c[1].replace(" WITH TIME ZONE", "") for c in cols]
        assert types == [t for _, t in table.columns], name
        assert manifest["tables"][name]["rows"] == con.execute(
            f"SELECT count(*) FROM read_parquet('{path}')").fetchall()[0][0]
    assert outcome_counts(tmp_path / "out") == {"received": 1, "claimed": 1, "payload_conflict": 1}
    assert manifest["tables"]["stuck_keys"]["rows"] == 1
    assert manifest["tables"]["conflicting_keys"]["rows"] == 1
    on_disk = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert on_disk["tables"] == manifest["tables"]
    assert set(on_disk["queries"]) == set(TABLES) and all(len(q["sha256"]) == 64 for q in on_disk["queries"].values())
    (src,) = on_disk["sources"]
    assert src["path"].endswith("orders-pay.log") and src["ingest"]["events"] == 3
    assert on_disk["ingest"]["skipped"] == src["ingest"]["skipped"]
    assert on_disk["time_window"]["data_start"] == "2026-01-05T10:00:00.000Z"
    assert on_disk["collected_at"].endswith("Z")


def test_collecting_again_only_adds_new_data(tmp_path):
    log = tmp_path / "orders-pay.log"
    log.write_text("".join(FIRST))
    out = tmp_path / "out"
    collect_local([log], out)
    again = collect_local([log], out)
    assert again["this_run"]["unchanged"] == 1 and again["this_run"]["events_added"] == 0
    assert outcome_counts(out) == {"received": 1, "claimed": 1, "payload_conflict": 1}

    with open(log, "a") as fh:  # the function kept logging: only the new lines are ingested
        fh.write("".join(MORE))
    appended = collect_local([log], out)
    assert appended["this_run"]["appended"] == 1 and appended["this_run"]["events_added"] == 2
    assert outcome_counts(out) == {"received": 2, "claimed": 1, "payload_conflict": 1, "succeeded": 1}
    assert appended["tables"]["stuck_keys"]["rows"] == 0  # k1 completed in the appended lines
    assert appended["sources"][0]["ingest"]["events"] == 5

    log.write_text("".join(MORE))  # rewritten: its earlier events are replaced, not duplicated
    replaced = collect_local([log], out)
    assert replaced["this_run"]["replaced"] == 1 and replaced["this_run"]["events_removed"] == 5
    assert outcome_counts(out) == {"received": 1, "succeeded": 1}


def test_time_window_selects_rows_and_sets_stuck_key_age(tmp_path):
    import pyarrow.parquet as pq

    log = tmp_path / "orders-pay.log"
    log.write_text("".join(FIRST + MORE))
    until = (T0 + timedelta(seconds=50)).timestamp()
    m = collect_local([log], tmp_path / "out", since=T0.timestamp(), until=until)
    assert outcome_counts(tmp_path / "out") == {"received": 1, "claimed": 1, "payload_conflict": 1}
    assert m["time_window"]["until"] == "2026-01-05T10:00:50.000Z"
    (stuck,) = pq.read_table(tmp_path / "out" / "tables" / "stuck_keys.parquet").to_pylist()
    assert stuck["idempotency_key"] == "k1" and stuck["age_s"] == pytest.approx(49.99)
    assert stuck["expired"] is True  # lock expired at 10:00:30, window ends 10:00:50


def test_the_cli_and_the_manifest_say_how_each_source_was_read(tmp_path):
    """Per source: the format it was read as, the bytes read, its events and the path taken (issue 39)."""
    from click.testing import CliRunner

    from idemwatch.cli import main as cli_main

    samples = Path(__file__).resolve().parents[3].parent / "shared" / "samples"
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("lambda-text-format.log", "filter-log-events.json", "console-export.csv"):
        (logs / name).write_bytes((samples / name).read_bytes())
    out = tmp_path / "out"
    res = CliRunner().invoke(cli_main, ["collect", "local", str(logs), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "sources read as: 1 console-csv, 1 filter-log-events, 1 lambda-text" in res.output
    manifest = json.loads((out / "manifest.json").read_text())
    got = {Path(s["path"]).name: (s["format"], s["bytes_read"], s["events"], s["ingest_path"])
           for s in manifest["sources"]}
    sizes = {n: (logs / n).stat().st_size for n in got}
    assert got == {
        "console-export.csv": ("console-csv", sizes["console-export.csv"], 17, "csv-stream"),
        "filter-log-events.json": ("filter-log-events", sizes["filter-log-events.json"], 28, "json-stream"),
        "lambda-text-format.log": ("lambda-text", sizes["lambda-text-format.log"],
                                   json.loads((samples / "lambda-text-format.expected.json").read_text())["log_events"],
                                   "line-pieces"),
    }
