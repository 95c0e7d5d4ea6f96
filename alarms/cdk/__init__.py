"""idemwatch for AWS CDK (Python): the alarms, console dashboard and outputs of the CloudFormation export, as a
construct next to the functions it watches, with CDK tokens for the names (``docs/cdk.md``)::

    from alarms.cdk import IdempotencyMonitoring, MonitoredFunction

    IdempotencyMonitoring(self, "Idempotency", service="shop", table=table, config="stack.yaml",
                          functions=[MonitoredFunction(orders_fn, "ProcessOrders", queue=orders_queue, dlq=dlq)])

Needs the ``cdk`` extra (``aws-cdk-lib``, ``constructs``; Node.js runs the CDK library). Importing this package
imports ``aws_cdk`` only when one of the names below is first used.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["IdempotencyMonitoring", "MonitoredFunction"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("alarms.cdk.construct"), name)
    raise AttributeError(f"module 'alarms.cdk' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
