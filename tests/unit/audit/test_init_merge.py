"""The merge of ``idemwatch init`` under hostile edits: whatever a person adds to the file (keys, values in any
script, comments, quoting, flow style), a re-run with the same template changes nothing; a first run never
overwrites an existing key."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alarms.stack_init import derive, merge_config, read_source

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "alarms" / "demo-template.yaml"
_DERIVED = derive(read_source(DEMO).inventory)
_FIRST = merge_config(_DERIVED, None, "demo-template.yaml").text

_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30)
_SCALAR = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
                    _TEXT)
_KEY = st.from_regex(r"[a-z_]{1,12}", fullmatch=True).filter(lambda k: k not in ("functions",))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(top=st.dictionaries(_KEY, _SCALAR, max_size=4), per_fn=st.dictionaries(_KEY, _SCALAR, max_size=3),
       comment=_TEXT.filter(lambda t: "\n" not in t and "\r" not in t and "\x85" not in t and "\u2028" not in t
                            and "\u2029" not in t))
def test_rerun_changes_nothing_a_person_wrote(top, per_fn, comment):
    doc = yaml.safe_load(_FIRST)
    for k, v in top.items():
        doc.setdefault(k, v)
    for k, v in per_fn.items():
        doc["functions"][0].setdefault(k, v)
    text = "# " + comment + "\n" + yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, default_flow_style=None)
    again = merge_config(_DERIVED, text, "demo-template.yaml")
    assert yaml.safe_load(again.text) == yaml.safe_load(text)
    assert again.text.startswith("# " + comment)
    assert not again.added and not again.kept
    assert again.differs == []


def test_existing_keys_win_over_the_template():
    text = _FIRST.replace("service: shop", "service: 'other'  # theirs").replace(
        "queue: orders-queue", "queue: \"orders-queue-2\"")
    merged = merge_config(_DERIVED, text, "t")
    assert "service: 'other'  # theirs" in merged.text and 'queue: "orders-queue-2"' in merged.text
    assert merged.differs == ["service (file: other, template: shop)",
                              "orders-consumer.queue (file: orders-queue-2, template: orders-queue)"]


def test_not_a_config_is_refused():
    for text, message in (("- a\n- b\n", "top level must be a mapping"), ("functions: 3\n", "functions must be a list"),
                          ("a: [\n", "not valid YAML at line 2")):
        try:
            merge_config(_DERIVED, text, "t")
        except ValueError as exc:
            assert message in str(exc)
        else:
            raise AssertionError(text)


def test_a_rerun_with_nothing_to_add_keeps_the_text_byte_for_byte():
    """Layout ruamel.yaml would re-flow (a flow list folded over two lines, blank lines, 4-space indents) stays
    as the person wrote it when the template brings nothing new; once it does, the merge is written."""
    folded = ("contributor_insights:\n    outcomes: [payload_conflict, duplicate_completed,\n"
              "        duplicate_in_progress, stale_claim_takeover]\n\n\n")
    text = _FIRST.replace("functions:\n", folded + "functions:\n")
    again = merge_config(_DERIVED, text, "demo-template.yaml")
    assert again.text == text and not again.added
    lost = text.replace("  - name: payment-capture\n", "  - name: payment-capture-old\n")
    merged = merge_config(_DERIVED, lost, "demo-template.yaml")
    assert merged.added == ["payment-capture"] and merged.kept == ["payment-capture-old"]
    assert yaml.safe_load(merged.text)["contributor_insights"]["outcomes"] == [
        "payload_conflict", "duplicate_completed", "duplicate_in_progress", "stale_claim_takeover"]
