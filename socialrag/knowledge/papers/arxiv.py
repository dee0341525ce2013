"""arXiv API (Atom feed) as a fallback for arXiv papers Semantic Scholar does not know yet."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import httpx

from socialrag.errors import SourceError
from socialrag.knowledge.links import doi_identity, normalize_arxiv_id
from socialrag.knowledge.papers.http import PoliteClient
from socialrag.knowledge.papers.source import clean_text, parse_date
from socialrag.models import Author, Paper

_NS = {"a": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}
ID_LIST_LIMIT = 100

# arXiv's categories (https://arxiv.org/category_taxonomy), the only words a search's ``cat:`` matches: by archive,
# each subject as arXiv writes it; an archive without subjects (``hep-th``) is a category itself
# fmt: off
ARXIV_CATEGORIES: dict[str, tuple[str, ...]] = {
    "astro-ph": ("CO", "EP", "GA", "HE", "IM", "SR"),
    "cond-mat": ("dis-nn", "mes-hall", "mtrl-sci", "other", "quant-gas", "soft", "stat-mech", "str-el",
                 "supr-con"),
    "cs": ("AI", "AR", "CC", "CE", "CG", "CL", "CR", "CV", "CY", "DB", "DC", "DL", "DM", "DS", "ET", "FL", "GL",
           "GR", "GT", "HC", "IR", "IT", "LG", "LO", "MA", "MM", "MS", "NA", "NE", "NI", "OH", "OS", "PF", "PL",
           "RO", "SC", "SD", "SE", "SI", "SY"),
    "econ": ("EM", "GN", "TH"),
    "eess": ("AS", "IV", "SP", "SY"),
    "gr-qc": (), "hep-ex": (), "hep-lat": (), "hep-ph": (), "hep-th": (),
    "math": ("AC", "AG", "AP", "AT", "CA", "CO", "CT", "CV", "DG", "DS", "FA", "GM", "GN", "GR", "GT", "HO", "IT",
             "KT", "LO", "MG", "MP", "NA", "NT", "OA", "OC", "PR", "QA", "RA", "RT", "SG", "SP", "ST"),
    "math-ph": (),
    "nlin": ("AO", "CD", "CG", "PS", "SI"),
    "nucl-ex": (), "nucl-th": (),
    "physics": ("acc-ph", "ao-ph", "app-ph", "atm-clus", "atom-ph", "bio-ph", "chem-ph", "class-ph", "comp-ph",
                "data-an", "ed-ph", "flu-dyn", "gen-ph", "geo-ph", "hist-ph", "ins-det", "med-ph", "optics",
                "plasm-ph", "pop-ph", "soc-ph", "space-ph"),
    "q-bio": ("BM", "CB", "GN", "MN", "NC", "OT", "PE", "QM", "SC", "TO"),
    "q-fin": ("CP", "EC", "GN", "MF", "PM", "PR", "RM", "ST", "TR"),
    "quant-ph": (),
    "stat": ("AP", "CO", "ME", "ML", "OT", "TH"),
}
# fmt: on


def arxiv_categories_in(archive: str) -> tuple[str, ...]:
    """The categories of one archive (``cs`` -> ``cs.AI``, ``cs.AR``, ...; ``hep-th`` -> itself); none for a word
    that is no archive."""
    key = archive.strip().lower()
    if key not in ARXIV_CATEGORIES:
        return ()
    return tuple(f"{key}.{s}" for s in ARXIV_CATEGORIES[key]) or (key,)


_CATEGORY_KEYS = {c.lower(): c for archive in ARXIV_CATEGORIES for c in arxiv_categories_in(archive)}


def normalize_arxiv_category(word: str) -> str | None:
    """``cs.cl`` -> ``cs.CL``, ``Q-BIO.gn`` -> ``q-bio.GN`` (arXiv's categories, written in any case, as arXiv
    writes them), or None for a word that is not one of them (``cs.FOO``, ``cs``, ``hello``)."""
    return _CATEGORY_KEYS.get(word.strip().lower())


def _entries(xml_text: str) -> Iterator[tuple[ET.Element, str]]:
    """Each entry of an arXiv API answer with its id as arXiv writes it (``2401.01234v3``)."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise SourceError("arxiv", f"answer is not valid XML: {exc}") from exc
    for entry in root.findall("a:entry", _NS):
        yield entry, (entry.findtext("a:id", default="", namespaces=_NS) or "").rsplit("/abs/", 1)[-1].strip()


def papers_from_atom(xml_text: str, most: int = 2000) -> dict[str, Paper]:
    """The entries of an arXiv API answer, keyed by arXiv id (without version): the first ``most`` of them, no
    more than were asked for."""
    found: dict[str, Paper] = {}
    for n, (entry, raw_id) in enumerate(_entries(xml_text)):
        if n >= most:
            break
        ident = normalize_arxiv_id(raw_id)
        title = clean_text(entry.findtext("a:title", default="", namespaces=_NS))
        if not ident or not title or title == "Error":
            continue
        authors = tuple(
            Author(
                name=clean_text(a.findtext("a:name", default="", namespaces=_NS)) or "",
                affiliations=tuple(x.text.strip() for x in a.findall("arxiv:affiliation", _NS) if x.text),
            )
            for a in entry.findall("a:author", _NS)
        )
        ids = {"arxiv": ident}
        # the DOI the authors gave: kept only when it is one DOI (some list two, with a space between them), and
        # a claim of theirs (``Paper.claims``), not arXiv's
        doi = clean_text(entry.findtext("arxiv:doi", default=None, namespaces=_NS))
        if doi and " " not in doi and (mapped := doi_identity(doi)) is not None:
            ids.setdefault(*mapped)
        claims = tuple(s for s in ids if s != "arxiv")
        published = parse_date(entry.findtext("a:published", default="", namespaces=_NS))
        found[ident] = Paper(
            ids=ids,
            source="arxiv",
            title=title,
            abstract=clean_text(entry.findtext("a:summary", default="", namespaces=_NS)),
            authors=tuple(a for a in authors if a.name),
            venue=clean_text(entry.findtext("arxiv:journal_ref", default=None, namespaces=_NS)) or "arXiv",
            year=published.year if published else None,
            publication_date=published,
            url=f"https://arxiv.org/abs/{ident}",
            arxiv_categories=tuple(c.get("term", "") for c in entry.findall("a:category", _NS) if c.get("term")),
            claims=claims,
        )
    return found


@dataclass(frozen=True)
class ArxivVersion:
    """What arXiv says of a paper's versions: the latest version number, when it came out, and the journal
    reference its authors gave (a sign that the preprint is published)."""

    version: int
    updated: date | None
    journal_ref: str | None
    server: str = "arXiv"  # or "bioRxiv", "medRxiv": the preprint server whose versions these are
    page: str | None = None  # the latest version's page (arXiv's is built from the id)


_VERSION = re.compile(r"v(\d+)$")


def versions_from_atom(xml_text: str) -> dict[str, ArxivVersion]:
    """The latest version of each entry of an arXiv API answer, keyed by arXiv id (without version)."""
    found: dict[str, ArxivVersion] = {}
    for entry, raw_id in _entries(xml_text):
        ident, m = normalize_arxiv_id(raw_id), _VERSION.search(raw_id)
        if not ident or m is None:
            continue
        updated = parse_date(entry.findtext("a:updated", default="", namespaces=_NS))
        journal = clean_text(entry.findtext("arxiv:journal_ref", default=None, namespaces=_NS))
        found[ident] = ArxivVersion(int(m.group(1)), updated, journal)
    return found


class ArxivApi:
    """Client of ``ARXIV_API_URL``; arXiv asks for no more than one request every three seconds."""

    name = "arxiv"

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 20.0,
        transport: httpx.BaseTransport | None = None,
        min_interval: float = 3.0,
        **polite: Any,
    ) -> None:
        client = httpx.Client(base_url=base_url, timeout=timeout, transport=transport)
        self.http = PoliteClient(self.name, client, min_interval=min_interval, **polite)

    def can_fetch(self, ids: dict[str, str]) -> bool:
        return "arxiv" in ids

    def fetch_papers(self, requests: Sequence[dict[str, str]]) -> list[Paper | None]:
        wanted = [ids.get("arxiv") for ids in requests]
        asked = [w for w in wanted if w]
        found: dict[str, Paper] = {}
        for start in range(0, len(asked), ID_LIST_LIMIT):
            chunk = asked[start : start + ID_LIST_LIMIT]
            response = self.http.request("GET", "query", params={"id_list": ",".join(chunk), "max_results": len(chunk)})
            found.update(papers_from_atom(response.text, len(chunk)))
        return [found.get(w) if w else None for w in wanted]

    def fetch_versions(self, arxiv_ids: Sequence[str]) -> dict[str, ArxivVersion]:
        """The latest version of each paper (ids without version), a request a hundred papers."""
        found: dict[str, ArxivVersion] = {}
        for start in range(0, len(arxiv_ids), ID_LIST_LIMIT):
            chunk = list(arxiv_ids[start : start + ID_LIST_LIMIT])
            response = self.http.request("GET", "query", params={"id_list": ",".join(chunk), "max_results": len(chunk)})
            found.update(versions_from_atom(response.text))
        return found

    def close(self) -> None:
        self.http.close()
