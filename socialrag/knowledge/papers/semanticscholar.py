"""Semantic Scholar Graph API: paper batch lookups and reference contexts. Parses the API's real shapes."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import httpx

from socialrag.errors import NotFound, SourceError
from socialrag.knowledge.links import doi_identity, normalize_arxiv_id
from socialrag.knowledge.papers.http import PoliteClient
from socialrag.knowledge.papers.source import (
    clean_name,
    clean_names,
    clean_text,
    clean_texts,
    next_month,
    parse_count,
    parse_date,
    parse_records,
    parse_year,
)
from socialrag.models import Author, Paper, PaperRef

log = logging.getLogger(__name__)

BATCH_LIMIT = 500
PAPER_FIELDS = ",".join(
    [
        "paperId",
        "externalIds",
        "corpusId",
        "url",
        "title",
        "abstract",
        "tldr",
        "venue",
        "publicationVenue",
        "year",
        "publicationDate",
        "citationCount",
        "authors.name",
        "authors.affiliations",
        "authors.externalIds",
        "references.paperId",
        "references.externalIds",
    ]
)
_S2_PREFIX = {"arxiv": "ARXIV:", "doi": "DOI:", "acl": "ACL:", "corpus": "CorpusId:", "pmid": "PMID:"}


@dataclass(frozen=True)
class Citation:
    """A paper citing a stored one: its identities, title, year, publication date and the citing sentences."""

    ids: dict[str, str]
    title: str | None
    year: int | None
    contexts: tuple[str, ...]
    published: date | None = None


COMPLETE_ENOUGH = 0.9  # dated citations must cover this share of the paper's count to give its history


# the fields of a paper in a list (an author's papers): nested author and reference fields are not served there
LIST_FIELDS = ",".join(f for f in PAPER_FIELDS.split(",") if not f.startswith(("references.", "authors."))) + ",authors"


def citation_history(citations: Sequence[Citation], total: int | None, today: date) -> tuple[tuple[date, float], ...]:
    """A paper's citation count as it was, from the dates of the papers citing it: at the end of each month in
    which it grew, the number of citing papers out by then. A citation known only to its year counts from that
    year's last day (known only that far). Empty when the dated citations are too few of ``total`` to say what
    the count was (a list cut short, or too many undated)."""
    days = []
    for c in citations:
        day = c.published or (date(year, 12, 31) if (year := parse_year(c.year)) else None)
        if day is not None:
            days.append(min(day, today))
    if not days or (total is not None and len(days) < COMPLETE_ENOUGH * total):
        return ()
    by_month: dict[date, int] = {}
    for n, day in enumerate(sorted(days), 1):
        by_month[next_month(day) - timedelta(days=1)] = n  # the month's last day
    return tuple((day, float(n)) for day, n in sorted(by_month.items()) if day < today)


def s2_lookup_id(ids: Mapping[str, str]) -> str | None:
    """The identifier to ask Semantic Scholar for, from the identities PaperPing knows."""
    if "s2" in ids:
        return ids["s2"]
    for scheme, prefix in _S2_PREFIX.items():
        if scheme in ids:
            return prefix + ids[scheme]
    if "pmcid" in ids:
        return "PMCID:" + ids["pmcid"].upper().removeprefix("PMC")
    return None


def identities_from_external(external: Mapping[str, Any] | None, paper_id: str | None) -> dict[str, str]:
    """Semantic Scholar's ``externalIds`` as PaperPing identities (the same keys ``links`` produces)."""
    ids: dict[str, str] = {}
    if s2 := _id_text(paper_id):
        ids["s2"] = s2
    ext = external if isinstance(external, Mapping) else {}
    if (arxiv := normalize_arxiv_id(_id_text(ext.get("ArXiv")) or "")) is not None:
        ids["arxiv"] = arxiv
    if acl := _id_text(ext.get("ACL")):
        ids["acl"] = acl
    if (doi := _id_text(ext.get("DOI"))) and (mapped := doi_identity(doi)):
        ids.setdefault(*mapped)
    if corpus := _id_text(ext.get("CorpusId")):
        ids["corpus"] = corpus
    if pmid := _id_text(ext.get("PubMed")):
        ids["pmid"] = pmid
    if pmcid := _id_text(ext.get("PubMedCentral")):
        ids["pmcid"] = "PMC" + pmcid.upper().removeprefix("PMC")
    return ids


def _id_text(value: object) -> str | None:
    """An identifier as text (a number or a string, NUL bytes dropped), or None."""
    return clean_text(str(value)) if isinstance(value, int | str) and not isinstance(value, bool) else None


def _author_id(value: object) -> str | None:
    """A Semantic Scholar author id (ASCII digits, as every one is), or None: the id is written into links and
    commands members read (``/paperping follow ID``), where anything else could be markup."""
    text = _id_text(value)
    return text if text and text.isascii() and text.isdecimal() and len(text) <= 20 else None


def _reference_refs(raw: Any) -> tuple[PaperRef, ...]:
    refs: list[PaperRef] = []
    for entry in raw or ():
        s2 = _id_text(entry.get("paperId")) if isinstance(entry, Mapping) else None
        if not isinstance(entry, Mapping) or not s2:
            continue
        for scheme, value in identities_from_external(entry.get("externalIds"), s2).items():
            if scheme != "corpus":
                refs.append(PaperRef(scheme, value, url=f"https://www.semanticscholar.org/paper/{s2}"))
    return tuple(refs)


def _authors(raw: Any) -> tuple[Author, ...]:
    out = []
    for a in raw or ():
        name = clean_text(a.get("name")) if isinstance(a, Mapping) else None
        if not isinstance(a, Mapping) or not name:
            continue
        ext = a.get("externalIds") or {}
        orcid = ext.get("ORCID") if isinstance(ext, Mapping) else None
        places = clean_texts(a.get("affiliations") or [])
        author_id = _author_id(a.get("authorId"))
        out.append(Author(name=name, s2_author_id=author_id, affiliations=places, orcid=_id_text(orcid)))
    return tuple(out)


def paper_from_s2(raw: Mapping[str, Any]) -> Paper:
    """One Semantic Scholar paper object as a ``Paper``."""
    venue_obj = raw.get("publicationVenue")
    venue = clean_text(raw.get("venue")) or (
        clean_text(venue_obj.get("name")) if isinstance(venue_obj, Mapping) else None
    )
    tldr = raw.get("tldr")
    return Paper(
        ids=identities_from_external(raw.get("externalIds"), raw.get("paperId")),
        source="semanticscholar",
        title=clean_text(raw.get("title")),
        abstract=clean_text(raw.get("abstract")),
        tldr=clean_text(tldr.get("text")) if isinstance(tldr, Mapping) else None,
        authors=_authors(raw.get("authors")),
        venue=venue,
        year=parse_year(raw.get("year")),
        publication_date=parse_date(raw.get("publicationDate")),
        url=clean_text(raw.get("url"))
        or (f"https://www.semanticscholar.org/paper/{s2}" if (s2 := _id_text(raw.get("paperId"))) else None),
        popularity=float(count) if (count := parse_count(raw.get("citationCount"))) is not None else None,
        citation_count=count,
        references=_reference_refs(raw.get("references")),
    )


def s2_papers(raw: object, most: int) -> list[Paper]:
    """The paper objects of an answer's list that have an id and a title, at most ``most`` of them (an answer
    holding more than was asked for is read no further); a malformed record is skipped, not the answer."""

    def parse(r: object) -> Paper | None:
        return paper_from_s2(r) if isinstance(r, Mapping) and r.get("paperId") and r.get("title") else None

    return parse_records("semanticscholar", raw if isinstance(raw, list) else [], parse, most)


def next_offset(body: Mapping[str, Any], offset: int) -> int | None:
    """The offset of the next page a paged answer names (None: the last page). One that is not a number, or does
    not move forward, is the source's error: the caller skips this paper, and a job never loops on it."""
    raw = body.get("next")
    if raw is None:
        return None
    after = parse_count(raw) if isinstance(raw, int | str) and not isinstance(raw, bool) else None
    if after is None or after <= offset:
        raise SourceError("semanticscholar", f"a page marker that is not a later offset: {str(raw)[:40]!r}")
    return after


def entries(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The records of a paged answer's ``data``, each a mapping (anything else is skipped)."""
    data = body.get("data")
    return [e for e in data if isinstance(e, Mapping)] if isinstance(data, list) else []


def _citation(entry: object) -> Citation | None:
    """One entry of a citations page (the citing paper and its sentences); None without a citing paper id."""
    citing = entry.get("citingPaper") if isinstance(entry, Mapping) else None
    if not isinstance(entry, Mapping) or not isinstance(citing, Mapping) or not _id_text(citing.get("paperId")):
        return None
    return Citation(
        ids=identities_from_external(citing.get("externalIds"), citing["paperId"]),
        title=clean_text(citing.get("title")),
        year=parse_year(citing.get("year")),
        contexts=_contexts(entry.get("contexts")),
        published=parse_date(citing.get("publicationDate")),
    )


def _contexts(raw: object) -> tuple[str, ...]:
    """The citing sentences of an entry (a list of strings; anything else holds none)."""
    return clean_texts(raw) if isinstance(raw, list) else ()


def _reference_contexts(entry: object) -> list[tuple[str, tuple[str, ...]]]:
    """(``scheme:value``, sentences) for each identity of one entry of a references page; none when the entry
    has no cited paper id or no sentence."""
    cited = entry.get("citedPaper") if isinstance(entry, Mapping) else None
    sentences = _contexts(entry.get("contexts")) if isinstance(entry, Mapping) else ()
    if not isinstance(cited, Mapping) or not sentences or not _id_text(cited.get("paperId")):
        return []
    found = identities_from_external(cited.get("externalIds"), cited["paperId"])
    return [(f"{scheme}:{value}", sentences) for scheme, value in found.items()]


def _one_paper(raw: object) -> Paper | None:
    """One record of a batch answer; None when it is empty or malformed (that paper only is not found)."""
    if not isinstance(raw, Mapping) or not raw.get("paperId"):
        return None
    found = parse_records("semanticscholar", [raw], lambda r: paper_from_s2(r) if isinstance(r, Mapping) else None, 1)
    return found[0] if found else None


class SemanticScholar:
    """Client of the Graph API (``S2_API_URL``). One request a second, as the API asks of everyone."""

    name = "semanticscholar"

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 20.0,
        transport: httpx.BaseTransport | None = None,
        min_interval: float = 1.0,
        **polite: Any,
    ) -> None:
        headers = {"x-api-key": api_key} if api_key else {}
        client = httpx.Client(base_url=base_url, headers=headers, timeout=timeout, transport=transport)
        self.http = PoliteClient(self.name, client, min_interval=min_interval, **polite)

    def can_fetch(self, ids: dict[str, str]) -> bool:
        return s2_lookup_id(ids) is not None

    def fetch_papers(self, requests: Sequence[dict[str, str]]) -> list[Paper | None]:
        """Batch lookups, up to 500 ids a call; a paper Semantic Scholar does not know comes back None."""
        out: list[Paper | None] = []
        for start in range(0, len(requests), BATCH_LIMIT):
            chunk = requests[start : start + BATCH_LIMIT]
            lookup = [s2_lookup_id(ids) for ids in chunk]
            asked = [x for x in lookup if x]
            answers: list[Any] = []
            if asked:
                body = self.http.request_json(
                    "POST", "graph/v1/paper/batch", params={"fields": PAPER_FIELDS}, json={"ids": asked}
                )
                answers = body if isinstance(body, list) else []
            by_pos = iter(answers[: len(asked)])
            for x in lookup:
                raw = next(by_pos, None) if x else None
                out.append(_one_paper(raw))
        return out

    def fetch_reference_contexts(
        self, s2_id: str, *, page: int = 100, max_pages: int = 20
    ) -> dict[str, tuple[str, ...]]:
        """The sentences in which paper ``s2_id`` cites each of its references, keyed by ``scheme:value``."""
        contexts: dict[str, tuple[str, ...]] = {}
        offset = 0
        for _ in range(max_pages):
            try:
                body = self.http.request_json(
                    "GET",
                    f"graph/v1/paper/{s2_id}/references",
                    params={"fields": "contexts,paperId,externalIds", "offset": offset, "limit": page},
                )
            except NotFound:
                return contexts
            body = body if isinstance(body, dict) else {}
            for found in parse_records(self.name, entries(body), _reference_contexts, page):
                contexts.update(found)
            after = next_offset(body, offset)
            if after is None:
                break
            offset = after
        return contexts

    def fetch_citations(
        self, s2_id: str, *, page: int = 1000, max_items: int = 1000, max_pages: int = 20
    ) -> list[Citation]:
        """Papers citing ``s2_id`` (at most ``max_items``, from at most ``max_pages`` pages: an answer that keeps
        naming a next page, empty or not, is not followed forever), with the sentences they cite it in. A page
        without a ``data`` list is the source's error (``SourceError``), not a paper nobody cites."""
        found: list[Citation] = []
        offset = 0
        for _ in range(max_pages):
            if len(found) >= max_items:
                break
            try:
                body = self.http.request_json(
                    "GET",
                    f"graph/v1/paper/{s2_id}/citations",
                    params={
                        "fields": "contexts,paperId,externalIds,title,year,publicationDate",
                        "offset": offset,
                        "limit": min(page, max_items - len(found)),
                    },
                )
            except NotFound:
                break
            if not isinstance(body, dict) or not isinstance(body.get("data"), list):
                # missing is not zero: taken for none, the stored citing papers would go, and all come back new
                raise SourceError("semanticscholar", "a citations page answered without a list")
            found += parse_records("semanticscholar", entries(body), _citation, max_items - len(found))
            after = next_offset(body, offset)
            if after is None:
                break
            offset = after
        return found

    def fetch_author_papers(self, author_id: str, *, limit: int = 100) -> list[Paper]:
        """An author's papers as Semantic Scholar lists them (at most ``limit``). An answer without a list is the
        source's error, not an author without papers: taken for none, the papers listed next time would all be new."""
        body = self.http.request_json(
            "GET", f"graph/v1/author/{author_id}/papers", params={"fields": LIST_FIELDS, "limit": limit}
        )
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise SourceError("semanticscholar", "an author's papers answered without a list")
        papers = s2_papers(data, limit)
        if data and not papers:
            raise SourceError("semanticscholar", "an author's papers answered with no readable paper")
        return papers

    def search_authors(self, name: str, *, limit: int = 5) -> list[tuple[str, str, int | None, tuple[str, ...]]]:
        """(author id, name, paper count, affiliations) of the authors Semantic Scholar finds for ``name``."""
        body = self.http.request_json(
            "GET",
            "graph/v1/author/search",
            params={"query": name, "fields": "name,paperCount,affiliations", "limit": limit},
        )
        out = []
        found = body.get("data") if isinstance(body, dict) else None
        for r in found[:limit] if isinstance(found, list) else ():
            if isinstance(r, Mapping) and r.get("authorId") and r.get("name"):
                affs = clean_names(r.get("affiliations"))
                count = parse_count(r.get("paperCount"))
                author_id, named = _author_id(r["authorId"]), clean_name(r["name"])
                if author_id and named:
                    out.append((author_id, named, count, affs))
        return out

    def fetch_author(self, author_id: str) -> str | None:
        """The author's name (``clean_name``: an author edits their own profile), or None when Semantic Scholar knows
        no such author or no name is left."""
        try:
            body = self.http.request_json("GET", f"graph/v1/author/{author_id}", params={"fields": "name"})
        except NotFound:
            return None
        return clean_name(body.get("name")) if isinstance(body, dict) else None

    def close(self) -> None:
        self.http.close()
