"""JATS XML (PubMed Central's open-access subset, bioRxiv, medRxiv) read into sections, with ``defusedxml``: an
entity declaration (the way an XML bomb or an outside file gets in) is refused, never expanded."""

from __future__ import annotations

from typing import Any
from xml.etree.ElementTree import Element, ParseError

import defusedxml
import defusedxml.ElementTree

from socialrag.knowledge.fulltext.model import (
    MAX_REFERENCES,
    MAX_SECTIONS,
    Budget,
    FullText,
    FullTextError,
    Section,
    clean,
)

XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
NOT_TEXT = {"fig", "table-wrap", "disp-formula", "inline-formula", "supplementary-material", "graphic"}


def _text(element: Element | None) -> str:
    return clean("".join(element.itertext())) if element is not None else ""


def _paragraph(p: Element) -> str:
    """A paragraph's words, a formula or a figure inside it left out (its caption is not the paragraph)."""
    parts: list[str] = [p.text or ""]
    for child in p:
        if child.tag not in NOT_TEXT:
            parts.append("".join(child.itertext()))
        parts.append(child.tail or "")
    return clean("".join(parts))


def parse_jats(data: bytes) -> FullText:
    try:
        root: Any = defusedxml.ElementTree.fromstring(
            data, forbid_dtd=False, forbid_entities=True, forbid_external=True
        )
    except defusedxml.DefusedXmlException as exc:
        raise FullTextError(f"the XML declares entities or outside files, which are never expanded ({exc})") from None
    except ParseError as exc:
        raise FullTextError(f"the XML is not well-formed ({exc})") from None
    if root.tag != "article":
        raise FullTextError(f"the XML is not a JATS article (its root is <{root.tag}>)")
    meta = root.find("front/article-meta")
    title = _text(meta.find("title-group/article-title")) if meta is not None else ""
    budget = Budget()
    sections: list[Section] = []
    body = root.find("body")
    if body is not None:
        loose = [t for t in (budget.take(_paragraph(p)) for p in body.findall("p")) if t]
        if loose:
            sections.append(Section("", tuple(loose)))
        for sec in body.findall("sec"):
            _walk(sec, (), sections, budget)
    references = [clean(_text(ref))[:300] for ref in root.findall("back/ref-list/ref")][:MAX_REFERENCES]
    notes = ("text past the length kept",) if budget.cut else ()
    return FullText(title or None, tuple(sections[:MAX_SECTIONS]), tuple(references), _licence(root), "jats", notes)


def _walk(sec: Element, parents: tuple[str, ...], out: list[Section], budget: Budget) -> None:
    heading = " ".join(x for x in (_text(sec.find("label")), _text(sec.find("title"))) if x)
    path = (*parents, heading) if heading else parents
    paragraphs = [t for t in (budget.take(_paragraph(p)) for p in sec.findall("p")) if t]
    if paragraphs:
        out.append(Section(" › ".join(path), tuple(paragraphs)))
    for child in sec.findall("sec"):
        if len(out) >= MAX_SECTIONS:
            return
        _walk(child, path, out, budget)


def _licence(root: Element) -> str | None:
    """The licence the article states: its address when given, else its words (cut)."""
    found = root.find("front/article-meta/permissions/license")
    if found is None:
        return None
    href = found.get(XLINK_HREF) or found.get("href")
    if href:
        return href.strip()[:300]
    return _text(found)[:300] or None
