"""EMF rules and document building: validation of every element, aggregation output, splitting.

Everything here is pure (no I/O, no clock). ``build_documents`` turns one group of aggregated metrics into
one or more compact JSON lines, each a valid EMF document:

- at most 100 MetricDefinitions per directive and 100 values per metric: larger sets are split across
  several documents, never dropped (a metric's values are spread over as many documents as needed);
- each document at most 256 KB (MAX_EVENT_BYTES minus headroom), split further when needed;
- StorageResolution written only for high resolution (1); 60 is the EMF default and is left out.

EMF is written here only: :func:`fast_document` (a group as MetricSeries) and :func:`group_document` (the aggregator's
plain group of contract metrics, encoded in C at once) share one document template; :func:`build_documents` splits
what does not fit one document. Tests hold each to ``json.dumps`` of the same document.

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

from emitter.jsonfast import dumps as _dumps
from emitter.jsonfast import esc as _esc

# --------------------------------------------------------------------------- element checks
# Each returns None when valid, else a short reason (never containing the offending string value itself,
# which could be large or sensitive).


def _has_control(s: str) -> bool:
    return any(ord(ch) < 32 or ord(ch) == 127 for ch in s)


def check_namespace(namespace: Any) -> str | None:
    """Namespace: str of 1-255 chars from ``[A-Za-z0-9._#:/-]``, not starting with ``AWS/`` (reserved)."""
    if not isinstance(namespace, str):
        return f"namespace must be a string, got {type(namespace).__name__}"
    if not namespace or len(namespace) > C.MAX_NAMESPACE_CHARS:
        return f"namespace length {len(namespace)} not in 1..{C.MAX_NAMESPACE_CHARS}"
    if not C.NAMESPACE_ALLOWED_CHARS.issuperset(namespace):
        return "namespace has characters outside [A-Za-z0-9._#:/-]"
    if namespace.startswith("AWS/"):
        return "namespace prefix AWS/ is reserved for AWS services"
    return None


def _check_text(value: Any, what: str, max_chars: int, ascii_only: bool) -> str | None:
    """The rules dimension names, dimension values and metric names share: a str of 1..``max_chars`` chars with
    a non-whitespace char and no control chars (dimensions: ASCII only). Returns the first violation or None."""
    if not isinstance(value, str):
        return f"{what} must be a string, got {type(value).__name__}"
    if not value.strip():
        return f"{what} is empty or whitespace"
    if len(value) > max_chars:
        return f"{what} has {len(value)} characters (max {max_chars})"
    if ascii_only:
        if not value.isascii() or _has_control(value):
            return f"{what} must be printable ASCII"
    elif _has_control(value):
        return f"{what} has control characters"
    return None


def check_dimension_name(name: Any) -> str | None:
    """Dimension name: str of 1-250 ASCII chars, a non-whitespace char, no control chars, not starting with ':'."""
    if reason := _check_text(name, "dimension name", C.MAX_DIMENSION_NAME_CHARS, True):
        return reason
    if name.startswith(":"):
        return "dimension name must not start with ':'"
    return None


def check_dimension_value(value: Any) -> str | None:
    """Dimension value: str of 1-1024 ASCII chars with a non-whitespace char, no control chars."""
    return _check_text(value, "dimension value", C.MAX_DIMENSION_VALUE_CHARS, True)


def check_metric_name(name: Any) -> str | None:
    """Metric name: str of 1-250 chars with a non-whitespace char and no control characters."""
    if reason := _check_text(name, "metric name", C.MAX_METRIC_NAME_CHARS, False):
        return reason
    if name == "_aws":
        return "metric name _aws is the EMF metadata member"
    return None


def coerce_metric_value(value: Any) -> tuple[float | int | None, str | None]:
    """Return (number, None) for a valid metric value, else (None, reason).

    Valid: int/float (not bool; Decimal accepted) that is finite and 0 or 2^-360 <= |v| <= 2^360 (PutMetricData).
    Subclasses of int/float (IntEnum, ...) are returned as the plain int/float. Never raises.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if type(value).__name__ == "Decimal":  # DynamoDB numbers; avoid importing decimal
            try:
                value = float(value)
            except (ValueError, OverflowError):
                return None, "Decimal value is not convertible to a number"
        else:
            return None, f"metric value must be a number, got {type(value).__name__}"
    if isinstance(value, int):
        if value.__class__ is not int:  # IntEnum / int subclasses: the plain number (their repr is not JSON)
            value = int.__index__(value)
        if value and not (C.MIN_ABS_VALUE <= abs(value) <= C.MAX_ABS_VALUE):
            return None, "metric value magnitude outside 2^-360..2^360"
        return value, None
    if value.__class__ is not float:  # float subclasses
        value = float.__float__(value)
    if value - value != 0.0:  # inf - inf and nan - nan are nan: math.isfinite without importing math
        return None, f"metric value {value!r} is not finite"
    if value and not (C.MIN_ABS_VALUE <= abs(value) <= C.MAX_ABS_VALUE):
        return None, "metric value magnitude outside 2^-360..2^360"
    return value, None


def check_unit(unit: Any) -> str | None:
    """Unit: one of the CloudWatch MetricDatum units (constants.UNITS)."""
    if not isinstance(unit, str) or unit not in C.UNITS:
        return "unit is not a CloudWatch unit"
    return None


def check_resolution(resolution: Any) -> str | None:
    """StorageResolution: the int 1 (high resolution) or 60 (standard). ``True`` is not 1."""
    if isinstance(resolution, bool) or not isinstance(resolution, int) or resolution not in C.STORAGE_RESOLUTIONS:
        return "storage resolution must be the int 1 or 60"
    return None


def check_timestamp(timestamp_ms: Any, now_ms: int) -> str | None:
    """Timestamp: int epoch ms within 14 days before and 2 hours after ``now_ms`` (CloudWatch metric window)."""
    if isinstance(timestamp_ms, bool) or not isinstance(timestamp_ms, int):
        return "timestamp must be an int of epoch milliseconds"
    if timestamp_ms < now_ms - C.MAX_TIMESTAMP_PAST_MS:
        return "timestamp more than 14 days in the past"
    if timestamp_ms > now_ms + C.MAX_TIMESTAMP_FUTURE_MS:
        return "timestamp more than 2 hours in the future"
    return None


# --------------------------------------------------------------------------- building
class MetricSeries:
    """Aggregated values of one metric in one group. ``values`` is a list (every value kept) or, for summed
    Count metrics, a one-element list holding the sum."""

    __slots__ = ("name", "resolution", "unit", "values")

    def __init__(self, name: str, unit: str, resolution: int, values: list[float | int]) -> None:
        self.name = name
        self.unit = unit
        self.resolution = resolution
        self.values = values

    def definition(self) -> dict[str, Any]:
        d: dict[str, Any] = {"Name": self.name, "Unit": self.unit}
        if self.resolution == 1:
            d["StorageResolution"] = 1
        return d


_new = object.__new__


def new_series(name: str, unit: str, resolution: int, values: list[float | int]) -> MetricSeries:
    """``MetricSeries(name, unit, resolution, values)`` without the class call (the hot paths make one per metric
    per flush; CPython 3.11 does not specialize calls of a class with a Python ``__init__``)."""
    s = _new(MetricSeries)
    s.name = name
    s.unit = unit
    s.resolution = resolution
    s.values = values
    return s


def _chunks(values: Sequence[float | int], size: int) -> Iterable[Sequence[float | int]]:
    for i in range(0, len(values), size):
        yield values[i : i + size]


def build_documents(
    namespace: str,
    dimensions: Mapping[str, str],
    dimension_sets: Sequence[Sequence[str]],
    series: Iterable[MetricSeries],
    timestamp_ms: int,
    properties: Mapping[str, Any] | None = None,
    max_bytes: int = C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM,
) -> list[str]:
    """Serialize one group of metrics as EMF lines (compact JSON, no newline).

    Args:
        namespace: a valid namespace (checked by the caller).
        dimensions: dimension name -> value (all valid) for the root node.
        dimension_sets: the ``Dimensions`` array; every name must be in ``dimensions``.
        series: metrics to write; names must not collide with dimension or property names.
        timestamp_ms: ``_aws.Timestamp``, epoch milliseconds.
        properties: extra root members (request id, ...) copied into every document.
        max_bytes: size cap per document in UTF-8 bytes.

    Returns: the lines; empty when there are no metric values. Every value is in exactly one line.
    """
    props = properties or {}
    series = list(series)
    if not series:
        return []
    # Fast path (the usual case): everything fits one directive and one document (None otherwise).
    root = {**dimensions, **props}
    line = fast_document(directive_header(namespace, dimension_sets), timestamp_ms,
                         _dumps(root)[1:-1] if root else "", series, max_bytes)
    if line is not None:
        return [line]
    # Entries = (series, chunk of <= 100 values). A document holds <= 100 entries with distinct names.
    # Series with the most chunks go first (each of its chunks must land in a different document); first-fit then
    # reaches the minimum document count max(chunks of the longest series, ceil(entries / 100)) under the count limits.
    entries: list[tuple[MetricSeries, Sequence[float | int]]] = []
    for s in sorted(series, key=lambda s: -len(s.values)):
        for chunk in _chunks(s.values, C.MAX_VALUES_PER_METRIC):
            entries.append((s, chunk))
    if not entries:
        return []
    base: dict[str, Any] = {
        "_aws": {
            "Timestamp": timestamp_ms,
            "CloudWatchMetrics": [{"Namespace": namespace, "Dimensions": [list(ds) for ds in dimension_sets], "Metrics": []}],
        }
    }
    base.update(dimensions)
    base.update(props)
    base_size = len(_dumps(base).encode())

    docs: list[dict[str, Any]] = []  # each: {"names": set, "entries": [...], "size": int}
    for s, chunk in entries:
        value: Any = chunk[0] if len(chunk) == 1 else list(chunk)
        # bytes this entry adds: definition + comma, member "name":value + comma
        cost = len(_dumps(s.definition()).encode()) + 1 + len(_dumps({s.name: value}).encode()) - 2 + 1
        for d in docs:
            if s.name not in d["names"] and len(d["entries"]) < C.MAX_METRICS_PER_DIRECTIVE and d["size"] + cost <= max_bytes:
                break
        else:
            d = {"names": set(), "entries": [], "size": base_size}
            docs.append(d)
        d["names"].add(s.name)
        d["entries"].append((s, value))
        d["size"] += cost

    lines: list[str] = []
    for d in docs:
        lines.extend(_serialize(base, d["entries"], max_bytes))
    return lines


_DEFINITIONS: dict[str, tuple[str, int, str, str]] = {}
_MAX_METRICS = C.MAX_METRICS_PER_DIRECTIVE
_MAX_VALUES = C.MAX_VALUES_PER_METRIC


def directive_header(namespace: str, dimension_sets: Sequence[Sequence[str]]) -> str:
    """The constant part of a document after ``Timestamp``: ``"CloudWatchMetrics":[{"Namespace":..,"Dimensions":..,
    "Metrics":[`` (callers cache it per group)."""
    sets_json = _dumps([list(ds) for ds in dimension_sets])
    return f'"CloudWatchMetrics":[{{"Namespace":{_esc(namespace)},"Dimensions":{sets_json},"Metrics":['


def fast_document(header: str, timestamp_ms: int, root_body: str, series: list[MetricSeries],
                  max_bytes: int = C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM) -> str | None:
    """One document from pre-serialized parts, or None when the group needs splitting (more than 100 metrics, a
    metric with more than 100 values, or over ``max_bytes``): then use :func:`build_documents`.

    ``header``: from :func:`directive_header`; ``root_body``: the dimension and property members as JSON text without
    braces (may be empty). Equivalent to json.dumps of the same document (tested)."""
    if len(series) > _MAX_METRICS:
        return None
    defs = []
    members = []
    cache = _DEFINITIONS
    for s in series:
        v = s.values
        hit = cache.get(s.name)  # (unit, resolution, definition JSON, member head)
        if hit is None or hit[0] != s.unit or hit[1] != s.resolution:
            hit = (s.unit, s.resolution, _dumps(s.definition()), _esc(s.name) + ":")
            if len(cache) < 4096:
                cache[s.name] = hit
        defs.append(hit[2])
        n = len(v)
        if n == 1:
            x = v[0]
            members.append(f"{hit[3]}{x}" if x.__class__ is int else hit[3] + float.__repr__(x))
        elif n > _MAX_VALUES:
            return None
        else:  # plain finite ints/floats (validated on the way in): their list repr without spaces is the JSON text
            members.append(hit[3] + list.__repr__(v).replace(" ", ""))
    return _document(header, timestamp_ms, root_body, ",".join(defs), ",".join(members), max_bytes)


def _document(header: str, timestamp_ms: int, root_body: str, defs: str, members: str, max_bytes: int) -> str | None:
    """The one document template: ``defs`` the MetricDefinitions and ``members`` the metric root members, each as
    JSON text without brackets or braces. None when the line is over ``max_bytes``."""
    line = (f'{{"_aws":{{"Timestamp":{int(timestamp_ms)},{header}{defs}]}}]}}'
            f'{"," if root_body else ""}{root_body},{members}}}')
    return line if len(line) <= max_bytes else None


# --------------------------------------------------------------------------- groups in plain form
# The aggregator's form of one group: metric name -> a plain value for a metric whose unit a ``units`` mapping gives
# (the contract's; standard resolution): a Count metric as its int sum, any other unit as the list of its values; or
# a MetricSeries (custom metrics: any unit and resolution). :func:`group_document` writes a group of plain values only
# in one C encoding; :func:`group_series` turns any group into the MetricSeries the general writers take.


def group_shape(names: tuple[str, ...], units: Mapping[str, str]
                ) -> tuple[str, tuple[int, ...], tuple[str, ...], dict[Any, str]] | None:
    """The shape :func:`group_document` writes a group with metric ``names`` (in order) by: (their definitions as
    JSON text, joined; the positions of the names held as value lists; each name's member head, ``"Name":``, ``%``
    escaped; the member templates made so far, by the lengths of the value lists), or None when a name is not in
    ``units`` (name -> unit of the plain metrics) or ``names`` is empty. Callers cache it per names tuple (a
    function's flushes have few shapes)."""
    if not names or not all(n in units for n in names):
        return None
    return (",".join(_dumps({"Name": n, "Unit": units[n]}) for n in names),  # what MetricSeries.definition() encodes
            tuple(i for i, n in enumerate(names) if units[n] != "Count"),
            tuple(_esc(n).replace("%", "%%") + ":" for n in names),
            {})


def _members_template(shape: tuple[str, tuple[int, ...], tuple[str, ...], dict[Any, str]], lengths: Any) -> str:
    """The ``%`` template of a group's members for the value-list ``lengths`` (an int for the one list, a tuple
    for several, in position order; () for none), made and cached in the shape: ``"Name":%s`` for a Count sum and
    for a list of one value (written as a number, as fast_document does), ``"Name":[%s,%s,..]`` for 2..100."""
    _, list_at, heads, templates = shape
    counts = dict(zip(list_at, (lengths,) if lengths.__class__ is int else lengths))
    template = ",".join(head + ("[" + ",".join(["%s"] * counts[i]) + "]" if counts.get(i, 1) > 1 else "%s")
                        for i, head in enumerate(heads))
    if len(templates) < 64:
        templates[lengths] = template
    return template


def group_document(header: str, timestamp_ms: int, root_body: str, group: Mapping[str, Any],
                   shape: tuple[str, tuple[int, ...], tuple[str, ...], dict[Any, str]],
                   max_bytes: int = C.MAX_EVENT_BYTES - C.EVENT_SIZE_HEADROOM) -> str | None:
    """:func:`fast_document` of a group of plain values (same bytes, tested), its members written by one ``%``
    format of a template of the shape: every value, list items included, formatted in C in one call (``%s`` of an
    int or float is its repr, the JSON text of a finite number).

    ``shape``: :func:`group_shape` of the group's names. ``group`` is not modified. Values must be plain ints and
    floats (what the emitter stores: its own Count sums, and values ``coerce_metric_value`` passed). None when the
    group needs splitting (a metric with more than 100 values, or over ``max_bytes``: then :func:`build_documents`
    of :func:`group_series`), or when a value is NaN, infinite or not a number (never stored by the emitter: the
    general writers then decide)."""
    defs, list_at, _, templates = shape
    values = list(group.values())  # the value lists spliced in below: one flat list of numbers, in member order
    lengths: Any = ()
    if list_at:
        if len(list_at) == 1:  # the usual group: one Milliseconds metric (RecordAge)
            i = list_at[0]
            v = values[i]
            lengths = len(v)
            if not 0 < lengths <= _MAX_VALUES:
                return None
            values[i:i + 1] = v
        else:
            lens = []
            for i in reversed(list_at):  # from the end: the positions before stay valid
                v = values[i]
                k = len(v)
                if not 0 < k <= _MAX_VALUES:
                    return None
                values[i:i + 1] = v
                lens.append(k)
            lengths = tuple(reversed(lens))
    # every value a finite number: their sum is one (NaN or an infinity makes it NaN or infinite; the sum of the
    # values a group holds, each of magnitude <= 2^360, cannot overflow); TypeError: one is not a number
    try:
        total = sum(values)
    except (TypeError, OverflowError):
        return None
    if total - total != 0:  # NaN - NaN and inf - inf are NaN: math.isfinite without importing math
        return None
    template = templates.get(lengths)
    if template is None:
        template = _members_template(shape, lengths)
    return _document(header, timestamp_ms, root_body, defs, template % tuple(values), max_bytes)


def group_series(group: Mapping[str, Any], units: Mapping[str, str]) -> list[MetricSeries]:
    """A group's metrics as MetricSeries, in order (the general writers' input); plain values get their unit from
    ``units`` (name -> unit) and the standard resolution."""
    out = []
    for name, v in group.items():
        if v.__class__ is MetricSeries:
            out.append(v)
        else:
            out.append(new_series(name, units[name], 60, v if v.__class__ is list else [v]))
    return out


def _serialize(base: dict[str, Any], entries: list[tuple[MetricSeries, Any]], max_bytes: int) -> list[str]:
    aws = base["_aws"]
    directive = dict(aws["CloudWatchMetrics"][0])
    directive["Metrics"] = [s.definition() for s, _ in entries]
    doc: dict[str, Any] = {"_aws": {"Timestamp": aws["Timestamp"], "CloudWatchMetrics": [directive]}}
    for k, v in base.items():
        if k != "_aws":
            doc[k] = v
    for s, v in entries:
        doc[s.name] = v
    line = _dumps(doc)
    if len(entries) > 1 and len(line.encode()) > max_bytes:  # estimate was off: halve
        mid = len(entries) // 2
        return _serialize(base, entries[:mid], max_bytes) + _serialize(base, entries[mid:], max_bytes)
    return [line]


# --------------------------------------------------------------------------- independent check
def validate_document(doc: str | Mapping[str, Any], now_ms: int | None = None) -> list[str]:
    """Check one EMF document (a line or a parsed object) against the specification.

    Returns a list of problems (empty = valid). ``now_ms`` (epoch ms) enables the timestamp window check.
    Checks: root is an object with ``_aws``; ``Timestamp`` an int; ``CloudWatchMetrics`` a list of directives each with
    a valid Namespace, a Dimensions array of sets (<= 30 names, each a root member with a valid string value),
    1..100 Metrics with valid names, known units, StorageResolution 1|60, and a root target that is a finite number or
    an array of 1..100 finite numbers; whole line <= 256 KB.
    """
    import json  # validation is off the hot path
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
