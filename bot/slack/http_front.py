"""The HTTP front of ``paperping run --http``: waitress, a production WSGI server, in front of bolt.

Slack's requests are small (an event, a command, a button: a few KB) and arrive at once, so the front refuses a
body over ``MAX_BODY_BYTES`` from its declared length before reading it (413), stops reading a chunked one at the
cap, and closes a connection whose request (headers and body) is not all there ``REQUEST_DEADLINE`` seconds after
its first byte, however steadily it trickles in. Requests are read by waitress's event loop, not by the worker
threads, so a slow client holds a socket, not a thread; one that sends nothing for ``READ_TIMEOUT`` seconds is
dropped. At most ``CONNECTIONS`` connections are open, and one address holds at most ``peer_connections`` of them
(``PAPERPING_HTTP_PEER_CONNECTIONS``); at most ``THREADS`` requests are handled at once.

A POST to ``/slack/events`` has its Slack signature checked over the raw body before bolt parses anything: an
unsigned, wrongly signed or stale one gets 401 and costs one HMAC, whatever its body holds. While bolt handles a
signed one, its thread waits at most ``REQUEST_DB_WAIT`` seconds for a database connection (Slack gives up after
3), so a database that stopped answering fails requests quickly instead of filling the threads.
``/metrics`` (``bot.slack.metrics``) serves Prometheus's text format, ``/healthz`` says the process is up and
``/readyz`` (``bot.slack.ready_page``) whether its database answers; with no bolt app (Socket Mode's metrics port)
the front serves only these three.
"""

from __future__ import annotations

import io
import logging
import threading
import time
from collections.abc import Iterable
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from slack_bolt import App
from slack_sdk.signature import SignatureVerifier
from waitress.channel import HTTPChannel
from waitress.server import create_server

from bot.slack.metrics import Metrics, MetricsPage
from bot.slack.ready_page import ReadyPage
from socialrag.db import Database

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1_000_000
READ_TIMEOUT = 15  # seconds a connection may stay silent
REQUEST_DEADLINE = 5.0  # seconds from a request's first byte to its last
THREADS = 8  # requests handled at once
CONNECTIONS = 500  # open connections (slow ones included); more wait to be accepted
PEER_CONNECTIONS = 0  # connections one address may hold (PAPERPING_HTTP_PEER_CONNECTIONS; 0: none, as behind a proxy)
REQUEST_DB_WAIT = 2.0  # seconds a Slack request waits for a database connection
EVENTS_PATH = "/slack/events"
UNSIGNED = b"unsigned, wrongly signed or stale request: PaperPing answers only Slack\n"


def wsgi_app(
    app: App | None,
    metrics: MetricsPage | None = None,
    *,
    signing_secret: str | None = None,
    db: Database | None = None,
) -> WSGIApplication:
    """``/slack/events`` (events, interactivity, the command), OAuth pages, ``/metrics``, ``/healthz``, ``/readyz``."""
    handler = None
    if app is not None:
        from slack_bolt.adapter.wsgi import SlackRequestHandler

        if not signing_secret:
            raise ValueError("the HTTP front checks Slack's signatures itself: give it the signing secret")
        handler = SlackRequestHandler(app, EVENTS_PATH)
    verifier = SignatureVerifier(signing_secret) if signing_secret else None
    ready = ReadyPage(db) if db is not None else None
    counts = metrics.metrics if metrics is not None else None

    def serve(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO")
        if path == "/healthz":
            return _plain(start_response, "200 OK", b"ok")
        if path == "/readyz" and ready is not None:
            return ready(environ, start_response)
        if path == "/metrics" and metrics is not None:
            return metrics(environ, start_response)
        if handler is None or verifier is None:  # no bolt app here (a verifier comes with one)
            return _plain(start_response, "404 Not Found", b"only /metrics, /healthz and /readyz here")
        if environ.get("REQUEST_METHOD") == "POST" and path == EVENTS_PATH and not keep_signed_body(environ, verifier):
            if counts is not None:
                counts.refused.labels("signature").inc()
            return _plain(start_response, "401 Unauthorized", UNSIGNED)
        with db.waiting_at_most(REQUEST_DB_WAIT) if db is not None else nullcontext():
            return handler(environ, start_response)

    return serve


def keep_signed_body(environ: WSGIEnvironment, verifier: SignatureVerifier) -> bool:
    """Whether the request's body carries Slack's signature (fresh, over these very bytes). The body, read here
    (waitress has it in memory or in a temporary file, at most ``MAX_BODY_BYTES``), is put back for bolt."""
    try:
        length = max(0, int(environ.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return False
    body = environ["wsgi.input"].read(length) if length else b""
    environ["wsgi.input"], environ["CONTENT_LENGTH"] = io.BytesIO(body), str(len(body))
    timestamp = environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP")
    signature = environ.get("HTTP_X_SLACK_SIGNATURE")
    try:
        return verifier.is_valid(body, timestamp, signature)
    except (ValueError, TypeError):  # a timestamp that is no number, a body or signature that is no text
        return False


def _plain(start_response: StartResponse, status: str, text: bytes) -> list[bytes]:
    start_response(status, [("Content-Type", "text/plain")])
    return [text]


def guarded_channel(deadline: float, peer_connections: int, metrics: Metrics | None) -> type[HTTPChannel]:
    """waitress's connection with two limits of its own: the request's deadline (checked each time the event loop
    asks whether to read, at least once a second) and the open connections one address may hold."""

    def refuse(reason: str) -> None:
        if metrics is not None:
            metrics.refused.labels(reason).inc()

    class GuardedChannel(HTTPChannel):
        reading_since: float | None = None  # when the first byte of the request being read arrived

        def __init__(self, server: Any, sock: Any, addr: Any, adj: Any, map: Any = None) -> None:
            super().__init__(server, sock, addr, adj, map=map)
            peer = _peer(self)
            held = sum(_peer(channel) == peer for channel in server.active_channels.values())  # this one included
            if 0 < peer_connections < held:
                self.will_close = True  # closed before a byte is read (readable() now says no)
                refuse("peer_connections")

        def received(self, data: bytes) -> bool:
            before = self.request
            went = bool(super().received(data))
            if self.request is None:
                self.reading_since = None
            elif self.request is not before or self.reading_since is None:
                self.reading_since = time.monotonic()
            return went

        def readable(self) -> bool:
            late = self.reading_since is not None and time.monotonic() - self.reading_since > deadline
            if late and not self.requests:  # (a request being answered finishes first, as waitress's own timeout)
                self.reading_since, self.will_close = None, True  # too slow: closed at the next write turn
                refuse("slow_request")
                return False
            return bool(super().readable())

    return GuardedChannel


def _peer(channel: Any) -> Any:
    return channel.addr[0] if isinstance(channel.addr, tuple) else channel.addr


class HttpFront:
    """The server, run in a thread of its own; ``port`` is the one it listens on (0 picks a free one). With ``db``
    it serves ``/readyz`` and caps a Slack request's wait for a database connection."""

    def __init__(
        self,
        app: App | None,
        host: str = "0.0.0.0",
        port: int = 3000,
        *,
        signing_secret: str | None = None,
        db: Database | None = None,
        metrics: MetricsPage | None = None,
        read_timeout: int = READ_TIMEOUT,
        request_deadline: float = REQUEST_DEADLINE,
        peer_connections: int = PEER_CONNECTIONS,
    ) -> None:
        self.server = create_server(
            wsgi_app(app, metrics, signing_secret=signing_secret, db=db),
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
        counts = metrics.metrics if metrics is not None else None
        self.server.channel_class = guarded_channel(request_deadline, peer_connections, counts)
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
