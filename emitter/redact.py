"""Redaction of log properties by name, and hashing of idempotency keys.

Names are compared case-insensitively with ``-`` and ``_`` equivalent (``X-Api-Key`` == ``x_api_key``).
Redaction is recursive through dicts and lists. Hashing keeps a tenant prefix readable:
``"acme:order-42"`` -> ``"acme:sha256:9f86d0..."`` (first 32 hex chars of SHA-256, or HMAC-SHA256 with a salt).
``hashlib``/``hmac`` are imported only when hashing is on (they load OpenSSL; the import budget matters).
"""

from __future__ import annotations

from emitter.contract import REDACTED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any


def normalize_name(name: str) -> str:
    """Lower-case, ``-`` -> ``_``: the form redaction compares."""
    return name.lower().replace("-", "_")


def normalized_set(names: Iterable[str]) -> frozenset[str]:
    return frozenset(normalize_name(n) for n in names)


def redact(value: Any, redacted: frozenset[str], _depth: int = 0) -> tuple[Any, int]:
    """Return (copy of value with redacted members, number of values redacted). Depth-limited to 32."""
    if _depth > 32:
        return REDACTED, 1
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        n = 0
        for k, v in value.items():
            if isinstance(k, str) and normalize_name(k) in redacted:
                out[k] = REDACTED
                n += 1
            else:
                out[k], m = redact(v, redacted, _depth + 1)
                n += m
        return out, n
    if isinstance(value, (list, tuple)):
        items = []
        n = 0
        for v in value:
            r, m = redact(v, redacted, _depth + 1)
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
