"""Nothing leaves the emitter unredacted or uncounted: secret-named dimensions, values sanitize replaces, lines an
agent that is not there never receives."""

from __future__ import annotations

import json
import socket
import socketserver
import threading

import pytest

from emitter import AgentSink, Emitter, MemorySink, SinkError
from emitter.contract import REDACTED
from emitter.emf import validate_document

from .test_redaction_leak import ALL_FORMS
from .test_sinks import _TcpHandler

SECRET_DIMENSION_NAMES = ["api_key", "Authorization", "x-api-key", "X-Api-Key", "XAPIKey", "apiKey", "password",
                          "DB_PASSWORD", "dbPassword", "client_secret", "clientSecret", "token", "AccessToken",
                          "Proxy-Authorization", "Cookie", "X-Amz-Security-Token", "session"]


def _emf(sink: MemorySink) -> list[dict]:
    return [json.loads(line) for line in sink.lines if '"_aws"' in line]


def _warnings(sink: MemorySink) -> list[dict]:
    return [json.loads(line) for line in sink.lines if '"idemwatch_warning"' in line]


@pytest.mark.parametrize("name", SECRET_DIMENSION_NAMES)
def test_secret_named_dimension_is_redacted_and_counted(name):
    sink = MemorySink()
    em = Emitter(service="s", sink=sink)
    em.add_dimension(name, "sk-live-VALUE1")
    em.add_dimension("Region", "eu-west-1")
    em.succeeded(None, "k")
    em.flush()
    (doc,) = _emf(sink)
    assert validate_document(doc) == []
    assert doc[name] == REDACTED and doc["Region"] == "eu-west-1"
    assert doc["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["Service", "Operation", name, "Region"],
                                                                 ["Service", name, "Region"]]
    assert em.warnings == {"secret_dimension_redacted": 1}
    (w,) = _warnings(sink)
    assert w["idemwatch_dropped"] == [{"code": "secret_dimension_redacted", "element": f"dimension:{name}",
                                       "reason": f"dimension name looks like a secret; value written as {REDACTED}"}]
    assert "sk-live-VALUE1" not in "".join(sink.lines)


def test_every_spelling_the_redactor_knows_is_redacted_as_a_dimension():
    """Each name of the leak test's case forms (every listed name in 18 spellings), as a default dimension, a
    per-invocation dimension and a constructor dimension: no seeded value in any byte, each one counted."""
    forms = [f for f in ALL_FORMS if f.isascii() and f.strip() and not f.startswith(":")]
    assert len(forms) > 800
    for i in range(0, len(forms), 25):  # the limit is 28 custom dimensions
        chunk = forms[i:i + 25]
        for how in ("constructor", "default", "invocation"):
            sink = MemorySink()
            values = {n: f"S3CR3T-{how}-{n}" for n in chunk}
            em = Emitter(service="s", sink=sink, dimensions=values if how == "constructor" else None)
            if how == "default":
                em.set_default_dimensions(**values)
            with em.invocation(None, operation="Op"):
                if how == "invocation":
                    for n, v in values.items():
                        em.add_dimension(n, v)
                em.succeeded(None, "k")
            assert "S3CR3T" not in "".join(sink.lines), (how, chunk)
            (doc,) = _emf(sink)
            assert all(doc[n] == REDACTED for n in chunk)
            assert em.warnings == {"secret_dimension_redacted": len(chunk)}


def test_non_secret_dimensions_are_not_counted():
    sink = MemorySink()
    em = Emitter(service="s", sink=sink, dimensions={"Stage": "prod"})
    em.add_dimension("Region", "eu-west-1")
    em.add_dimension("TokenizerModel", "bpe")  # 'token' must end at a word boundary
    em.succeeded()
    em.flush()
    (doc,) = _emf(sink)
    assert (doc["Stage"], doc["Region"], doc["TokenizerModel"]) == ("prod", "eu-west-1", "bpe")
    assert em.warnings == {}


def test_redact_exceptions_apply_to_dimensions_too():
    sink = MemorySink()
    em = Emitter(service="s", sink=sink, redact_exceptions={"token_type"})
    em.add_dimension("TokenType", "bearer")
    em.succeeded()
    em.flush()
    assert _emf(sink)[0]["TokenType"] == "bearer" and em.warnings == {}


def test_strict_mode_refuses_a_secret_dimension():
    from emitter import EmfValidationError

    em = Emitter(service="s", sink=MemorySink(), strict=True)
    with pytest.raises(EmfValidationError, match="secret_dimension_redacted"):
        em.add_dimension("api_key", "v")


# --------------------------------------------------------------------------- sanitize counts what it replaces
class Opaque:
    def __str__(self) -> str:
        return "leaky-str"


def test_unknown_objects_and_bytes_are_counted_where_they_are():
    sink = MemorySink()
    em = Emitter(service="s", sink=sink)
    em.succeeded(None, "k", thing=Opaque(), nested={"a": [1, Opaque()], "b": {"c": b"xyz"}}, fine={"n": 1})
    (rec,) = [json.loads(line) for line in sink.lines if '"outcome"' in line]
    assert rec["thing"] == "<Opaque>" and rec["nested"] == {"a": [1, "<Opaque>"], "b": {"c": "<bytes:3>"}}
    assert rec["fine"] == {"n": 1}
    (w,) = _warnings(sink)
    assert [(d["code"], d["element"]) for d in w["idemwatch_dropped"]] == [
        ("invalid_property", "property:thing"), ("invalid_property", "property:nested.a"),
        ("invalid_property", "property:nested.b.c")]
    assert em.warnings == {"invalid_property": 3}
    assert "leaky-str" not in "".join(sink.lines)


# --------------------------------------------------------------------------- AgentSink counts what it could not send
def _free_port(kind: int) -> int:
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _invocation(em: Emitter) -> None:
    with em.invocation({"aws_request_id": "r-1", "function_name": "fn"}, operation="Op", cold_start=True):
        em.succeeded(None, "k")
        em.duplicate_completed(None, "k")


@pytest.mark.parametrize("scheme", ["tcp", "udp"])
def test_agent_sink_without_listener_counts_every_line(scheme, capsys):
    port = _free_port(socket.SOCK_STREAM if scheme == "tcp" else socket.SOCK_DGRAM)
    em = Emitter(service="s", sink=AgentSink("/g", endpoint=f"{scheme}://127.0.0.1:{port}"))
    _invocation(em)  # cold_start, succeeded, duplicate_completed, one EMF document
    assert em.warnings == {"sink_error": 4}
    assert "not written" in capsys.readouterr().err


def test_agent_sink_strict_raises_sink_error():
    port = _free_port(socket.SOCK_DGRAM)
    em = Emitter(service="s", sink=AgentSink("/g", endpoint=f"udp://127.0.0.1:{port}"), strict=True)
    with pytest.raises(SinkError, match="sink failed") as info:
        em.succeeded()
    assert "1 of 1 line(s) not delivered" in str(info.value.__cause__)
    assert em.warnings == {"sink_error": 1}


def test_agent_sink_udp_listener_counts_nothing():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(5)
    try:
        em = Emitter(service="s", sink=AgentSink("/g", endpoint=f"udp://127.0.0.1:{sock.getsockname()[1]}"))
        _invocation(em)
        got = [json.loads(sock.recv(65536)) for _ in range(4)]
    finally:
        sock.close()
    assert em.warnings == {}
    assert [d.get("outcome") for d in got] == ["cold_start", "succeeded", "duplicate_completed", None]


def test_agent_sink_tcp_agent_going_away_counts_only_the_lost_lines():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _TcpHandler)
    server.daemon_threads = True
    server.received = []  # type: ignore[attr-defined]
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    port = server.server_address[1]
    em = Emitter(service="s", sink=AgentSink("/g", endpoint=f"tcp://127.0.0.1:{port}"))
    try:
        _invocation(em)
        assert em.warnings == {}
        em.sink._client._sock.close()  # newline-delimited stream: closing ends it
        for _ in range(500):
            if len(server.received) >= 4:  # type: ignore[attr-defined]
                break
            threading.Event().wait(0.01)
    finally:
        server.shutdown()
        server.server_close()
    assert len(server.received) == 4  # type: ignore[attr-defined]
    _invocation(em)  # the agent is gone: reconnecting fails, every line of this invocation is counted
    assert em.warnings == {"sink_error": 4}
