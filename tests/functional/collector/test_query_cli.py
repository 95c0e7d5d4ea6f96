"""``idemwatch query`` and ``idemwatch collect local`` through click's CliRunner, plus one
real run of the installed console script."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemwatch.cli import main as cli_main
from idemwatch.timerange import parse_time

CASE = Path(__file__).resolve().parents[3].parent / "shared" / "conformance" / "logs-insights" / \
    "22-time-range-inclusive.json"
SCRIPT = Path(__file__).resolve().parents[3] / ".venv" / "bin" / "idemwatch"


@pytest.fixture()
def events_file(tmp_path):
    """The conformance case's events exactly as ``aws logs filter-log-events --output json`` prints them."""
    path = tmp_path / "orders-idempotent.json"
    path.write_text(json.dumps(json.loads(CASE.read_text())["input"], indent=4))  # as the CLI prints it
    return path


def test_parse_time_accepts_iso_and_epoch_seconds():
    assert parse_time("2026-01-05T10:00:00Z") == 1767607200.0
    assert parse_time("2026-01-05T11:00:00+01:00") == 1767607200.0
    assert parse_time("2026-01-05 10:00:00.250") == 1767607200.25
    assert parse_time("1767607200") == 1767607200.0
    with pytest.raises(ValueError):
        parse_time("yesterday")


def test_query_error_exits_2_with_one_line(tmp_path):
    f = tmp_path / "x.log"
    f.write_text("hello\n")
    res = CliRunner().invoke(cli_main, ["query", "fields a | anomaly @message", str(f)])
    assert res.exit_code == 2
    assert res.stderr.strip().count("\n") == 0
    assert "unsupported command 'anomaly'" in res.stderr and "column 12" in res.stderr


def test_query_json_with_inclusive_iso_bounds(events_file):
    res = CliRunner().invoke(cli_main, ["query", "--format", "json", "--start", "2026-01-05T10:01:00Z",
                                        "--end", "1767607320",
                                        "fields @timestamp, idempotency_key | sort @timestamp asc", str(events_file)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == [
        {"@timestamp": "2026-01-05 10:01:00.000", "idempotency_key": "order-22002"},
        {"@timestamp": "2026-01-05 10:01:30.250", "idempotency_key": "order-22003"},
        {"@timestamp": "2026-01-05 10:02:00.000", "idempotency_key": "order-22004"},
    ]


def test_query_csv_and_table(events_file):
    q = "stats count(*) as n by idempotency_key | sort idempotency_key asc | limit 2"
    res = CliRunner().invoke(cli_main, ["query", "--format", "csv", q, str(events_file)])
    assert res.exit_code == 0, res.output
    assert list(csv.reader(io.StringIO(res.stdout))) == [["idempotency_key", "n"], ["order-22001", "1"],
                                                          ["order-22002", "1"]]
    res = CliRunner().invoke(cli_main, ["query", q, str(events_file)])
    assert res.exit_code == 0 and "order-22001" in res.stdout and "2 row(s)" in res.stdout


def test_a_field_no_event_has_is_named_on_stderr_and_strict_fields_makes_it_an_error(events_file):
    # [fidelity-vended]: CloudWatch returns one blank group for a misspelt field; the CLI says so, result unchanged
    q = "stats count(*) as n by idempotency_ky"
    res = CliRunner().invoke(cli_main, ["query", "--format", "json", q, str(events_file)])
    assert res.exit_code == 0, res.output
    n_events = len(json.loads(CASE.read_text())["input"]["events"])
    assert json.loads(res.stdout) == [{"idempotency_ky": None, "n": n_events}]
    assert res.stderr == (f"warning: field 'idempotency_ky' (line 1, column 24) is present in none of the {n_events} "
                          "events scanned; did you mean 'idempotency_key'?\n")
    strict = CliRunner().invoke(cli_main, ["query", "--strict-fields", q, str(events_file)])
    assert strict.exit_code == 2 and strict.stdout == ""
    assert strict.stderr.startswith("Error: query: field 'idempotency_ky' (line 1, column 24)")
    assert strict.stderr.strip().count("\n") == 0 and strict.stderr.rstrip().endswith("(--strict-fields)")
    clean = CliRunner().invoke(cli_main, ["query", "--strict-fields", "stats count(*) as n by idempotency_key",
                                          str(events_file)])
    assert clean.exit_code == 0 and clean.stderr == ""


def test_collect_local_command(tmp_path, events_file):
    res = CliRunner().invoke(cli_main, ["collect", "local", str(events_file), "--out", str(tmp_path / "out"),
                                        "--until", "2026-01-05T10:01:00Z"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["time_window"]["until"] == "2026-01-05T10:01:00.000Z"
    assert (tmp_path / "out" / "tables" / "trail.parquet").is_file()


def test_collect_group_lists_local_and_cloudwatch():
    res = CliRunner().invoke(cli_main, ["collect", "--help"])
    assert res.exit_code == 0 and "local" in res.output and "cloudwatch" in res.output


def test_console_script_subprocess(events_file):
    assert SCRIPT.is_file()
    proc = subprocess.run([str(SCRIPT), "query", "--format", "json", "--start", "1767607260", "--end", "1767607320",
                           "stats count(*) as n", str(events_file)], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [{"n": 3}]
    bad = subprocess.run([str(SCRIPT), "query", "stats nope(x)", str(events_file)], capture_output=True, text=True,
                         timeout=120, check=False)
    assert bad.returncode == 2 and "unsupported function 'nope'" in bad.stderr


def _binary(path: Path) -> Path:
    path.write_bytes(b"PAR1\x00\x01\x02 not a log \x00" * 10)
    return path


def test_query_reads_a_directory_and_rejects_a_named_binary_file(tmp_path, events_file):
    logs = tmp_path / "logs"
    logs.mkdir()
    events_file.rename(logs / events_file.name)
    _binary(logs / "tables.parquet")  # found inside a directory: skipped, counted, not fatal
    res = CliRunner().invoke(cli_main, ["query", "--format", "json", "stats count(*) as n", str(logs)])
    assert res.exit_code == 0, res.output
    n_events = len(json.loads(CASE.read_text())["input"]["events"])
    assert json.loads(res.stdout) == [{"n": n_events}]

    named = CliRunner().invoke(cli_main, ["query", "stats count(*)", str(logs / "tables.parquet")])
    assert named.exit_code == 2
    assert named.stderr.startswith("Error: ") and named.stderr.strip().count("\n") == 0
    assert "binary" in named.stderr and "Traceback" not in named.output


def test_collect_local_skips_and_counts_a_binary_file_in_a_directory(tmp_path, events_file):
    logs = tmp_path / "logs"
    logs.mkdir()
    events_file.rename(logs / events_file.name)
    _binary(logs / "bin.dat")
    out = tmp_path / "data"
    res = CliRunner().invoke(cli_main, ["collect", "local", str(logs), "--out", str(out)])
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["ingest"]["by_reason"].get("not_a_log_file") == 1
    assert manifest["ingest"]["skipped"] >= 1
    assert manifest["ingest"]["events"] == len(json.loads(CASE.read_text())["input"]["events"])

    named = CliRunner().invoke(cli_main, ["collect", "local", str(logs / "bin.dat"), "--out", str(tmp_path / "d2")])
    assert named.exit_code == 1 and "binary" in named.output and "Traceback" not in named.output
