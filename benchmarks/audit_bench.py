"""Audit benchmark: the static audit of a large SAM template, side by side with the alternatives, as ratios from
one interleaved run (medians of the rounds).

Template: N functions, each with an SQS event on its own queue and a redrive to a DLQ (3N resources + events),
written as YAML with !GetAtt / !Ref / !Sub.

- audit: ``alarms.audit`` read (PyYAML SafeLoader with the CloudFormation tag constructors) + rule engine.
- cfn-lint decode: ``cfnlint.decode.decode_str`` of the same text (the dev-only decoder we chose not to need at
  run time; it also builds line marks), no rules.
- floor: PyYAML's C parser (``yaml.CSafeLoader``, no tags resolved) of the same text when libyaml is present, and
  ``json.loads`` of the JSON form of the same template (the cheapest way to get the same dict).

Run: ``.venv/bin/python benchmarks/audit_bench.py [N]``
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path


def template(n: int) -> tuple[str, dict]:
    lines = ["AWSTemplateFormatVersion: 2010-09-09", "Transform: AWS::Serverless-2016-10-31",
             "Parameters:", "  Env: {Type: String, Default: prod}", "Resources:"]
    doc: dict = {"Resources": {}}
    for i in range(n):
        lines += [f"  Fn{i}:", "    Type: AWS::Serverless::Function", "    Properties:",
                  f'      FunctionName: !Sub "${{Env}}-fn{i}"', "      Timeout: 10", "      Events:",
                  "        Q:", "          Type: SQS", "          Properties:",
                  f"            Queue: !GetAtt Q{i}.Arn", "            FunctionResponseTypes: [ReportBatchItemFailures]",
                  f"  Q{i}:", "    Type: AWS::SQS::Queue", "    Properties:", f"      QueueName: q{i}",
                  "      VisibilityTimeout: 60",
                  f"      RedrivePolicy: {{deadLetterTargetArn: !GetAtt D{i}.Arn, maxReceiveCount: 5}}",
                  f"  D{i}:", "    Type: AWS::SQS::Queue", f"    Properties: {{QueueName: d{i}}}"]
        doc["Resources"][f"Fn{i}"] = {"Type": "AWS::Serverless::Function", "Properties": {
            "FunctionName": {"Fn::Sub": "${Env}-fn" + str(i)}, "Timeout": 10, "Events": {"Q": {"Type": "SQS",
            "Properties": {"Queue": {"Fn::GetAtt": [f"Q{i}", "Arn"]},
                           "FunctionResponseTypes": ["ReportBatchItemFailures"]}}}}}
        doc["Resources"][f"Q{i}"] = {"Type": "AWS::SQS::Queue", "Properties": {
            "QueueName": f"q{i}", "VisibilityTimeout": 60,
            "RedrivePolicy": {"deadLetterTargetArn": {"Fn::GetAtt": [f"D{i}", "Arn"]}, "maxReceiveCount": 5}}}
        doc["Resources"][f"D{i}"] = {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"d{i}"}}
    return "\n".join(lines) + "\n", doc


def main() -> None:
    import yaml

    from alarms.audit.rules import evaluate
    from alarms.audit.sources import audit_paths

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    text, doc = template(n)
    js = json.dumps(doc)
    tmp = Path(tempfile.mkdtemp()) / "template.yaml"
    tmp.write_text(text, encoding="utf-8")
    cases = {"audit (read + rules)": lambda: evaluate(audit_paths([tmp]))}
    try:
        from cfnlint.decode import decode_str

        cases["cfn-lint decode only"] = lambda: decode_str(text)
    except ImportError:
        pass
    if hasattr(yaml, "CSafeLoader"):
        cases["floor: libyaml CSafeLoader (no tags)"] = lambda: yaml.load(text.replace("!", ""), Loader=yaml.CSafeLoader)
    cases["floor: json.loads of the same dict"] = lambda: json.loads(js)
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(5):  # interleaved rounds: the machine is shared and busy
        for k, fn in cases.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    base = statistics.median(times["audit (read + rules)"])
    findings = evaluate(audit_paths([tmp]))
    print(f"static audit of a SAM template with {3 * n:,} resources ({len(text) / 1e6:.2f} MB YAML), "
          f"{len(findings):,} findings; medians of 5 interleaved rounds")
    for k, ts in times.items():
        m = statistics.median(ts)
        print(f"  {k:40s} {m * 1000:9.1f} ms   audit / this = {base / m:6.2f}x")


if __name__ == "__main__":
    main()
