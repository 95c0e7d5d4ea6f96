"""Per-invocation metric aggregation and EMF flushing.

Metrics are kept in memory per group (Operation[, EventSource]) until :meth:`MetricAggregator.flush` writes each
group as one or more EMF documents (split at 100 metrics / 100 values / 256 KB, never dropped; EMF specification:
https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
A group maps metric name -> :class:`emf.MetricSeries`: the contract's Count metrics hold their sum (one value per
document), every other metric (the contract's Milliseconds metrics, custom metrics of any unit) keeps every value.
"""

from __future__ import annotations

from emitter import constants as C
from emitter import emf
from emitter.compact_json import dumps as _dumps
from emitter.compact_json import esc as _esc
from emitter.contract import (
    DIMENSION_SETS,
    EVENT_SOURCE_DIMENSION_SET,
    REDACTED,
    SCHEMA_VERSION,
    Dimension,
    LogKey,
    Metric,
    Unit,
)
from emitter.output import Problems, SinkOutput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from emitter.context import InvocationInfo
    from emitter.log_records import OutcomeWriting, RecordLine
    from emitter.redact import SecretNames

CONTRACT_METRICS = frozenset(m.value for m in Metric)
ROOT_RESERVED = frozenset({"_aws", *(d.value for d in Dimension), LogKey.FUNCTION_NAME.value,
                           LogKey.FUNCTION_REQUEST_ID.value, LogKey.SCHEMA_VERSION.value, LogKey.LEVEL.value})
"""Root members of an EMF document the emitter writes itself: no custom metric or dimension may take the name."""
_SCHEMA_MEMBER = f'"{LogKey.SCHEMA_VERSION.value}":{_esc(SCHEMA_VERSION)}'
_REQUEST_ID = f'"{LogKey.FUNCTION_REQUEST_ID.value}":'
_COUNT = Unit.COUNT.value
_MS = Unit.MILLISECONDS.value
_REDELIVERY = Metric.REDELIVERY.value
_EVENT_SOURCE = Dimension.EVENT_SOURCE.value
_OPERATION = Dimension.OPERATION.value
_SERVICE = Dimension.SERVICE.value


class MetricAggregator(SinkOutput):
    """Emitter layer 3: metric values per (Operation, EventSource) group until :meth:`flush` writes them as EMF."""

    namespace: str
    _groups: dict[tuple[str | None, str | None], dict[str, emf.MetricSeries]]  # (op, es) -> metric name -> series
    _dimensions: dict[str, str]
    _default_dims: dict[str, str]
    metrics_disabled: bool
    _emf_level: str | None
    _group_cache: dict[tuple[Any, ...], tuple[str, str]]  # (op, es, custom dimensions) -> (header, dimension members)
    _timestamp_ms: int | None
    _service_dim: str | None
    _idle_emf_props: str
    _redacted: SecretNames
    _emf_props_head: dict[str | None, str]

    def _group(self, op: str | None, es: str | None) -> dict[str, emf.MetricSeries]:
        """The metrics of group (Operation ``op``, EventSource ``es``), made when first used. The caller holds the
        lock."""
        group = self._groups.get((op, es))
        if group is None:
            group = self._groups[(op, es)] = {}
        return group

    @staticmethod
    def _sum(group: dict[str, emf.MetricSeries], name: str, n: int) -> None:
        """Add ``n`` to the contract Count metric ``name`` of ``group``: its one value is the sum. The caller holds the
        lock."""
        series = group.get(name)
        if series is None:
            group[name] = emf.MetricSeries(name, _COUNT, 60, [n])
        else:
            series.values[0] += n

    @staticmethod
    def _add(group: dict[str, emf.MetricSeries], name: str, values: list[float | int], unit: str,
             resolution: int = 60) -> None:
        """Add ``values`` (a new list: it may be kept) to metric ``name`` of ``group``, a metric that keeps every
        value (any metric but the contract's Count metrics, which :meth:`_sum` adds to). The caller holds the lock."""
        series = group.get(name)
        if series is None:
            group[name] = emf.MetricSeries(name, unit, resolution, values)
        else:
            series.values += values

    def _count(self, w: OutcomeWriting, records: list[RecordLine]) -> None:
        """Count the metrics of ``records``, the records of one call of outcome ``w``: 1 per record to its Count
        metric, 1 per redelivered ``received`` record to Redelivery, each record's value (RecordAge,
        RemainingTimeAtSideEffect) to its Milliseconds metric. Each run of records of one group (operation, event
        source) is counted at once, its metrics added in the order of their first value in the run (a group's
        metrics are written in the order they were first added). The caller holds the lock."""
        count_metric, value_metric, received = w.count_metric, w.value_metric, w.received
        start, n = 0, len(records)
        while start < n:
            _, _, op, es, _ = records[start]
            end = start + 1
            while end < n and records[end][2] == op and records[end][3] == es:
                end += 1
            group = self._group(op, es)
            if count_metric is not None:
                self._sum(group, count_metric, end - start)
            if value_metric is not None:
                run = records if end - start == n else records[start:end]
                values = [r[1] for r in run if r[1] is not None]
                redeliveries = len([r for r in run if r[4]]) if received else 0
                # the two metrics are added in the order of their first value in the run (same record: Redelivery)
                redelivery_first = False
                if redeliveries:
                    redelivery_first = True
                    for _, value, _, _, redelivered in run:
                        if redelivered or value is not None:
                            redelivery_first = redelivered
                            break
                if redelivery_first:
                    self._sum(group, _REDELIVERY, redeliveries)
                if values:
                    self._add(group, value_metric, values, _MS)
                if redeliveries and not redelivery_first:
                    self._sum(group, _REDELIVERY, redeliveries)
            start = end

    def add_metric(self, name: str, value: float, unit: str = "Count", resolution: int = 60,
                   operation: str | None = None) -> None:
        """Add a custom metric value (kept as a value list, split at 100 values). ``resolution``: the int 1 (high
        resolution) or 60. Names of the contract's metrics, dimensions and EMF members are refused (they would break
        the logs == metrics equality or the document). Invalid input: dropped + warning (strict: raises)."""
        problems = Problems()
        text = emf.plain_str(name)  # a str subclass is read as the text it holds (its methods may raise)
        element = "metric" if text is None else f"metric:{text}"
        if reason := emf.check_metric_name(name):
            problems.add(C.WarningCode.INVALID_METRIC_NAME, element, reason)
        elif text in CONTRACT_METRICS or text in ROOT_RESERVED or text in self._dimensions:
            problems.add(C.WarningCode.NAME_CONFLICT, element, "name used by the contract, a dimension or EMF")
        v, reason = emf.coerce_metric_value(value)
        if reason:
            problems.add(C.WarningCode.INVALID_METRIC_VALUE, element, reason)
        if reason := emf.check_unit(unit):
            problems.add(C.WarningCode.INVALID_UNIT, element, reason)
        if reason := emf.check_resolution(resolution):
            problems.add(C.WarningCode.INVALID_RESOLUTION, element, reason)
        inv = self._inv
        op = inv.operation if inv is not None else self._default_operation
        if operation is not None:
            if reason := emf.check_dimension_value(operation):
                problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, f"dimension:{_OPERATION}", reason)
            op = emf.plain_str(operation)
        es = None
        if self.event_source_dimension and inv is not None and inv.event_source is not None:
            es = inv.event_source.value
        unit_text, res = emf.plain_str(unit), emf.plain_int(resolution)
        if not problems and text is not None and v is not None and unit_text is not None and res is not None:
            with self._lock:
                group = self._group(op, es)
                existing = group.get(text)
                if existing is not None and (existing.unit != unit_text or existing.resolution != res):
                    problems.add(C.WarningCode.METRIC_DEFINITION_CONFLICT, element,
                                 "same metric added with another unit or resolution in this flush")
                else:
                    self._add(group, text, [v], unit_text, res)
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
        text, value_text = emf.plain_str(name), emf.plain_str(value)  # str subclasses read as the text they hold
        element = "dimension" if text is None else f"dimension:{text}"
        if (reason := emf.check_dimension_name(name)) or text is None:
            problems.add(C.WarningCode.INVALID_DIMENSION_NAME, element, str(reason))
        elif text.lower().replace("_", "").replace("-", "") in C.HIGH_CARDINALITY_DIMENSION_NAMES:
            problems.add(C.WarningCode.HIGH_CARDINALITY_DIMENSION, element, "unbounded values belong in log properties")
        elif text in ROOT_RESERVED or text in CONTRACT_METRICS:
            problems.add(C.WarningCode.NAME_CONFLICT, element, "name used by the contract or EMF")
        elif (reason := emf.check_dimension_value(value)) or value_text is None:
            problems.add(C.WarningCode.INVALID_DIMENSION_VALUE, element, str(reason))
        elif text not in self._dimensions and len(self._dimensions) >= C.MAX_CUSTOM_DIMENSIONS:
            problems.add(C.WarningCode.TOO_MANY_DIMENSIONS, element,
                         f"at most {C.MAX_CUSTOM_DIMENSIONS} custom dimensions ({C.MAX_DIMENSIONS_PER_SET} per set)")
        else:
            if text in self._redacted:  # the log keys' rule (emitter.redact): a secret never reaches a document
                problems.add(C.WarningCode.SECRET_DIMENSION_REDACTED, element,
                             f"dimension name looks like a secret; value written as {REDACTED}")
                value_text = REDACTED
            self._dimensions[text] = value_text
            if default:
                self._default_dims[text] = value_text

    def set_timestamp(self, timestamp_ms: int) -> None:
        """Use ``timestamp_ms`` (epoch ms) as ``_aws.Timestamp`` of the next flush. Must be within 14 days past /
        2 hours future of the emitter clock; otherwise dropped (the flush time is used) + warning."""
        problems = Problems()
        if reason := emf.check_timestamp(timestamp_ms, self.clock()):
            problems.add(C.WarningCode.INVALID_TIMESTAMP, "timestamp", reason)
        else:
            self._timestamp_ms = emf.plain_int(timestamp_ms)
        self._report(problems)

    def flush(self) -> list[str]:
        """Write the aggregated metrics now as EMF documents (one group per Operation[/EventSource], split at 100
        metrics / 100 values / 256 KB) and reset them; dimensions added with :meth:`add_dimension` are cleared
        (defaults stay). Returns the lines written (empty when nothing was recorded, or when metrics are disabled:
        ``$IDEMWATCH_METRICS_DISABLED`` / Powertools' ``$POWERTOOLS_METRICS_DISABLED``)."""
        with self._lock:
            groups, self._groups = self._groups, {}
            ts, self._timestamp_ms = self._timestamp_ms, None
            dims_now = self._dimensions
            if dims_now != self._default_dims:
                self._dimensions = dict(self._default_dims)
            if not groups or self.metrics_disabled:
                return []
            if ts is None:
                ts = int(self.clock())
            inv = self._inv
            if inv is None:
                props_body = self._idle_emf_props
            else:
                if inv.emf_props_json is None:
                    inv.emf_props_json = self._emf_props_json(inv)
                props_body = inv.emf_props_json
            lines: list[str] = []
            for (op, es), group in groups.items():
                header, dims_body = self._group_dimensions(op, es, dims_now)
                body = f"{dims_body},{props_body}" if dims_body else props_body
                lines.extend(emf.write_documents(header, ts, body, list(group.values())))
            self._write(lines)
            return lines

    def _emf_props_json(self, inv: InvocationInfo | None) -> str:
        """Root members copied into every EMF document: function name, request id, schema version (JSON text), and
        ``level`` when Lambda's log-level filtering would drop a line without one (contract.lambda_filtered_level):
        Lambda filters JSON lines by their ``level`` key, so the document carries the configured level and survives.
        The members before the request id are the same every invocation of a function: cached by function name."""
        fname = inv.function_name if inv is not None else None
        head = self._emf_props_head.get(fname)
        if head is None:
            level = self._emf_level
            head = f'"{LogKey.LEVEL.value}":{_esc(level)},' if level is not None else ""
            if fname:
                head += f'"{LogKey.FUNCTION_NAME.value}":{_esc(fname)},'
            if len(self._emf_props_head) < 64:
                self._emf_props_head[fname] = head
        rid = inv.request_id_json if inv is not None else None  # the request id as JSON text (None: absent)
        return f'{head}{_REQUEST_ID}{rid},{_SCHEMA_MEMBER}' if rid else head + _SCHEMA_MEMBER

    def _group_dimensions(self, op: str | None, es: str | None, custom: dict[str, str]) -> tuple[str, str]:
        """The directive header (namespace and dimension sets) and the dimension root members (JSON text) of group
        (``op``, ``es``) with the ``custom`` dimensions; cached (a function flushes the same few groups)."""
        key = (op, es, tuple(custom.items()))
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
        out = (emf.directive_header(self.namespace, sets), _dumps(dims)[1:-1] if dims else "")
        if len(self._group_cache) < 256:
            self._group_cache[key] = out
        return out

    def pending(self) -> dict[tuple[str | None, str | None], dict[str, list[float | int]]]:
        """Metrics not yet flushed: {(operation, event_source|None): {metric name: values}} (Count metrics summed)."""
        with self._lock:
            return {g: {n: list(s.values) for n, s in group.items()} for g, group in self._groups.items()}
