"""The redaction rule (emitter/redact.py, docs/secrets.md): name normalization and family matching.

Expected decisions are written by hand from the rule; the word splitter is checked against an independent
regex splitter (hypothesis) so the hand-written loop cannot drift from the documented rule.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emitter import DEFAULT_REDACTED_KEYS, Emitter, LogKey, MemorySink
from emitter.contract import DEFAULT_REDACTED_EXACT_KEYS, REDACTED
from emitter.redact import SecretNames, name_words, normalize_name

DEFAULT = SecretNames(DEFAULT_REDACTED_KEYS, DEFAULT_REDACTED_EXACT_KEYS)

# The names issue 10 found written in clear (each must be redacted by the default list).
ISSUE_10_LEAKS = ["accessToken", "refreshToken", "idToken", "clientSecret", "privateKey", "sessionToken", "setCookie",
                  "AWS_SECRET_ACCESS_KEY", "x-amz-security-token", "Proxy-Authorization", "session_token",
                  "db_password", "pwd", "jwt", "bearer", "credentials", "signature"]


@pytest.mark.parametrize("name", ISSUE_10_LEAKS)
def test_issue_10_names_are_redacted(name):
    assert name in DEFAULT


@pytest.mark.parametrize(("name", "words"), [
    ("accessToken", ["access", "token"]),
    ("X-Amz-Security-Token", ["x", "amz", "security", "token"]),
    ("AWS_SECRET_ACCESS_KEY", ["aws", "secret", "access", "key"]),
    ("XMLHttpToken", ["xml", "http", "token"]),
    ("XAPIKey", ["xapi", "key"]),
    ("oauth2Token", ["oauth", "2", "token"]),
    ("card.number", ["card", "number"]),
    ("  __x__  ", ["x"]),
    ("Straße", ["strasse"]),  # case-folded, not just lower-cased
    ("", []),
])
def test_name_words(name, words):
    assert name_words(name) == words


@pytest.mark.parametrize("name", [
    # families: a listed name inside a longer one, at word boundaries
    "db_password", "dbPassword", "DB-PASSWORD", "user.password", "passwordHash", "newPassword", "x-api-key",
    "XApiKey", "XAPIKey", "my_api_key_value", "stripeSecretKey", "csrftoken", "xapikey", "clientsecret",
    "secretaccesskey", "JSESSIONID", "PHPSESSID", "session", "Session", "Set-Cookie", "cookies",
    "Authorization", "authorizationToken", "jwt_claims_raw", "PAN", "card_pan", "cardNumber", "pin_code",
])
def test_redacted(name):
    assert name in DEFAULT, DEFAULT.match(name)


@pytest.mark.parametrize("name", [
    # documented false-positive guards
    "tokens_used", "input_tokens", "max_tokens",  # plural 'tokens' = a count (LLM usage); only qualified plurals redact
    "tokenizer", "secretary", "span", "company", "Japan", "spin_count", "footprint", "shipping",
    "idempotency_key", "idempotencyKey", "partition_key", "sort_key", "object_key", "key", "keys", "public_key",
    "session_duration", "role_session_name", "event_name", "message_group_id", "sequence_number",
])
def test_not_redacted(name):
    assert name not in DEFAULT, DEFAULT.match(name)


def test_short_names_only_match_from_a_word_boundary():
    # 'pwd' (3 chars) inside a run-together word is not matched (rule 2, MIN_SUFFIX_CHARS); with a boundary it is
    assert "dbpwd" not in DEFAULT
    assert "db_pwd" in DEFAULT and "dbPwd" in DEFAULT


def test_contract_log_keys_and_adapter_details_are_never_redacted():
    import json
    from pathlib import Path

    from emitter.adapters import adapt_event

    assert [k.value for k in LogKey if k.value in DEFAULT] == []
    detail_keys: set[str] = set()
    for path in sorted((Path(__file__).parent / "events").glob("*.json")):
        recs, _ = adapt_event(json.loads(path.read_text()), 0)
        detail_keys |= {k for r in recs for k in r.details}
    assert len(detail_keys) > 30  # every adapter's details were collected
    assert [k for k in sorted(detail_keys) if k in DEFAULT] == []


def test_every_default_name_matches_itself_in_every_form():
    for name in DEFAULT_REDACTED_KEYS:
        words = normalize_name(name).split("_")
        forms = ["_".join(words), "-".join(words).upper(), words[0] + "".join(w.title() for w in words[1:]),
                 "".join(w.title() for w in words), ".".join(words), "".join(words)]
        assert [f for f in forms if f not in DEFAULT] == [], name


def test_normalize_name_is_idempotent_and_the_decision_is_form_independent():
    for name in ["accessToken", "X-Amz-Security-Token", "tokens_used", "XAPIKey", "oauth2Token"]:
        n = normalize_name(name)
        assert normalize_name(n) == n
        assert (n in DEFAULT) == (name in DEFAULT)


def test_additions_and_exceptions_configure_the_emitter():
    mem = MemorySink()
    em = Emitter(service="s", sink=mem, redact_extra_keys={"customerEmail"}, redact_exceptions={"token_count"})
    em.succeeded(None, "k", customer_email="a@b.c", billing_customer_email="b@c.d", token_count=3,
                 refresh_token="rt-secret", tokens_used=7)
    (r,) = mem.records()
    assert r["customer_email"] == r["billing_customer_email"] == REDACTED  # the addition is a family too
    assert r["refresh_token"] == REDACTED  # the default list is kept
    assert r["token_count"] == 3 and r["tokens_used"] == 7


def test_exception_is_a_whole_name_only():
    em_names = SecretNames(DEFAULT_REDACTED_KEYS, exceptions={"token_count"})
    assert "TokenCount" not in em_names and "token-count" not in em_names
    assert "refresh_token_count" in em_names  # not the excepted name: 'token' still matches


def test_non_string_names_are_reported_not_raised():
    mem = MemorySink()
    em = Emitter(service="s", sink=mem, redact_keys=["password", 42])
    (w,) = mem.records()
    assert w["idemwatch_warning"] == "invalid_property"
    assert w["idemwatch_dropped"][0]["element"] == "redact_keys"
    em.succeeded(None, "k", db_password="x")
    assert mem.records()[-1]["db_password"] == REDACTED


# --------------------------------------------------------------------------- independent oracle for rule 1
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def oracle_words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name)]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="aAbBzZkK09_-. /:xXyY", max_size=24))
def test_word_splitter_agrees_with_regex_oracle(name):
    assert name_words(name) == oracle_words(name)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(DEFAULT_REDACTED_KEYS)), st.sampled_from(["", "my", "db", "x", "app", "aws"]),
       st.sampled_from(["", "value", "hash", "header", "v2", "old"]), st.sampled_from(["_", "-", ".", " ", "camel"]),
       st.booleans())
def test_any_listed_name_with_prefix_or_suffix_words_is_redacted(name, prefix, suffix, sep, upper):
    words = [w for w in (prefix, *normalize_name(name).split("_"), suffix) if w]
    if sep == "camel":
        form = words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])
    else:
        form = sep.join(words)
    form = form.upper() if upper and sep != "camel" else form
    assert form in DEFAULT
