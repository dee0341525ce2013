"""Paper metadata from Semantic Scholar, arXiv and Crossref (real response shapes, mocked transport)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.slack.workspace_export import import_export
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.knowledge.papers.arxiv import ArxivApi
from socialrag.knowledge.papers.crossref import Crossref
from socialrag.knowledge.papers.resolve import build_sources, refresh_metadata
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from tests.support.exports import msg, user, write_export
from tests.support.fixtures import s2_json

T0 = 1_700_000_000.0
NOW = datetime(2024, 1, 1, tzinfo=UTC)

TRANSFORMER = {
    "paperId": "204e3073870fae3d05bcbc2f6a8e263d9b72e776",
    "externalIds": {
        "ArXiv": "1706.03762",
        "DBLP": "conf/nips/VaswaniSPUJGKP17",
        "CorpusId": 13756489,
        "DOI": "10.5555/3295222.3295349",
    },
    "url": "https://www.semanticscholar.org/paper/204e3073870fae3d05bcbc2f6a8e263d9b72e776",
    "title": "Attention is All you Need",
    "abstract": "The dominant sequence transduction models are based on complex recurrent networks.",
    "venue": "Neural Information Processing Systems",
    "publicationVenue": {"id": "d9720b90", "name": "Neural Information Processing Systems", "type": "conference"},
    "year": 2017,
    "publicationDate": "2017-06-12",
    "citationCount": 100000,
    "tldr": {
        "model": "tldr@v2.0.0",
        "text": "A new simple network architecture, the Transformer, based solely on attention.",
    },
    "authors": [
        {"authorId": "40348417", "name": "Ashish Vaswani", "affiliations": ["Google Brain"], "externalIds": {}},
        {"authorId": "1846258", "name": "Noam M. Shazeer", "affiliations": [], "externalIds": {}},
    ],
    "references": [
        {
            "paperId": "0b544dfe355a5070b60986319a3f51fb45d1348e",
            "externalIds": {"ArXiv": "1409.0473", "CorpusId": 11212020},
        }
    ],
}
BAHDANAU = {
    "paperId": "0b544dfe355a5070b60986319a3f51fb45d1348e",
    "externalIds": {"ArXiv": "1409.0473", "CorpusId": 11212020},
    "title": "Neural Machine Translation by Jointly Learning to Align and Translate",
    "abstract": "Neural machine translation is a recently proposed approach.",
    "venue": "ICLR",
    "year": 2014,
    "publicationDate": "2014-09-01",
    "citationCount": 25000,
    "tldr": None,
    "publicationVenue": None,
    "authors": [{"authorId": "3335364", "name": "Dzmitry Bahdanau", "affiliations": [], "externalIds": {}}],
    "references": [],
}
ATOM = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <title type="html">ArXiv Query: id_list=2401.99999</title>
  <entry>
    <id>http://arxiv.org/abs/2401.99999v2</id>
    <published>2024-01-30T18:59:59Z</published>
    <title>A Fresh Preprint
      About Retrieval</title>
    <summary>  We study retrieval for groups.  </summary>
    <author><name>Ana Lopez</name><arxiv:affiliation>Example University</arxiv:affiliation></author>
    <author><name>Ben Okafor</name></author>
    <arxiv:primary_category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
</feed>"""
CROSSREF = {
    "status": "ok",
    "message-type": "work",
    "message": {
        "DOI": "10.1145/3313831.3376727",
        "title": ["Guidelines for Human-AI Interaction"],
        "container-title": ["Proceedings of the 2019 CHI Conference on Human Factors in Computing Systems"],
        "author": [{"given": "Saleema", "family": "Amershi", "affiliation": [{"name": "Microsoft Research"}]}],
        "issued": {"date-parts": [[2019, 5, 2]]},
        "is-referenced-by-count": 1500,
        "abstract": "<jats:p>Advances in artificial intelligence frame opportunities.</jats:p>",
        "URL": "http://dx.doi.org/10.1145/3313831.3376727",
    },
}


class FakeServices:
    """Semantic Scholar, arXiv and Crossref answering in their real shapes; records what was asked."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.s2_papers = {
            "ARXIV:1706.03762": TRANSFORMER,
            "DOI:10.5555/3295222.3295349": TRANSFORMER,
            "ARXIV:1409.0473": BAHDANAU,
        }
        self.fail_first_s2 = False

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.calls.append(f"{request.method} {request.url.host}{request.url.path}")
        if request.url.host == "s2.test":
            return self._s2(request)
        if request.url.host == "arxiv.test":
            return httpx.Response(
                200, text=ATOM if "2401.99999" in str(request.url) else "<feed xmlns='http://www.w3.org/2005/Atom'/>"
            )
        if request.url.host == "crossref.test":
            if request.url.path.endswith("10.1145/3313831.3376727"):
                return httpx.Response(200, json=CROSSREF)
            return httpx.Response(404, text="Resource not found.")
        return httpx.Response(500)

    def _s2(self, request: httpx.Request) -> httpx.Response:
        if self.fail_first_s2:
            self.fail_first_s2 = False
            return httpx.Response(429, headers={"Retry-After": "7"}, json={"message": "Too Many Requests"})
        if request.url.path.endswith("/paper/batch"):
            assert "tldr" in request.url.params["fields"]
            ids = json.loads(request.content)["ids"]
            assert len(ids) <= 500
            return httpx.Response(200, json=[self.s2_papers.get(i) for i in ids])
        if request.url.path.endswith("/references"):
            return httpx.Response(
                200,
                json={
                    "offset": 0,
                    "data": [
                        {
                            "contexts": ["We follow the attention mechanism of [2] for alignment."],
                            "citedPaper": {"paperId": BAHDANAU["paperId"], "externalIds": BAHDANAU["externalIds"]},
                        }
                    ],
                },
            )
        if request.url.path.endswith("/citations"):
            if BAHDANAU["paperId"] not in request.url.path:
                return httpx.Response(200, json={"offset": 0, "data": []})
            return httpx.Response(
                200,
                json={
                    "offset": 0,
                    "data": [
                        {
                            "contexts": ["Attention [3] lets the decoder look back."],
                            "citingPaper": {
                                "paperId": TRANSFORMER["paperId"],
                                "externalIds": TRANSFORMER["externalIds"],
                                "title": TRANSFORMER["title"],
                                "year": 2017,
                            },
                        },
                        {
                            "contexts": [],
                            "citingPaper": {
                                "paperId": "f" * 40,
                                "externalIds": {"ArXiv": "2402.00001"},
                                "title": "A 2024 follow-up",
                                "year": 2024,
                            },
                        },
                    ],
                },
            )
        return httpx.Response(404, json={"error": "Paper not found"})


def sources(fake: FakeServices, sleeps: list[float]) -> list[Any]:
    transport = httpx.MockTransport(fake.handler)
    kw: dict[str, Any] = {"transport": transport, "sleep": sleeps.append, "min_interval": 0.0}
    return [
        SemanticScholar("https://s2.test/", **kw),
        ArxivApi("https://arxiv.test/api/", **kw),
        Crossref("https://crossref.test/", **kw),
    ]


def shared_export(tmp_path: Path) -> Path:
    messages = [
        msg(T0, "U1", "<https://arxiv.org/abs/1706.03762|Attention Is All You Need>"),
        msg(T0 + 60, "U2", "the proceedings version https://doi.org/10.5555/3295222.3295349"),
        msg(T0 + 120, "U1", "<https://arxiv.org/abs/1409.0473|Bahdanau et al.> the classic"),
        msg(T0 + 180, "U2", "<https://arxiv.org/abs/2401.99999|fresh preprint>"),
        msg(T0 + 240, "U1", "<https://dl.acm.org/doi/10.1145/3313831.3376727|HAI guidelines>"),
        msg(T0 + 300, "U2", "<https://aclanthology.org/W99-9999/|An unknown workshop paper> about parsing"),
    ]
    return write_export(
        tmp_path / "e.zip", {"lab": ("C1", ["U1", "U2"], messages)}, [user("U1", "ana"), user("U2", "ben")]
    )


def settings() -> Settings:
    return Settings(home=Path("/nonexistent"))


def test_metadata_from_each_source_and_identity_merge(db: Database, tmp_path: Path) -> None:
    import_export(db, shared_export(tmp_path), progress=False)
    fake, sleeps = FakeServices(), []
    result = refresh_metadata(db, sources(fake, sleeps), settings(), now=NOW)
    assert result.found == 5 and result.missing == 1  # six rows, two of them one paper
    with db.connection() as conn:
        rows = conn.execute(
            """SELECT p.title, p.metadata_source, p.tldr, v.name FROM papers p LEFT JOIN venues v ON v.id = p.venue_id
                WHERE p.title IS NOT NULL ORDER BY p.title"""
        ).fetchall()
        shared_once = conn.execute(
            """SELECT count(DISTINCT paper_id) FROM message_papers mp JOIN messages m ON m.id = mp.message_id
                WHERE m.ts IN (%s, %s)""",
            (f"{T0:.6f}", f"{T0 + 60:.6f}"),
        ).fetchone()
        authors = conn.execute(
            """SELECT a.name, pa.affiliations FROM paper_authors pa JOIN authors a ON a.id = pa.author_id
                JOIN paper_ids i ON i.paper_id = pa.paper_id WHERE i.scheme = 'arxiv' AND i.value = '1706.03762'
                ORDER BY pa.position"""
        ).fetchall()
        pending = conn.execute("SELECT fetch_attempts, next_fetch_at FROM papers WHERE title IS NULL").fetchall()
        contexts = conn.execute("SELECT DISTINCT contexts FROM paper_references WHERE contexts <> '{}'").fetchall()
    assert [(r[0], r[1]) for r in rows] == [
        ("A Fresh Preprint About Retrieval", "arxiv"),
        ("Attention is All you Need", "semanticscholar"),
        ("Guidelines for Human-AI Interaction", "crossref"),
        ("Neural Machine Translation by Jointly Learning to Align and Translate", "semanticscholar"),
    ]
    assert rows[1][2].startswith("A new simple network architecture")
    assert rows[2][3] == "CHI"
    assert shared_once == (1,), "the arXiv link and the DOI link are one paper"
    assert authors == [("Ashish Vaswani", ["Google Brain"]), ("Noam M. Shazeer", [])]
    assert pending == [(1, NOW + timedelta(hours=24))]
    assert contexts == [(["We follow the attention mechanism of [2] for alignment."],)]
    assert result.citations == 2
    with db.connection() as conn:
        citing = conn.execute(
            """SELECT DISTINCT c.citing_title, c.citing_year FROM paper_citations c
                 JOIN paper_ids i ON i.paper_id = c.cited_paper_id WHERE i.value = '1409.0473' ORDER BY 2"""
        ).fetchall()
        # which shared papers cite each other
        pairs = conn.execute(
            """SELECT DISTINCT r.citing_paper_id, i.paper_id FROM paper_references r
                 JOIN message_papers s ON s.paper_id = r.citing_paper_id
                 JOIN paper_ids i ON (i.scheme, i.value) = (r.cited_scheme, r.cited_value)
                 JOIN message_papers s2 ON s2.paper_id = i.paper_id WHERE i.paper_id <> r.citing_paper_id"""
        ).fetchall()
        ids = dict(conn.execute("SELECT value, paper_id FROM paper_ids WHERE scheme = 'arxiv'").fetchall())
    assert citing == [("Attention is All you Need", 2017), ("A 2024 follow-up", 2024)]
    assert [tuple(p) for p in pairs] == [(ids["1706.03762"], ids["1409.0473"])], "which shared papers cite each other"
    # A second run asks for nothing: the cache holds and the unknown paper is not due yet.
    fake.calls.clear()
    again = refresh_metadata(db, sources(fake, sleeps), settings(), now=NOW + timedelta(hours=1))
    assert (again.found, again.missing, fake.calls) == (0, 0, []), "the cache holds, citations included"
    # After the retry time it is asked for again.
    later = refresh_metadata(db, sources(fake, sleeps), settings(), now=NOW + timedelta(hours=25))
    assert later.missing == 1


def test_429_is_honoured_with_retry_after(db: Database, tmp_path: Path) -> None:
    import_export(db, shared_export(tmp_path), progress=False)
    fake, sleeps = FakeServices(), []
    fake.fail_first_s2 = True
    result = refresh_metadata(db, sources(fake, sleeps), settings(), now=NOW)
    assert 7.0 in sleeps
    assert result.found == 5


def test_dead_service_keeps_papers_and_goes_on(db: Database, tmp_path: Path) -> None:
    import_export(db, shared_export(tmp_path), progress=False)

    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    kw: dict[str, Any] = {"transport": httpx.MockTransport(down), "sleep": lambda s: None, "min_interval": 0.0}
    result = refresh_metadata(db, [SemanticScholar("https://s2.test/", **kw)], settings(), now=NOW)
    assert result.found == 0 and result.missing == 6
    assert result.errors and "connection refused" in result.errors[0]


def test_offline_fetches_nothing_and_papers_keep_their_best_text(db: Database, tmp_path: Path) -> None:
    import_export(db, shared_export(tmp_path), progress=False)
    with build_sources(Settings(home=Path("/nonexistent"), offline=True)) as offline_sources:
        assert offline_sources == []
        result = refresh_metadata(db, offline_sources, settings(), now=NOW)
    assert result.found == 0
    from socialrag.storage.embeddings import load_channel_pending

    with db.connection() as conn:
        texts = {t.text for t in load_channel_pending(conn, "all-MiniLM-L6-v2")}
        ids = conn.execute("SELECT count(*) FROM paper_ids WHERE scheme = 'acl' AND value = 'W99-9999'").fetchone()
    assert "An unknown workshop paper\nAn unknown workshop paper about parsing" in texts
    assert ids == (1,)


def test_s2_fixture_paper_round_trip(db: Database) -> None:
    """The full real Paper.json goes into the database and its references become joinable rows."""
    from socialrag.knowledge.papers.semanticscholar import paper_from_s2
    from socialrag.storage.papers import record_papers

    paper = paper_from_s2(s2_json("Paper.json"))
    with db.connection() as conn:
        (pid,) = record_papers(conn, [paper])
        refs = conn.execute("SELECT count(*) FROM paper_references WHERE citing_paper_id = %s", (pid,)).fetchone()
        again = record_papers(conn, [paper])
    assert again == [pid]
    assert refs is not None and refs[0] >= 14


@pytest.mark.parametrize("retry_after", ["3", "Wed, 21 Oct 2015 07:28:00 GMT", None])
def test_retry_after_forms(retry_after: str | None) -> None:
    from socialrag.knowledge.papers.http import parse_retry_after

    assert parse_retry_after(retry_after, 2.0) >= 0.0


def test_a_shared_papers_citation_count_is_kept_as_it_was_on_earlier_days(db: Database, tmp_path: Path) -> None:
    """Semantic Scholar's citing papers carry their dates: the count each month back is stored as a dated
    reading, so a refit or a replay reads the count a share had when it was made, not today's."""
    import_export(db, shared_export(tmp_path), progress=False)
    fake, sleeps = FakeServices(), []
    fake.s2_papers["ARXIV:1409.0473"] = {**BAHDANAU, "citationCount": 2}  # the two citing papers the stand-in lists
    result = refresh_metadata(db, sources(fake, sleeps), settings(), now=datetime(2025, 6, 1, tzinfo=UTC))
    assert result.dated_counts == 2
    with db.connection() as conn:
        readings = conn.execute(
            """SELECT observed_at::date, p.value FROM paper_popularity p JOIN paper_ids i ON i.paper_id = p.paper_id
                WHERE i.scheme = 'arxiv' AND i.value = '1409.0473' ORDER BY observed_at"""
        ).fetchall()
        known = conn.execute(
            """SELECT count(*) FROM paper_popularity p JOIN paper_ids i ON i.paper_id = p.paper_id
                WHERE i.scheme = 'arxiv' AND i.value = '1706.03762'"""
        ).fetchone()
    # the 2017 and 2024 citing papers are known only by year: each counts from that year's end
    assert [(str(d), v) for d, v in readings[:2]] == [("2017-12-31", 1.0), ("2024-12-31", 2.0)]
    assert readings[-1][1] == 2.0, "then today's count"
    assert known == (1,), "a paper with 100,000 citations and two listed keeps only its current reading"
