"""idemwatch for Powertools for AWS Lambda (Python) users: outcomes from ``@idempotent``, ``idempotent_function``
and ``BatchProcessor`` without rewriting handlers.

    from emitter import Emitter
    from emitter.powertools import instrument, process_partial_response, use_logger  # + async_process_partial_response

    em = Emitter()
    persistence = instrument(DynamoDBPersistenceLayer(table_name="idempotency"), em)

Importing this module imports ``aws_lambda_powertools`` (only when its functions are called); ``import emitter``
alone never does. Guide: ``docs/powertools.md``.
"""

from emitter.powertools.batch import async_process_partial_response, process_partial_response
from emitter.powertools.exceptions import BatchStopped, IntegrationError, IntegrationWarning
from emitter.powertools.idempotency import instrument
from emitter.powertools.logger import use_logger
from emitter.powertools.memory import InMemoryPersistenceLayer
from emitter.powertools.scope import record_scope

__all__ = [
    "BatchStopped",
    "InMemoryPersistenceLayer",
    "IntegrationError",
    "IntegrationWarning",
    "async_process_partial_response",
    "instrument",
    "process_partial_response",
    "record_scope",
    "use_logger",
]
