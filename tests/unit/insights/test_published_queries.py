"""[fidelity] Published Logs Insights query texts (AWS docs and public repositories, collected in
published_queries.json with a source URL each) run offline on a small local event set.

Each text ends in one of three outcomes: it runs (parse + compile + run), it is refused as
unsupported (one line naming the command/function), or any other error. The target is no
"other error" except for texts that are not valid Logs Insights as published (marked in the
fixture with the reason). Run this file as a script to print the table:
``.venv/bin/python tests/unit/insights/test_published_queries.py``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:  # when run as a script
    sys.path.insert(0, str(ROOT))

from collector.insights import QueryError, run_query
from tests.support.insights_events import events_connection

FIXTURE = Path(__file__).with_name("published_queries.json")
QUERIES = json.loads(FIXTURE.read_text(encoding="utf-8"))["queries"]
T0 = 1767607200000  # 2026-01-05T10:00:00Z


def _events() -> list[dict]:
    """A few events of each log kind the published queries address (Lambda, VPC flow, CloudTrail,
    Route 53, API Gateway, AppSync, Apache, application JSON and text lines)."""
    docs: list[tuple[str | dict, dict]] = [
        ("START RequestId: r1 Version: $LATEST", {"@type": "START", "@requestId": "r1"}),
        ("REPORT RequestId: r1\tDuration: 1200.00 ms", {"@type": "REPORT", "@requestId": "r1", "@duration": 1200.0,
                                                        "@billedDuration": 1201, "@memorySize": 128e6,
                                                        "@maxMemoryUsed": 70e6}),
        ("java.lang.IllegalStateException: boom", {}),
        ("2026-01-05 [ERROR] User ID: 42 failed", {}),
        ("user=ann, method:GET, latency := 10", {}),
        ({"srcAddr": "192.0.2.7", "dstAddr": "10.0.0.1", "srcPort": 443, "dstPort": 50000, "protocol": 17,
          "bytes": 900, "packets": 3, "action": "REJECT", "logStatus": "OK", "interfaceId": "eni-0123456789abcdef0"}, {}),
        ({"eventSource": "ec2.amazonaws.com", "eventName": "StartInstances", "awsRegion": "us-east-2",
          "tlsDetails": {"tlsVersion": "TLSv1.1", "cipherSuite": "ECDHE"}, "userIdentity": {"accountId": "1"},
          "requestParameters": {"userName": "bob"}, "errorCode": "Throttling", "eventType": "AwsApiCall"}, {}),
        ({"queryType": "A", "queryName": "example.com", "resolverIp": "198.51.100.1", "responseCode": "SERVFAIL"}, {}),
        ({"status": 404, "ip": "203.0.113.5", "path": "/x", "httpMethod": "GET", "responseLatency": 12,
          "integrationLatency": 10}, {}),
        ({"logType": "Tracing", "resolverArn": "arn:aws:appsync:r", "duration": 5, "graphQLAPIId": "g",
          "statusCode": 200}, {}),
        ({"level": "ERROR", "message": "failed ***REDACTED***", "status": "failure", "action_type": "login",
          "duration_ms": 6000, "evt": "ai_chat_rate_limited", "plan": "pro", "premiumRouted": 1,
          "events": [{"name": "exception"}], "accounts": [{"type": "internal"}], "IPaddress": "198.51.100.0",
          "trimmedData": "[{\"accountId\": \"a\", \"droppedSpans\": 2}]", "range": 4000, "f1": "ServiceLog.Exception",
          "detail-type": "Scheduled Event", "server": "s1", "severity": "high", "latency": 3}, {}),
    ]
    out = []
    for i, (doc, system) in enumerate(docs):
        msg = doc if isinstance(doc, str) else json.dumps(doc)
        out.append({"timestamp": T0 + i * 1000, "message": msg, **system})
    return out


def outcome(con, query: str) -> tuple[str, str]:
    """("runs" | "unsupported" | "other error", detail)."""
    try:
        res = run_query(con, query)
    except QueryError as exc:
        if exc.message.startswith(("unsupported command", "unsupported function")):
            return "unsupported", str(exc)
        return "other error", str(exc)
    return "runs", f"{len(res.rows)} row(s), columns {res.columns}"


@pytest.fixture(scope="module")
def con():
    return events_connection(_events(), log_group="/aws/lambda/orders")


def test_the_fixture_holds_at_least_60_distinct_published_texts_with_sources():
    texts = {" ".join(q["query"].split()) for q in QUERIES}
    assert len(texts) == len(QUERIES) >= 60
    assert all(q["source"].startswith("https://") for q in QUERIES)


@pytest.mark.parametrize("entry", QUERIES, ids=[f"{i:02d}" for i in range(len(QUERIES))])
def test_published_query(con, entry):
    kind, detail = outcome(con, entry["query"])
    if entry.get("invalid_as_published"):
        # not valid Logs Insights as printed: it must still fail cleanly, with a position
        assert kind != "runs", (entry["title"], detail)
        assert "(line " in detail
    else:
        assert kind in ("runs", "unsupported"), (entry["title"], entry["source"], detail)


def table() -> str:
    con = events_connection(_events(), log_group="/aws/lambda/orders")
    counts: Counter = Counter()
    lines = []
    for q in QUERIES:
        kind, detail = outcome(con, q["query"])
        label = kind + (" (invalid as published)" if q.get("invalid_as_published") else "")
        counts[label] += 1
        if kind != "runs":
            lines.append(f"  {label}: {q['title']} - {detail}")
    by_source = Counter(q["source"] for q in QUERIES)
    head = [f"{len(QUERIES)} published query texts from {len(by_source)} sources"]
    head += [f"  {n:3d}  {k}" for k, n in sorted(counts.items())]
    return "\n".join(head + lines)


if __name__ == "__main__":
    print(table())
