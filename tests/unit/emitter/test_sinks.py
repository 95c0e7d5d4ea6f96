"""Sinks: stdout, file, stream, and the CloudWatch agent over real TCP/UDP sockets on 127.0.0.1."""

from __future__ import annotations

import io
import json
import socket
import socketserver
import threading

import pytest

from emitter import AgentSink, Emitter, FileSink, StdoutSink, StreamSink
from emitter.emf import validate_document


def run(em: Emitter) -> None:
    with em.invocation({"aws_request_id": "r-1", "function_name": "fn"}, operation="Op", cold_start=True):
        em.succeeded(None, "k")


def test_stdout_sink(capsys):
    run(Emitter(service="s", sink=StdoutSink()))
    lines = capsys.readouterr().out.splitlines()
    objs = [json.loads(line) for line in lines]
    assert [o.get("outcome") for o in objs] == ["cold_start", "succeeded", None]
    assert objs[2]["EventsSucceeded"] == 1


def test_default_sink_is_stdout(capsys):
    Emitter(service="s").succeeded()
    assert json.loads(capsys.readouterr().out)["outcome"] == "succeeded"


def test_file_sink_appends_and_creates_dirs(tmp_path):
    path = tmp_path / "logs" / "fn.log"
    sink = FileSink(path)
    run(Emitter(service="s", sink=sink))
    run(Emitter(service="s", sink=sink))
    sink.close()
    lines = path.read_text().splitlines()
    assert len(lines) == 6 and all(json.loads(line) for line in lines)


def test_stream_sink_file_object_and_callable():
    buf = io.StringIO()
    run(Emitter(service="s", sink=StreamSink(buf)))
    assert len(buf.getvalue().splitlines()) == 3
    got: list[str] = []
    run(Emitter(service="s", sink=StreamSink(got.append)))
    assert len(got) == 3 and all("\n" not in line for line in got)
    with pytest.raises(TypeError):
        StreamSink(42)  # type: ignore[arg-type]


class _TcpHandler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        for raw in self.rfile:
            self.server.received.append(raw.decode())  # type: ignore[attr-defined]


def test_agent_sink_tcp():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _TcpHandler)
    server.received = []  # type: ignore[attr-defined]
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        port = server.server_address[1]
        sink = AgentSink("/ecs/orders", "task-1", endpoint=f"tcp://127.0.0.1:{port}")
        run(Emitter(service="s", sink=sink))
        sink._client._sock.close()  # the agent protocol is newline-delimited; closing ends the stream
        t.join(timeout=0)
        for _ in range(200):
            if len(server.received) >= 3:  # type: ignore[attr-defined]
                break
            threading.Event().wait(0.01)
    finally:
        server.shutdown()
        server.server_close()
    docs = [json.loads(line) for line in server.received]  # type: ignore[attr-defined]
    assert len(docs) == 3
    for d in docs:
        assert d["_aws"]["LogGroupName"] == "/ecs/orders" and d["_aws"]["LogStreamName"] == "task-1"
        assert validate_document(d) == []
    assert docs[1]["outcome"] == "succeeded" and docs[1]["_aws"]["CloudWatchMetrics"] == []
    assert docs[2]["EventsSucceeded"] == 1


def test_agent_sink_udp():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(5)
    port = sock.getsockname()[1]
    try:
        run(Emitter(service="s", sink=AgentSink("/ec2/orders", endpoint=f"udp://127.0.0.1:{port}")))
        got = [json.loads(sock.recv(65536)) for _ in range(3)]
    finally:
        sock.close()
    assert {d["_aws"]["LogGroupName"] for d in got} == {"/ec2/orders"}
    assert sum(d.get("EventsSucceeded", 0) for d in got) == 1


def test_agent_sink_bad_endpoint_is_contained(capsys):
    em = Emitter(service="s", sink=AgentSink("/g", endpoint="http://nowhere"))
    em.succeeded()
    assert em.warnings == {"sink_error": 1}
