"""Terminal injection: names from templates, stack configs and logs never reach the terminal as control sequences.

The hostile names are issue 36's (OSC 52 writes the clipboard, OSC 8 plants a link, OSC 0 retitles the window, CSI
clears the screen), plus an 8-bit CSI, a bidi override and a carriage return. Every command that prints such a name
must show it escaped: no control character but a line feed on stdout or stderr, and the name still visible."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from idemwatch.cli import main
from idemwatch.terminal import CONTROL_CODE_POINTS, safe

ROOT = Path(__file__).resolve().parents[3]

HOSTILE = {
    "osc52": "orders\x1b]52;c;ZWNobyBwd25lZA==\x07",
    "osc8": "pay\x1b]8;;https://evil.example/\x1b\\click here\x1b]8;;\x1b\\",
    "osc0": "ledger\x1b]0;owned\x07",
    "csi": "api\x1b[2J\x1b[H\x9b2J\u202eevil\r",
}
"""name -> a resource name carrying that escape sequence."""

SHOWN = {
    "osc52": "orders\\x1b]52;c;ZWNobyBwd25lZA==\\x07",
    "osc8": "pay\\x1b]8;;https://evil.example/\\x1b\\click here\\x1b]8;;\\x1b\\",
    "osc0": "ledger\\x1b]0;owned\\x07",
    "csi": "api\\x1b[2J\\x1b[H\\x9b2J\\u202eevil\\x0d",
}
"""The same names as the terminal must show them (written by hand from the table in idemwatch/terminal.py)."""


def _raw_controls(text: str) -> list[str]:
    return sorted({f"U+{ord(c):04X}" for c in text if ord(c) in CONTROL_CODE_POINTS and c != "\n"})


def _run(*args: str):
    res = CliRunner().invoke(main, list(args))
    assert _raw_controls(res.stdout) == [] and _raw_controls(res.stderr) == [], (res.stdout, res.stderr)
    return res


# --------------------------------------------------------------------------- the sanitiser


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_name_is_shown_escaped(name):
    assert safe(HOSTILE[name]) == SHOWN[name]


def test_every_control_character_has_a_visible_escape():
    assert safe("\x00\x09\x0a\x1b\x7f\x80\x9b\x9d\x9f") == "\\x00\\x09\\x0a\\x1b\\x7f\\x80\\x9b\\x9d\\x9f"
    assert safe("\u061c\u200e\u200f\u202a\u202e\u2066\u2069\u2028\u2029") == (
        "\\u061c\\u200e\\u200f\\u202a\\u202e\\u2066\\u2069\\u2028\\u2029")
    assert safe("one\ntwo", newlines=True) == "one\ntwo" and safe("one\ntwo") == "one\\x0atwo"
    assert safe("café ✓ 日本 [bold] \\x1b") == "café ✓ 日本 [bold] \\x1b"  # printable text is left alone


@given(st.text())
def test_no_control_character_survives(text):
    assert _raw_controls(safe(text, newlines=True)) == []
    assert "\n" not in safe(text)
    if not any(ord(c) in CONTROL_CODE_POINTS for c in text):
        assert safe(text) == text


# --------------------------------------------------------------------------- the commands


def _template(tmp_path: Path) -> Path:
    """A CloudFormation template whose queues and functions carry the hostile names (every check fails on them)."""
    resources: dict[str, dict] = {}
    for i, name in enumerate(HOSTILE.values()):
        resources[f"Queue{i}"] = {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": name}}
        resources[f"Fn{i}"] = {"Type": "AWS::Lambda::Function",
                               "Properties": {"FunctionName": name, "Runtime": "python3.12", "Handler": "app.handler",
                                              "Timeout": 30}}
        resources[f"Map{i}"] = {"Type": "AWS::Lambda::EventSourceMapping",
                                "Properties": {"FunctionName": {"Ref": f"Fn{i}"},
                                               "EventSourceArn": {"Fn::GetAtt": [f"Queue{i}", "Arn"]}}}
    path = tmp_path / "template.json"
    path.write_text(json.dumps({"Resources": resources}))
    return path


def test_audit_static_table_escapes_resource_names(tmp_path):
    res = _run("audit", "static", str(_template(tmp_path)))
    assert res.exit_code == 1  # the checks fail on these queues: the table is printed, and it is inert
    flat = "".join(res.stdout.split())  # the table wraps long names across lines
    for name in HOSTILE:
        assert "".join(SHOWN[name].split()) in flat, name


def test_alarms_list_escapes_function_names(tmp_path):
    """Alarm names are built from function names: shown escaped, or (when the config refuses control characters)
    refused in one escaped error line."""
    stack = yaml.safe_load((ROOT / "alarms" / "demo-stack.yaml").read_text())
    for fn, name in zip(stack["functions"], HOSTILE.values(), strict=False):
        fn["name"] = name
    cfg = tmp_path / "stack.yaml"
    cfg.write_text(yaml.safe_dump(stack))
    res = _run("alarms", "list", "--config", str(cfg))
    if res.exit_code == 0:
        assert SHOWN["osc52"] in res.stdout
    else:
        assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1 and res.stderr.startswith("Error: ")


def test_query_table_escapes_log_messages(tmp_path):
    log = tmp_path / "app.log"
    log.write_text("".join(json.dumps({"timestamp": 1767607200000 + i, "message": name, "level": "INFO"}) + "\n"
                           for i, name in enumerate(HOSTILE.values())))
    res = _run("query", "--format", "table", "fields message | sort @timestamp asc", str(log))
    assert res.exit_code == 0, res.stderr
    flat = "".join(res.stdout.split())
    for name in HOSTILE:
        assert "".join(SHOWN[name].split()) in flat, name
    assert "4 row(s)" in res.stdout


@pytest.mark.parametrize("args", [
    ["query", "fields @message", "{name}"],
    ["collect", "local", "{name}", "--out", "out"],
    ["audit", "static", "{name}"],
])
def test_error_messages_quoting_a_name_are_escaped(args):
    for name in HOSTILE.values():
        res = _run(*[a.replace("{name}", name) for a in args])
        assert res.exit_code == 2 and res.stderr.startswith("Error: ") and len(res.stderr.splitlines()) == 1
