"""A JATS article's front matter as a ``Paper``: its title, abstract, authors, journal, date and identifiers (DOI,
PMCID, PMID), read with ``defusedxml`` as its body is. For a file PaperPing holds whole (the demo's papers, a
benchmark's), so that the paper is known by what it says of itself."""

from __future__ import annotations

from datetime import date
from xml.etree.ElementTree import Element

from socialrag.knowledge.fulltext.jats import read_xml, text_of
from socialrag.knowledge.fulltext.model import FullTextError, clean
from socialrag.models import Author, Paper

ABSTRACT_CHARS = 5000


def _text(element: Element | None, most: int = 1000) -> str | None:
    return clean(text_of(element), most) or None if element is not None else None


def _date(meta: Element) -> date | None:
    for kind in ("epub", "ppub", "collection", None):
        for found in meta.findall("pub-date"):
            if kind is None or found.get("pub-type") == kind or found.get("date-type") == kind:
                year, month, day = (found.findtext(k) or "" for k in ("year", "month", "day"))
                if year.isdigit():
                    try:
                        return date(int(year), int(month) if month.isdigit() else 1, int(day) if day.isdigit() else 1)
                    except ValueError:
                        continue
    return None


def read_jats_front(data: bytes, source: str = "jats") -> Paper:
    """The article's metadata; ``FullTextError`` when the file is not a JATS article."""
    start = data.find(b"<article")
    if start < 0:
        raise FullTextError("the file is not a JATS article")
    root = read_xml(data[start:])
    meta = root.find("front/article-meta")
    if meta is None:
        raise FullTextError("the article has no front matter")
    ids = {}
    for kind, scheme in (("doi", "doi"), ("pmc", "pmcid"), ("pmid", "pmid")):
        value = (meta.findtext(f"article-id[@pub-id-type='{kind}']") or "").strip()
        if value:
            ids[scheme] = f"PMC{value.removeprefix('PMC')}" if scheme == "pmcid" else value
    authors = tuple(
        Author(clean(f"{c.findtext('name/given-names') or ''} {c.findtext('name/surname') or ''}", 200))
        for c in meta.findall("contrib-group/contrib")
        if c.get("contrib-type") == "author" and c.find("name") is not None
    )
    published = _date(meta)
    journal = root.findtext("front/journal-meta/journal-id[@journal-id-type='nlm-ta']")
    return Paper(
        ids=ids, source=source, title=_text(meta.find("title-group/article-title"), 500),
        abstract=_text(meta.find("abstract"), ABSTRACT_CHARS), authors=authors[:100],
        venue=clean(journal, 200) if journal else None, year=published.year if published else None,
        publication_date=published, url=f"https://doi.org/{ids['doi']}" if "doi" in ids else None,
    )  # fmt: skip
