"""A local HTTP server that answers slowly: headers at once, then the body a few bytes at a time, ``every``
seconds apart (the way a struggling service or a proxy in trouble answers). Every request is counted."""

from __future__ import annotations

import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class TrickleServer:
    def __init__(
        self,
        body: bytes,
        *,
        every: float = 0.3,
        step: int = 1,
        content_type: str = "application/json",
        slow_headers: bool = False,
        tls: ssl.SSLContext | None = None,
        declared: bool = True,
    ) -> None:
        """``slow_headers``: the headers themselves come a byte at a time (a header line as long as the body);
        ``tls``: served over HTTPS with this context (``https://localhost:PORT/``); ``declared`` False: no
        Content-Length (the body ends when the connection closes)."""
        self.declared = declared
        self.body, self.every, self.step, self.content_type = body, every, step, content_type
        self.slow_headers = slow_headers
        self.requests = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                with outer.lock:
                    outer.requests += 1
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                if outer.slow_headers:
                    head = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * len(outer.body) + b"\r\n"
                    try:
                        for start in range(0, len(head), outer.step):
                            self.wfile.write(head[start : start + outer.step])
                            self.wfile.flush()
                            time.sleep(outer.every)
                    except OSError:  # the client gave up: that is the point
                        pass
                    return
                self.send_response(200)
                self.send_header("Content-Type", outer.content_type)
                if outer.declared:
                    self.send_header("Content-Length", str(len(outer.body)))
                else:
                    self.close_connection = True
                self.end_headers()
                try:
                    for start in range(0, len(outer.body), outer.step):
                        self.wfile.write(outer.body[start : start + outer.step])
                        self.wfile.flush()
                        time.sleep(outer.every)
                except OSError:  # the client gave up: that is the point
                    pass

            do_GET = do_POST = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.scheme = "http"
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"

    @property
    def url(self) -> str:
        host = "localhost" if self.scheme == "https" else "127.0.0.1"
        return f"{self.scheme}://{host}:{self.server.server_address[1]}/"

    def start(self) -> TrickleServer:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
