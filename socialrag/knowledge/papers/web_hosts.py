"""Files from the hosts of papers' full text (arXiv, the ACL Anthology, bioRxiv and medRxiv, PubMed Central, a PDF
OpenAlex points to), read the way a polite robot reads: each host's ``robots.txt`` read once a day and obeyed, each
host paced through a ``PoliteClient`` of its own (its pace and its ``Retry-After`` shared by every process through
Postgres, a ``Crawl-delay`` kept), redirects followed by hand, and neither a cookie kept nor a credential sent.

Only addresses of the hosts the settings name may be plain http (a local stand-in); any other, an address a source
gave or a redirect to another host, must be https and must not name a private or loopback address.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any
from urllib.robotparser import RobotFileParser

import httpx

from socialrag.errors import NotFound, SourceError
from socialrag.knowledge.fulltext import MAX_BYTES
from socialrag.knowledge.papers.http import OutOfTime, PoliteClient, SharedPace

log = logging.getLogger(__name__)

AGENT = "PaperPing"  # the name robots.txt rules are read for
USER_AGENT = "PaperPing/0.1 (reads the open-access papers a research group shares)"
ROBOTS_SECONDS = 86_400.0  # a host's robots.txt is read again after a day
ROBOTS_CHARS = 500_000  # of a robots.txt, at most this much is read (as search engines do)
MAX_REDIRECTS = 5
INTERVAL = 1.0  # seconds between two requests to one host, unless its robots.txt asks for more
MOST_INTERVAL = 30.0  # a longer Crawl-delay is kept at this: PaperPing then reads little from that host


class Disallowed(SourceError):
    """The address may not be read: the host's robots.txt asks robots not to, or it is not an address PaperPing
    reads (not https, a private address, a name and password in it)."""


class HostSkipped(SourceError):
    """The host's robots.txt could not be read (anything but a 404): the host is skipped for the round."""


@dataclass(frozen=True)
class Fetched:
    url: str  # where the body came from, after redirects
    content_type: str  # lower case, without its parameters
    body: bytes


def origin_of(url: httpx.URL) -> str:
    return f"{url.scheme}://{url.netloc.decode('ascii')}"


def _private(host: str) -> bool:
    """Whether ``host`` names this machine or a network not on the internet: ``localhost``, an address that is not
    global (loopback, private, link-local such as 169.254.169.254, shared, reserved, IPv6's own), written any way
    the system's resolver reads one (``2130706433``, ``0x7f.1``, ``127.1``, a final dot)."""
    name = host.strip("[]").rstrip(".").lower()
    if name in ("localhost", "localhost.localdomain") or name.endswith(".localhost") or not name:
        return True
    try:
        return not _global(ipaddress.ip_address(name))
    except ValueError:
        pass
    try:  # the forms inet_aton reads, as getaddrinfo does: decimal, octal, hex, fewer than four parts
        return not _global(ipaddress.IPv4Address(socket.inet_aton(name)))
    except (OSError, ValueError):
        return False


def _global(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


def _refuse_private_peer(origin: str) -> Callable[[str, dict[str, Any]], None]:
    """A request's trace that ends a connection to ``origin`` that reached a private or local address: a name
    that resolves to one (``internal.example``, a DNS record that changes between two lookups) is refused as the
    address itself is."""

    def trace(event: str, info: dict[str, Any]) -> None:
        if event != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        if stream is None:
            return
        peer = stream.get_extra_info("server_addr")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if _private(address.split("%", 1)[0]):
            stream.close()
            raise Disallowed(_name(origin), f"its address is private or local ({address[:60] or 'unknown'})")

    return trace


class WebHosts:
    """Reads files from papers' hosts. ``trusted``: the base addresses the settings name (read as given, http
    included); ``shared`` keeps each host's pace across processes. One instance serves one process's job."""

    def __init__(
        self,
        trusted: Iterable[str],
        *,
        timeout: float = 20.0,
        transport: httpx.BaseTransport | None = None,
        shared: SharedPace | None = None,
        max_bytes: int = MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        interval: float = INTERVAL,
    ) -> None:
        self.trusted = {origin_of(httpx.URL(u)) for u in trusted}
        self.timeout, self.transport, self.shared = timeout, transport, shared
        self.max_bytes, self.interval = max_bytes, interval
        self._clock, self._sleep = clock, sleep
        self._clients: dict[str, PoliteClient] = {}
        self._robots: dict[str, tuple[float, RobotFileParser | None, str]] = {}

    def check_url(self, url: str) -> httpx.URL:
        """``url`` parsed, or ``Disallowed`` when PaperPing does not read such an address."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError):
            raise Disallowed("fulltext", f"not an address: {url[:120]!r}") from None
        if parsed.userinfo:
            raise Disallowed("fulltext", "an address with a name or password in it is not read")
        if origin_of(parsed) in self.trusted:
            return parsed
        if parsed.scheme != "https" or not parsed.host:
            raise Disallowed("fulltext", f"only https addresses are read, not {str(parsed)[:120]!r}")
        if _private(parsed.host):
            raise Disallowed("fulltext", f"a private or local address is not read: {parsed.host[:80]!r}")
        return parsed

    def fetch(self, url: str, until: float, accept: str = "*/*") -> Fetched:
        """The file at ``url``, following up to ``MAX_REDIRECTS`` redirects, each address checked and allowed by
        its host's robots.txt, before ``until`` (``time.monotonic``). Raises ``NotFound`` (404), ``Disallowed``,
        ``HostSkipped``, ``OutOfTime`` or another ``SourceError`` (``TooSlow``, ``TooLarge``, ``Refused``, a 429
        held past the time left)."""
        current = self.check_url(url)
        for _ in range(MAX_REDIRECTS + 1):
            origin = origin_of(current)
            robots = self._robots_for(origin, until)
            if not robots.can_fetch(AGENT, str(current)):
                raise Disallowed(_name(origin), f"its robots.txt asks robots not to read {current.path[:120]}")
            response = self._get(origin, current, until, accept)
            if response.is_redirect and response.headers.get("Location"):
                current = self.check_url(str(current.join(response.headers["Location"])))
                continue
            kind = response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
            return Fetched(str(current), kind, response.content)
        raise SourceError(_name(origin_of(current)), f"more than {MAX_REDIRECTS} redirects")

    def _get(self, origin: str, url: httpx.URL, until: float, accept: str, keep: int | None = None) -> httpx.Response:
        client = self._client(origin)
        left = until - self._clock()
        if left <= 0:
            raise OutOfTime(client.name, "the time for this paper was spent before it was asked")
        client.deadline = left
        # a host the settings name may be a local stand-in; any other must reach a public address
        extensions = {} if origin in self.trusted else {"trace": _refuse_private_peer(origin)}
        kept = {"keep_bytes": keep} if keep is not None else {}
        return client.request("GET", str(url), headers={"Accept": accept}, extensions=extensions, **kept)

    def _client(self, origin: str) -> PoliteClient:
        if origin not in self._clients:
            # no cookie is ever kept (a policy that accepts none), no credential from the environment (.netrc)
            jar = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
            client = httpx.Client(
                timeout=self.timeout,
                transport=self.transport,
                headers={"User-Agent": USER_AGENT},
                cookies=jar,
                follow_redirects=False,
                trust_env=False,
            )
            self._clients[origin] = PoliteClient(
                _name(origin),
                client,
                min_interval=self.interval,
                max_bytes=self.max_bytes,
                shared=self.shared,
                clock=self._clock,
                sleep=self._sleep,
            )
        return self._clients[origin]

    def _robots_for(self, origin: str, until: float) -> RobotFileParser:
        """The host's robots.txt rules, read once a day; ``HostSkipped`` while it could not be read."""
        now = self._clock()
        cached = self._robots.get(origin)
        if cached is None or cached[0] <= now:
            cached = self._read_robots(origin, until)
            self._robots[origin] = cached
        if cached[1] is None:
            raise HostSkipped(_name(origin), cached[2])
        return cached[1]

    def _read_robots(self, origin: str, until: float) -> tuple[float, RobotFileParser | None, str]:
        parser = RobotFileParser()
        client = self._client(origin)
        url = httpx.URL(origin + "/robots.txt")
        try:
            for _ in range(MAX_REDIRECTS + 1):  # a robots.txt that moved is followed, on the same host only
                response = self._get(origin, url, until, "text/plain", keep=ROBOTS_CHARS)
                if not (response.is_redirect and response.headers.get("Location")):
                    break
                moved = self.check_url(str(url.join(response.headers["Location"])))
                if origin_of(moved) != origin:
                    raise SourceError(client.name, "its robots.txt moves to another host")
                url = moved
            else:
                raise SourceError(client.name, "its robots.txt redirects too often")
        except NotFound:
            parser.parse([])  # no robots.txt: everything may be read
            return now_plus(self._clock, ROBOTS_SECONDS), parser, ""
        except (OutOfTime, Disallowed):  # the host is not one PaperPing reads (a private address): said as such
            raise
        except SourceError as exc:
            reason = f"its robots.txt could not be read ({exc.detail[:160]}); the host is skipped for now"
            log.info("full text: %s %s", client.name, reason)
            return now_plus(self._clock, client.round_seconds), None, reason
        parser.parse(response.content.decode("utf-8", "replace")[:ROBOTS_CHARS].splitlines())
        delay = parser.crawl_delay(AGENT)
        if delay is not None:
            client.min_interval = min(max(float(delay), self.interval), MOST_INTERVAL)
        return now_plus(self._clock, ROBOTS_SECONDS), parser, ""

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()


def now_plus(clock: Callable[[], float], seconds: float) -> float:
    return clock() + seconds


def _name(origin: str) -> str:
    """The pace's name of a host: ``fulltext:arxiv.org`` (its port too when it has one)."""
    return "fulltext:" + origin.split("://", 1)[-1]
