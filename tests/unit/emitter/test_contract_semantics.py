"""Outcome mapping on every call path, dimension lifetimes, the off switch, Lambda log-level filtering, the poison
default and the Powertools Logger context keys (issue 16)."""

from __future__ import annotations

import pytest

from emitter import ErrorClassifier
from emitter.contract import ErrorClass, lambda_filtered_level, metrics_disabled


# Stand-ins named like Powertools' exceptions (the real package is exercised in tests/functional/emitter).
class IdempotencyAlreadyInProgressError(Exception):
    pass


class IdempotencyValidationError(Exception):
    pass


class IdempotencyPersistenceLayerError(Exception):
    pass


class SubclassedInProgress(IdempotencyAlreadyInProgressError):
    pass


CASES = [
    (IdempotencyAlreadyInProgressError, "duplicate_in_progress", "DuplicateInProgress"),
    (SubclassedInProgress, "duplicate_in_progress", "DuplicateInProgress"),
    (IdempotencyValidationError, "payload_conflict", "PayloadConflict"),
    (IdempotencyPersistenceLayerError, "store_error", "IdempotencyStoreError"),
]


@pytest.mark.parametrize(("exc_type", "outcome", "metric"), CASES)
def test_failure_records_the_mapped_outcome(make, read, exc_type, outcome, metric):
    em, sink = make()
    with em.invocation(operation="Op"):
        c = em.failure(exc_type("boom"))
    out = read(sink)
    assert [o["outcome"] for o in out.outcomes if o["outcome"] != "cold_start"] == [outcome]
    assert out.metric_sum(metric) == 1
    assert out.metric_sum("PermanentFailure") == 0 and out.metric_sum("RetryableFailure") == 0
    assert c.error_code == metric
    assert "boom" not in "".join(sink.lines)


@pytest.mark.parametrize(("exc_type", "outcome", "metric"), CASES)
def test_wrapper_records_the_mapped_outcome_once(make, read, exc_type, outcome, metric):
    em, sink = make()

    @em.handler
    def handler(event, context):
        raise exc_type("x")

    with pytest.raises(exc_type):
        handler({}, None)
    out = read(sink)
    assert out.count(outcome) == 1 and out.metric_sum(metric) == 1

    # the handler recorded it itself, then re-raised: the wrapper does not record it again
    em2, sink2 = make()

    @em2.handler
    def handler2(event, context):
        try:
            raise exc_type("x")
        except exc_type as e:
            em2.failure(e)
            raise

    with pytest.raises(exc_type):
        handler2({}, None)
    assert read(sink2).count(outcome) == 1


def test_invocation_scope_records_mapped_outcome_and_ignores_others(make, read):
    em, sink = make()
    with pytest.raises(IdempotencyValidationError), em.invocation(operation="Op"):
        raise IdempotencyValidationError()
    with pytest.raises(ValueError), em.invocation(operation="Op"):
        raise ValueError()
    out = read(sink)
    assert [o["outcome"] for o in out.outcomes if o["outcome"] != "cold_start"] == ["payload_conflict"]


def test_marked_cause_is_not_recorded_twice(make, read):
    em, sink = make()
    inner = RuntimeError("client error")
    inner._idemwatch_recorded = "store_error"
    try:
        try:
            raise inner
        except RuntimeError as e:
            raise IdempotencyPersistenceLayerError("wrapped") from e
    except IdempotencyPersistenceLayerError as outer:
        em.failure(outer)
    assert read(sink).count("store_error") == 0


def test_unrelated_failure_inside_a_marked_context_is_recorded(make, read):
    em, sink = make()
    try:
        try:
            e = IdempotencyAlreadyInProgressError()
            e._idemwatch_recorded = "duplicate_in_progress"
            raise e
        except IdempotencyAlreadyInProgressError:
            raise ValueError("handler's own bug")
    except ValueError as v:
        em.failure(v)
    assert read(sink).count("permanent_failure") == 1


def _emf_sets(out):
    return [d["_aws"]["CloudWatchMetrics"][0]["Dimensions"] for d in out.emf]


def test_add_dimension_lasts_one_flush_defaults_persist(make, read):
    em, sink = make(dimensions={"Env": "prod"})

    @em.handler(operation="Op")
    def handler(event, context):
        if event.get("region"):
            em.add_dimension("Region", event["region"])
        em.succeeded()

    handler({"region": "eu-west-1"}, None)
    handler({}, None)
    em.set_default_dimensions(Tier="gold")
    handler({}, None)
    sets = _emf_sets(read(sink))
    assert sets[0] == [["Service", "Operation", "Env", "Region"], ["Service", "Env", "Region"]]
    assert sets[1] == [["Service", "Operation", "Env"], ["Service", "Env"]]
    assert sets[2] == [["Service", "Operation", "Env", "Tier"], ["Service", "Env", "Tier"]]
    docs = read(sink).emf
    assert "Region" not in docs[1] and docs[2]["Tier"] == "gold"
    em.clear_default_dimensions()
    handler({}, None)
    assert _emf_sets(read(sink))[3] == [["Service", "Operation"], ["Service"]]


def test_add_dimension_cleared_even_when_nothing_was_flushed(make, read):
    em, sink = make()
    em.add_dimension("Region", "eu")
    assert em.flush() == []
    em.succeeded()
    em.flush()
    assert _emf_sets(read(sink)) == [[["Service", "Operation"], ["Service"]]]


@pytest.mark.parametrize(("env", "expected"), [
    ({}, False),
    ({"IDEMWATCH_METRICS_DISABLED": "true"}, True),
    ({"IDEMWATCH_METRICS_DISABLED": "0", "POWERTOOLS_METRICS_DISABLED": "true"}, False),  # ours decides
    ({"POWERTOOLS_METRICS_DISABLED": "TRUE"}, True),
    ({"POWERTOOLS_METRICS_DISABLED": "false", "POWERTOOLS_DEV": "true"}, False),
    ({"POWERTOOLS_DEV": "1"}, True),  # Powertools: dev mode disables metrics unless told otherwise
])
def test_metrics_disabled_rule(env, expected):
    assert metrics_disabled(env) is expected


def test_off_switch_keeps_outcome_records(make, read, monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    em, sink = make()
    with em.invocation(operation="Op"):
        em.succeeded(key="k")
    out = read(sink)
    assert out.emf == [] and out.count("succeeded") == 1
    em2, sink2 = make(metrics_disabled=False)
    em2.succeeded()
    em2.flush()
    assert len(read(sink2).emf) == 1


@pytest.mark.parametrize(("fmt", "level", "expected"), [
    ("JSON", "WARN", "WARN"), ("json", "error", "ERROR"), ("JSON", "FATAL", "FATAL"),
    ("JSON", "INFO", None), ("JSON", "DEBUG", None), ("Text", "WARN", None), (None, "WARN", None), ("JSON", None, None),
])
def test_lambda_filtered_level(fmt, level, expected):
    env = {k: v for k, v in (("AWS_LAMBDA_LOG_FORMAT", fmt), ("AWS_LAMBDA_LOG_LEVEL", level)) if v is not None}
    assert lambda_filtered_level(env) == expected


def _lambda_filter(lines, threshold):
    """Lambda's documented filter: a line's level is its ``level`` key (INFO when missing or invalid)."""
    import json

    order = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"]
    aliases = {"WARNING": "WARN", "CRITICAL": "FATAL"}
    kept = []
    for line in lines:
        lv = str(json.loads(line).get("level", "INFO")).upper()
        lv = aliases.get(lv, lv)
        lv = lv if lv in order else "INFO"
        if order.index(lv) >= order.index(threshold):
            kept.append(line)
    return kept


def test_log_level_filter_keeps_emf_and_warns_once(make, read, monkeypatch):
    monkeypatch.setenv("AWS_LAMBDA_LOG_FORMAT", "JSON")
    monkeypatch.setenv("AWS_LAMBDA_LOG_LEVEL", "WARN")
    em, sink = make()

    @em.handler(operation="Op")
    def handler(event, context):
        em.succeeded(key="k")
        em.duplicate_in_progress(key="k2")

    handler({}, None)
    handler({}, None)
    kept = _lambda_filter(sink.lines, "WARN")

    class S:
        lines = kept

    out = read(S)
    assert out.metric_sum("EventsSucceeded") == 2 and out.metric_sum("DuplicateInProgress") == 2
    assert all(d["level"] == "WARN" for d in out.emf)
    warn = [o for o in out.logs if o.get("idemwatch_warning") == "log_level_filtered"]
    assert len(warn) == 1 and warn[0]["level"] == "WARN"
    assert em.warnings["log_level_filtered"] == 1
    assert out.count("succeeded") == 0  # INFO records are filtered: that is what the warning says


def test_no_level_key_on_emf_without_filtering(make, read):
    em, sink = make()
    em.succeeded()
    em.flush()
    assert "level" not in read(sink).emf[0]


def test_poison_default_from_environment(monkeypatch):
    monkeypatch.setenv("IDEMWATCH_POISON_AFTER_ATTEMPTS", "3")
    c = ErrorClassifier()
    assert c.poison_after_attempts == 3
    assert c.classify(TimeoutError(), 2).error_class is ErrorClass.RETRYABLE
    assert c.classify(TimeoutError(), 3).error_class is ErrorClass.POISON
    assert c.classify(ValueError(), 5).error_class is ErrorClass.PERMANENT
    assert ErrorClassifier(poison_after_attempts=None).poison_after_attempts is None
    monkeypatch.setenv("IDEMWATCH_POISON_AFTER_ATTEMPTS", "zero")
    assert ErrorClassifier().poison_after_attempts is None


def test_function_arn_and_memory_size_from_a_lambda_context(make, read):
    class Ctx:
        aws_request_id = "req-1"
        function_name = "fn"
        invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:fn"
        memory_limit_in_mb = "512"

        def get_remaining_time_in_millis(self):
            return 1000

    em, sink = make()
    with em.invocation(Ctx(), operation="Op"):
        em.succeeded()
    rec = read(sink).outcomes[-1]
    assert rec["function_arn"] == Ctx.invoked_function_arn and rec["function_memory_size"] == 512
    em2, sink2 = make()
    with em2.invocation({"aws_request_id": "r"}, operation="Op"):
        em2.succeeded()
    assert "function_arn" not in read(sink2).outcomes[-1]
