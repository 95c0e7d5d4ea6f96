"""Defaults the audit rules compare against, each with its source.

Times are seconds unless the name says otherwise.
"""

from __future__ import annotations

SQS_VISIBILITY_FACTOR = 6
"""Visibility timeout >= 6 x the function timeout for an SQS event source mapping
(https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html)."""

LAMBDA_TIMEOUT_DEFAULT_S = 3
"""Function ``Timeout`` when the template leaves it out (CloudFormation ``AWS::Lambda::Function`` and Terraform
``aws_lambda_function`` both default to 3 s)."""

SQS_VISIBILITY_DEFAULT_S = 30
"""Queue ``VisibilityTimeout`` when left out (SQS default, 30 s)."""

STREAM_UNBOUNDED = -1
"""``MaximumRetryAttempts`` / ``MaximumRecordAgeInSeconds`` default on stream mappings: -1 = infinite
(https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-parameters.html)."""

SQS_MAX_RECEIVE_COUNT_MAX = 1000
"""``maxReceiveCount`` range is 1..1000 (SQS RedrivePolicy)."""

POWERTOOLS_KEY_ATTR = "id"
POWERTOOLS_EXPIRY_ATTR = "expiration"
"""Powertools ``DynamoDBPersistenceLayer`` defaults (``key_attr="id"``, ``expiry_attr="expiration"``,
``sort_key_attr=None``; aws_lambda_powertools/utilities/idempotency/persistence/dynamodb.py)."""

ENV_IN_PROGRESS_EXPIRY = "IDEMWATCH_IN_PROGRESS_EXPIRY_S"
"""Function environment variable that states the handler's idempotency in-progress expiry in seconds.
Powertools sets that expiry in code (it is the invocation's remaining time once ``register_lambda_context`` is
called), so the audit can only check it when the function's environment carries the value."""

IDEMPOTENCY_TABLE_ENV_KEYS = ("IDEMPOTENCY_TABLE", "IDEMPOTENCY_TABLE_NAME", "IDEMWATCH_IDEMPOTENCY_TABLE")
"""Function environment variables whose value names the idempotency table (conventions of the Powertools
examples and of idemwatch): a table named there is audited as an idempotency table."""

ASYNC_PRINCIPALS = frozenset({"events.amazonaws.com", "sns.amazonaws.com", "s3.amazonaws.com",
                              "scheduler.amazonaws.com", "iot.amazonaws.com", "ses.amazonaws.com"})
"""Service principals that invoke a function asynchronously (resource policy ``Principal.Service``)."""

TRIGGER_PRINCIPALS = {"apigateway.amazonaws.com": "apigateway-rest", "events.amazonaws.com": "eventbridge",
                      "scheduler.amazonaws.com": "eventbridge", "sns.amazonaws.com": "sns",
                      "elasticloadbalancing.amazonaws.com": "alb", "vpc-lattice.amazonaws.com": "vpc-lattice"}
"""Service principal of a resource-policy statement -> the ``emitter.contract.EventSource`` value of what it
invokes the function with (API Gateway: ``apigateway-http`` instead when the statement's source is an HTTP API)."""

SAM_EVENT_SOURCES = {"Api": "apigateway-rest", "HttpApi": "apigateway-http", "EventBridgeRule": "eventbridge",
                     "CloudWatchEvent": "eventbridge", "Schedule": "eventbridge", "ScheduleV2": "eventbridge",
                     "SNS": "sns", "MSK": "msk", "SelfManagedKafka": "self-managed-kafka", "MQ": "activemq"}
"""SAM ``Events`` type -> ``EventSource`` value (SQS, Kinesis and DynamoDB events are event source mappings)."""

HTTP_API_TYPES = frozenset({"AWS::ApiGatewayV2::Api", "aws_apigatewayv2_api"})
"""API Gateway v2 (HTTP and WebSocket APIs): a permission whose source is one of these is ``apigateway-http``."""

OPERATION_TAG = "idemwatch:operation"
"""Function tag naming the Operation dimension its handler writes (``@em.handler(operation=...)``): how a template
tells ``idemwatch init`` what code alone knows."""

LAMBDA_NS = "AWS/Lambda"
SQS_NS = "AWS/SQS"
ITERATOR_AGE = "IteratorAge"
SQS_VISIBLE = "ApproximateNumberOfMessagesVisible"

SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
AUDIT_JSON_FILE = "audit.json"
"""File name the demo writes the static audit of the demo template to (next to ``tables/`` in the data dir)."""

MAX_TEMPLATE_DEPTH = 100
"""Deepest nesting of mappings and lists the static audit reads in a template, and deepest chain of intrinsic
functions and references it follows while resolving one value: a real template nests a few levels (an IAM
policy inside Properties inside a resource), so anything deeper is refused as malformed, never crashes."""
