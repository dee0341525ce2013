"""A total deadline for one HTTP request, body included, for the clients built on ``httpx2`` (the openai and
pyzotero packages): their own timeouts are per read, and an answer that trickles in a byte at a time would hold
them for as long as it trickles."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx2


class _DeadlineStream(httpx2.SyncByteStream):
    def __init__(
        self,
        inner: httpx2.SyncByteStream,
        until: float,
        seconds: float,
        clock: Callable[[], float],
        most_bytes: int | None = None,
    ) -> None:
        self.inner, self.until, self.seconds, self.clock = inner, until, seconds, clock
        self.most_bytes = most_bytes

    def __iter__(self) -> Iterator[bytes]:
        read = 0
        for chunk in self.inner:
            if self.clock() > self.until:
                raise httpx2.ReadTimeout(f"the answer was not done within {self.seconds:g} s")
            read += len(chunk)
            if self.most_bytes is not None and read > self.most_bytes:
                raise httpx2.ReadError(f"the answer is over {self.most_bytes} bytes")
            yield chunk

    def close(self) -> None:
        self.inner.close()


class DeadlineTransport(httpx2.BaseTransport):
    """A transport that gives each request ``seconds`` in all, body included (the LLM's and Zotero's clients), or
    the request's own read timeout when that is shorter; with ``most_bytes``, an answer longer than that is an
    error, found before more of it is read."""

    def __init__(
        self,
        seconds: float,
        inner: httpx2.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        most_bytes: int | None = None,
    ) -> None:
        self.seconds, self.clock, self.most_bytes = seconds, clock, most_bytes
        self.inner = inner if inner is not None else httpx2.HTTPTransport()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        asked = (request.extensions.get("timeout") or {}).get("read")  # a call's own, shorter timeout
        seconds = min(self.seconds, asked) if isinstance(asked, int | float) and asked > 0 else self.seconds
        until = self.clock() + seconds
        response = self.inner.handle_request(request)
        if not isinstance(response.stream, httpx2.SyncByteStream):  # pragma: no cover - sync transports stream so
            return response
        said = response.headers.get("content-length", "")
        if self.most_bytes is not None and said.isdigit() and int(said) > self.most_bytes:
            response.close()
            raise httpx2.ReadError(f"the answer is over {self.most_bytes} bytes")
        stream = _DeadlineStream(response.stream, until, seconds, self.clock, self.most_bytes)
        return httpx2.Response(
            response.status_code, headers=response.headers, stream=stream, extensions=response.extensions
        )

    def close(self) -> None:
        self.inner.close()
