"""Every cloudwatch test runs with fake AWS credentials (fixtures in tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fake_aws_env(fake_aws_env: None) -> None:
    """No real account is ever reachable from these tests."""
