"""Fixtures: a hand-made data directory (sample_tables.py) and an AppTest factory."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
APP = HERE.parents[2] / "dashboard" / "app.py"


def _load_sample():
    spec = importlib.util.spec_from_file_location("dashboard_sample_tables", HERE / "sample_tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


sample = _load_sample()


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"dashboard_test_{name}", HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


oracle = _load("oracle")
app_read = _load("app_read")


@pytest.fixture(scope="session")
def read():
    """tests/unit/dashboard/app_read.py: figures and grids read back from an AppTest run."""
    return app_read


@pytest.fixture(scope="session")
def oracle_cls():
    return oracle.Oracle


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory) -> Path:
    """A small seeded demo run (run_demo + collect_local), built once per session."""
    from collector.collect import collect_local
    from dashboard.demo import run_demo

    out = tmp_path_factory.mktemp("demo-small")
    run_demo(out, seed=7, events=1200, duration_s=1800, start_ms=1_767_607_200_000)  # 2026-01-05T10:00Z
    collect_local([out / "logs"], out)
    return out


@pytest.fixture(scope="session")
def sample_mod():
    return sample


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory) -> Path:
    return sample.write_data_dir(tmp_path_factory.mktemp("dash-data"))


@pytest.fixture()
def app(monkeypatch, data_dir):
    """AppTest over the sample data dir, already run once (Overview)."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("IDEMWATCH_DATA", str(data_dir))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    return at


@pytest.fixture()
def app_factory(monkeypatch):
    from streamlit.testing.v1 import AppTest

    def make(path: Path):
        monkeypatch.setenv("IDEMWATCH_DATA", str(path))
        at = AppTest.from_file(str(APP), default_timeout=60)
        return at.run()

    return make
