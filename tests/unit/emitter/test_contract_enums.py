"""The contract's enums are built by ``enum._simple_enum`` (import time); they behave as ``class X(str, Enum)`` does:
same members, values, lookups, str/repr/format, JSON, pickling, hashing."""

from __future__ import annotations

import json
import pickle
from enum import Enum

import pytest

from emitter import contract

ENUMS = [contract.Dimension, contract.Unit, contract.Metric, contract.Outcome, contract.IdempotencyStatus,
         contract.ErrorClass, contract.EventSource, contract.LogKey]


def test_every_contract_enum_is_listed():
    found = {v for v in vars(contract).values() if isinstance(v, type) and issubclass(v, Enum) and v is not Enum
             and v is not contract._StrEnum}
    assert found == set(ENUMS)


@pytest.mark.parametrize("enum_cls", ENUMS, ids=lambda e: e.__name__)
def test_contract_enum_behaves_as_a_str_enum(enum_cls):
    ref = Enum(enum_cls.__name__, [(m.name, m.value) for m in enum_cls], type=str, module=enum_cls.__module__)
    assert [(m.name, m.value) for m in enum_cls] == [(m.name, m.value) for m in ref]
    assert list(enum_cls.__members__) == list(ref.__members__) and len(enum_cls) == len(ref)
    for m, r in zip(enum_cls, ref, strict=True):
        assert isinstance(m, str) and isinstance(m, Enum) and isinstance(m, enum_cls)
        assert (str(m), repr(m), format(m), f"{m}", "%s" % m) == (  # noqa: UP031 - %-format is a behaviour compared
            str(r), repr(r), format(r), f"{r}", "%s" % r)  # noqa: UP031
        assert m == m.value and hash(m) == hash(m.value) and m + "" == m.value
        assert enum_cls(m.value) is m and enum_cls[m.name] is m and getattr(enum_cls, m.name) is m
        assert json.dumps(m) == json.dumps(m.value) and json.dumps({m: 1}) == json.dumps({m.value: 1})
        assert pickle.loads(pickle.dumps(m)) is m
    with pytest.raises(ValueError):
        enum_cls("not a member value")


def test_metric_unit_property_survives():
    assert contract.Metric.RECORD_AGE.unit is contract.Unit.MILLISECONDS
    assert contract.Metric.EVENTS_RECEIVED.unit is contract.Unit.COUNT
