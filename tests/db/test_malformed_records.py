"""A malformed record costs only its own paper: in the index queue's batch lookups, where a value no source's
checks foresaw is refused by the database, and in the citations job, where one odd citing paper used to stop
the job for every channel, run after run."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge.embed import Embedder
from socialrag.knowledge.intake import index_messages
from socialrag.knowledge.links import find_paper_refs
from socialrag.knowledge.papers.resolve import record_citing_papers
from socialrag.knowledge.papers.semanticscholar import Citation, SemanticScholar
from socialrag.knowledge.queue_worker import Indexer, IndexerConfig
from socialrag.models import Channel, Message, Paper
from tests.support.scholar_standin import ScholarStandIn

T, C = "T0LAB", "C1"
GOOD, ODD = "2401.00002", "2401.00001"


class DigestEmbedder(Embedder):
    """Unit vectors drawn from each text's digest: the indexer's whole path without loading the model."""

    def __init__(self) -> None:
        super().__init__("all-MiniLM-L6-v2")

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        seeds = [int(hashlib.sha1(t.encode()).hexdigest()[:8], 16) for t in texts]
        rows = [np.random.default_rng(s).normal(size=384) for s in seeds]
        return np.asarray([r / np.linalg.norm(r) for r in rows], dtype=np.float32)


class AnsweringSource:
    """A metadata source whose answer for the odd arXiv id carries ``odd`` as it is, past any parser's checks."""

    name = "semanticscholar"

    def __init__(self, odd: dict[str, Any]) -> None:
        self.odd = odd

    def can_fetch(self, ids: dict[str, str]) -> bool:
        return "arxiv" in ids

    def fetch_papers(self, requests: Sequence[dict[str, str]]) -> list[Paper | None]:
        papers = [Paper(ids={"arxiv": r["arxiv"]}, source=self.name, title=f"Paper {r['arxiv']}") for r in requests]
        return [replace(p, **self.odd) if p.ids["arxiv"] == ODD else p for p in papers]

    def close(self) -> None:
        pass


def share_links(db: Database, text: str) -> None:
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T, domain="lab")
        storage.workspaces.upsert_channel(conn, Channel(T, C, "lab"))
        posted = datetime.now(UTC) - timedelta(days=1)
        message = Message(T, C, "1.0", "U2", text, posted_at=posted, papers=find_paper_refs(text))
        index_messages(conn, [message])


def stored(db: Database, scheme: str) -> dict[str, tuple[Any, ...]]:
    """(title, year, author names) of each stored paper, by its identity of ``scheme``."""
    with db.connection() as conn:
        rows = conn.execute(
            """
            SELECT i.value, p.title, p.year,
                   ARRAY(SELECT a.name FROM paper_authors pa JOIN authors a ON a.id = pa.author_id
                          WHERE pa.paper_id = p.id ORDER BY pa.position)
              FROM papers p JOIN paper_ids i ON i.paper_id = p.id AND i.scheme = %s
            """,
            (scheme,),
        ).fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


@pytest.mark.parametrize(
    "odd",
    [
        {"year": 0},
        {"year": 3_000_000_000},
        {"venue": "Proc.\x00"},
        {"title": "Cut \ud83d in two"},
    ],  # an author's NUL byte or runaway name is cleaned and cut before it is stored: tests/db/test_author_names.py
    ids=["year-0", "year-3e9", "nul-venue", "lone-surrogate"],
)
def test_a_record_the_database_refuses_costs_only_its_own_paper(db: Database, odd: dict[str, Any]) -> None:
    """Two papers in one batch; the database cannot keep one answer. The other is stored with its title and
    leaves the queue; the odd one spends its own try only, and its year stays unknown (never 0)."""
    share_links(db, f"arxiv:{ODD} arxiv:{GOOD}")
    indexer = Indexer(db, DigestEmbedder(), [AnsweringSource(odd)], IndexerConfig(max_attempts=1))
    done = indexer.run_batch()
    assert done is not None and done.claimed == 2 and done.looked_up == 1 and done.not_found == 1
    papers = stored(db, "arxiv")
    assert papers[GOOD][:2] == (f"Paper {GOOD}", None) and papers[ODD][:2] == (None, None)
    with db.connection() as conn:
        queued = conn.execute(
            "SELECT i.value, q.attempts, q.given_up_at IS NOT NULL FROM index_queue q "
            "JOIN paper_ids i ON i.paper_id = q.paper_id"
        ).fetchall()
    assert queued == [(ODD, 1, True)], "the good paper left the queue; only the odd one is given up"


def test_values_semantic_scholar_should_not_send_are_stored_cleaned_or_unknown(db: Database) -> None:
    """The real client and parser against a stand-in answering years no publication has and NUL bytes in names:
    every paper of the batch is stored, with the odd values cleaned or left unknown."""
    scholar = ScholarStandIn().start()
    try:
        papers = scholar.papers[:4]
        papers[0]["year"], papers[0]["publicationDate"] = 0, "0000-01-01"
        papers[1]["year"] = 3_000_000_000
        papers[2]["authors"] = [{"name": "Grace\x00 Hopper", "affiliations": ["Navy\x00", 5]}]
        papers[3]["year"] = 20019
        share_links(db, " ".join(f"https://aclanthology.org/{p['externalIds']['ACL']}" for p in papers))
        s2 = SemanticScholar(scholar.url, min_interval=0)
        done = Indexer(db, DigestEmbedder(), [s2]).run_batch()
        assert done is not None and done.looked_up == 4 and done.errors == []
        found = stored(db, "acl")
        expected = [(p["title"], p["year"] if p is papers[2] else None) for p in papers]
        assert [found[p["externalIds"]["ACL"]][:2] for p in papers] == expected
        assert found[papers[2]["externalIds"]["ACL"]][2] == ["Grace Hopper"]
    finally:
        scholar.stop()


def test_half_an_emoji_in_a_title_is_dropped_and_the_batch_stored(db: Database) -> None:
    """Semantic Scholar's JSON with half of a surrogate pair in a title (an emoji cut in two): the title is kept
    without it, and the batch is stored; it used to fail every paper of the batch, try after try."""
    scholar = ScholarStandIn().start()
    try:
        papers = scholar.papers[:2]
        papers[0]["title"] = "Emoji \ud83d cut in two"
        share_links(db, " ".join(f"https://aclanthology.org/{p['externalIds']['ACL']}" for p in papers))
        done = Indexer(db, DigestEmbedder(), [SemanticScholar(scholar.url, min_interval=0)]).run_batch()
        assert done is not None and done.looked_up == 2 and done.errors == []
        found = stored(db, "acl")
        assert found[papers[0]["externalIds"]["ACL"]][0] == "Emoji cut in two"
        assert found[papers[1]["externalIds"]["ACL"]][0] == papers[1]["title"]
    finally:
        scholar.stop()


def test_an_odd_citing_paper_costs_neither_its_paper_nor_the_others(db: Database) -> None:
    """Paper a's citing papers include one dated 20019, one that is not an object and one whose sentences are a
    number; they used to raise on every run, and a, asked first each time, held up b. Now b has its citing
    paper, and a has its well-formed ones (the year 20019 stored as unknown)."""
    a, b = "a" * 40, "b" * 40
    share_links(db, f"https://www.semanticscholar.org/paper/{a} https://www.semanticscholar.org/paper/{b}")
    with db.connection() as conn:
        conn.execute("UPDATE papers SET title = 'Shared', citation_count = 3, popularity = 3")
    scholar = ScholarStandIn(rows=[]).start()
    try:
        future = {"paperId": "c" * 40, "title": "From the far future", "year": 20019}
        newer = {"paperId": "d" * 40, "title": "Builds on a", "year": 2025}
        scholar.citation_answers[a] = {
            "offset": 0,
            "data": [
                {"citingPaper": future, "contexts": []},
                {"citingPaper": ["x"]},
                {"citingPaper": newer, "contexts": 5},
            ],
        }
        scholar.citations[b] = [{"paperId": "e" * 40, "title": "Builds on b", "year": 2024}]
        indexer = Indexer(db, DigestEmbedder(), [SemanticScholar(scholar.url, min_interval=0)])
        result = indexer.fill_citations()
        assert result.citations == 3
        with db.connection() as conn:
            rows = conn.execute(
                "SELECT i.value, c.citing_title, c.citing_year FROM paper_citations c "
                "JOIN paper_ids i ON i.paper_id = c.cited_paper_id AND i.scheme = 's2' ORDER BY 1, 2"
            ).fetchall()
        assert rows == [(a, "Builds on a", 2025), (a, "From the far future", None), (b, "Builds on b", 2024)]
    finally:
        scholar.stop()


def test_citations_the_database_refuses_are_logged_and_their_paper_waits_behind_the_others(db: Database) -> None:
    a, b = "a" * 40, "b" * 40
    share_links(db, f"https://www.semanticscholar.org/paper/{a} https://www.semanticscholar.org/paper/{b}")
    odd = Citation(ids={"s2": "c" * 40}, title="Odd", year=3_000_000_000, contexts=())
    stale = datetime.now(UTC) + timedelta(minutes=1)
    with db.connection() as conn:
        (first, *_rest) = storage.citations.load_papers_lacking_citations(conn, stale)
    assert not record_citing_papers(db, first[0], [odd], [(date(2024, 1, 31), 1.0)])
    with db.connection() as conn:
        after = [r[0] for r in storage.citations.load_papers_lacking_citations(conn, stale)]
        kept = conn.execute("SELECT count(*) FROM paper_citations").fetchone()[0]
    assert after[-1] == first[0] and len(after) == 2, "asked for now: it goes behind the paper not yet asked for"
    assert kept == 0


def test_texts_of_a_megabyte_from_a_source_are_kept_cut(db: Database) -> None:
    """The real client and parser against a stand-in whose answer holds a title of 100,000 characters, an abstract
    and a tldr of a megabyte, a venue of 50,000 and an address of 10,000: all were stored whole, and every later
    read of the paper (a post's context, an answer, an export) read them again. Now each is cut to what PaperPing
    keeps (``MOST_CHARS``), and the address, which cut would lead nowhere, is left out."""
    scholar = ScholarStandIn().start()
    try:
        paper = scholar.papers[0]
        paper["title"], paper["abstract"] = "T" * 100_000, "word " * 200_000
        paper["tldr"] = {"model": "tldr@v2", "text": "w" * 1_000_000}
        paper["venue"], paper["url"] = "V" * 50_000, "https://www.semanticscholar.org/paper/" + "a" * 10_000
        share_links(db, f"https://aclanthology.org/{paper['externalIds']['ACL']}")
        done = Indexer(db, DigestEmbedder(), [SemanticScholar(scholar.url, min_interval=0)]).run_batch()
        assert done is not None and done.looked_up == 1 and done.errors == []
        with db.connection() as conn:
            row = conn.execute(
                "SELECT length(p.title), length(p.abstract), length(p.tldr), length(v.name), p.url"
                " FROM papers p LEFT JOIN venues v ON v.id = p.venue_id WHERE p.title IS NOT NULL"
            ).fetchone()
        most = storage.papers.MOST_CHARS
        assert row == (most["title"], most["abstract"], most["tldr"], most["venue"], None), row
    finally:
        scholar.stop()
