"""Dashboard constants: the signals it shows, time-bin ladder, health thresholds, env names.

Every outcome value and metric name comes from :mod:`emitter.contract`; nothing here
spells one as a literal.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import Enum

from emitter.contract import METRIC_DESCRIPTIONS, EventSource, Metric, Outcome

ENV_DATA_DIR = "IDEMWATCH_DATA"
"""Environment variable carrying the data directory to the Streamlit app (set by ``serve``)."""
ENV_ALARMS_CONFIG = "IDEMWATCH_ALARMS_CONFIG"
"""Optional alarm stack config for the Alarms page (default: the demo stack shipped in ``alarms/``)."""

ENV_REFRESH_S = "IDEMWATCH_REFRESH_S"
"""Seconds between an open page's checks for new data (0 turns the check off)."""
REFRESH_S = 10.0
"""Default of ``$IDEMWATCH_REFRESH_S``: a re-collect shows up on every open page within 10 s."""

TABLES_DIR = "tables"
MANIFEST_FILE = "manifest.json"
SOURCE_BIN = timedelta(minutes=1)
"""Bin width of the collector's time-binned tables (collector/tables.py: 1-minute bins)."""

BIN_LADDER: tuple[timedelta, ...] = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=15),
    timedelta(hours=1),
    timedelta(hours=6),
    timedelta(days=1),
)
"""Chart bin widths, the CloudWatch console's standard periods. The smallest one giving at
most ``MAX_BINS`` bins over the selected range is used."""
MAX_BINS = 120

RANGE_PRESETS: tuple[tuple[str, timedelta | None], ...] = (
    ("Last 5 minutes", timedelta(minutes=5)),
    ("Last 15 minutes", timedelta(minutes=15)),
    ("Last 30 minutes", timedelta(minutes=30)),
    ("Last hour", timedelta(hours=1)),
    ("Last 3 hours", timedelta(hours=3)),
    ("Last 6 hours", timedelta(hours=6)),
    ("Last 12 hours", timedelta(hours=12)),
    ("Last 24 hours", timedelta(days=1)),
    ("Last 3 days", timedelta(days=3)),
    ("Last 7 days", timedelta(days=7)),
    ("All data", None),
)
"""Time-range presets, relative to the end of the collected data (not the wall clock: the
data may be historical)."""
CUSTOM_RANGE = "Custom range"

TOP_N = 10
"""Rows in the top-offender tables."""

# Health thresholds of the per-operation health table (fractions 0..1).
POISON_RATE_CRITICAL = 0.01
"""Poison rate at or above which an operation is CRITICAL (1% of received events quarantined)."""
RETRY_RATE_WARNING = 0.05
"""Retry rate (retryable failures / received) at or above which an operation is WARNING."""


class Health(str, Enum):
    OK = "OK"
    WARNING = "WARNING"
    CRITICAL = "CRITICAL"


class SignalKind(str, Enum):
    COUNT = "count"  # number of outcome records of one Outcome
    RATE = "rate"  # outcome records / received records, a fraction
    AGE = "age"  # RecordAge (ms) maximum
    STUCK = "stuck"  # expired IN_PROGRESS keys from the stuck_keys table


@dataclass(frozen=True)
class Signal:
    """One Overview tile and its page.

    ``outcome`` is the outcome counted (numerator for RATE); ``metric`` the CloudWatch metric
    it corresponds to (for the description and the Alarms page).
    """

    key: str
    title: str
    kind: SignalKind
    metric: Metric
    outcome: Outcome | None
    page: str  # page file under dashboard/pages/

    @property
    def description(self) -> str:
        return METRIC_DESCRIPTIONS[self.metric]

    @property
    def counted(self) -> str:
        """The outcome value this signal counts (a rate's numerator). Raises ValueError for a signal that counts no
        outcome (iterator age, stuck keys)."""
        if self.outcome is None:
            raise ValueError(f"signal {self.key!r} counts no outcome")
        return str(self.outcome.value)


SIGNALS: tuple[Signal, ...] = (
    Signal("duplicates", "Duplicates", SignalKind.COUNT, Metric.DUPLICATE_COMPLETED, Outcome.DUPLICATE_COMPLETED,
           "app_pages/duplicates.py"),
    Signal("conflicts", "Payload conflicts", SignalKind.COUNT, Metric.PAYLOAD_CONFLICT, Outcome.PAYLOAD_CONFLICT,
           "app_pages/conflicts.py"),
    Signal("in_progress", "In-progress collisions", SignalKind.COUNT, Metric.DUPLICATE_IN_PROGRESS,
           Outcome.DUPLICATE_IN_PROGRESS, "app_pages/in_progress.py"),
    Signal("retries", "Retries", SignalKind.COUNT, Metric.RETRYABLE_FAILURE, Outcome.RETRYABLE_FAILURE,
           "app_pages/retries.py"),
    Signal("poison", "Poison rate", SignalKind.RATE, Metric.POISON_MESSAGE, Outcome.POISON_MESSAGE,
           "app_pages/poison.py"),
    Signal("timeout_aborts", "Timeout-budget aborts", SignalKind.COUNT, Metric.TIMEOUT_BUDGET_ABORT,
           Outcome.TIMEOUT_BUDGET_ABORT, "app_pages/timeout_aborts.py"),
    Signal("iterator_age", "Max iterator age", SignalKind.AGE, Metric.RECORD_AGE, None, "app_pages/iterator_age.py"),
    Signal("stuck", "Stuck keys", SignalKind.STUCK, Metric.STALE_CLAIM_TAKEOVER, None, "app_pages/stuck_keys.py"),
)
SIGNAL_BY_KEY = {s.key: s for s in SIGNALS}

FAILURE_OUTCOMES: tuple[Outcome, ...] = (
    Outcome.RETRYABLE_FAILURE, Outcome.PERMANENT_FAILURE, Outcome.POISON_MESSAGE, Outcome.TIMEOUT_BUDGET_ABORT,
    Outcome.STORE_ERROR, Outcome.AMBIGUOUS_COMMIT,
)

ITERATOR_AGE_SOURCES = frozenset({
    EventSource.SQS, EventSource.KINESIS, EventSource.DYNAMODB, EventSource.MSK, EventSource.SELF_MANAGED_KAFKA,
    EventSource.ACTIVEMQ, EventSource.RABBITMQ,
})
"""Event sources whose records wait in a stream or queue (Lambda event source mappings): only their record age is an
iterator age. A request (API Gateway, function URL, ALB) or a push (SNS, EventBridge) carries a send time too, but
its age is latency, not a backlog: the iterator-age figures leave those out. Source: the IteratorAge metric of
Lambda's "Types of metrics for Lambda functions" page (docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html),
defined for stream and queue event source mappings."""
