"""`idemwatch dashboard` serves on 127.0.0.1 and prints the URL; DashboardServer picks a free port."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from dashboard.serve import DashboardServer, free_port, streamlit_command

pytestmark = pytest.mark.timeout(180)
IDEMWATCH = Path(sys.executable).parent / "idemwatch"


def test_streamlit_command_is_loopback_and_quiet():
    argv = streamlit_command("127.0.0.1", 8765)
    opts = dict(zip(argv[5::2], argv[6::2]))
    assert argv[1:4] == ["-m", "streamlit", "run"] and argv[4].endswith("dashboard/app.py")
    assert opts["--server.address"] == "127.0.0.1" and opts["--server.port"] == "8765"
    assert opts["--browser.gatherUsageStats"] == "false" and opts["--server.headless"] == "true"
    assert "--runner.postScriptGC" not in opts  # Streamlit's own garbage collection after a rerun stays on


def test_server_health_and_page(sample_data):
    with DashboardServer(sample_data) as srv:
        assert srv.host == "127.0.0.1"
        with urllib.request.urlopen(srv.url + "/_stcore/health", timeout=10) as r:
            assert r.status == 200 and r.read() == b"ok"
        with urllib.request.urlopen(srv.url + "/", timeout=10) as r:
            assert r.status == 200 and b"<div id=\"root\">" in r.read()
    assert srv.proc is not None and srv.proc.poll() is not None  # stopped on exit


def test_cli_prints_url_and_serves(sample_data):
    assert IDEMWATCH.exists(), "idemwatch console script not installed in this venv"
    port = free_port()
    proc = subprocess.Popen([str(IDEMWATCH), "dashboard", "--data", str(sample_data), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ))
    try:
        deadline = time.monotonic() + 90
        url = None
        while time.monotonic() < deadline and url is None:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line and proc.poll() is not None:
                break
            m = re.search(r"idemwatch dashboard: (http://127\.0\.0\.1:\d+)", line)
            url = m.group(1) if m else None
        assert url == f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(url + "/_stcore/health", timeout=10) as r:
            assert r.status == 200
    finally:
        _interrupt(proc)


def _interrupt(proc: subprocess.Popen) -> None:
    """Ctrl-C the CLI and wait for it (killed after 20 s)."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux /proc: field 4 of /proc/<p>/stat is the parent pid)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_cli_signal_stops_streamlit_child(sample_data, sig):
    """A signal sent to the `idemwatch dashboard` process only (not its group) also stops `streamlit run`."""
    port = free_port()
    proc = subprocess.Popen([str(IDEMWATCH), "dashboard", "--data", str(sample_data), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=dict(os.environ))
    children: list[int] = []
    try:
        line = ""
        while "idemwatch dashboard: http" not in line:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            assert line or proc.poll() is None, "idemwatch dashboard exited before serving"
        url = f"http://127.0.0.1:{port}"
        assert _answers(url)
        children = _children(proc.pid)
        assert len(children) == 1  # the streamlit run child
        proc.send_signal(sig)  # to the parent only: os.kill(pid), not killpg
        assert proc.wait(timeout=30) == 0
        deadline = time.monotonic() + 15
        while _alive(children[0]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(children[0]), "streamlit child survived its parent"
        assert not _answers(url)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for c in children:  # never leave an orphan behind, even when the assertion failed
            if _alive(c):
                os.kill(c, signal.SIGKILL)


def test_cli_help():
    assert IDEMWATCH.exists(), "idemwatch console script not installed in this venv"
    out = subprocess.run([str(IDEMWATCH), "dashboard", "--help"], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0 and "--data" in out.stdout and "--port" in out.stdout


def test_no_forced_theme_and_loopback_rule():
    from dashboard.serve import is_loopback

    argv = streamlit_command("127.0.0.1", 8765)
    assert not any(a.startswith("--theme") for a in argv)  # the viewer's light/dark preference applies
    assert [is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "localhost", "0.0.0.0", "10.0.0.5", "::")] == [
        True, True, True, True, False, False, False]


def test_cli_host_beyond_loopback_warns_once(sample_data):
    port = free_port("0.0.0.0")
    proc = subprocess.Popen([str(IDEMWATCH), "dashboard", "--data", str(sample_data), "--host", "0.0.0.0",
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ))
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not any("no authentication" in x for x in lines):
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line and proc.poll() is not None:
                break
            lines.append(line)
        assert sum("no authentication" in x for x in lines) == 1, lines
        assert any(f"idemwatch dashboard: http://127.0.0.1:{port}" in x for x in lines), lines
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10) as r:
            assert r.status == 200
    finally:
        _interrupt(proc)
