"""The root CLI's shared behaviour: one error line and exit code, logging, env defaults, the time options."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import collector.bundle
from idemwatch.cli import main, shadowed_parts

REPO = Path(__file__).resolve().parents[3]


def _log(path: Path, *ages_s: float) -> Path:
    """A JSON-lines log with one outcome record per age (seconds before now)."""
    now_ms = int(time.time() * 1000)
    path.write_text("".join(json.dumps({"timestamp": now_ms - int(a * 1000), "level": "INFO", "message": "m",
                                        "outcome": "received"}) + "\n" for a in ages_s))
    return path


def _run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, list(args), env=env)


def _help(*args: str) -> str:
    res = _run(*args, "--help")
    assert res.exit_code == 0, res.output
    return " ".join(res.stdout.split())  # click wraps "[env var: ...]" across lines


def _count(res) -> int:
    return int(json.loads(res.stdout)[0]["count(*)"])


def test_relative_start_counts_only_recent_events(tmp_path):
    log = _log(tmp_path / "a.log", 30 * 60, 2 * 3600, 3 * 86400)
    assert _count(_run("query", "--format", "json", "--start", "1h", "stats count(*)", str(log))) == 1
    assert _count(_run("query", "--format", "json", "--start", "1d", "stats count(*)", str(log))) == 2
    assert _count(_run("query", "--format", "json", "--start", "7d", "--end", "1h", "stats count(*)", str(log))) == 2


@pytest.mark.parametrize(("args", "flags"), [
    (["query", "--start", "2026-01-02T00:00:00Z", "--end", "2026-01-01T00:00:00Z", "stats count(*)"], "--start/--end"),
    (["query", "--start", "1767607200", "--end", "1767607200", "stats count(*)"], "--start/--end"),
    (["query", "--start", "1h", "--end", "2h", "stats count(*)"], "--start/--end"),
])
def test_reversed_or_empty_range_is_a_usage_error(tmp_path, args, flags):
    log = _log(tmp_path / "a.log", 10)
    res = _run(*args, str(log))
    assert res.exit_code == 2
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {flags}: the time range is "), lines


def test_reversed_collect_local_window(tmp_path):
    log = _log(tmp_path / "a.log", 10)
    res = _run("collect", "local", str(log), "--out", str(tmp_path / "o"), "--since", "1h", "--until", "2h")
    assert res.exit_code == 2 and res.stderr.startswith("Error: --since/--until: the time range is reversed")
    assert not (tmp_path / "o").exists()


def test_naive_time_is_read_as_utc_and_said_so(tmp_path):
    log = _log(tmp_path / "a.log", 10)
    res = _run("query", "--format", "json", "--start", "2026-01-05 10:00", "stats count(*)", str(log))
    assert res.exit_code == 0
    assert "note: --start '2026-01-05 10:00' has no timezone: read as UTC (2026-01-05T10:00:00Z)" in res.stderr
    quiet = _run("-q", "query", "--format", "json", "--start", "2026-01-05 10:00", "stats count(*)", str(log))
    assert quiet.exit_code == 0 and "note:" not in quiet.stderr and _count(quiet) == 1


@pytest.mark.parametrize(("args", "start"), [
    (["query", "--nope"], "Error: No such option '--nope'. (see 'idemwatch query --help')"),
    (["nosuch"], "Error: No such command 'nosuch'. (see 'idemwatch --help')"),
    (["query", "--start", "yesterday", "q", "README.md"], "Error: Invalid value for --start: 'yesterday': expected"),
    (["collect", "cloudwatch", "--log-group", "g", "--out", "x", "--window", "soon"],
     "Error: Invalid value for --window: 'soon' is not a dur"),
    (["-v", "-q", "bundle"], "Error: --verbose and --quiet exclude each other"),
    (["collect", "cloudwatch", "--log-group", "g", "--out", "x", "--since", "1h", "--until", "2h"],
     "Error: --since/--until: the time range is reversed"),  # refused before any AWS call
    (["collect", "cloudwatch", "--log-group", "g", "--out", "x", "--since", "2099-01-01T00:00:00Z"],
     "Error: --since/--until: the time range is reversed"),  # a start in the future: until defaults to now
])
def test_usage_errors_are_one_line_exit_2(args, start):
    res = _run(*args)
    assert res.exit_code == 2, res.output
    assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith(start), res.stderr
    assert "Traceback" not in res.output


@pytest.mark.parametrize("args", [[], ["alarms"], ["collect"]])
def test_a_bare_group_shows_its_help(args):
    res = _run(*args)
    assert res.exit_code == 2
    assert res.stderr.startswith(f"Usage: {' '.join(['idemwatch', *args])} [OPTIONS] COMMAND [ARGS]...")
    assert "Commands:" in res.stderr and "Error" not in res.stderr


def test_missing_dependency_names_the_extra(tmp_path, monkeypatch):
    log = _log(tmp_path / "a.log", 10)
    for name in [m for m in sys.modules if m == "rich" or m.startswith("rich.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "rich", None)
    res = _run("query", "stats count(*)", str(log))  # table output needs rich
    assert res.exit_code == 1
    assert res.stderr.strip() == ("Error: 'idemwatch query' needs the collector extra (missing module: rich): "
                                  "pip install 'idemwatch[collector]'")


def _raising(exc: BaseException):
    def build_bundle(out, layout="layer", *, force=False):
        raise exc
    return build_bundle


def test_unexpected_error_is_one_line_and_vv_shows_the_traceback(monkeypatch, tmp_path):
    monkeypatch.setattr(collector.bundle, "build_bundle", _raising(RuntimeError("boom\nsecond line")))
    res = _run("bundle", "--out", str(tmp_path / "b.zip"))
    assert res.exit_code == 1
    assert res.stderr == "Error: internal error: RuntimeError: boom second line (run with -vv for the traceback)\n"
    res = _run("-vv", "bundle", "--out", str(tmp_path / "b.zip"))
    assert res.exit_code == 1 and "Traceback (most recent call last)" in res.stderr
    assert res.stderr.splitlines()[-1] == "Error: internal error: RuntimeError: boom second line"


def test_botocore_and_os_errors_are_failures_exit_1(monkeypatch, tmp_path):
    from botocore.exceptions import ProfileNotFound

    monkeypatch.setattr(collector.bundle, "build_bundle", _raising(ProfileNotFound(profile="readonly")))
    res = _run("bundle")
    assert (res.exit_code, res.stderr) == (1, "Error: AWS: The config profile (readonly) could not be found\n")
    monkeypatch.setattr(collector.bundle, "build_bundle",
                        _raising(PermissionError(13, "Permission denied", "/opt/x.zip")))
    res = _run("bundle")
    assert (res.exit_code, res.stderr) == (1, "Error: Permission denied: /opt/x.zip\n")


def test_click_exception_keeps_its_exit_code(tmp_path):
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "f.txt").write_text("x")
    res = _run("bundle", "--out", str(tmp_path / "junk"))  # not an earlier bundle
    assert res.exit_code == 2 and res.stderr.startswith("Error: Invalid value for --out: ")
    assert len(res.stderr.splitlines()) == 1


def test_audit_ends_like_every_command(tmp_path):
    """audit's errors are the one error line (they used to start 'idemwatch audit:'), exit 2 when it cannot run;
    failed checks end with one Error line too, exit 1, after the table."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"Resources": ')
    res = _run("audit", "static", str(bad))
    assert (res.exit_code, res.stdout) == (2, "")
    assert res.stderr == f"Error: {bad}: not valid JSON: Expecting value at line 1, column 15\n"
    tpl = tmp_path / "template.json"
    tpl.write_text(json.dumps({"Resources": {
        "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "orders"}},
        "F": {"Type": "AWS::Lambda::Function", "Properties": {"FunctionName": "consumer", "Timeout": 30}},
        "M": {"Type": "AWS::Lambda::EventSourceMapping",
              "Properties": {"FunctionName": {"Ref": "F"}, "EventSourceArn": {"Fn::GetAtt": ["Q", "Arn"]}}}}}))
    res = _run("audit", "static", str(tpl))
    assert res.exit_code == 1 and "IW001" in res.stdout  # visibility timeout 30 s < 6 x the function's 30 s
    assert res.stderr.splitlines()[-1].startswith("Error: ") and res.stderr.endswith(
        " failed check(s) at or above high\n")


def test_env_defaults_show_in_help_and_are_used(tmp_path):
    h = _help("dashboard")
    assert "[env var: IDEMWATCH_DATA; default: idemwatch-data]" in h and "env var: IDEMWATCH_REGION" in h
    h = _help("collect", "cloudwatch")
    for var in ("IDEMWATCH_DATA", "IDEMWATCH_REGION", "IDEMWATCH_PROFILE"):
        assert f"env var: {var}" in h
    h = _help("alarms", "backtest")
    assert "env var: IDEMWATCH_CONFIG" in h and "env var: IDEMWATCH_DATA" in h
    assert "IDEMWATCH" not in _help("alarms", "export").replace("IDEMWATCH_CONFIG", "")  # --out: files, not data
    assert "IDEMWATCH" not in _help("alarms", "validate")  # an optional --config would change what runs
    # collect local's --out is the data directory: IDEMWATCH_DATA fills it
    log = _log(tmp_path / "a.log", 10, 20)
    out = tmp_path / "data"
    res = _run("collect", "local", str(log), env={"IDEMWATCH_DATA": str(out)})
    assert res.exit_code == 0, res.output
    assert json.loads((out / "manifest.json").read_text())["ingest"]["events"] == 2


def test_verbose_shows_info_logs(tmp_path):
    import logging

    res = CliRunner().invoke(main, ["-v", "bundle", "--out", str(tmp_path / "b.zip")])
    assert res.exit_code == 0
    assert logging.getLogger("collector").getEffectiveLevel() == logging.INFO
    CliRunner().invoke(main, ["-q", "bundle", "--out", str(tmp_path / "b.zip")])
    assert logging.getLogger("collector").getEffectiveLevel() == logging.ERROR


@pytest.mark.parametrize("args", [["--help"], ["query", "--help"], ["alarms", "--help"], ["audit", "--help"],
                                  ["bundle", "--help"]])
def test_help_imports_no_heavy_dependency(args):
    """The root only knows where commands live: listing them, or one command's options, imports none of the
    extras' heavy modules (a fresh interpreter, so nothing is imported already)."""
    code = ("import sys\nfrom idemwatch.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pandas', 'duckdb', 'pyarrow', 'streamlit', 'boto3', 'botocore', 'plotly') "
            "if m in sys.modules), file=sys.stderr)")
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, check=False)
    assert p.stdout.startswith("Usage: idemwatch"), p.stderr
    assert p.stderr.splitlines()[-1] == "[]"


def test_install_is_not_shadowed():
    assert shadowed_parts() == []


def test_a_shadowing_package_is_refused_before_import(tmp_path):
    fake = tmp_path / "dashboard"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise SystemExit('the fake dashboard was imported')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    p = subprocess.run([sys.executable, "-m", "idemwatch.cli", "dashboard", "--help"], capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=60, check=False)
    assert p.returncode == 1
    assert p.stderr.startswith(f"Error: idemwatch's top-level packages are shadowed: 'dashboard' from {fake} ")
    assert "fake dashboard was imported" not in p.stderr


def _extras_from_pyproject() -> dict[str, set[str]]:
    """pyproject's extras -> top-level import names, self-references (idemwatch[x]) expanded."""
    import re
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    import_name = {"pyyaml": "yaml", "ruamel.yaml": "ruamel", "aws-cdk-lib": "aws_cdk"}

    def modules(extra: str) -> set[str]:
        out: set[str] = set()
        for req in extras[extra]:
            m = re.match(r"^([A-Za-z0-9_.-]+)(\[([^\]]+)\])?", req)
            name, sub = m.group(1).lower(), m.group(3)
            if name == "idemwatch":
                for s in sub.split(","):
                    out |= modules(s.strip())
            else:
                out.add(import_name.get(name, name.replace("-", "_")))
        return out

    return {e: modules(e) for e in extras if e not in ("dev", "all")}


def test_extra_modules_mirror_pyproject():
    from idemwatch.cli import COMMANDS
    from idemwatch.extras import EXTRA_MODULES

    assert {e: set(m) for e, m in EXTRA_MODULES.items()} == _extras_from_pyproject()
    assert {c.extra for c in COMMANDS} - {None} <= set(EXTRA_MODULES)


def test_all_extra_covers_every_other_extra():
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (all_req,) = extras["all"]
    # cdk is a construct library for CDK apps (no command), left out of all on purpose (pyproject's comment)
    assert set(all_req.removeprefix("idemwatch[").removesuffix("]").split(",")) == set(extras) - {"dev", "all", "cdk"}


def test_a_missing_extra_is_named_before_import_even_for_help(monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml", None)  # find_spec() answers None for it, as when not installed
    for args in (["alarms", "list", "--config", "x.yaml"], ["alarms", "--help"], ["dashboard", "--help"]):
        res = _run(*args)
        extra = args[0]
        assert res.exit_code == 1, res.output
        assert res.stderr == (f"Error: 'idemwatch {extra}' needs the {extra} extra (missing module: yaml): "
                              f"pip install 'idemwatch[{extra}]'\n")
    assert _run("query", "--help").exit_code == 0  # the collector extra does not need yaml


def test_module_not_found_messages(capsys):
    from idemwatch.errors import run
    from idemwatch.extras import missing_extra_message

    def invoke(args):
        raise ModuleNotFoundError("No module named 'pyarrow.parquet'", name="pyarrow.parquet")

    def broken(args):
        raise ModuleNotFoundError("No module named 'collector.nope'", name="collector.nope")

    def collect_extra(module):
        return missing_extra_message("collect", "collector", module)

    run(invoke, [], missing_extra=collect_extra)
    run(broken, [], missing_extra=collect_extra)
    err = capsys.readouterr().err.splitlines()
    assert err == [
        ("Error: 'idemwatch collect' needs the collector extra (missing module: pyarrow): "
        "pip install 'idemwatch[collector]'"),
        "Error: internal error: ModuleNotFoundError: No module named 'collector.nope' (run with -vv for the traceback)",
    ]
