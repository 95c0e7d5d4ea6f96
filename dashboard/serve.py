"""Run the dashboard: ``streamlit run dashboard/app.py`` on a loopback port.

:func:`serve` blocks (the CLI); :class:`DashboardServer` is the non-blocking form used by
the demo, the browser test and the benchmark (start, wait until healthy, stop).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Self

from dashboard.constants import ENV_DATA_DIR
from dashboard.exceptions import DashboardStartError

__all__ = ["APP_PATH", "DashboardServer", "free_port", "serve"]

APP_PATH = Path(__file__).resolve().parent / "app.py"
HEALTH_PATH = "/_stcore/health"
"""Streamlit's health endpoint (200 "ok" once the server accepts sessions)."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def streamlit_command(host: str, port: int, headless: bool = True) -> list[str]:
    """The ``streamlit run`` argv: loopback address, no usage stats, no file watcher, no dev mode."""
    return [
        sys.executable, "-m", "streamlit", "run", str(APP_PATH),
        "--server.address", host,
        "--server.port", str(port),
        "--server.headless", "true" if headless else "false",
        "--server.fileWatcherType", "none",
        "--server.runOnSave", "false",
        "--browser.gatherUsageStats", "false",
        "--browser.serverAddress", host,
        "--global.developmentMode", "false",
        "--client.toolbarMode", "viewer",
        "--theme.base", "light",
    ]


class DashboardServer:
    """``streamlit run`` in a child process for one data directory.

    ``with DashboardServer(data_dir) as srv: srv.url`` starts it, waits until the health
    endpoint answers (at most ``startup_timeout_s`` seconds) and stops it on exit.
    Raises :class:`DashboardStartError` if it exits or never becomes healthy.
    ``env``: extra environment variables for the app (e.g. the CloudWatch source).
    """

    def __init__(self, data_dir: Path | str, host: str = "127.0.0.1", port: int | None = None, *,
                 headless: bool = True, startup_timeout_s: float = 60.0, quiet: bool = True,
                 env: Mapping[str, str] | None = None) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.host = host
        self.port = port or free_port(host)
        self.headless = headless
        self.startup_timeout_s = startup_timeout_s
        self.quiet = quiet
        self.env = dict(env or {})
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> Self:
        env = dict(os.environ)
        env.update(self.env)
        env[ENV_DATA_DIR] = str(self.data_dir)
        out = subprocess.DEVNULL if self.quiet else None
        self.proc = subprocess.Popen(streamlit_command(self.host, self.port, self.headless), env=env,
                                     stdout=out, stderr=subprocess.PIPE if self.quiet else None,
                                     cwd=str(APP_PATH.parent))
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise DashboardStartError(f"streamlit exited with code {self.proc.returncode}: {err[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + HEALTH_PATH, timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        self.stop()
        raise DashboardStartError(f"dashboard not healthy at {self.url} after {self.startup_timeout_s:.0f} s")

    def wait(self) -> int:
        assert self.proc is not None
        try:
            return self.proc.wait()
        except KeyboardInterrupt:
            self.stop()
            return 0

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def serve(data_dir: Path | str, host: str = "127.0.0.1", port: int | None = None, headless: bool = True,
          env: Mapping[str, str] | None = None) -> int:
    """Serve the dashboard over ``data_dir`` until interrupted; prints the URL once it is up.

    ``port`` None picks a free one; ``env`` adds environment variables for the app.
    Returns streamlit's exit code (0 after Ctrl-C).
    Raises :class:`DashboardStartError` when streamlit cannot start.
    """
    srv = DashboardServer(data_dir, host, port, headless=headless, quiet=False, env=env)
    srv.start()
    print(f"idemwatch dashboard: {srv.url}  (data: {srv.data_dir}; Ctrl-C to stop)", flush=True)
    return srv.wait()
