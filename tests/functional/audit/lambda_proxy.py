"""A small Lambda-protocol test server in front of moto: moto 5.2 drops a function's ``DeadLetterConfig`` from
CreateFunction and never returns it, so this server forwards every request to moto unchanged, remembers that
field from CreateFunction request bodies (REST-JSON, ``POST /2015-03-31/functions``) and adds it to
ListFunctions / GetFunction / GetFunctionConfiguration responses, as Lambda does. Loopback only."""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

_KEPT = ("DeadLetterConfig",)


class LambdaProxy:
    def __init__(self, upstream: str) -> None:
        u = urlsplit(upstream)
        assert u.hostname == "127.0.0.1", upstream
        self.upstream = (u.hostname, u.port)
        self.extra: dict[str, dict] = {}
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.command == "POST" and self.path.rstrip("/") == "/2015-03-31/functions":
                    req = json.loads(body or b"{}")
                    proxy.extra[req.get("FunctionName", "")] = {k: req[k] for k in _KEPT if k in req}
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("content-length", "connection")}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                if self.command == "GET" and self.path.startswith("/2015-03-31/functions") and resp.status == 200:
                    data = proxy._inject(self.path, data)
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

            def log_message(self, *a: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _inject(self, path: str, data: bytes) -> bytes:
        try:
            doc = json.loads(data)
        except ValueError:
            return data
        for cfg in doc.get("Functions", []) + ([doc] if "FunctionName" in doc else []) + \
                ([doc["Configuration"]] if "Configuration" in doc else []):
            cfg.update(self.extra.get(cfg.get("FunctionName", ""), {}))
        return json.dumps(doc).encode()

    def close(self) -> None:
        self.server.shutdown()
