"""JATS XML (PubMed Central's open-access subset, bioRxiv, medRxiv) read into sections, with ``defusedxml``: a
document type that declares anything of its own (an entity, the way an XML bomb or an outside file gets in, or a
default attribute, copied onto every element) is refused, never expanded; elements are counted as they are parsed
(``Elements``), and the tree is walked with stacks of its own, so that no file costs more than its element count."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from xml.etree.ElementTree import Element, ParseError

import defusedxml
from defusedxml.ElementTree import DefusedXMLParser

from socialrag.knowledge.fulltext.model import (
    HEADING_CHARS,
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

XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
NOT_TEXT = {"fig", "table-wrap", "disp-formula", "inline-formula", "supplementary-material", "graphic"}


def texts(element: Element) -> Iterator[str]:
    """``element.itertext()`` walked with a stack of its own: ElementTree's recurses, each piece of text costing as
    many steps as the element is deep (and a crafted file nested past Python's recursion limit overflows it)."""
    stack: list[Any] = [element]
    while stack:
        item = stack.pop()
        if isinstance(item, str):  # an element's tail, due once its children are done
            yield item
            continue
        if isinstance(item.tag, str) and item.text:
            yield item.text
        stack.extend(x for child in reversed(item) for x in ((child.tail or ""), child))


def text_of(element: Element) -> str:
    return "".join(texts(element))


def _text(element: Element | None) -> str:
    return clean(text_of(element)) if element is not None else ""


def _paragraph(p: Element) -> str:
    """A paragraph's words as written (cleaned when kept), a formula or a figure inside it left out (its caption
    is not the paragraph)."""
    parts: list[str] = [p.text or ""]
    for child in p:
        if child.tag not in NOT_TEXT:
            parts.append(text_of(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _paragraphs(sec: Element) -> list[Element]:
    """A section's paragraphs, in a list, a quote or a box included; a subsection's, a figure's or a table's
    not."""
    found: list[Element] = []
    stack = list(reversed(list(sec)))
    while stack:
        element = stack.pop()
        if element.tag == "p":
            found.append(element)
        elif element.tag not in NOT_TEXT and element.tag not in ("sec", "title", "label"):
            stack.extend(reversed(list(element)))
    return found


INTERNAL_DTD = (
    "the XML declares a document type of its own (entities, attributes or elements in its DOCTYPE), which is never read"
)


class _Parser(DefusedXMLParser):
    """``defusedxml``'s parser that also refuses a document type with declarations of its own (an internal
    subset): a default attribute declared there (``<!ATTLIST p x CDATA "...">``) is copied onto every element
    that lacks it, so a few kilobytes of XML could fill the memory without a single entity. The files PaperPing
    reads name their DTD outside (``"JATS-archivearticle1.dtd"``), which is never fetched. Its elements are
    counted as expat meets them: past ``MAX_ELEMENTS`` or ``MAX_NESTING`` the parse stops there."""

    def __init__(self) -> None:
        super().__init__(forbid_dtd=False, forbid_entities=True, forbid_external=True)
        self.parser.StartDoctypeDeclHandler = self._refuse_own_declarations
        self.elements = Elements()

    def _start(self, tag: str, attr_list: list[str]) -> Any:
        self.elements.start(len(attr_list) // 2)
        return super()._start(tag, attr_list)

    def _end(self, tag: str) -> Any:
        self.elements.end()
        return super()._end(tag)

    @staticmethod
    def _refuse_own_declarations(name: str, sysid: str | None, pubid: str | None, has_internal_subset: bool) -> None:
        if has_internal_subset:
            raise FullTextError(INTERNAL_DTD)


def read_xml(data: bytes) -> Any:
    """The root element of ``data``, parsed with ``defusedxml``: a document type is allowed when it only names its
    DTD; declarations of its own (entities, default attributes, elements) or an outside file never
    (``FullTextError``, as for XML that is not well-formed)."""
    parser = _Parser()
    try:
        parser.feed(data)
        return parser.close()
    except FullTextError:
        raise
    except defusedxml.DefusedXmlException as exc:
        raise FullTextError(f"the XML declares entities or outside files, which are never expanded ({exc})") from None
    except (ParseError, ValueError) as exc:
        raise FullTextError(f"the XML is not well-formed ({exc})") from None


def parse_jats(data: bytes) -> FullText:
    return read_article(read_xml(data))


def read_article(root: Element) -> FullText:
    """A JATS ``<article>`` already parsed (its elements' names plain) read into sections."""
    if root.tag != "article":
        raise FullTextError(f"the XML is not a JATS article (its root is <{root.tag}>)")
    meta = root.find("front/article-meta")
    found = meta.find("title-group/article-title") if meta is not None else None
    title = clean(text_of(found), HEADING_CHARS) if found is not None else ""
    budget = Budget()
    sections: list[Section] = []
    body = root.find("body")
    if body is not None:
        loose = [t for t in (budget.take(_paragraph(p)) for p in body.findall("p")) if t]
        if loose:
            sections.append(Section("", tuple(loose)))
        for sec in body.findall("sec"):
            _walk(sec, (), sections, budget, 0)
    cited = root.findall("back/ref-list/ref")[:MAX_REFERENCES]
    references = [clean(text_of(ref), 300) for ref in cited]
    notes = ("text past the length kept",) if budget.cut else ()
    return FullText(title or None, tuple(sections[:MAX_SECTIONS]), tuple(references), _licence(root), "jats", notes)


MAX_DEPTH = 8  # subsections deeper than this are read as part of their parent's text, not walked


def _walk(sec: Element, parents: tuple[str, ...], out: list[Section], budget: Budget, depth: int) -> None:
    label, title = sec.find("label"), sec.find("title")
    parts = [text_of(x) for x in (label, title) if x is not None]
    heading = heading_of(" ".join(parts))
    path = (*parents, heading) if heading else parents
    paragraphs = [t for t in (budget.take(_paragraph(p)) for p in _paragraphs(sec)) if t]
    if paragraphs and len(out) < MAX_SECTIONS:
        out.append(Section(heading_of(" › ".join(path)), tuple(paragraphs)))
    if depth >= MAX_DEPTH:
        return
    for child in sec.findall("sec"):
        if len(out) >= MAX_SECTIONS:
            return
        _walk(child, path, out, budget, depth + 1)


def _licence(root: Element) -> str | None:
    """The licence the article states: its address when given, else its words (cut)."""
    found = root.find("front/article-meta/permissions/license")
    if found is None:
        return None
    href = found.get(XLINK_HREF) or found.get("href")
    if href:
        return href.strip()[:300]
    return _text(found)[:300] or None
