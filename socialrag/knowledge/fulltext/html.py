"""An arXiv HTML page (LaTeXML's: ``ltx_section``, ``ltx_para``, ``ltx_bibliography``), or another article page,
read into sections with ``lxml``'s HTML parser: headings and paragraphs in document order, the bibliography apart,
scripts, styles and navigation left out. The page is parsed a piece at a time, its elements counted as they come
(``Elements``), and walked with a stack of its own; all of it in a process of its own (``html_worker``), within
``PAGE_SECONDS`` and that process's CPU time and memory, for what the parser's C code does that no count sees."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import lxml.etree
import lxml.html

from socialrag.knowledge.fulltext.apart import run_apart
from socialrag.knowledge.fulltext.model import (
    MAX_REFERENCES,
    MAX_SECTIONS,
    Budget,
    Elements,
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
CHUNK = 65_536  # bytes fed to the parser at a time, its elements counted after each
PAGE_SECONDS = 20.0  # wall-clock seconds the reading of a page may take


def parse_page(data: bytes, seconds: float | None = None) -> FullText:
    """``parse_html`` in a process of its own, within ``PAGE_SECONDS`` or the ``seconds`` the caller has left,
    whichever is shorter (``TimeUp`` when the caller's time is what ran out)."""
    out = run_apart("socialrag.knowledge.fulltext.html_worker", [], data, PAGE_SECONDS, seconds, "page")
    if out.get("error"):
        raise FullTextError(str(out["error"])[:300])
    sections = tuple(Section(str(s["heading"]), tuple(str(p) for p in s["paragraphs"])) for s in out["sections"])
    title, licence = out.get("title"), out.get("licence")
    references, notes = tuple(str(r) for r in out["references"]), tuple(str(n) for n in out["notes"])
    return FullText(title and str(title), sections, references, licence and str(licence), "html", notes)


def read_html(data: bytes) -> Any:
    """The page's root element, parsed ``CHUNK`` bytes at a time: past ``MAX_ELEMENTS`` elements or
    ``MAX_NESTING`` deep, ``FullTextError`` before the rest is parsed."""
    parser = lxml.etree.HTMLPullParser(events=("start", "end"))
    parser.set_element_class_lookup(lxml.html.HtmlElementClassLookup())
    elements = Elements()
    try:
        for at in range(0, len(data), CHUNK):
            parser.feed(data[at : at + CHUNK])
            _count(parser, elements)
        root = parser.close()
        _count(parser, elements)
    except FullTextError:
        raise
    except (lxml.etree.LxmlError, ValueError) as exc:
        raise FullTextError(f"the page cannot be read as HTML ({exc})") from None
    if root is None:
        raise FullTextError("the page cannot be read as HTML (no element)")
    return root


def _count(parser: Any, elements: Elements) -> None:
    for event, element in parser.read_events():
        if event == "start":
            elements.start(len(element.attrib))
        else:
            elements.end()


def parse_html(data: bytes) -> FullText:
    root = read_html(data)
    # LaTeXML's document, else the page's article holding the most text (not a sidebar's teaser), else the page; an
    # article inside another holds no more than it, so only the outermost are weighed (each text counted once)
    articles = root.xpath("//article[contains(@class, 'ltx_document')]") or sorted(
        root.xpath("//article[not(ancestor::aside) and not(ancestor::nav) and not(ancestor::article)]"),
        key=lambda a: -len(a.text_content()),
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

    cited = -1  # how deep the element the bibliography's heading heads is (its items are the references); -1: none
    for element, depth in _walk(main):
        tag = element.tag
        classes = element.get("class") or ""
        if cited >= 0 and depth <= cited:
            cited = -1  # past the bibliography: text again, under no heading
            heading = ""
        if tag in HEADINGS and element is not (title_found[0] if title_found else None):
            close()
            heading = heading_of(element.text_content())
            paragraphs.clear()
            # the bibliography is what its heading heads; the next heading of another kind ends it
            cited = depth - 1 if REFERENCES.match(heading) or "ltx_title_bibliography" in classes else -1
        elif (tag == "li" and "ltx_bibitem" in classes) or (cited >= 0 and tag in ("li", "p")):
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


def _walk(element: Any) -> Iterator[tuple[Any, int]]:
    """The elements below ``element`` in document order, each with how deep it is (1: a child), what is not the
    paper's text left out (and, for a paragraph or a reference, not looked into again); walked with a stack of its
    own, so that an element costs the same however deep it is."""
    stack = [(child, 1) for child in reversed(element)]
    while stack:
        child, depth = stack.pop()
        if not isinstance(child.tag, str) or child.tag in SKIPPED:
            continue
        yield child, depth
        bibitem = child.tag == "li" and "ltx_bibitem" in (child.get("class") or "")
        if child.tag != "p" and child.tag not in HEADINGS and not bibitem:
            stack.extend((grandchild, depth + 1) for grandchild in reversed(child))
