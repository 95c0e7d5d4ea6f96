"""Exceptions of the Powertools integration."""

from __future__ import annotations

from emitter.exceptions import EmitterError


class IntegrationError(EmitterError, TypeError):
    """The object handed to the integration is not what it instruments (e.g. not a ``BasePersistenceLayer`` or not a
    Powertools batch processor). Raised at set-up (init phase), never inside an invocation."""
