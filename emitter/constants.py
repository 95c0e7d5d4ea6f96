"""EMF and CloudWatch limits the emitter enforces, and the codes of its warning records.

Sources:
- EMF specification (metrics per directive, values per metric, dimension set size, event size):
  https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
- CloudWatch Dimension / MetricDatum / PutMetricData API references (ASCII dimension names and values,
  lengths, value range, units, StorageResolution 1 | 60, timestamp window of 14 days past / 2 hours future).
- aws-embedded-metrics' ``validator.py`` (namespace pattern, 250-character names), used as an independent oracle
  in the tests. Where the two differ we take the stricter rule, so every document passes both.
"""

from __future__ import annotations

MAX_METRICS_PER_DIRECTIVE = 100
"""EMF: a MetricDirective's ``Metrics`` array MUST NOT contain more than 100 MetricDefinitions."""
MAX_VALUES_PER_METRIC = 100
"""EMF: numeric array metric targets MUST NOT have more than 100 members."""
MAX_DIMENSIONS_PER_SET = 30
"""EMF: a DimensionSet MUST NOT contain more than 30 dimension keys."""
MAX_DIMENSION_NAME_CHARS = 250
"""Dimension names: 1-250 characters (aws-embedded-metrics; the API allows 255), ASCII, not starting with ':'."""
MAX_DIMENSION_VALUE_CHARS = 1024
"""Dimension values: non-empty ASCII strings of at most 1024 characters with a non-whitespace character."""
MAX_METRIC_NAME_CHARS = 250
"""Metric names: 1-250 characters (EMF schema allows 255; aws-embedded-metrics checks 250)."""
MAX_NAMESPACE_CHARS = 255
"""Namespaces: 1-255 characters of ``[A-Za-z0-9._#:/-]``, not starting with the reserved ``AWS/``."""
NAMESPACE_ALLOWED_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._#:/-")
MAX_EVENT_BYTES = 256 * 1024
"""A CloudWatch Logs event (and therefore an EMF document or a log record) is at most 256 KB (UTF-8 bytes)."""
EVENT_SIZE_HEADROOM = 64
"""Bytes kept free below MAX_EVENT_BYTES for the newline and any prefix a log pipeline adds."""
MAX_TIMESTAMP_PAST_MS = 14 * 24 * 3600 * 1000
"""CloudWatch accepts metric data up to 14 days in the past ..."""
MAX_TIMESTAMP_FUTURE_MS = 2 * 3600 * 1000
"""... and up to 2 hours in the future."""
MAX_ABS_VALUE = 2.0**360
"""PutMetricData rejects values with a magnitude above 2^360 ..."""
MIN_ABS_VALUE = 2.0**-360
"""... or non-zero values below 2^-360 (and NaN, +Infinity, -Infinity)."""
MAX_LOG_FIELD_CHARS = 1024
"""Contract string fields of a log record (keys, codes, refs, ids) are truncated to this many characters."""
MAX_CUSTOM_DIMENSIONS = MAX_DIMENSIONS_PER_SET - 2
"""Custom dimensions are appended to every dimension set; the largest standard set has 2 keys."""
DEFAULT_OPERATION = "default"
"""Operation dimension value for outcomes recorded outside any invocation without an explicit operation."""

STORAGE_RESOLUTIONS = frozenset({1, 60})
"""EMF/PutMetricData StorageResolution: 1 = high resolution (1 s), 60 = standard (the default, written as absent)."""

UNITS = frozenset(
    {
        "Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
        "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count", "Bytes/Second",
        "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second", "Bits/Second",
        "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second", "Count/Second", "None",
    }
)
"""CloudWatch MetricDatum units (the EMF JSON schema's Unit pattern)."""

HIGH_CARDINALITY_DIMENSION_NAMES = frozenset(
    {
        "idempotencykey", "key", "tenant", "tenantid", "eventid", "messageid", "requestid", "functionrequestid",
        "awsrequestid", "correlationid", "traceid", "xraytraceid", "sequencenumber", "userid", "customerid",
        "orderid",
    }
)
"""Dimension names refused (compared lower-case without ``_``/``-``): each distinct value would be a paid
custom metric. These belong in log properties."""

PAYLOAD_PROPERTY_NAMES = frozenset(
    {"body", "payload", "raw", "event", "detail", "message_body", "messagebody", "newimage", "oldimage",
     "new_image", "old_image", "data"}
)
"""Property names treated as payloads: their value is replaced by REDACTED like a secret (payloads are never logged)."""

AGENT_ENDPOINT_DEFAULT = "tcp://127.0.0.1:25888"
ENV_AGENT_ENDPOINT = "AWS_EMF_AGENT_ENDPOINT"


class WarningCode:
    """Values of the ``idemwatch_warning`` key (contract.LogKey.WARNING_CODE) on the emitter's warning records.

    One warning record is written per call that dropped something; ``idemwatch_dropped`` lists each
    dropped element with its code. ``Emitter.warnings`` counts them by code.
    """

    INVALID_NAMESPACE = "invalid_namespace"
    INVALID_DIMENSION_NAME = "invalid_dimension_name"
    INVALID_DIMENSION_VALUE = "invalid_dimension_value"
    HIGH_CARDINALITY_DIMENSION = "high_cardinality_dimension"
    SECRET_DIMENSION_REDACTED = "secret_dimension_redacted"
    TOO_MANY_DIMENSIONS = "too_many_dimensions"
    NAME_CONFLICT = "name_conflict"
    INVALID_METRIC_NAME = "invalid_metric_name"
    INVALID_METRIC_VALUE = "invalid_metric_value"
    INVALID_UNIT = "invalid_unit"
    INVALID_RESOLUTION = "invalid_storage_resolution"
    METRIC_DEFINITION_CONFLICT = "metric_definition_conflict"
    INVALID_TIMESTAMP = "invalid_timestamp"
    INVALID_PROPERTY = "invalid_property"
    PROPERTY_TOO_LARGE = "property_too_large"
    VALUE_TRUNCATED = "value_truncated"
    MISSING_ITEM_IDENTIFIER = "missing_item_identifier"
    DUPLICATE_ITEM_IDENTIFIER = "duplicate_item_identifier"
    ADAPTER_ERROR = "adapter_error"
    SINK_ERROR = "sink_error"
    LOG_LEVEL_FILTERED = "log_level_filtered"
    INTERNAL_ERROR = "internal_error"

    ALL: frozenset[str] = frozenset()


WarningCode.ALL = frozenset(v for k, v in vars(WarningCode).items() if k.isupper() and isinstance(v, str))
