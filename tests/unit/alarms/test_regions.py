"""Every exported template, resolved for every Region of botocore's partition data, is what AWS accepts there.

The CloudFormation template and the Terraform module put the deployment's Region into each console link
(``${AWS::Region}``, ``data.aws_region.current``), twice per link: a description sized for ``us-east-1`` grew past
PutMetricAlarm's 1,024 characters in ``ap-southeast-2``. Here both are resolved with their defaults for each Region
code and every request (metric alarms, composite alarms, Contributor Insights rules) goes through the validator,
and the dashboard's alarm ARNs carry the Region's partition.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alarms.cfn_template import requests_from_cloudformation, resolve
from alarms.dashboard_body import validate_body
from alarms.regions import longest_region, partition_of, region_codes
from alarms.terraform import requests_from_terraform
from alarms.tf_module import resolve_module
from alarms.validate import validate_requests
from alarms.violation import errors

ROOT = Path(__file__).resolve().parents[3]
EXPORTED = ROOT / "alarms" / "exported"
TEMPLATE = json.loads((EXPORTED / "cloudformation" / "shop-alarms.json").read_text())
MODULE = json.loads((EXPORTED / "terraform-module" / "main.tf.json").read_text())
VARIABLES = json.loads((EXPORTED / "terraform-module" / "variables.tf.json").read_text())


def test_region_codes_come_from_botocore_without_pseudo_regions():
    import botocore.loaders

    data = botocore.loaders.create_loader().load_data("partitions")
    every = [r for p in data["partitions"] for r in p["regions"]]
    codes = [code for _, code in region_codes()]
    assert codes == [r for r in every if not r.endswith("-global")] and len(codes) >= 30
    assert "aws-global" not in codes and "ap-southeast-2" in codes and "cn-north-1" in codes
    assert longest_region() == max(codes, key=len) and len(longest_region()) >= len("ap-southeast-2")
    assert (partition_of("cn-north-1"), partition_of("us-gov-west-1"), partition_of("eu-west-1")) == (
        "aws-cn", "aws-us-gov", "aws")


@pytest.mark.parametrize(("partition", "region"), region_codes(), ids=[c for _, c in region_codes()])
def test_the_template_and_the_module_are_valid_in_every_region(partition, region):
    cfn = requests_from_cloudformation(TEMPLATE, region=region)
    tf = requests_from_terraform(resolve_module(MODULE, VARIABLES, region=region))
    for requests in (cfn, tf):
        assert len(requests) == 74 + 11 + 12
        assert errors(validate_requests(requests)) == [], region
    # the description grows with the Region's name, and the longest still fits
    poison = next(r for r in cfn if r.get("AlarmName") == "shop-orders-consumer-PoisonRate")
    assert f"https://{region}.console.aws.amazon.com/cloudwatch/home?region={region}" in poison["AlarmDescription"]
    body = resolve(TEMPLATE, region=region)["Resources"]["IdemwatchDashboard"]["Properties"]["DashboardBody"]
    assert validate_body(body) == []
    arns = {a for w in json.loads(body)["widgets"] if w["type"] == "alarm" for a in w["properties"]["alarms"]}
    assert {a.split(":")[1] for a in arns} == {partition}  # arn:aws-cn:... in China, arn:aws-us-gov:... in GovCloud


def test_sized_for_us_east_1_would_not_fit_in_the_longest_region():
    """The defect this guards against, reproduced: a 1,000-character description with four us-east-1 links is
    over 1,024 once the Region is the longest code."""
    from alarms.descriptions import fit_description
    from alarms.links import log_group_url

    links = (("logs", log_group_url("/aws/lambda/f", "us-east-1")), ("query", log_group_url("/aws/lambda/g", "us-east-1")))
    check = "First check: " + "y" * 40
    pad = 1010 - len(fit_description(["", check], links))
    parts = ["x" * pad, check]
    text = fit_description(parts, links)  # no Region given: sized as it is (1,010 characters)
    grown = text.replace("us-east-1", longest_region())
    assert len(text) <= 1024 < len(grown)
    fitted = fit_description(parts, links, region="us-east-1")
    assert len(fitted.replace("us-east-1", longest_region())) <= 1024
    assert fitted.startswith("x" * pad) and "First check: " in fitted  # the query link went first
    assert "query " not in fitted and "logs " in fitted


def test_validate_rejects_a_template_that_only_breaks_in_a_long_region(tmp_path):
    from alarms.validate import validate_file

    doc = json.loads(json.dumps(TEMPLATE))
    props = doc["Resources"]["ShopOrdersConsumerPoisonRateAlarm"]["Properties"]
    text = props["AlarmDescription"]["Fn::Sub"]
    in_us_east_1 = len(text.replace("${AWS::Region}", "us-east-1"))
    props["AlarmDescription"]["Fn::Sub"] = "z" * (1024 - in_us_east_1) + text  # exactly 1,024 in us-east-1
    f = tmp_path / "t.json"
    f.write_text(json.dumps(doc))
    requests, found = validate_file(f)
    assert len(requests) == 97
    bad = [v for v in found if v.level == "error"]
    assert [(v.alarm, v.field, v.rule) for v in bad] == [
        ("shop-orders-consumer-PoisonRate", "AlarmDescription", "model.max_length")]
    assert bad[0].message.endswith(f"(in {longest_region()})")
