"""The rule-pair stack (stack.yaml) and its findings, written out by hand: every rule fails once and passes once."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from alarms.audit.rules import AuditOptions

STACK = Path(__file__).with_name("stack.yaml")

OPTIONS = AuditOptions(expected_alarms={"good-sqs": ("good-sqs-Errors",), "bad-sqs": ("bad-sqs-Errors",)})
"""The catalogue rule (IW015) with a one-alarm catalogue per function: good-sqs has its alarm, bad-sqs not."""

EXPECTED: list[tuple[str, str, str, str]] = [
    ("IW001", "good-q -> good-sqs", "pass", "VisibilityTimeout 60 s >= 60 s"),
    ("IW001", "bad-q -> bad-sqs", "fail", "queue bad-q VisibilityTimeout 30 s < 6 x function bad-sqs Timeout 30 s = 180 s"),
    ("IW002", "good-q -> good-sqs", "pass", "FunctionResponseTypes has ReportBatchItemFailures"),
    ("IW002", "bad-q -> bad-sqs", "fail",
     "FunctionResponseTypes lacks ReportBatchItemFailures: one failed record retries the whole batch"),
    ("IW003", "good-stream -> good-stream-fn", "pass", "FunctionResponseTypes has ReportBatchItemFailures"),
    ("IW003", "bad-stream -> bad-stream-fn", "fail",
     "FunctionResponseTypes lacks ReportBatchItemFailures: one failed record retries the whole batch"),
    ("IW004", "good-q", "pass", "redrive to good-q-dlq after 5 receives"),
    ("IW004", "bad-q", "fail", "queue bad-q has no RedrivePolicy: a poison message is retried until retention expires"),
    ("IW005", "good-stream -> good-stream-fn", "pass", "BisectBatchOnFunctionError is true"),
    ("IW005", "bad-stream -> bad-stream-fn", "fail",
     "BisectBatchOnFunctionError is false: a poison record fails its whole batch until it expires"),
    ("IW006", "good-stream -> good-stream-fn", "pass", "discarded batches go to good-stream-failures"),
    ("IW006", "bad-stream -> bad-stream-fn", "fail",
     "no DestinationConfig.OnFailure: records discarded after the retry limit are lost without trace"),
    ("IW007", "good-stream -> good-stream-fn", "pass", "MaximumRetryAttempts 3, MaximumRecordAgeInSeconds -1"),
    ("IW007", "bad-stream -> bad-stream-fn", "fail",
     ("MaximumRetryAttempts and MaximumRecordAgeInSeconds are both -1 (infinite): a failing batch blocks its shard "
     "until the records expire")),
    ("IW008", "good-table", "pass", "TTL enabled on 'expiration'"),
    ("IW008", "bad-table", "fail", "TTL is disabled: expired idempotency records are never deleted"),
    ("IW009", "good-table", "pass", "partition key 'id'"),
    ("IW009", "bad-table", "fail", "key schema is key; the idempotency record layout needs partition key 'id' only"),
    ("IW010", "good-table", "pass", "point-in-time recovery enabled"),
    ("IW010", "bad-table", "fail", "point-in-time recovery disabled"),
    ("IW011", "good-sqs", "pass", "in-progress expiry 60 s >= Timeout 10 s"),
    ("IW011", "bad-sqs", "fail", ("in-progress expiry 5 s < Timeout 30 s: a claim expires while its invocation still "
                                 "runs, and a redelivery runs the same event concurrently")),
    ("IW012", "async-good", "pass", "failed async events go to async-good-dlq"),
    ("IW012", "async-bad", "fail",
     "invoked asynchronously without an on-failure destination or DLQ: events that fail their retries are dropped"),
    ("IW013", "good-stream -> good-stream-fn", "pass", "an alarm watches IteratorAge of good-stream-fn"),
    ("IW013", "bad-stream -> bad-stream-fn", "fail", "no alarm on AWS/Lambda IteratorAge for FunctionName=bad-stream-fn"),
    ("IW014", "good-q-dlq", "pass", "an alarm watches the depth of good-q-dlq"),
    ("IW014", "good-stream-failures", "fail",
     ("dead-letter queue without an alarm on AWS/SQS ApproximateNumberOfMessagesVisible for "
     "QueueName=good-stream-failures")),
    ("IW015", "good-sqs", "pass", "all 1 catalogue alarms present"),
    ("IW015", "bad-sqs", "fail", "1 of 1 catalogue alarms missing: bad-sqs-Errors"),
]


def rows(findings) -> list[tuple[str, str, str, str]]:
    return sorted((f.rule, f.resource, f.status.value, f.message) for f in findings)


@pytest.fixture
def pairs() -> SimpleNamespace:
    """``stack`` (path), ``options``, ``expected`` (sorted rows) and ``rows`` (findings -> sorted rows)."""
    return SimpleNamespace(stack=STACK, options=OPTIONS, expected=sorted(EXPECTED), rows=rows)
