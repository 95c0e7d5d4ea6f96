"""The AlarmRule parser and evaluator: the API reference's examples, its limits, bad rules named, and fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alarms import alarm_rule as R

# (rule, children, elements): the examples of the PutCompositeAlarm reference and the User Guide
EXAMPLES = [
    ("ALARM(CPUUtilizationTooHigh) AND ALARM(DiskReadOpsTooHigh)", ("CPUUtilizationTooHigh", "DiskReadOpsTooHigh"), 2),
    ("ALARM(CPUUtilizationTooHigh) AND NOT ALARM(DeploymentInProgress)",
     ("CPUUtilizationTooHigh", "DeploymentInProgress"), 2),
    ("(ALARM(CPUUtilizationTooHigh) OR ALARM(DiskReadOpsTooHigh)) AND OK(NetworkOutTooHigh)",
     ("CPUUtilizationTooHigh", "DiskReadOpsTooHigh", "NetworkOutTooHigh"), 4),  # a parenthesis pair is one element
    ('(ALARM("CPUUtilizationTooHigh") OR \nALARM("DiskReadOpsTooHigh")) AND \nOK("NetworkOutTooHigh")',
     ("CPUUtilizationTooHigh", "DiskReadOpsTooHigh", "NetworkOutTooHigh"), 4),
    ("TRUE", (), 1),
    ("FALSE", (), 1),
    ('INSUFFICIENT_DATA("arn:aws:cloudwatch:us-east-1:123456789012:alarm:my alarm")', ("my alarm",), 1),
    ("ALARM(a) OR ALARM(a)", ("a",), 2),  # one child, named twice
    ("AT_LEAST(2, ALARM, (a, b, c))", ("a", "b", "c"), 4),
]


@pytest.mark.parametrize(("rule", "children", "elements"), EXAMPLES, ids=[e[0][:40] for e in EXAMPLES])
def test_documented_rules_parse(rule, children, elements):
    parsed = R.parse(rule)
    assert (parsed.children, parsed.elements, parsed.mixed_and_or) == (children, elements, False)


BAD = [
    ("", "the rule is empty"),
    ("ALARM(a", "unterminated alarm name"),
    ('ALARM("a)', "unterminated quoted alarm name"),
    ("ALARM()", "expected an alarm name, got ')'"),
    ('ALARM("")', "empty alarm name"),
    ("alarm(a)", "unknown word 'alarm'"),
    ("ALARM(a) OR", "expected a condition, got the end of the rule"),
    ("ALARM(a) ALARM(b)", "unexpected 'ALARM' after a complete rule"),
    ("(ALARM(a)", "expected ), got the end of the rule"),
    ("ALARM a", "expected (, got 'a'"),
    ("AT_LEAST(x, ALARM, (a))", "AT_LEAST needs a count or a percentage"),
    ("AT_LEAST(1, FIRING, (a))", "expected one of ALARM, OK, INSUFFICIENT_DATA"),
]


@pytest.mark.parametrize(("rule", "message"), BAD, ids=[b[0] or "empty" for b in BAD])
def test_bad_rules_are_refused_with_the_position(rule, message):
    with pytest.raises(R.RuleSyntaxError) as e:
        R.parse(rule)
    assert message in str(e.value) and "(at character " in str(e.value)


def test_and_or_mixed_without_parentheses_is_reported():
    assert R.parse("ALARM(a) AND ALARM(b) OR ALARM(c)").mixed_and_or
    assert R.parse("ALARM(a) OR ALARM(b) AND ALARM(c)").mixed_and_or
    assert not R.parse("(ALARM(a) AND ALARM(b)) OR ALARM(c)").mixed_and_or


STATES = {"a": "ALARM", "b": "OK", "c": "INSUFFICIENT_DATA"}


@pytest.mark.parametrize(("rule", "value"), [
    ("ALARM(a)", True), ("ALARM(b)", False), ("OK(b)", True), ("INSUFFICIENT_DATA(c)", True),
    ("INSUFFICIENT_DATA(unknown)", True),  # an alarm without data, or not in the map
    ("ALARM(a) AND ALARM(b)", False), ("ALARM(a) OR ALARM(b)", True), ("ALARM(a) AND NOT ALARM(b)", True),
    ("NOT (ALARM(a) OR OK(b))", False), ("TRUE AND FALSE", False), ("FALSE OR TRUE", True),
    ("AT_LEAST(1, ALARM, (a, b, c))", True), ("AT_LEAST(2, ALARM, (a, b, c))", False),
    ("AT_LEAST(60%, OK, (a, b))", False), ("AT_LEAST(50%, OK, (a, b))", True),
    ('ALARM("arn:aws:cloudwatch:us-east-1:1:alarm:a")', True),
])
def test_evaluate(rule, value):
    assert R.evaluate(R.parse(rule).tree, STATES) is value


def test_render_any_quotes_and_refuses_a_quote():
    assert R.render_any(["a b", "c(d)"]) == 'ALARM("a b") OR ALARM("c(d)")'
    assert R.render_any([]) == "FALSE"
    with pytest.raises(ValueError, match="double quote"):
        R.quote('a"b')


def test_rewrite_replaces_quoted_names_and_escapes_the_rest():
    text = 'ALARM("a") OR ALARM("${x}") OR OK(b)'
    got = R.rewrite(text, lambda n: "${A}" if n == "a" else None, lambda t: t.replace("${", "${!"))
    assert got == 'ALARM("${A}") OR ALARM("${!x}") OR OK(b)'


_NAME = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E, blacklist_characters='"'), min_size=1,
                max_size=30).filter(lambda s: s.strip() == s and s)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_text_parses_or_raises_the_syntax_error(text):
    try:
        parsed = R.parse(text)
    except R.RuleSyntaxError:
        return
    assert parsed.elements >= 1
    R.evaluate(parsed.tree, {})


@settings(max_examples=200, deadline=None)
@given(st.lists(_NAME, min_size=1, max_size=8, unique=True), st.data())
def test_rendered_rules_name_their_children_and_are_true_when_one_is_in_alarm(names, data):
    parsed = R.parse(R.render_any(names))
    assert parsed.children == tuple(names) and parsed.elements == len(names)
    states = {n: data.draw(st.sampled_from(["ALARM", "OK", "INSUFFICIENT_DATA"])) for n in names}
    assert R.evaluate(parsed.tree, states) is any(s == "ALARM" for s in states.values())
