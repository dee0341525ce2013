"""An arXiv HTML page (LaTeXML's: ``ltx_section``, ``ltx_para``, ``ltx_bibliography``), or another article page,
read into sections with ``lxml``'s HTML parser: headings and paragraphs in document order, the bibliography apart,
scripts, styles and navigation left out."""

from __future__ import annotations

import re
from typing import Any

import lxml.etree
import lxml.html

from socialrag.knowledge.fulltext.model import (
    MAX_REFERENCES,
    MAX_SECTIONS,
    Budget,
    FullText,
    FullTextError,
    Section,
    clean,
    heading_of,
)

SKIPPED = {"script", "style", "nav", "footer", "aside", "noscript", "math", "svg", "figure", "table", "button", "form"}
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
REFERENCES = re.compile(r"^(\d+\.?\s*)?(references|bibliography|works cited)$", re.IGNORECASE)
LICENCE = re.compile(r"creativecommons\.org/(licenses|publicdomain)/[a-z0-9.\-/]+", re.IGNORECASE)


def parse_html(data: bytes) -> FullText:
    try:
        root: Any = lxml.html.fromstring(data)
    except (lxml.etree.ParserError, ValueError) as exc:
        raise FullTextError(f"the page cannot be read as HTML ({exc})") from None
    # LaTeXML's document, else the page's article holding the most text (not a sidebar's teaser), else the page
    articles = root.xpath("//article[contains(@class, 'ltx_document')]") or sorted(
        root.xpath("//article[not(ancestor::aside) and not(ancestor::nav)]"),
        key=lambda a: -len(a.text_content()[:1_000_000]),
    )
    main = articles[0] if len(articles) else root
    title_found = main.xpath(".//h1[contains(@class, 'ltx_title_document')]") or root.xpath("//h1") or []
    title = clean(title_found[0].text_content(), 300) if title_found else clean(root.findtext(".//title") or "", 300)
    budget = Budget()
    sections: list[Section] = []
    references: list[str] = []
    heading = ""
    paragraphs: list[str] = []

    def close() -> None:
        if paragraphs and len(sections) < MAX_SECTIONS:
            sections.append(Section(heading, tuple(paragraphs)))

    cited: Any = None  # the element the bibliography's heading heads: its items are the references
    for element in _walk(main):
        tag = element.tag
        classes = element.get("class") or ""
        if cited is not None and cited not in element.iterancestors():
            cited = None  # past the bibliography: text again, under no heading
            heading = ""
        if tag in HEADINGS and element is not (title_found[0] if title_found else None):
            close()
            heading = heading_of(element.text_content())
            paragraphs.clear()
            # the bibliography is what its heading heads; the next heading of another kind ends it
            cited = element.getparent() if REFERENCES.match(heading) or "ltx_title_bibliography" in classes else None
        elif (tag == "li" and "ltx_bibitem" in classes) or (cited is not None and tag in ("li", "p")):
            if len(references) < MAX_REFERENCES:
                references.append(clean(element.text_content(), 300))
        elif tag == "p":
            kept = budget.take(element.text_content())
            if kept:
                paragraphs.append(kept)
    close()
    licence = next((m.group(0) for href in root.xpath("//a/@href") if (m := LICENCE.search(str(href)))), None)
    notes = ("text past the length kept",) if budget.cut else ()
    return FullText(title or None, tuple(sections), tuple(r for r in references if r), licence, "html", notes)


def _walk(element: Any) -> Any:
    """The elements in document order, what is not the paper's text left out (and, for a paragraph or a reference,
    not looked into again)."""
    for child in element:
        if not isinstance(child.tag, str) or child.tag in SKIPPED:
            continue
        yield child
        bibitem = child.tag == "li" and "ltx_bibitem" in (child.get("class") or "")
        if child.tag != "p" and child.tag not in HEADINGS and not bibitem:
            yield from _walk(child)
