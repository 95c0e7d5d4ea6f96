"""The contract's enums are plain ``class X(str, Enum)``: each member is the ``str`` of its value where the rest of
the project uses it as one (JSON, dict keys, comparisons), is found by its value, and pickles to itself."""

from __future__ import annotations

import json
import pickle
from enum import Enum

import pytest

from emitter import contract

ENUMS = [contract.Dimension, contract.Unit, contract.Metric, contract.Outcome, contract.IdempotencyStatus,
         contract.ErrorClass, contract.EventSource, contract.LogKey]


def test_every_contract_enum_is_listed():
    found = {v for v in vars(contract).values() if isinstance(v, type) and issubclass(v, Enum) and v is not Enum}
    assert found == set(ENUMS)


@pytest.mark.parametrize("enum_cls", ENUMS, ids=lambda e: e.__name__)
def test_contract_enum_members_are_their_values_as_str(enum_cls):
    assert issubclass(enum_cls, str) and len(enum_cls) == len({m.value for m in enum_cls})
    for m in enum_cls:
        assert type(m.value) is str
        assert m == m.value and hash(m) == hash(m.value) and m + "" == m.value
        assert {m.value: 1}[m] == 1 and {m: 1}[m.value] == 1  # a plain str finds a member key and the reverse
        assert enum_cls(m.value) is m and enum_cls[m.name] is m
        assert json.dumps(m) == json.dumps(m.value) and json.dumps({m: 1}) == json.dumps({m.value: 1})
        assert pickle.loads(pickle.dumps(m)) is m
    with pytest.raises(ValueError):
        enum_cls("not a member value")


def test_metric_unit_property():
    assert contract.Metric.RECORD_AGE.unit is contract.Unit.MILLISECONDS
    assert contract.Metric.REMAINING_TIME_AT_SIDE_EFFECT.unit is contract.Unit.MILLISECONDS
    assert {m for m in contract.Metric if m.unit is contract.Unit.COUNT} == set(contract.Metric) - {
        contract.Metric.RECORD_AGE, contract.Metric.REMAINING_TIME_AT_SIDE_EFFECT}


def test_the_tables_are_keyed_by_members_and_read_only():
    assert contract.OUTCOME_METRIC[contract.Outcome.RECEIVED] is contract.Metric.EVENTS_RECEIVED
    assert contract.OUTCOME_METRIC[contract.Outcome.CLAIMED] is None
    assert contract.METRIC_OUTCOME[contract.Metric.COLD_START] is contract.Outcome.COLD_START
    assert contract.ERROR_CLASS_OUTCOME[contract.ErrorClass.POISON] is contract.Outcome.POISON_MESSAGE
    assert set(contract.METRIC_DESCRIPTIONS) == set(contract.Metric)
    assert contract.LOG_KEYS == tuple(k.value for k in contract.LogKey)
    with pytest.raises(TypeError):
        contract.OUTCOME_METRIC[contract.Outcome.CLAIMED] = contract.Metric.COLD_START  # type: ignore[index]
