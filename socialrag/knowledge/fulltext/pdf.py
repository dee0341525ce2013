"""A PDF read into sections with ``pypdf``: the text of its first ``MAX_PAGES`` pages, split at the lines that are
headings ("3 Method", "4.2 Datasets", "Related Work"), the references apart from "References" on. ``pypdf``'s
own limits stop a stream that would decompress without end; a PDF with no text layer (a scan) says so."""

from __future__ import annotations

import io
import logging
import re

from socialrag.knowledge.fulltext.model import (
    MAX_PAGES,
    MAX_REFERENCES,
    MAX_SECTIONS,
    Budget,
    FullText,
    FullTextError,
    Section,
    clean,
)

# "3 Method", "4.2 Datasets", "IV. Results", "A.1 Prompts"; not a footnote ("1 As the noun is almost always,")
NUMBERED = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2}){0,2}\.?|[IVX]{1,4}\.|[A-H](?:\.\d{1,2})?)\s+([A-Z][^.!?,;]{2,70})$")
NAMED = re.compile(
    r"^(abstract|introduction|background|related work|method|methods|methodology|approach|experiments?|"
    r"experimental setup|results|discussion|analysis|evaluation|conclusions?|limitations|"
    r"acknowledge?ments|ethics statement|appendix)$",
    re.IGNORECASE,
)
REFERENCES = re.compile(r"^(\d{1,2}\.?\s+)?(references|bibliography)$", re.IGNORECASE)
LEAST_TEXT = 200  # characters a PDF with a text layer has at least


def parse_pdf(data: bytes) -> FullText:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # a malformed file is said once, by the error below
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise FullTextError("the PDF is encrypted")
        pages = reader.pages
        count = len(pages)
        texts = [pages[i].extract_text() or "" for i in range(min(count, MAX_PAGES))]
        title = (reader.metadata.title if reader.metadata else None) or None
    except FullTextError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as exc:
        raise FullTextError(f"the PDF cannot be read ({type(exc).__name__}: {str(exc)[:200]})") from None
    if sum(len(t.strip()) for t in texts) < LEAST_TEXT:
        raise FullTextError("the PDF has no text layer (a scan or images only)")
    lines = [line.strip() for text in texts for line in text.splitlines()]
    notes = (f"pages after {MAX_PAGES} of {count}",) if count > MAX_PAGES else ()
    named = clean(str(title)) if title else _first_line(lines)
    if lines and named and clean(next((x for x in lines if x), "")) == named:
        lines = lines[lines.index(next(x for x in lines if x)) + 1 :]  # the title is not the first paragraph
    found = _sections(lines)
    return FullText(named, *found, None, "pdf", notes)


def _first_line(lines: list[str]) -> str | None:
    return next((clean(line) for line in lines if len(line) > 15), None)


def _sections(lines: list[str]) -> tuple[tuple[Section, ...], tuple[str, ...]]:
    budget = Budget()
    sections: list[Section] = []
    references: list[str] = []
    heading, in_references = "", False  # the section being read, and whether the references have begun
    paragraph: list[str] = []
    paragraphs: list[str] = []

    def end_paragraph() -> None:
        if paragraph:
            kept = budget.take(clean("\n".join(paragraph)))
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
            heading, in_references = clean(line), True
            paragraphs.clear()
        elif in_references:
            if line and len(references) < MAX_REFERENCES:
                references.append(line[:300])
        elif NAMED.match(line) or (NUMBERED.match(line) and len(line) < 80):
            end_section()
            heading = clean(line)
            paragraphs.clear()
        elif not line:
            end_paragraph()
        else:
            paragraph.append(line)
            if line.endswith((".", ":")) and len(line) < 60:  # a short line closing a sentence ends a paragraph
                end_paragraph()
    end_section()
    return tuple(sections), tuple(references)
