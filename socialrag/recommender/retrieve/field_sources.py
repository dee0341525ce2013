"""Candidate sources for every field, beside Semantic Scholar, arXiv and the catalog:

- ``openalex``: OpenAlex's works of the channel's window, from a search of the focus (else of the words of the
  channel's most engaged papers) and from the OpenAlex topics of the papers the channel shared;
- ``biorxiv`` and ``medrxiv``: the week's new preprints in the categories members named
  (`/paperping sources biorxiv cell_biology`), else in the categories of the preprints the channel shared;
- ``pubmed``: the month's newest PubMed articles for the query members named (`/paperping sources pubmed ...`),
  else for the words of the channel's most engaged papers.

Under the default sources, ``openalex`` and ``pubmed`` run for a channel whose shares are mostly neither on
arXiv nor at a computer-science venue (as ``arxiv`` runs for one that shares arXiv papers), for a channel with
no shares yet (its focus is all there is to go on, and nobody knows its field), and whenever the sources asked
before them found nothing (Semantic Scholar refusing, arXiv finding nothing: ``field_sources_serve``); once
members choose the sources, each runs as named.
A source that fails costs its own candidates only (``pipeline.gather_candidates``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, timedelta
from typing import Any

import psycopg

from socialrag import storage
from socialrag.errors import SourceError
from socialrag.knowledge.embed import Embed, record_found
from socialrag.knowledge.papers.biorxiv import BiorxivApi, Server, normalize_category, paper_from_versions
from socialrag.knowledge.papers.openalex import OpenAlex
from socialrag.knowledge.papers.pubmed import PubMed
from socialrag.models import Paper
from socialrag.recommender.retrieve.candidates import CandidateQuery, SearchCache, seed_papers
from socialrag.recommender.retrieve.topic_words import top_words

log = logging.getLogger(__name__)
FIELD_WINDOW_DAYS = 30  # how far back `openalex` and `pubmed` look when the channel has no window of its own
PREPRINT_DAYS = 7  # the new preprints of the last week


@dataclass(frozen=True)
class FieldTerms:
    """What members named for these sources (``channel_settings.source_terms``), and whether they chose the
    sources at all (``sources_chosen``)."""

    biorxiv: tuple[str, ...] = ()
    medrxiv: tuple[str, ...] = ()
    pubmed: str | None = None
    chosen: bool = False

    @classmethod
    def from_settings(cls, terms: Mapping[str, Any], chosen: bool) -> FieldTerms:
        def categories(server: Server) -> tuple[str, ...]:
            raw = terms.get(server)
            words = [normalize_category(server, str(w)) for w in raw] if isinstance(raw, list) else []
            return tuple(w for w in words if w)

        query = terms.get("pubmed")
        return cls(categories("biorxiv"), categories("medrxiv"), str(query)[:300] if query else None, chosen)


def mostly_off_arxiv(conn: psycopg.Connection, query: CandidateQuery) -> bool:
    """Whether fewer than half of the papers the channel shared are on arXiv or at a computer-science venue
    (the ACL Anthology, the ACM's and IEEE's DOIs...): False when it shared none."""
    computing, total = storage.subjects.count_computer_science(conn, list(query.ctx.papers))
    return total > 0 and computing * 2 < total


def field_sources_serve(conn: psycopg.Connection, query: CandidateQuery, terms: FieldTerms) -> bool:
    """Whether ``openalex`` and ``pubmed`` serve this channel: as named when members chose the sources; else for a
    channel with no shares yet, when the sources before them found no new candidate, or when its shares are
    mostly off arXiv (``mostly_off_arxiv``)."""
    if terms.chosen or not query.ctx.papers or query.found_before == 0:
        return True
    return mostly_off_arxiv(conn, query)


def channel_words(query: CandidateQuery, most: int = 4) -> list[str]:
    """The words of the channel's most engaged recent papers' titles (its focus's words first, while it has one)."""
    if query.focus_words:
        return query.focus_words.split()[:8]
    positive, _ = seed_papers(query, recent_days=365, top=20)
    titles = [
        (paper.info.title, query.weights.get(pid, 0.0))
        for pid in positive
        if (paper := query.ctx.papers.get(pid)) is not None and paper.info.title
    ]
    return top_words(titles, most)


def _since(query: CandidateQuery, days: int) -> Any:
    return (query.published_after or query.ctx.as_of - timedelta(days=days)).astimezone(UTC).date()


class OpenAlexRecent:
    name = "openalex"

    def __init__(self, client: OpenAlex, terms: FieldTerms, *, embed: Embed | None = None) -> None:
        self.client, self.terms, self.embed = client, terms, embed

    def fetch_candidates(self, conn: psycopg.Connection, query: CandidateQuery) -> list[int]:
        if not field_sources_serve(conn, query, self.terms):
            return []
        topics = storage.subjects.load_subjects(conn, list(query.ctx.papers), "openalex:")[:5]
        words = " ".join(channel_words(query))
        if not words and not topics:
            return []
        try:
            papers = self.client.recent(words=words or None, topics=topics, since=_since(query, FIELD_WINDOW_DAYS))
        except SourceError as exc:
            log.warning("OpenAlex works: %s", exc)
            return []
        return record_found(conn, papers, self.embed)


class PreprintServer:
    """The new preprints of one server (``biorxiv`` or ``medrxiv``) in the channel's categories, each category
    asked once a day by the whole process (``cache``)."""

    def __init__(
        self,
        client: BiorxivApi,
        server: Server,
        terms: FieldTerms,
        *,
        embed: Embed | None = None,
        cache: SearchCache | None = None,
    ) -> None:
        self.name: str = server
        self.client, self.server, self.terms, self.embed, self.cache = client, server, terms, embed, cache

    def categories(self, conn: psycopg.Connection, query: CandidateQuery) -> list[str]:
        """The categories members named, else those of the preprints the channel shared (asking the server for
        the categories of up to three preprints another source described first)."""
        named = self.terms.biorxiv if self.server == "biorxiv" else self.terms.medrxiv
        if named:
            return list(named)
        shared = list(query.ctx.papers)
        for doi in storage.subjects.load_preprints_without_subjects(conn, shared):
            try:
                found = self.client.details(doi)
            except SourceError as exc:
                log.warning("%s categories: %s", self.server, exc)
                break
            paper = paper_from_versions(found[1], found[0]) if found else None
            if paper is not None and paper.subjects:
                record_found(conn, [paper], None)
            else:
                storage.subjects.mark_no_subjects(conn, [doi])
        return storage.subjects.load_subjects(conn, shared, f"{self.server}:")[:3]

    def fetch_candidates(self, conn: psycopg.Connection, query: CandidateQuery) -> list[int]:
        until = query.ctx.as_of.astimezone(UTC).date()
        since = until - timedelta(days=PREPRINT_DAYS)
        found: list[int] = []
        for category in self.categories(conn, query):
            key = f"{self.server}|{category}|{until.isoformat()}"
            cached = self.cache.get(key) if self.cache is not None else None
            if cached is None:
                try:
                    papers: list[Paper] = self.client.recent(self.server, category, since, until)
                except SourceError as exc:
                    log.warning("%s new preprints in %s: %s", self.server, category, exc)
                    continue
                cached = record_found(conn, papers, self.embed)
                if self.cache is not None:
                    self.cache.put(key, cached)
            found += cached
        return list(dict.fromkeys(found))


def pubmed_query(words: list[str]) -> str:
    """A PubMed query for these words: any of them in a title or abstract."""
    return " OR ".join(f"{w}[tiab]" for w in words)


class PubMedRecent:
    name = "pubmed"

    def __init__(self, client: PubMed, terms: FieldTerms, *, embed: Embed | None = None) -> None:
        self.client, self.terms, self.embed = client, terms, embed

    def fetch_candidates(self, conn: psycopg.Connection, query: CandidateQuery) -> list[int]:
        term = self.terms.pubmed
        if term is None:
            if not field_sources_serve(conn, query, self.terms):
                return []
            words = channel_words(query)
            term = pubmed_query(words) if words else None
        if not term:
            return []
        days = max(1, (query.ctx.as_of.astimezone(UTC).date() - _since(query, FIELD_WINDOW_DAYS)).days)
        try:
            papers = self.client.recent(term, days=days)
        except SourceError as exc:
            log.warning("PubMed search: %s", exc)
            return []
        return record_found(conn, papers, self.embed)
