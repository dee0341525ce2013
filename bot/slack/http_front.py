"""The HTTP front of ``paperping run --http``: waitress, a production WSGI server, in front of bolt.

Slack's requests are small (an event, a command, a button: a few KB), so the front refuses a body over
``MAX_BODY_BYTES`` from its declared length before reading it (413), and stops reading a chunked one at the
cap. Requests are read by waitress's event loop, not by the worker threads, so a client that sends slowly holds
a socket, not a thread; one that sends nothing for ``READ_TIMEOUT`` seconds is dropped. At most ``THREADS``
requests are handled at once and at most ``CONNECTIONS`` connections are open. Every request that reaches bolt
has its signature checked there (wrong secret, stale timestamp and unsigned requests get 401; `/metrics` counts them).
``/metrics`` (``bot.slack.metrics``) serves Prometheus's text format; with no bolt app (Socket Mode's metrics port)
the front serves only it and ``/healthz``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from slack_bolt import App
from waitress.server import create_server

from bot.slack.metrics import MetricsPage

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1_000_000
READ_TIMEOUT = 15  # seconds a connection may stay silent
THREADS = 8  # requests handled at once
CONNECTIONS = 500  # open connections (slow ones included); more wait to be accepted


def wsgi_app(app: App | None, metrics: MetricsPage | None = None) -> WSGIApplication:
    """``/slack/events`` (events, interactivity, the command), OAuth pages, ``/metrics`` and ``/healthz``."""
    handler = None
    if app is not None:
        from slack_bolt.adapter.wsgi import SlackRequestHandler

        handler = SlackRequestHandler(app)

    def serve(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO")
        if path == "/healthz":
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"ok"]
        if path == "/metrics" and metrics is not None:
            return metrics(environ, start_response)
        if handler is None:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"only /metrics and /healthz here"]
        return handler(environ, start_response)

    return serve


class HttpFront:
    """The server, run in a thread of its own; ``port`` is the one it listens on (0 picks a free one)."""

    def __init__(
        self,
        app: App | None,
        host: str = "0.0.0.0",
        port: int = 3000,
        *,
        read_timeout: int = READ_TIMEOUT,
        metrics: MetricsPage | None = None,
    ) -> None:
        self.server = create_server(
            wsgi_app(app, metrics),
            host=host,
            port=port,
            threads=THREADS,
            connection_limit=CONNECTIONS,
            channel_timeout=read_timeout,
            cleanup_interval=max(1, min(5, read_timeout // 3)),
            max_request_body_size=MAX_BODY_BYTES,
            max_request_header_size=64_000,
            ident="PaperPing",
            expose_tracebacks=False,
            # kept in the environ, trusted for nothing: /metrics refuses a relayed request when it has no token
            clear_untrusted_proxy_headers=False,
        )
        self.port = int(self.server.effective_port)
        self._thread = threading.Thread(target=self.server.run, daemon=True, name="http-front")

    def start(self) -> HttpFront:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Close every socket and stop. A running event loop closes them itself, between two waits: closed from
        this thread while the loop waits on them, its wait would fail (a bad file descriptor)."""
        from waitress import wasyncore

        sockets = self.server._map
        if self._thread.is_alive():
            try:
                self.server.trigger.pull_trigger(lambda: wasyncore.close_all(sockets, ignore_all=True))
            except OSError as exc:  # its wake-up pipe was closed under it: close the sockets from here
                log.warning("the HTTP front's event loop could not be woken (%s); closing its sockets directly", exc)
                wasyncore.close_all(sockets, ignore_all=True)
            self._thread.join(timeout=5)
        if self._thread.is_alive() or sockets:
            self.server.close()
        self.server.task_dispatcher.shutdown(timeout=5)
