"""The wheel in fresh virtualenvs: the base install, each extra, and [all] (see docs/install.md).

Every command either works (its --help, and a real run where cheap) or, when its extra is missing, prints one
line naming the extra, exit code 1, no traceback.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

# command path -> the extra it needs; the oracle is pyproject's extras, restated here by hand
COMMANDS: dict[tuple[str, ...], str] = {
    ("query",): "collector",
    ("collect", "local"): "collector",
    ("collect", "cloudwatch"): "collector",
    ("dashboard",): "dashboard",
    ("demo",): "demo",
    ("alarms", "list"): "alarms",
    ("alarms", "export"): "alarms",
    ("alarms", "validate"): "alarms",
    ("alarms", "deploy"): "alarms",
    ("alarms", "backtest"): "alarms",
    ("diagnose",): "collector",
    ("init",): "alarms",
}
# what each install provides (an extra includes others: dashboard = collector + alarms + its own)
PROVIDES: dict[str, set[str]] = {
    "": set(),
    "collector": {"collector"},
    "alarms": {"alarms"},
    "dashboard": {"collector", "alarms", "dashboard"},
    "agent": {"agent"},
    "all": {"collector", "alarms", "dashboard", "demo", "agent", "powertools"},
}


def _missing_line(path: tuple[str, ...], extra: str) -> re.Pattern[str]:
    return re.compile(rf"Error: 'idemwatch {path[0]}' needs the {extra} extra \(missing module: [a-z_]+\): "
                      rf"pip install 'idemwatch\[{extra}\]'\n")


def test_wheel_metadata_and_contents(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"idemwatch", "emitter", "collector", "dashboard", "alarms"}
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    for must in ("emitter/py.typed", "emitter/CONTRACT.md", "collector/queries/outcomes.insights",
                 "dashboard/app_pages/overview.py", "dashboard/assets/overview.png", "alarms/demo-stack.yaml"):
        assert must in names, must
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/")) or "__pycache__" in n]
    assert "License-Expression: Apache-2.0" in meta
    assert "Classifier: Typing :: Typed" in meta
    assert {m for m in re.findall(r"^Project-URL: (\w+),", meta, re.MULTILINE)} == {"Homepage", "Documentation", "Source",
                                                                          "Issues"}
    extras = set(re.findall(r"^Provides-Extra: (\S+)$", meta, re.MULTILINE))
    assert extras == {"collector", "alarms", "dashboard", "demo", "powertools", "agent", "cdk", "all", "dev"}
    # every package-data pattern in pyproject matched something (no entry names a missing folder)
    import tomllib

    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for pkg, patterns in data.items():
        for pat in patterns:
            assert list((REPO / pkg).glob(pat)), f"package-data {pkg}: {pat} matches nothing"


def test_the_wheel_ships_no_test_double(wheel):
    """Fake servers, fake engines, test helpers and reference oracles live under tests/support/; the wheel holds
    none of them, and no shipped module imports from tests/ (it would fail in every install)."""
    with zipfile.ZipFile(wheel) as zf:
        modules = {n: zf.read(n).decode("utf-8") for n in zf.namelist() if n.endswith(".py")}
    doubles = [n for n in modules
               if n.startswith(("tests/", "benchmarks/")) or re.search(r"(^|/|_)(fake|testing|conftest)[^/]*\.py$", n)]
    assert doubles == []
    importers = [n for n, text in modules.items() if re.search(r"^\s*(from|import) tests\b", text, re.MULTILINE)]
    assert importers == []


def _log(path: Path) -> Path:
    now_ms = int(time.time() * 1000)
    recs = [{"timestamp": now_ms - 1000 * i, "level": "INFO", "message": "m", "outcome": o}
            for i, o in enumerate(["received", "received", "succeeded", "payload_conflict"])]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("extras", list(PROVIDES))
def test_each_command_runs_or_names_its_extra(make_venv, extras, tmp_path):
    venv = make_venv(extras)
    have = PROVIDES[extras]
    for path, extra in COMMANDS.items():
        for args in ([*path, "--help"], [*path, "x"]):
            p = venv.run(*args, cwd=tmp_path)
            assert "Traceback" not in p.stderr, (args, p.stderr)
            if extra in have:
                if args[-1] == "--help":
                    assert p.returncode == 0 and p.stdout.startswith(f"Usage: idemwatch {' '.join(path)} "), \
                        (args, p.stdout, p.stderr)
                else:  # a real argument error: one line, exit 2
                    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, (args, p.stderr)
                    assert p.stderr.startswith("Error: ")
            else:
                assert p.returncode == 1, (args, p.stdout, p.stderr)
                assert _missing_line(path, extra).fullmatch(p.stderr), (args, p.stderr)
                assert p.stdout == ""
    # the bundle needs nothing but the base install
    p = venv.run("bundle", "--out", tmp_path / "layer.zip")
    assert p.returncode == 0 and p.stdout.startswith(f"wrote {tmp_path / 'layer.zip'} (zip, layer layout): ")
    # the emitter imports without any extra, and without click
    p = venv.run("python", "-c", "import sys, emitter; print(sorted(m for m in sys.modules if m.split('.')[0] in "
                                 "('click', 'collector', 'pandas', 'boto3')))")
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stderr
    p = venv.run("python", "-c", "import aws_embedded_metrics")
    assert (p.returncode == 0) == ("agent" in have), p.stderr
    # AgentSink without the agent extra: one line naming it when the sink is made, and the lost lines counted
    make = "from emitter import Emitter; from emitter.sinks import AgentSink; " \
           "em = Emitter(service='s', sink=AgentSink('g', endpoint='tcp://127.0.0.1:9'))"
    if "agent" in have:  # (no invocation: nothing listens on port 9)
        p = venv.run("python", "-c", make)
        assert p.returncode == 0 and "agent extra" not in p.stderr, p.stderr
    else:
        p = venv.run("python", "-c", make + "\nwith em.invocation(None, operation='X'): pass\nprint(em.warnings)")
        assert p.returncode == 0, p.stderr
        assert p.stderr.splitlines()[0] == ("idemwatch: AgentSink needs the agent extra (pip install "
                                            "'idemwatch[agent]'); lines sent to it are lost and counted as sink_error")
        assert "'sink_error': " in p.stdout
    if "collector" in have:
        p = venv.run("query", "--format", "json", "--start", "1h", "stats count(*) as n by outcome | sort outcome",
                     _log(tmp_path / "a.log"))
        assert p.returncode == 0, p.stderr
        assert [(r["outcome"], int(r["n"])) for r in json.loads(p.stdout)] == [
            ("payload_conflict", 1), ("received", 2), ("succeeded", 1)]
    if "alarms" in have:
        stack = venv.run("python", "-c", "import alarms, pathlib; print(pathlib.Path(alarms.__file__).parent)")
        p = venv.run("alarms", "list", "--config", Path(stack.stdout.strip()) / "demo-stack.yaml")
        assert p.returncode == 0, p.stderr
        # oracle: the committed export holds one request file per alarm, composite and rule of the same catalogue
        cli = REPO / "alarms/exported/cli"
        assert p.stdout.splitlines()[-1] == (
            f"{len(list(cli.glob('*.json')))} alarms, {len(list((cli / 'composite-alarms').glob('*.json')))} "
            f"composite alarms, {len(list((cli / 'insight-rules').glob('*.json')))} Contributor Insights rules")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_all_runs_every_help_the_demo_and_serves_the_dashboard(make_venv, tmp_path):
    venv = make_venv("all")
    root = venv.run("--help")
    assert root.returncode == 0
    top = re.findall(r"^  (\w+)  ", root.stdout.split("Commands:")[1], re.MULTILINE)
    assert set(top) >= {"alarms", "bundle", "collect", "dashboard", "demo", "query"}
    for name in top:  # every command and subcommand's --help
        p = venv.run(name, "--help")
        assert p.returncode == 0, (name, p.stderr)
        if "Commands:" in p.stdout:
            for sub in re.findall(r"^  ([\w-]+)  ", p.stdout.split("Commands:")[1], re.MULTILINE):
                q = venv.run(name, sub, "--help")
                assert q.returncode == 0 and q.stdout.startswith(f"Usage: idemwatch {name} {sub} "), (sub, q.stderr)
    data = tmp_path / "data"
    p = venv.run("demo", "--no-serve", "--out", data, "--events", "3000", "--duration", "3600",
                 "--start", "2026-01-05T08:00:00Z", timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "the outcomes table matches the ground truth for every function and outcome" in p.stdout
    truth = json.loads((data / "demo-truth.json").read_text())
    p = venv.run("query", "--format", "json", 'filter outcome = "received" | stats count(*) as n', data / "logs")
    assert p.returncode == 0, p.stderr
    want = sum(f["outcomes"].get("received", 0) for f in truth["functions"].values())
    assert int(json.loads(p.stdout)[0]["n"]) == want > 0
    # the dashboard of the installed wheel (app pages from package data) answers on 127.0.0.1
    port = _free_port()
    exe = venv.bin / "idemwatch"
    proc = subprocess.Popen([str(exe), "dashboard", "--data", str(data), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        seen = []
        for _ in range(50):  # streamlit's own log lines may come first
            seen.append(proc.stdout.readline())
            if seen[-1].startswith("idemwatch dashboard: ") or not seen[-1]:
                break
        assert seen[-1].startswith(f"idemwatch dashboard: http://127.0.0.1:{port}"), seen
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=30) as r:
            assert r.status == 200 and r.read() == b"ok"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
