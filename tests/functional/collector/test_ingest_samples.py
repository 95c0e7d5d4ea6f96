"""Each real sample in ../shared/samples/ ingested as it is (read in place), checked against the counts
in its ``*.expected.json`` (computed from the file by the people who captured it, not by this code)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from collector.ingest import EventStore, LogFormat

MB = 1_000_000


def _expected(shared_dir: Path, name: str) -> dict:
    return json.loads((shared_dir / "samples" / name).read_text())


def _ingest(shared_dir: Path, name: str, group: str):
    store = EventStore()
    report = store.ingest_path(shared_dir / "samples" / name, log_group=group)
    return store, report


def _rows(store: EventStore, sql: str, params=None) -> list[tuple]:
    return store.connection.execute(sql, params or []).fetchall()


def _assert_reports(store: EventStore, per_invocation) -> None:
    """@duration/@billedDuration/@initDuration (ms) and @memorySize/@maxMemoryUsed (bytes) of each REPORT."""
    items = per_invocation.items() if isinstance(per_invocation, dict) else [(p["request_id"], p) for p in per_invocation]
    got = {r[0]: r[1:] for r in _rows(store, 'SELECT "@requestId", "@duration", "@billedDuration", "@memorySize", '
                                             '"@maxMemoryUsed", "@initDuration" FROM events WHERE "@type" = \'REPORT\'')}
    assert set(got) == {rid for rid, _ in items}
    for rid, inv in items:
        assert got[rid] == (pytest.approx(inv["duration_ms"]), inv["billed_duration_ms"], inv["memory_size_mb"] * MB,
                            inv["max_memory_used_mb"] * MB,
                            None if "init_duration_ms" not in inv else pytest.approx(inv["init_duration_ms"])), rid


def test_filter_log_events_sample(shared_dir: Path) -> None:
    exp = _expected(shared_dir, "filter-log-events.expected.json")
    group = exp["provenance_not_derivable_from_file"]["log_group"]
    store, report = _ingest(shared_dir, "filter-log-events.json", group)
    assert report.per_file[str(shared_dir / "samples" / "filter-log-events.json")].format == LogFormat.FILTER_LOG_EVENTS.value
    assert (report.events, report.skipped, report.repaired, report.by_reason) == (exp["events"], 0, 0, {})
    assert dict(_rows(store, 'SELECT "@logStream", count(*) FROM events GROUP BY 1')) == exp["events_per_log_stream"]
    assert _rows(store, 'SELECT count(*) FROM events WHERE ends_with("@message", chr(10))')[0][0] == \
        exp["messages_ending_with_newline"]
    kinds = Counter(dict(_rows(store, 'SELECT "@type", count(*) FROM events WHERE "@type" IS NOT NULL GROUP BY 1')))
    assert kinds == Counter({k.split(".")[1]: v for k, v in exp["event_kinds"].items()
                             if k in ("platform.START", "platform.END", "platform.REPORT")})
    assert _rows(store, "SELECT count(*) FROM events WHERE json_exists(\"@json\", '$._aws')")[0][0] == exp["emf_documents"]
    assert dict(_rows(store, """SELECT "@json" ->> '$.level', count(*) FROM events WHERE json_exists("@json", '$.level') GROUP BY 1""")) == \
        exp["log_records_by_level"]
    # timestamps and ingestion times are the API's own
    first = json.loads((shared_dir / "samples" / "filter-log-events.json").read_text())["events"][0]
    assert _rows(store, 'SELECT "@timestamp", "@ingestionTime", "@log" FROM events ORDER BY "@seq" LIMIT 1')[0] == \
        (first["timestamp"], first["ingestionTime"], f"000000000000:{group}")  # @log: account-id:log-group-name
    _assert_reports(store, exp["per_invocation"])


def test_powertools_json_lines_sample(shared_dir: Path) -> None:
    exp = _expected(shared_dir, "powertools-real.expected.json")
    store, report = _ingest(shared_dir, "powertools-real.jsonl", "/aws/lambda/orders-consumer")
    assert (report.events, report.skipped, report.repaired) == (exp["lines"], 0, 0)
    kinds = _rows(store, """SELECT
        count(*) FILTER (WHERE "@type" IS NOT NULL OR starts_with("@message", 'INIT_START')),
        count(*) FILTER (WHERE json_exists("@json", '$._aws')),
        count(*) FILTER (WHERE json_exists("@json", '$.level')),
        count(*) FILTER (WHERE "@json" IS NULL AND "@type" IS NULL AND NOT starts_with("@message", 'INIT_START'))
        FROM events""")[0]
    lk = exp["line_kinds"]
    assert kinds == (lk["platform_text"], lk["emf_json"], lk["powertools_log_json"], lk["runtime_error_text"])
    assert dict(_rows(store, """SELECT "@json" ->> '$.level', count(*) FROM events WHERE json_exists("@json", '$.level') GROUP BY 1""")) == \
        exp["log_records_by_level"]
    # the runtime error joined with \r stays ONE event (line 31)
    line31 = _rows(store, 'SELECT "@message" FROM events ORDER BY "@seq" LIMIT 1 OFFSET 30')[0][0]
    assert line31.startswith(exp["runtime_error_lines"][0]["head"])
    assert len(line31.split("\r")) == exp["runtime_error_lines"][0]["cr_separated_parts"]
    assert _rows(store, 'SELECT count(*) FROM events WHERE "@initDuration" IS NOT NULL')[0][0] == exp["cold_starts"]
    _assert_reports(store, exp["per_invocation"])
    # EMF metric totals straight from the discovered fields
    for metric, total in exp["emf_metric_totals"].items():
        values = [json.loads(v) for (v,) in _rows(store, "SELECT json_extract(\"@json\", '$.' || $1) FROM events "
                                                         "WHERE json_exists(\"@json\", '$._aws')", [metric]) if v]
        flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
        assert sum(flat) == pytest.approx(total), metric
        assert len(flat) == exp["emf_metric_datapoints"][metric], metric
    # Powertools "2026-11-30 00:26:28,838+0000" is the record's time; the START line before it takes it too
    assert _rows(store, 'SELECT "@timestamp" FROM events ORDER BY "@seq" LIMIT 3') == [(1795998388838,)] * 3


def test_emf_library_json_lines_sample(shared_dir: Path) -> None:
    exp = _expected(shared_dir, "emf-library-real.expected.json")
    store, report = _ingest(shared_dir, "emf-library-real.jsonl", "/aws/lambda/ledger-projector")
    assert (report.events, report.skipped, report.repaired) == (exp["lines"], 0, 0)
    docs = _rows(store, """SELECT "@seq", "@timestamp" FROM events WHERE json_exists("@json", '$._aws') ORDER BY 1""")
    assert [(s + 1, ts) for s, ts in docs] == [(d["line"], d["timestamp_ms"]) for d in exp["documents"]]
    assert _rows(store, 'SELECT count(*) FROM events WHERE "@initDuration" IS NOT NULL')[0][0] == exp["cold_starts"]
    assert _rows(store, "SELECT max(CAST(json_extract(\"@json\", '$.IteratorAge') AS DOUBLE)) FROM events")[0][0] == \
        exp["max_iterator_age_ms"]
    _assert_reports(store, exp["per_invocation"])


def test_lambda_text_format_sample(shared_dir: Path) -> None:
    exp = _expected(shared_dir, "lambda-text-format.expected.json")
    path = shared_dir / "samples" / "lambda-text-format.log"
    store, report = _ingest(shared_dir, "lambda-text-format.log", "/aws/lambda/inventory-sync")
    assert report.per_file[str(path)].format == LogFormat.LAMBDA_TEXT.value
    assert (report.events, report.skipped, report.repaired) == (exp["log_events"], 0, 0)
    # event boundaries exactly as the writer framed them
    sizes = [m.count("\n") + 1 for (m,) in _rows(store, 'SELECT "@message" FROM events ORDER BY "@seq"')]
    starts = [1 + sum(sizes[:i]) for i in range(len(sizes))]
    bounds = exp["provenance_not_derivable_from_file"]["event_boundaries"]
    assert list(zip(starts, sizes)) == [(b["first_line"], b["lines"]) for b in bounds]
    assert _rows(store, "SELECT count(*) FROM events WHERE \"@type\" = 'REPORT' AND \"@message\" LIKE '%XRAY TraceId%'"
                 )[0][0] == exp["xray_lines"]
    assert [r[0] for r in _rows(store, "SELECT \"@requestId\" FROM events WHERE \"@type\" = 'REPORT' "
                                       "AND \"@message\" LIKE '%Status: timeout%'")] == exp["timeouts"]
    assert _rows(store, "SELECT count(*) FROM events WHERE \"@json\" IS NOT NULL")[0][0] == exp["printed_json_lines"]
    assert sorted(r[0] for r in _rows(store, "SELECT idempotency_key FROM events WHERE idempotency_key IS NOT NULL")) \
        == exp["printed_idempotency_keys"]
    assert _rows(store, """SELECT count(*) FROM events WHERE regexp_matches("@message", '^\\[[A-Z]+\\]\\t')""")[0][0] == \
        sum(exp["runtime_log_events_by_level"].values())
    _assert_reports(store, exp["per_invocation"])
    # [LEVEL] lines carry their own time; START takes the previous event's, INIT_START (first) the next one's
    first = _rows(store, 'SELECT "@timestamp", "@message" FROM events ORDER BY "@seq" LIMIT 3')
    assert [t for t, _ in first] == [1795998435636] * 3  # 2026-11-30T00:27:15.636Z
    own_time = sum(exp["runtime_log_events_by_level"].values()) + len(exp["timeouts"])  # [LEVEL]\t<ts>, "<ts> <id> Task"
    assert report.by_reason["timestamp_from_neighbour_event"] == exp["log_events"] - own_time


def test_console_csv_sample(shared_dir: Path) -> None:
    exp = _expected(shared_dir, "console-export.expected.json")
    store, report = _ingest(shared_dir, "console-export.csv", "/aws/lambda/refund-processor")
    assert (report.events, report.skipped, report.repaired) == (exp["data_rows"], 0, 0)
    row = _rows(store, """SELECT min("@timestamp"), max("@timestamp"),
        count(*) FILTER (WHERE strpos(rtrim("@message", chr(10)), chr(10)) > 0),
        count(*) FILTER (WHERE ends_with("@message", chr(10))),
        max(len(string_split(rtrim("@message", chr(10)), chr(10)))) FROM events""")[0]
    assert row == (exp["first_timestamp_ms"], exp["last_timestamp_ms"], exp["rows_with_multiline_message"],
                   exp["rows_whose_message_ends_with_newline"], exp["max_lines_in_one_message"])
    kinds = dict(_rows(store, 'SELECT "@type", count(*) FROM events WHERE "@type" IS NOT NULL GROUP BY 1'))
    assert kinds == {k.split(".")[1]: v for k, v in exp["message_kinds"].items()
                     if k in ("platform.START", "platform.END", "platform.REPORT")}
    _assert_reports(store, exp["per_invocation"])
