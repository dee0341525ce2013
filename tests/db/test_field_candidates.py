"""The candidate sources of every field against their stand-ins: new preprints in the categories of the
preprints a channel shared (asked of the server when another source described them first), and PubMed's newest
for the words of the channel's papers."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge.papers.biorxiv import BiorxivApi
from socialrag.knowledge.papers.pubmed import PubMed
from socialrag.models import Paper
from socialrag.recommender.retrieve.candidates import CandidateQuery, SearchCache
from socialrag.recommender.retrieve.context import ChannelContext, SharedPaper
from socialrag.recommender.retrieve.field_sources import FieldTerms, PreprintServer, PubMedRecent
from socialrag.rows import PaperInfo, Share
from tests.support.bio_standin import BioStandIn

FAST = {"min_interval": 0.0, "max_wait": 0.5, "max_tries": 2}


@pytest.fixture
def bio() -> Iterator[BioStandIn]:
    standin = BioStandIn().start()
    yield standin
    standin.stop()


def channel(db: Database, papers: list[Paper]) -> CandidateQuery:
    """A channel that shared these papers (as Semantic Scholar described them: no category)."""
    now = datetime.now(UTC)
    with db.connection() as conn:
        ids = storage.papers.record_papers(conn, papers)
    shared = {
        pid: SharedPaper(PaperInfo(pid, p.title, None, None, 2026, ()), [Share(pid, "1.0", "U1", now, None, None)])
        for pid, p in zip(ids, papers, strict=True)
    }
    ctx = ChannelContext("T1", "C1", now, shared, {}, {}, {}, {})
    return CandidateQuery(ctx, dict.fromkeys(ids, 1.0), "all-MiniLM-L6-v2")


def test_new_preprints_in_the_category_of_what_was_shared(db: Database, bio: BioStandIn) -> None:
    preprint = Paper({"doi": "10.1101/2026.07.21.605432", "s2": "f" * 40}, "semanticscholar", title="MDVs")
    unknown = Paper({"doi": "10.1101/2026.01.01.000001"}, "semanticscholar", title="A preprint no server has")
    query = channel(db, [preprint, unknown])
    source = PreprintServer(BiorxivApi(bio.url + "biorxiv/", **FAST), "biorxiv", FieldTerms(), cache=SearchCache())
    with db.connection() as conn:
        assert source.categories(conn, query) == ["cell_biology"], "asked of bioRxiv, kept with the paper"
        found = source.fetch_candidates(conn, query)
        titles = {r[0] for r in conn.execute("SELECT title FROM papers WHERE id = ANY(%s)", (found,))}
    assert "TOM7 is required for PINK1 accumulation on depolarized mitochondria in human iPSC-derived neurons" in titles
    assert not any("Arabidopsis" in t for t in titles)
    asked = len(bio.asked("/biorxiv/details/"))
    with db.connection() as conn:
        assert source.fetch_candidates(conn, query) == found, "once a day a category, for the whole process"
    assert len(bio.asked("/biorxiv/details/")) == asked, "and the unknown preprint is not asked about again"


def test_pubmed_newest_for_the_words_of_the_channels_papers(db: Database, bio: BioStandIn) -> None:
    shared = [
        Paper({"pmid": "19029340"}, "pubmed", title="Parkin is recruited selectively to impaired mitochondria"),
        Paper({"pmid": "20126261"}, "pubmed", title="PINK1 is selectively stabilized on impaired mitochondria"),
    ]
    query = channel(db, shared)
    source = PubMedRecent(PubMed(bio.url + "pubmed/", **FAST), FieldTerms(chosen=True))
    with db.connection() as conn:
        found = source.fetch_candidates(conn, query)
        titles = {r[0] for r in conn.execute("SELECT title FROM papers WHERE id = ANY(%s)", (found,))}
    assert any("phospho-ubiquitin" in t for t in titles), titles
    (term,) = {q["term"][0] for q in bio.asked("/pubmed/esearch.fcgi")}
    assert "[tiab]" in term and "mitochondria" in term
