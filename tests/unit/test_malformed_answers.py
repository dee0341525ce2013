"""A record with a field of an unexpected shape costs that record only: the rest of the answer is kept, and
nothing past what was asked for is read."""

from __future__ import annotations

from typing import Any

import httpx

from socialrag.knowledge.papers.openalex import OpenAlex
from socialrag.knowledge.papers.semanticscholar import SemanticScholar, s2_papers

GOOD = {"paperId": "abc", "title": "Dense passage retrieval", "externalIds": {"DOI": "10.1/x"}, "year": 2020}
MALFORMED: list[Any] = [
    {"paperId": "b1", "title": "Bad authors", "authors": 7},
    {"paperId": "b2", "title": "Bad names", "authors": [{"name": "A", "affiliations": 3}]},
    {"paperId": "b3", "title": "Bad venue", "publicationVenue": "x", "venue": ["y"], "tldr": [1]},
    {"paperId": 5, "title": ["not", "a", "title"], "externalIds": [1, 2]},
    "not a record",
    None,
]


def test_malformed_semantic_scholar_records_are_skipped_and_the_rest_kept() -> None:
    papers = s2_papers([*MALFORMED, GOOD], most=100)
    assert "Dense passage retrieval" in [p.title for p in papers]
    assert all(p.title is None or isinstance(p.title, str) for p in papers)
    assert len(s2_papers([GOOD] * 500, most=20)) == 20, "no more than asked for"


def test_an_author_list_with_malformed_papers_keeps_the_good_ones() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"data": [*MALFORMED, GOOD, *([GOOD] * 300)]})

    s2 = SemanticScholar("https://s2.test/", transport=httpx.MockTransport(answer), min_interval=0)
    papers = s2.fetch_author_papers("123", limit=10)
    assert 1 <= len(papers) <= 10


def test_a_malformed_openalex_work_costs_that_work_only() -> None:
    good = {"id": "https://openalex.org/W1", "title": "Mitophagy in neurons", "ids": {"doi": "https://doi.org/10.1/m"}}
    bad = {"id": "https://openalex.org/W2", "title": "Bad", "authorships": 9, "abstract_inverted_index": [1]}

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"results": [bad, good, {"title": 5, "ids": "x"}]})

    oa = OpenAlex("https://oa.test/", mailto=None, transport=httpx.MockTransport(answer), min_interval=0)
    titles = [p.title for p in oa.works({"search": "mitophagy", "per-page": 10})]
    assert "Mitophagy in neurons" in titles
