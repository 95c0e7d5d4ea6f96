"""Shared test fixtures: where ../shared/ is, and a loopback-only guard."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared/`` beside the project root (read-only material; never copied into the repo)."""
    if not SHARED.is_dir():
        pytest.fail(f"shared material not found at {SHARED}")
    return SHARED
