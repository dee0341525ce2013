"""A paper's full text read into sections (``socialrag.knowledge.fulltext``): JATS XML, an arXiv HTML page and a
PDF, each written here in the shape those sources give them; and hostile files (an XML bomb, an outside entity,
malformed XML, a PDF with no text layer, a 500-page PDF, a PDF whose stream inflates to 300 MB) cost at most their
caps and say what they are."""

from __future__ import annotations

import time

import pytest

from socialrag.knowledge.fulltext import MAX_PAGES, FullTextError, parse_fulltext
from tests.support.pdfs import blank_pdf, bomb_pdf, text_pdf

JATS = b"""<?xml version="1.0"?>
<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving and Interchange DTD v1.0 20120330//EN"
 "JATS-archivearticle1.dtd">
<article xmlns:xlink="http://www.w3.org/1999/xlink" article-type="research-article"><front><article-meta>
<title-group><article-title>Reading <italic>Together</italic>: How Labs Discuss Papers</article-title></title-group>
<permissions><license xlink:href="https://creativecommons.org/licenses/by/4.0/"><license-p>CC BY</license-p>
</license></permissions><abstract><p>An abstract.</p></abstract></article-meta></front>
<body><sec id="s1"><title>Introduction</title><p>Labs share papers in channels <xref ref-type="bibr" rid="r1">[1]</xref>.</p>
<fig id="f1"><caption><p>A figure caption, not a paragraph of the section.</p></caption></fig></sec>
<sec id="s2"><label>2</label><title>Materials and Methods</title><sec id="s2a"><label>2.1</label><title>Datasets</title>
<p>We used the <bold>LabThreads</bold> dataset of 1,200 threads.</p><p>Each thread was read twice.</p>
<list><list-item><p>Threads with fewer than two replies were set aside before the counting began.</p></list-item></list></sec>
</sec></body><back><ref-list><ref id="r1"><mixed-citation>A. Author. Papers in channels. 2020.</mixed-citation></ref>
</ref-list></back></article>"""

BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE article [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<article><body><sec><title>T</title><p>&d;&d;&d;&d;&d;&d;&d;&d;</p></sec></body></article>"""

OUTSIDE = b"""<?xml version="1.0"?>
<!DOCTYPE article [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<article><body><sec><title>T</title><p>&secret;</p></sec></body></article>"""

HTML = b"""<!DOCTYPE html><html><head><title>arXiv page</title><script>var tracked = 1;</script></head><body>
<nav><p>Skip to content</p></nav><article class="ltx_document">
<h1 class="ltx_title ltx_title_document">Streams of Papers in Research Chat</h1>
<div class="ltx_abstract"><h6 class="ltx_title ltx_title_abstract">Abstract</h6><p class="ltx_p">We study paper streams.</p></div>
<section class="ltx_section"><h2 class="ltx_title ltx_title_section">1 Introduction</h2>
<div class="ltx_para"><p class="ltx_p">Groups post papers and react to them.</p></div>
<ul class="ltx_itemize"><li class="ltx_item"><div class="ltx_para"><p class="ltx_p">First we collect the threads of
twelve research groups over two years, with their replies and their reactions.</p></div></li></ul>
<section class="ltx_subsection"><h3 class="ltx_title ltx_title_subsection">1.1 Scope</h3>
<div class="ltx_para"><p class="ltx_p">We look at twelve groups.</p></div></section></section>
<section class="ltx_bibliography"><h2 class="ltx_title ltx_title_bibliography">References</h2>
<ul><li class="ltx_bibitem">B. Writer. Chat and science. 2021.</li></ul></section>
<p>Licence: <a href="https://creativecommons.org/licenses/by-sa/4.0/">CC BY-SA 4.0</a></p>
</article></body></html>"""


def test_jats_is_read_into_its_own_sections_with_its_licence_and_references() -> None:
    paper = parse_fulltext(JATS, "jats")
    assert paper.title == "Reading Together: How Labs Discuss Papers"
    assert [s.heading for s in paper.sections] == ["Introduction", "2 Materials and Methods › 2.1 Datasets"]
    assert paper.sections[0].paragraphs == ("Labs share papers in channels [1].",), "a caption is not the section's"
    assert paper.sections[1].paragraphs[0] == "We used the LabThreads dataset of 1,200 threads."
    assert paper.sections[1].paragraphs[2].startswith("Threads with fewer"), "a list's paragraphs are the section's"
    assert paper.licence == "https://creativecommons.org/licenses/by/4.0/"
    assert paper.references == ("A. Author. Papers in channels. 2020.",)


# no entity at all: a default attribute, which expat copies onto every <p> (here 20 KB onto 2,000: 40 MB from 28 KB;
# a megabyte onto thousands fills any memory)
DEFAULTS = (
    b'<?xml version="1.0"?><!DOCTYPE article [<!ATTLIST p x CDATA "' + b"A" * 20_000 + b'">]>'
    b"<article><body><sec><title>T</title>" + b"<p/>" * 2_000 + b"</sec></body></article>"
)
ELEMENTS = b"<!DOCTYPE article [<!ELEMENT article ANY>]><article><body><p>Text.</p></body></article>"


@pytest.mark.parametrize(
    "data", [BOMB, OUTSIDE, DEFAULTS, ELEMENTS], ids=["entity bomb", "outside entity", "default attribute", "element"]
)
def test_xml_that_declares_its_own_document_type_is_refused_without_expanding_it(data: bytes) -> None:
    """Real JATS files only name their DTD (``"JATS-archivearticle1.dtd"``, as ``JATS`` above does, and it is read);
    a DOCTYPE with declarations of its own is refused before any of them is read."""
    started = time.monotonic()
    with pytest.raises(FullTextError, match="declares a document type of its own"):
        parse_fulltext(data, "jats")
    assert time.monotonic() - started < 1.0


def test_malformed_or_foreign_xml_says_what_it_is() -> None:
    with pytest.raises(FullTextError, match="not well-formed"):
        parse_fulltext(b"<article><body><sec></body>", "jats")
    with pytest.raises(FullTextError, match="not a JATS article"):
        parse_fulltext(b"<html><body/></html>", "jats")
    with pytest.raises(FullTextError, match="empty"):
        parse_fulltext(b"  ", "jats")


def test_an_arxiv_html_page_is_read_without_its_scripts_navigation_or_bibliography() -> None:
    paper = parse_fulltext(HTML, "html")
    assert paper.title == "Streams of Papers in Research Chat"
    # text after the bibliography (an appendix, here a licence line) is text again, under its own heading or none
    assert [s.heading for s in paper.sections] == ["Abstract", "1 Introduction", "1.1 Scope", ""]
    assert paper.sections[1].paragraphs[0] == "Groups post papers and react to them."
    assert paper.sections[1].paragraphs[1].startswith("First we collect"), "a list item's paragraph is read"
    assert "Skip to content" not in str(paper) and "tracked" not in str(paper)
    assert paper.references == ("B. Writer. Chat and science. 2021.",)
    assert paper.licence == "creativecommons.org/licenses/by-sa/4.0/"


def test_a_pdf_is_read_into_its_headed_sections_and_its_references_apart() -> None:
    lines = [
        "Streams of Papers in Research Chat",
        "Abstract",
        "We ask how groups read papers together over a year of meetings.",
        "1 Introduction",
        "Research groups share papers in their channels and discuss them in threads week",
        "after week. This paper looks at that.",
        "2 Method",
        "We counted the papers each group discussed in its threads over fifty-",
        "two weeks.",
        "References",
        "[1] A. Author. Papers in channels. 2020.",
    ]
    paper = parse_fulltext(text_pdf([lines]), "pdf")
    assert paper.title == "Streams of Papers in Research Chat"
    assert [s.heading for s in paper.sections] == ["Abstract", "1 Introduction", "2 Method"]
    assert paper.sections[1].paragraphs == (
        "Research groups share papers in their channels and discuss them in threads week after week. This paper "
        "looks at that.",
    )
    assert paper.sections[2].paragraphs == (
        "We counted the papers each group discussed in its threads over fiftytwo weeks.",
    )
    assert paper.references == ("[1] A. Author. Papers in channels. 2020.",)


def test_hostile_pdfs_cost_at_most_their_caps_and_say_what_they_are() -> None:
    with pytest.raises(FullTextError, match="no text layer"):
        parse_fulltext(blank_pdf(3), "pdf")
    with pytest.raises(FullTextError, match="not a PDF"):
        parse_fulltext(b"<html>not a pdf</html>", "pdf")
    long = text_pdf([["A line of text long enough to count as the words of a page."] * 5] * 500)
    started = time.monotonic()
    paper = parse_fulltext(long, "pdf")
    assert paper.notes == (f"pages after {MAX_PAGES} of 500",)
    assert paper.chars < 60 * 5 * 70, "only the pages read are kept"
    started = time.monotonic()
    with pytest.raises(FullTextError):
        parse_fulltext(bomb_pdf(300), "pdf")  # 300 MB inflated: pypdf stops it at its own cap
    assert time.monotonic() - started < 10


def test_a_long_paragraph_becomes_passages_cut_at_its_sentences() -> None:
    from socialrag.knowledge.fulltext import FullText, Section, passages
    from socialrag.knowledge.fulltext.model import PASSAGE_CHARS

    sentence = "Each thread was read twice by two members of the lab. "
    paper = FullText("T", (Section("3 Data", (sentence * 60, "A short one.")),))
    cut = passages(paper)
    assert all(len(p.text) <= PASSAGE_CHARS for p in cut) and all(p.section == "3 Data" for p in cut)
    assert all(p.text.endswith(".") for p in cut), "cut at a sentence's end"
    assert " ".join(p.text for p in cut[:-1]) == (sentence * 60).strip() and cut[-1].text == "A short one."
    one = FullText("T", (Section("", ("x" * (PASSAGE_CHARS * 2 + 5),)),))
    assert [len(p.text) for p in passages(one)] == [PASSAGE_CHARS, PASSAGE_CHARS, 5], "no sentence end: cut anyway"


def test_short_paragraphs_run_on_into_the_next_so_passages_follow_the_texts_length() -> None:
    from socialrag.knowledge.fulltext import FullText, Section, passages
    from socialrag.knowledge.fulltext.model import PASSAGE_CHARS, SHORT_CHARS

    lines = tuple(f"Line {n} of the table." for n in range(2_000))  # 2,000 paragraphs of about 20 characters
    paper = FullText("T", (Section("2 Data", lines), Section("3 Method", ("A short one.", "Another."))))
    cut = passages(paper)
    data = [p for p in cut if p.section == "2 Data"]
    assert len(data) < sum(len(x) + 1 for x in lines) // SHORT_CHARS + 2, len(data)
    assert all(SHORT_CHARS <= len(p.text) <= PASSAGE_CHARS for p in data[:-1])
    assert " ".join(p.text for p in data) == " ".join(lines), "nothing lost, nothing moved"
    assert [p.text for p in cut if p.section == "3 Method"] == ["A short one. Another."], "never across sections"
    long = "Each thread was read twice by two members of the lab. " * 10
    assert [p.text for p in passages(FullText("T", (Section("", (long, long)),)))] == [long.strip()] * 2


def test_passages_stop_at_the_cap_inside_a_section_too() -> None:
    """One section can hold the whole file: the cap holds between its paragraphs, not only between sections."""
    from socialrag.knowledge.fulltext import MAX_PASSAGES, FullText, Section, passages

    paragraph = "A paragraph of the results that is long enough to be a passage of its own. " * 4
    paper = FullText("T", (Section("4 Results", (paragraph,) * (MAX_PASSAGES + 500)), Section("5 End", ("x",))))
    started = time.monotonic()
    cut = passages(paper)
    assert len(cut) == MAX_PASSAGES and {p.section for p in cut} == {"4 Results"}
    assert len(passages(paper, 10)) == 10
    assert time.monotonic() - started < 5


def test_crafted_files_are_bounded_in_time_size_and_kind_of_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PDF whose text takes long to extract is given up at its deadline (it is read in a process of its own, with
    CPU and memory limits); headings and titles are cut; NUL and lone surrogates never reach the database; a deep
    nest of sections or an unknown encoding is a ``FullTextError``, not a crash."""
    from socialrag.knowledge.fulltext import pdf
    from socialrag.knowledge.fulltext.model import HEADING_CHARS

    slow = text_pdf([["(words) and more words on a line that goes on " * 3] * 40] * 60)
    monkeypatch.setattr(pdf, "PDF_SECONDS", 0.05)
    started = time.monotonic()
    with pytest.raises(FullTextError, match="took more than"):
        parse_fulltext(slow, "pdf")
    assert time.monotonic() - started < 5
    monkeypatch.undo()

    nul = text_pdf(
        [["1 Intro\x00duction", "Text with a NUL\x00 inside it that goes on long enough to be a body. " * 5]]
    )
    paper = parse_fulltext(nul, "pdf")
    assert "\x00" not in repr(paper) and paper.sections[0].heading == "1 Introduction"

    long_title = b"<article><front><article-meta><title-group><article-title>" + b"T" * 50_000
    long_title += b"</article-title></title-group></article-meta></front><body><sec><title>" + b"H" * 50_000
    long_title += (
        b"</title><p>" + b"Body text of the paper that is long enough to count. " * 5 + b"</p></sec></body></article>"
    )
    paper = parse_fulltext(long_title, "jats")
    assert len(paper.title or "") <= 300 and len(paper.sections[0].heading) <= HEADING_CHARS

    deep = b"<article><body>" + b"<sec><title>S</title>" * 3000 + b"<p>x</p>" + b"</sec>" * 3000 + b"</body></article>"
    with pytest.raises(FullTextError):
        parse_fulltext(deep, "jats")  # no body text within the depth read: said, not a RecursionError
    with pytest.raises(FullTextError, match=r"cannot be read|not well-formed"):
        parse_fulltext(b'<?xml version="1.0" encoding="x-nonexistent"?><article/>', "jats")
