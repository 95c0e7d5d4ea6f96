"""``idemwatch demo --no-serve``: simulate, collect, print the summary; bad options are clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemwatch.cli import main


def _require_collector() -> None:
    # The whole pipeline is in this checkout: a missing part is a failure, not a skip.
    from collector.collect import collect_local  # noqa: F401
    from collector.ingest import EventStore  # noqa: F401


def test_demo_no_serve_simulates_collects_and_summarises(tmp_path: Path) -> None:
    _require_collector()
    out = tmp_path / "data"
    res = CliRunner().invoke(main, ["demo", "--out", str(out), "--seed", "3", "--events", "400", "--duration", "1800",
                                    "--start", "2026-01-05T08:00:00Z", "--no-serve"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    truth = json.loads((out / "demo-truth.json").read_text())
    assert truth["start"] == "2026-01-05T08:00:00.000Z" and truth["end"] == "2026-01-05T08:30:00.000Z"
    for fn in ("orders-consumer", "ledger-stream", "create-case-api", "payment-capture"):
        assert (out / "logs" / f"{fn}.log").is_file()
        assert fn in res.output
    assert (out / "tables" / "outcomes.parquet").is_file() and (out / "manifest.json").is_file()
    assert "matches the ground truth for every function and outcome" in res.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--events", "0"], "0 is not in the range x>=1"),
        (["--duration", "59"], "59 is not in the range x>=60"),
        (["--start", "yesterday"], "expected epoch seconds, ISO-8601"),
        (["--port", "70000"], "70000 is not in the range"),
    ],
)
def test_bad_options_are_clear_errors(tmp_path: Path, args: list[str], message: str) -> None:
    res = CliRunner().invoke(main, ["demo", "--out", str(tmp_path), "--no-serve", *args])
    assert res.exit_code == 2
    assert message in res.output
    assert not (tmp_path / "logs").exists()  # nothing simulated
