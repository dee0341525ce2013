"""The time a paper's reading may take (``FullTextReader.paper_seconds``: 90 s in the background job, 30 s before a
post) holds for all of it: the look-ups at the bioRxiv API and OpenAlex (each client has a longer deadline of its
own), and the reading of the file fetched. A look-up cut short by the paper's time leaves the paper for later and
never holds the service back for the other papers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from socialrag.knowledge.fulltext import FullTextError, TimeUp, parse_fulltext
from socialrag.knowledge.fulltext import pdf as pdf_reader
from socialrag.knowledge.papers import fulltext_source
from socialrag.knowledge.papers.biorxiv import BiorxivApi
from socialrag.knowledge.papers.fulltext_source import FullTextReader, Location, read_fetched
from socialrag.knowledge.papers.openalex import OpenAlex
from socialrag.knowledge.papers.web_hosts import Fetched, WebHosts
from tests.support.fulltext_hosts import Answer, HostStandIn
from tests.support.pdfs import text_pdf
from tests.unit.test_fulltext_hosts import HOSTS, PAGE_LINES

PREPRINT = "10.1101/2020.01.01.123456"
DETAILS = f"/details/biorxiv/{PREPRINT}/na/json"
# an answer that takes about five seconds: 80 KB of JSON, 4 KB every quarter of a second
SLOW = Answer(200, b"{" + b" " * 80_000 + b"}", "application/json", trickle=0.25)


class _AnyQuery(dict[str, list[Answer]]):
    """Routes of a stand-in that answer a path whatever its query (OpenAlex's ``/works?filter=...``)."""

    def get(self, path: str, default: list[Answer] | None = None) -> list[Answer] | None:  # type: ignore[override]
        return super().get(path.split("?", 1)[0], default)


@contextmanager
def metadata_api() -> Iterator[tuple[HostStandIn, FullTextReader]]:
    """A reader whose bioRxiv API and OpenAlex are one stand-in on a real loopback socket (a slow answer there is
    slow as on the internet), with the clients' own deadlines as ``paperping run`` builds them (60 s)."""
    api = HostStandIn(robots=None)
    api.routes = _AnyQuery()
    api.start()
    bio = BiorxivApi(api.url, min_interval=0)
    oa = OpenAlex(api.url, min_interval=0)
    web = WebHosts(HOSTS.all(), transport=httpx.MockTransport(lambda r: httpx.Response(404)), interval=0)
    reader = FullTextReader(HOSTS, web, biorxiv=bio, openalex=oa, paper_seconds=1.0)
    try:
        yield api, reader
    finally:
        reader.close()
        api.stop()


@pytest.mark.parametrize(
    ("ids", "path"), [({"doi": PREPRINT}, DETAILS), ({"doi": "10.1234/x"}, "/works")], ids=["bioRxiv", "OpenAlex"]
)
def test_a_slow_metadata_look_up_is_cut_at_the_papers_time_and_the_service_is_not_skipped(
    ids: dict[str, str], path: str
) -> None:
    with metadata_api() as (api, reader):
        api.routes[path] = [SLOW]
        started = time.monotonic()
        got = reader.read(ids)
        took = time.monotonic() - started
        assert got.status == "later", got.note
        assert took < 2.5, f"the paper's 1 s holds, not the client's 60 s: {took:.1f} s"
        # the paper's time ran out, not the service's: the next paper still asks it
        api.routes[path] = [Answer(200, b'{"collection": [], "results": []}', "application/json")]
        again = reader.read(ids)
        assert api.asked(path) == 2 and "skipped" not in (again.note or ""), again.note


def test_a_file_fetched_as_the_papers_time_runs_out_is_left_for_later_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]

    def fetch(url: str, until: float, accept: str = "*/*") -> Fetched:
        now[0] = until + 0.1  # the last byte came after the paper's time
        return Fetched(url, "application/pdf", text_pdf([PAGE_LINES[0]]))

    def never(*args: object) -> None:
        raise AssertionError("parsed with no time left")

    reader = FullTextReader(HOSTS, WebHosts(HOSTS.all()), paper_seconds=30.0, clock=lambda: now[0])
    monkeypatch.setattr(reader.web, "fetch", fetch)
    monkeypatch.setattr(fulltext_source, "parse_fulltext", never)
    got = reader.read({"acl": "2020.acl-main.1"})
    assert got.status == "later" and "the ACL Anthology: the time for this paper was spent as its file came" in (
        got.note or ""
    ), got.note


def test_a_pdf_is_read_within_the_time_the_paper_has_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its extraction gets the paper's time left when that is shorter than its own 20 s: running out of the
    paper's time is later (read again another day), running out of its own is a file that cannot be read."""
    slow = text_pdf([["(words) and more words on a line that goes on " * 3] * 40] * 60)
    started = time.monotonic()
    with pytest.raises(TimeUp, match="time for this paper ran out"):
        parse_fulltext(slow, "pdf", seconds=0.05)
    assert time.monotonic() - started < 5
    got = read_fetched(
        Location("acl", "pdf", "https://acl.test/a.pdf"), Fetched("https://acl.test/a.pdf", "", slow), 0.05
    )
    assert got.status == "later" and "ACL Anthology: the time for this paper ran out" in got.note, got.note
    monkeypatch.setattr(pdf_reader, "PDF_SECONDS", 0.05)
    with pytest.raises(FullTextError, match="took more than") as raised:
        parse_fulltext(slow, "pdf", seconds=30.0)
    assert not isinstance(raised.value, TimeUp)


def test_a_source_unreachable_within_the_time_given_is_not_skipped_for_the_round() -> None:
    """A failed connection with no time left to try again is the caller's time running out (``OutOfTime``); the
    source is skipped for the round only when its own tries or its own deadline are spent."""
    from socialrag.errors import SourceError
    from socialrag.knowledge.papers.http import OutOfTime, PoliteClient

    tried: list[str] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        tried.append(str(request.url))
        raise httpx.ConnectError("refused", request=request)

    client = PoliteClient("t", httpx.Client(base_url="https://api.test/", transport=httpx.MockTransport(refuse)),
                          min_interval=0, sleep=lambda s: None)  # fmt: skip
    with pytest.raises(OutOfTime):
        client.request("GET", "a", until=time.monotonic() + 0.5)
    with pytest.raises(OutOfTime, match="no time was left"):
        client.request("GET", "a", until=time.monotonic() - 1)
    assert len(tried) == 1, "nothing is sent with no time left"
    with pytest.raises(SourceError, match="request failed") as raised:
        client.request("GET", "a")  # not skipped: asked again, and this time its four tries are spent
    assert not isinstance(raised.value, OutOfTime) and len(tried) == 5
    with pytest.raises(SourceError, match="skipped for this round"):
        client.request("GET", "a")
