"""idemwatch alarms: CloudWatch alarm definitions for every idempotency signal.

Build the catalogue from a stack config, export it (PutMetricAlarm JSON for the AWS CLI,
CloudFormation, Terraform JSON), validate it against the CloudWatch API model botocore ships
plus the API's cross-field rules, deploy it with boto3 (diff, tags, prune), and backtest it on
the collector's tables with CloudWatch's M-out-of-N and treat-missing-data rules::

    from alarms import load_config, build_catalogue, run_backtest
    defs = build_catalogue(load_config("alarms/demo-stack.yaml"))
    results = run_backtest(defs, data_dir)   # .definition, .timeline (DataFrame), .alarm_intervals

The stack config can add three more kinds, each its API request and rendered by every output (:mod:`alarms.kinds`):
"page once" composite alarms (:func:`build_composites`, backtested by :func:`backtest_composites`),
anomaly-detection bands on any signal, and Contributor Insights rules (:func:`build_insight_rules`, replayed on the
trail by :func:`replay_rules`).

Platform exports (docs/platform.md): :mod:`alarms.cfn_template` (parameterised CloudFormation),
:mod:`alarms.tf_module` (Terraform module), :mod:`alarms.console_dashboard` (PutDashboard body) checked by
:func:`validate_body`, console URLs in :mod:`alarms.links`.

Heavy modules (pandas, boto3) are imported on first use of the names that need them.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "AlarmDefinition",
    "AlarmsError",
    "BacktestResult",
    "ConfigError",
    "MetricQuery",
    "MetricRef",
    "StackConfig",
    "ValidationFailed",
    "Violation",
    "backtest_composites",
    "build_catalogue",
    "build_composites",
    "build_insight_rules",
    "evaluate_states",
    "export",
    "load_config",
    "logs_insights_url",
    "replay_rules",
    "run_backtest",
    "validate_body",
    "validate_request",
    "validate_requests",
]

_WHERE = {
    "AlarmDefinition": "alarms.definitions",
    "MetricQuery": "alarms.definitions",
    "MetricRef": "alarms.definitions",
    "AlarmsError": "alarms.exceptions",
    "ConfigError": "alarms.exceptions",
    "ValidationFailed": "alarms.exceptions",
    "StackConfig": "alarms.config",
    "load_config": "alarms.config",
    "build_catalogue": "alarms.catalogue",
    "Violation": "alarms.violation",
    "validate_request": "alarms.validate",
    "validate_requests": "alarms.validate",
    "export": "alarms.export",
    "evaluate_states": "alarms.evaluation",
    "BacktestResult": "alarms.backtest",
    "run_backtest": "alarms.backtest",
    "validate_body": "alarms.dashboard_body",
    "logs_insights_url": "alarms.links",
    "build_composites": "alarms.composite",
    "backtest_composites": "alarms.composite_backtest",
    "build_insight_rules": "alarms.insight_rules",
    "replay_rules": "alarms.contributors",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'alarms' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
