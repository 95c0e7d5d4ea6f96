"""Sinks: where the emitter's lines go. Every line is one compact JSON object without the trailing newline;
a sink writes each on its own line.

- :class:`StdoutSink` — Lambda (the Lambda runtime ships stdout to CloudWatch Logs; EMF is extracted there).
- :class:`FileSink` — local runs and the demo (append, one line per record, thread-safe).
- :class:`StreamSink` — any callable taking one line, or any text file object (``io.StringIO``, a socket file, ...).
- :class:`MemorySink` — keeps lines in a list (tests, notebooks).
- :class:`DiscardSink` — drops everything (benchmarks).
- :class:`AgentSink` — the CloudWatch agent's EMF endpoint (EC2/ECS) through aws-embedded-metrics' socket clients,
  imported on first write so the Lambda path never loads it.
"""

from __future__ import annotations

import _thread
import os
import sys

from emitter import constants as C

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import IO, Any


class Sink:
    """What a sink is: anything with ``write_lines(lines: Iterable[str]) -> None`` taking complete lines (no
    newline). Subclassing is optional (duck typing); this base class documents the protocol."""

    def write_lines(self, lines: Iterable[str]) -> None:
        raise NotImplementedError


class StdoutSink:
    """Writes to ``sys.stdout`` (looked up at write time, so redirection and capture work)."""

    def write_lines(self, lines: Iterable[str]) -> None:
        out = sys.stdout
        if isinstance(lines, list):
            if len(lines) == 1:
                out.write(lines[0] + "\n")
            elif lines:
                out.write("\n".join(lines) + "\n")
        else:
            out.write("".join(line + "\n" for line in lines))
        out.flush()  # a Lambda killed at its timeout must not lose buffered records


class StreamSink:
    """Writes to a text file object (``.write``) or calls ``target(line)`` once per line."""

    def __init__(self, target: IO[str] | Callable[[str], Any]) -> None:
        write = getattr(target, "write", None)
        self._file: Any = target if callable(write) else None
        self._fn: Any = None if self._file is not None else target
        if self._file is None and not callable(target):
            raise TypeError("StreamSink needs a text file object or a callable taking one line")

    def write_lines(self, lines: Iterable[str]) -> None:
        if self._file is not None:
            self._file.write("".join(line + "\n" for line in lines))
        else:
            for line in lines:
                self._fn(line)


class FileSink:
    """Appends lines to ``path`` (created with its parent folders). Thread-safe; flushed after every write so
    a crash loses nothing already recorded. ``close()`` releases the file (reopened on the next write)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._lock = _thread.allocate_lock()
        self._fh: IO[str] | None = None

    def write_lines(self, lines: Iterable[str]) -> None:
        data = "".join(line + "\n" for line in lines)
        with self._lock:
            if self._fh is None or self._fh.closed:
                parent = os.path.dirname(self.path)
                if parent:
                    os.makedirs(parent, exist_ok=True)
                self._fh = open(self.path, "a", encoding="utf-8")
            self._fh.write(data)
            self._fh.flush()

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None


class MemorySink:
    """Keeps every line in ``lines``; ``records()`` parses them."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_lines(self, lines: Iterable[str]) -> None:
        self.lines.extend(lines)

    def records(self) -> list[dict[str, Any]]:
        import json

        return [json.loads(line) for line in self.lines]

    def clear(self) -> None:
        self.lines.clear()


class DiscardSink:
    """Drops every line (benchmarks); counts them in ``count``."""

    def __init__(self) -> None:
        self.count = 0

    def write_lines(self, lines: Iterable[str]) -> None:
        for _ in lines:
            self.count += 1


class AgentSink:
    """Sends lines to the CloudWatch agent's EMF listener (``tcp://`` or ``udp://host:port``; default
    ``$AWS_EMF_AGENT_ENDPOINT`` or tcp://127.0.0.1:25888). TCP goes through aws-embedded-metrics' TcpClient (install
    the ``agent`` extra); UDP through a connected datagram socket of the standard library. The agent routes by
    ``_aws.LogGroupName``/``LogStreamName``, so every line gets them; plain log records get an ``_aws`` with an empty
    ``CloudWatchMetrics`` list (a valid EMF document that creates no metric) so the agent forwards them too.

    Lines that cannot be delivered are counted, never dropped silently: ``write_lines`` raises :class:`SinkError`
    with ``lines_lost`` set, and the emitter counts them under ``sink_error``. TcpClient logs and drops a message it
    could not send after one reconnect; that is detected by its reconnect flag after the send. Over UDP a listener
    that is not there is detected when the host answers ICMP port-unreachable right away (the agent's own host,
    the usual case); a datagram lost on a network path is not detectable.

    Args:
        log_group_name: target log group (required by the agent).
        log_stream_name: optional log stream.
        endpoint: agent endpoint URL.
    """

    def __init__(self, log_group_name: str, log_stream_name: str | None = None, endpoint: str | None = None) -> None:
        self.log_group_name = log_group_name
        self.log_stream_name = log_stream_name
        self.endpoint = endpoint or os.environ.get(C.ENV_AGENT_ENDPOINT) or C.AGENT_ENDPOINT_DEFAULT
        self._client: Any = None
        self._lock = _thread.allocate_lock()
        import importlib.util

        if not self.endpoint.startswith("udp:") and importlib.util.find_spec("aws_embedded_metrics") is None:
            # said once, here, not per lost batch
            sys.stderr.write("idemwatch: AgentSink needs the agent extra (pip install 'idemwatch[agent]'); "
                             "lines sent to it are lost and counted as sink_error\n")

    def _connect(self) -> Any:
        from urllib.parse import urlparse

        url = urlparse(self.endpoint)
        if url.hostname is None or url.port is None or url.scheme not in ("tcp", "udp"):
            raise ValueError(f"agent endpoint must be tcp://host:port or udp://host:port, got {self.endpoint!r}")
        if url.scheme == "udp":
            return _UdpSender(url.hostname, url.port)
        from aws_embedded_metrics.sinks.tcp_client import TcpClient

        return TcpClient(url).connect()

    def _route(self, line: str) -> str:
        import json

        obj = json.loads(line)
        aws = obj.get("_aws")
        if not isinstance(aws, dict):
            aws = {"Timestamp": _now_ms(), "CloudWatchMetrics": []}
            obj = {"_aws": aws, **obj}
        aws["LogGroupName"] = self.log_group_name
        if self.log_stream_name:
            aws["LogStreamName"] = self.log_stream_name
        return json.dumps(obj, separators=(",", ":"))

    def write_lines(self, lines: Iterable[str]) -> None:
        """Send each line; raise SinkError(lines_lost=n) when n of them were not delivered (the others were)."""
        from emitter.exceptions import SinkError

        lines = list(lines)
        lost = 0
        with self._lock:
            if self._client is None:
                self._client = self._connect()  # a bad endpoint or a missing extra: every line lost (counted)
            client = self._client
            for line in lines:
                try:
                    client.send_message((self._route(line) + "\n").encode("utf-8"))
                except Exception:  # noqa: BLE001 - counted below, the other lines still go
                    lost += 1
                    continue
                if getattr(client, "_should_connect", False) is True:  # TcpClient dropped it after its retry
                    lost += 1
        if lost:
            exc = SinkError(f"{lost} of {len(lines)} line(s) not delivered to the CloudWatch agent at {self.endpoint}")
            exc.lines_lost = lost
            raise exc


class _UdpSender:
    """One connected datagram socket to the agent. A connected UDP socket receives the ICMP port-unreachable answer
    of a host where nothing listens as ConnectionRefusedError (Linux, BSD, macOS): read without waiting after each
    send, so a missing listener on the agent's host is reported for the datagram that met it."""

    def __init__(self, host: str, port: int) -> None:
        import socket

        self._socket = socket
        self._sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.connect((host, port))
        self._peek = getattr(socket, "MSG_DONTWAIT", 0)

    def send_message(self, message: bytes) -> None:
        self._sock.send(message)
        if self._peek:
            try:
                self._sock.recv(1, self._peek)  # the agent never answers: only an error can be pending
            except BlockingIOError:
                pass


def _now_ms() -> int:
    import time

    return time.time_ns() // 1_000_000
