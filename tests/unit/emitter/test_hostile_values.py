"""Every public Emitter method fed hostile values (hypothesis): ``str`` and ``int`` subclasses whose methods raise,
objects whose attributes raise, huge ints, NaN, bytes, self-containing lists, EventRecords holding any of these,
events and contexts built from them. The emitter never raises into the handler (``check_time_budget`` raises
TimeoutBudgetExceeded by design, nothing else), every line it writes is one JSON object, every outcome call writes
its record (no ``internal_error``), and no secret passed as a property reaches a line."""

from __future__ import annotations

import decimal
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emitter import Emitter, EventRecord, EventSource, MemorySink, Outcome, TimeoutBudgetExceeded

NOW = 1_767_608_401_000
SECRET = "S3CR3T-hostile"


def _boom(*_args, **_kwargs):
    raise RuntimeError("hostile")


class StrLen(str):
    __len__ = _boom


class StrHash(str):
    __hash__ = _boom  # type: ignore[assignment]


class StrEq(str):
    __hash__ = str.__hash__
    __eq__ = _boom  # type: ignore[assignment]


class StrAll(str):
    __len__ = __str__ = __repr__ = __format__ = __iter__ = __getitem__ = __contains__ = _boom  # type: ignore[assignment]
    __hash__ = str.__hash__


class IntAll(int):
    __repr__ = __str__ = __index__ = __float__ = __format__ = __bool__ = __gt__ = __lt__ = _boom  # type: ignore[assignment]
    __hash__ = int.__hash__


class Huge(int):
    """An int over the 4,300-digit limit of str(); its own repr, so that hypothesis can print an example."""

    def __repr__(self) -> str:
        return "Huge(10**5000)"


class GetattrRaises:
    def __getattr__(self, name):
        raise RuntimeError(name)


class ClassRaises:
    """An object whose ``__class__`` raises (so ``isinstance`` on it raises). Hypothesis cannot print one, so the
    strategies draw :data:`CLASS_RAISES` and :func:`real` makes the object right before the call."""

    @property
    def __class__(self):  # type: ignore[override]
        raise RuntimeError("__class__")


class _ClassRaisesMarker:
    def __repr__(self) -> str:
        return "ClassRaises()"


CLASS_RAISES = _ClassRaisesMarker()


def real(value, depth=0):
    """``value`` with every :data:`CLASS_RAISES` in it (in plain lists, dicts and tuples, and EventRecord slots) made
    real; a self-containing list is left as it is below a few levels."""
    if value is CLASS_RAISES:
        return ClassRaises()
    if depth > 8:
        return value
    if type(value) in (list, tuple):
        return type(value)(real(v, depth + 1) for v in value)
    if type(value) is dict:
        return {k: real(v, depth + 1) for k, v in value.items()}
    if type(value) is EventRecord:
        for slot in EventRecord.__slots__:
            setattr(value, slot, real(getattr(value, slot), depth + 1))
    return value


class BoolRaises:
    __bool__ = __len__ = __iter__ = __repr__ = __str__ = _boom


class DictItemsRaise(dict):
    items = keys = values = __iter__ = __len__ = _boom  # type: ignore[assignment]


class ListIterRaises(list):
    __iter__ = __len__ = __getitem__ = _boom  # type: ignore[assignment]


def _self_list() -> list:
    x: list = [1]
    x.append(x)
    return x


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.sampled_from([Huge(10**5000), 2**360 + 1]),
    st.floats(), st.text(max_size=8), st.binary(max_size=4), st.decimals(),
    st.sampled_from([decimal.Decimal("NaN"), decimal.Decimal("sNaN")]),
    st.builds(StrLen, st.text(max_size=4)), st.builds(StrHash, st.text(max_size=4)),
    st.builds(StrEq, st.text(max_size=4)), st.builds(StrAll, st.text(max_size=4)), st.builds(IntAll, st.integers(-5, 5)),
    st.builds(GetattrRaises), st.just(CLASS_RAISES), st.builds(BoolRaises),
    st.builds(DictItemsRaise), st.builds(ListIterRaises), st.builds(_self_list), st.just(EventSource.SQS),
)
values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
    st.one_of(st.text(max_size=5), st.builds(StrAll, st.text(max_size=3))), kids, max_size=3), max_leaves=6)


@st.composite
def records(draw):
    if draw(st.booleans()):
        return draw(values)
    rec = EventRecord(event_id="m-1", event_source=EventSource.SQS)
    for slot in ("event_id", "event_source", "attempt", "record_age_ms", "sent_at_ms", "idempotency_key",
                 "correlation_id", "details"):
        if draw(st.booleans()):
            setattr(rec, slot, draw(values))
    return rec


@st.composite
def events(draw):
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(values)
    if kind == 1:
        return {"Records": draw(st.one_of(values, st.lists(values, max_size=3)))}
    if kind == 2:
        return {"Records": [{"eventSource": "aws:sqs", "messageId": draw(values), "eventSourceARN": draw(values),
                             "attributes": draw(st.one_of(values, st.fixed_dictionaries(
                                 {"SentTimestamp": values, "ApproximateReceiveCount": values}))),
                             "messageAttributes": draw(values)}]}
    return {"requestContext": {"connectionId": draw(values), "eventType": draw(values), "requestId": draw(values),
                               "messageId": draw(values)}, "headers": draw(values)}


OUTCOME_METHODS = ["succeeded", "duplicate_completed", "duplicate_in_progress", "payload_conflict", "claimed",
                   "stale_claim_takeover", "retryable_failure", "permanent_failure", "poison_message",
                   "ambiguous_commit", "side_effect_started", "store_error"]

calls = st.one_of(
    st.tuples(st.sampled_from(OUTCOME_METHODS), records(), values,
              st.dictionaries(st.sampled_from(["error_code", "expires_at_ms", "side_effect_ref", "tenant_id",
                                               "correlation_id", "idempotency_status", "error_class", "retryable",
                                               "remaining_time_ms", "operation", "note", "password"]),
                              values, max_size=3)),
    st.tuples(st.just("record_outcome"), st.one_of(st.sampled_from(list(Outcome)), values), records(), values),
    st.tuples(st.just("batch_item_failures"), st.one_of(values, st.lists(st.one_of(records(), values), max_size=4))),
    st.tuples(st.sampled_from(["records", "adapt", "record_for"]), events()),
    st.tuples(st.just("received"), records()),
    st.tuples(st.just("check_time_budget"), values, records(), values),
    st.tuples(st.sampled_from(["failure", "classify"]), st.sampled_from([ValueError("x"), RuntimeError("y")]),
              records()),
    st.tuples(st.just("add_metric"), values, values, values, values, values),
    st.tuples(st.just("add_dimension"), values, values),
    st.tuples(st.just("set_default_dimensions"), st.dictionaries(st.text(min_size=1, max_size=5), values, max_size=2)),
    st.tuples(st.just("set_timestamp"), values),
    st.tuples(st.sampled_from(["flush", "pending", "remaining_time_ms", "clear_default_dimensions"])),
)


def _call(em: Emitter, call: tuple) -> None:
    name, *args = real(call)
    method = getattr(em, name)
    if name in OUTCOME_METHODS:
        record, key, props = args
        if "password" in props:
            props["password"] = SECRET
        method(record, key, **props)
    elif name == "record_outcome":
        method(*args)
    elif name == "check_time_budget":
        try:
            method(*args)
        except TimeoutBudgetExceeded:  # by design: the side effect is refused
            pass
    elif name == "set_default_dimensions":
        method(**args[0])
    else:
        method(*args)


HANDLER_INPUTS = {"program": st.lists(calls, min_size=1, max_size=6), "event": events(), "context": st.one_of(
    st.none(), values, st.fixed_dictionaries({"aws_request_id": values, "function_name": values,
                                              "remaining_time_ms": values}))}


def _check(program: list, context: object, event: object) -> None:
    sink = MemorySink()
    em = Emitter(service="orders", sink=sink, clock=lambda: NOW)

    @em.handler(operation="Hostile")
    def handler(ev, ctx):
        for call in program:
            _call(em, call)
        return {"ok": True}

    assert handler(real(event), real(context)) == {"ok": True}
    for call in program:  # outside an invocation too
        _call(em, call)
    em.flush()
    for line in sink.lines:
        assert isinstance(json.loads(line), dict)
        assert SECRET not in line
    assert "internal_error" not in em.warnings, em.warnings


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**HANDLER_INPUTS)
def test_public_methods_never_raise_on_hostile_values(program, context, event):
    _check(program, context, event)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**HANDLER_INPUTS)
def test_public_methods_never_raise_on_hostile_values_many(program, context, event):
    _check(program, context, event)
