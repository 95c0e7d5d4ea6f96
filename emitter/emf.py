"""EMF rules and document building: validation of every element, aggregation output, splitting.

Everything here is pure (no I/O, no clock). ``build_documents`` turns one group of aggregated metrics into
one or more compact JSON lines, each a valid EMF document:

- at most 100 MetricDefinitions per directive and 100 values per metric: larger sets are split across
  several documents, never dropped (a metric's values are spread over as many documents as needed);
- each document at most 256 KB (MAX_EVENT_BYTES minus headroom), split further when needed;
- StorageResolution written only for high resolution (1); 60 is the EMF default and is left out.

EMF is written here only, through one document template: :func:`fast_document` writes a group that fits one
document, :func:`write_documents` splits what does not. Tests hold them to ``json.dumps`` of the same document.

``validate_document`` is an independent reading of the specification used by tests and by anyone who wants to
check a line (it does not share code with the builder's checks beyond the limit constants).
Spec: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
"""

from __future__ import annotations

from emitter import constants as C

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

from emitter.compact_json import dumps as _dumps
from emitter.compact_json import esc as _esc

# --------------------------------------------------------------------------- element checks
# Each returns None when valid, else a short reason (never containing the offending string value itself,
# which could be large or sensitive). None of them raises: a value is read through its type (``type(v)``, the
# ``str``/``int``/``float`` methods), never through methods it may override, so a hostile object is a reason.


def plain_str(value: Any) -> str | None:
    """``value`` as an exact ``str`` when it is a ``str`` (a subclass is read as the text it holds, without calling
    any method it overrides), else None."""
    return str.__str__(value) if issubclass(type(value), str) else None


def plain_int(value: Any) -> int | None:
    """``value`` as an exact ``int`` when it is an ``int`` other than a bool (an IntEnum or other subclass read as
    the number it holds), else None."""
    t = type(value)
    return int.__index__(value) if issubclass(t, int) and not issubclass(t, bool) else None


def _has_control(s: str) -> bool:
    return any(ord(ch) < 32 or ord(ch) == 127 for ch in s)


def check_namespace(namespace: Any) -> str | None:
    """Namespace: str of 1-255 chars from ``[A-Za-z0-9._#:/-]``, not starting with ``AWS/`` (reserved)."""
    text = plain_str(namespace)
    if text is None:
        return f"namespace must be a string, got {type(namespace).__name__}"
    if not text or len(text) > C.MAX_NAMESPACE_CHARS:
        return f"namespace length {len(text)} not in 1..{C.MAX_NAMESPACE_CHARS}"
    if not C.NAMESPACE_ALLOWED_CHARS.issuperset(text):
        return "namespace has characters outside [A-Za-z0-9._#:/-]"
    if text.startswith("AWS/"):
        return "namespace prefix AWS/ is reserved for AWS services"
    return None


def _check_text(value: Any, what: str, max_chars: int, ascii_only: bool) -> str | None:
    """The rules dimension names, dimension values and metric names share: a str of 1..``max_chars`` chars with
    a non-whitespace char and no control chars (dimensions: ASCII only). Returns the first violation or None."""
    text = plain_str(value)
    if text is None:
        return f"{what} must be a string, got {type(value).__name__}"
    if not text.strip():
        return f"{what} is empty or whitespace"
    if len(text) > max_chars:
        return f"{what} has {len(text)} characters (max {max_chars})"
    if ascii_only:
        if not text.isascii() or _has_control(text):
            return f"{what} must be printable ASCII"
    elif _has_control(text):
        return f"{what} has control characters"
    return None


def check_dimension_name(name: Any) -> str | None:
    """Dimension name: str of 1-250 ASCII chars, a non-whitespace char, no control chars, not starting with ':'."""
    if reason := _check_text(name, "dimension name", C.MAX_DIMENSION_NAME_CHARS, True):
        return reason
    if str.startswith(name, ":"):
        return "dimension name must not start with ':'"
    return None


def check_dimension_value(value: Any) -> str | None:
    """Dimension value: str of 1-1024 ASCII chars with a non-whitespace char, no control chars."""
    return _check_text(value, "dimension value", C.MAX_DIMENSION_VALUE_CHARS, True)


def check_metric_name(name: Any) -> str | None:
    """Metric name: str of 1-250 chars with a non-whitespace char and no control characters."""
    if reason := _check_text(name, "metric name", C.MAX_METRIC_NAME_CHARS, False):
        return reason
    if str.__eq__(name, "_aws"):
        return "metric name _aws is the EMF metadata member"
    return None


def coerce_metric_value(value: Any) -> tuple[float | int | None, str | None]:
    """Return (number, None) for a valid metric value, else (None, reason).

    Valid: int/float (not bool; Decimal accepted) that is finite and 0 or 2^-360 <= |v| <= 2^360 (PutMetricData).
    Subclasses of int/float (IntEnum, ...) are returned as the plain int/float. Never raises.
    """
    t = type(value)
    if issubclass(t, int) and not issubclass(t, bool):
        number: float | int = int.__index__(value)
    elif issubclass(t, float):
        number = float.__float__(value)
    elif t.__name__ == "Decimal":  # DynamoDB numbers; avoid importing decimal
        try:
            number = float(value)
        except Exception:  # noqa: BLE001 - NaN signalling, overflow, or a subclass whose __float__ raises
            return None, "Decimal value is not convertible to a number"
    else:
        return None, f"metric value must be a number, got {t.__name__}"
    if number - number != 0:  # inf - inf and nan - nan are nan: math.isfinite without importing math
        return None, f"metric value {number!r} is not finite"
    if number and not (C.MIN_ABS_VALUE <= abs(number) <= C.MAX_ABS_VALUE):
        return None, "metric value magnitude outside 2^-360..2^360"
    return number, None


def check_unit(unit: Any) -> str | None:
    """Unit: one of the CloudWatch MetricDatum units (constants.UNITS)."""
    if plain_str(unit) not in C.UNITS:
        return "unit is not a CloudWatch unit"
    return None


def check_resolution(resolution: Any) -> str | None:
    """StorageResolution: the int 1 (high resolution) or 60 (standard). ``True`` is not 1."""
    if plain_int(resolution) not in C.STORAGE_RESOLUTIONS:
        return "storage resolution must be the int 1 or 60"
    return None


def check_timestamp(timestamp_ms: Any, now_ms: int) -> str | None:
    """Timestamp: int epoch ms within 14 days before and 2 hours after ``now_ms`` (CloudWatch metric window)."""
    ts = plain_int(timestamp_ms)
    if ts is None:
        return "timestamp must be an int of epoch milliseconds"
    if ts < now_ms - C.MAX_TIMESTAMP_PAST_MS:
        return "timestamp more than 14 days in the past"
    if ts > now_ms + C.MAX_TIMESTAMP_FUTURE_MS:
        return "timestamp more than 2 hours in the future"
    return None


# --------------------------------------------------------------------------- building
class MetricSeries:
    """The values of one metric in one group: ``values`` is the list of every value, or for a summed Count metric
    a one-element list holding the sum. ``unit``: a CloudWatch unit; ``resolution``: 1 (high) or 60."""

    __slots__ = ("name", "resolution", "unit", "values")

    def __init__(self, name: str, unit: str, resolution: int, values: list[float | int]) -> None:
        self.name = name
        self.unit = unit
        self.resolution = resolution
        self.values = values

    def definition(self) -> dict[str, Any]:
        """The MetricDefinition: ``Name``, ``Unit``, and ``StorageResolution`` only for high resolution (1)."""
        d: dict[str, Any] = {"Name": self.name, "Unit": self.unit}
        if self.resolution == 1:
            d["StorageResolution"] = 1
        return d


_MAX_METRICS = C.MAX_METRICS_PER_DIRECTIVE
_MAX_VALUES = C.MAX_VALUES_PER_METRIC
_MAX_DOCUMENT = C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM
_DEFINITIONS: dict[str, tuple[str, int, str, str]] = {}
"""Metric name -> (unit, resolution, its MetricDefinition as JSON text, its member head ``"Name":``), made once per
name (bounded): a function writes the same few metrics every invocation."""


def directive_header(namespace: str, dimension_sets: Sequence[Sequence[str]]) -> str:
    """The constant part of a document after ``Timestamp``: ``"CloudWatchMetrics":[{"Namespace":..,"Dimensions":..,
    "Metrics":[`` (callers cache it per group)."""
    sets_json = _dumps([list(ds) for ds in dimension_sets])
    return f'"CloudWatchMetrics":[{{"Namespace":{_esc(namespace)},"Dimensions":{sets_json},"Metrics":['


def _metric_json(s: MetricSeries, values: Sequence[float | int]) -> tuple[str, str]:
    """(``s``'s MetricDefinition, its root member holding ``values``) as JSON text: one value is written as a
    number, 2 to 100 as an array. The values are plain finite ints and floats (checked on the way in), whose repr is
    their JSON text."""
    hit = _DEFINITIONS.get(s.name)
    if hit is None or hit[0] != s.unit or hit[1] != s.resolution:
        hit = (s.unit, s.resolution, _dumps(s.definition()), _esc(s.name) + ":")
        if len(_DEFINITIONS) < 4096:
            _DEFINITIONS[s.name] = hit
    if len(values) == 1:
        return hit[2], hit[3] + repr(values[0])
    return hit[2], hit[3] + "[" + ",".join(map(repr, values)) + "]"


def _document(header: str, timestamp_ms: int, root_body: str, defs: str, members: str) -> str:
    """The one document template: ``defs`` the MetricDefinitions and ``members`` the metric root members, each as
    JSON text without brackets or braces; ``root_body`` the dimension and property members (may be empty)."""
    return (f'{{"_aws":{{"Timestamp":{int(timestamp_ms)},{header}{defs}]}}]}}'
            f'{"," if root_body else ""}{root_body},{members}}}')


def fast_document(header: str, timestamp_ms: int, root_body: str, series: Sequence[MetricSeries],
                  max_bytes: int = _MAX_DOCUMENT) -> str | None:
    """One document holding every metric of ``series``, or None when the group needs splitting (no metric, more
    than 100 metrics, a metric with no value or more than 100 values, or over ``max_bytes``): then use
    :func:`write_documents`.

    ``header``: from :func:`directive_header`; ``root_body``: the dimension and property members as JSON text without
    braces (may be empty). Equivalent to json.dumps of the same document (tested)."""
    if not series or len(series) > _MAX_METRICS:
        return None
    defs = []
    members = []
    for s in series:
        if not 0 < len(s.values) <= _MAX_VALUES:
            return None
        d, m = _metric_json(s, s.values)
        defs.append(d)
        members.append(m)
    line = _document(header, timestamp_ms, root_body, ",".join(defs), ",".join(members))
    return line if len(line) <= max_bytes else None


def write_documents(header: str, timestamp_ms: int, root_body: str, series: Sequence[MetricSeries],
                    max_bytes: int = _MAX_DOCUMENT) -> list[str]:
    """One group of metrics as EMF lines (compact JSON, no newline): one document when the group fits
    (:func:`fast_document`), else as few documents as the limits allow, every value in exactly one of them.

    Splitting: each metric's values are cut in chunks of at most 100; a document holds at most 100 chunks of
    distinct metrics and at most ``max_bytes``. The metrics with the most chunks go first (each of their chunks must
    land in a different document); first-fit then reaches the minimum document count, max(chunks of the longest
    metric, ceil(chunks / 100)), under the count limits. A chunk too large for any document on its own is written
    alone (never dropped). Returns [] when there are no values."""
    line = fast_document(header, timestamp_ms, root_body, series, max_bytes)
    if line is not None:
        return [line]
    base = len(_document(header, timestamp_ms, root_body, "", ""))
    docs: list[tuple[set[str], list[tuple[str, str]], list[int]]] = []  # (names, (definition, member)s, [size])
    for s in sorted(series, key=lambda s: -len(s.values)):
        for i in range(0, len(s.values), _MAX_VALUES):
            d, m = _metric_json(s, s.values[i:i + _MAX_VALUES])
            cost = len(d) + len(m) + 2  # each with its comma
            for names, parts, size in docs:
                if s.name not in names and len(parts) < _MAX_METRICS and size[0] + cost <= max_bytes:
                    break
            else:
                names, parts, size = set(), [], [base]
                docs.append((names, parts, size))
            names.add(s.name)
            parts.append((d, m))
            size[0] += cost
    return [_document(header, timestamp_ms, root_body, ",".join(d for d, _ in parts), ",".join(m for _, m in parts))
            for _, parts, _ in docs]


def build_documents(
    namespace: str,
    dimensions: Mapping[str, str],
    dimension_sets: Sequence[Sequence[str]],
    series: Iterable[MetricSeries],
    timestamp_ms: int,
    properties: Mapping[str, Any] | None = None,
    max_bytes: int = _MAX_DOCUMENT,
) -> list[str]:
    """Serialize one group of metrics as EMF lines (compact JSON, no newline): :func:`write_documents` of the
    group's directive and root members.

    Args:
        namespace: a valid namespace (checked by the caller).
        dimensions: dimension name -> value (all valid) for the root node.
        dimension_sets: the ``Dimensions`` array; every name must be in ``dimensions``.
        series: metrics to write (finite values, checked by the caller); names must not collide with dimension or
            property names.
        timestamp_ms: ``_aws.Timestamp``, epoch milliseconds.
        properties: extra root members (request id, ...) copied into every document.
        max_bytes: size cap per document in UTF-8 bytes (the lines are ASCII).

    Returns: the lines; empty when there are no metric values. Every value is in exactly one line.
    """
    root = {**dimensions, **(properties or {})}
    return write_documents(directive_header(namespace, dimension_sets), timestamp_ms,
                           _dumps(root)[1:-1] if root else "", list(series), max_bytes)


# --------------------------------------------------------------------------- independent check
def validate_document(doc: str | Mapping[str, Any], now_ms: int | None = None) -> list[str]:
    """Check one EMF document (a line or a parsed object) against the specification.

    Returns a list of problems (empty = valid). ``now_ms`` (epoch ms) enables the timestamp window check.
    Checks: root is an object with ``_aws``; ``Timestamp`` an int; ``CloudWatchMetrics`` a list of directives each with
    a valid Namespace, a Dimensions array of sets (<= 30 names, each a root member with a valid string value),
    1..100 Metrics with valid names, known units, StorageResolution 1|60, and a root target that is a finite number or
    an array of 1..100 finite numbers; whole line <= 256 KB.
    """
    import json
    import math

    problems: list[str] = []
    if isinstance(doc, str):
        if len(doc.encode()) > C.MAX_EVENT_BYTES:
            problems.append("document larger than 256 KB")
        if "\n" in doc:
            problems.append("document spans several lines")
        try:
            obj = json.loads(doc)
        except ValueError as exc:
            return [f"not JSON: {exc}"]
    else:
        obj = doc
    if not isinstance(obj, dict):
        return ["root is not an object"]
    aws = obj.get("_aws")
    if not isinstance(aws, dict):
        return ["_aws missing or not an object"]
    ts = aws.get("Timestamp")
    if isinstance(ts, bool) or not isinstance(ts, int):
        problems.append("_aws.Timestamp missing or not an integer")
    elif now_ms is not None and (reason := check_timestamp(ts, now_ms)):
        problems.append(reason)
    directives = aws.get("CloudWatchMetrics")
    if not isinstance(directives, list):
        return problems + ["_aws.CloudWatchMetrics missing or not an array"]
    for i, d in enumerate(directives):
        where = f"directive {i}"
        if not isinstance(d, dict):
            problems.append(f"{where} is not an object")
            continue
        if reason := check_namespace(d.get("Namespace")):
            problems.append(f"{where}: {reason}")
        dsets = d.get("Dimensions")
        if not isinstance(dsets, list):
            problems.append(f"{where}: Dimensions missing or not an array")
            dsets = []
        for ds in dsets:
            if not isinstance(ds, list):
                problems.append(f"{where}: a dimension set is not an array")
                continue
            if len(ds) > C.MAX_DIMENSIONS_PER_SET:
                problems.append(f"{where}: dimension set of {len(ds)} > {C.MAX_DIMENSIONS_PER_SET}")
            for name in ds:
                if reason := check_dimension_name(name):
                    problems.append(f"{where}: {reason}")
                elif name not in obj:
                    problems.append(f"{where}: dimension {name!r} is not a root member")
                elif reason := check_dimension_value(obj[name]):
                    problems.append(f"{where}: dimension {name!r}: {reason}")
        metrics = d.get("Metrics")
        if not isinstance(metrics, list):
            problems.append(f"{where}: Metrics missing or not an array")
            continue
        if len(metrics) > C.MAX_METRICS_PER_DIRECTIVE:
            problems.append(f"{where}: {len(metrics)} metrics > {C.MAX_METRICS_PER_DIRECTIVE}")
        for m in metrics:
            if not isinstance(m, dict):
                problems.append(f"{where}: a metric definition is not an object")
                continue
            name = m.get("Name")
            if reason := check_metric_name(name):
                problems.append(f"{where}: {reason}")
                continue
            if "Unit" in m and (reason := check_unit(m["Unit"])):
                problems.append(f"{where}: metric {name!r}: {reason}")
            if "StorageResolution" in m and (reason := check_resolution(m["StorageResolution"])):
                problems.append(f"{where}: metric {name!r}: {reason}")
            if name not in obj:
                problems.append(f"{where}: metric {name!r} has no root member")
                continue
            target = obj[name]
            values = target if isinstance(target, list) else [target]
            if isinstance(target, list) and not 1 <= len(target) <= C.MAX_VALUES_PER_METRIC:
                problems.append(f"{where}: metric {name!r} has {len(target)} values (1..{C.MAX_VALUES_PER_METRIC})")
            for v in values:
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    problems.append(f"{where}: metric {name!r} has a non-numeric or non-finite value")
                    break
    return problems
