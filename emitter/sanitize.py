"""Making an arbitrary property value safe to log: JSON types only, secrets redacted by name, nothing that could
leak through ``str()``."""

from __future__ import annotations

from emitter import constants as C
from emitter import emf
from emitter.contract import REDACTED
from emitter.types import EventRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from emitter.redact import SecretNames

def key_text(k: Any) -> str:
    """A dict key as text: str as is, an Enum member as its value, a number as its digits, anything else as
    ``<TypeName>`` (its str() could leak data, like any unknown object's). Never raises."""
    if type(k) is str:
        return k
    try:
        k = getattr(k, "value", k)
    except Exception:  # noqa: BLE001 - a hostile ``value`` attribute
        return f"<{type(k).__name__}>"
    if isinstance(k, str):
        return str.__str__(k)
    if isinstance(k, (int, float)) and not isinstance(k, bool):
        try:
            return int.__repr__(k) if isinstance(k, int) else float.__repr__(k)
        except ValueError:  # an int over the str-conversion digit limit
            return f"<{type(k).__name__}>"
    return f"<{type(k).__name__}>" if not isinstance(k, bool) else ("true" if k else "false")


def sanitize(value: Any, redacted: SecretNames, problems: Any, path: str, depth: int) -> Any:
    """JSON-safe copy of a property value (``problems.add(code, element, reason)`` records what was replaced):
    members whose name is in ``redacted`` (a :class:`~emitter.redact.SecretNames`) become ``REDACTED`` at every
    depth, NaN/inf -> None, unknown objects -> ``<TypeName>`` (their str() could leak data), bytes ->
    ``<bytes:length>`` (each of these three reported as ``invalid_property``), Decimal -> number, datetime -> ISO
    string, EventRecord -> event id."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            problems.add(C.WarningCode.INVALID_PROPERTY, f"property:{path}", "non-finite number replaced by null")
            return None
        return value
    if depth > 16:
        problems.add(C.WarningCode.INVALID_PROPERTY, f"property:{path}", "nested deeper than 16 levels")
        return None
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            ks = key_text(k)
            if ks in redacted:
                out[ks] = REDACTED
            else:
                out[ks] = sanitize(v, redacted, problems, f"{path}.{ks}", depth + 1)
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        return [sanitize(v, redacted, problems, path, depth + 1) for v in value]
    if isinstance(value, EventRecord):
        return value.event_id
    enum_value = getattr(value, "value", None)
    if enum_value is not None and type(value).__class__.__name__ in ("EnumType", "EnumMeta"):
        return sanitize(enum_value, redacted, problems, path, depth + 1)
    if type(value).__name__ == "Decimal":
        v, _ = emf.coerce_metric_value(value)
        if v is not None:
            return int(v) if float(v).is_integer() else v
        problems.add(C.WarningCode.INVALID_PROPERTY, f"property:{path}", "non-finite Decimal replaced by null")
        return None
    iso = getattr(value, "isoformat", None)
    if callable(iso) and type(value).__name__ in ("datetime", "date", "time"):
        return iso()
    if isinstance(value, (bytes, bytearray)):
        problems.add(C.WarningCode.INVALID_PROPERTY, f"property:{path}", "bytes replaced by <bytes:length>")
        return f"<bytes:{len(value)}>"
    problems.add(C.WarningCode.INVALID_PROPERTY, f"property:{path}",
                 f"{type(value).__name__} object replaced by <{type(value).__name__}> (its str() could leak data)")
    return f"<{type(value).__name__}>"
