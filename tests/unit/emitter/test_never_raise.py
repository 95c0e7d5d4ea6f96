"""The emitter never raises into a handler and never drops silently (issue 10): numeric values are coerced or
dropped with a warning, unserializable properties are replaced and counted, a sink's BaseException other than
KeyboardInterrupt is contained. Each case failed (raised, or lost the record without a count) before the fix."""

from __future__ import annotations

import decimal
import enum

import pytest

from emitter import MemorySink


class Level(enum.IntEnum):
    HIGH = 3


class Ratio(float):
    pass


HUGE = 10**5000


@pytest.mark.parametrize(("value", "expected"), [
    (Level.HIGH, 3), (Ratio(0.5), 0.5), (decimal.Decimal("1.5"), 1.5), (decimal.Decimal(2), 2.0),
])
def test_numeric_values_are_coerced(make, read, value, expected):
    em, sink = make()

    @em.handler(operation="Op")
    def handler(event, context):
        em.add_metric("Items", value)
        return "ok"

    assert handler({}, None) == "ok"
    out = read(sink)
    assert out.metric_values("Items") == [expected]
    assert type(out.metric_values("Items")[0]) is type(expected)
    assert em.warnings == {}


@pytest.mark.parametrize("value", [True, False, HUGE, -HUGE, decimal.Decimal("NaN"), decimal.Decimal("sNaN"),
                                   decimal.Decimal("Infinity"), float("nan"), float("inf"), 2.0**400, "3"],
                         ids=["true", "false", "huge", "-huge", "nan-dec", "snan-dec", "inf-dec", "nan", "inf",
                              "2^400", "str"])
def test_bad_numeric_values_are_dropped_with_a_warning(make, read, value):
    em, sink = make()
    em.add_metric("Items", value)
    em.succeeded()
    em.flush()
    out = read(sink)
    assert out.metric_values("Items") == [] and out.metric_sum("EventsSucceeded") == 1
    assert em.warnings == {"invalid_metric_value": 1}
    assert out.warnings[0]["idemwatch_dropped"][0]["element"] == "metric:Items"


def test_huge_int_as_extra_property_keeps_the_record(make, read):
    em, sink = make()
    em.succeeded(key="k", amount=HUGE, nested={"n": [1, HUGE]})
    em.flush()
    out = read(sink)
    (rec,) = out.outcomes
    assert rec["outcome"] == "succeeded" and rec["amount"] == "<int>" and rec["nested"] == "<dict>"
    assert em.warnings == {"invalid_property": 2}
    assert out.metric_sum("EventsSucceeded") == 1


@pytest.mark.parametrize("call", ["key", "error_code", "side_effect_ref", "tenant_id"])
def test_huge_int_as_contract_field_keeps_the_record(make, read, call):
    em, sink = make()
    if call == "key":
        em.succeeded(key=HUGE)
    elif call == "error_code":
        em.retryable_failure(error_code=HUGE)
    elif call == "side_effect_ref":
        em.ambiguous_commit(side_effect_ref=HUGE)
    else:
        em.succeeded(tenant_id=HUGE)
    out = read(sink)
    assert len(out.outcomes) == 1
    assert "<int>" in sink.lines[-1]
    assert em.warnings == {"value_truncated": 1}


class RaisingGetattr:
    def __getattr__(self, name):
        raise RuntimeError("boom")


class RaisingRepr:
    def __repr__(self):
        raise RuntimeError("repr")

    def __str__(self):
        raise RuntimeError("str")

    def __len__(self):
        raise RuntimeError("len")


class RaisingItems(dict):
    def items(self):
        raise RuntimeError("items")


class RaisingIter(list):
    def __iter__(self):
        raise RuntimeError("iter")


@pytest.mark.parametrize("value", [RaisingGetattr(), RaisingItems(a=1), RaisingIter([1])],
                         ids=["getattr", "items", "iter"])
def test_hostile_property_is_replaced_and_counted(make, read, value):
    em, sink = make()
    em.succeeded(key="k", thing=value)
    (rec,) = read(sink).outcomes
    assert rec["thing"] == f"<{type(value).__name__}>"
    assert em.warnings == {"invalid_property": 1}


def test_object_whose_repr_and_len_raise_is_replaced_not_called(make, read):
    em, sink = make()
    em.succeeded(key="k", thing=RaisingRepr())
    (rec,) = read(sink).outcomes
    assert rec["thing"] == "<RaisingRepr>"


@pytest.mark.parametrize("where", ["record", "error_code", "key"])
def test_hostile_contract_values_are_replaced_and_counted(make, read, where):
    em, sink = make()
    if where == "record":
        em.succeeded(RaisingGetattr())
    elif where == "error_code":
        em.retryable_failure(error_code=RaisingGetattr())
    else:
        em.succeeded(key=RaisingGetattr())
    out = read(sink)
    assert len(out.outcomes) == 1
    assert em.warnings.get("invalid_property") == 1
    assert em.warnings.get("internal_error") is None


class ExitingSink:
    def __init__(self, exc):
        self.exc = exc

    def write_lines(self, lines):
        raise self.exc


@pytest.mark.parametrize("exc", [SystemExit(3), GeneratorExit(), RuntimeError("disk")])
def test_sink_base_exceptions_are_contained(make, exc, capsys):
    em, _ = make()
    em.sink = ExitingSink(exc)

    @em.handler(operation="Op")
    def handler(event, context):
        em.succeeded(key="k")
        return "result"

    assert handler({}, None) == "result"
    assert em.warnings["sink_error"] == 3  # cold_start record, succeeded record, EMF document
    assert "sink failed" in capsys.readouterr().err


def test_keyboard_interrupt_from_a_sink_still_stops(make):
    em, _ = make()
    em.sink = ExitingSink(KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        em.succeeded()


def test_flush_of_intenum_inside_the_wrapper_keeps_every_metric(read):
    from emitter import Emitter

    sink = MemorySink()
    em = Emitter(service="s", sink=sink)

    @em.handler(operation="Op")
    def handler(event, context):
        em.succeeded()
        em.add_metric("Level", Level.HIGH)

    handler({}, None)
    out = read(sink)
    assert out.metric_sum("EventsSucceeded") == 1 and out.metric_values("Level") == [3]


def test_fuzzed_property_values_never_lose_the_record():
    """Any mix of JSON-ish values, huge ints, non-finite floats, Decimals, enums, bytes and hostile objects: the
    outcome record is always written, and every line is valid JSON."""
    import json

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from emitter import Emitter

    leaves = st.one_of(
        st.none(), st.booleans(), st.integers(), st.integers(min_value=10**4400, max_value=10**4500), st.floats(),
        st.text(max_size=20), st.binary(max_size=8), st.decimals(), st.sampled_from([Level.HIGH, Ratio(1.5)]),
        st.builds(RaisingGetattr), st.builds(RaisingRepr),
    )
    values = st.recursive(leaves, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids,
                                                                                            max_size=3), max_leaves=8)

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(props=st.dictionaries(st.sampled_from(["a", "b", "amount", "tags"]), values, max_size=3),
           key=st.one_of(st.text(max_size=10), st.integers(), st.builds(RaisingGetattr)))
    def check(props, key):
        sink = MemorySink()
        em = Emitter(service="s", sink=sink)
        em.succeeded(key=key, **props)
        em.flush()
        objs = [json.loads(line) for line in sink.lines]
        assert sum(1 for o in objs if o.get("outcome") == "succeeded") == 1
        assert "internal_error" not in em.warnings

    check()


@pytest.mark.parametrize("prop", ["idempotency_status", "error_class"])
@pytest.mark.parametrize("value", [[], {}, RaisingGetattr()], ids=["list", "dict", "hostile"])
def test_unhashable_status_or_class_is_a_counted_invalid_property(make, read, prop, value):
    em, sink = make()
    em.succeeded(key="k", **{prop: value})
    assert read(sink).count("succeeded") == 1
    assert em.warnings.get("invalid_property") == 1


class _LenRaises(str):
    def __len__(self):
        raise RuntimeError("len")


class _HashRaises(str):
    def __hash__(self):
        raise RuntimeError("hash")


class _EqRaises(str):
    __hash__ = str.__hash__

    def __eq__(self, other):
        raise RuntimeError("eq")


class _StrRaises(str):
    def __str__(self):
        raise RuntimeError("str")

    def __repr__(self):
        raise RuntimeError("repr")


@pytest.mark.parametrize("cls", [_LenRaises, _HashRaises, _EqRaises, _StrRaises], ids=lambda c: c.__name__)
def test_batch_item_failures_of_a_hostile_str_subclass_never_raises(make, read, cls):
    """Issue 36: a ``str`` subclass whose ``__len__`` (or ``__hash__``, ``__eq__``, ``__str__``) raises was the
    emitter's one raise into a handler. The identifier is read as the plain ``str`` it holds (``str.__str__`` does
    not call the subclass' methods): returned as an exact ``str``, listed once, and recorded."""
    em, sink = make()
    resp = em.batch_item_failures([cls("m-1"), cls("m-1"), "m-2"])
    assert resp == {"batchItemFailures": [{"itemIdentifier": "m-1"}, {"itemIdentifier": "m-2"}]}
    assert all(type(item["itemIdentifier"]) is str for item in resp["batchItemFailures"])
    em.flush()
    out = read(sink)
    assert [o["event_id"] for o in out.outcomes] == ["m-1", "m-2"]
    assert out.metric_sum("BatchItemFailures") == 2
    assert em.warnings == {"duplicate_item_identifier": 1}


def test_batch_item_failures_of_an_iterable_that_raises_fails_the_whole_batch(make, read):
    """An iterable of failed items that raises part-way: the items read so far are returned and recorded, plus an
    empty identifier so that Lambda retries the whole batch (nothing is lost); the error is reported, not raised."""
    em, sink = make()

    def failed():
        yield "m-1"
        raise RuntimeError("handler bug")

    resp = em.batch_item_failures(failed())
    assert resp == {"batchItemFailures": [{"itemIdentifier": "m-1"}, {"itemIdentifier": ""}]}
    assert em.warnings == {"invalid_property": 1}
    out = read(sink)
    assert out.warnings[0]["idemwatch_dropped"][0]["reason"] == (
        "failed items could not be read (RuntimeError); '' returned: the whole batch fails")
    assert [o["event_id"] for o in out.outcomes] == ["m-1"]
    assert em.batch_item_failures(None) == {"batchItemFailures": [{"itemIdentifier": ""}]}
