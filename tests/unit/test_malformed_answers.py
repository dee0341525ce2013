"""A record with a field of an unexpected shape costs that record only: the rest of the answer is kept, and
nothing past what was asked for is read. A value Postgres cannot keep (a NUL byte, a year no date has) is
cleaned, or left unknown, where each source's answer is read."""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx
import pytest

from socialrag.errors import SourceError
from socialrag.knowledge.papers.biorxiv import latest_version, paper_from_versions
from socialrag.knowledge.papers.crossref import paper_from_crossref
from socialrag.knowledge.papers.openalex import OpenAlex, paper_from_openalex
from socialrag.knowledge.papers.pubmed import papers_from_efetch
from socialrag.knowledge.papers.semanticscholar import SemanticScholar, citation_history, paper_from_s2, s2_papers
from tests.support.scholar_standin import ScholarStandIn

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


@pytest.mark.parametrize("year", [0, -5, 20019, 3_000_000_000, True, 2.5, "0000", "\u00b2\u2070\u00b2\u2070"])
def test_a_year_no_publication_has_is_unknown_not_zero(year: object) -> None:
    assert paper_from_s2({**GOOD, "year": year}).year is None
    assert paper_from_s2({**GOOD, "year": "2019"}).year == 2019


def test_nul_bytes_in_semantic_scholar_names_and_affiliations_are_dropped() -> None:
    author = {"name": "Ada\x00 Lovelace", "authorId": "7\x00", "affiliations": ["Analytical\x00 Engines", 4, None]}
    (found,) = paper_from_s2({**GOOD, "authors": [author, {"name": "\x00"}]}).authors
    assert (found.name, found.s2_author_id, found.affiliations) == ("Ada Lovelace", "7", ("Analytical Engines",))


def test_an_odd_citing_paper_costs_only_itself() -> None:
    """A citing paper dated 20019, one that is not an object, and one whose sentences are a number: the first
    and last are kept (the year unknown, no sentences), the second skipped, and the history is still read."""
    good = {"paperId": "c1", "title": "Builds on it", "year": 2024}
    answer = {
        "data": [
            {"citingPaper": {"paperId": "c2", "title": "Far future", "year": 20019}, "contexts": ["As in [3]"]},
            {"citingPaper": "not a paper", "contexts": []},
            {"citingPaper": good, "contexts": 5},
        ]
    }
    s2 = SemanticScholar("https://s2.test/", transport=httpx.MockTransport(lambda r: httpx.Response(200, json=answer)))
    citing = s2.fetch_citations("a" * 40)
    assert [(c.ids["s2"], c.year, c.contexts) for c in citing] == [("c2", None, ("As in [3]",)), ("c1", 2024, ())]
    assert citation_history(citing, 1, date(2026, 1, 1)) == ((date(2024, 12, 31), 1.0),)


def test_a_reference_of_the_wrong_shape_costs_only_itself() -> None:
    answer = {
        "data": [
            {"citedPaper": "x", "contexts": ["Lost"]},
            {"citedPaper": {"paperId": "r1"}, "contexts": 7},
            {"citedPaper": {"paperId": "r2", "externalIds": {"DOI": "10.1234/r2"}}, "contexts": ["As [2] shows"]},
        ]
    }
    s2 = SemanticScholar("https://s2.test/", transport=httpx.MockTransport(lambda r: httpx.Response(200, json=answer)))
    found = s2.fetch_reference_contexts("a" * 40)
    assert found == {"s2:r2": ("As [2] shows",), "doi:10.1234/r2": ("As [2] shows",)}


def test_citations_named_on_endless_empty_pages_are_asked_for_a_bounded_number_of_pages() -> None:
    scholar = ScholarStandIn(rows=[]).start()
    try:
        scholar.endless_citations.add("a" * 40)
        s2 = SemanticScholar(scholar.url, min_interval=0)
        assert s2.fetch_citations("a" * 40, max_pages=4) == []
        assert [p for _, p in scholar.requests] == [f"/graph/v1/paper/{'a' * 40}/citations"] * 4
        s2.close()
    finally:
        scholar.stop()


def test_a_citations_page_without_a_list_is_an_error_not_a_paper_nobody_cites() -> None:
    """Taken for no citing papers, it replaced the stored ones with none, and they all came back new next time."""
    scholar = ScholarStandIn(rows=[]).start()
    try:
        scholar.citation_answers["a" * 40] = {"message": "Too Many Requests"}
        s2 = SemanticScholar(scholar.url, min_interval=0)
        with pytest.raises(SourceError, match="without a list"):
            s2.fetch_citations("a" * 40)
        s2.close()
    finally:
        scholar.stop()


def test_openalex_years_and_institutions_are_checked() -> None:
    authorship = {"author": {"display_name": "B. Curie"}, "institutions": [{"display_name": "Radium\x00 Institute"}]}
    work = {"id": "https://openalex.org/W9", "title": "T", "publication_year": 0, "authorships": [authorship]}
    paper = paper_from_openalex(work)
    assert paper is not None and paper.year is None and paper.authors[0].affiliations == ("Radium Institute",)
    dated = paper_from_openalex({**work, "publication_year": 3_000_000_000, "publication_date": "2021-03-04"})
    assert dated is not None and dated.year == 2021


def test_crossref_date_parts_out_of_any_calendar_leave_the_date_unknown() -> None:
    author = {"given": "A\x00na", "family": "Berg", "affiliation": [{"name": "Lund\x00 University"}, "x"]}
    work = {"DOI": "10.1/x", "title": ["T"], "issued": {"date-parts": [[10**30, 1, 1]]}, "author": [author]}
    paper = paper_from_crossref(work)
    assert paper is not None and paper.year is None and paper.publication_date is None
    assert (paper.authors[0].name, paper.authors[0].affiliations) == ("Ana Berg", ("Lund University",))
    later = paper_from_crossref(
        {**work, "published-print": {"date-parts": [[20019]]}, "created": {"date-parts": [[2020, 2, 31]]}}
    )
    assert later is not None and later.publication_date == date(2020, 2, 1)


def _article(pmid: str, title: str, year: str) -> str:
    issue = f"<Journal><JournalIssue><PubDate><Year>{year}</Year></PubDate></JournalIssue></Journal>"
    return (
        f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><ArticleTitle>{title}</ArticleTitle>"
        f"{issue}</Article></MedlineCitation></PubmedArticle>"
    )


def test_a_pubmed_year_0000_is_unknown_and_costs_no_other_article() -> None:
    xml = f"<PubmedArticleSet>{_article('1', 'Undated', '0000')}{_article('2', 'Dated', '2019')}</PubmedArticleSet>"
    assert [(p.title, p.year) for p in papers_from_efetch(xml)] == [("Undated", None), ("Dated", 2019)]


def test_a_biorxiv_version_that_is_a_digit_but_no_number_is_not_read_as_one() -> None:
    rows = [
        {"doi": "10.1101/1", "title": "First", "version": "\u00b2", "date": "2020-01-02", "authors": "Zhou\x00, P."},
        {"doi": "10.1101/1", "title": "Second", "version": "2", "date": "2020-02-02", "authors": "Zhou, P."},
    ]
    assert latest_version(rows) == 2
    paper = paper_from_versions(rows, "biorxiv")
    assert paper is not None and paper.title == "Second" and paper.authors[0].name == "P. Zhou"


@pytest.mark.parametrize(
    ("count", "kept"), [(-5, None), (True, None), (10**12, None), ("42", 42), (None, None), (7, 7)]
)
def test_a_citation_count_no_paper_has_is_unknown_never_negative_or_a_flag(count: object, kept: int | None) -> None:
    """A count of -5, ``true`` or 10^12 is unknown (a negative one ranked a paper below every unknown one, and one
    past the column's range cost the whole paper's metadata); a count given as digits is read, and a missing one
    stays unknown, never 0."""
    s2 = paper_from_s2({**GOOD, "citationCount": count})
    crossref = paper_from_crossref({"DOI": "10.1/x", "title": ["T"], "is-referenced-by-count": count})
    openalex = paper_from_openalex({"id": "https://openalex.org/W1", "title": "T", "cited_by_count": count})
    for paper in (s2, crossref, openalex):
        assert paper is not None and paper.citation_count == kept
        assert paper.popularity == (None if kept is None else float(kept))


def test_an_arxiv_entry_keeps_the_doi_its_authors_gave_only_when_it_is_one_doi() -> None:
    """arXiv's DOI field is written by the authors: two DOIs with a space between them were kept as one identity no
    source could look up; a DOI of arXiv's own becomes no second identity."""
    from socialrag.knowledge.papers.arxiv import papers_from_atom

    def feed(doi: str) -> str:
        return (
            '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom"><entry>'
            "<id>http://arxiv.org/abs/2401.01234v2</id><title>T</title>"
            f"<arxiv:doi>{doi}</arxiv:doi></entry></feed>"
        )

    assert papers_from_atom(feed("10.1000/A1 10.1000/b2"))["2401.01234"].ids == {"arxiv": "2401.01234"}
    assert papers_from_atom(feed("not a doi"))["2401.01234"].ids == {"arxiv": "2401.01234"}
    assert papers_from_atom(feed(" 10.1000/AB1 "))["2401.01234"].ids == {"arxiv": "2401.01234", "doi": "10.1000/ab1"}
