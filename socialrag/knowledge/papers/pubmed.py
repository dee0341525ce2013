"""PubMed's E-utilities (``PUBMED_API_URL``): metadata by PMID or PMCID, with abstracts (``efetch``), and the
newest articles matching a query (``esearch``), for the `pubmed` candidate source. NCBI allows 3 requests a
second, or 10 with an API key (``PUBMED_API_KEY``); every request names PaperPing and the contact address.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import date
from typing import Any

import httpx

from socialrag.errors import SourceError
from socialrag.knowledge.link_ids import doi_identity
from socialrag.knowledge.papers.http import PoliteClient
from socialrag.knowledge.papers.source import clean_text, parse_count, parse_month, parse_records, parse_year
from socialrag.models import Author, Paper

BATCH = 200  # ids in one efetch
_PMCID = re.compile(r"^PMC\d{1,9}$")


def _text(node: ET.Element | None) -> str | None:
    """All the text of an element, inline markup (``<i>``, ``<sup>``) included."""
    return clean_text("".join(node.itertext())) if node is not None else None


def _published(article: ET.Element) -> tuple[date | None, str | None]:
    """The article's date and how far it is known: the electronic date, else the journal issue's."""
    for node in (article.find("Article/ArticleDate"), article.find("Article/Journal/JournalIssue/PubDate")):
        if node is None:
            continue
        year = parse_year((node.findtext("Year") or node.findtext("MedlineDate") or "")[:4])
        if year is None:  # none, or not a publication year (``<Year>0000</Year>``)
            continue
        month = parse_month(node.findtext("Month") or "")
        day = parse_count(node.findtext("Day"))
        if month is None:
            return date(year, 1, 1), "year"
        if day:
            try:
                return date(year, month[0], day), "day"
            except ValueError:
                pass
        return date(year, month[0], 1), "month"
    return None, None


def _authors(article: ET.Element) -> tuple[Author, ...]:
    out = []
    for node in article.findall("Article/AuthorList/Author")[:200]:
        name = clean_text(" ".join(x for x in (node.findtext("ForeName"), node.findtext("LastName")) if x))
        name = name or clean_text(node.findtext("CollectiveName"))
        if not name:
            continue
        places = tuple(t for a in node.findall("AffiliationInfo/Affiliation") if (t := clean_text(a.text)))
        orcid = next((clean_text(i.text) for i in node.findall("Identifier") if i.get("Source") == "ORCID"), None)
        out.append(Author(name=name, affiliations=places[:3], orcid=orcid.rsplit("/", 1)[-1] if orcid else None))
    return tuple(out)


def paper_from_pubmed(node: ET.Element) -> Paper | None:
    """One ``PubmedArticle`` as a ``Paper`` (None without a PMID or a title)."""
    citation = node.find("MedlineCitation")
    if citation is None:
        return None
    pmid = (citation.findtext("PMID") or "").strip()
    title = _text(citation.find("Article/ArticleTitle"))
    if not pmid.isdigit() or not title:
        return None
    ids = {"pmid": pmid}
    for item in node.findall("PubmedData/ArticleIdList/ArticleId"):
        value = (item.text or "").strip()
        if item.get("IdType") == "doi" and (found := doi_identity(value)) is not None:
            ids.setdefault(found[0], found[1])
        elif item.get("IdType") == "pmc" and _PMCID.match(value.upper()):
            ids["pmcid"] = value.upper()
    parts = [(p.get("Label"), _text(p)) for p in citation.findall("Article/Abstract/AbstractText")]
    abstract = " ".join(f"{label.title()}: {text}" if label else text for label, text in parts if text)
    published, precision = _published(citation)
    return Paper(
        ids=ids,
        source="pubmed",
        title=title,
        abstract=clean_text(abstract),
        authors=_authors(citation),
        venue=clean_text(citation.findtext("Article/Journal/Title")),
        year=published.year if published else None,
        publication_date=published,
        date_precision=precision,  # type: ignore[arg-type]
        url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
    )


def papers_from_efetch(xml_text: str, most: int | None = None) -> list[Paper]:
    """The articles of an ``efetch`` answer (the first ``most`` of them: no more than were asked for)."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise SourceError("pubmed", f"answer is not valid XML: {exc}") from exc
    nodes = root.findall("PubmedArticle")

    def parse(node: object) -> Paper | None:
        return paper_from_pubmed(node) if isinstance(node, ET.Element) else None

    # an article with a value of an unexpected shape costs that article only
    return parse_records("pubmed", nodes, parse, len(nodes) if most is None else most)


class PubMed:
    """Client of ``PUBMED_API_URL``."""

    name = "pubmed"

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        email: str | None = None,
        timeout: float = 20.0,
        transport: httpx.BaseTransport | None = None,
        **polite: Any,
    ) -> None:
        client = httpx.Client(base_url=base_url, timeout=timeout, transport=transport)
        interval = polite.pop("min_interval", 0.1 if api_key else 0.34)
        self.http = PoliteClient(self.name, client, min_interval=interval, **polite)
        self.common: dict[str, str] = {"tool": "paperping"}
        if email:
            self.common["email"] = email
        if api_key:
            self.common["api_key"] = api_key

    def can_fetch(self, ids: dict[str, str]) -> bool:
        return ids.get("pmid", "").isdigit() or bool(_PMCID.match(ids.get("pmcid", "").upper()))

    def fetch_papers(self, requests: Sequence[dict[str, str]]) -> list[Paper | None]:
        pmcids = [r["pmcid"].upper() for r in requests if "pmid" not in r and _PMCID.match(r.get("pmcid", "").upper())]
        pmids = [r["pmid"] for r in requests if r.get("pmid", "").isdigit()]
        if pmcids:
            pmids += self.search(" OR ".join(f"{p}[pmcid]" for p in pmcids[:BATCH]), retmax=len(pmcids))
        found = self.efetch(list(dict.fromkeys(pmids)))
        by_id = {(k, v): p for p in found for k, v in p.ids.items() if k in ("pmid", "pmcid")}
        out: list[Paper | None] = []
        for ids in requests:
            key = ("pmid", ids["pmid"]) if "pmid" in ids else ("pmcid", ids.get("pmcid", "").upper())
            out.append(by_id.get(key))
        return out

    def efetch(self, pmids: Sequence[str]) -> list[Paper]:
        papers: list[Paper] = []
        for start in range(0, len(pmids), BATCH):
            chunk = pmids[start : start + BATCH]
            params = {**self.common, "db": "pubmed", "id": ",".join(chunk), "retmode": "xml"}
            papers += papers_from_efetch(self.http.request("GET", "efetch.fcgi", params=params).text, len(chunk))
        return papers

    def search(self, term: str, *, retmax: int = 50, days: int | None = None) -> list[str]:
        """The PMIDs matching ``term`` (added in the last ``days`` when given), the newest first."""
        params: dict[str, Any] = {**self.common, "db": "pubmed", "term": term[:1000], "retmax": retmax}
        params |= {"retmode": "json", "sort": "pub_date"}
        if days:
            params |= {"datetype": "edat", "reldate": days}
        body = self.http.request_json("GET", "esearch.fcgi", params=params)
        result = body.get("esearchresult") if isinstance(body, dict) else None
        ids = result.get("idlist") if isinstance(result, dict) else None
        return [str(i) for i in ids or () if str(i).isdigit()][:retmax]

    def recent(self, term: str, *, days: int = 30, limit: int = 50) -> list[Paper]:
        """The newest articles matching ``term``, with their metadata."""
        return self.efetch(self.search(term, retmax=limit, days=days))

    def close(self) -> None:
        self.http.close()
