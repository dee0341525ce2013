"""Every request to an outside service has a total deadline, not only a per-read timeout: an answer that
trickles in a byte at a time is given up, and the source is skipped for the round, so that whatever comes
next (another channel's slot, the rest of a job) does not wait on it again."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from socialrag.errors import SourceError
from socialrag.knowledge.papers.http import PoliteClient, TooSlow
from socialrag.knowledge.papers.pubmed import PubMed
from socialrag.recommender.explain.llm import LLMClient
from socialrag.recommender.explain.prompts import load_prompt
from tests.support.tls import localhost_contexts
from tests.support.trickle import TrickleServer


@pytest.fixture
def trickle() -> Iterator[TrickleServer]:
    # a 200-byte answer, a byte every 0.2 s: 40 s in all, though no single read waits more than 0.2 s
    server = TrickleServer(json.dumps({"data": ["x" * 180]}).encode(), every=0.2).start()
    yield server
    server.stop()


def test_a_trickling_answer_is_given_up_at_the_deadline_and_the_source_is_skipped(trickle: TrickleServer) -> None:
    client = PoliteClient("pubmed", httpx.Client(base_url=trickle.url, timeout=1.0), min_interval=0)
    assert client.deadline == 3.0, "three times the per-read timeout"
    started = time.monotonic()
    with pytest.raises(TooSlow, match="not done within 3 s"):
        client.request("GET", "esearch.fcgi")
    assert time.monotonic() - started < 4.5
    # the next request, for this slot or the next channel's, does not wait on it again
    started = time.monotonic()
    with pytest.raises(SourceError, match="skipped for this round"):
        client.request("GET", "efetch.fcgi")
    assert time.monotonic() - started < 0.5
    assert trickle.requests == 1


@pytest.mark.parametrize("https", [False, True], ids=["http", "https"])
def test_headers_that_trickle_are_given_up_at_the_deadline_too(https: bool, tmp_path: Path) -> None:
    """Finding 12: a server that sends its headers a byte at a time (each read well inside the per-read timeout)
    is given up at the request's deadline, not held for as long as it trickles; over HTTPS too (every real
    source), where the connection's socket is the TLS one."""
    server_tls, client_tls = localhost_contexts(tmp_path) if https else (None, None)
    slow = TrickleServer(b"x" * 400, every=0.1, slow_headers=True, tls=server_tls).start()
    try:
        http = httpx.Client(base_url=slow.url, timeout=1.0, verify=client_tls if client_tls is not None else True)
        client = PoliteClient("pubmed", http, min_interval=0)
        started = time.monotonic()
        with pytest.raises(TooSlow, match="not done within 3 s"):
            client.request("GET", "esearch.fcgi")
        assert time.monotonic() - started < 4.5
    finally:
        slow.stop()


def test_an_answer_of_no_declared_length_cut_at_the_deadline_is_not_taken_for_a_whole_one() -> None:
    """The deadline shuts the connection; a body whose end is the connection's close must not then read as done."""
    slow = TrickleServer(json.dumps({"data": ["x" * 400]}).encode(), every=0.01, step=1, declared=False).start()
    try:
        client = PoliteClient("pubmed", httpx.Client(base_url=slow.url, timeout=1.0), min_interval=0, deadline=1.5)
        with pytest.raises(TooSlow):
            client.request("GET", "esearch.fcgi")
    finally:
        slow.stop()


def test_a_source_client_built_as_the_service_builds_it_has_the_deadline(trickle: TrickleServer) -> None:
    pubmed = PubMed(trickle.url, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(TooSlow):
        pubmed.fetch_papers([{"pmid": "19029340"}])
    assert time.monotonic() - started < 3.0


def test_waits_the_service_asks_for_are_not_taken_past_the_deadline() -> None:
    slept: list[float] = []

    def busy(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, headers={"Retry-After": "30"})

    client = PoliteClient(
        "openalex",
        httpx.Client(base_url="https://oa.test/", transport=httpx.MockTransport(busy), timeout=5.0),
        min_interval=0,
        sleep=slept.append,
    )
    with pytest.raises(SourceError, match="HTTP 503 after 1 tries"):
        client.request("GET", "works")
    assert slept == [], "a 30 s wait does not fit in a 15 s deadline: the source is given up at once"


def test_the_llm_is_given_up_when_its_answer_trickles() -> None:
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * 60}}]}
    server = TrickleServer(json.dumps(answer).encode(), every=0.1).start()
    try:
        llm = LLMClient(model="m", base_url=server.url + "v1", api_key="k", timeout=1.0)
        started = time.monotonic()
        with pytest.raises(SourceError, match="llm"):
            llm.complete(load_prompt("paper"), "hello")
        assert time.monotonic() - started < 5.0, "two tries of 1 s each, not the 10 s the answer takes"
    finally:
        server.stop()
