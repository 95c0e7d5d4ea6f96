"""A source DuckDB cannot ingest within its memory limit: ``collect local`` fails with one line that says so and how
to raise the limit (never DuckDB's "transaction is aborted" from a statement after the failing one), and nothing is
half-written: the manifest and the tables of the run before stay as they were, and a run with enough memory then
collects exactly what a clean run collects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.collect import collect_local
from collector.exceptions import OutOfMemoryError

STREAM = "2026/01/05/[$LATEST]0123456789abcdef0123456789abcdef"


def sam_logs(n: int) -> str:
    """``sam logs`` output (``<log stream> <timestamp> <message>``, JSON messages re-indented on several lines, as
    aws-sam-cli's ``CWPrettyPrintFormatter`` writes them): ``n`` outcome records, each with its continuation lines."""
    out = []
    for i in range(n):
        doc = {"level": "INFO", "message": "succeeded", "timestamp": f"2026-01-05T10:{i // 60000 % 60:02d}:"
               f"{i // 1000 % 60:02d}.{i % 1000:03d}Z", "service": "orders", "schema_version": "1",
               "outcome": "succeeded", "idempotency_key": f"order-{i}", "event_source": "sqs"}
        ts = f"2026-01-05T10:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}000+00:00"
        out.append(f"{STREAM} {ts} {json.dumps(doc, indent=2)}\n")
    return "".join(out)


def snapshot(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and (p.name == "manifest.json" or p.parent.name == "tables")}


def test_out_of_memory_is_one_clear_line_and_leaves_the_last_run_intact(tmp_path, monkeypatch):
    monkeypatch.delenv("IDEMWATCH_MEMORY_LIMIT", raising=False)
    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    (logs / "a.log").write_text(sam_logs(50))
    first = collect_local([logs], out)
    assert first["ingest"]["events"] == 50
    before = snapshot(out)
    big = logs / "b.log"
    big.write_text(sam_logs(3000))

    with pytest.raises(OutOfMemoryError) as err:
        collect_local([logs], out, memory_limit="2MB")  # far too little for DuckDB to ingest anything
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"reading {big}: DuckDB ran out of memory within its memory limit of 2MB (Out of Memory")
    assert "--memory-limit" in msg and "IDEMWATCH_MEMORY_LIMIT" in msg
    assert "aborted" not in msg.lower()
    assert snapshot(out) == before  # the manifest and every table as the run before wrote them

    again = collect_local([logs], out)  # enough memory: b.log is new, a.log unchanged
    assert (again["this_run"]["new"], again["this_run"]["unchanged"]) == (1, 1)
    clean = collect_local([logs], tmp_path / "clean")
    assert again["ingest"]["events"] == clean["ingest"]["events"] == 3050
    assert snapshot(out)["tables/outcomes.parquet"] == snapshot(tmp_path / "clean")["tables/outcomes.parquet"]


def test_the_cli_exits_non_zero_with_the_message(tmp_path, monkeypatch):
    from idemwatch.cli import main as cli_main

    logs, out = tmp_path / "logs", tmp_path / "out"
    logs.mkdir()
    (logs / "b.log").write_text(sam_logs(500))
    monkeypatch.setenv("IDEMWATCH_MEMORY_LIMIT", "1MB")  # the environment's limit, named as such
    res = CliRunner().invoke(cli_main, ["collect", "local", str(logs), "--out", str(out)])
    assert res.exit_code == 1
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1, res.output
    assert lines[0].startswith(f"Error: reading {logs / 'b.log'}: DuckDB ran out of memory within its memory limit "
                               "of 1MB")
    assert not (out / "manifest.json").exists()


@pytest.mark.parametrize("slice_chars", [1, 200, 5000])
def test_joining_a_slice_at_a_time_gives_the_same_events(tmp_path, monkeypatch, slice_chars):
    """The continuation lines are joined one slice of lines at a time (``line_formats.JOIN_SLICE_CHARS``): any slice
    size gives the events of one join (a slice per event, an event's lines at a slice's end, ...)."""
    import collector.ingest.store as store_module
    from collector.ingest import EventStore

    text = sam_logs(40) + "\n\n" + "a line that continues the last event\n  \n"
    path = tmp_path / "sam.log"
    path.write_text(text)

    def rows() -> tuple[int, dict[str, int], list[tuple]]:
        with EventStore() as store:
            rep = store.ingest_path(path)
            got = store.connection.execute('SELECT * EXCLUDE ("@json") FROM events ORDER BY "@seq"').fetchall()
        return rep.events, dict(rep.by_reason), got

    whole = rows()
    monkeypatch.setattr(store_module, "JOIN_SLICE_CHARS", slice_chars)
    assert rows() == whole
    # 8 keys and "}" after each "{"; at the end two blank lines kept before the line that continues, one dropped
    assert whole[0] == 40 and whole[1]["continuation_lines_joined"] == 40 * 9 + 3
    assert whole[1]["blank_line"] == 1
