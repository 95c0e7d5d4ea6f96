"""Log groups of the simulated functions, written in the CloudWatch Logs export-to-S3 line format.

An export object holds one log event per line: ``<ISO-8601 UTC timestamp with ms> <message>``
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/S3Export.html). Messages are single
lines: a message containing CR or LF is a bug in the simulator and raises, never a silent split.

The Lambda platform lines follow what the managed Python runtime writes in the text log format
(https://docs.aws.amazon.com/lambda/latest/dg/python-logging.html): ``START``/``END``/``REPORT``
(tab separated, ``Init Duration`` on cold starts, ``Status: timeout`` on timeouts) and
``<timestamp> <request id> Task timed out after N.NN seconds``.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["FunctionLog", "end_line", "error_line", "iso_ms", "report_line", "start_line", "timeout_line"]


def iso_ms(epoch_ms: int) -> str:
    """Epoch ms -> ``2026-01-05T10:00:00.000Z`` (UTC, millisecond precision)."""
    dt = datetime.fromtimestamp(epoch_ms // 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{epoch_ms % 1000:03d}Z"


def start_line(request_id: str) -> str:
    return f"START RequestId: {request_id} Version: $LATEST"


def end_line(request_id: str) -> str:
    return f"END RequestId: {request_id}"


def report_line(
    request_id: str, duration_ms: float, memory_mb: int, max_memory_used_mb: int,
    init_duration_ms: float | None = None, timed_out: bool = False,
) -> str:
    """The REPORT line. Billed Duration is the duration rounded up to the next ms (1 ms billing
    granularity); the trailing tab is what the runtime writes."""
    billed = int(-(-duration_ms // 1))
    parts = [
        f"REPORT RequestId: {request_id}", f"Duration: {duration_ms:.2f} ms", f"Billed Duration: {billed} ms",
        f"Memory Size: {memory_mb} MB", f"Max Memory Used: {max_memory_used_mb} MB",
    ]
    if init_duration_ms is not None:
        parts.append(f"Init Duration: {init_duration_ms:.2f} ms")
    if timed_out:
        parts.append("Status: timeout")
    return "\t".join(parts) + "\t"


def timeout_line(at_ms: int, request_id: str, timeout_s: float) -> str:
    return f"{iso_ms(at_ms)} {request_id} Task timed out after {timeout_s:.2f} seconds"


def error_line(exc: BaseException) -> str:
    """The runtime's line for an unhandled exception, without the traceback (which would be multi-line)."""
    return f"[ERROR] {type(exc).__name__}: {exc}"


class FunctionLog:
    """All log events of one function (its log group), from every execution environment.

    ``write`` is thread-safe. Lines are kept as (timestamp ms, sequence, message, log stream) and written
    ordered by time then by write order, as an export of the log group reads.
    """

    def __init__(self, function_name: str) -> None:
        self.function_name = function_name
        self._events: list[tuple[int, int, str, str]] = []
        self._lock = threading.Lock()

    def write(self, at_ms: int, message: str, stream: str = "") -> None:
        """Append one log event at epoch ms ``at_ms`` to the log stream ``stream`` (the execution environment's).
        A trailing newline is stripped.

        Raises:
            ValueError: the message contains CR or LF (would become two export lines).
        """
        message = message.removesuffix("\n")
        if "\n" in message or "\r" in message:
            raise ValueError(f"multi-line log message for {self.function_name}: {message[:80]!r}")
        with self._lock:
            self._events.append((int(at_ms), len(self._events), message, stream))

    def __len__(self) -> int:
        return len(self._events)

    def messages(self) -> list[str]:
        """Messages in export order (tests)."""
        return [m for _, _, m, _ in sorted(self._events)]

    def dump(self, path: Path) -> int:
        """Write the export file (export-to-S3 lines: no log stream); returns the number of lines."""
        path.parent.mkdir(parents=True, exist_ok=True)
        events = sorted(self._events)
        with path.open("w", encoding="utf-8", newline="\n") as f:
            for ts, _, msg, _ in events:
                f.write(f"{iso_ms(ts)} {msg}\n")
        return len(events)

    def dump_events(self, path: Path) -> int:
        """Write the events as ``aws logs filter-log-events`` output (one event per line inside ``{"events": [...]}``),
        which keeps each event's log stream: one per execution environment, as CloudWatch has them. Returns the
        number of events."""
        import json

        path.parent.mkdir(parents=True, exist_ok=True)
        events = sorted(self._events)
        with path.open("w", encoding="utf-8", newline="\n") as f:
            f.write('{"events": [\n')
            for i, (ts, _, msg, stream) in enumerate(events):
                ev = {"logStreamName": stream, "timestamp": ts, "message": msg, "eventId": f"{i:010d}"}
                f.write(json.dumps(ev, separators=(",", ":")) + (",\n" if i + 1 < len(events) else "\n"))
            f.write("]}\n")
        return len(events)
