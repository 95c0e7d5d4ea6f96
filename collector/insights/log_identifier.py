"""``@log``, the log group identifier: "``@log`` is a log group identifier in the form of
account-id:log-group-name" (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_AnalyzeLogData-discoverable-fields.html).

The local ingest builds it with :func:`log_identifier` (the account from ``--account-id`` /
``IDEMWATCH_ACCOUNT_ID``, default :data:`~collector.insights.constants.DEFAULT_ACCOUNT_ID`), so a query reads
the same ``@log`` offline as on CloudWatch. The collected tables split it back into ``account_id`` and
``log_group`` in one place, ``collector.postprocess.split_log_identifier``.
"""

from __future__ import annotations

import re

from collector.insights.constants import ACCOUNT_ID_PATTERN

__all__ = ["LOG_IDENTIFIER_RE", "check_account_id", "log_identifier"]

LOG_IDENTIFIER_RE = f"^({ACCOUNT_ID_PATTERN}):(.*)$"
"""Regex of an account-qualified ``@log``: group 1 the account ID, group 2 the log group name. Log group names
cannot hold ``:`` (CreateLogGroup: ``[\\.\\-_/#A-Za-z0-9]+``), so the first colon after 12 digits is the split."""

_ACCOUNT = re.compile(ACCOUNT_ID_PATTERN)
_QUALIFIED = re.compile(LOG_IDENTIFIER_RE, re.DOTALL)


def check_account_id(value: str) -> str:
    """``value`` when it is an AWS account ID (exactly 12 ASCII digits). Raises ValueError otherwise."""
    if not isinstance(value, str) or not value.isascii() or not _ACCOUNT.fullmatch(value):
        raise ValueError(f"account ID must be 12 digits, got {value!r}")
    return value


def log_identifier(account_id: str, log_group: str) -> str:
    """``"<account_id>:<log_group>"``, the ``@log`` value. A ``log_group`` already in that form (12 digits and a
    colon; a group name cannot hold a colon) is returned as it is, so an account-qualified name keeps its account."""
    if _QUALIFIED.match(log_group):
        return log_group
    return f"{account_id}:{log_group}"
