"""Fixtures: moto's CloudWatch/STS server on 127.0.0.1 over real HTTP, started empty for each test."""

from __future__ import annotations

import urllib.request

import pytest
from moto.server import ThreadedMotoServer

from tests.support.moto_composites import install

install()  # moto 5.2 has no PutCompositeAlarm; the deploy tests put composite alarms


@pytest.fixture()
def endpoint(monkeypatch):
    """URL of a fresh ``ThreadedMotoServer`` on 127.0.0.1 (test credentials in the environment, no profile)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    assert host == "127.0.0.1"
    url = f"http://127.0.0.1:{port}"
    # moto keeps its backends per process: start every test from an empty account
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=10).read()
    yield url
    server.stop()
