"""The shared scan (collector.cloudwatch.scan), its store, the index policy rules and the dry-run estimate."""

from __future__ import annotations

import json

import pytest

from collector.cloudwatch.cost import CostModel, bytes_per_second, estimate, window_bytes
from collector.cloudwatch.index_policy import INDEX_FIELDS, GroupIndex, IndexCoverage, policy_document, render
from collector.cloudwatch.scan import (
    ScannedEvent,
    combine,
    events_from_rows,
    leading_filter,
    requires_emitter_record,
    scan_query,
)
from collector.cloudwatch.scan_store import ScanLedger, ScanPart, build_store, read_part, write_part
from collector.cloudwatch.windows import Window
from collector.standard_queries import load_standard_queries

T0 = 1_767_607_200  # 2026-01-05 10:00:00 UTC


def test_standard_queries_all_combine_and_two_need_every_event():
    combined, alone = combine(load_standard_queries())
    assert alone == {}
    assert set(combined.filters) == set(load_standard_queries())
    # invocations reads REPORT lines, library_signals other libraries' EMF and error lines: not emitter records
    not_emitter = {n for n, f in combined.filters.items() if not requires_emitter_record(f)}
    assert not_emitter == {"invocations", "library_signals"} and not combined.emitter_only
    emitter, _ = combine({n: q for n, q in load_standard_queries().items() if n not in not_emitter})
    assert emitter.emitter_only


@pytest.mark.parametrize("query, expected", [
    ("filter a = 1 | stats count(*)", "a = 1"),
    ("# comment\nfilter ispresent(x)\n  and y in [1, 2]\n| fields x", "ispresent(x)\n  and y in [1, 2]"),
    ("fields @timestamp | filter ispresent(outcome)", None),  # not a leading filter: runs on its own
    ("filter (((", None),  # the offline engine cannot parse it: runs on its own
    ("filter a = 1 | fields nosuchfn(a)", None),  # nor compile it
    ("stats count(*)", None),
])
def test_leading_filter(query, expected):
    assert leading_filter(query) == expected


def test_requires_emitter_record_reads_top_level_and_terms_only():
    assert requires_emitter_record('ispresent(schema_version) and outcome = "received"')
    assert requires_emitter_record('schema_version = "1"')
    assert not requires_emitter_record('ispresent(schema_version) or @type = "REPORT"')
    assert not requires_emitter_record("not ispresent(schema_version)")


def test_scan_query_is_the_or_of_the_filters_and_parses():
    from collector.insights.expressions import FieldsCmd, FilterCmd, FilterIndexCmd, SortCmd
    from collector.insights.parser import parse_query

    q = scan_query(["a = 1 # first", "b = 2"])
    cmds = parse_query(q).commands
    assert [type(c) for c in cmds] == [FilterCmd, FieldsCmd, SortCmd]  # the comment did not swallow the or
    assert "(\na = 1 # first\n)" in q and "or (\nb = 2\n)" in q
    qi = scan_query(["ispresent(schema_version)"], indexed=True)
    first = parse_query(qi).commands[0]
    assert isinstance(first, FilterIndexCmd) and first.expr.text == 'schema_version in ["1"]'


def test_scan_rows_become_events_and_bad_rows_are_counted():
    rows = [{"@timestamp": "2026-01-05 10:00:01.250", "@message": "m1", "@logStream": "s", "@log": "111122223333:/g"},
            {"@timestamp": "2026-01-05 10:00:02.000", "@log": "111122223333:/g"},  # no message
            {"@timestamp": "yesterday", "@message": "m3", "@log": "111122223333:/g"},
            {"@timestamp": "2026-01-05 10:00:03.000", "@message": "m4", "@log": "/bare"}]
    events, bad = events_from_rows(rows)
    assert bad == 2
    assert events == [ScannedEvent((T0 + 1) * 1000 + 250, "/g", "111122223333", "s", "m1"),
                      ScannedEvent((T0 + 3) * 1000, "/bare", "", "", "m4")]


def test_stored_scans_round_trip_cover_and_replace(tmp_path):
    evs = [ScannedEvent(T0 * 1000 + i, "/g", "111122223333", "s", f"m{i}") for i in range(3)]
    write_part(tmp_path, Window(T0, T0 + 59), evs)
    assert read_part(tmp_path, Window(T0, T0 + 59)) == evs
    ledger = ScanLedger("lg")
    fs = ledger.filter_set(["f1", "f2"])
    ledger.record(tmp_path, ScanPart(Window(T0, T0 + 59), "complete", fs, [], 3), evs)
    ledger.record(tmp_path, ScanPart(Window(T0 + 60, T0 + 119), "partial", fs, [], 0), [])
    assert ledger.covered(Window(T0, T0 + 59), ["f1"]) and not ledger.covered(Window(T0, T0 + 59), ["f3"])
    assert not ledger.covered(Window(T0, T0 + 119), ["f1"])  # the second minute is partial: scanned again
    assert ledger.events(tmp_path, Window(T0, T0 + 59), ["f2"]) == evs
    back = ScanLedger.from_json(json.loads(json.dumps(ledger.to_json())), "lg", tmp_path)
    assert back.to_json() == ledger.to_json()
    assert ScanLedger.from_json(ledger.to_json(), "other log groups", tmp_path).stale
    # a new scan of an overlapping window replaces what it overlaps
    ledger.record(tmp_path, ScanPart(Window(T0, T0 + 119), "complete", fs, [], 1), evs[:1])
    assert [p.window for p in ledger.parts] == [Window(T0, T0 + 119)]
    assert not (tmp_path / "cloudwatch" / "scans" / f"{T0}-{T0 + 59}.parquet").exists()


def test_store_of_scanned_events_answers_a_standard_query():
    from collector.cloudwatch.scan import evaluate

    rec = {"schema_version": "1", "service": "s", "operation": "o", "event_source": "sqs", "outcome": "received"}
    evs = [ScannedEvent((T0 + i) * 1000, "/aws/lambda/f", "111122223333", "st", json.dumps(rec)) for i in range(3)]
    store = build_store(evs)
    rows = evaluate(store, load_standard_queries(["outcomes"])["outcomes"], Window(T0, T0 + 59))
    assert rows == [{"time": "2026-01-05 10:00:00.000", "service": "s", "operation": "o", "event_source": "sqs",
                     "outcome": "received", "events": "3"}]
    with pytest.raises(ValueError, match="several accounts"):
        build_store(evs + [ScannedEvent(T0 * 1000, "/x", "999999999999", "", "m")])


# ---------------------------------------------------------------------------- index policy
def test_policy_document_and_its_limit():
    assert json.loads(policy_document()) == {"Fields": ["schema_version", "outcome", "idempotency_key"]}
    assert INDEX_FIELDS == ("schema_version", "outcome", "idempotency_key")
    with pytest.raises(ValueError, match="1 to 20"):
        policy_document([f"f{i}" for i in range(21)])


def test_coverage_starts_two_hours_after_the_policy_and_ends_with_the_index_life():
    since = T0
    cov = IndexCoverage({"/g": GroupIndex(("schema_version",), since)})
    now = T0 + 10 * 86400
    assert not cov.covers("/g", "schema_version", Window(T0 + 7199, T0 + 7199 + 3599), now)  # events may predate
    assert cov.covers("/g", "schema_version", Window(T0 + 7200, T0 + 7200 + 3599), now)
    assert not cov.covers("/g", "outcome", Window(T0 + 7200, T0 + 10799), now)  # field not in the policy
    assert not cov.covers("/other", "schema_version", Window(T0 + 7200, T0 + 10799), now)  # no policy
    # 30 days after ingestion an event is no longer indexed; a window must start 30 days - 2 hours ago at most
    late = T0 + 40 * 86400
    assert not cov.covers("/g", "schema_version", Window(late - 30 * 86400 + 7200, late - 30 * 86400 + 7259), late)
    assert cov.covers("/g", "schema_version", Window(late - 30 * 86400 + 7201, late - 30 * 86400 + 7260), late)


def test_export_files_put_the_policy_on_each_log_group():
    files = render(["/aws/lambda/b", "/aws/lambda/a"], "shop")
    cli = json.loads(files["index-policy/cli/aws_lambda_a.json"])
    assert cli == {"logGroupIdentifier": "/aws/lambda/a", "policyDocument": policy_document()}
    tf = json.loads(files["index-policy/terraform/shop-index-policy.tf.json"])
    res = tf["resource"]["aws_cloudwatch_log_index_policy"]
    assert res == {"idemwatch_aws_lambda_a": {"log_group_name": "/aws/lambda/a", "policy_document": policy_document()},
                   "idemwatch_aws_lambda_b": {"log_group_name": "/aws/lambda/b", "policy_document": policy_document()}}


# ---------------------------------------------------------------------------- dry-run estimate
def test_estimate_spreads_stored_bytes_over_the_retained_time():
    now = T0 + 10 * 86400
    g = {"storedBytes": 8_640_000, "creationTime": T0 * 1000}  # 10 days old, no retention: 10 bytes per second
    assert bytes_per_second(g, now) == (10.0, float(T0))
    kept = {"storedBytes": 8_640_000, "creationTime": T0 * 1000, "retentionInDays": 1}  # 1 day kept: 100 B/s
    assert bytes_per_second(kept, now)[0] == 100.0
    groups = {"/a": g, "/b": kept}
    hour = Window(now - 3600, now - 1)
    assert window_bytes(groups, ["/a", "/b"], hour, now) == pytest.approx(3600 * 110)
    before = Window(T0 - 3600, T0 + 3599)  # half of it before /a and /b existed
    assert window_bytes(groups, ["/a"], before, now) == pytest.approx(3600 * 10)
    est = estimate(groups, [("trail", [hour, hour])], [([hour], ["/a"]), ([hour], ["/b"])], ["outcomes"],
                   CostModel(price_per_gb_scanned=1.0), now)
    assert est["by_query"]["scan"]["bytes_scanned"] == 3600 * 110 and est["by_query"]["scan"]["windows"] == 1
    assert est["by_query"]["trail"]["bytes_scanned"] == 2 * 3600 * 110
    assert est["total"]["bytes_scanned"] == 3 * 3600 * 110
    assert est["total"]["cost_usd"] == pytest.approx(round(3 * 3600 * 110 / 2**30, 6))


def test_scan_rows_of_any_shape_are_events_or_counted():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    value = st.one_of(st.none(), st.text(max_size=30), st.sampled_from(["2026-01-05 10:00:01.250",
                                                                        "111122223333:/aws/lambda/x", "/bare"]))
    row = st.dictionaries(st.sampled_from(["@timestamp", "@message", "@logStream", "@log", "other"]), value)

    @settings(max_examples=300, deadline=None)
    @given(st.lists(row, max_size=20))
    def check(rows):
        events, bad = events_from_rows(rows)
        assert len(events) + bad == len(rows)  # every row is an event or counted, never lost silently
        assert all(isinstance(e.timestamp, int) and e.message is not None for e in events)

    check()
