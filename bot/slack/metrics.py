"""``/metrics``: what this process counted (Slack requests by kind and outcome, refused ones by reason) and the
database's figures (``socialrag.cli.gauges``), in Prometheus's text format.

The page is served by the HTTP front's worker threads but never holds one long: the database is read at most once
per ``FIGURES_SECONDS`` by one background thread, a scrape waits at most ``WAIT_SECONDS`` for it, and at most
``SCRAPES`` scrapes are served at once (more are answered 503 at once), so events always find free threads.
With ``PAPERPING_METRICS_TOKEN`` set a scrape must send ``Authorization: Bearer <token>`` (else 401), compared in
constant time; unset, the page answers only direct requests from this machine's loopback (else 403, saying what to
set): the HTTP port faces the internet for Slack, and a private address is no proof of trust (any host of a shared
LAN, a cloud VPC or a Docker network has one). A request relayed by a proxy says so in one of ``RELAYED`` and is
refused without a token.
"""

from __future__ import annotations

import hmac
import ipaddress
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, generate_latest
from slack_bolt import App, BoltRequest, BoltResponse

from socialrag.cli.gauges import FiguresCache, FiguresCollector, load_figures, word_label
from socialrag.db import Database

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

SCRAPES = 2  # scrapes served at once (the HTTP front has eight threads; events keep the rest)
DUPLICATE = "paperping_duplicate"  # set in a request's context by the middleware that drops a resent event
# Headers a proxy, load balancer or tunnel (nginx, Caddy, ngrok, cloudflared) adds to a request it relays.
RELAYED = (
    "HTTP_X_FORWARDED_FOR",
    "HTTP_FORWARDED",
    "HTTP_X_REAL_IP",
    "HTTP_VIA",
    "HTTP_X_FORWARDED_HOST",
    "HTTP_X_FORWARDED_PROTO",
    "HTTP_CF_CONNECTING_IP",
)
NO_TOKEN = (
    b"/metrics without PAPERPING_METRICS_TOKEN answers only this machine's loopback. Set PAPERPING_METRICS_TOKEN "
    b"and send it as a bearer token (Prometheus: authorization.credentials) to scrape from another host.\n"
)


class Metrics:
    """This process's registry: its own counters and the database's figures (cached, see ``FiguresCache``)."""

    def __init__(self, db: Database | None = None, cache: FiguresCache | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "paperping_slack_requests",
            "Slack requests this process handled, by kind (event type, command, block_actions...) and outcome "
            "(handled, duplicate, failed, unhandled); signed requests only",
            ["kind", "outcome"],
            registry=self.registry,
        )
        self.refused = Counter(
            "paperping_requests_refused",
            "requests this process refused, by reason (signature: unsigned or wrongly signed; slow_request: not "
            "all there at the HTTP front's deadline; peer_connections: over one address's share of connections; "
            "metrics_token: a scrape without the token; metrics_address: without a token set, a scrape not from "
            "loopback)",
            ["reason"],
            registry=self.registry,
        )
        self.cache = cache or (FiguresCache(lambda: load_figures(db)) if db is not None else None)
        if self.cache is not None:
            self.registry.register(FiguresCollector(self.cache))

    def count_request(self, body: Any, status: int, duplicate: bool) -> None:
        if status == 401:  # unsigned or wrongly signed: its body is nobody's word, not even for a label
            self.refused.labels("signature").inc()
            return
        outcome = (
            "duplicate" if duplicate
            else "handled" if status < 300
            else "unhandled" if status == 404
            else "failed"
        )  # fmt: skip
        self.requests.labels(request_kind(body), outcome).inc()

    def page(self, token: str | None) -> MetricsPage:
        return MetricsPage(self, token)


def request_kind(body: Any) -> str:
    """A request's kind as a label: the event's type, ``command``, or the payload's type (never its content)."""
    if not isinstance(body, dict):
        return "other"
    if body.get("ssl_check"):  # Slack's certificate check: one kind, whatever else it carries
        return "ssl_check"
    if body.get("command"):
        return "command"
    event = body.get("event")
    if body.get("type") == "event_callback" and isinstance(event, dict):
        return word_label(str(event.get("type") or ""))
    return word_label(str(body.get("type") or ""))


def count_requests(app: App, metrics: Metrics) -> None:
    """Count every request ``app`` dispatches (over HTTP or Socket Mode) with how it ended. Bolt runs its global
    middleware one after the other, not around the listeners, so only ``dispatch`` sees the final answer. Over
    HTTP the front has checked the signature before ``dispatch`` (bolt answers an ``ssl_check`` before its own
    check), so only Slack's requests are counted here; the front counts the refused ones."""
    dispatch = app.dispatch

    def counted(req: BoltRequest) -> BoltResponse:
        try:
            answer = dispatch(req)
        except Exception:
            metrics.count_request(req.body, 500, False)
            raise
        metrics.count_request(req.body, answer.status, bool(req.context.get(DUPLICATE)))
        return answer

    app.dispatch = counted  # type: ignore[method-assign]


def direct_from_loopback(environ: WSGIEnvironment) -> bool:
    """The request came straight from this machine: its peer is a loopback address and no proxy header says it
    was relayed (a proxy or tunnel on this machine connects from loopback too)."""
    if any(environ.get(header) for header in RELAYED):
        return False
    try:
        address = ipaddress.ip_address(str(environ.get("REMOTE_ADDR") or "").split("%")[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:127.0.0.1 from a dual-stack socket
    return address.is_loopback


class MetricsPage:
    """The WSGI answer to ``GET /metrics``."""

    def __init__(self, metrics: Metrics, token: str | None) -> None:
        self.metrics, self.token = metrics, token
        self._room = threading.BoundedSemaphore(SCRAPES)

    def allowed(self, environ: WSGIEnvironment) -> bool:
        """With a token: the request sends it (compared in constant time). Without: it comes from loopback."""
        if not self.token:
            return direct_from_loopback(environ)
        sent = str(environ.get("HTTP_AUTHORIZATION") or "")
        wanted = f"Bearer {self.token}"
        return hmac.compare_digest(sent.encode("utf-8", "surrogateescape"), wanted.encode("utf-8", "surrogateescape"))

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            return _plain(start_response, "405 Method Not Allowed", b"GET only", [("Allow", "GET, HEAD")])
        if not self.allowed(environ):
            return self._refuse(start_response)
        if not self._room.acquire(blocking=False):
            return _plain(start_response, "503 Service Unavailable", b"busy: scrape again", [("Retry-After", "1")])
        try:
            text = generate_latest(self.metrics.registry)
        finally:
            self._room.release()
        start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(text)))])
        return [b""] if environ.get("REQUEST_METHOD") == "HEAD" else [text]

    def _refuse(self, start_response: StartResponse) -> list[bytes]:
        if not self.token:  # no token a scraper could send: say what the admin sets
            self.metrics.refused.labels("metrics_address").inc()
            return _plain(start_response, "403 Forbidden", NO_TOKEN, [])
        self.metrics.refused.labels("metrics_token").inc()
        why = b"send the PAPERPING_METRICS_TOKEN value as a bearer token\n"
        return _plain(
            start_response, "401 Unauthorized", why, [("WWW-Authenticate", 'Bearer realm="paperping-metrics"')]
        )


def _plain(start_response: StartResponse, status: str, text: bytes, headers: list[tuple[str, str]]) -> list[bytes]:
    start_response(status, [("Content-Type", "text/plain"), *headers])
    return [text]
