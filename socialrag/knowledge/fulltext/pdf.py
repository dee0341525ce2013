"""A PDF read into sections with ``pypdf``: the text of its first ``MAX_PAGES`` pages, split at the lines that are
headings ("3 Method", "4.2 Datasets", "Related Work"), the references apart from "References" on. ``pypdf``'s
own limits stop a stream that would decompress without end; a PDF with no text layer (a scan) says so."""

from __future__ import annotations

import re

from socialrag.knowledge.fulltext.apart import run_apart
from socialrag.knowledge.fulltext.model import (
    MAX_PAGES,
    MAX_REFERENCES,
    MAX_SECTIONS,
    Budget,
    FullText,
    FullTextError,
    Section,
    clean,
    heading_of,
)

# "3 Method", "4.2 Datasets", "IV. Results", "A.1 Prompts"; not a footnote ("1 As the noun is almost always,")
NUMBERED = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2}){0,2}\.?|[IVX]{1,4}\.|[A-H](?:\.\d{1,2})?)\s+([A-Z][^.!?,;]{2,70})$")
HEADING_WORDS = 8  # a numbered line of more words is a sentence ("12 Participants completed the survey in ...")
NAMED = re.compile(
    r"^(abstract|introduction|background|related work|method|methods|methodology|approach|experiments?|"
    r"experimental setup|results|discussion|analysis|evaluation|conclusions?|limitations|"
    r"acknowledge?ments|ethics statement|appendix)$",
    re.IGNORECASE,
)
APPENDIX = re.compile(
    r"^(appendix|appendices|supplementary material|[A-H](?:\.\d{1,2})?\s+[A-Z][^.!?,;]{2,60})$", re.IGNORECASE
)
REFERENCES = re.compile(r"^(\d{1,2}\.?\s+)?(references|bibliography)$", re.IGNORECASE)
LEAST_TEXT = 200  # characters a PDF with a text layer has at least


PDF_SECONDS = 20.0  # wall-clock seconds the extraction may take


def parse_pdf(data: bytes, seconds: float | None = None) -> FullText:
    """``data`` read into sections, its text extracted in a process of its own within ``PDF_SECONDS`` or the
    ``seconds`` the caller has left, whichever is shorter (``TimeUp`` when the caller's time is what ran out)."""
    worker = "socialrag.knowledge.fulltext.pdf_worker"
    out = run_apart(worker, [str(MAX_PAGES)], data, PDF_SECONDS, seconds, "PDF")
    if out.get("error"):
        raise FullTextError(f"the PDF cannot be read ({str(out['error'])[:200]})")
    texts = [str(t) for t in out.get("pages") or []]
    count = int(out.get("count") or 0)
    if sum(len(t.strip()) for t in texts) < LEAST_TEXT:
        raise FullTextError("the PDF has no text layer (a scan or images only)")
    lines = [line.strip() for text in texts for line in text.splitlines()]
    notes = (f"pages after {MAX_PAGES} of {count}",) if count > MAX_PAGES else ()
    title = out.get("title")
    named = clean(str(title))[:300] if title else _first_line(lines)
    if lines and named and clean(next((x for x in lines if x), ""))[:300] == named:
        lines = lines[lines.index(next(x for x in lines if x)) + 1 :]  # the title is not the first paragraph
    sections, references = _sections(lines)
    if len(sections) > 1 and not sections[0].heading and sections[1].heading.lower() == "abstract":
        sections = sections[1:]  # the title, authors and affiliations before the abstract are not its text
    return FullText(named, sections, references, _licence(texts[:2]), "pdf", notes)


LICENCE_URL = re.compile(r"creativecommons\.org/licenses/[a-z\-]+/\d\.\d", re.IGNORECASE)
LICENCE_WORDS = re.compile(r"Creative\s+Commons\s+Attribution[\w\s\-]{0,40}?\d\.\d(?:\s+International)?")


def _licence(first_pages: list[str]) -> str | None:
    """The Creative Commons licence the first pages state (its address, else its words), None when they state
    none: a publisher's PDF prints it on its first page."""
    text = " ".join(" ".join(first_pages).split())
    found = LICENCE_URL.search(text) or LICENCE_WORDS.search(text)
    return ("https://" + found.group(0) if found.re is LICENCE_URL else found.group(0)) if found else None


def _first_line(lines: list[str]) -> str | None:
    return next((clean(line[:1000])[:300] for line in lines if len(line) > 15), None)


def _sections(lines: list[str]) -> tuple[tuple[Section, ...], tuple[str, ...]]:
    budget = Budget()
    sections: list[Section] = []
    references: list[str] = []
    heading, in_references = "", False  # the section being read, and whether the references have begun
    paragraph: list[str] = []
    paragraphs: list[str] = []

    def end_paragraph() -> None:
        if paragraph:
            kept = budget.take("\n".join(paragraph))
            if kept:
                paragraphs.append(kept)
            paragraph.clear()

    def end_section() -> None:
        end_paragraph()
        if paragraphs and len(sections) < MAX_SECTIONS:
            sections.append(Section(heading, tuple(paragraphs)))

    for line in lines:
        if REFERENCES.match(line):
            end_section()
            heading, in_references = heading_of(line), True
            paragraphs.clear()
        elif in_references and APPENDIX.match(line):  # an appendix after the references is text again
            heading, in_references = heading_of(line), False
            paragraphs.clear()
        elif in_references:
            if line and len(references) < MAX_REFERENCES:
                references.append(line[:300])
        elif NAMED.match(line) or (NUMBERED.match(line) and len(line.split()) <= HEADING_WORDS):
            end_section()
            heading = heading_of(line)
            paragraphs.clear()
        elif not line:
            end_paragraph()
        else:
            paragraph.append(line)
            if line.endswith((".", ":")) and len(line) < 60:  # a short line closing a sentence ends a paragraph
                end_paragraph()
    end_section()
    return tuple(sections), tuple(references)
