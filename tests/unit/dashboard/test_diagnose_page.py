"""The Diagnose page (Streamlit AppTest): the last ``idemwatch diagnose`` beside the signals it explains, with the
records that prove each finding linked into the Events explorer.

Expected values come from the diagnose.json the demo writes (read here with ``json``, not through the dashboard), the
demo's ground truth (which anti-pattern was built into which function) and DuckDB over the Parquet tables.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parents[3]
APP = ROOT / "dashboard" / "app.py"
PAGE = "app_pages/diagnose.py"
LABEL = {"fail": "found", "unknown": "not observable", "pass": "not found", "suppressed": "suppressed"}
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def injected(tmp_path_factory) -> tuple[Path, dict[str, set[str]]]:
    """A small seeded demo run with every anti-pattern built in, collected, audited and diagnosed as
    ``idemwatch demo --inject all`` does it; and the ground truth's function -> rules that must find them."""
    from alarms.audit.demo import run_demo_audit
    from collector.collect import collect_local
    from dashboard.demo import run_demo
    from dashboard.demo.compare import diagnosis_vs_truth
    from dashboard.demo.faults import AntiPattern

    out = tmp_path_factory.mktemp("diagnose-demo")
    truth = run_demo(out, seed=7, events=3000, duration_s=3600, start_ms=1_767_607_200_000,
                     anti_patterns=list(AntiPattern))
    collect_local([out / "logs"], out)
    run_demo_audit(out)
    rows = diagnosis_vs_truth(truth, out)
    assert all(r.match for r in rows), rows  # the demo's own check: the page below shows a right diagnosis
    return out, truth.expected_rules()


def _run(monkeypatch, data_dir: Path, page: str = PAGE, **params: str):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("IDEMWATCH_DATA", str(data_dir))
    monkeypatch.delenv("IDEMWATCH_ALARMS_CONFIG", raising=False)
    at = AppTest.from_file(str(APP), default_timeout=60)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _doc(data_dir: Path) -> dict:
    return json.loads((data_dir / "diagnose.json").read_text(encoding="utf-8"))


def _grid(at, key: str):
    return at.get_by_key(f"table-{key}").dataframe[0]


@pytest.mark.slow
def test_findings_and_evidence_equal_the_demo_diagnosis(monkeypatch, injected, read):
    data_dir, expected = injected
    doc = _doc(data_dir)
    fs = doc["findings"]
    at = _run(monkeypatch, data_dir, range="all")
    statuses = Counter(f["status"] for f in fs)
    assert {m.label: m.value for m in at.main.metric} == {
        "Found": str(statuses["fail"]), "Not observable": str(statuses["unknown"]),
        "Not found": str(statuses["pass"]), "Suppressed": str(statuses["suppressed"])}
    # default: rules that found nothing are hidden; found first, then not observable
    df = _grid(at, "diagnose").value
    shown = [f for f in fs if f["status"] != "pass"]
    assert len(df) == len(shown)
    assert list(df["status"]) == sorted((LABEL[f["status"]] for f in shown),
                                        key=["found", "not observable"].index)
    found = df[df["status"] == "found"]
    # exactly the anti-patterns built in, in the functions they were built into (ground truth)
    assert {(r.rule, r.function) for r in found.itertuples()} == {(rule, fn) for fn, rules in expected.items()
                                                                  for rule in rules}
    by_key = {(f["rule"], f["function"]): f for f in fs}
    for r in df.itertuples():
        f = by_key[(r.rule, r.function)]
        rule = doc["rules"][r.rule]
        assert (r.severity, r.operation, r.count, r.message, r.checklist) == (
            f["severity"], f["operation"], f["count"], f["message"], rule["checklist"])
        assert (r.first, r.last) == (f["first"] or "", f["last"] or "")
        first_ids = [rec.get("event_id") for rec in f["examples"][0]["records"]] if f["examples"] else []
        assert r.event_id == next((i for i in first_ids if i), "")
    # the ids are links into the explorer, the rule selects the evidence
    labels = read.labels(at, "diagnose")
    assert labels["event_id"].endswith("↗") and labels["function_request_id"].endswith("↗")
    assert labels["rule"] == "rule ↗"
    # signals in window (All data) for a found finding: its operation's counts, by DuckDB
    r105 = found[found["rule"] == "IW105"].iloc[0]
    con = duckdb.connect()
    dup = con.execute(f"SELECT coalesce(sum(events), 0) FROM '{data_dir}/tables/outcomes.parquet' "
                      "WHERE outcome = 'duplicate_completed' AND operation = ?", [r105.operation]).fetchone()[0]
    con.close()
    assert r105.explains.startswith(f"Duplicates: {int(dup):,} · Stuck keys: ")
    # IW105 relates to the audit's IW008 (the shared idempotency table): the demo template passes it
    assert r105.static == "IW008 pass (table idempotency)"
    # evidence of the default pick (the first found finding): every record of its examples, in order
    first = df.iloc[0]
    assert at.selectbox(key="dg_finding").value == first["id"]
    f = by_key[(first["rule"], first["function"])]
    ev = _grid(at, "evidence").value
    recs = [(ex["entity"], rec) for ex in f["examples"] for rec in ex["records"]]
    assert len(ev) == len(recs)
    assert list(ev["example"]) == [e for e, _ in recs]
    assert list(ev["time"]) == [rec["time"] for _, rec in recs]
    assert list(ev["outcome"]) == [rec["outcome"] for _, rec in recs]
    assert list(ev["event_id"]) == [rec.get("event_id", "") for _, rec in recs]
    assert list(ev["function_request_id"]) == [rec.get("function_request_id", "") for _, rec in recs]
    ev_labels = read.labels(at, "evidence")
    assert ev_labels["event_id"] == "event id ↗" and ev_labels["function_request_id"] == "request id ↗"
    caption = next(c.value for c in at.caption if "proving entities shown" in c.value)
    assert caption.startswith(f"{len(f['examples'])} of {f['count']:,} proving entities")
    # another finding by its URL parameter (what a click on its rule opens)
    pick = found[found["rule"] == "IW109"].iloc[0]
    at2 = _run(monkeypatch, data_dir, range="all")
    at2.query_params["finding"] = pick["id"]  # an edited URL or a link: the URL wins this run
    at2.run()
    assert at2.selectbox(key="dg_finding").value == pick["id"]
    f = by_key[("IW109", pick["function"])]
    ev = _grid(at2, "evidence").value
    assert list(ev["event_id"]) == [rec.get("event_id", "") for ex in f["examples"] for rec in ex["records"]]
    links = [p.proto.page for p in at2.get("page_link")]
    assert "timeout_aborts" in links, links
    # the toggle shows every finding
    at.toggle(key="dg_passed").set_value(True).run()
    assert len(_grid(at, "diagnose").value) == len(fs)


@pytest.mark.slow
def test_configuration_page_links_the_evidence(monkeypatch, injected):
    """The audit's failed ledger-stream checks (IW005, IW007) beside the related evidence rule IW108's verdict on
    ledger-stream, as diagnose.json states it; and a link to the Diagnose page."""
    data_dir, _ = injected
    doc = _doc(data_dir)
    iw108 = next(f for f in doc["findings"] if f["rule"] == "IW108" and f["function"] == "ledger-stream")
    at = _run(monkeypatch, data_dir, page="app_pages/configuration.py")
    df = at.get_by_key("table-audit").dataframe[0].value
    assert list(df["rule"]) == ["IW005", "IW007"]
    assert set(df["evidence"]) == {f"IW108 {LABEL[iw108['status']]}" + (
        f": {iw108['count']:,}" if iw108["status"] == "fail" else "")}
    assert "diagnose" in [p.proto.page for p in at.get("page_link")]


def test_no_diagnosis_says_how_to_write_one(app_factory, data_dir):
    at = app_factory(data_dir)
    at.switch_page(PAGE).run()
    assert not at.exception
    assert "No diagnosis" in at.info[0].value
    assert f"idemwatch diagnose --data {data_dir} --format json --out {data_dir / 'diagnose.json'}" in at.code[0].value
    assert not at.get("arrow_data_frame")


@pytest.fixture()
def own_dir(tmp_path, sample_mod) -> Path:
    return sample_mod.write_data_dir(tmp_path)


@pytest.mark.parametrize(("text", "says"), [
    ('{"findings": [', "is not valid JSON: Expecting value: line 1 column 15"),
    ('{"findings": 3}', "is not an idemwatch diagnose JSON document (no findings list)"),
    ("[1, 2]", "is not an idemwatch diagnose JSON document (no findings list)"),
    ("\udcff".encode("utf-8", "surrogateescape").decode("latin-1"), "is not valid JSON"),
])
def test_broken_diagnosis_is_one_clear_line(app_factory, own_dir, text, says):
    (own_dir / "diagnose.json").write_text(text, encoding="utf-8")
    at = app_factory(own_dir)
    at.switch_page(PAGE).run()
    assert not at.exception
    assert len(at.error) == 1
    msg = re.sub(r"\\(.)", r"\1", at.error[0].value)  # md_escape undone: the text the browser shows
    assert "\n" not in msg and says in msg and str(own_dir / "diagnose.json") in msg, msg
    assert "idemwatch diagnose --data" in at.code[0].value


FINDING = {"rule": "IW106", "severity": "high", "kind": "function", "resource": "fn (Op)", "status": "fail",
           "message": "m", "function": "fn", "operation": "Op", "count": 2, "first": "2026-01-05T10:00:00Z",
           "last": "2026-01-05T10:01:00Z", "truncated": False,
           "examples": [{"entity": "e-1", "records": [{"time": "2026-01-05T10:00:00Z", "outcome": "received",
                                                       "event_id": "e-1", "attempt": 1}, "not a record"]},
                        7]}
RULES = {"IW106": {"slug": "redelivered-during-processing", "checklist": "c", "signals": ["in_progress"],
                   "related": ["IW001"]}}


def test_partial_diagnosis_counts_what_it_cannot_show(app_factory, own_dir):
    """Entries that are not objects, a status and a rule diagnose never writes, a summary that disagrees, examples
    and records that are not objects: each counted in a warning, everything else shown."""
    doc = {"summary": {"fail": 5, "pass": 0, "unknown": 0, "suppressed": 0}, "rules": RULES,
           "findings": [FINDING, "junk", None, {**FINDING, "rule": "IW999", "status": "weird", "examples": []}]}
    (own_dir / "diagnose.json").write_text(json.dumps(doc), encoding="utf-8")
    at = app_factory(own_dir)
    at.switch_page(PAGE).run()
    assert not at.exception
    warnings = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]  # as the browser shows them
    assert any(w.startswith("2 of 4 entries of the findings list are not objects") for w in warnings), warnings
    assert any(w.startswith("1 finding(s) have a status diagnose does not write") for w in warnings), warnings
    assert any("IW999" in w and "does not describe" in w for w in warnings), warnings
    assert any("summary disagrees" in w and "summary 5, listed 1" in w for w in warnings), warnings
    assert any(w.startswith("2 example(s) or record(s)") for w in warnings), warnings
    df = at.get_by_key("table-diagnose").dataframe[0].value
    assert list(df["rule"]) == ["IW106", "IW999"] and list(df["status"]) == ["found", "weird"]
    assert df.iloc[0]["static"] == "IW001 (no audit)"
    ev = at.get_by_key("table-evidence").dataframe[0].value
    assert list(ev["event_id"]) == ["e-1"] and list(ev["attempt"]) == [1]


HOSTILE = {"fn": "<img src=x onerror=alert(1)>", "op": "**bold** $x$ :red[y]", "msg": "[click](javascript:alert(1))"}


def test_hostile_diagnosis_is_text(app_factory, own_dir):
    f = {**FINDING, "function": HOSTILE["fn"], "operation": HOSTILE["op"], "message": HOSTILE["msg"],
         "examples": [{"entity": HOSTILE["fn"], "records": [{"time": HOSTILE["op"], "event_id": HOSTILE["msg"]}]}]}
    doc = {"source": HOSTILE["msg"], "rules": {"IW106": {**RULES["IW106"], "slug": HOSTILE["op"],
                                                        "checklist": HOSTILE["fn"]}}, "findings": [f]}
    (own_dir / "diagnose.json").write_text(json.dumps(doc), encoding="utf-8")
    at = app_factory(own_dir)
    at.switch_page(PAGE).run()
    assert not at.exception
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "title", "subheader"):
        for el in getattr(at, kind):
            for s in HOSTILE.values():
                assert s not in str(el.value), (kind, el.value)
    for p in at.get("page_link"):
        for s in HOSTILE.values():
            assert s not in p.proto.label, p.proto.label
    df = at.get_by_key("table-diagnose").dataframe[0].value
    assert df.iloc[0]["function"] == HOSTILE["fn"] and df.iloc[0]["message"] == HOSTILE["msg"]
    ev = at.get_by_key("table-evidence").dataframe[0].value
    assert list(ev["event_id"]) == [HOSTILE["msg"]]
