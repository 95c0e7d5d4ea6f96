"""library_signals: the expansion in DuckDB SQL (collector.postprocess.expand_library_signals) against the rule it
replaced, a Python loop over ``json.loads`` kept here as the oracle (``_oracle``, fe735d5's
``expand_library_signals``), on random EMF-ish documents: valid, malformed, huge, nested, exception lines.

The two JSON parsers differ on a few texts (DuckDB takes ``{"a":1,}`` and the first of duplicate keys; Python
rejects the first and takes the last of the second): rows whose validity the parsers disagree on are left to
``test_json_read_as_the_store_reads_it``, which pins what the SQL rule does with them.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.collect import collect_local
from collector.postprocess import EXCEPTION_LINE_RE, expand_library_signal_rows, library_signals_rows
from emitter.contract import EXCEPTION_OUTCOME, METRIC_OUTCOME, Metric

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EXCEPTION_NAME = re.compile(r"^\[ERROR\]\s(?:\S+\s+\S+\s+)?(Idempotency[A-Za-z]*Error):")


# ----------------------------------------------------------------------------- the old rule (oracle)
def _outcome_for_metric(name: str) -> str:
    try:
        return METRIC_OUTCOME[Metric(name)].value
    except (ValueError, KeyError):
        return name


def _outcome_for_exception(name: str) -> str:
    mapped = EXCEPTION_OUTCOME.get(name)
    return mapped.value if mapped else name


def _emf_library(doc):
    if "ServiceName" in doc and "ServiceType" in doc:
        return "aws-embedded-metrics"
    if "service" in doc:
        return "powertools"
    return "emf"


def _metric_events(value, unit):
    values = value if isinstance(value, list) else [value]
    nums = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not nums:
        return None
    return float(sum(nums)) if unit == "Count" else float(len(nums))


def _oracle(rows):
    """fe735d5's rule over ``(epoch ms, @log, @message)``: (rows ``(minute ms, log, library, signal, events)``
    sorted, dropped entries)."""
    acc: dict[tuple, float] = defaultdict(float)
    dropped = 0
    for ms, log_group, message in rows:
        if ms is None:
            continue
        ts = _EPOCH + timedelta(milliseconds=ms)
        minute = ts.replace(second=0, microsecond=0)
        message = message or ""
        m = _EXCEPTION_NAME.match(message)
        if m:
            acc[(minute, log_group, "powertools", _outcome_for_exception(m.group(1)))] += 1.0
            continue
        try:
            doc = json.loads(message)
        except (TypeError, ValueError):
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("_aws"), dict):
            continue
        library = _emf_library(doc)
        directives = doc["_aws"].get("CloudWatchMetrics")
        for directive in directives if isinstance(directives, list) else []:
            metrics = directive.get("Metrics") if isinstance(directive, dict) else None
            for metric in metrics if isinstance(metrics, list) else []:
                if not isinstance(metric, dict) or not isinstance(metric.get("Name"), str):
                    dropped += 1
                    continue
                name = metric["Name"]
                events = _metric_events(doc.get(name), metric.get("Unit"))
                if events is None:
                    dropped += 1
                    continue
                acc[(minute, log_group, library, _outcome_for_metric(name))] += events
    out = sorted(((k[0], k[1], k[2], k[3], v) for k, v in acc.items()), key=lambda r: (r[0], r[1] or "", r[2], r[3]))
    return [((t - _EPOCH) // timedelta(milliseconds=1), lg, lib, sig, ev) for t, lg, lib, sig, ev in out], dropped


def _sql(rows):
    table, dropped = expand_library_signal_rows(rows)
    return list(zip(*(table.column(c).to_pylist() for c in table.column_names))), dropped


def _same(got, want) -> bool:
    """Rows equal, floats bit for bit (NaN equal to NaN, -0.0 not equal to 0.0)."""
    def key(r):
        return r[:4] + (r[4].hex() if not math.isnan(r[4]) else "nan",)
    return [key(r) for r in got] == [key(r) for r in want]


def _both_parse_alike(message: str | None) -> bool:
    try:
        json.loads(message or "")
        py = True
    except ValueError:
        py = False
    # a connection of its own, read to the end: a result left open on the module's default connection blocks
    # every later statement on it in this process
    with duckdb.connect() as con:
        duck = con.execute("SELECT json_valid($1)", [message or ""]).fetchall()[0][0]
    return py == bool(duck)


# ----------------------------------------------------------------------------- strategies
_NAMES = st.one_of(
    st.sampled_from([m.value for m in Metric] + ["OrderProcessed", "Latency", "", "a.b", 'q"uote', "back\\slash",
                                               "_aws", "service", "é", "[0]", "$.x", "\u2028", "null"]),
    st.text(max_size=12))
_NUMBER = st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0.1, 0.2, 0.3, -0.0, 1e16, 1.5, 1e308, 2.0**53, 2.0**53 + 2]))
_SCALAR = st.one_of(_NUMBER, st.booleans(), st.none(), st.text(max_size=6))
_VALUE = st.one_of(_SCALAR, st.lists(st.one_of(_SCALAR, st.lists(_NUMBER, max_size=2), st.dictionaries(
    st.text(max_size=3), _NUMBER, max_size=2)), max_size=6), st.dictionaries(st.text(max_size=3), _SCALAR, max_size=3))
_UNIT = st.one_of(st.sampled_from(["Count", "Milliseconds", "None", "count", "Count "]), _SCALAR)


@st.composite
def _metric(draw):
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(_SCALAR)  # not an object: dropped
    m = {}
    if kind != 1:
        m["Name"] = draw(_NAMES) if kind != 2 else draw(_SCALAR)
    if draw(st.booleans()):
        m["Unit"] = draw(_UNIT)
    if draw(st.booleans()):
        m["StorageResolution"] = draw(st.sampled_from([1, 60]))
    return m


@st.composite
def _emf_document(draw):
    directives = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.integers(0, 8))
        if kind == 0:
            directives.append(draw(_SCALAR))
        elif kind == 1:
            directives.append({"Namespace": "x", "Metrics": draw(_SCALAR)})
        else:
            directives.append({"Namespace": draw(st.text(max_size=4)), "Dimensions": [["service"]],
                               "Metrics": draw(st.lists(_metric(), max_size=5))})
    aws_kind = draw(st.integers(0, 9))
    aws = ({"Timestamp": 1, "CloudWatchMetrics": directives} if aws_kind > 2
           else {"Timestamp": 1, "CloudWatchMetrics": draw(_SCALAR)} if aws_kind == 2
           else draw(st.one_of(_SCALAR, st.just([{"CloudWatchMetrics": directives}]))))
    doc = {"_aws": aws}
    names = [m["Name"] for d in directives if isinstance(d, dict) and isinstance(d.get("Metrics"), list)
             for m in d["Metrics"] if isinstance(m, dict) and isinstance(m.get("Name"), str)]
    for name in names:
        if draw(st.integers(0, 5)):
            doc[name] = draw(_VALUE)
    for key in draw(st.lists(st.sampled_from(["ServiceName", "ServiceType", "service", "function_version"]),
                             max_size=3)):
        doc[key] = draw(st.one_of(st.text(max_size=5), st.none()))
    text = json.dumps(doc, ensure_ascii=draw(st.booleans()), allow_nan=True)
    if draw(st.integers(0, 6)) == 0:  # malformed: cut, or not an object
        text = draw(st.sampled_from([text[: draw(st.integers(0, max(0, len(text) - 1)))], f"[{text}]",
                                     f"x{text}", f"{text} tail", text.replace(":", "=", 1)]))
    return text


_WS = st.sampled_from([" ", "\t", "\u00a0", "\u2003", "\x1c", "\x0b", "\u3000", "\n"])
_NOT_WS = st.text(st.characters(blacklist_characters="\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002"
                                                      "\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029"
                                                      "\u202f\u205f\u3000", blacklist_categories=("Cs",)),
                  min_size=1, max_size=6)


@st.composite
def _exception_line(draw):
    exc = draw(st.sampled_from(sorted(EXCEPTION_OUTCOME) + ["IdempotencyItemNotFoundError", "IdempotencyXError",
                                                           "IdempotencyError", "Idempotency1Error", "ValueError"]))
    prefix = draw(st.sampled_from(["", "{ts}{ws}{rid}{ws}", "{ts}{ws}", "{ts}{ws}{ws}{rid}{ws}{ws}"]))
    prefix = prefix.format(ts=draw(_NOT_WS), rid=draw(_NOT_WS), ws=draw(_WS))
    return (f"[ERROR]{draw(_WS)}{prefix}{exc}{draw(st.sampled_from([':', ' :', '']))} "
            f"{draw(st.text(max_size=20))}")


_MESSAGE = st.one_of(_emf_document(), _exception_line(), st.text(max_size=30), st.none())
_ROW = st.tuples(st.one_of(st.integers(-10**11, 4 * 10**12), st.sampled_from([0, 59_999, 60_000, -1, -60_000]),
                           st.none()),
                 # not both None and "": the old rule ordered those two bins by first appearance (the SQL rule: None
                 # first); @log is never empty on either collector
                 st.sampled_from(["123456789012:/aws/lambda/a", "/aws/lambda/b", None]), _MESSAGE)


def _expansion_equals_the_python_rule(rows):
    rows = [r for r in rows if _both_parse_alike(r[2])]
    got, got_dropped = _sql(rows)
    want, want_dropped = _oracle(rows)
    assert _same(got, want), (got, want)
    assert got_dropped == want_dropped


_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]


@settings(max_examples=5, deadline=None, suppress_health_check=_HEALTH)
@given(st.lists(_ROW, max_size=12))
def test_sql_expansion_equals_the_python_rule(rows):
    """A few examples in every run (each costs about half a second: the SQL expansion's DuckDB work)."""
    _expansion_equals_the_python_rule(rows)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=_HEALTH)
@given(st.lists(_ROW, max_size=12))
def test_sql_expansion_equals_the_python_rule_many_examples(rows):
    _expansion_equals_the_python_rule(rows)


_FRACTIONAL_ROWS = st.lists(st.tuples(st.sampled_from([0, 1, 60_001]), st.sampled_from(["g1", "g2"]),
                                     st.lists(st.sampled_from([0.1, 0.2, 0.3, 1e16, -1e16, 1.0, 2.5, 1e-9]),
                                              min_size=1, max_size=4)), min_size=1, max_size=30)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_FRACTIONAL_ROWS)
def test_fractional_sums_follow_row_order(rows):
    """A few examples in every run; many under slow."""
    _fractional_sums_follow_row_order(rows)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_FRACTIONAL_ROWS)
def test_fractional_sums_follow_row_order_many_examples(rows):
    _fractional_sums_follow_row_order(rows)


def _fractional_sums_follow_row_order(rows):
    """Fractional Count values: the float sum depends on the order, and must be the old sequential one."""
    triples = [(ms, lg, json.dumps({"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Metrics": [
        {"Name": "X", "Unit": "Count"}]}]}, "X": values})) for ms, lg, values in rows]
    got, _ = _sql(triples)
    want, _ = _oracle(triples)
    assert _same(got, want), (got, want)


def test_huge_document_and_deep_nesting():
    """A document of 5,000 metric entries (each with 50 values), one nested 200 levels deep, one of 1 MB."""
    metrics = [{"Name": f"M{i}", "Unit": "Count" if i % 2 else "Milliseconds"} for i in range(5000)]
    huge = {"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Metrics": metrics}]},
            **{f"M{i}": list(range(50)) if i % 3 else "x" for i in range(5000)}}
    deep: object = 1
    for _ in range(200):
        deep = {"k": [deep]}
    nested = {"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Metrics": [{"Name": "D"}, {"Name": "E"}]}]},
              "D": deep, "E": [deep, 3]}
    big = {"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Metrics": [{"Name": "B", "Unit": "Count"}]}]},
           "B": 2, "pad": "x" * 1_000_000}
    rows = [(1000, "g", json.dumps(huge)), (2000, "g", json.dumps(nested)), (3000, "g", json.dumps(big))]
    got, got_dropped = _sql(rows)
    want, want_dropped = _oracle(rows)
    assert _same(got, want)
    assert got_dropped == want_dropped == 5000 // 3 + 1 + 1  # every third value is a string; D is an object
    assert ("B" in {r[3] for r in got}) and len(got) == 5000 - (5000 // 3 + 1) + 1 + 1


def test_json_read_as_the_store_reads_it():
    """Texts Python's json and DuckDB's parser (the events table's) read differently: the SQL rule reads them as
    DuckDB does. A trailing comma is accepted; a duplicate top-level key reads its last value (as Python did); a
    duplicate key inside a metric entry reads its first."""
    head = '{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Metrics":[{"Name":"A","Unit":"Count"}]}]}'
    rows = [(0, "g", head + ',"A":2,}'),  # Python: invalid, skipped
            (0, "g", head + ',"A":2,"A":5}'),  # Python: the last A (5)
            (0, "g", ('{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Metrics":[{"Name":"B","Name":"C"}]}]},'
                      '"B":1,"C":1}'))]  # Python: Name C
    got, dropped = _sql(rows)
    assert got == [(0, "g", "emf", "A", 7.0), (0, "g", "emf", "B", 1.0)]  # 2 + 5
    assert dropped == 0


def test_exception_regex_whitespace_is_pythons():
    """``EXCEPTION_LINE_RE`` spells out Python's ``\\s``: every code point Python's ``re`` takes as whitespace,
    and no other (checked over all of Unicode, through DuckDB's RE2)."""
    import sys

    python_ws = [chr(c) for c in range(sys.maxunicode + 1) if 0xD800 > c or c > 0xDFFF if re.match(r"\s", chr(c))]
    lines = [f"[ERROR]{w}IdempotencyValidationError: x" for w in python_ws]
    sample_non_ws = ["\u200b", "\u180e", "\ufeff", "x", "\x00", "\x1b"]
    lines_no = [f"[ERROR]{w}IdempotencyValidationError: x" for w in sample_non_ws]
    con = duckdb.connect()
    got = con.execute("SELECT list(regexp_extract(x, $2, 1) <> '') FROM unnest($1::VARCHAR[]) t(x)",
                      [lines + lines_no, EXCEPTION_LINE_RE]).fetchone()[0]
    assert got == [True] * len(lines) + [False] * len(lines_no)
    assert len(python_ws) == 29


def test_string_rows_of_cloudwatch():
    """``library_signals_rows`` (the GetQueryResults form ``collect cloudwatch`` uses): string timestamps in, the
    table's string form out, dropped entries counted."""
    doc = json.dumps({"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Metrics": [
        {"Name": "DuplicateCompleted", "Unit": "Count"}, {"Name": "Bad", "Unit": "Count"}]}]},
        "service": "s", "DuplicateCompleted": [1, 2.5], "Bad": "x"})
    rows = [{"@timestamp": "2026-01-05 10:00:30.000", "@log": "123456789012:/aws/lambda/f", "@message": doc},
            {"@timestamp": "1767607255000", "@log": "123456789012:/aws/lambda/f",
             "@message": "[ERROR] 2026-01-05T10:00:55Z 1f2e IdempotencyAlreadyInProgressError: busy"},
            {"@timestamp": "", "@message": doc}]
    out, dropped = library_signals_rows(rows)
    assert dropped == 1
    assert out == [
        {"time": "1767607200000", "log_group": "123456789012:/aws/lambda/f", "library": "powertools",
         "signal": "duplicate_completed", "events": "3.5"},
        {"time": "1767607200000", "log_group": "123456789012:/aws/lambda/f", "library": "powertools",
         "signal": "duplicate_in_progress", "events": "1.0"}]


@pytest.mark.slow
def test_local_collection_sums_in_ingest_order(tmp_path: Path):
    """Through ``collect local``: fractional values at tied timestamps are summed in the order of the events in the
    file (the query's order: @timestamp, then ingest order), as the old rule did."""
    import random

    rnd = random.Random(5)
    lines, triples = [], []
    for i in range(400):
        ms = 1767607200000 + rnd.choice([0, 0, 1, 30_000, 61_000])
        values = [rnd.choice([0.1, 0.2, 0.3, 1e16, -1e16, 0.7]) for _ in range(rnd.randint(1, 3))]
        doc = json.dumps({"_aws": {"Timestamp": ms, "CloudWatchMetrics": [{"Metrics": [
            {"Name": "X", "Unit": "Count"}]}]}, "X": values})
        lines.append(doc)  # a JSON line's time is its _aws.Timestamp
        triples.append((ms, "000000000000:/aws/lambda/f", doc))
    src = tmp_path / "f.log"
    src.write_text("\n".join(lines) + "\n")
    collect_local([src], tmp_path / "out", account_id="000000000000")
    table = pq.read_table(tmp_path / "out" / "tables" / "library_signals.parquet").to_pylist()
    want, _ = _oracle(sorted(triples, key=lambda t: t[0]))  # a stable sort: ties keep the file's order
    assert [(int(r["time"].timestamp() * 1000), r["signal"], r["events"].hex()) for r in table] == \
           [(t, sig, ev.hex()) for t, _, _, sig, ev in want]


@pytest.mark.slow
def test_fractional_sums_in_order_over_parallel_scans():
    """300,000 fractional values in one bin: DuckDB sums them in parallel, in another order; the rule must detect
    the inexact sum and take it again in row order (without that second pass the last digits differ)."""
    import random

    rnd = random.Random(3)
    docs = [json.dumps({"_aws": {"Timestamp": 1, "CloudWatchMetrics": [{"Metrics": [{"Name": "X", "Unit": "Count"}]}]},
                        "X": [rnd.choice([0.1, 0.2, 0.3, 0.7, 1.1e-3, 3.3])]}) for _ in range(50)]
    rows = [(rnd.choice([0, 1]), "g", rnd.choice(docs)) for _ in range(300_000)]
    got, _ = _sql(rows)
    want, _ = _oracle(rows)
    assert _same(got, want), (got, want)
