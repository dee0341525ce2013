"""OpenAlex, PubMed, bioRxiv and Crossref's PII lookup against their stand-ins (written from the services'
public documentation), and the order in which a paper's metadata is asked for when Semantic Scholar refuses."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta

import pytest

from socialrag.errors import SourceError
from socialrag.knowledge.papers.biorxiv import BiorxivApi, normalize_category, server_of
from socialrag.knowledge.papers.crossref import Crossref
from socialrag.knowledge.papers.openalex import MAX_ABSTRACT_WORDS, OpenAlex, abstract_text, paper_from_openalex
from socialrag.knowledge.papers.pubmed import PubMed, papers_from_efetch
from socialrag.knowledge.papers.resolve import RefreshResult, ask_sources
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from tests.support.bio_standin import BioStandIn
from tests.support.scholar_standin import ScholarStandIn

FAST = {"min_interval": 0.0, "max_wait": 0.5, "max_tries": 2}


@pytest.fixture(scope="module")
def bio() -> Iterator[BioStandIn]:
    standin = BioStandIn().start()
    yield standin
    standin.stop()


def test_openalex_finds_papers_by_doi_pmid_and_pmcid(bio: BioStandIn) -> None:
    client = OpenAlex(bio.url + "openalex/", mailto="lab@example.org", **FAST)
    found = client.fetch_papers(
        [{"doi": "10.1038/nature14893"}, {"pmid": "20126261"}, {"pmcid": "PMC3366557"}, {"doi": "10.1/unknown"}]
    )
    assert [p.title[:30] if p and p.title else None for p in found] == [
        "The ubiquitin kinase PINK1 rec",
        "PINK1 is selectively stabilize",
        "ER tubules mark sites of mitoc",
        None,
    ]
    lazarou = found[0]
    assert lazarou is not None and lazarou.ids["pmid"] == "26266977" and lazarou.ids["openalex"].startswith("W")
    assert lazarou.abstract and lazarou.abstract.startswith("Phospho-ubiquitin made by PINK1")
    assert lazarou.subjects == ("openalex:T10102",) and lazarou.venue == "Nature"
    assert all(q.get("mailto") == ["lab@example.org"] for q in bio.asked("/openalex/")), "the polite pool"


def test_openalex_recent_works_by_words_and_topic(bio: BioStandIn) -> None:
    client = OpenAlex(bio.url + "openalex/", **FAST)
    since = date.today() - timedelta(days=30)
    titles = {p.title for p in client.recent(words="mitophagy pink1", topics=["T10102"], since=since)}
    assert any(t and "TOM complex" in t for t in titles)
    assert not any(t and "Methods in mammalian" in t for t in titles), "only works of the window"


def test_an_abstract_written_to_take_memory_is_cut() -> None:
    huge = {"word": list(range(0, 10 * MAX_ABSTRACT_WORDS, 3)), "<@U123>": [1]}
    text = abstract_text(huge)
    assert text is not None and len(text.split()) <= MAX_ABSTRACT_WORDS
    work = paper_from_openalex({"title": "<!channel> hello", "abstract_inverted_index": {"x": ["not a position"]}})
    assert work is not None and work.title == "<!channel> hello" and work.abstract is None  # data, kept as data


def test_pubmed_finds_papers_by_pmid_and_pmcid_with_abstracts(bio: BioStandIn) -> None:
    client = PubMed(bio.url + "pubmed/", api_key="k", email="lab@example.org", **FAST)
    narendra, friedman, missing = client.fetch_papers([{"pmid": "19029340"}, {"pmcid": "PMC3366557"}, {"pmid": "1"}])
    assert narendra is not None and narendra.ids == {
        "pmid": "19029340",
        "doi": "10.1083/jcb.200809125",
        "pmcid": "PMC2592826",
    }
    assert narendra.abstract and narendra.abstract.startswith("Depolarized mitochondria recruit")
    assert narendra.publication_date == date(2008, 12, 1) and narendra.date_precision == "day"
    assert narendra.authors[0].name == "Derek Narendra" and narendra.venue == "The Journal of Cell Biology"
    assert friedman is not None and friedman.ids["pmid"] == "21885730" and missing is None
    asked = bio.asked("/pubmed/")
    assert all(q.get("tool") == ["paperping"] and q.get("api_key") == ["k"] for q in asked)


def test_pubmed_answer_that_is_not_xml_is_a_clear_error() -> None:
    with pytest.raises(SourceError, match="not valid XML"):
        papers_from_efetch("<html><body>Service unavailable")
    # entities that expand a thousand-million-fold are refused, not expanded in memory
    laughs = "".join(f'<!ENTITY l{i + 1} "{f"&l{i};" * 10}">' for i in range(9))
    bomb = f'<!DOCTYPE x [<!ENTITY l0 "lol">{laughs}]><PubmedArticleSet><PubmedArticle><MedlineCitation>'
    bomb += "<PMID>1</PMID><Article><ArticleTitle>&l9;</ArticleTitle></Article></MedlineCitation></PubmedArticle>"
    with pytest.raises(SourceError, match="not valid XML"):
        papers_from_efetch(bomb + "</PubmedArticleSet>")
    assert papers_from_efetch("<PubmedArticleSet><PubmedArticle/></PubmedArticleSet>") == []


def test_biorxiv_gives_the_latest_version_the_first_date_and_the_category(bio: BioStandIn) -> None:
    client = BiorxivApi(bio.url + "biorxiv/", **FAST)
    (preprint,) = client.fetch_papers([{"doi": "10.1101/2026.07.21.605432"}])
    assert preprint is not None and preprint.venue == "bioRxiv" and preprint.subjects == ("biorxiv:cell_biology",)
    assert str(preprint.publication_date) == "2026-07-21" and preprint.authors[0].name == "I. Duarte"
    recent = client.recent("biorxiv", "cell_biology", date.today() - timedelta(days=7), date.today())
    assert {p.title[:20] for p in recent if p.title} >= {"TOM7 is required for", "Border cell cluster "}
    assert not any("Arabidopsis" in (p.title or "") for p in recent), "plant biology is another category"


def test_biorxiv_categories_are_the_servers_own() -> None:
    assert normalize_category("biorxiv", "Cell Biology") == "cell_biology"
    assert normalize_category("biorxiv", "cell-biology") == "cell_biology"
    assert normalize_category("medrxiv", "Infectious Diseases") == "infectious_diseases"
    assert normalize_category("biorxiv", "infectious_diseases") is None
    assert normalize_category("biorxiv", "<@U1>") is None
    assert server_of("10.1101/2020.04.14.20062463") == "medrxiv"
    assert server_of("10.1101/2020.03.01.972935") == "biorxiv"


def test_crossref_finds_the_doi_of_an_elsevier_pii(bio: BioStandIn) -> None:
    client = Crossref(bio.url + "crossref/", **FAST)
    (cell,) = client.fetch_papers([{"pii": "S0092867410000763"}])
    assert cell is not None and cell.ids == {"doi": "10.1016/j.cell.2010.01.028", "pii": "S0092867410000763"}
    assert client.fetch_papers([{"pii": "not-a-pii"}]) == [None]


def test_with_semantic_scholar_refusing_every_request_the_others_answer(bio: BioStandIn) -> None:
    scholar = ScholarStandIn(rows=[]).start()
    scholar.refuse_all = True
    try:
        sources = [
            SemanticScholar(scholar.url, **FAST),
            BiorxivApi(bio.url + "biorxiv/", **FAST),
            PubMed(bio.url + "pubmed/", **FAST),
            OpenAlex(bio.url + "openalex/", **FAST),
            Crossref(bio.url + "crossref/", **FAST),
        ]
        requests = [
            {"pmid": "19029340"},
            {"doi": "10.1101/2026.07.21.605432"},
            {"doi": "10.1126/science.1219855"},
            {"pii": "S0092867410000763"},
        ]
        result = RefreshResult(errors=[])
        found = ask_sources(sources, requests, result)
        assert [p.source if p else None for p in found] == ["pubmed", "biorxiv", "openalex", "crossref"]
        assert result.outcomes["semanticscholar"] and "429" in str(result.outcomes["semanticscholar"])
        assert scholar.rate_limited >= 1
    finally:
        scholar.stop()


def test_an_answer_is_read_no_further_than_what_was_asked() -> None:
    """Each source's answer holding 1,200 records more than the page asked for: OpenAlex keeps its 50, PubMed's
    efetch the one article asked for, bioRxiv a page of 100; a venue search keeps at most a page of 1,000."""
    bio = BioStandIn().start()
    try:
        bio.oversize = 1200
        openalex = OpenAlex(bio.url + "openalex/", **FAST)
        found = openalex.recent(words=None, topics=["T10102"], since=date.today() - timedelta(days=400), limit=50)
        assert 0 < len(found) <= 50
        pubmed = PubMed(bio.url + "pubmed/", **FAST)
        assert len(pubmed.efetch(["19029340"])) == 1
        biorxiv = BiorxivApi(bio.url + "biorxiv/", **FAST)
        since, until = date.today() - timedelta(days=400), date.today()
        assert len(biorxiv.recent("biorxiv", "cell_biology", since, until, pages=1)) <= 100
    finally:
        bio.stop()
