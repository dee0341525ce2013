"""A polite HTTP client for metadata services: a minimum interval between calls, and backoff on 429/5xx.

Transport failures and exhausted retries become ``SourceError``; the caller decides what to keep.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
import zlib
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any, Protocol
from urllib.parse import unquote

import httpx

from socialrag.errors import NotFound, RateLimited, SourceError

log = logging.getLogger(__name__)

# A whole request (its tries, the waits between them and the body) gets this many times the per-read timeout
# (``PAPERPING_HTTP_TIMEOUT``): 60 s by default. A source that misses it is skipped for ``ROUND_READS`` times
# the timeout (5 minutes by default, the round), so that the slots and jobs after it (other channels' included)
# do not wait on it again.
DEADLINE_READS = 3.0
ROUND_READS = 15.0


class Queued(SourceError):
    """The source's next turn comes after the request's deadline (a long ``Retry-After``, many callers): the request
    was not sent. Not the source failing: it does not count toward holding the source."""


class TooSlow(SourceError):
    """A source did not finish answering within the request's deadline; it is skipped for the round."""


class OutOfTime(SourceError):
    """The time the caller gave the request (``until``: what is left of a paper's time) was spent before it was
    answered, or before it could be sent. The caller's limit, not the source failing: it is not skipped."""


class TooLarge(SourceError):
    """The answer is larger than the client reads (``max_bytes``); the rest was not read."""


class Refused(SourceError):
    """A 4xx answer other than 404 and 429 (401 and 403: the thing asked for is behind a login)."""

    def __init__(self, source: str, status: int, message: str) -> None:
        super().__init__(source, message)
        self.status = status


class _Watchdog:
    """Ends a request whose answer is not done by its deadline, headers included: httpx's timeouts are per read,
    and a server that sends its headers a byte at a time would hold the request for as long as it trickles. The
    request's connection is captured as it opens (httpcore's ``trace``; the request asks the server to close it
    after answering, so that every request opens its own) and shut when the time is up."""

    def __init__(self, seconds: float, then: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        self.fired = False
        self._then = then  # the caller's own trace (``WebHosts`` checks the address each connection reached)
        self._sock: socket.socket | None = None
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if self._then is not None:
            self._then(event, info)
        # the TCP socket as it opens, then the TLS one that takes its place (the TCP one is detached from its
        # file then, and shutting it would do nothing)
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                self._sock = sock

    def _fire(self) -> None:
        self.fired = True
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)  # the blocked read returns at once

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


# The content codings PaperPing asks for and reads, each bounded as it is decoded; another one, or one coding on top
# of another (a body gzipped twice is a few KB that inflates without end), is refused.
ACCEPT_ENCODING = "gzip, deflate"
_BODY_HEADERS = ("content-encoding", "content-length")


class Undecodable(SourceError):
    """The answer's body is in a content coding PaperPing does not read, or is not what its coding says."""


class _Inflater:
    """A gzip or deflate body decoded a chunk at a time, never more than it is asked for (``max_length``)."""

    def __init__(self, source: str, coding: str) -> None:
        self.source, self.coding = source, coding
        self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS if coding in ("gzip", "x-gzip") else zlib.MAX_WBITS)
        self._first = True

    def decompress(self, chunk: bytes, most: int) -> bytes:
        try:
            try:
                out = self._zlib.decompress(chunk, most)
            except zlib.error:
                if not (self._first and self.coding == "deflate"):
                    raise
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)  # a raw deflate stream, as some servers send
                out = self._zlib.decompress(chunk, most)
        except zlib.error as exc:
            raise Undecodable(self.source, f"answered a body that is not {self.coding} ({exc})") from None
        self._first = False
        return out  # ``most`` bytes when there was more: the caller's cap is passed then


def _decoder(source: str, header: str) -> _Inflater | None:
    codings = [c.strip().lower() for c in header.split(",") if c.strip() and c.strip().lower() != "identity"]
    if not codings:
        return None
    if len(codings) > 1 or codings[0] not in ("gzip", "x-gzip", "deflate"):
        raise Undecodable(source, f"answered in a content coding that is not read ({header[:60]!r})")
    return _Inflater(source, codings[0])


def parse_retry_after(value: str | None, default: float) -> float:
    """Seconds to wait from a ``Retry-After`` header (a number of seconds or an HTTP date)."""
    if not value:
        return default
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    return max(0.0, when.timestamp() - time.time())


# The largest answer PaperPing reads from an outside service (a batch of 500 papers with their references is
# a few MB); anything larger is refused rather than held in memory.
MAX_RESPONSE_BYTES = 32_000_000


def check_path(service: str, url: str) -> None:
    """Refuse a request path with a ``.`` or ``..`` segment (plain or percent-encoded): an identifier written by
    others must not move the request elsewhere on the service (``doi:10.1234/../../members/311``)."""
    path = url.split("?", 1)[0].split("#", 1)[0]
    for segment in path.split("/"):
        if unquote(segment).strip() in (".", ".."):
            raise SourceError(service, f"refused a request path that climbs out of the API: {path[:120]!r}")


class SharedPace(Protocol):
    """A pace kept for all processes at once (``knowledge.shared_pace.DatabasePace``): turns at least ``interval``
    seconds apart, and a hold when the service asks everyone to wait."""

    def reserve(self, source: str, interval: float, within: float | None = None) -> float: ...

    def hold_off(self, source: str, seconds: float) -> None: ...

    def held_for(self, source: str) -> float: ...

    def skip(self, source: str, seconds: float, reason: str) -> None: ...


class PoliteClient:
    """Wraps an ``httpx.Client`` with the service's published pace and retries. With ``shared``, the pace is
    kept across every process that uses the same database, and a ``Retry-After`` holds them all."""

    def __init__(
        self,
        name: str,
        client: httpx.Client,
        *,
        min_interval: float,
        max_tries: int = 4,
        max_wait: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        shared: SharedPace | None = None,
        max_bytes: int = MAX_RESPONSE_BYTES,
        deadline: float | None = None,
    ) -> None:
        self.name = name
        per_read = client.timeout.read
        self.deadline = deadline if deadline is not None else DEADLINE_READS * (per_read or 20.0)
        self.round_seconds = ROUND_READS * (per_read or 20.0)
        self._skipped_until = -1e9
        self.max_bytes = max_bytes
        self.client = client
        self.min_interval = min_interval
        self.max_tries = max_tries
        self.max_wait = max_wait
        self._sleep = sleep
        self._clock = clock
        self._last = -1e9
        self.shared = shared

    def _pace(self, ends: float) -> None:
        left = self._left(ends)
        if self.shared is not None:  # a turn past this request's deadline is not taken: nobody waits for it
            wait = self.shared.reserve(self.name, self.min_interval, within=max(left, 0.0))
        else:
            wait = self._last + self.min_interval - self._clock()
        if wait > left:  # the turn comes after this request's deadline: not the source's fault
            raise Queued(self.name, f"too many requests queued for it; the next turn is {wait:.0f} s away")
        if wait > 0:
            self._sleep(wait)
        if self.shared is None:
            self._last = self._clock()

    def _left(self, ends: float) -> float:
        return ends - self._clock()

    def _check_round(self) -> None:
        """Refuse at once while the source is skipped for the round (by this process or, through the shared
        pace, by any other)."""
        held = max(self._skipped_until - self._clock(), self.shared.held_for(self.name) if self.shared else 0.0)
        if held > 0:
            raise SourceError(self.name, f"skipped for this round (too slow or failing); tried again in {held:.0f} s")

    def _skip_round(self, reason: str) -> None:
        log.warning("%s skipped for %.0f s: %s", self.name, self.round_seconds, reason)
        self._skipped_until = self._clock() + self.round_seconds
        if self.shared is not None:
            self.shared.skip(self.name, self.round_seconds, reason)

    def request(self, method: str, url: str, *, until: float | None = None, **kwargs: Any) -> httpx.Response:
        """Send one request, waiting and retrying as the service asks; 404 raises ``NotFound``. A path that
        climbs out of the API (``..``) is refused before it is sent, and a body over ``max_bytes`` is not read
        further (``SourceError``); with ``keep_bytes=N``, the first N bytes are kept and the rest is not read (a
        robots.txt, read as far as search engines read it). The whole of it, tries and waits included, has
        ``deadline`` seconds: a source that misses it (``TooSlow``) or cannot be reached is skipped for the
        round. With ``until`` (this client's clock), it has no longer than that either: a request that runs into
        it is ``OutOfTime``, and the source is not skipped for it."""
        check_path(self.name, url)
        self._check_round()
        started = self._clock()
        ends = started + self.deadline
        if until is not None and until < ends:
            if until <= started:
                raise OutOfTime(self.name, "no time was left to ask it")
            ends = until
        try:
            return self._request(method, url, started, ends, **kwargs)
        except TooSlow as exc:
            if ends < started + self.deadline:  # the caller's time ran out first: said as such
                raise OutOfTime(self.name, f"not answered in the {ends - started:.0f} s it was given") from None
            self._skip_round(str(exc))
            raise

    def _request(self, method: str, url: str, started: float, ends: float, **kwargs: Any) -> httpx.Response:
        backoff = max(self.min_interval, 1.0)
        for attempt in range(1, self.max_tries + 1):
            self._pace(ends)
            try:
                response = self._send(method, url, ends, **kwargs)
            except httpx.HTTPError as exc:
                if attempt == self.max_tries or backoff > self._left(started + self.deadline):
                    self._skip_round(f"unreachable: {exc}")
                    raise SourceError(self.name, f"request failed: {exc}") from exc
                if backoff > self._left(ends):  # another try would outlast the caller's time, not the source's
                    raise OutOfTime(self.name, f"request failed and no time was left to try again: {exc}") from exc
                self._sleep(backoff)
                backoff *= 2
                continue
            if response.status_code == 404:
                raise NotFound(self.name, f"not found: {url}")
            if response.status_code == 429 or response.status_code >= 500:
                wait = parse_retry_after(response.headers.get("Retry-After"), backoff)
                log.info("%s answered %s; waiting %.1fs", self.name, response.status_code, wait)
                if self.shared is not None and response.status_code == 429:
                    self.shared.hold_off(self.name, min(wait, self.max_wait))
                if attempt == self.max_tries or wait > min(self.max_wait, self._left(ends)):
                    error = RateLimited if response.status_code == 429 else SourceError
                    raise error(self.name, f"HTTP {response.status_code} after {attempt} tries", retry_after=wait)
                self._sleep(wait)
                backoff *= 2
                continue
            if response.status_code >= 400:
                raise Refused(self.name, response.status_code, f"HTTP {response.status_code}: {response.text[:200]}")
            return response
        raise SourceError(self.name, "no response")  # pragma: no cover - the loop always returns or raises

    def _send(self, method: str, url: str, ends: float, **kwargs: Any) -> httpx.Response:
        """The response with its body read, up to ``max_bytes`` and until the request's deadline (``ends``)."""
        left = self._left(ends)
        if left <= 0:
            raise TooSlow(self.name, f"no answer within {self.deadline:g} s")
        per_read = self.client.timeout.read or left
        keep = kwargs.pop("keep_bytes", None)
        kwargs.setdefault(
            "timeout", httpx.Timeout(min(per_read, left), connect=min(self.client.timeout.connect or left, left))
        )
        extensions = dict(kwargs.get("extensions") or {})
        watchdog = _Watchdog(left, extensions.get("trace"))
        kwargs["extensions"] = {**extensions, "trace": watchdog.trace}
        kwargs["headers"] = {
            **dict(kwargs.get("headers") or {}),
            "Connection": "close",
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        try:
            with watchdog, self.client.stream(method, url, **kwargs) as streamed:
                response = self._read(streamed, ends, keep)
        except httpx.HTTPError:
            if watchdog.fired:
                raise TooSlow(self.name, f"answered too slowly: not done within {self.deadline:g} s") from None
            raise
        if watchdog.fired:  # an answer with no length, cut where the connection was shut: not an answer
            raise TooSlow(self.name, f"answered too slowly: not done within {self.deadline:g} s")
        return response

    def _read(self, streamed: httpx.Response, ends: float, keep: int | None = None) -> httpx.Response:
        declared = streamed.headers.get("Content-Length", "")
        most = min(keep, self.max_bytes) if keep is not None else self.max_bytes
        if keep is None and declared.isdigit() and int(declared) > self.max_bytes:
            raise TooLarge(self.name, f"answered {int(declared) // 1_000_000} MB; at most {self._cap} is read")
        decoder = _decoder(self.name, streamed.headers.get("Content-Encoding", ""))
        body = bytearray()
        raw = streamed.stream  # the body as sent (a stand-in's answer may have been decoded already: not used)
        assert isinstance(raw, httpx.SyncByteStream)
        for chunk in raw:
            # decoded no further than the cap: a small compressed answer may stand for gigabytes
            body += decoder.decompress(chunk, most - len(body) + 1) if decoder else chunk
            if keep is not None and len(body) >= most:  # what is kept is read; the rest is left unread
                del body[most:]
                break
            if len(body) > self.max_bytes:
                raise TooLarge(self.name, f"answered more than {self._cap}; the rest was not read")
            if self._left(ends) <= 0:
                raise TooSlow(self.name, f"answered too slowly: not done within {self.deadline:g} s")
        # the body is decoded here: its response must not say it is encoded (it would be decoded again)
        headers = [(k, v) for k, v in streamed.headers.multi_items() if k.lower() not in _BODY_HEADERS]
        return httpx.Response(streamed.status_code, headers=headers, content=bytes(body), request=streamed.request)

    @property
    def _cap(self) -> str:
        return f"{self.max_bytes / 1_000_000:g} MB"

    def request_json(self, method: str, url: str, **kwargs: Any) -> Any:
        """``request`` and its JSON body; a body that is not JSON (an HTML error page) raises ``SourceError``."""
        response = self.request(method, url, **kwargs)
        try:
            return response.json()
        except ValueError:
            kind = response.headers.get("Content-Type", "no content type")
            raise SourceError(self.name, f"answered something that is not JSON ({kind})") from None

    def close(self) -> None:
        self.client.close()


def contact_client(
    name: str,
    base_url: str,
    mailto: str | None,
    *,
    timeout: float,
    transport: httpx.BaseTransport | None,
    min_interval: float,
    **polite: Any,
) -> PoliteClient:
    """A ``PoliteClient`` whose User-Agent gives PaperPing's contact address, as Crossref's and OpenAlex's polite
    pools ask."""
    agent = "PaperPing/0.1" + (f" (mailto:{mailto})" if mailto else "")
    client = httpx.Client(base_url=base_url, timeout=timeout, transport=transport, headers={"User-Agent": agent})
    return PoliteClient(name, client, min_interval=min_interval, **polite)
