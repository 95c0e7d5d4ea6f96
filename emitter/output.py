"""Output: writing lines to the sink, and the one warning record per call that reports dropped or fixed input.

A failing sink never raises into the handler (``strict``: :class:`SinkError`); the lines it lost are counted under
``WarningCode.SINK_ERROR`` and reported on stderr. Invalid input is collected in a :class:`Problems` list during a
call and reported once at its end (``strict``: :class:`EmfValidationError` on the first problem).

A warning record lists at most :data:`WARNING_LIST_MAX_BYTES` of ``idemwatch_dropped`` entries (CloudWatch Logs
events are at most 256 KB: https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/cloudwatch_limits_cwl.html);
what is cut is counted in ``idemwatch_dropped_omitted``, and ``idemwatch_dropped_by_code`` then gives the count of
every problem of the call by code, so the totals stay complete.
"""

from __future__ import annotations

import sys

from emitter import constants as C
from emitter.compact_json import dumps as _dumps
from emitter.contract import LogKey
from emitter.exceptions import EmfValidationError, SinkError
from emitter.log_records import LogRecordBuilder, record_head

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Problems(list):  # list[tuple[code, element, reason]]
    """Invalid input found during one call: ``(WarningCode, element, reason)`` tuples, element cut to 128 chars and reason to 256."""

    def add(self, code: str, element: str, reason: str) -> None:
        self.append((code, element[:128], reason[:256]))


WARNING_LIST_MAX_BYTES = 32 * 1024
"""Bytes of ``idemwatch_dropped`` entries one warning record carries (UTF-8 = ASCII JSON here). With the record's
other keys (a few hundred bytes, plus the invocation's function name and ids) the record stays far under the
256 KB CloudWatch Logs event limit; a call with 10,000 problems writes about 33 KB instead of 2.4 MB."""

WARNING_HEAD = record_head("WARNING", "idemwatch dropped or fixed invalid input")
"""The head of the warning record (:func:`emitter.log_records.record_head`)."""
K_DROPPED = "idemwatch_dropped"
K_DROPPED_OMITTED = "idemwatch_dropped_omitted"
K_DROPPED_BY_CODE = "idemwatch_dropped_by_code"


def dropped_fields(problems: Problems, max_bytes: int = WARNING_LIST_MAX_BYTES) -> dict[str, Any]:
    """The warning record's problem fields: ``idemwatch_dropped`` (entries in order, at most ``max_bytes`` of JSON)
    and, when entries were cut, ``idemwatch_dropped_omitted`` (int) and ``idemwatch_dropped_by_code``
    (``{code: count}`` over ALL problems of the call, listed or not)."""
    entries: list[dict[str, str]] = []
    size = 2  # the list's brackets
    for c, e, r in problems:
        item = {"code": c, "element": e, "reason": r}
        n = len(_dumps(item)) + 1
        if size + n > max_bytes:
            break
        entries.append(item)
        size += n
    out: dict[str, Any] = {K_DROPPED: entries}
    if len(entries) < len(problems):
        by_code: dict[str, int] = {}
        for c, _, _ in problems:
            by_code[c] = by_code.get(c, 0) + 1
        out[K_DROPPED_OMITTED] = len(problems) - len(entries)
        out[K_DROPPED_BY_CODE] = by_code
    return out


class SinkOutput(LogRecordBuilder):
    """Emitter layer 2: sink writes, the warning counters and the warning record (all under the emitter lock)."""

    sink: Any
    strict: bool
    warnings: dict[str, int]
    _lock: Any  # _thread.RLock

    def _write(self, lines: list[str]) -> None:
        """Hand ``lines`` to the sink in one call (under the lock: lines of concurrent calls never interleave)."""
        if not lines:
            return
        with self._lock:
            try:
                self.sink.write_lines(lines)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - SystemExit, GeneratorExit, ... from a sink: contained
                self._sink_failed(exc, len(lines))

    def _sink_failed(self, exc: BaseException, n: int) -> None:
        """Count the lines a sink lost (``strict``: raise SinkError) and say so on stderr: ``n`` (the lines handed
        to it), or the exception's ``lines_lost`` when the sink says how many of them did not get through
        (:class:`~emitter.sinks.AgentSink`)."""
        lost = getattr(exc, "lines_lost", None)
        if isinstance(lost, int) and 0 < lost <= n:
            n = int(lost)
        self._count_warning(C.WarningCode.SINK_ERROR, n)
        if self.strict:
            raise SinkError(f"sink failed: {type(exc).__name__}") from exc
        self._stderr(f"idemwatch: sink failed ({type(exc).__name__}); {n} line(s) not written")

    def _count_warning(self, code: str, n: int) -> None:
        with self._lock:
            self.warnings[code] = self.warnings.get(code, 0) + n

    def _report(self, problems: Problems, ms: int | None = None) -> None:
        """Strict: raise on the first problem. Otherwise: count them and write ONE warning record for the call
        (``ms``: its timestamp, epoch ms; default: the clock now)."""
        if not problems:
            return
        if self.strict:
            code, element, reason = problems[0]
            raise EmfValidationError(code, f"{element}: {reason}")
        with self._lock:
            for code, _, _ in problems:
                self.warnings[code] = self.warnings.get(code, 0) + 1
        inv = self._inv
        static = inv.static_json if inv is not None else self._idle_static
        f = {LogKey.WARNING_CODE.value: problems[0][0], **dropped_fields(problems)}
        self._write([self._line(WARNING_HEAD, ms, static, _dumps(f)[1:-1])])

    @staticmethod
    def _stderr(msg: str) -> None:
        try:
            sys.stderr.write(msg + "\n")
        except Exception:
            pass
