"""Redaction of log properties by name, and hashing of idempotency keys.

The redaction rule (documented with the list in ``docs/secrets.md``):

1. A name is split into words: at every character that is not a letter or a digit (``_ - . / : space``...), at
   camelCase humps (``accessToken`` -> access|token, ``XMLHttpToken`` -> xml|http|token) and between letters and
   digits (``oauth2Token`` -> oauth|2|token); words are case-folded. :func:`normalize_name` gives them joined by
   ``_`` (``X-Amz-Security-Token`` -> ``x_amz_security_token``).
2. A listed name (``api_key``) is normalized the same way and its words are joined without separators (``apikey``).
   It matches a property name when that string occurs in the property's words joined without separators, ending
   at a word boundary and either starting at one or being at least 5 characters long (:data:`MIN_SUFFIX_CHARS`).
   So ``db_password``, ``dbPassword``, ``x-api-key``, ``XAPIKey``, ``clientsecret``, ``AWS_SECRET_ACCESS_KEY`` and
   ``passwordHash`` match, while ``tokenizer``, ``tokens_used``, ``secretary``, ``idempotency_key`` and ``span``
   (for ``pan``) do not.
3. Names listed as *exact* (payload names like ``body``, ``event``; ``session``) match only as the whole name.
4. Exceptions (``redact_exceptions=``) are whole normalized names that are never redacted; they win over 1-3.

The decision for a name is cached (a function logs the same few property names over and over), so the hot path is
one dict lookup. Redaction is applied at every nesting depth of dicts and lists (:mod:`emitter.sanitize`).

Hashing keeps a tenant prefix readable: ``"acme:order-42"`` -> ``"acme:sha256:9f86d0..."`` (first 32 hex chars of
SHA-256, or HMAC-SHA256 with a salt). ``hashlib``/``hmac`` are imported only when hashing is on (they load OpenSSL;
the import budget matters).
"""

from __future__ import annotations

from emitter.contract import DEFAULT_REDACTED_KEYS, REDACTED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

MIN_SUFFIX_CHARS = 5
"""A listed name this long (joined, e.g. ``token``, ``apikey``) also matches inside a run-together word ending with
it (``csrftoken``, ``xapikey``); shorter ones (``pan``, ``pwd``, ``jwt``) only from a word boundary, so ``span`` and
``company`` are not redacted as ``pan``."""

_CACHE_MAX = 4096
"""Names whose decision is cached per :class:`SecretNames` (beyond this, decisions are computed each time)."""


def name_words(name: str) -> list[str]:
    """The case-folded words of a property name (rule 1 of the module docstring).

    >>> name_words("X-Amz-Security-Token"), name_words("XMLHttpToken"), name_words("oauth2Token")
    (['x', 'amz', 'security', 'token'], ['xml', 'http', 'token'], ['oauth', '2', 'token'])
    """
    words: list[str] = []
    cur: list[str] = []
    prev = ""  # kind of the previous character: "u" upper, "l" lower/other letter, "d" digit, "" none
    n = len(name)
    for i, ch in enumerate(name):
        if ch.isalpha():
            kind = "u" if ch.isupper() else "l"
        elif ch.isdigit():
            kind = "d"
        else:
            if cur:
                words.append("".join(cur))
                cur = []
            prev = ""
            continue
        if cur and (
            (kind == "u" and prev in "ld")  # fooBar, 2Fa
            or (kind == "l" and prev == "d")  # 2fa
            or (kind == "d" and prev in "ul")  # token2
            or (kind == "u" and prev == "u" and i + 1 < n and name[i + 1].isalpha() and name[i + 1].islower())  # XMLHttp
        ):
            words.append("".join(cur))
            cur = []
        cur.append(ch)
        prev = kind
    if cur:
        words.append("".join(cur))
    return [w.casefold() for w in words]


def normalize_name(name: str) -> str:
    """The normalized form redaction compares: case-folded words joined by ``_`` (``accessToken`` ->
    ``access_token``, ``Proxy-Authorization`` -> ``proxy_authorization``). Idempotent."""
    return "_".join(name_words(name))


def normalized_set(names: Iterable[str]) -> frozenset[str]:
    """``{normalize_name(n) for n in names}`` as a frozenset."""
    return frozenset(normalize_name(n) for n in names)


class SecretNames:
    """The redaction decision for property names: ``name in secret_names`` is True when the name's value must be
    written as ``***REDACTED***`` (rules in the module docstring). Works on raw or normalized names alike.

    Args:
        names: listed names matched as families (``password`` also matches ``db_password``); default
            :data:`emitter.contract.DEFAULT_REDACTED_KEYS`.
        exact: names matched only as the whole name (payload names, ``session``).
        exceptions: whole names never redacted (normalized before comparing), e.g. ``{"token_count"}``.
        extra: more family names, added to ``names`` (``Emitter(redact_extra_keys=...)``).

    Never raises: a listed name that is not a string (an Enum member counts as its value) is left out and counted
    in ``rejected`` (the emitter reports it in a warning record).
    """

    __slots__ = ("_cache", "_exact", "_exceptions", "_family", "rejected")

    def __init__(self, names: Iterable[str] = DEFAULT_REDACTED_KEYS, exact: Iterable[str] = (),
                 exceptions: Iterable[str] = (), extra: Iterable[str] = ()) -> None:
        self.rejected = 0
        family = self._joined(names) | self._joined(extra)
        family.discard("")
        # longest first: the first hit decides, and a long listed name is the more specific reason
        self._family: tuple[str, ...] = tuple(sorted(family, key=lambda s: (-len(s), s)))
        self._exact = frozenset(self._joined(exact))
        self._exceptions = frozenset(self._joined(exceptions))
        self._cache: dict[str, bool] = {}

    def _joined(self, names: Iterable[str]) -> set[str]:
        out = set()
        for n in names if not isinstance(names, str) else (names,):
            n = getattr(n, "value", n)
            if isinstance(n, str):
                out.add("".join(name_words(n)))
            else:
                self.rejected += 1
        return out

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        hit = self._cache.get(name)
        if hit is None:
            hit = self.match(name) is not None
            if len(self._cache) < _CACHE_MAX:
                self._cache[name] = hit
        return hit

    def match(self, name: str) -> str | None:
        """The listed name (joined form) that makes ``name`` secret, ``"exact"`` for an exact-list hit, or None."""
        words = name_words(name)
        joined = "".join(words)
        if joined in self._exceptions:
            return None
        if joined in self._exact:
            return "exact"
        bounds = set()
        pos = 0
        for w in words:
            bounds.add(pos)
            pos += len(w)
        bounds.add(pos)
        for entry in self._family:
            size = len(entry)
            i = joined.find(entry)
            while i >= 0:
                if i + size in bounds and (i in bounds or size >= MIN_SUFFIX_CHARS):
                    return entry
                i = joined.find(entry, i + 1)
        return None

    def __repr__(self) -> str:
        return f"SecretNames({len(self._family)} names, {len(self._exact)} exact, {len(self._exceptions)} exceptions)"


def redact(value: Any, secret_names: SecretNames, _depth: int = 0) -> tuple[Any, int]:
    """Return (copy of value with secret-named members replaced by ``REDACTED``, number replaced), through dicts,
    lists and tuples. Nested deeper than 32 levels: the whole sub-value is replaced (counted once)."""
    if _depth > 32:
        return REDACTED, 1
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        n = 0
        for k, v in value.items():
            if isinstance(k, str) and k in secret_names:
                out[k] = REDACTED
                n += 1
            else:
                out[k], m = redact(v, secret_names, _depth + 1)
                n += m
        return out, n
    if isinstance(value, (list, tuple)):
        items = []
        n = 0
        for v in value:
            r, m = redact(v, secret_names, _depth + 1)
            items.append(r)
            n += m
        return items, n
    return value, 0


class KeyHasher:
    """Hashes idempotency keys, keeping the tenant prefix before ``separator`` readable.

    Args:
        separator: tenant/key separator; None hashes the whole key.
        salt: optional secret for HMAC-SHA256 (recommended: plain SHA-256 of a guessable key can be brute-forced).
        hex_chars: hex digits kept (32 = 128 bits; collisions are negligible at any realistic key count).
    """

    def __init__(self, separator: str | None = ":", salt: str | bytes | None = None, hex_chars: int = 32) -> None:
        import hashlib
        import hmac

        self.separator = separator
        self._salt = salt.encode() if isinstance(salt, str) else salt
        self._hashlib = hashlib
        self._hmac = hmac
        self.hex_chars = hex_chars
        self._cache: dict[str, str] = {}

    def __call__(self, key: str) -> str:
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        prefix, rest = "", key
        if self.separator and self.separator in key:
            tenant, rest = key.split(self.separator, 1)
            prefix = tenant + self.separator
        data = rest.encode("utf-8", "surrogatepass")
        if self._salt:
            digest = self._hmac.new(self._salt, data, self._hashlib.sha256).hexdigest()
        else:
            digest = self._hashlib.sha256(data).hexdigest()
        out = f"{prefix}sha256:{digest[: self.hex_chars]}"
        if len(self._cache) < 4096:
            self._cache[key] = out
        return out
