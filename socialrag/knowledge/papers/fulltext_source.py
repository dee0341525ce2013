"""Where a paper's open-access full text may be, best first, and reading it from there (issue 56).

From a paper's identities and the open-access PDF OpenAlex reported for it: PubMed Central's JATS XML (a PMCID,
through PMC's OAI-PMH service, which gives the full text of its open-access subset only), bioRxiv's or medRxiv's
JATS XML (the ``jatsxml`` of the latest version the bioRxiv API lists, its path on ``BIORXIV_URL``/``MEDRXIV_URL``),
arXiv's HTML then its PDF, the ACL Anthology's PDF, and OpenAlex's PDF as given (https only). Each is fetched in turn
through ``WebHosts`` (robots.txt, each host's pace, redirects) within one deadline for the paper, until one parses.

Licences: what the file states; else, for the ACL Anthology, the Anthology's licence of the paper's year (CC BY 4.0
since 2016); for bioRxiv and medRxiv, the licence their API lists; for OpenAlex's PDF, the licence OpenAlex gives;
for arXiv, none is said (each version has the licence its authors chose on arXiv, which the file does not state).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import urlsplit

import httpx

from socialrag.config import Settings
from socialrag.errors import NotFound, SourceError
from socialrag.knowledge.fulltext import (
    MAX_BYTES,
    MAX_PASSAGES,
    FullTextError,
    TimeUp,
    parse_article,
    parse_fulltext,
    passages,
)
from socialrag.knowledge.link_ids import acl_id, normalize_arxiv_id
from socialrag.knowledge.papers.biorxiv import BiorxivApi, latest_version
from socialrag.knowledge.papers.crossref import is_doi
from socialrag.knowledge.papers.http import OutOfTime, Refused, SharedPace, TooLarge, Undecodable
from socialrag.knowledge.papers.oai import NotOpenAccess, article_of
from socialrag.knowledge.papers.openalex import OpenAlex
from socialrag.knowledge.papers.web_hosts import Disallowed, Fetched, WebHosts
from socialrag.models import Paper

log = logging.getLogger(__name__)

Kind = Literal["jats", "html", "pdf"]
Status = Literal["read", "none", "unreadable", "later"]  # later: a host did not answer now; tried again soon
PAPER_SECONDS = 90.0  # everything one paper's reading may take, every location tried included
LEAST_SECONDS = 5.0  # a location is not begun with less time than this left
ACCEPT = {
    "jats": "application/xml, text/xml;q=0.9",
    "html": "text/html, application/xhtml+xml;q=0.9",
    "pdf": "application/pdf",
}
NOTE_CHARS = 600


@dataclass(frozen=True)
class FullTextHosts:
    """The full-text hosts' base addresses (settings, so that local stand-ins can take their place)."""

    arxiv: str
    acl: str
    biorxiv: str
    medrxiv: str
    pmc: str

    @classmethod
    def from_settings(cls, settings: Settings) -> FullTextHosts:
        return cls(
            settings.arxiv_url,
            settings.acl_anthology_url,
            settings.biorxiv_url,
            settings.medrxiv_url,
            settings.pmc_url,
        )

    def all(self) -> tuple[str, ...]:
        return (self.arxiv, self.acl, self.biorxiv, self.medrxiv, self.pmc)


@dataclass(frozen=True)
class Location:
    source: str  # pmc, biorxiv (looked up first), arxiv, acl, openalex
    kind: Kind
    url: str  # for biorxiv: the preprint's DOI, whose JATS address the bioRxiv API gives
    licence: str | None = None  # the host's licence for the paper when the file states none


@dataclass(frozen=True)
class Reading:
    """What reading a paper came to: its passages (section, text) when read, else why not, in words."""

    status: Status
    note: str | None = None
    kind: str | None = None
    source_url: str | None = None
    licence: str | None = None
    passages: tuple[tuple[str, str], ...] = ()
    # the open-access PDF and its licence OpenAlex gave when it was asked now (kept with the paper)
    open_access: tuple[str, str | None] | None = None


def acl_licence(ident: str) -> str:
    """The ACL Anthology's licence for a paper of its year: CC BY 4.0 from 2016, CC BY-NC-SA 3.0 before."""
    if ident[:4].isdigit():
        year = int(ident[:4])
    else:  # P15-1001: the letter of the venue, then the year's two digits
        yy = int(ident[1:3]) if ident[1:3].isdigit() else 0
        year = 1900 + yy if yy > 50 else 2000 + yy
    return "CC BY 4.0" if year >= 2016 else "CC BY-NC-SA 3.0"


def list_locations(
    ids: Mapping[str, str], oa_url: str | None, oa_licence: str | None, hosts: FullTextHosts
) -> list[Location]:
    """Where the paper's open full text may be, best first (JATS before HTML before PDF). An identifier is used
    only in its known form, so that nothing written in a message can move a request elsewhere."""
    out: list[Location] = []
    pmcid = ids.get("pmcid", "").upper()
    if pmcid.startswith("PMC") and pmcid[3:].isdigit() and len(pmcid) <= 12:
        query = f"?verb=GetRecord&identifier=oai:pubmedcentral.nih.gov:{int(pmcid[3:])}&metadataPrefix=pmc"
        out.append(Location("pmc", "jats", hosts.pmc + query))
    doi = ids.get("doi", "")
    if doi.startswith("10.1101/") and is_doi(doi):
        out.append(Location("biorxiv", "jats", doi))
    arxiv = normalize_arxiv_id(ids.get("arxiv", ""))
    if arxiv:
        out += [
            Location("arxiv", "html", f"{hosts.arxiv}html/{arxiv}"),
            Location("arxiv", "pdf", f"{hosts.arxiv}pdf/{arxiv}"),
        ]
    acl = acl_id(ids.get("acl", ""))
    if acl:
        out.append(Location("acl", "pdf", f"{hosts.acl}{acl}.pdf", acl_licence(acl)))
    if oa_url and oa_url.lower().startswith("https://") and all(loc.url != oa_url for loc in out):
        out.append(Location("openalex", "pdf", oa_url, oa_licence))
    return out


@dataclass(frozen=True)
class _Try:
    status: Status
    note: str
    url: str | None = None


class FullTextReader:
    """Reads papers' open-access full text. ``biorxiv`` and ``openalex`` are the metadata clients of those
    services (None: bioRxiv's and medRxiv's files are not looked up, OpenAlex is not asked)."""

    def __init__(
        self,
        hosts: FullTextHosts,
        web: WebHosts,
        *,
        biorxiv: BiorxivApi | None = None,
        openalex: OpenAlex | None = None,
        paper_seconds: float = PAPER_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.hosts, self.web, self.biorxiv, self.openalex = hosts, web, biorxiv, openalex
        self.paper_seconds = paper_seconds
        self._clock = clock

    def read(self, ids: Mapping[str, str], oa_url: str | None = None, oa_licence: str | None = None) -> Reading:
        """The paper's full text from the first location that gives one; never raises for what a host does. All of
        it, the look-ups at OpenAlex and bioRxiv included, takes at most ``paper_seconds``."""
        until = self._clock() + self.paper_seconds
        found = None
        locations = list_locations(ids, oa_url, oa_licence, self.hosts)
        if not locations and oa_url is None:
            try:
                record = self._ask_openalex(ids, until)
            except OutOfTime as exc:
                return Reading("later", f"the time for this paper was spent asking OpenAlex ({exc.detail[:160]})")
            if record is not None:
                locations = list_locations({**record.ids, **ids}, record.oa_pdf_url, record.oa_licence, self.hosts)
                found = (record.oa_pdf_url, record.oa_licence) if record.oa_pdf_url else None
        if not locations:
            return Reading("none", _NO_LOCATION, open_access=found)
        tries: list[_Try] = []
        for location in locations:
            if until - self._clock() < min(LEAST_SECONDS, self.paper_seconds / 4):
                tries.append(_Try("later", "the time for this paper was spent before every place was tried"))
                break
            outcome = self._try(location, until)
            if isinstance(outcome, Reading):
                return replace(outcome, open_access=found)
            tries.append(outcome)
        return replace(summarize(tries), open_access=found)

    def close(self) -> None:
        self.web.close()
        for client in (self.biorxiv, self.openalex):
            if client is not None:
                client.close()

    def _ask_openalex(self, ids: Mapping[str, str], until: float) -> Paper | None:
        """OpenAlex's record of a paper known by its DOI alone: its open-access PDF, or a PMCID (``OutOfTime`` when
        the paper's time runs out first)."""
        doi = ids.get("doi")
        if self.openalex is None or not doi:
            return None
        try:
            answers = self.openalex.fetch_papers([{"doi": doi}], until)
        except OutOfTime:
            raise
        except SourceError as exc:
            log.info("full text: OpenAlex could not be asked: %s", exc)
            return None
        return answers[0] if answers else None

    def _try(self, location: Location, until: float) -> Reading | _Try:
        try:
            if location.source == "biorxiv":
                resolved = self._biorxiv_location(location.url, until)
                if isinstance(resolved, _Try):
                    return resolved
                location = resolved
            fetched = self.web.fetch(location.url, until, ACCEPT[location.kind])
        except NotFound:
            return _Try("none", f"{_where(location)} has no file for it", location.url)
        except Disallowed as exc:
            return _Try("none", f"{_host(location.url)}: {exc.detail}", location.url)
        except Refused as exc:
            login = " (it asks for a login)" if exc.status in (401, 403) else ""
            return _Try("unreadable", f"{_where(location)} refused it: HTTP {exc.status}{login}", location.url)
        except TooLarge:
            cap = MAX_BYTES // 1_000_000
            return _Try("unreadable", f"{_where(location)} has a file larger than {cap} MB", location.url)
        except Undecodable as exc:  # a body gzipped twice, or in a coding not read
            return _Try("unreadable", f"{_where(location)}: {exc.detail[:160]}", location.url)
        except SourceError as exc:  # too slow, held by a Retry-After, robots.txt unreadable, unreachable: later
            return _Try("later", f"{_host(location.url)} did not answer now ({exc.detail[:160]})", location.url)
        left = until - self._clock()
        if left <= 0:  # fetched in time, but no time is left to read it
            spent = "the time for this paper was spent as its file came, before it was read"
            return _Try("later", f"{_where(location)}: {spent}", location.url)
        return read_fetched(location, fetched, left)

    def _biorxiv_location(self, doi: str, until: float) -> Location | _Try:
        """The JATS address of the preprint's latest version, on the server's own site, asked before ``until``."""
        if self.biorxiv is None:
            return _Try("none", "bioRxiv's API is not used here")
        found = self.biorxiv.details(doi, until)  # a SourceError is the caller's: later
        rows = found[1] if found else []
        latest = latest_version(rows)
        row = next((r for r in rows if str(r.get("version")) == str(latest)), None)
        path = urlsplit(str(row.get("jatsxml") or "")).path if row else ""
        if found is None or not path.endswith(".xml") or ".." in path:
            return _Try("none", "bioRxiv and medRxiv list no full text (JATS XML) for it")
        base = self.hosts.biorxiv if found[0] == "biorxiv" else self.hosts.medrxiv
        licence = str(row.get("license") or "").strip()[:100] if row else ""
        return Location(found[0], "jats", base + path.lstrip("/"), licence or None)


_NO_LOCATION = (
    "no open full text is known for it: no PubMed Central, bioRxiv, medRxiv, arXiv or ACL Anthology identifier, "
    "and no open-access PDF from OpenAlex"
)


def read_fetched(location: Location, fetched: Fetched, seconds: float | None = None) -> Reading | _Try:
    """A fetched file parsed as the location's kind, a PDF within the ``seconds`` the paper has left (later when
    they run out); a web page where a PDF was expected (a login or landing page) and a file that cannot be read
    are unreadable, with the parser's reason. Never raises: a file that breaks the reading some other way (too
    deep, too large for the memory) is unreadable too, with what happened."""
    body, where = fetched.body, _where(location)
    head = body[:512].lstrip().lower()
    page = fetched.content_type in ("text/html", "application/xhtml+xml")
    looks_html = page or head.startswith((b"<!doctype html", b"<html"))
    if location.kind == "pdf" and looks_html and not body.startswith(b"%PDF-"):
        return _Try("unreadable", f"{where} answered a web page (a login or landing page), not a PDF", fetched.url)
    try:
        if location.kind == "jats":
            paper = parse_article(article_of(body))
        else:
            paper = parse_fulltext(body, location.kind, seconds)
        found = passages(paper, MAX_PASSAGES + 1)  # one more than is kept: whether any was left out
    except NotOpenAccess as exc:  # PMC has no open full text of it (not in its open-access subset)
        return _Try("none", f"{where}: {exc}", fetched.url)
    except TimeUp as exc:  # the paper's time, not the file: read again another time
        return _Try("later", f"{where}: {exc}", fetched.url)
    except FullTextError as exc:
        return _Try("unreadable", f"{where}: {exc}", fetched.url)
    except Exception as exc:  # RecursionError, MemoryError...: this file, not the host; not asked for again soon
        log.warning("full text: %s broke the reader: %s", fetched.url[:200], type(exc).__name__)
        return _Try("unreadable", f"{where}: the file broke the reader ({type(exc).__name__})", fetched.url)
    cut = (f"passages after {MAX_PASSAGES:,}",) if len(found) > MAX_PASSAGES else ()
    pieces = tuple((p.section, p.text) for p in found[:MAX_PASSAGES])
    note = "; ".join(paper.notes + cut) or None
    return Reading("read", note, location.kind, fetched.url, paper.licence or location.licence, pieces)


def summarize(tries: list[_Try]) -> Reading:
    """Why no location gave a full text: later when a host did not answer (tried again soon), unreadable when a
    file was found but could not be read, else none; the note says what each place answered."""
    status: Status = "none"
    for wanted in ("unreadable", "later"):
        if any(t.status == wanted for t in tries):
            status = wanted
    url = next((t.url for t in tries if t.status == status and t.url), None)
    note = "; ".join(dict.fromkeys(t.note for t in tries))
    return Reading(status, note[:NOTE_CHARS], source_url=url)


_NAMES = {
    "pmc": "PubMed Central",
    "biorxiv": "bioRxiv",
    "medrxiv": "medRxiv",
    "arxiv": "arXiv",
    "acl": "the ACL Anthology",
}


def _where(location: Location) -> str:
    name = _NAMES.get(location.source)
    if location.source == "arxiv":
        return f"arXiv ({location.kind.upper()})"
    return name or f"the open-access PDF OpenAlex gives ({_host(location.url)})"


def _host(url: str) -> str:
    return urlsplit(url).netloc[:80] or "the host"


def open_fulltext_reader(
    settings: Settings, shared: SharedPace | None = None, *, transport: httpx.BaseTransport | None = None
) -> FullTextReader | None:
    """The full-text reader of these settings, its hosts' pace shared through ``shared``; None when full text is
    off (``PAPERPING_FULLTEXT=0``) or the service is offline. The caller closes it."""
    if not settings.fulltext_on:
        return None
    hosts = FullTextHosts.from_settings(settings)
    timeout = settings.http_timeout
    web = WebHosts(hosts.all(), timeout=timeout, transport=transport, shared=shared)
    biorxiv = BiorxivApi(settings.biorxiv_api_url, timeout=timeout, transport=transport, shared=shared)
    openalex = OpenAlex(
        settings.openalex_api_url, mailto=settings.contact_email, timeout=timeout, transport=transport, shared=shared
    )
    return FullTextReader(hosts, web, biorxiv=biorxiv, openalex=openalex)
