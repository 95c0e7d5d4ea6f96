"""Enumerations of the CloudWatch alarm vocabulary used by the catalogue.

Values are exactly the strings the PutMetricAlarm API takes
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html).
"""

from __future__ import annotations

from enum import Enum


class Severity(str, Enum):
    """How urgently a human must act. Maps to SNS topics in the stack config (``actions``)."""

    CRITICAL = "critical"  # page: data loss, double side effects or a stopped consumer
    WARNING = "warning"  # ticket: degraded, will become critical if left alone
    INFO = "info"  # dashboard only: worth knowing, nobody is woken up


class TreatMissingData(str, Enum):
    """``TreatMissingData`` values (API reference: "Valid Values: breaching | notBreaching | ignore | missing")."""

    MISSING = "missing"
    NOT_BREACHING = "notBreaching"
    BREACHING = "breaching"
    IGNORE = "ignore"


class ComparisonOperator(str, Enum):
    """``ComparisonOperator`` values: four static-threshold ones, three for anomaly-detection bands."""

    GREATER_THAN_OR_EQUAL = "GreaterThanOrEqualToThreshold"
    GREATER_THAN = "GreaterThanThreshold"
    LESS_THAN = "LessThanThreshold"
    LESS_THAN_OR_EQUAL = "LessThanOrEqualToThreshold"
    # "used only for alarms based on anomaly detection models" (PutMetricAlarm, ComparisonOperator)
    OUTSIDE_BAND = "LessThanLowerOrGreaterThanUpperThreshold"
    LESS_THAN_LOWER = "LessThanLowerThreshold"
    GREATER_THAN_UPPER = "GreaterThanUpperThreshold"


STATIC_COMPARISONS = (ComparisonOperator.GREATER_THAN_OR_EQUAL, ComparisonOperator.GREATER_THAN,
                      ComparisonOperator.LESS_THAN, ComparisonOperator.LESS_THAN_OR_EQUAL)
BAND_COMPARISONS = (ComparisonOperator.OUTSIDE_BAND, ComparisonOperator.LESS_THAN_LOWER,
                    ComparisonOperator.GREATER_THAN_UPPER)


class Statistic(str, Enum):
    """``Statistic`` values (the percentile ``ExtendedStatistic`` is a separate field)."""

    SAMPLE_COUNT = "SampleCount"
    AVERAGE = "Average"
    SUM = "Sum"
    MINIMUM = "Minimum"
    MAXIMUM = "Maximum"


class AlarmState(str, Enum):
    """``StateValue`` of an alarm."""

    OK = "OK"
    ALARM = "ALARM"
    INSUFFICIENT_DATA = "INSUFFICIENT_DATA"


class ExportFormat(str, Enum):
    """Output formats of ``idemwatch alarms export``."""

    CLI = "cli"  # one PutMetricAlarm request per alarm: aws cloudwatch put-metric-alarm --cli-input-json file://...
    CLOUDFORMATION = "cloudformation"  # one template of AWS::CloudWatch::Alarm resources
    TERRAFORM = "terraform"  # Terraform JSON (aws_cloudwatch_metric_alarm resources) and, with a config, a module
    DASHBOARD = "dashboard"  # the CloudWatch console dashboard body (PutDashboard), with --dashboard only
