"""Keep paper metadata fresh: ask each source in turn for the papers still missing, cache the answers.

Semantic Scholar first (it has tldrs, affiliations and references), then arXiv for arXiv papers, bioRxiv's API
for bioRxiv and medRxiv preprints (their category and versions), PubMed for PMIDs and PMCIDs (abstracts),
OpenAlex for any DOI, PMID or PMCID (topics, and every field), and Crossref last (any DOI, an Elsevier PII).
Each source is only asked for what the ones before it did not find, so that Semantic Scholar answering 429
costs its own answers only. A paper no
source knows keeps its identifier and the sharing message's label and text as its best text, and is tried
again after ``PAPERPING_METADATA_RETRY_HOURS``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import TypeVar

import psycopg

from socialrag import storage
from socialrag.config import Settings
from socialrag.db import REFUSED, Database
from socialrag.errors import SourceError
from socialrag.knowledge.papers.arxiv import ArxivApi
from socialrag.knowledge.papers.biorxiv import BiorxivApi
from socialrag.knowledge.papers.crossref import Crossref
from socialrag.knowledge.papers.http import Queued, SharedPace
from socialrag.knowledge.papers.openalex import OpenAlex
from socialrag.knowledge.papers.pubmed import PubMed
from socialrag.knowledge.papers.semanticscholar import Citation, SemanticScholar, citation_history
from socialrag.knowledge.papers.source import MetadataSource, bound_paper, bounded_ids
from socialrag.models import Paper
from socialrag.progress import Progress

log = logging.getLogger(__name__)
S = TypeVar("S")


@dataclass
class RefreshResult:
    found: int = 0
    missing: int = 0
    contexts: int = 0
    citations: int = 0
    dated_counts: int = 0  # readings of a paper's citation count on earlier days, from its citing papers' dates
    errors: list[str] | None = None
    # each source asked: None when it answered, else its error (to back off a source failing again and again)
    outcomes: dict[str, str | None] = field(default_factory=dict)
    held_back: set[int] = field(default_factory=set)  # requests no source was asked about: theirs are held


def open_sources(settings: Settings, shared: SharedPace | None = None) -> list[MetadataSource]:
    """The metadata sources for these settings (none when offline); ``shared`` keeps their pace across
    processes. The caller closes them."""
    if settings.offline:
        return []
    timeout = settings.http_timeout
    contact = settings.contact_email
    return [
        SemanticScholar(settings.s2_api_url, api_key=settings.s2_api_key, timeout=timeout, shared=shared),
        ArxivApi(settings.arxiv_api_url, timeout=timeout, shared=shared),
        BiorxivApi(settings.biorxiv_api_url, timeout=timeout, shared=shared),
        PubMed(settings.pubmed_api_url, api_key=settings.pubmed_api_key, email=contact, timeout=timeout, shared=shared),
        OpenAlex(settings.openalex_api_url, mailto=contact, timeout=timeout, shared=shared),
        Crossref(settings.crossref_api_url, mailto=settings.crossref_mailto, timeout=timeout, shared=shared),
    ]


@contextmanager
def build_sources(settings: Settings, shared: SharedPace | None = None) -> Iterator[list[MetadataSource]]:
    """The metadata sources for these settings (none when offline), closed afterwards."""
    sources = open_sources(settings, shared)
    try:
        yield sources
    finally:
        for source in sources:
            source.close()


def refresh_metadata(
    db: Database,
    sources: Sequence[MetadataSource],
    settings: Settings,
    *,
    now: datetime | None = None,
    page: int = 500,
    max_pages: int = 100,
) -> RefreshResult:
    """Fetch metadata for papers that lack it or whose copy is stale; record what could not be had."""
    now = now or datetime.now(UTC)
    result = RefreshResult(errors=[])
    if not sources:
        return result
    max_age = timedelta(days=settings.metadata_max_age_days)
    retry_at = now + timedelta(hours=settings.metadata_retry_hours)
    with Progress(None, "metadata lookups", "paper") as progress:
        for _ in range(max_pages):
            with db.connection() as conn:
                todo = storage.lookups.load_papers_to_fetch(conn, now, max_age, limit=page)
            if not todo:
                break
            found = ask_sources(sources, [ids for _, ids in todo], result)
            papers = [(i, replace(p, ids={**todo[i][1], **p.ids})) for i, p in enumerate(found) if p]
            refused = record_found(db, papers, [pid for pid, _ in todo], now)
            missing = [pid for i, ((pid, _), p) in enumerate(zip(todo, found, strict=True)) if not p or i in refused]
            with db.connection() as conn:
                storage.lookups.record_fetch_failure(conn, missing, retry_at)
            result.found += len(papers) - len(refused)
            result.missing += len(missing)
            progress.update(len(todo))
    fill_reference_contexts(db, sources, result)
    fill_citations(db, sources, now - max_age, result, today=now.date())
    return result


def ask_sources(
    sources: Sequence[MetadataSource],
    requests: list[dict[str, str]],
    result: RefreshResult,
    held: Collection[str] = (),
) -> list[Paper | None]:
    """Each source in turn for the papers still missing, except the ``held`` ones (backed off as a whole); a
    source that fails is noted in ``result.errors``, each source's outcome in ``result.outcomes``, and the
    requests only held sources could have answered in ``result.held_back``."""
    found: list[Paper | None] = [None] * len(requests)
    asked: set[int] = set()
    for source in sources:
        capable = [i for i, p in enumerate(found) if p is None and source.can_fetch(requests[i])]
        if not capable or source.name in held:
            continue
        asked.update(capable)
        try:
            answers = source.fetch_papers([requests[i] for i in capable])
        except SourceError as exc:
            log.warning("metadata: %s", exc)
            assert result.errors is not None
            result.errors.append(str(exc))
            if not isinstance(exc, Queued):  # a request not sent for the queue says nothing of the source's health
                result.outcomes[source.name] = str(exc)
            continue
        result.outcomes[source.name] = None
        for i, paper in zip(capable, answers, strict=True):
            if paper is not None and paper.title:
                found[i] = paper
    result.held_back = {i for i in range(len(requests)) if i not in asked and found[i] is None} if held else set()
    return found


def record_found(db: Database, found: Sequence[tuple[int, Paper]], asked: Sequence[int], now: datetime) -> set[int]:
    """Store what the sources answered, each paper under the caller's own number (``asked[number]`` the stored
    paper the sources were asked about, which the answer always updates), and mark those papers fetched. One the
    database still refuses (a value no source's checks foresaw) costs only itself: the others are stored, and the
    numbers of the refused ones are returned."""
    refused: set[int] = set()

    def write(conn: psycopg.Connection, items: Sequence[tuple[int, Paper]]) -> int:
        records, anchors = [bound_paper(p) for _, p in items], [asked[i] for i, _ in items]
        storage.lookups.mark_fetched(conn, storage.papers.record_papers(conn, records, anchors=anchors), now)
        return len(items)

    def refuse(item: tuple[int, Paper], exc: Exception) -> None:
        log.warning("metadata: the database refused %s's record of %s: %s", item[1].source, item[1].ids, exc)
        refused.add(item[0])

    db.write_batch(found, write, refuse)
    return refused


def source_of(sources: Sequence[MetadataSource], kind: type[S]) -> S | None:
    """The source of this kind among ``sources`` (None when this process has none: offline, or not configured)."""
    return next((s for s in sources if isinstance(s, kind)), None)


def fill_reference_contexts(
    db: Database, sources: Sequence[MetadataSource], result: RefreshResult, until: float | None = None
) -> None:
    """Citing sentences for shared papers that cite another paper shared in the same channel; the papers not
    reached by ``until`` (``time.monotonic``) wait for the next run."""
    s2 = source_of(sources, SemanticScholar)
    if s2 is None:
        return
    with db.connection() as conn:
        todo = storage.citations.load_citations_lacking_contexts(conn)
    for citing_id, s2_id in todo:
        if until is not None and time.monotonic() > until:
            log.info("reference contexts: the run's time is spent; the rest wait for the next run")
            return
        try:
            contexts = s2.fetch_reference_contexts(s2_id)
            with db.connection() as conn:
                result.contexts += storage.citations.record_reference_contexts(conn, citing_id, contexts)
        except (SourceError, *REFUSED) as exc:  # this paper's only: the next one goes on
            log.warning("reference contexts of paper %d: %s", citing_id, exc)


def citation_rows(citing: Sequence[Citation]) -> list[tuple[str, str, str | None, int | None, tuple[str, ...]]]:
    """Citing papers as ``paper_citations`` keeps them: one row per identity (the corpus id left out)."""
    return [(s, v, c.title, c.year, c.contexts) for c in citing for s, v in bounded_ids(c.ids).items() if s != "corpus"]


def fill_citations(
    db: Database,
    sources: Sequence[MetadataSource],
    stale_before: datetime,
    result: RefreshResult,
    today: date | None = None,
    until: float | None = None,
) -> None:
    """Papers citing what channels shared (new work building on what a group engaged with); the papers not
    reached by ``until`` (``time.monotonic``) wait for the next run."""
    s2 = source_of(sources, SemanticScholar)
    if s2 is None:
        return
    with db.connection() as conn:
        todo = storage.citations.load_papers_lacking_citations(conn, stale_before)
    today = today or datetime.now(UTC).date()
    for paper_id, s2_id, count in todo:
        if until is not None and time.monotonic() > until:
            log.info("citations: the run's time is spent; the rest wait for the next run")
            return
        try:
            citing = s2.fetch_citations(s2_id)
        except SourceError as exc:
            log.warning("citations: %s", exc)
            continue
        # the count as it was on earlier days, from the citing papers' dates (when it is the paper's popularity)
        history = citation_history(citing, count, today) if count is not None else ()
        if record_citing_papers(db, paper_id, citing, history):
            result.citations += len(citing)
            result.dated_counts += len(history)


def record_citing_papers(
    db: Database, paper_id: int, citing: Sequence[Citation], history: Sequence[tuple[date, float]] = ()
) -> bool:
    """Store the papers citing ``paper_id`` (and its count as it was, from their dates). Ones the database refuses
    are logged and the paper is marked asked for, its earlier citations kept: it goes behind the others, never
    first in every run, holding up the papers after it. False when they were not stored."""
    try:
        with db.connection() as conn:
            storage.citations.record_citations(conn, paper_id, citation_rows(citing))
            storage.papers.add_popularity_readings(conn, paper_id, history)
    except REFUSED as exc:
        log.warning("citations: the database refused the citing papers of paper %d: %s", paper_id, exc)
        with db.connection() as conn:
            storage.citations.mark_citations_fetched(conn, paper_id)
        return False
    return True
