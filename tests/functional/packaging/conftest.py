"""Build idemwatch's wheel from a clean copy of the repository and install it into fresh virtualenvs.

uv (when on PATH) creates the virtualenvs and installs from its local cache; otherwise venv + pip. Nothing is
installed into the test runner's own environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
UV = shutil.which("uv")


def _sh(*cmd: str | Path, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    assert p.returncode == 0, f"{cmd} failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def source_files() -> list[str]:
    """The repository's files as a clean clone has them (tracked, plus new files not ignored)."""
    p = _sh("git", "-C", REPO, "ls-files", "-co", "--exclude-standard")
    return [f for f in p.stdout.splitlines() if (REPO / f).is_file()]


def copy_sources(dest: Path) -> Path:
    """Copy :func:`source_files` into ``dest`` (a fresh clone's tree, without .git): returns ``dest``."""
    for f in source_files():
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, dest / f)
    return dest


@pytest.fixture(scope="session")
def source_copy(tmp_path_factory):
    """A factory: a fresh copy of the repository's files in a new temporary folder."""
    return lambda name="src": copy_sources(tmp_path_factory.mktemp(name))


@pytest.fixture(scope="session")
def wheel(tmp_path_factory, source_copy) -> Path:
    """idemwatch's wheel, built from a copy of the tracked files (no build/, egg-info or .venv leaking in)."""
    src = source_copy()
    dist = tmp_path_factory.mktemp("dist")
    if UV:
        _sh(UV, "build", "-q", "--wheel", "--no-build-isolation", "--python", sys.executable, "-o", dist, src)
    else:
        _sh(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", dist, src)
    (whl,) = dist.glob("idemwatch-*.whl")
    return whl


class Venv:
    """A fresh virtualenv with the wheel installed (``extras`` e.g. ``"collector"``, ``""`` for the base)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"

    def run(self, *args: str | Path, cwd: Path | None = None, timeout: float = 300,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """Run ``idemwatch ARGS`` (or ``python ...`` when args[0] == "python") in this venv."""
        exe = self.bin / ("python" if args and args[0] == "python" else "idemwatch")
        rest = args[1:] if args and args[0] == "python" else args
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("IDEMWATCH_", "PYTHON", "VIRTUAL_ENV"))}
        clean["PATH"] = f"{self.bin}{os.pathsep}{clean.get('PATH', '')}"
        return subprocess.run([str(exe), *map(str, rest)], cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, env={**clean, **(env or {})}, check=False)


@pytest.fixture(scope="session")
def make_venv(wheel, tmp_path_factory):
    made: dict[str, Venv] = {}

    def make(extras: str) -> Venv:
        if extras not in made:
            root = tmp_path_factory.mktemp(f"venv-{extras or 'base'}")
            spec = f"{wheel}[{extras}]" if extras else str(wheel)
            if UV:
                _sh(UV, "venv", "-q", "-p", sys.executable, root)
                _sh(UV, "pip", "install", "-q", "-p", root / "bin" / "python", spec)
            else:
                _sh(sys.executable, "-m", "venv", root)
                _sh(root / "bin" / "python", "-m", "pip", "install", "-q", spec)
            made[extras] = Venv(root)
        return made[extras]

    return make
