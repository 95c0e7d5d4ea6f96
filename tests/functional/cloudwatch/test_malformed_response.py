"""A 2xx answer whose body is not JSON (a captive portal, a proxy's page, a truncated body) is a malformed AWS
response, never an empty result: botocore reads it as ``{"message": <body>}``, which used to become "no log group
matches prefix" in ``collect cloudwatch`` and ``internal error: KeyError: 'Table'`` in ``audit live``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from idemwatch.cli import main


def _server(status: int, body: bytes, content_type: str) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            pass

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


@pytest.fixture
def answering() -> Iterator:
    """Factory: a loopback HTTP server answering every request with (status, body, content type); its URL."""
    servers: list[ThreadingHTTPServer] = []

    def start(status: int, body: bytes, content_type: str = "application/x-amz-json-1.1") -> str:
        srv = _server(status, body, content_type)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        host, port = srv.server_address[:2]
        return f"http://{host}:{port}"

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


NOT_JSON = [
    pytest.param(b"<html><body>Sign in to the hotel Wi-Fi</body></html>", "text/html", id="html"),
    pytest.param(b'{"logGroups": [', "application/x-amz-json-1.1", id="truncated"),
    pytest.param(b'["not", "an", "object"]', "application/x-amz-json-1.1", id="json-array"),
]


@pytest.mark.parametrize(("body", "content_type"), NOT_JSON)
def test_collect_cloudwatch_names_a_malformed_response(answering, fake_aws_env, tmp_path, body, content_type):
    url = answering(200, body, content_type)
    res = CliRunner().invoke(main, ["collect", "cloudwatch", "--log-group-prefix", "/aws/lambda/", "--out",
                                    str(tmp_path / "data"), "--endpoint-url", url, "--no-progress"])
    assert res.exit_code == 1, res.output
    assert res.stderr.splitlines() == [
        (f"Error: malformed AWS response to CloudWatch Logs DescribeLogGroups: HTTP 200 with a body that is not a JSON "
        f"object ({len(body)} bytes); is the endpoint an AWS endpoint?")]
    assert not (tmp_path / "data" / "manifest.json").exists()


def test_an_empty_json_answer_is_still_an_empty_result(answering, fake_aws_env, tmp_path):
    """``{}`` is a well-formed DescribeLogGroups answer without log groups: the prefix matches none."""
    url = answering(200, b"{}")
    res = CliRunner().invoke(main, ["collect", "cloudwatch", "--log-group-prefix", "/aws/lambda/", "--out",
                                    str(tmp_path / "data"), "--endpoint-url", url, "--no-progress"])
    assert (res.exit_code, res.stderr) == (1, "Error: no log group matches prefix '/aws/lambda/'\n")


@pytest.mark.parametrize(("body", "content_type"), NOT_JSON)
def test_audit_live_names_a_malformed_response_exit_2(answering, fake_aws_env, body, content_type):
    url = answering(200, body, content_type)
    res = CliRunner().invoke(main, ["audit", "live", "--endpoint-url", url])
    assert res.exit_code == 2, res.output  # the audit could not run (docs/audit.md)
    assert res.stderr.splitlines() == [
        (f"Error: malformed AWS response to Lambda ListFunctions: HTTP 200 with a body that is not a JSON object "
        f"({len(body)} bytes); is the endpoint an AWS endpoint?")]
    assert res.stdout == ""
