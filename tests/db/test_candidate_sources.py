"""Semantic Scholar recommendations and new arXiv submissions as candidate sources (mocked transport,
real response shapes), with exclusion of papers the channel already has under another identity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge.papers.arxiv import ArxivApi
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.models import Paper
from socialrag.recommender.rank.engagement import ScoringConfig, channel_weights
from socialrag.recommender.retrieve.candidates import ArxivNew, CandidateQuery, SemanticScholarRecommendations
from socialrag.recommender.retrieve.context import load_channel_context
from socialrag.recommender.serve.pipeline import ChannelRequest, RecommendConfig, recommend
from tests.support.labbase import AS_OF, SHARED, CachedEmbedder, build_lab

pytestmark = pytest.mark.slow
MODEL = "all-MiniLM-L6-v2"
S2_WEIGHT = "0" * 39 + "1"

RECS = {
    "recommendedPapers": [
        {
            "paperId": "a" * 40,
            "externalIds": {"ArXiv": "2101.00001", "CorpusId": 1},
            "title": "Backdoor Defenses for NLP",
            "abstract": "We defend pretrained language models against poisoned weights.",
            "venue": "arXiv.org",
            "year": 2021,
            "publicationDate": "2021-01-05",
            "citationCount": 3,
            "authors": [{"name": "Ana Lopez"}],
        },
        {
            "paperId": "b" * 40,
            "externalIds": {"ACL": SHARED["tabert"]},
            "title": "TaBERT (already shared)",
            "abstract": "Tables.",
            "year": 2020,
            "authors": [],
        },
    ]
}
ATOM = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <entry><id>http://arxiv.org/abs/2101.00777v1</id><published>2021-01-10T10:00:00Z</published>
    <title>Attention Explanations Revisited</title><summary>We revisit attention-based explanations.</summary>
    <author><name>Chen Wu</name></author><category term="cs.CL"/></entry>
</feed>"""


@pytest.fixture
def lab(db: Database, tmp_path: Path) -> dict[str, Any]:
    lab = build_lab(db, tmp_path, CachedEmbedder())
    with db.connection() as conn:  # the shared papers' Semantic Scholar ids and arXiv categories
        storage.papers.record_papers(
            conn,
            [
                Paper(
                    ids={"acl": SHARED["weight"], "s2": S2_WEIGHT},
                    source="semanticscholar",
                    arxiv_categories=("cs.CL", "cs.LG"),
                )
            ],
        )
    return lab


def query(db: Database) -> tuple[Any, CandidateQuery]:
    conn = db.connect()
    ctx = load_channel_context(conn, "T0LAB", "C1", AS_OF, MODEL)
    return conn, CandidateQuery(ctx, channel_weights(ctx.papers, AS_OF, ScoringConfig(), ctx.emoji_overrides), MODEL)


def test_semantic_scholar_recommendations(db: Database, lab: dict[str, Any]) -> None:
    asked: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request)
        return httpx.Response(200, json=RECS)

    client = SemanticScholar("https://s2.test/", transport=httpx.MockTransport(handler), min_interval=0.0)
    embedder = CachedEmbedder()
    source = SemanticScholarRecommendations(client, embed=lambda conn, ids: _embed(conn, embedder, ids))
    conn, q = query(db)
    try:
        ids = source.fetch_candidates(conn, q)
        rec = recommend(conn, ChannelRequest("T0LAB", "C1", AS_OF, [source], RecommendConfig(model=MODEL)))
        conn.commit()
    finally:
        conn.close()
    post = json.loads(asked[0].content)
    assert post["positivePaperIds"] == [S2_WEIGHT] and post["negativePaperIds"] == []
    assert asked[1].url.path.endswith(f"/forpaper/{S2_WEIGHT}") and asked[1].url.params["from"] == "recent"
    assert len(ids) == 2
    assert [c.title for c in rec.candidates] == ["Backdoor Defenses for NLP"], "TaBERT was shared as an ACL link"


def test_arxiv_new_submissions_in_the_channel_categories(db: Database, lab: dict[str, Any]) -> None:
    asked: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request)
        return httpx.Response(200, text=ATOM)

    api = ArxivApi("https://arxiv.test/api/", transport=httpx.MockTransport(handler), min_interval=0.0)
    embedder = CachedEmbedder()
    source = ArxivNew(api, embed=lambda conn, ids: _embed(conn, embedder, ids))
    conn, q = query(db)
    try:
        ids = source.fetch_candidates(conn, q)
        cats = conn.execute("SELECT arxiv_categories FROM papers WHERE id = %s", (ids[0],)).fetchone()
        conn.commit()
    finally:
        conn.close()
    assert asked[0].url.params["search_query"] == "cat:cs.CL OR cat:cs.LG"
    assert asked[0].url.params["sortBy"] == "submittedDate"
    assert len(ids) == 1 and cats == (["cs.CL"],)


def _embed(conn: Any, embedder: CachedEmbedder, ids: list[int]) -> int:
    from socialrag.knowledge.embed import embed_papers

    done = embed_papers(conn, embedder, ids)
    assert isinstance(embedder.encode(["x"]), np.ndarray)
    return done


def test_online_searches_for_papers_on_demand_are_cached_and_shared(db: Database, lab: dict[str, Any]) -> None:
    """`like` and the shortcut searched Semantic Scholar every time, with no cache. The same words now ask once in a
    few hours, whichever member or channel asks; other words ask again, and an old result is asked anew."""
    from dataclasses import replace
    from datetime import timedelta

    from socialrag.recommender.retrieve.candidates import FocusSearch, SearchCache

    asked: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request)
        return httpx.Response(200, json={"data": RECS["recommendedPapers"]})

    client = SemanticScholar("https://s2.test/", transport=httpx.MockTransport(handler), min_interval=0.0)
    cache = SearchCache(ttl=timedelta(hours=3))
    search = FocusSearch(client, None, cache=cache)
    conn, q = query(db)
    try:
        first = search.fetch_candidates(conn, replace(q, focus_words="backdoor defenses"))
        again = FocusSearch(client, None, cache=cache).fetch_candidates(
            conn, replace(q, focus_words="backdoor defenses")
        )
        assert first == again and len(first) == 2 and len(asked) == 1, "the same words asked once"
        search.fetch_candidates(conn, replace(q, focus_words="table parsing"))
        assert len(asked) == 2, "other words are their own search"
        stale = SearchCache(ttl=timedelta(seconds=0))
        FocusSearch(client, None, cache=stale).fetch_candidates(conn, replace(q, focus_words="backdoor defenses"))
        FocusSearch(client, None, cache=stale).fetch_candidates(conn, replace(q, focus_words="backdoor defenses"))
        assert len(asked) == 4, "an expired result is asked anew"
    finally:
        conn.close()
    small = SearchCache(size=2)
    for k in range(3):
        small.put(f"k{k}", [k])
    assert small.get("k0") is None and small.get("k2") == [2], "at most `size` searches, the oldest going first"
