"""Compact JSON text, as every line the emitter writes is encoded.

``dumps(o)`` writes what ``json.dumps(o, separators=(",", ":"), allow_nan=False)`` writes: no spaces, ASCII output
with non-ASCII characters escaped (a log line is then as many bytes as characters, which the size limits count),
ValueError on NaN and infinities (not JSON), TypeError on anything that is not a JSON type (there is no ``default``
hook: every value is built or sanitized by the emitter first). ``esc(s)`` is the JSON text of one string, escaped
the same way. One encoder is made once (``json.dumps`` with arguments makes a new one per call).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii as esc

__all__ = ["dumps", "esc"]

dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
