"""OpenAlex (``OPENALEX_API_URL``): metadata by DOI, PMID or PMCID for any field, and searches of recent works
for the `openalex` candidate source. No key is needed; with a contact address (``OPENALEX_MAILTO``, else
``CROSSREF_MAILTO``) requests join OpenAlex's polite pool. OpenAlex allows 100,000 requests a day and 10 a second.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import httpx

from socialrag.knowledge.link_ids import doi_identity
from socialrag.knowledge.papers.http import contact_client
from socialrag.knowledge.papers.source import clean_text, parse_count, parse_date, parse_records, parse_year
from socialrag.models import Author, Paper
from socialrag.text import ascii_digits

BATCH = 50  # values OR-ed in one filter (OpenAlex takes up to 100)
MAX_ABSTRACT_WORDS = 3000  # an inverted abstract larger than this is cut: it is written by others
_KINDS = (("doi", "doi"), ("pmid", "pmid"), ("pmcid", "pmcid"), ("openalex", "openalex"))
SELECT = (
    "id,doi,ids,title,display_name,publication_date,publication_year,authorships,primary_location,"
    "abstract_inverted_index,cited_by_count,primary_topic,type,best_oa_location,open_access"
)


def _last(value: object) -> str | None:
    """The last path segment of an OpenAlex id URL (``https://openalex.org/W123`` -> ``W123``)."""
    text = clean_text(value)
    return text.rstrip("/").rsplit("/", 1)[-1] if text else None


def identities(raw: Mapping[str, Any]) -> dict[str, str]:
    """A work's identities as PaperPing keeps them."""
    ids = _part(raw, "ids")
    out: dict[str, str] = {}
    if work := _last(raw.get("id")):
        out["openalex"] = work
    doi = clean_text(raw.get("doi") or ids.get("doi"))
    if doi:
        found = doi_identity(doi.split("doi.org/", 1)[-1])
        if found is not None:
            out[found[0]] = found[1]
    if (pmid := _last(ids.get("pmid"))) and ascii_digits(pmid):
        out["pmid"] = pmid
    if (pmcid := _last(ids.get("pmcid"))) and pmcid.upper().startswith("PMC"):
        out["pmcid"] = pmcid.upper()
    return out


def abstract_text(inverted: object) -> str | None:
    """The abstract OpenAlex gives as {word: [positions]}, read back in order (at most ``MAX_ABSTRACT_WORDS``)."""
    if not isinstance(inverted, Mapping):
        return None
    slots: dict[int, str] = {}
    for word, positions in inverted.items():
        for at in positions if isinstance(positions, list) else ():
            if isinstance(at, int) and 0 <= at < MAX_ABSTRACT_WORDS:
                slots[at] = str(word)
    return clean_text(" ".join(slots[i] for i in sorted(slots))) if slots else None


def _authors(raw: Mapping[str, Any]) -> tuple[Author, ...]:
    out = []
    for entry in raw.get("authorships") or ():
        person = entry.get("author") if isinstance(entry, Mapping) else None
        name = clean_text(person.get("display_name")) if isinstance(person, Mapping) else None
        if not name or not isinstance(person, Mapping):
            continue
        places = tuple(t for i in entry.get("institutions") or () if _named(i) and (t := clean_text(i["display_name"])))
        out.append(Author(name=name, affiliations=places, orcid=_last(person.get("orcid"))))
    return tuple(out)


def _named(place: object) -> bool:
    return isinstance(place, Mapping) and bool(place.get("display_name"))


def _part(raw: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """A nested object of a work, or an empty one when it is missing or not an object."""
    value = raw.get(key)
    return value if isinstance(value, Mapping) else {}


def open_access_pdf(raw: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The open-access PDF OpenAlex reports for a work (``best_oa_location.pdf_url``, else ``open_access.oa_url``)
    and the licence it gives for it; an address that is not https is not kept."""
    best = _part(raw, "best_oa_location")
    for url in (best.get("pdf_url"), _part(raw, "open_access").get("oa_url")):
        text = clean_text(url)
        if text and text.lower().startswith("https://") and len(text) <= 2000:
            return text, clean_text(best.get("license"))
    return None, None


def paper_from_openalex(raw: Mapping[str, Any]) -> Paper | None:
    """One OpenAlex work as a ``Paper`` (None without a title)."""
    title = clean_text(raw.get("title") or raw.get("display_name"))
    if not title:
        return None
    location = _part(raw, "primary_location")
    source, topic = _part(location, "source"), _part(raw, "primary_topic")
    published = parse_date(raw.get("publication_date"))
    year = parse_year(raw.get("publication_year"))
    count = parse_count(raw.get("cited_by_count"))
    ids = identities(raw)
    pdf, licence = open_access_pdf(raw)
    return Paper(
        ids=ids,
        source="openalex",
        title=title,
        abstract=abstract_text(raw.get("abstract_inverted_index")),
        authors=_authors(raw),
        venue=clean_text(source.get("display_name")),
        year=year or (published.year if published else None),
        publication_date=published,
        url=clean_text(raw.get("doi")) or clean_text(location.get("landing_page_url")),
        citation_count=count,
        popularity=float(count) if count is not None else None,
        subjects=(f"openalex:{t}",) if (t := _last(topic.get("id"))) else (),
        oa_pdf_url=pdf,
        oa_licence=licence,
    )


class OpenAlex:
    """Client of ``OPENALEX_API_URL``."""

    name = "openalex"

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
        self.mailto = mailto
        self.http = contact_client(
            self.name, base_url, mailto, timeout=timeout, transport=transport, min_interval=min_interval, **polite
        )

    def can_fetch(self, ids: dict[str, str]) -> bool:
        return any(kind in ids for kind, _ in _KINDS)

    def fetch_papers(self, requests: Sequence[dict[str, str]], until: float | None = None) -> list[Paper | None]:
        """Each request's work, asked in batches of one filter per kind of identity; with ``until``
        (``time.monotonic``), no request is answered later than that (``OutOfTime``)."""
        out: list[Paper | None] = [None] * len(requests)
        for kind, field in _KINDS:
            todo = [i for i, ids in enumerate(requests) if out[i] is None and _safe(ids.get(kind))]
            for start in range(0, len(todo), BATCH):
                chunk = todo[start : start + BATCH]
                values = "|".join(requests[i][kind] for i in chunk)
                found = self.works({"filter": f"{field}:{values}", "per-page": BATCH}, until)
                for i in chunk:
                    wanted = requests[i][kind].lower()
                    out[i] = next((p for p in found if p.ids.get(kind, "").lower() == wanted), None)
        return out

    def works(self, params: dict[str, Any], until: float | None = None) -> list[Paper]:
        """The works of one ``/works`` query (a ``SourceError`` when the service fails), asked before ``until``."""
        query = {**params, "select": SELECT}
        if self.mailto:
            query["mailto"] = self.mailto
        body = self.http.request_json("GET", "works", params=query, until=until)
        results = body.get("results") if isinstance(body, dict) else None
        asked = int(params.get("per-page") or 25)  # the service's own default page
        # read no further than the page asked for, whatever the answer holds
        rows = results[:asked] if isinstance(results, list) else []
        return parse_records(
            self.name, rows, lambda r: paper_from_openalex(r) if isinstance(r, Mapping) else None, asked
        )

    def recent(self, *, words: str | None, topics: Sequence[str], since: date, limit: int = 50) -> list[Paper]:
        """Works published since ``since``: a relevance search for ``words``, and the newest of ``topics``."""
        dated = f"from_publication_date:{since.isoformat()},type:article|preprint|review"
        found: list[Paper] = []
        if words:
            found += self.works({"search": words, "filter": dated, "per-page": limit})
        safe = [t for t in topics if t[:1] == "T" and t[1:].isdigit()][:10]
        if safe:
            params = {"filter": f"{dated},primary_topic.id:{'|'.join(safe)}", "sort": "publication_date:desc"}
            found += self.works({**params, "per-page": limit})
        return found

    def close(self) -> None:
        self.http.close()


def _safe(value: str | None) -> bool:
    """An identity that can go into a filter: no separator of OpenAlex's filter syntax in it."""
    return bool(value) and not any(c in str(value) for c in "|,&#?") and len(str(value)) < 300
