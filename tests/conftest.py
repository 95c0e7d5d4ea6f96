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


# ---- AWS over loopback (used by the cloudwatch tests; any part may use them) ----
@pytest.fixture
def fake_aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Fake credentials and no profile/config files: no real account is reachable from a test."""
    empty = tmp_path_factory.mktemp("aws") / "none"
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
                 "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
                 "AWS_CONFIG_FILE": str(empty), "AWS_SHARED_CREDENTIALS_FILE": str(empty)}.items():
        monkeypatch.setenv(k, v)
    for k in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(k, raising=False)


@pytest.fixture
def logs_client():
    """Factory: a boto3 logs client for a 127.0.0.1 endpoint, botocore retries off (the runner owns retries)."""
    import boto3
    from botocore.config import Config

    def make(url: str):
        assert url.startswith("http://127.0.0.1:"), url  # traffic never leaves loopback
        return boto3.client("logs", endpoint_url=url, region_name="us-east-1",
                            config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, max_pool_connections=32))

    return make


@pytest.fixture
def fast_config():
    """Runner config scaled for tests: polls every 10-50 ms, throttling backoff of a few ms."""
    from collector.cloudwatch import Backoff, PollSchedule, RunnerConfig

    def make(**kw):
        base = {"poll": PollSchedule(0.01, 1.5, 0.05), "backoff": Backoff(0.005, 0.02, 6), "max_polls_per_s": 0,
                "max_starts_per_s": 0}
        base.update(kw)
        return RunnerConfig(**base)

    return make


@pytest.fixture(scope="module")
def moto_url():
    """moto's ThreadedMotoServer on 127.0.0.1 (free port); reset between modules."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def aws(moto_url, fake_aws_env):
    """Factory: boto3 client for a service on the moto server (loopback only)."""
    import boto3

    def make(service: str):
        return boto3.client(service, endpoint_url=moto_url, region_name="us-east-1")

    return make
