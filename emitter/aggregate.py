"""Per-invocation metric aggregation and EMF flushing.

Metrics are kept in memory per group (Operation[, EventSource]) until :meth:`MetricAggregator.flush` writes each
group as one or more EMF documents (split at 100 metrics / 100 values / 256 KB, never dropped; EMF specification:
https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
Count metrics are summed (one value per document), Milliseconds metrics keep every value.

A group maps metric name -> its values, as the C JSON encoder writes them: the contract's Count metrics as their sum
(an int), the contract's Milliseconds metrics as the list of their values, custom metrics (:meth:`add_metric`, any
unit and resolution) as an :class:`emf.MetricSeries` (emf's plain group form). A group of contract metrics only (the
usual flush) is written by :func:`emf.group_document` from its cached shape; any other group goes through
:func:`emf.fast_document` / :func:`emf.build_documents` as MetricSeries (:func:`emf.group_series`). Same bytes (tested).
"""

from __future__ import annotations

import sys as _sys

from emitter import constants as C
from emitter import emf
from emitter import outcomes as _o
from emitter.context import _default_clock, _time_ns
from emitter.contract import DIMENSION_SETS, EVENT_SOURCE_DIMENSION_SET, REDACTED, SCHEMA_VERSION
from emitter.jsonfast import dumps as _dumps
from emitter.jsonfast import esc as _esc
from emitter.output import Problems, SinkOutput
from emitter.sinks import StdoutSink

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from emitter.context import InvocationInfo
    from emitter.redact import SecretNames

# Plain-str copies of contract values (emitter.outcomes): module globals, one dict lookup each.
_CONTRACT_METRICS = _o.CONTRACT_METRICS
_EMF_PROPS = _o.EMF_PROPS
_EVENT_SOURCE = _o.EVENT_SOURCE
_K_SCHEMA_VERSION = _o.K_SCHEMA_VERSION
_K_LEVEL = _o.K_LEVEL
_OPERATION = _o.OPERATION
_ROOT_RESERVED = _o.ROOT_RESERVED
_SERVICE = _o.SERVICE
_SCHEMA_MEMBER = f'"{_K_SCHEMA_VERSION}":{_esc(SCHEMA_VERSION)}'
_MS_METRICS = _o.MS_METRICS
_U_COUNT, _U_MS = _o.U_COUNT, _o.U_MS
_MetricSeries = emf.MetricSeries
_NOT_CACHED = object()
_PLAIN_UNITS = {n: _U_MS if n in _MS_METRICS else _U_COUNT for n in _CONTRACT_METRICS}
"""The metrics a group holds as plain values (emf's group form): the contract's, with its units. Custom metrics cannot
take their names (:meth:`MetricAggregator.add_metric`), so they stay MetricSeries."""
_GROUP_SHAPES: dict[tuple[str, ...], tuple[Any, ...] | None] = {}
"""A group's metric names, in order -> :func:`emf.group_shape` (None when not contract metrics only). Cached
(bounded): a function's flushes have few shapes."""


def _group_shape(names: tuple[str, ...]) -> tuple[Any, ...] | None:
    """The ``_GROUP_SHAPES`` entry of ``names``, made and cached."""
    shape = emf.group_shape(names, _PLAIN_UNITS)
    if len(_GROUP_SHAPES) < 256:
        _GROUP_SHAPES[names] = shape
    return shape


def group_key(op: str | None, es: str | None) -> Any:
    """The key of group (Operation ``op``, EventSource ``es``) in ``MetricAggregator._groups``: ``op`` alone when there
    is no EventSource (the usual group: a str key is looked up without making and hashing a tuple, about 60 ns less
    on CPython 3.11, and the hot paths write this expression inline), else ``(op, es)``. An Operation is a str or
    None, never a tuple, so a key reads back unambiguously (``flush`` and ``pending``)."""
    return op if es is None else (op, es)


def _values(v: Any) -> list[float | int]:
    """The values of a group entry (a Count sum as a one-element list)."""
    if v.__class__ is _MetricSeries:
        return list(v.values)
    return list(v) if v.__class__ is list else [v]


class MetricAggregator(SinkOutput):
    """Emitter layer 3: metric values per (Operation, EventSource) group until :meth:`flush` writes them as EMF."""

    namespace: str
    _groups: dict[Any, dict[str, Any]]  # group key (group_key) -> metric name -> values (the module docstring)
    _dimensions: dict[str, str]
    _default_dims: dict[str, str]
    metrics_disabled: bool
    _emf_level: str | None
    _group_cache: dict[Any, tuple[dict[str, str], list[list[str]], str, str]]  # (op, es, custom), or op alone
    _timestamp_ms: int | None
    _service_dim: str | None
    _idle_emf_props: str
    _redacted: SecretNames
    _emf_props_head: dict[str | None, str]

    def _add(self, op: str | None, es: str | None, name: str, unit: str, resolution: int, value: float,
             summed: bool) -> None:
        """Add ``value`` to metric ``name`` of group (op, es): ``summed`` for the contract's Count metrics (only
        those are summed); else every value is kept (the contract's Milliseconds metrics as a list, custom metrics
        as a MetricSeries). The caller holds the lock."""
        key = op if es is None else (op, es)  # group_key
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = {}
        if summed:
            group[name] = group.get(name, 0) + value
        elif name in _CONTRACT_METRICS:
            v = group.get(name)
            if v is None:
                group[name] = [value]
            else:
                v.append(value)
        else:
            s = group.get(name)
            if s is None:
                group[name] = emf.new_series(name, unit, resolution, [value])
            else:
                s.values.append(value)

    def add_metric(self, name: str, value: float, unit: str = "Count", resolution: int = 60,
                   operation: str | None = None) -> None:
        """Add a custom metric value (kept as a value list, split at 100 values). ``resolution``: the int 1 (high
        resolution) or 60. Names of the contract's metrics, dimensions and EMF members are refused (they would break
        the logs == metrics equality or the document). Invalid input: dropped + warning (strict: raises)."""
        problems = Problems()
        element = f"metric:{name}" if isinstance(name, str) else "metric"
        if reason := emf.check_metric_name(name):
            problems.add(C.WarningCode.INVALID_METRIC_NAME, element, reason)
        elif name in _CONTRACT_METRICS or name in _ROOT_RESERVED or name in self._dimensions:
            problems.add(C.WarningCode.NAME_CONFLICT, element, "name used by the contract, a dimension or EMF")
        v, reason = emf.coerce_metric_value(value)
        if reason:
            problems.add(C.WarningCode.INVALID_METRIC_VALUE, element, reason)
        if reason := emf.check_unit(unit):
            problems.add(C.WarningCode.INVALID_UNIT, element, reason)
        if reason := emf.check_resolution(resolution):
            problems.add(C.WarningCode.INVALID_RESOLUTION, element, reason)
        inv = self._inv
        op = operation if operation is not None else (inv.operation if inv is not None else self._default_operation)
        if operation is not None and (reason := emf.check_dimension_value(operation)):
            problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{_OPERATION}", reason)
        es = None
        if self.event_source_dimension and inv is not None and inv.event_source is not None:
            es = inv.event_source.value
        if not problems:
            with self._lock:
                existing = self._groups.get(group_key(op, es), {}).get(name)
                if existing is not None and (existing.unit != unit or existing.resolution != resolution):
                    problems.add(C.WarningCode.METRIC_DEFINITION_CONFLICT, element,
                                 "same metric added with another unit or resolution in this flush")
                else:
                    self._add(op, es, name, unit, resolution, v, False)  # type: ignore[arg-type]
        self._report(problems)

    def add_dimension(self, name: str, value: str) -> None:
        """Add a dimension to every dimension set until the next :meth:`flush` (the wrapper flushes at the end of
        each invocation), as Powertools Metrics' ``add_dimension`` does: the next invocation publishes the standard
        sets again. For a dimension on every flush use :meth:`set_default_dimensions`. Bounded values only: names
        that look like keys, tenants, event or request ids are refused (each distinct value is a paid custom
        metric). Invalid input: dropped + warning record (strict: raises EmfValidationError)."""
        problems = Problems()
        with self._lock:
            self._add_dimension(name, value, problems)
        self._report(problems)

    def set_default_dimensions(self, **dimensions: str) -> None:
        """Add dimensions to every dimension set of every flush from now on (Powertools'
        ``set_default_dimensions``). Same checks as :meth:`add_dimension`; ``Emitter(dimensions=...)`` sets these."""
        problems = Problems()
        with self._lock:
            for name, value in dimensions.items():
                self._add_dimension(name, value, problems, default=True)
        self._report(problems)

    def clear_default_dimensions(self) -> None:
        """Forget the default dimensions (and this invocation's ``add_dimension`` ones)."""
        with self._lock:
            self._default_dims.clear()
            self._dimensions.clear()

    def _add_dimension(self, name: Any, value: Any, problems: Problems, default: bool = False) -> None:
        element = f"dimension:{name}" if isinstance(name, str) else "dimension"
        if reason := emf.check_dimension_name(name):
            problems.add(C.WarningCode.INVALID_DIMENSION_NAME, element, reason)
        elif name.lower().replace("_", "").replace("-", "") in C.HIGH_CARDINALITY_DIMENSION_NAMES:
            problems.add(C.WarningCode.HIGH_CARDINALITY_DIMENSION, element, "unbounded values belong in log properties")
        elif name in _ROOT_RESERVED or name in _CONTRACT_METRICS:
            problems.add(C.WarningCode.NAME_CONFLICT, element, "name used by the contract or EMF")
        elif reason := emf.check_dimension_value(value):
            problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, element, reason)
        elif name not in self._dimensions and len(self._dimensions) >= C.MAX_CUSTOM_DIMENSIONS:
            problems.add(C.WarningCode.TOO_MANY_DIMENSIONS, element,
                         f"at most {C.MAX_CUSTOM_DIMENSIONS} custom dimensions ({C.MAX_DIMENSIONS_PER_SET} per set)")
        else:
            if name in self._redacted:  # the log keys' rule (emitter.redact): a secret never reaches a document
                problems.add(C.WarningCode.SECRET_DIMENSION_REDACTED, element,
                             f"dimension name looks like a secret; value written as {REDACTED}")
                value = REDACTED
            self._dimensions[name] = value
            if default:
                self._default_dims[name] = value

    def set_timestamp(self, timestamp_ms: int) -> None:
        """Use ``timestamp_ms`` (epoch ms) as ``_aws.Timestamp`` of the next flush. Must be within 14 days past /
        2 hours future of the emitter clock; otherwise dropped (the flush time is used) + warning."""
        problems = Problems()
        if reason := emf.check_timestamp(timestamp_ms, self.clock()):
            problems.add(C.WarningCode.INVALID_TIMESTAMP, "timestamp", reason)
        else:
            self._timestamp_ms = timestamp_ms
        self._report(problems)

    def flush(self) -> list[str]:
        """Write the aggregated metrics now as EMF documents (one group per Operation[/EventSource], split at 100
        metrics / 100 values / 256 KB) and reset them; dimensions added with :meth:`add_dimension` are cleared
        (defaults stay). Returns the lines written (empty when nothing was recorded, or when metrics are disabled:
        ``$IDEMWATCH_METRICS_DISABLED`` / Powertools' ``$POWERTOOLS_METRICS_DISABLED``)."""
        self._lock.acquire()  # not `with`: a with-block on a C lock costs ~0.4 us more on CPython 3.11
        try:
            groups, self._groups = self._groups, {}
            ts, self._timestamp_ms = self._timestamp_ms, None
            dims_now = self._dimensions
            if dims_now != self._default_dims:
                self._dimensions = dict(self._default_dims)
            if not groups or self.metrics_disabled:
                return []
            if ts is None:
                clock = self.clock
                ts = _time_ns() // 1_000_000 if clock is _default_clock else int(clock())  # _default_clock inlined
            inv = self._inv
            if inv is not None:
                props_body = inv.emf_props_json
                if props_body is None:
                    props_body = inv.emf_props_json = self._emf_props_json(inv)
            else:
                props_body = self._idle_emf_props
            lines: list[str] = []
            shapes = _GROUP_SHAPES
            dims_cache = self._group_cache
            custom = tuple(dims_now.items()) if dims_now else ()
            for key, group in groups.items():
                if key.__class__ is tuple:  # group_key's inverse
                    op, es = key
                    hit = dims_cache.get((op, es, custom))
                else:  # the usual group; without custom dimensions its Operation alone is its cache key (no tuple
                    # made and hashed per group: ~70 ns)
                    op, es = key, None
                    hit = dims_cache.get((op, None, custom) if custom else op)
                dims, sets, header, dims_body = hit or self._group_dimensions(op, es, dims_now)
                body = f"{dims_body},{props_body}" if dims_body else props_body
                names = tuple(group)
                shape = shapes.get(names, _NOT_CACHED)
                if shape is _NOT_CACHED:
                    shape = _group_shape(names)
                line = emf.group_document(header, ts, body, group, shape) if shape is not None else None  # type: ignore[arg-type]
                if line is None:
                    series = emf.group_series(group, _PLAIN_UNITS)
                    line = emf.fast_document(header, ts, body, series)
                if line is not None:
                    lines.append(line)
                else:
                    import json  # rare path (a group over 100 metrics/values or 256 KB): json is loaded lazily

                    props = json.loads("{" + props_body + "}")
                    lines.extend(emf.build_documents(self.namespace, dims, sets, series, ts, props))
            try:  # self._write inlined (the lock is held)
                sink = self.sink
                if sink.__class__ is StdoutSink and len(lines) == 1:  # its write_lines, inlined (Lambda's sink)
                    out = _sys.stdout
                    out.write(lines[0] + "\n")
                    out.flush()
                else:
                    sink.write_lines(lines)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - as in _write
                self._sink_failed(exc, len(lines))
            return lines
        finally:
            self._lock.release()

    def _emf_props_json(self, inv: InvocationInfo | None) -> str:
        """Root members copied into every EMF document: function name, request id, schema version (JSON text), and
        ``level`` when Lambda's log-level filtering would drop a line without one (contract.lambda_filtered_level):
        Lambda filters JSON lines by their ``level`` key, so the document carries the configured level and survives."""
        fname = inv.function_name if inv is not None else None
        head = self._emf_props_head.get(fname)  # level and function name: the same every invocation
        if head is None:
            level = self._emf_level
            head = f'"{_K_LEVEL}":{_esc(level)},' if level is not None else ""  # what _dumps of the dict writes
            if fname:
                head += f'"{_EMF_PROPS[0]}":{_esc(fname)},'
            if len(self._emf_props_head) < 64:
                self._emf_props_head[fname] = head
        rid = inv.request_id_json if inv is not None else None  # the request id as JSON text (None: absent)
        return f'{head}"{_EMF_PROPS[1]}":{rid},{_SCHEMA_MEMBER}' if rid else head + _SCHEMA_MEMBER

    def _group_dimensions(self, op: str | None, es: str | None, custom: dict[str, str]
                          ) -> tuple[dict[str, str], list[list[str]], str, str]:
        """Root dimension members, dimension sets, directive header and dimension members as JSON text of a group
        (cached; the custom dimensions are part of the key; a group without EventSource or custom dimensions is also
        cached under its Operation alone, the key flush looks it up by)."""
        key = (op, es, tuple(custom.items()) if custom else ())  # flush's key (op alone for (op, None, ()))
        hit = self._group_cache.get(key)
        if hit is not None:
            return hit
        dims: dict[str, str] = {}
        if self._service_dim is not None:
            dims[_SERVICE] = self._service_dim
        if op is not None:
            dims[_OPERATION] = op
        if es is not None:
            dims[_EVENT_SOURCE] = es
        base_sets = list(DIMENSION_SETS) + ([EVENT_SOURCE_DIMENSION_SET] if es is not None else [])
        sets: list[list[str]] = []
        for bs in base_sets:
            s = [d for d in bs if d in dims] + list(custom)
            if s not in sets:
                sets.append(s)
        dims.update(custom)
        out = (dims, sets, emf.directive_header(self.namespace, sets), _dumps(dims)[1:-1] if dims else "")
        if len(self._group_cache) < 256:
            self._group_cache[key] = out
            if es is None and not custom:
                self._group_cache[op] = out  # an Operation: a str or None, never a tuple
        return out

    def pending(self) -> dict[tuple[str | None, str | None], dict[str, list[float | int]]]:
        """Metrics not yet flushed: {(operation, event_source|None): {metric name: values}} (Count metrics summed)."""
        with self._lock:
            return {(g if g.__class__ is tuple else (g, None)): {n: _values(v) for n, v in group.items()}
                    for g, group in self._groups.items()}

