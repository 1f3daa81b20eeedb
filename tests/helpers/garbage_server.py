"""A server on 127.0.0.1 that answers one route with given bytes and forwards every other request to a real
server, for the fuzzing of server answers (answers a real llama-server never gives).

    with GarbageServer(upstream, route="/completion", status=200, body=b"data: [1, 2]\\n\\n") as server:
        ... --oracle-url server.url ...
    server.answered   # how often the route was answered with the garbage (never retried: at most once)

Forwarded answers are read whole and then written (a stream arrives in one piece: fine for what is tested here).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

__all__ = ["GarbageServer"]


class GarbageServer:
    def __init__(self, upstream: str, *, route: str, status: int, body: bytes,
                 content_type: str = "text/event-stream") -> None:
        self.upstream, self.route, self.status, self.body = upstream.rstrip("/"), route, status, body
        self.content_type = content_type
        self.answered = 0
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *a):
                pass

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path.split("?")[0] == outer.route:
                    with lock:
                        outer.answered += 1
                    self.send_response(outer.status)
                    self.send_header("Content-Type", outer.content_type)
                    self.end_headers()
                    self.wfile.write(outer.body)
                    return
                headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
                r = httpx.request(method, outer.upstream + self.path, content=raw or None, headers=headers,
                                  timeout=600)
                self.send_response(r.status_code)
                self.send_header("Content-Type", r.headers.get("content-type", "application/json"))
                self.end_headers()
                self.wfile.write(r.content)

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "GarbageServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
