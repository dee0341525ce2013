"""Parsing the real Semantic Scholar response shapes."""

from __future__ import annotations

import json

from socialrag.knowledge.papers.semanticscholar import identities_from_external, paper_from_s2, s2_lookup_id
from tests.support.fixtures import s2_cassette, s2_json


def test_full_paper_object() -> None:
    paper = paper_from_s2(s2_json("Paper.json"))
    assert paper.ids["s2"] == s2_json("Paper.json")["paperId"]
    assert paper.ids["doi"] == "10.1093/mind/lix.236.433"
    assert paper.ids["corpus"] == "14636783"
    assert paper.title and paper.title.startswith("Computing Machinery")
    assert paper.tldr and "Can machines think" in paper.tldr
    assert paper.year == 1950 and str(paper.publication_date) == "1950-10-01"
    assert paper.citation_count == 10059
    assert paper.authors[0].name == "A. Turing" and paper.authors[0].s2_author_id == "2262347"
    assert paper.venue == "The Philosophy of Artificial Intelligence"
    # references come as every identity each cited paper has
    assert any(r.scheme == "s2" and r.value == "348f436fd9a3965f5ff17db031a9f43426f89b8e" for r in paper.references)
    assert any(r.scheme == "doi" and r.value == "10.2307/3610576" for r in paper.references)


def test_null_values_do_not_break_parsing() -> None:
    paper = paper_from_s2(s2_json("PaperWithNullValues.json"))
    assert paper.authors == () and paper.references == () and paper.title is None


def test_batch_answer_with_null_for_unknown_ids() -> None:
    interaction = s2_cassette("test_get_papers_not_found_warning.yaml")[0]
    answers = json.loads(interaction["response"]["body"]["string"])
    assert answers[0] is None
    parsed = [paper_from_s2(a) for a in answers if a]
    assert parsed[0].title == "How Much Should We Trust Differences-in-Differences Estimates?"
    assert parsed[0].ids["corpus"] == "470667"


def test_arxiv_and_acl_dois_map_to_their_own_identities() -> None:
    ids = identities_from_external({"ArXiv": "1706.03762", "DOI": "10.48550/arXiv.1706.03762", "CorpusId": 1}, "abc")
    assert ids == {"s2": "abc", "arxiv": "1706.03762", "corpus": "1"}
    ids = identities_from_external({"ACL": "N19-1423", "DOI": "10.18653/v1/N19-1423"}, None)
    assert ids == {"acl": "N19-1423"}


def test_lookup_ids_use_the_api_prefixes() -> None:
    assert s2_lookup_id({"arxiv": "2401.01234"}) == "ARXIV:2401.01234"
    assert s2_lookup_id({"acl": "P19-1001", "doi": "10.1/x"}) == "DOI:10.1/x"
    assert s2_lookup_id({"pmcid": "PMC7092803"}) == "PMCID:7092803"
    assert s2_lookup_id({"s2": "abc", "arxiv": "1"}) == "abc"
    assert s2_lookup_id({"ieee": "7780459"}) is None


def test_a_citation_count_as_it_was_from_the_citing_papers_dates() -> None:
    from datetime import date

    from socialrag.knowledge.papers.semanticscholar import Citation, citation_history

    def cite(published: date | None = None, year: int | None = None) -> Citation:
        return Citation({}, None, year, (), published)

    today = date(2024, 3, 10)
    cites = [cite(date(2023, 1, 5)), cite(date(2023, 1, 20)), cite(date(2023, 4, 1)), cite(year=2023), cite()]
    cites += [cite(date(2024, 3, 2))]
    # five of six dated: enough for a count of five (90 % of it); a year-only citation counts from the year's
    # last day; the month not over yet is left to the current reading
    assert citation_history(cites, 5, today) == (
        (date(2023, 1, 31), 2.0),
        (date(2023, 4, 30), 3.0),
        (date(2023, 12, 31), 4.0),
    )
    assert citation_history(cites, 6, today) == (), "a list short of the count says nothing of its past"
    assert citation_history([], 0, today) == ()
    assert citation_history([cite()], 1, today) == ()
