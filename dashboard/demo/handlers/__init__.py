"""The four demo handlers. Each module has ``make_handler(emitter, environment)``: the init code
of one execution environment, returning ``handler(event, context)`` wrapped by the emitter."""

from __future__ import annotations

from ..constants import CREATE_CASE_API, LEDGER_STREAM, ORDERS_CONSUMER, PAYMENT_CAPTURE
from . import create_case_api, ledger_stream, orders_consumer, payment_capture

FACTORIES = {
    ORDERS_CONSUMER: orders_consumer.make_handler,
    LEDGER_STREAM: ledger_stream.make_handler,
    CREATE_CASE_API: create_case_api.make_handler,
    PAYMENT_CAPTURE: payment_capture.make_handler,
}

__all__ = ["FACTORIES"]
