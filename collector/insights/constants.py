"""Limits and fixed names of the offline Logs Insights engine.

Every limit here is enforced with a :class:`~collector.insights.exceptions.QueryError` that
names it, so no input can reach Python's recursion limit or DuckDB's expression-depth limit.
"""

from __future__ import annotations

__all__ = ["ACCOUNT_ID_PATTERN", "DEFAULT_ACCOUNT_ID", "DEFAULT_LIMIT", "DOCS", "MAX_ARITHMETIC_CHAIN",
           "MAX_NESTING_DEPTH", "MAX_QUERY_LENGTH"]

DEFAULT_LIMIT = 10_000
"""Default and maximum number of result rows of a Logs Insights query (StartQuery ``limit``)."""

MAX_QUERY_LENGTH = 10_000
"""Maximum length of a query, in characters: StartQuery's ``queryString`` has "Maximum length
of 10000" (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_StartQuery.html)."""

MAX_NESTING_DEPTH = 64
"""Maximum nesting of one expression: parentheses, function calls, unary ``-``/``not`` and the
right-associative ``^`` each add a level. AWS documents no limit; this one is the engine's own
(far above what a person writes) and keeps compilation iterative-safe. A flat chain
(``x = 1 or x = 2 or ...``, ``concat(a, b, ...)``, ``in [...]``) is not nesting: its length is
bounded only by :data:`MAX_QUERY_LENGTH`; arithmetic chains by :data:`MAX_ARITHMETIC_CHAIN`."""

MAX_ARITHMETIC_CHAIN = 400
"""Maximum terms of one chain of ``+``/``-`` or of ``*``/``/``/``%`` operators (``a + b + ...``).
DuckDB nests each step of such a chain (its expression-depth limit is 1000); or/and chains and
argument lists have no such limit."""

DOCS = "https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/"
"""Base URL of the Logs Insights query-syntax pages cited in messages and the coverage table."""

ACCOUNT_ID_PATTERN = "[0-9]{12}"
"""An AWS account ID: 12 digits (regex, unanchored; valid in Python ``re``, RE2 and DuckDB)."""

DEFAULT_ACCOUNT_ID = "000000000000"
"""Account ID of ``@log`` for events read from local files when none is given (``--account-id``,
``IDEMWATCH_ACCOUNT_ID``). ``@log`` "is a log group identifier in the form of account-id:log-group-name"
(CWL_AnalyzeLogData-discoverable-fields); local files do not say which account wrote them. All zeros is the
conventional "no account" placeholder (LocalStack's default account, for instance), no known AWS account has it, and it
differs from the documentation's example IDs (123456789012, 111122223333), which real-looking test data uses: a
row carrying it is visibly offline data of unknown account, never merged with a real account's rows."""
