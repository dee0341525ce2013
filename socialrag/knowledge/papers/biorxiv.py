"""The bioRxiv API (``BIORXIV_API_URL``, serving medRxiv too): a preprint's details by DOI, with its category
and every version, and the new preprints of a date range by category, for the `biorxiv` and `medrxiv`
candidate sources. No key; the API publishes no rate, so PaperPing asks at most once a second.

The categories are the servers' own subject collections, as their sites list them (lower case, ``_`` for a
space, as the API's ``category`` parameter takes them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any, Literal

import httpx

from socialrag.errors import NotFound
from socialrag.knowledge.papers.arxiv import ArxivVersion
from socialrag.knowledge.papers.crossref import is_doi
from socialrag.knowledge.papers.http import PoliteClient
from socialrag.knowledge.papers.source import clean_text, parse_count, parse_date, parse_records
from socialrag.models import Author, Paper

Server = Literal["biorxiv", "medrxiv"]
SERVERS: tuple[Server, ...] = ("biorxiv", "medrxiv")
PAGE = 100  # the API's page size
MAX_VERSIONS = 50  # versions of one preprint read from an answer
# fmt: off
CATEGORIES: dict[Server, frozenset[str]] = {
    "biorxiv": frozenset((
        "animal_behavior_and_cognition", "biochemistry", "bioengineering", "bioinformatics", "biophysics",
        "cancer_biology", "cell_biology", "clinical_trials", "developmental_biology", "ecology", "epidemiology",
        "evolutionary_biology", "genetics", "genomics", "immunology", "microbiology", "molecular_biology",
        "neuroscience", "paleontology", "pathology", "pharmacology_and_toxicology", "physiology", "plant_biology",
        "scientific_communication_and_education", "synthetic_biology", "systems_biology", "zoology",
    )),
    "medrxiv": frozenset((
        "addiction_medicine", "allergy_and_immunology", "anesthesia", "cardiovascular_medicine",
        "dentistry_and_oral_medicine", "dermatology", "emergency_medicine", "endocrinology", "epidemiology",
        "forensic_medicine", "gastroenterology", "genetic_and_genomic_medicine", "geriatric_medicine",
        "health_economics", "health_informatics", "health_policy", "health_systems_and_quality_improvement",
        "hematology", "hiv_aids", "infectious_diseases", "intensive_care_and_critical_care_medicine",
        "medical_education", "medical_ethics", "nephrology", "neurology", "nursing", "nutrition",
        "obstetrics_and_gynecology", "occupational_and_environmental_health", "oncology", "ophthalmology",
        "orthopedics", "otolaryngology", "pain_medicine", "palliative_medicine", "pathology", "pediatrics",
        "pharmacology_and_therapeutics", "primary_care_research", "psychiatry_and_clinical_psychology",
        "public_and_global_health", "radiology_and_imaging", "rehabilitation_medicine_and_physical_therapy",
        "respiratory_medicine", "rheumatology", "sexual_and_reproductive_health", "sports_medicine", "surgery",
        "toxicology", "transplantation", "urology",
    )),
}
# fmt: on


def normalize_category(server: Server, word: str) -> str | None:
    """A category as the API takes it (``Cell Biology``, ``cell-biology`` -> ``cell_biology``), or None when the
    server has no such category."""
    key = re.sub(r"[\s\-]+", "_", word.strip().lower().replace("&", "and")).strip("_")
    return key if key in CATEGORIES[server] else None


def server_of(doi: str) -> Server:
    """The server a ``10.1101/`` DOI most likely belongs to: medRxiv's dated DOIs end in eight digits."""
    return "medrxiv" if re.fullmatch(r"10\.1101/\d{4}\.\d{2}\.\d{2}\.\d{8}", doi) else "biorxiv"


def _author(raw: str) -> str | None:
    """``Zhou, P.`` -> ``P. Zhou`` (the API's ``Last, Initials`` form)."""
    last, _, first = raw.partition(",")
    return clean_text(f"{first} {last}")


def _version(row: Mapping[str, Any]) -> int | None:
    """A row's version number (ASCII digits only: ``"²"`` is a digit to ``isdigit`` but no number)."""
    return parse_count(row.get("version"))


def paper_from_versions(rows: Sequence[Mapping[str, Any]], server: Server) -> Paper | None:
    """A preprint from the API's rows of its versions: the latest version's text, the first version's date."""
    rows = [r for r in rows if isinstance(r, Mapping) and clean_text(r.get("doi")) and clean_text(r.get("title"))]
    if not rows:
        return None
    rows.sort(key=lambda r: _version(r) or 0)
    latest, first = rows[-1], rows[0]
    posted = parse_date(first.get("date"))
    category = normalize_category(server, clean_text(latest.get("category")) or "")
    authors = [_author(a) for a in (clean_text(latest.get("authors")) or "").split(";")[:200]]
    doi = str(clean_text(latest["doi"])).lower()
    return Paper(
        ids={"doi": doi},
        source=server,
        title=clean_text(latest.get("title")),
        abstract=clean_text(latest.get("abstract")),
        authors=tuple(Author(name=a) for a in authors if a),
        venue="bioRxiv" if server == "biorxiv" else "medRxiv",
        year=posted.year if posted else None,
        publication_date=posted,
        url=f"https://doi.org/{doi}",
        subjects=(f"{server}:{category}",) if category else (),
    )


def _preprint(server: Server, rows: list[Mapping[str, Any]]) -> Paper | None:
    """``paper_from_versions``, where a value of an unexpected shape costs this preprint only."""
    found = parse_records(server, [rows], lambda r: paper_from_versions(rows, server), 1)
    return found[0] if found else None


def latest_version(rows: Sequence[Mapping[str, Any]]) -> int | None:
    """The highest version among a preprint's rows."""
    versions = [v for r in rows if isinstance(r, Mapping) and (v := _version(r)) is not None]
    return max(versions) if versions else None


class BiorxivApi:
    """Client of ``BIORXIV_API_URL``."""

    name = "biorxiv"

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 20.0,
        transport: httpx.BaseTransport | None = None,
        min_interval: float = 1.0,
        **polite: Any,
    ) -> None:
        client = httpx.Client(base_url=base_url, timeout=timeout, transport=transport)
        self.http = PoliteClient(self.name, client, min_interval=min_interval, **polite)

    def can_fetch(self, ids: dict[str, str]) -> bool:
        return ids.get("doi", "").startswith("10.1101/")

    def details(self, doi: str, until: float | None = None) -> tuple[Server, list[Mapping[str, Any]]] | None:
        """The rows of every version of a preprint, from the server that has it (None: neither has it); with
        ``until`` (``time.monotonic``), asked no later than that (``OutOfTime``)."""
        if not is_doi(doi):
            return None
        first = server_of(doi)
        for server in (first, *(s for s in SERVERS if s != first)):
            try:
                body = self.http.request_json("GET", f"details/{server}/{doi}/na/json", until=until)
            except NotFound:
                continue
            rows = body.get("collection") if isinstance(body, dict) else None
            if isinstance(rows, list) and rows:  # a preprint's versions: a few, never a page of thousands
                return server, [r for r in rows[:MAX_VERSIONS] if isinstance(r, Mapping)]
        return None

    def fetch_versions(self, dois: Sequence[str]) -> dict[str, ArxivVersion]:
        """The latest version of each preprint (number, date, page), for follow-ups; a DOI neither server has is
        left out."""
        out: dict[str, ArxivVersion] = {}
        for doi in dois:
            found = self.details(doi)
            latest = latest_version(found[1]) if found else None
            if found is None or latest is None:
                continue
            row = next(r for r in found[1] if _version(r) == latest)
            label = "bioRxiv" if found[0] == "biorxiv" else "medRxiv"
            page = f"https://www.{found[0]}.org/content/{doi}v{latest}"
            out[doi] = ArxivVersion(latest, parse_date(row.get("date")), None, label, page)
        return out

    def fetch_papers(self, requests: Sequence[dict[str, str]]) -> list[Paper | None]:
        out: list[Paper | None] = []
        for ids in requests:
            found = self.details(ids.get("doi", ""))
            out.append(_preprint(found[0], found[1]) if found else None)
        return out

    def recent(self, server: Server, category: str, since: date, until: date, *, pages: int = 2) -> list[Paper]:
        """The preprints ``server`` posted in ``category`` between the two days (at most ``pages`` pages)."""
        papers: list[Paper] = []
        for page in range(pages):
            body = self.http.request_json(
                "GET",
                f"details/{server}/{since.isoformat()}/{until.isoformat()}/{page * PAGE}",
                params={"category": category},
            )
            rows = body.get("collection") if isinstance(body, dict) else None
            rows = [r for r in rows[:PAGE] if isinstance(r, Mapping)] if isinstance(rows, list) else []
            new = [r for r in rows if str(r.get("version", "1")) == "1"]  # a revision is not a new preprint
            papers += [p for r in new if (p := _preprint(server, [r])) is not None]
            if len(rows) < PAGE:
                break
        return papers

    def close(self) -> None:
        self.http.close()
