"""The outside services' client refuses what an identifier written by others could make it do: climb out of the
API with ``..``, or read an answer without bound."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from socialrag.errors import SourceError
from socialrag.knowledge.papers.arxiv import ArxivApi
from socialrag.knowledge.papers.crossref import Crossref, is_doi
from socialrag.knowledge.papers.http import PoliteClient
from socialrag.knowledge.papers.semanticscholar import SemanticScholar


def _recording(seen: list[str], body: bytes = b'{"message": {}}') -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return httpx.Response(200, content=body, headers={"Content-Type": "application/json"})

    return httpx.MockTransport(handle)


@pytest.mark.parametrize(
    "doi", ["10.1234/../../../members/311", "10.1234/./x", "10.1234/a?rows=1000", "10.1234/a#b", "11.1/x", "10.1/"]
)
def test_crossref_never_asks_a_path_an_identifier_climbs_to(doi: str) -> None:
    seen: list[str] = []
    crossref = Crossref("https://crossref.test/", transport=_recording(seen), sleep=lambda s: None)
    assert crossref.fetch_papers([{"doi": doi}]) == [None]
    assert seen == [], "no request left for an identifier that is not a plain DOI"
    assert not is_doi(doi)


def test_a_plain_doi_is_asked_for() -> None:
    seen: list[str] = []
    crossref = Crossref("https://crossref.test/", transport=_recording(seen), sleep=lambda s: None)
    crossref.fetch_papers([{"doi": "10.18653/v1/N19-1423"}])
    assert seen == ["/works/10.18653/v1/N19-1423"]


@pytest.mark.parametrize("path", ["paper/DOI:10.1/../../x", "paper/%2e%2e/graph/v1/x", "works/10.1/%2E%2E"])
def test_the_client_refuses_dot_segments(path: str) -> None:
    seen: list[str] = []
    client = PoliteClient("s2", httpx.Client(base_url="https://s2.test/", transport=_recording(seen)), min_interval=0)
    with pytest.raises(SourceError, match="climbs out of the API"):
        client.request("GET", path)
    assert seen == []


def test_an_answer_is_read_up_to_a_cap() -> None:
    def endless() -> Iterator[bytes]:
        for _ in range(10_000):
            yield b"x" * 1_000

    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=endless())  # streamed, no Content-Length

    client = PoliteClient(
        "s2",
        httpx.Client(base_url="https://s2.test/", transport=httpx.MockTransport(handle)),
        min_interval=0,
        max_bytes=50_000,
    )
    with pytest.raises(SourceError, match=r"more than 0\.05 MB"):
        client.request("GET", "paper/x")

    def declared(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"{}", headers={"Content-Length": "900000000"})

    big = PoliteClient(
        "s2", httpx.Client(base_url="https://s2.test/", transport=httpx.MockTransport(declared)), min_interval=0
    )
    with pytest.raises(SourceError, match="answered 900 MB"):
        big.request("GET", "paper/x")


def test_every_api_client_has_the_cap() -> None:
    for client in (
        SemanticScholar("https://s2.test/"),
        ArxivApi("https://arxiv.test/"),
        Crossref("https://crossref.test/"),
    ):
        assert 0 < client.http.max_bytes <= 32_000_000
        client.close()
