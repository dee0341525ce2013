"""Crossref REST API as a fallback for DOIs (journals, ACM, Springer, Nature, bioRxiv), and the DOI of an
Elsevier PII."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Any
from urllib.parse import quote

import httpx

from socialrag.errors import NotFound
from socialrag.knowledge.papers.http import contact_client
from socialrag.knowledge.papers.source import clean_text, clean_texts, parse_count, parse_records, parse_year
from socialrag.models import Author, Paper

_TAGS = re.compile(r"<[^>]+>")


_DOI = re.compile(r"10\.\d{4,9}/[^\s?#]+")
_PII = re.compile(r"S[\dX]{16}")


def is_doi(value: str) -> bool:
    """A DOI that can go into a request path: ``10.NNNN/suffix``, no query, no ``.`` or ``..`` segment."""
    return _DOI.fullmatch(value) is not None and not any(s in (".", "..") for s in value.split("/"))


def _first(value: Any) -> str | None:
    if isinstance(value, list) and value:
        return clean_text(value[0])
    return clean_text(value)


def _issued(raw: Mapping[str, Any]) -> date | None:
    """The first of the work's dates with a publication year (``date-parts``: ``[[year, month, day]]``, the
    month and day optional); a month or day that is not a number of its range counts as the first."""
    for key in ("published-print", "published-online", "issued", "created"):
        held = raw.get(key)
        parts = held.get("date-parts") if isinstance(held, Mapping) else None
        first = parts[0] if isinstance(parts, list) and parts and isinstance(parts[0], list) else []
        year = parse_year(first[0]) if first and isinstance(first[0], int) else None
        if year is None:
            continue
        month, day = [p if isinstance(p, int) and not isinstance(p, bool) else 1 for p in [*first[1:3], 1, 1][:2]]
        try:
            return date(year, month, day)
        except (ValueError, OverflowError):
            return date(year, month, 1) if 1 <= month <= 12 else date(year, 1, 1)
    return None


def _author(raw: Mapping[str, Any]) -> Author:
    """One entry of a work's ``author`` list (its name empty when it has none)."""
    name = clean_text(" ".join(x for x in (raw.get("given"), raw.get("family")) if isinstance(x, str)))
    places = raw.get("affiliation")
    orcid = clean_text(raw.get("ORCID"))
    return Author(
        name=name or clean_text(raw.get("name")) or "",
        affiliations=clean_texts([f.get("name") for f in places if isinstance(f, Mapping)])
        if isinstance(places, list)
        else (),
        orcid=orcid.rsplit("/", 1)[-1] if orcid else None,
    )


def paper_from_crossref(raw: Mapping[str, Any]) -> Paper | None:
    """A Crossref ``message`` object as a ``Paper``."""
    doi = clean_text(raw.get("DOI"))
    title = _first(raw.get("title"))
    if not doi or not title:
        return None
    abstract = raw.get("abstract")
    authors = tuple(_author(a) for a in raw.get("author") or () if isinstance(a, Mapping))
    issued = _issued(raw)
    count = parse_count(raw.get("is-referenced-by-count"))
    return Paper(
        ids={"doi": doi.lower()},
        source="crossref",
        title=title,
        abstract=clean_text(_TAGS.sub(" ", abstract)) if isinstance(abstract, str) else None,
        authors=tuple(a for a in authors if a.name),
        venue=_first(raw.get("container-title")) or clean_text(raw.get("publisher")),
        year=issued.year if issued else None,
        publication_date=issued,
        url=clean_text(raw.get("URL")) or f"https://doi.org/{doi}",
        citation_count=count,
        popularity=float(count) if count is not None else None,
    )


class Crossref:
    """Client of ``CROSSREF_API_URL``; with ``CROSSREF_MAILTO`` it joins Crossref's polite pool."""

    name = "crossref"

    def __init__(
        self,
        base_url: str,
        *,
        mailto: str | None = None,
        timeout: float = 20.0,
        transport: httpx.BaseTransport | None = None,
        min_interval: float = 0.1,
        **polite: Any,
    ) -> None:
        self.http = contact_client(
            self.name, base_url, mailto, timeout=timeout, transport=transport, min_interval=min_interval, **polite
        )

    def can_fetch(self, ids: dict[str, str]) -> bool:
        return "doi" in ids or "pii" in ids

    def fetch_papers(self, requests: Sequence[dict[str, str]]) -> list[Paper | None]:
        out: list[Paper | None] = []
        for ids in requests:
            doi = ids.get("doi")
            if not doi and ids.get("pii"):
                out.append(self.fetch_by_pii(ids["pii"]))
                continue
            if not doi or not is_doi(doi):
                out.append(None)
                continue
            try:
                body = self.http.request_json("GET", f"works/{quote(doi, safe='/')}")
            except NotFound:
                out.append(None)
                continue
            message = body.get("message") if isinstance(body, dict) else None
            found = parse_records(
                self.name, [message], lambda m: paper_from_crossref(m) if isinstance(m, Mapping) else None, 1
            )
            out.append(found[0] if found else None)
        return out

    def fetch_by_pii(self, pii: str) -> Paper | None:
        """The work Crossref records under an Elsevier PII (its ``alternative-id``): Cell Press, ScienceDirect
        and The Lancet links carry the PII, not the DOI."""
        if not _PII.fullmatch(pii):
            return None
        body = self.http.request_json("GET", "works", params={"filter": f"alternative-id:{pii}", "rows": 2})
        message = body.get("message") if isinstance(body, dict) else None
        items = message.get("items") if isinstance(message, Mapping) else None
        items = items if isinstance(items, list) else []
        papers = parse_records(
            self.name, items, lambda i: paper_from_crossref(i) if isinstance(i, Mapping) else None, 2
        )
        return replace(papers[0], ids={**papers[0].ids, "pii": pii}) if len(papers) == 1 else None

    def fetch_published_version(self, doi: str) -> tuple[str, str] | None:
        """(venue, link) of the published version Crossref records for a preprint's DOI (its ``is-preprint-of``
        relation), or None when it records none."""
        if not is_doi(doi):
            return None
        try:
            body = self.http.request_json("GET", f"works/{quote(doi, safe='/')}")
        except NotFound:
            return None
        message = body.get("message") if isinstance(body, dict) else None
        relation = message.get("relation") if isinstance(message, Mapping) else None
        targets = relation.get("is-preprint-of") if isinstance(relation, Mapping) else None
        published = next(
            (str(r["id"]).lower() for r in targets or () if isinstance(r, Mapping) and r.get("id-type") == "doi"),
            None,
        )
        if published is None or not is_doi(published):
            return None
        try:
            found = self.fetch_papers([{"doi": published}])[0]
        except NotFound:
            found = None
        venue = found.venue if found is not None and found.venue else "a journal"
        return venue, f"https://doi.org/{published}"

    def close(self) -> None:
        self.http.close()
