"""Constants: AWS metric names and dimensions outside this project's contract, tags, API limits.

This project's own metric names and dimensions come from :mod:`emitter.contract`; the AWS ones
are spelled here once, each with the documentation page it comes from.
"""

from __future__ import annotations

# --------------------------------------------------------------------------- AWS metrics
# https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html
LAMBDA_NAMESPACE = "AWS/Lambda"
LAMBDA_FUNCTION_DIMENSION = "FunctionName"
LAMBDA_ITERATOR_AGE = "IteratorAge"  # ms; stream event sources only (Kinesis, DynamoDB Streams)
LAMBDA_OFFSET_LAG = "OffsetLag"  # records (not time); Amazon MSK and self-managed Apache Kafka sources only
LAMBDA_ERRORS = "Errors"
LAMBDA_THROTTLES = "Throttles"

# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html
SQS_NAMESPACE = "AWS/SQS"
SQS_QUEUE_DIMENSION = "QueueName"
SQS_AGE_OF_OLDEST_MESSAGE = "ApproximateAgeOfOldestMessage"  # seconds
SQS_MESSAGES_VISIBLE = "ApproximateNumberOfMessagesVisible"  # gauge: alarm on Maximum, never Sum

# https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CloudWatch-Logs-Monitoring-CloudWatch-Metrics.html
# (dimension as in the CloudFormation/CDK canned metrics: LogsMetrics.emfValidationErrorsSum({LogGroupName}))
LOGS_NAMESPACE = "AWS/Logs"
LOGS_LOG_GROUP_DIMENSION = "LogGroupName"
LOGS_EMF_VALIDATION_ERRORS = "EMFValidationErrors"
LOGS_EMF_PARSING_ERRORS = "EMFParsingErrors"

# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/metrics-dimensions.html
DYNAMODB_NAMESPACE = "AWS/DynamoDB"
DYNAMODB_TABLE_DIMENSION = "TableName"
DYNAMODB_OPERATION_DIMENSION = "Operation"
DYNAMODB_THROTTLED_REQUESTS = "ThrottledRequests"  # dimensions TableName, Operation
DYNAMODB_SYSTEM_ERRORS = "SystemErrors"  # dimensions TableName, Operation
DYNAMODB_CONDITIONAL_CHECK_FAILED = "ConditionalCheckFailedRequests"  # dimension TableName; context only: a
# conditional put that fails is how a persistence layer detects a duplicate, so it is shown, never alarmed on

LAMBDA_LOG_GROUP_PREFIX = "/aws/lambda/"

# --------------------------------------------------------------------------- the maintenance-window alarm
MAINTENANCE_METRIC = "MaintenanceWindow"
"""Metric of the maintenance-window suppressor alarm (``composite_alarms.suppressors: [maintenance_window]``). No
emitter writes it, so it is no part of the contract: the alarm treats missing data as ``ignore`` and keeps the state
an operator gives it with ``aws cloudwatch set-alarm-state`` (or by publishing 1 to this metric)."""

# --------------------------------------------------------------------------- management tags
TAG_MANAGED_BY = "idemwatch:managed-by"
TAG_MANAGED_BY_VALUE = "idemwatch"
TAG_STACK = "idemwatch:stack"
TAG_SIGNAL = "idemwatch:signal"
TAG_SEVERITY = "idemwatch:severity"

# --------------------------------------------------------------------------- PutMetricAlarm rules
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html
HIGH_RESOLUTION_PERIODS = (10, 20, 30)  # "Valid values are 10, 20, 30, and any multiple of 60"
ONE_HOUR_S = 3_600
ONE_DAY_S = 86_400  # Period x EvaluationPeriods limit when Period < 1 h
SEVEN_DAYS_S = 604_800  # ... and when Period >= 1 h
MAX_METRIC_QUERIES = 20  # "Metrics": up to 20 MetricDataQuery structures in an alarm
MAX_METRIC_STATS = 10  # "...of which at most 10 may be MetricStat" (alarms on math expressions: <= 10 metrics)
METRIC_ID_PATTERN = r"^[a-z][A-Za-z0-9_]*$"  # MetricDataQuery.Id
SINGLE_METRIC_FIELDS = ("MetricName", "Namespace", "Statistic", "ExtendedStatistic", "Dimensions", "Period", "Unit")
TREAT_MISSING_VALUES = ("breaching", "notBreaching", "ignore", "missing")
LOW_SAMPLE_COUNT_VALUES = ("evaluate", "ignore")

MAX_DESCRIPTION = 1_024  # AlarmDescription: "Length Constraints: Minimum length of 0. Maximum length of 1024."

# --------------------------------------------------------------------------- backtest
DEFAULT_EXTRA_RANGE_PERIODS = 2
"""Evaluation range = EvaluationPeriods + 2: the user guide's worked example (3 evaluation periods,
"CloudWatch retrieves the 5 most recent data points"). The real range depends on the period and
resolution and is not published; this is the documented example generalised."""

# --------------------------------------------------------------------------- CloudFormation resource names
RESOURCE_NAME_PROPERTIES = ("FunctionName", "QueueName", "TableName", "StreamName", "Name", "AlarmName", "TopicName")
"""The property that names a resource of the types a check follows a ``Ref`` / ``Fn::GetAtt`` to (AWS::Lambda::Function,
AWS::SQS::Queue, AWS::DynamoDB::Table, AWS::Kinesis::Stream, AWS::Events::Rule and AWS::Serverless::* ``Name``,
AWS::CloudWatch::Alarm, AWS::SNS::Topic: the CloudFormation resource reference). Without it CloudFormation makes a
name up at deploy time; a static check uses the logical id in its place."""
