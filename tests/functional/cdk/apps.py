"""The CDK apps the tests synthesize: the demo fleet's SQS consumer, Kinesis consumer, API function and
idempotency table, built only from CDK constructs, monitored explicitly and by discovery."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_kinesis as kinesis
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs

from alarms.cdk import IdempotencyMonitoring, MonitoredFunction

ROOT = Path(__file__).resolve().parents[3]
DEMO_STACK = ROOT / "alarms" / "demo-stack.yaml"
ENV = cdk.Environment(account="123456789012", region="us-east-1")


class Fleet:
    """The resources of one stack (the demo fleet, named as in alarms/demo-stack.yaml except the stream, whose
    physical name CloudFormation generates)."""

    def __init__(self, stack: cdk.Stack, names: bool = True) -> None:
        def name(n: str) -> Any:
            return n if names else None

        code = lambda_.Code.from_inline("def handler(event, context):\n    return {}\n")
        common: dict[str, Any] = {"runtime": lambda_.Runtime.PYTHON_3_12, "code": code,
                                  "timeout": cdk.Duration.seconds(10)}
        self.table = dynamodb.Table(stack, "IdempotencyTable", table_name=name("idempotency"),
                                    partition_key=dynamodb.Attribute(name="id", type=dynamodb.AttributeType.STRING),
                                    time_to_live_attribute="expiration",
                                    billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST)
        self.orders_dlq = sqs.Queue(stack, "OrdersDlq", queue_name=name("orders-dlq"))
        self.orders_queue = sqs.Queue(stack, "OrdersQueue", queue_name=name("orders-queue"),
                                      visibility_timeout=cdk.Duration.seconds(60),
                                      dead_letter_queue=sqs.DeadLetterQueue(queue=self.orders_dlq, max_receive_count=5))
        self.orders = lambda_.Function(stack, "OrdersConsumer", function_name=name("orders-consumer"),
                                       handler="orders.handler", **common)
        self.orders.add_event_source(sources.SqsEventSource(self.orders_queue, batch_size=10,
                                                            report_batch_item_failures=True))
        self.stream = kinesis.Stream(stack, "LedgerStream", shard_count=2)  # generated name: a token
        self.ledger_failures = sqs.Queue(stack, "LedgerStreamFailures", queue_name=name("ledger-stream-failures"))
        self.ledger = lambda_.Function(stack, "LedgerStreamConsumer", function_name=name("ledger-stream"),
                                       handler="ledger.handler", **common)
        self.ledger.add_event_source(sources.KinesisEventSource(
            self.stream, starting_position=lambda_.StartingPosition.TRIM_HORIZON, batch_size=10,
            report_batch_item_failures=True, on_failure=sources.SqsDlq(self.ledger_failures)))
        self.api_fn = lambda_.Function(stack, "CreateCaseApi", function_name=name("create-case-api"),
                                       handler="cases.handler", **common)
        apigw.LambdaRestApi(stack, "CasesApi", handler=self.api_fn)
        self.payment_dlq = sqs.Queue(stack, "PaymentCaptureDlq", queue_name=name("payment-capture-dlq"))
        self.payments = lambda_.Function(stack, "PaymentCapture", function_name=name("payment-capture"),
                                         handler="payments.handler", dead_letter_queue=self.payment_dlq, **common)
        events.Rule(stack, "PaymentRequested", event_pattern=events.EventPattern(source=["shop.payments"]),
                    targets=[targets.LambdaFunction(self.payments)])
        for fn in (self.orders, self.ledger, self.api_fn, self.payments):
            self.table.grant_read_write_data(fn)
            fn.add_environment("IDEMPOTENCY_TABLE", self.table.table_name)


def explicit_app(outdir: Path) -> tuple[cdk.App, cdk.Stack, Fleet, IdempotencyMonitoring]:
    """The monitored functions named one by one, with the demo stack config's settings."""
    app = cdk.App(outdir=str(outdir), analytics_reporting=False)
    stack = cdk.Stack(app, "ShopExplicit", env=ENV)
    fleet = Fleet(stack)
    monitoring = IdempotencyMonitoring(stack, "Idempotency", config=DEMO_STACK, table=fleet.table, functions=[
        MonitoredFunction(fleet.orders, "ProcessOrders", queue=fleet.orders_queue, dlq=fleet.orders_dlq),
        MonitoredFunction(fleet.ledger, "ApplyLedgerEntries", stream=fleet.stream, dlq=fleet.ledger_failures),
        MonitoredFunction(fleet.api_fn, "CreateCase", event_source="apigateway-rest"),
        MonitoredFunction(fleet.payments, "CapturePayment", event_source="eventbridge", dlq=fleet.payment_dlq,
                          overrides={"ambiguous_commit": {"severity": "critical"},
                                     "timeout_budget_abort": {"severity": "critical"}}),
    ])
    return app, stack, fleet, monitoring


def discovered_app(outdir: Path, names: bool = False) -> tuple[cdk.App, cdk.Stack, Fleet, IdempotencyMonitoring]:
    """Only CDK constructs, no names given: the Aspect finds the consumers; operations come from tags."""
    app = cdk.App(outdir=str(outdir), analytics_reporting=False)
    stack = cdk.Stack(app, "ShopDiscovered", env=ENV)
    fleet = Fleet(stack, names=names)
    for fn, op in ((fleet.orders, "ProcessOrders"), (fleet.ledger, "ApplyLedgerEntries"),
                   (fleet.api_fn, "CreateCase"), (fleet.payments, "CapturePayment")):
        cdk.Tags.of(fn).add("idemwatch:operation", op)
    monitoring = IdempotencyMonitoring(stack, "Idempotency", service="shop", table=fleet.table, discover=True)
    return app, stack, fleet, monitoring
