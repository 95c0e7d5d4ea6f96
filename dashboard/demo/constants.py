"""Names and sizes of the demo stack (the same names as ``alarms/demo-stack.yaml``).

Sizes follow the AWS guidance they are named after:
- SQS event source: visibility timeout at least 6x the function timeout
  (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html), batch size <= 10 here.
- Lambda asynchronous invocation (EventBridge target): 2 retries, about 1 and 2 minutes apart
  (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html).
- API Gateway REST integration timeout: 29 s.
"""

from __future__ import annotations

SERVICE = "shop"
"""Service dimension of every demo function."""

IDEMPOTENCY_TABLE = "idempotency"
"""Name of the idempotency table (SQLite here, DynamoDB in the real stack)."""

ORDERS_CONSUMER = "orders-consumer"
LEDGER_STREAM = "ledger-stream"
CREATE_CASE_API = "create-case-api"
PAYMENT_CAPTURE = "payment-capture"
FUNCTIONS: tuple[str, ...] = (ORDERS_CONSUMER, LEDGER_STREAM, CREATE_CASE_API, PAYMENT_CAPTURE)

ORDERS_QUEUE = "orders-queue"
ORDERS_DLQ = "orders-dlq"
LEDGER_STREAM_NAME = "ledger-stream"
PAYMENT_DLQ = "payment-capture-dlq"
REGION = "us-east-1"
ACCOUNT_ID = "123456789012"

# Operation dimension per function (bounded, one per handler).
OPERATIONS: dict[str, str] = {
    ORDERS_CONSUMER: "ProcessOrders",
    LEDGER_STREAM: "ApplyLedgerEntries",
    CREATE_CASE_API: "CreateCase",
    PAYMENT_CAPTURE: "CapturePayment",
}

# --------------------------------------------------------------------------- defaults (sizes)
DEFAULT_SEED = 7
DEFAULT_EVENTS = 10_000
"""Source events (orders + ledger records + API requests + payments) over the whole run."""
DEFAULT_DURATION_S = 3 * 3600
"""Three simulated hours: enough 1-minute bins for time series and alarm backtests."""
DEFAULT_OUT = "idemwatch-data"

TRAFFIC_SHARE: dict[str, float] = {
    ORDERS_CONSUMER: 0.40,
    LEDGER_STREAM: 0.30,
    CREATE_CASE_API: 0.18,
    PAYMENT_CAPTURE: 0.12,
}
