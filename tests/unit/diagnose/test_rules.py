"""Each diagnose rule on generated trails (tests/unit/diagnose/trails.py): found, a look-alike that is not, not
observable; judged by the offline Logs Insights engine.

Every case's trail is ingested under its own log group and one diagnosis judges them all (the queries group by
``@log``). The expected status and count of each case are stated by hand in ``trails.CASES`` from how the trail
was written.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from alarms.diagnose.evaluate import diagnose
from alarms.diagnose.rules import RULES, RULES_BY_ID, Rule, render_query
from alarms.diagnose.sources import EngineSource
from alarms.diagnose.types import DiagnoseOptions, Finding, FindingStatus
from tests.unit.diagnose.trails import ACCOUNT, CASES, Case, Trail, all_cases_events, case_log_group


def engine_source(groups: dict[str, list[dict]]) -> EngineSource:
    from collector.ingest import EventStore
    from collector.insights import harden_connection

    store = EventStore(account_id=ACCOUNT)
    for group, events in groups.items():
        store.ingest_events(events, group)
    harden_connection(store.connection)
    return EngineSource(store.connection, "trails", keep=store)


def judge(groups: dict[str, list[dict]], options: DiagnoseOptions | None = None,
          rules: Sequence[Rule] = RULES) -> list[Finding]:
    src = engine_source(groups)
    try:
        return diagnose(src, options, rules)
    finally:
        src.close()


def by_rule(findings: Sequence[Finding], group: str) -> dict[str, Finding]:
    return {f.rule: f for f in findings if f.log_group == group}


@pytest.fixture(scope="module")
def all_findings() -> list[Finding]:
    return judge(all_cases_events())


@pytest.mark.parametrize("index", range(len(CASES)), ids=lambda i: f"{CASES[i].rule}-{CASES[i].status}-{CASES[i].name}")
def test_case(all_findings: list[Finding], index: int) -> None:
    case: Case = CASES[index]
    found = by_rule(all_findings, case_log_group(index))
    f = found[case.rule]
    assert f.status.value == case.status, (f.status, f.message)
    assert f.function == f"case-{index:02d}" and f.account_id == ACCOUNT
    if case.status == "fail":
        assert f.count == case.count, f.message
        assert len(f.examples) == min(case.count, DiagnoseOptions().examples)
        assert all(e.records for e in f.examples)
        assert f.first is not None and f.last is not None and f.first <= f.last
        # a trail built for one anti-pattern: no other rule finds anything in it
        assert [r for r, g in found.items() if g.status is FindingStatus.FAIL] == [case.rule], found
    else:
        assert f.count == 0 and not f.examples and f.first is None


def test_every_rule_has_its_three_cases() -> None:
    have = {(c.rule, c.status) for c in CASES}
    for r in RULES:
        assert {(r.id, s) for s in ("fail", "pass", "unknown")} <= have, r.id


def test_rules_not_applying_give_no_finding(all_findings: list[Finding]) -> None:
    sqs = by_rule(all_findings, case_log_group(0))
    assert "IW106" in sqs and "IW108" not in sqs  # a stream rule says nothing about an SQS consumer
    stream = by_rule(all_findings, case_log_group(next(i for i, c in enumerate(CASES) if c.rule == "IW108")))
    assert "IW108" in stream and "IW106" not in stream  # an SQS rule says nothing about a Kinesis consumer


def _one(name: str) -> tuple[str, Trail]:
    i = next(i for i, c in enumerate(CASES) if c.name == name)
    return case_log_group(i), CASES[i].build()


def test_examples_prove_the_finding_with_hashed_keys(all_findings: list[Finding]) -> None:
    from emitter.redact import KeyHasher

    group, _ = _one("processed again an hour later")
    f = by_rule(all_findings, group)["IW105"]
    ex = f.examples[0]
    hashed = KeyHasher(":")("order-1")
    assert ex.entity == hashed
    assert [r["outcome"] for r in ex.records] == ["claimed", "succeeded", "duplicate_completed", "claimed", "succeeded"]
    assert {r["idempotency_key"] for r in ex.records} == {hashed}
    assert {r["log_stream"] for r in ex.records} == {"env-a", "env-b"}
    assert "order-1" not in repr(f.to_dict())  # the raw key never reaches the report


def test_salted_key_hashing() -> None:
    from emitter.redact import KeyHasher

    group, trail = _one("processed again an hour later")
    f = by_rule(judge({group: trail.log_events()}, DiagnoseOptions(key_hash_salt="s3cret"),
                      [RULES_BY_ID["IW105"]]), group)["IW105"]
    assert f.examples[0].entity == KeyHasher(":", "s3cret")("order-1") != KeyHasher(":")("order-1")


def test_budget_from_options_overrides_the_observed_one() -> None:
    group, trail = _one("timeout with 9 s left under a 2 s budget; little time but finished")
    rule = [RULES_BY_ID["IW109"]]
    assert by_rule(judge({group: trail.log_events()}, rules=rule), group)["IW109"].status is FindingStatus.PASS
    f = by_rule(judge({group: trail.log_events()}, DiagnoseOptions(safe_budget_ms=10_000), rule), group)["IW109"]
    assert f.status is FindingStatus.FAIL and f.count == 1  # 9 s left < 10 s
    assert "below the 10000 ms safe budget" in f.message


def test_redelivery_gap_threshold() -> None:
    group, trail = _one("redelivered 5 s after the receive, during processing")
    rule = [RULES_BY_ID["IW106"]]
    events = {group: trail.log_events()}
    assert by_rule(judge(events, DiagnoseOptions(min_redelivery_gap_ms=5_100), rule), group)["IW106"].status \
        is FindingStatus.PASS
    assert by_rule(judge(events, DiagnoseOptions(min_redelivery_gap_ms=4_900), rule), group)["IW106"].status \
        is FindingStatus.FAIL


def test_queries_stay_within_cloudwatch_limits() -> None:
    from collector.insights import parse_query
    from collector.insights.constants import MAX_QUERY_LENGTH

    for r in RULES:
        text = render_query(r.query, DiagnoseOptions().query_params())
        assert len(text) <= MAX_QUERY_LENGTH
        stats = [c for c in parse_query(text).commands if type(c).__name__ == "StatsCmd"]
        assert 1 <= len(stats) <= 2, r.id  # CloudWatch runs at most two stats commands
        assert r.checklist and r.doc.startswith("https://")


def test_render_query() -> None:
    assert render_query("a >= {x} and b", {"x": 5}) == "a >= 5 and b"
    with pytest.raises(KeyError, match="{y}"):
        render_query("a >= {y}", {"x": 5})
    with pytest.raises(TypeError):
        render_query("a >= {x}", {"x": "5 or 1=1"})  # type: ignore[dict-item]


def test_ids_too_long_for_a_query_are_shown_without_records() -> None:
    from tests.unit.diagnose.trails import _deliver_sqs

    t = Trail()
    for key in ("order-huge", "order-1"):
        _deliver_sqs(t, f"m-{key}", 1, key, "env-a")
        t.tick(3_600_000)
        _deliver_sqs(t, f"m-{key}", 1, key, "env-a")  # processed again an hour later
        t.tick(1_000)
    # the emitter cuts long values; another logger may not: a 6,000-character key
    events = [dict(e, message=e["message"].replace("order-huge", "k" * 6_000)) for e in t.log_events()]
    (f,) = [x for x in judge({t.log_group: events}, rules=[RULES_BY_ID["IW105"]])]
    assert f.status is FindingStatus.FAIL and f.count == 2
    by_len = {len(e.records): e for e in f.examples}
    assert set(by_len) == {0, 4}  # the 6,000-character key: no lookup; the other: its four records
    assert all(len(e.entity) < 100 for e in f.examples)  # both hashed


def test_a_busy_example_lookup_never_starves_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lookups of every finding run as one query; when it reaches the row limit, each finding's lookup runs
    on its own, so every finding still gets its records."""
    import alarms.diagnose.evaluate as ev

    monkeypatch.setattr(ev, "EXAMPLE_ROWS", 4)
    fails = [(i, c) for i, c in enumerate(CASES) if c.status == "fail"]
    found = judge({case_log_group(i): c.build().log_events() for i, c in fails})
    for i, case in fails:
        f = by_rule(found, case_log_group(i))[case.rule]
        assert f.examples and any(e.records for e in f.examples), case.name
        assert sum(len(e.records) for e in f.examples) <= 4 * len(f.examples)


def test_a_truncated_result_never_passes() -> None:
    """CloudWatch cut the rows of a query (its row limit): what was returned may lack the violations, so a rule
    that found none there is not observable, and one that found some says "at least"."""
    from alarms.diagnose.types import Evidence

    class Truncating:
        description = "cut"

        def __init__(self, inner: EngineSource) -> None:
            self.inner = inner

        def run_many(self, queries: Sequence[str]) -> list[Evidence]:
            return [Evidence(e.rows, truncated=not q.startswith("# diagnose inventory") and not q.startswith("filter"))
                    for q, e in zip(queries, self.inner.run_many(queries), strict=True)]

        def close(self) -> None:
            self.inner.close()

    group_fail, fail = _one("processed again an hour later")
    group_pass, ok = _one("duplicates caught up to 30 min later, a released key")
    src = Truncating(engine_source({group_fail: fail.log_events(), group_pass: ok.log_events()}))
    try:
        found = diagnose(src, rules=[RULES_BY_ID["IW105"]])  # type: ignore[arg-type]
    finally:
        src.close()
    f_fail, f_pass = by_rule(found, group_fail)["IW105"], by_rule(found, group_pass)["IW105"]
    assert f_fail.status is FindingStatus.FAIL and f_fail.truncated and "(at least" in f_fail.message
    assert f_pass.status is FindingStatus.UNKNOWN and "row limit" in f_pass.message
