"""Browser-test fixtures: Debian's chromium driven by Playwright, data directories, screenshots dir."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
ARTIFACTS = ROOT / "test-artifacts" / "dashboard"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]


def _load(name: str):
    path = ROOT / "tests" / "unit" / "dashboard" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"dashboard_functional_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


sample = _load("sample_tables")
oracle = _load("oracle")


@pytest.fixture(scope="session")
def oracle_cls():
    return oracle.Oracle


def chromium_path() -> str | None:
    """Debian's chromium on PATH (installed by .ci/run), else None."""
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


@pytest.fixture(scope="module")
def browser():
    # Module scope: Playwright's sync API keeps an asyncio loop running in the main thread while it is open,
    # which would break every later test that calls asyncio.run() (e.g. the emitter's async-handler tests).
    exe = chromium_path()
    if exe is None:
        msg = "chromium not found on PATH (apt-get install chromium; .ci/run does it)"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"playwright not installed: {exc}")
        pytest.skip(f"playwright not installed: {exc}")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def sample_mod():
    return sample


@pytest.fixture(scope="session")
def sample_data(tmp_path_factory) -> Path:
    return sample.write_data_dir(tmp_path_factory.mktemp("browser-sample"))


@pytest.fixture(scope="session")
def demo_data(tmp_path_factory) -> Path:
    """A seeded demo run with every anti-pattern built in, collected into tables, audited and diagnosed (what
    ``idemwatch demo --inject all`` writes: tables, audit.json, diagnose.json), built once per session."""
    from alarms.audit.demo import run_demo_audit
    from collector.collect import collect_local
    from dashboard.demo import run_demo
    from dashboard.demo.compare import diagnosis_vs_truth
    from dashboard.demo.faults import AntiPattern

    out = tmp_path_factory.mktemp("browser-demo")
    truth = run_demo(out, seed=7, events=3000, duration_s=3600, start_ms=1_767_607_200_000,  # 2026-01-05T10:00Z
                     anti_patterns=list(AntiPattern))
    collect_local([out / "logs"], out)
    run_demo_audit(out)
    assert all(r.match for r in diagnosis_vs_truth(truth, out))
    return out
