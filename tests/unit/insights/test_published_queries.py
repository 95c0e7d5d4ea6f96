"""[fidelity] Published Logs Insights query texts (AWS docs and public repositories, collected in
published_queries.json and published_queries_more.json with a source URL each) run offline on a small
local event set ingested the way real files are (Lambda text, VPC flow log and Route 53 records, JSON logs of
several services, in several log groups).

Each text ends in one of three outcomes: it runs (parse + compile + run), it is refused as
unsupported (one line naming the command/function), or any other error. The target is no
"other error" except for texts that are not valid Logs Insights as published (marked in the
fixture with the reason). Run this file as a script to print the table of each collection:
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

from collector.ingest import EventStore
from collector.insights import QueryError, run_query

HERE = Path(__file__).parent
COLLECTIONS = {name: json.loads((HERE / f"{name}.json").read_text(encoding="utf-8"))["queries"]
               for name in ("published_queries", "published_queries_more")}
QUERIES = COLLECTIONS["published_queries"]
T0 = 1767607200000  # 2026-01-05T10:00:00Z
T0_S = T0 // 1000

_LAMBDA = [
    "START RequestId: r1 Version: $LATEST",
    ("REPORT RequestId: r1\tDuration: 1200.00 ms\tBilled Duration: 1201 ms\tMemory Size: 128 MB\t"
    "Max Memory Used: 70 MB\t\nXRAY TraceId: 1-6b0cc2e3-65f1b0040334e5f296ebe35c\tSegmentId: 2011ac3e29d63a3f\t"
    "Sampled: true"),
    "2026-01-05T10:00:02.000Z r1 Task timed out after 3.00 seconds",
    "java.lang.IllegalStateException: boom",
    "2026-01-05 [ERROR] User ID: 42 failed",
    "user=ann, method:GET, latency := 10",
    {"eventSource": "ec2.amazonaws.com", "eventName": "StartInstances", "awsRegion": "us-east-2",
     "tlsDetails": {"tlsVersion": "TLSv1.1", "cipherSuite": "ECDHE"},
     "userIdentity": {"accountId": "1", "type": "Root"},
     "requestParameters": {"userName": "bob"}, "errorCode": "Throttling", "eventType": "AwsApiCall"},
    {"queryType": "A", "queryName": "example.com", "resolverIp": "198.51.100.1", "responseCode": "SERVFAIL"},
    {"status": 404, "ip": "203.0.113.5", "path": "/x", "httpMethod": "GET", "responseLatency": 12,
     "integrationLatency": 10, "resourcePath": "/orders", "requestId": "q1"},
    {"logType": "Tracing", "resolverArn": "arn:aws:appsync:r", "duration": 5, "graphQLAPIId": "g", "statusCode": 200},
    {"level": "ERROR", "message": "failed ***REDACTED***", "status": "failure", "action_type": "login",
     "duration_ms": 6000, "evt": "ai_chat_rate_limited", "plan": "pro", "premiumRouted": 1,
     "events": [{"name": "exception"}], "accounts": [{"type": "internal"}], "IPaddress": "198.51.100.0",
     "trimmedData": "[{\"accountId\": \"a\", \"droppedSpans\": 2}]", "range": 4000, "f1": "ServiceLog.Exception",
     "detail-type": "Scheduled Event", "server": "s1", "severity": "high", "latency": 3},
    {"schemaType": "ModelInvocationLog", "modelId": "amazon.nova-lite-v1:0", "operation": "Converse",
     "input": {"inputTokenCount": 2500, "inputBodyJson": {"messages": [{"content": [{"text": "hi"}]}]}},
     "output": {"outputTokenCount": 100, "outputBodyJson": {"stopReason": "end_turn", "metrics": {"latencyMs": 900},
                                                             "usage": {"inputTokens": 2500, "outputTokens": 100}}},
     "identity": {"arn": "arn:aws:sts::ACCOUNT_ID:assumed-role/dev"}, "region": "us-east-1",
     "inferenceRegion": "us-west-2", "requestId": "b1"},
    {"status": "FAILURE", "delivery": {"providerResponse": "Invalid phone number", "smsType": "Transactional",
                                       "dwellTimeMs": 300, "priceInUSD": 0.006, "destination": "+15555550100",
                                       "deliveryId": "d1"},
     "notification": {"messageId": "m1"}},
    {"verb": "delete", "requestURI": "/api/v1/nodes", "userAgent": "kubectl/v1.22.0", "objectRef": {"name": "aws-auth"},
     "user": {"username": "kubernetes-admin"}, "responseStatus": {"code": 503}},
]
_WAF = {"timestamp": T0, "formatVersion": 1, "terminatingRuleId": "SQLInjectionRule", "terminatingRuleType": "REGULAR",
        "action": "BLOCK", "labels": [{"name": "awswaf:managed:aws:sql-database:SQLi_Body"}],
        "httpRequest": {"clientIp": "203.0.113.42", "country": "US", "uri": "/search", "args": "q=1",
                        "httpMethod": "GET", "headers": [{"name": "user-agent", "value": "curl/8"}]}}
_GROUPS: dict[str, list] = {
    "/aws/lambda/orders": _LAMBDA,
    "/vpc/flow-logs": [
        ("2 123456789010 eni-1235b8ca123456789 172.31.16.139 172.31.16.21 20641 22 6 20 4249 1767607200 1767607260 "
        "ACCEPT OK"),
        "2 123456789010 eni-1235b8ca123456789 192.0.2.7 10.0.0.5 443 50000 17 3 900 1767607200 1767607260 REJECT OK",
        "2 123456789010 eni-1235b8ca123456789 - - - - - - - 1767607200 1767607260 - SKIPDATA"],
    "/aws/route53/example.com": [
        "1.0 2026-01-05T10:00:02.130Z Z123412341234 example.com A NOERROR UDP FRA6 192.168.1.1 -",
        "1.0 2026-01-05T10:00:03.130Z Z123412341234 bad.example.com A NXDOMAIN UDP IAD12 192.168.3.1 -"],
    "aws-waf-logs": [_WAF],
    "/aws/lambda/my-function": [{"requestId": "q1", "duration": 800, "memoryUsed": 60}],
    "/aws/infra-logs": [{"requestId": "q1", "host": "i-1"}],
    "/aws/lambda/database-service": [{"requestId": "q1", "errorType": "DatabaseConnectionTimeout"}],
    "/aws/lambda/payment-processor": [{"requestId": "q1", "status": "FAILED"}] * 4,
}


def _store() -> EventStore:
    """The events every collection runs on: each group's messages (text or JSON objects), one second apart."""
    store = EventStore()
    for group, messages in _GROUPS.items():
        events = [{"timestamp": T0 + i * 1000, "message": m if isinstance(m, str) else json.dumps(m)}
                  for i, m in enumerate(messages)]
        store.ingest_events(events, group)
    return store


def outcome(store, query: str) -> tuple[str, str]:
    """("runs" | "unsupported" | "other error", detail)."""
    try:
        res = run_query(store, query)
    except QueryError as exc:
        if exc.message.startswith(("unsupported command", "unsupported function")):
            return "unsupported", str(exc)
        return "other error", str(exc)
    return "runs", f"{len(res.rows)} row(s), columns {res.columns}"


@pytest.fixture(scope="module")
def store():
    return _store()


@pytest.mark.parametrize("name", COLLECTIONS)
def test_each_collection_holds_at_least_60_distinct_published_texts_with_sources(name):
    queries = COLLECTIONS[name]
    texts = {" ".join(q["query"].split()) for q in queries}
    assert len(texts) == len(queries) >= 60
    assert all(q["source"].startswith("https://") for q in queries)


def test_the_second_collection_holds_no_text_of_the_first():
    first = {" ".join(q["query"].split()) for q in COLLECTIONS["published_queries"]}
    assert not first & {" ".join(q["query"].split()) for q in COLLECTIONS["published_queries_more"]}


CASES = [(name, i, q) for name, queries in COLLECTIONS.items() for i, q in enumerate(queries)]


@pytest.mark.parametrize("name,index,entry", CASES, ids=[f"{n}-{i:03d}" for n, i, _ in CASES])
def test_published_query(store, name, index, entry):
    kind, detail = outcome(store, entry["query"])
    if entry.get("invalid_as_published"):
        # not valid Logs Insights as printed: it must still fail cleanly, with a position
        assert kind != "runs", (entry["title"], detail)
        assert "(line " in detail
    else:
        assert kind in ("runs", "unsupported"), (entry["title"], entry["source"], detail)


def tally(store, queries: list[dict]) -> tuple[Counter, list[str]]:
    """(outcome -> count, one line per text that does not run)."""
    counts: Counter = Counter()
    lines = []
    for q in queries:
        kind, detail = outcome(store, q["query"])
        label = kind + (" (invalid as published)" if q.get("invalid_as_published") else "")
        counts[label] += 1
        if kind != "runs":
            lines.append(f"  {label}: {q['title']} - {detail}")
    return counts, lines


def test_the_second_collections_table_has_no_other_error(store):
    """The closing table of [fidelity-vended]: how many run, are refused by name, or give any other error."""
    counts, _ = tally(store, COLLECTIONS["published_queries_more"])
    assert counts["other error"] == 0
    assert counts["runs"] + counts["unsupported"] + counts["other error (invalid as published)"] == len(
        COLLECTIONS["published_queries_more"])


def table() -> str:
    store = _store()
    out = []
    for name, queries in COLLECTIONS.items():
        counts, lines = tally(store, queries)
        by_source = Counter(q["source"] for q in queries)
        out.append(f"{name}: {len(queries)} published query texts from {len(by_source)} sources")
        out += [f"  {n:3d}  {k}" for k, n in sorted(counts.items())] + lines
    return "\n".join(out)


if __name__ == "__main__":
    print(table())
