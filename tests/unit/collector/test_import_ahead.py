"""collect_local imports the table phase's modules (pyarrow...) on a thread while its ingest runs
(``collect._import_ahead``): importing the collector does not load them, and a failing import still fails the run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from collector.collect import collect_local


def test_importing_the_collector_loads_neither_pyarrow_nor_the_table_phase():
    code = ("import sys; import collector.collect; "
            "print(sorted(m for m in ('pyarrow', 'numpy', 'collector.local_tables') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[3])
    assert done.stdout.strip() == "[]"


def test_a_table_phase_that_cannot_be_imported_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "collector.local_tables", None)  # every import of it raises ImportError
    (tmp_path / "a.log").write_text('{"message": "one event"}\n')
    with pytest.raises(ImportError, match="collector.local_tables"):
        collect_local([tmp_path / "a.log"], tmp_path / "out")
