"""Compact JSON through CPython's C encoder (module ``_json``) without importing the ``json`` package.

``json.dumps`` costs ~2 us of Python-level set-up per call and ``import json`` ~2 ms (it pulls in the decoder and
``re``); the emitter only encodes, on the hot path and inside Lambda cold starts. ``dumps`` writes exactly what
``json.dumps(o, separators=(",", ":"), allow_nan=False)`` writes (ASCII output, non-ASCII escaped); ``esc`` is the
string escaper both use. Values must be JSON types: there is no ``default`` hook and no circular-reference check
(every value the emitter encodes is built or sanitized by it first).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    from _json import encode_basestring_ascii as esc
    from _json import make_encoder as _make_encoder
except ImportError:  # pragma: no cover - interpreters without the C accelerator
    from json.encoder import encode_basestring_ascii as esc  # type: ignore[assignment]

    _make_encoder = None  # type: ignore[assignment,misc]


def _no_default(o: Any) -> Any:
    raise TypeError(f"{type(o).__name__} is not JSON serializable")


if _make_encoder is not None:
    _encode = _make_encoder(None, _no_default, esc, None, ":", ",", False, False, False)

    def dumps(o: Any) -> str:
        """Compact JSON text of ``o`` (ValueError on NaN/inf, TypeError on non-JSON types)."""
        return "".join(_encode(o, 0))
else:  # pragma: no cover
    import json as _json_module

    _encoder = _json_module.JSONEncoder(separators=(",", ":"), allow_nan=False)

    def dumps(o: Any) -> str:
        return _encoder.encode(o)
