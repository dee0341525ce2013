"""Files crafted against the full-text reader, each built here and served where a real host would serve it: a
DOCTYPE whose default attribute would be copied onto every paragraph; an article nested thousands of elements deep
in PubMed Central's answer; a file that breaks the reader in a way nobody foresaw; a small PDF or JATS file of
thousands of one-word paragraphs. Each is said as the paper's note (unreadable: looked for again after 30 days, not
the next day), or read into no more passages than its text's length gives, and costs no more than a real paper."""

from __future__ import annotations

import pytest

from socialrag.knowledge.fulltext.model import SHORT_CHARS
from socialrag.knowledge.papers import fulltext_source
from tests.support.fulltext_hosts import NXML, OAI_NS, Answer, Web, pmc_record
from tests.support.pdfs import text_pdf
from tests.unit.test_fulltext_hosts import PMC, reader


def test_pmcs_answer_with_a_default_attribute_in_its_doctype_is_unreadable_and_never_copied() -> None:
    """No entity at all: a 50 KB default attribute on ``<p>`` and 2,000 empty paragraphs would be 100 MB once parsed
    (a megabyte and thousands more fill any memory)."""
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE OAI-PMH [<!ATTLIST p x CDATA "' + b"A" * 50_000 + b'">]>'
        b"<OAI-PMH><GetRecord><record><metadata><article><body><sec><title>M</title>" + b"<p/>" * 2_000
        + b"</sec></body></article></metadata></record></GetRecord></OAI-PMH>"
    )  # fmt: skip
    web = Web()
    web.on(PMC, Answer(200, bomb, "text/xml"))
    got = reader(web).read({"pmcid": "PMC3460867"})
    assert got.status == "unreadable" and got.passages == ()
    assert "PubMed Central" in (got.note or "") and "document type of its own" in (got.note or ""), got.note


def _in_pmcs_answer(article: bytes) -> bytes:
    head = f'<OAI-PMH xmlns="{OAI_NS}"><GetRecord><record><metadata>'.encode()
    return head + article + b"</metadata></record></GetRecord></OAI-PMH>"


DEEP = 5_000  # far past Python's recursion limit, far within what expat parses


@pytest.mark.parametrize(
    ("article", "said"),
    [
        (b'<article xmlns="x">' + b"<b>" * DEEP + b"</b>" * DEEP + b"</article>", "more than 200 deep"),
        (
            b'<article xmlns="x"><body><sec><title>T</title><p>'
            + b"<b>" * DEEP
            + b"words " * 50
            + b"</b>" * DEEP
            + b"</p></sec></body></article>",
            "more than 200 deep",
        ),
    ],
    ids=["deep and empty", "deep paragraph"],
)
def test_an_article_nested_thousands_deep_in_pmcs_answer_is_unreadable_not_a_crash(article: bytes, said: str) -> None:
    web = Web()
    web.on(PMC, Answer(200, _in_pmcs_answer(article), "text/xml"))
    got = reader(web).read({"pmcid": "PMC3460867"})
    assert got.status == "unreadable" and said in (got.note or ""), got.note


@pytest.mark.parametrize("error", [RecursionError, MemoryError, KeyError])
def test_a_file_that_breaks_the_reader_in_an_unforeseen_way_is_unreadable_with_what_happened(
    monkeypatch: pytest.MonkeyPatch, error: type[Exception]
) -> None:
    """The reader never raises for what a file does: the worker would take the error for a host that did not
    answer and fetch the same file again the next day."""

    def breaks(*args: object) -> None:
        raise error("deep inside")

    monkeypatch.setattr(fulltext_source, "article_of", breaks)
    web = Web()
    web.on(PMC, Answer(200, pmc_record(NXML["pone.0046493.nxml"], 3460867), "text/xml"))
    got = reader(web).read({"pmcid": "PMC3460867"})
    assert got.status == "unreadable" and got.source_url == PMC
    assert got.note == f"PubMed Central: the file broke the reader ({error.__name__})"


def test_a_small_pdf_of_thousands_of_short_lines_gives_passages_by_its_texts_length() -> None:
    """One heading and 3,000 lines a page on ten pages: 30,000 paragraphs of a word each in 500 KB, which were
    30,000 passages to store, embed and compare; now a passage holds a couple of hundred characters."""
    lines = ["Xa."] * 3_000
    web = Web()
    web.on("https://acl.test/2020.acl-main.1.pdf", Answer(200, text_pdf([["Results", *lines]] + [lines] * 9)))
    got = reader(web).read({"acl": "2020.acl-main.1"})
    assert got.status == "read", got.note
    text = sum(len(t) + 1 for _, t in got.passages)
    assert 100 < len(got.passages) <= text // SHORT_CHARS + 1, len(got.passages)


def test_a_jats_section_of_thousands_of_tiny_paragraphs_gives_passages_by_its_texts_length() -> None:
    body = b"<sec><title>Methods</title>" + b"<p>a.</p>" * 20_000 + b"</sec>"
    article = b"<article><front><article-meta><title-group><article-title>T</article-title></title-group>"
    article += b"</article-meta></front><body>" + body + b"</body></article>"
    web = Web()
    web.on(PMC, Answer(200, _in_pmcs_answer(article), "text/xml"))
    got = reader(web).read({"pmcid": "PMC3460867"})
    assert got.status == "read" and {s for s, _ in got.passages} == {"Methods"}
    assert len(got.passages) <= 20_000 * 3 // SHORT_CHARS + 1, len(got.passages)


def test_passages_past_the_cap_are_left_out_and_said_in_the_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fulltext_source, "MAX_PASSAGES", 5)
    web = Web()
    web.on(PMC, Answer(200, pmc_record(NXML["pone.0046493.nxml"], 3460867), "text/xml"))
    got = reader(web).read({"pmcid": "PMC3460867"})
    assert got.status == "read" and len(got.passages) == 5
    assert got.note == "passages after 5", got.note
