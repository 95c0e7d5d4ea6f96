"""``idemwatch diagnose`` end to end: the demo fleet simulated (default, and with every anti-pattern built in),
collected, diagnosed through the command; every source (events, trail table, log files), output format, exit code
and error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemwatch.cli import main
from tests.unit.audit.test_rules_report import _check_sarif

START_MS = 1_767_600_000_000


def _demo(out: Path, inject: bool) -> object:
    from collector.collect import collect_local
    from dashboard.demo import run_demo
    from dashboard.demo.faults import AntiPattern

    truth = run_demo(out, seed=7, events=3_000, duration_s=7_200, start_ms=START_MS,
                     anti_patterns=list(AntiPattern) if inject else ())
    collect_local([out / "logs"], out)
    return truth


@pytest.fixture(scope="module")
def default_demo(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("default")
    _demo(out, inject=False)
    return out


@pytest.fixture(scope="module")
def injected_demo(tmp_path_factory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("injected")
    return out, _demo(out, inject=True)


def run(*args: str) -> object:
    return CliRunner().invoke(main, ["diagnose", *args])


def _found(doc: dict) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in doc["findings"]:
        out.setdefault(f["function"], set())
        if f["status"] == "fail":
            out[f["function"]].add(f["rule"])
    return out


@pytest.mark.slow
def test_default_demo_reports_no_anti_pattern(default_demo: Path) -> None:
    r = run("--data", str(default_demo))
    assert r.exit_code == 0, r.output
    assert "0 found" in r.output and "not observable" in r.output
    r = run("--data", str(default_demo), "--format", "json")
    doc = json.loads(r.output)
    assert doc["summary"]["fail"] == 0 and doc["summary"]["pass"] > 0
    assert set(_found(doc)) == {"orders-consumer", "ledger-stream", "create-case-api", "payment-capture"}
    assert all(not v for v in _found(doc).values())


@pytest.mark.slow
def test_injected_demo_found_exactly_where_built_in(injected_demo, tmp_path: Path) -> None:
    data, truth = injected_demo
    r = run("--data", str(data))
    assert r.exit_code == 1, r.output
    assert "anti-pattern finding(s) at or above high" in r.stderr
    assert "examples (idempotency keys hashed" in r.stdout
    out = tmp_path / "d" / "diagnose.json"
    r = run("--data", str(data), "--format", "json", "--out", str(out), "--fail-on", "none")
    assert r.exit_code == 0 and r.output == ""
    doc = json.loads(out.read_text())
    assert _found(doc) == truth.expected_rules()  # type: ignore[attr-defined]
    assert doc["tool"] == "idemwatch diagnose" and doc["options"]["examples"] == 3
    assert {"checklist", "query", "threshold", "related"} <= set(doc["rules"]["IW106"])
    assert doc["rules"]["IW106"]["related"] == ["IW001"]
    # only medium and above: IW107 (medium) alone would not fail with --fail-on high; it does with medium
    r = run("--data", str(data), "--format", "sarif", "--fail-on", "medium")
    assert r.exit_code == 1
    log = json.loads(r.stdout)
    _check_sarif(log)
    assert log["runs"][0]["tool"]["driver"]["name"] == "idemwatch-diagnose"
    results = {(x["ruleId"], x["properties"]["resource"]) for x in log["runs"][0]["results"] if x["level"] != "note"}
    assert ("IW107", "orders-consumer (ProcessOrders)") in results
    assert all("(not observable)" in x["message"]["text"] for x in log["runs"][0]["results"] if x["level"] == "note")


@pytest.mark.slow
def test_every_source_gives_the_same_findings(injected_demo, tmp_path: Path) -> None:
    data, _ = injected_demo
    by_events = json.loads(run("--data", str(data), "--format", "json", "--fail-on", "none").output)
    by_files = json.loads(run(str(data / "logs"), "--format", "json", "--fail-on", "none").output)
    assert by_files["findings"] == by_events["findings"]
    # a data directory collected from CloudWatch has the trail table but no events: no log streams, no REPORT lines
    trail_only = tmp_path / "cloud"
    (trail_only / "tables").mkdir(parents=True)
    shutil.copy(data / "tables" / "trail.parquet", trail_only / "tables" / "trail.parquet")
    by_trail = json.loads(run("--data", str(trail_only), "--format", "json", "--fail-on", "none").output)
    assert "trail table" in by_trail["source"]
    events = {(f["function"], f["rule"]): f for f in by_events["findings"]}
    for f in by_trail["findings"]:
        if f["rule"] in ("IW104", "IW109"):
            assert f["status"] == "unknown", f  # the trail cannot show them
            continue
        ref = events[(f["function"], f["rule"])]
        if f["rule"] == "IW105" and events[(f["function"], "IW104")]["status"] == "fail":
            # without log streams the keys an in-memory deduplication processed again are IW105's, and it says so
            ref = events[(f["function"], "IW104")]
            assert "carry no log streams" in f["message"]
        assert (f["status"], f["count"], f["first"], f["last"]) == (ref["status"], ref["count"], ref["first"],
                                                                    ref["last"]), f["rule"]


def test_bad_sources_are_one_line_errors(tmp_path: Path) -> None:
    r = run("--data", str(tmp_path / "nope"))
    assert r.exit_code == 2 and r.output.startswith("Error: no such data directory")
    r = run("--data", str(tmp_path))
    assert r.exit_code == 2 and "holds neither events.duckdb nor" in r.output
    (tmp_path / "x.log").write_text("")
    r = run(str(tmp_path / "x.log"), "--data", str(tmp_path))
    assert r.exit_code == 2 and "give one source" in r.output
    r = run("--data", str(tmp_path), "--start", "2026-01-05T10:00:00Z", "--end", "2026-01-05T09:00:00Z")
    assert r.exit_code == 2 and "--start/--end" in r.output


def test_events_database_being_written_is_a_clear_error(tmp_path: Path) -> None:
    import duckdb

    con = duckdb.connect(str(tmp_path / "events.duckdb"))  # another writer holds the database
    try:
        con.execute("CREATE TABLE events (x INT)")
        r = run("--data", str(tmp_path))
    finally:
        con.close()
    assert r.exit_code == 2 and "is 'idemwatch collect local' writing it?" in r.output, r.output
    assert len(r.output.splitlines()) == 1


def test_log_files_without_emitter_records(tmp_path: Path) -> None:
    p = tmp_path / "plain.log"
    p.write_text("2026-01-05T10:00:00.000Z hello\n2026-01-05T10:00:01.000Z not json either\n")
    r = run(str(p), "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["findings"] == []  # no emitter record: no function to judge, nothing invented
