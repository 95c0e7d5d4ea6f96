"""The differential harness (``tests/support/powertools_harness.py``): hypothesis-generated sequences of invocations
(replays, concurrent duplicates, payload changes, expiries, timeouts, store failures, slow claims, batch mixes of
SQS, Kinesis and DynamoDB Streams) run bare and instrumented against the same kind of store, with identical return
values, exceptions, warnings, handler runs, requests and stored items; the instrumented run's outcomes match what
an oracle derives from Powertools' observable behaviour. 200 sequences per store (600 in all), derandomized: CI runs
the same ones every time (``--hypothesis-show-statistics`` lists the idempotency states they reached). Every test
here fails on 620890b (the integration before issue 33)."""

from __future__ import annotations

import itertools

import pytest

pytest.importorskip("aws_lambda_powertools")
pytest.importorskip("redis")  # Powertools' cache layer module imports it (the harness hands it its own client)

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.support.powertools_harness import INCONSISTENT, DynamoStore, World, oracle_counts

EXAMPLES = 200

keys = st.integers(0, 2)
amounts = st.integers(0, 1)
remaining = st.sampled_from([1000, 30_000])
invoke = st.tuples(st.just("invoke"), st.sampled_from("AB"), keys, amounts,
                   st.sampled_from(["ok", "ok", "ok", "fail", "timeout", "nested", "nested", "nokey"]), remaining)
batch = st.tuples(st.just("batch"), st.sampled_from("AB"), st.sampled_from(["sqs", "kinesis", "ddb"]),
                  st.lists(st.tuples(keys, amounts, st.sampled_from(["ok", "ok", "fail", "flaky", "nokey", "timeout"])),
                           min_size=1, max_size=4),
                  st.booleans(), remaining)
advance = st.tuples(st.just("advance"), st.sampled_from([500, 1500, 2500, 31_000, 3_700_000]))
latency = st.tuples(st.just("latency"), st.sampled_from([1500, 31_000]))
fail = st.tuples(st.just("fail"), st.sampled_from(["_put_record", "_get_record", "_update_record", "_delete_record"]),
                 st.sampled_from(["connection", "throttle"]), st.one_of(invoke, batch))
steps = st.lists(st.one_of(invoke, invoke, batch, advance, advance, latency, fail), min_size=1, max_size=8)
configs = st.fixed_dictionaries({"payload": st.booleans(), "raise_no_key": st.booleans(),
                                 "local_cache": st.booleans(), "expires": st.sampled_from([2, 3600]),
                                 "raise_all": st.booleans()})
_worlds = itertools.count()


def check(store: str, config: dict, sequence: list, dynamo: DynamoStore | None = None) -> None:
    prefix = f"w{next(_worlds)}"
    bare = World(store, config, prefix, instrumented=False, dynamo=dynamo)
    bare.run(sequence)
    inst = World(store, config, prefix, instrumented=True, dynamo=dynamo)
    inst.run(sequence)
    assert inst.steps == bare.steps  # return values, exceptions, warnings (and where they point)
    assert [(c.key, c.ran, c.result) for c in inst.calls] == [(c.key, c.ran, c.result) for c in bare.calls]
    assert inst.requests == bare.requests  # DynamoDB: the parameters sent, less the documented ReturnValues
    if store == "cache":
        assert inst.redis.calls == bare.redis.calls
    assert inst.stored() == bare.stored()
    want, least_inconsistent = oracle_counts(inst)
    got = inst.outcomes()
    inconsistent = got.pop(("store_error", INCONSISTENT), 0)
    assert got == want
    assert least_inconsistent <= inconsistent <= 3 * len(inst.calls)
    for outcome in sorted(map(str, got)) + (["store_error: IdempotencyInconsistentState"] if inconsistent else []):
        event(outcome)  # --hypothesis-show-statistics: which states the sequences reached


SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def dynamo(moto_url):
    import boto3

    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                    region_name="us-east-1")
    return DynamoStore(session, moto_url)


@SETTINGS
@given(config=configs, sequence=steps)
def test_memory_layer_bare_equals_instrumented(config, sequence):
    check("memory", config, sequence)


@SETTINGS
@given(config=configs, sequence=steps)
def test_cache_layer_bare_equals_instrumented(config, sequence):
    check("cache", config, sequence)


@pytest.mark.slow  # moto over HTTP: about 40 s on 2 busy cores
@SETTINGS
@given(config=configs, sequence=steps)
def test_dynamodb_bare_equals_instrumented(dynamo, config, sequence):
    check("dynamodb", config, sequence, dynamo)
