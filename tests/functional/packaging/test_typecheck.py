"""mypy over every shipped package, at the strictness pyproject.toml's ``[tool.mypy]`` documents: the package ships
``py.typed``, so its users type-check against it, and CI fails on any error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_mypy_reports_no_error(tmp_path):
    res = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")], cwd=ROOT,
                         capture_output=True, text=True, timeout=900, check=False)
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    assert res.stdout.startswith("Success: no issues found"), res.stdout
