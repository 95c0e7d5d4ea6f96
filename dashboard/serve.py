"""Run the dashboard: ``streamlit run dashboard/app.py`` on a loopback port.

:func:`serve` blocks (the CLI); :class:`DashboardServer` is the non-blocking form used by
the demo, the browser test and the benchmark (start, wait until healthy, stop).
"""

from __future__ import annotations

import os
import signal
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

__all__ = ["APP_PATH", "LOOPBACK", "DashboardServer", "free_port", "is_loopback", "serve"]

APP_PATH = Path(__file__).resolve().parent / "app.py"
HEALTH_PATH = "/_stcore/health"
"""Streamlit's health endpoint (200 "ok" once the server accepts sessions)."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


LOOPBACK = "127.0.0.1"
NO_AUTH_WARNING = ("warning: the dashboard has no authentication: anyone who can reach {url} sees the data "
                   "(put an authenticating reverse proxy in front; see docs/dashboard-pages.md)")
"""Printed once when ``--host`` is not a loopback address."""


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``: addresses only this machine reaches."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def streamlit_command(host: str, port: int, headless: bool = True) -> list[str]:
    """The ``streamlit run`` argv: the listen address, no usage stats, no file watcher, no dev mode. No theme is
    forced: the app follows the viewer's light/dark preference (Streamlit's default)."""
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
    ]


class DashboardServer:
    """``streamlit run`` in a child process for one data directory.

    ``with DashboardServer(data_dir) as srv: srv.url`` starts it, waits until the health
    endpoint answers (at most ``startup_timeout_s`` seconds) and stops it on exit.
    Raises :class:`DashboardStartError` if it exits or never becomes healthy.
    ``env``: extra environment variables for the app (e.g. the CloudWatch source).
    ``new_session``: start the child in its own session / process group, so a terminal's Ctrl-C reaches only
    the parent, which forwards it once (:func:`serve`).
    """

    def __init__(self, data_dir: Path | str, host: str = "127.0.0.1", port: int | None = None, *,
                 headless: bool = True, startup_timeout_s: float = 60.0, quiet: bool = True,
                 env: Mapping[str, str] | None = None, new_session: bool = False) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.host = host
        self.port = port or free_port(host)
        self.headless = headless
        self.startup_timeout_s = startup_timeout_s
        self.quiet = quiet
        self.env = dict(env or {})
        self.new_session = new_session
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """The URL to open: the listen address, or this machine's loopback when listening on every address."""
        host = LOOPBACK if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def start(self) -> Self:
        env = dict(os.environ)
        env.update(self.env)
        env[ENV_DATA_DIR] = str(self.data_dir)
        out = subprocess.DEVNULL if self.quiet else None
        self.proc = subprocess.Popen(streamlit_command(self.host, self.port, self.headless), env=env,
                                     stdout=out, stderr=subprocess.PIPE if self.quiet else None,
                                     cwd=str(APP_PATH.parent), start_new_session=self.new_session)
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


FORWARDED_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
"""Signals :func:`serve` passes on to the ``streamlit run`` child (then waits for it)."""
STOP_GRACE_S = 10.0
"""Seconds the child gets to exit after a forwarded signal before it is killed (SIGKILL)."""


def serve(data_dir: Path | str, host: str = "127.0.0.1", port: int | None = None, headless: bool = True,
          env: Mapping[str, str] | None = None) -> int:
    """Serve the dashboard over ``data_dir`` until interrupted; prints the URL once it is up.

    ``port`` None picks a free one; ``env`` adds environment variables for the app.
    The child runs in its own process group; SIGTERM, SIGINT (Ctrl-C) and SIGHUP sent to this process are
    forwarded to it and this process waits for it to exit (killing it after :data:`STOP_GRACE_S` s), so
    stopping ``idemwatch dashboard`` never leaves an orphaned ``streamlit run`` serving the port.
    Must be called from the main thread (it installs signal handlers; the previous ones are restored).
    Returns streamlit's exit code, 0 when stopped by one of those signals.
    Raises :class:`DashboardStartError` when streamlit cannot start.
    """
    srv = DashboardServer(data_dir, host, port, headless=headless, quiet=False, env=env, new_session=True)
    stop_at: list[float] = []  # monotonic time of the first forwarded signal

    def forward(signum: int, _frame: object) -> None:
        if not stop_at:
            stop_at.append(time.monotonic())
        if srv.proc is not None and srv.proc.poll() is None:
            srv.proc.send_signal(signum)

    previous = {s: signal.signal(s, forward) for s in FORWARDED_SIGNALS}
    try:
        try:
            srv.start()
        except DashboardStartError:
            if stop_at:  # stopped while starting: not an error
                return 0
            raise
        if stop_at:  # the signal came before the child existed
            srv.stop()
            return 0
        print(f"idemwatch dashboard: {srv.url}  (data: {srv.data_dir}; Ctrl-C to stop)", flush=True)
        if not is_loopback(host):
            print(NO_AUTH_WARNING.format(url=f"{host}:{srv.port}"), file=sys.stderr, flush=True)
        assert srv.proc is not None
        while True:
            try:
                rc = srv.proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                if stop_at and time.monotonic() - stop_at[0] > STOP_GRACE_S:
                    srv.proc.kill()
        return 0 if stop_at else rc
    finally:
        srv.stop()
        for s, h in previous.items():
            signal.signal(s, h)
