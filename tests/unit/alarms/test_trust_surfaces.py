"""[trust-surfaces] The alarms exports and checks hold against hostile and broken stack configs: names are literals
in every target language, numbers are finite, CloudWatch's limits are checked where the config is read, and
template quotas before anything is built. Each test failed at 620890b."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from click.testing import CliRunner

from alarms import export as export_module
from alarms.catalogue import build_catalogue
from alarms.config import parse_config
from alarms.exceptions import ConfigError
from alarms.export import export, render
from alarms.validate import load_requests, validate_request

INTERPOLATIONS = ['${file("/etc/hostname")}', "%{ if true }x%{ endif }", "${AWS::Region}", "${!Literal}", "$${x}"]
"""Hostile names without control characters (those are refused by the config: test_names_cloudwatch_refuses)."""


def _config(name: str = "orders", operation: str = "Process", **extra) -> dict:
    return {"service": "shop", "region": "eu-west-1", "account_id": "123456789012",
            "idempotency_table": "idem", "functions": [
                {"name": name, "operation": operation, "event_source": "sqs", "queue": "q", "dlq": "dlq"}],
            **extra}


def _strings(doc):
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from _strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _strings(v)


def _sub_split(doc, plain=None, subs=None):
    """(strings outside any Fn::Sub, Fn::Sub template strings) of a CloudFormation value."""
    plain = [] if plain is None else plain
    subs = [] if subs is None else subs
    if isinstance(doc, str):
        plain.append(doc)
    elif isinstance(doc, dict) and set(doc) == {"Fn::Sub"}:
        arg = doc["Fn::Sub"]
        subs.append(arg if isinstance(arg, str) else arg[0])
    elif isinstance(doc, dict):
        for v in doc.values():
            _sub_split(v, plain, subs)
    elif isinstance(doc, list):
        for v in doc:
            _sub_split(v, plain, subs)
    return plain, subs


_MODULE_EXPRESSION = re.compile(r"\$\{(var\.[a-z_]+|data\.aws_region\.current\.name|data\.aws_caller_identity\.current"
                                r"\.account_id|data\.aws_partition\.current\.partition|aws_cloudwatch_(metric_alarm\."
                                r"[a-z0-9_]+\.(arn|alarm_name)|dashboard\.idemwatch\.dashboard_name))\}")


@pytest.mark.parametrize("hostile", INTERPOLATIONS)
def test_terraform_exports_hold_no_live_interpolation_from_names(tmp_path, hostile):
    cfg = parse_config(_config(name=f"fn-{hostile}", operation=f"op-{hostile}",
                               tags={"team": hostile}, custom_alarms=[{
                                   "name": f"c-{hostile}", "description": hostile, "period": 60,
                                   "evaluation_periods": 1, "threshold": 1,
                                   "metric": {"name": "Duration", "namespace": "AWS/Lambda", "statistic": "p99",
                                              "dimensions": {"FunctionName": f"fn-{hostile}"}}}]))
    defs = build_catalogue(cfg)
    export(defs, tmp_path, "terraform", cfg.stack, cfg, dashboard=True)
    for f in sorted((tmp_path / "terraform").glob("*.json")) + sorted((tmp_path / "terraform-module").glob("*.json")):
        doc = json.loads(f.read_text(encoding="utf-8"))
        if f.name == "variables.tf.json":  # variable defaults are literal values in Terraform, never templates
            continue
        for s in _strings(doc):
            live = _MODULE_EXPRESSION.sub("", s.replace("$${", "").replace("%%{", ""))
            assert "${" not in live and "%{" not in live, (f.name, s)
    # and read back as Terraform evaluates them, the names are intact
    want = sorted(d.name for d in defs)
    for folder in ("terraform", "terraform-module"):
        got = sorted(r["AlarmName"] for r in load_requests(tmp_path / folder))
        assert got == want, folder
        assert any(hostile in r["AlarmDescription"] for r in load_requests(tmp_path / folder))


def test_cloudformation_writes_variables_in_names_as_literals(tmp_path):
    cfg = parse_config(_config(name="fn-${AWS::Region}", tags={"t": "${AWS::AccountId}"}))
    defs = build_catalogue(cfg)
    for config in (cfg, None):
        doc = json.loads(render(defs, "cloudformation", "shop", config)["cloudformation/shop-alarms.json"])
        for res in doc["Resources"].values():
            plain, subs = _sub_split(res["Properties"])
            assert not [s for s in plain if re.search(r"\$\{[^}]*\}", s)]  # cfn-lint E1029: variable outside Sub
            live = {v for s in subs for v in re.findall(r"\$\{([^!}][^}]*)\}", s)}
            assert live <= {"NamePrefix", "AWS::Region"}  # the template's own; the names' ${...} are ${!...}
        dims = [d for r in doc["Resources"].values() for d in r["Properties"].get("Dimensions", [])
                if d["Name"] == "FunctionName"]
        assert dims and all(d["Value"] == {"Fn::Sub": "fn-${!AWS::Region}"} for d in dims)
    # and validate reads the literal back
    export(defs, tmp_path, "cloudformation", "shop", cfg)
    got = {r["AlarmName"]: r for r in load_requests(tmp_path / "cloudformation")}
    assert {d["Value"] for r in got.values() for d in r.get("Dimensions", []) if d["Name"] == "FunctionName"} \
        == {"fn-${AWS::Region}"}


@pytest.mark.parametrize("where, value", [
    ("threshold", ".nan"), ("threshold", ".inf"), ("threshold", "-.inf"), ("threshold", "1.0e+400"),
])
@pytest.mark.parametrize("place", ["override", "tier", "custom"])
def test_non_finite_thresholds_are_refused_naming_the_field(where, value, place):
    number = yaml.safe_load(f"x: {value}")["x"]
    if place == "override":
        extra, path = {"overrides": {"poison_rate": {"threshold": number}}}, "overrides.poison_rate.threshold"
    elif place == "tier":
        extra, path = ({"overrides": {"retry_rate": {"tiers": {"critical": {"threshold": number}}}}},
                       "overrides.retry_rate.tiers.critical.threshold")
    else:
        extra, path = ({"custom_alarms": [{"name": "c", "period": 60, "evaluation_periods": 1, "threshold": number,
                                           "metric": {"name": "Errors", "namespace": "AWS/Lambda",
                                                      "statistic": "Sum"}}]}, "custom_alarms[0].threshold")
    with pytest.raises(ConfigError) as exc:
        parse_config(_config(**extra))
    assert str(exc.value).startswith(f"{path}: must be a finite number") and "\n" not in str(exc.value)


def test_exports_write_json_numbers_only_and_validate_refuses_nan(tmp_path):
    cfg = parse_config(_config())
    d = build_catalogue(cfg)[0]
    bad = {**d.to_request(), "Threshold": float("nan")}
    assert "model.finite" in {v.rule for v in validate_request(bad)}
    assert "model.finite" in {v.rule for v in validate_request({**bad, "Threshold": float("inf")})}
    with pytest.raises(ValueError):
        export_module.dump(bad)
    f = tmp_path / "a.json"
    f.write_text(json.dumps(bad), encoding="utf-8")  # Python writes NaN, which is not JSON
    with pytest.raises(ValueError, match="NaN is not a JSON number"):
        load_requests(f)


@pytest.mark.parametrize("patch, path", [
    ({"functions": [{"name": "fn\x1b]52;c;aGk=\x07", "operation": "P", "event_source": "sqs"}]}, "functions[0].name"),
    ({"functions": [{"name": "fn", "operation": "P\nQ", "event_source": "sqs"}]}, "functions[0].operation"),
    ({"functions": [{"name": "fn", "operation": "P", "event_source": "sqs", "queue": "q\x9b31m"}]},
     "functions[0].queue"),
    ({"functions": [{"name": "f" * 1100, "operation": "P", "event_source": "sqs"}]}, "functions[0].name"),
    ({"alarm_name_prefix": "p" * 256}, "alarm_name_prefix"),
    ({"alarm_name_prefix": "p\r"}, "alarm_name_prefix"),
    ({"alarm_name_prefix": "p-${AWS::Region}-"}, "alarm_name_prefix"),
    ({"stack": "s-${AWS::Region}"}, "stack"),  # the default prefix is "<stack>-"
    ({"stack": "s\x1b[2J"}, "stack"),
    ({"tags": {"k" * 129: "v"}}, "tags." + "k" * 129),
    ({"tags": {"k": "v" * 257}}, "tags.k"),
    ({"custom_alarms": [{"name": "c\x1b]8;;http://x\x1b\\", "period": 60, "evaluation_periods": 1, "threshold": 1,
                         "metric": {"name": "Errors", "namespace": "AWS/Lambda", "statistic": "Sum"}}]},
     "custom_alarms[0].name"),
    ({"region": "us-east-1\x1b"}, "region"),
])
def test_names_cloudwatch_refuses_are_refused_naming_the_field(patch, path):
    with pytest.raises(ConfigError) as exc:
        parse_config({**_config(), **patch})
    message = str(exc.value)
    assert message.startswith(f"{path}: ") and "\n" not in message and "\x1b" not in message


def test_validate_refuses_control_characters_in_alarm_names():
    cfg = parse_config(_config())
    req = build_catalogue(cfg)[0].to_request()
    for name in ("a\nb", "a\x1b[31mb", "a\x7f"):
        found = validate_request({**req, "AlarmName": name})
        assert [v.field for v in found if v.rule == "model.control_characters"] == ["AlarmName"], name
    found = validate_request({**req, "Dimensions": [{"Name": "FunctionName", "Value": "f\tg"}]})
    assert [v.field for v in found if v.rule == "model.control_characters"] == ["Dimensions[0].Value"]
    assert not [v for v in validate_request(req) if v.rule == "model.control_characters"]


def test_cloudformation_quota_fails_before_anything_is_built(monkeypatch):
    """200 functions (3,000 alarms): beyond the 500-resource and 200-output quotas; the export refuses before
    validating (at 620890b it validated every alarm first, then failed on the outputs)."""
    cfg = parse_config({"service": "s", "functions": [
        {"name": f"f{i}", "operation": "P", "event_source": "sqs"} for i in range(200)]})
    defs = build_catalogue(cfg)

    def never(*a, **k):
        raise AssertionError("validated a template that cannot deploy")

    monkeypatch.setattr(export_module, "validate_requests", never)
    for config in (cfg, None):
        with pytest.raises(ValueError, match="resources") as exc:
            render(defs, "cloudformation", "s", config)
        assert "per template" in str(exc.value)
    with pytest.raises(ValueError, match=r"outputs \(at most 200\)"):
        render(defs[:201], "cloudformation", "s", cfg)


def test_a_tier_repeating_the_base_severity_is_a_one_line_usage_error(tmp_path):
    from alarms.commands import alarms

    p = tmp_path / "stack.yaml"
    p.write_text(yaml.safe_dump(_config(overrides={"retry_rate": {"severity": "critical"}})), encoding="utf-8")
    for command in (["list"], ["validate"], ["export", "--out", str(tmp_path / "out")]):
        r = CliRunner().invoke(alarms, [*command, "--config", str(p)])
        assert r.exit_code == 2, (command, r.output, r.exception)
        assert "overrides.retry_rate.tiers.critical: a critical tier repeats the base severity" in r.output
        assert "Traceback" not in r.output


def test_the_stack_name_never_leaves_the_output_folder(tmp_path):
    cfg = parse_config(_config(stack="../../escape"))
    written = export(build_catalogue(cfg), tmp_path / "out", "cloudformation", cfg.stack, cfg)
    assert all((tmp_path / "out").resolve() in p.resolve().parents for p in written)


def test_export_all_writes_nothing_when_the_cloudformation_quota_fails(tmp_path):
    """`alarms export --format all` checks the CloudFormation quota before the CLI files are written, so a refused
    export leaves no half of its output behind."""
    from alarms.commands import alarms

    p = tmp_path / "stack.yaml"
    p.write_text(yaml.safe_dump({"service": "s", "functions": [
        {"name": f"f{i}", "operation": "P", "event_source": "sqs"} for i in range(200)]}), encoding="utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(alarms, ["export", "--config", str(p), "--out", str(out)])
    assert r.exit_code == 2 and "outputs (at most 200)" in r.output, r.output
    assert not out.exists() or not any(out.rglob("*"))


def test_a_custom_alarm_clashing_with_the_catalogue_is_a_one_line_config_error(tmp_path):
    """build_catalogue's ConfigError (a custom alarm named like a catalogue alarm) used to surface as an internal
    error from every alarms command that loads a config."""
    from alarms.commands import alarms

    custom = {"name": "orders-PayloadConflict", "title": "t", "severity": "critical", "description": "d",
              "log_group": "/aws/lambda/orders",
              "metric": {"namespace": "AWS/Lambda", "name": "Errors", "dimensions": {"FunctionName": "orders"},
                         "statistic": "Sum"},
              "period": 60, "evaluation_periods": 1, "threshold": 1, "treat_missing_data": "notBreaching",
              "treat_missing_reason": "no invocations, no errors"}
    p = tmp_path / "stack.yaml"
    p.write_text(yaml.safe_dump(_config(custom_alarms=[custom])), encoding="utf-8")
    for cmd in (["list"], ["validate"], ["export", "--out", str(tmp_path / "o")]):
        r = CliRunner().invoke(alarms, [*cmd, "--config", str(p)])
        assert r.exit_code == 2 and "defined twice" in r.output, (cmd, r.output, r.exception)
