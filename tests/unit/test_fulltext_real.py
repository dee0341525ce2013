"""The readers on real open-access papers (tests/data/fulltext/, licences in tests/data/README.md): the sections
they find are the papers' own headings, in order, and the licence is the one the file states."""

from __future__ import annotations

from pathlib import Path

import pytest

from socialrag.knowledge.fulltext import FullTextError, parse_fulltext, passages

DATA = Path(__file__).resolve().parents[1] / "data" / "fulltext"

# The headings each paper prints (top level, and for the JATS files the first subsections), read by hand.
PAPERS = {
    "pntd.0002065.nxml": (
        "jats",
        ["Introduction", "Materials and Methods", "Results", "Discussion"],
        ["Materials and Methods › Site description", "Materials and Methods › Animals and sampling"],
        "This is an open-access article distributed under the terms of the Creative Commons Attribution License",
    ),
    "pone.0046493.nxml": (
        "jats",
        ["Introduction", "Materials and Methods", "Results", "Discussion"],
        ["Materials and Methods › Chemicals", "Materials and Methods › Bacterial strains and growth conditions"],
        "This is an open-access article distributed under the terms of the Creative Commons Attribution License",
    ),
    "1471-2180-11-174.nxml": (
        "jats",
        ["Background", "Results", "Discussion", "Conclusions", "Appendix A", "Appendix B", "Methods"],
        ["Results › Effect of allelic variation in holin sequence", "Results › Effect of late promoter pR' activity"],
        "http://creativecommons.org/licenses/by/2.0",
    ),
    "jner-13-2016-de-marchis.pdf": (
        "pdf",
        ["Abstract", "Background", "Methods", "Results", "Discussion", "Conclusions", "Acknowledgements"],
        [],
        "https://creativecommons.org/licenses/by/4.0",
    ),
}


@pytest.mark.parametrize("name", sorted(PAPERS))
def test_the_sections_are_the_papers_own_headings(name: str) -> None:
    kind, top, subsections, licence = PAPERS[name]
    paper = parse_fulltext((DATA / name).read_bytes(), kind)  # type: ignore[arg-type]
    headings = [s.heading for s in paper.sections]
    tops = list(dict.fromkeys(h.split(" › ")[0] for h in headings))
    assert [h for h in tops if h in top] == top  # every printed heading, in the paper's order
    assert set(subsections) <= set(headings)
    assert paper.licence is not None and paper.licence.startswith(licence)
    assert paper.references  # the bibliography is kept apart, not read as text
    assert not any(p.text[:3] == "[1]" for p in passages(paper))


def test_the_pdf_leaves_its_front_matter_and_running_heads_out_of_the_first_passage() -> None:
    paper = parse_fulltext((DATA / "jner-13-2016-de-marchis.pdf").read_bytes(), "pdf")
    first = passages(paper)[0]
    assert first.section == "Abstract" and first.text.startswith("Background: Functional Electrical Stimulation")
    assert paper.title and paper.title.startswith("Multi-contact functional electrical stimulation for hand opening")


def test_a_jats_articles_front_matter_is_the_paper_it_says_it_is() -> None:
    from socialrag.knowledge import read_jats_front

    paper = read_jats_front((DATA / "pntd.0002065.nxml").read_bytes())
    assert paper.ids == {"doi": "10.1371/journal.pntd.0002065", "pmcid": "PMC3585041", "pmid": "23469300"}
    assert paper.title and paper.title.startswith("Serological Evidence of Rift Valley Fever Virus Circulation")
    assert paper.venue == "PLoS Negl Trop Dis" and str(paper.publication_date) == "2013-02-28"
    assert [a.name for a in paper.authors][:2] == ["José Fafetine", "Luis Neves"] and len(paper.authors) == 6
    assert paper.abstract and paper.abstract.startswith("Rift Valley fever (RVF) is endemic in most parts of Africa")
    bomb = b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "xxxxxxxx">]><article><front>&x;</front></article>'
    for hostile in (bomb, b"<html>not an article</html>", b"<article><front></front>"):
        with pytest.raises(FullTextError):
            read_jats_front(hostile)
