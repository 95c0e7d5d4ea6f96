"""Powertools Logger correlation: idemwatch records carry the correlation id Powertools Logger holds."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from emitter.core import Emitter

__all__ = ["use_logger"]


def use_logger(emitter: Emitter, logger: Any) -> None:
    """Give records without a correlation id of their own the one of Powertools ``logger``.

    ``logger.inject_lambda_context(correlation_id_path=...)`` and ``logger.set_correlation_id(...)`` set it; each
    record asks ``logger.get_correlation_id()`` when written, so a value set inside the handler is seen too. A
    record's own correlation id (``X-Correlation-Id`` header or message attribute) wins. ``function_name``,
    ``function_arn``, ``function_memory_size`` and ``function_request_id`` come from the Lambda context as Powertools
    Logger writes them, so the two log streams join on the same keys. ``logger=None`` turns it off.

    Without this call the emitter finds an active Powertools Logger of its own service by itself (at each
    invocation's start until one is found; ``emitter.context.powertools_logger_correlation``); call it for a Logger
    of another service name, or with None to keep records free of Powertools' correlation id.
    """
    emitter._logger_explicit = True  # no auto-detection from now on (InvocationLifecycle._begin)
    emitter.correlation_id_provider = None if logger is None else logger.get_correlation_id
