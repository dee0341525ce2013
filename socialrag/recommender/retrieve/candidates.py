"""Where candidate papers come from, behind one interface; each usable alone or together, per channel.

- ``catalog``: the local catalog: the whole window when it holds at most ``WHOLE_WINDOW`` papers (the ranking
  sees everything the channel could pick), else the nearest neighbours in pgvector of each of the channel's
  20 most engaged papers, of their mean and of the focus.
- ``semanticscholar``: Semantic Scholar recommendations from the channel's positive and negative seeds.
- ``arxiv``: new arXiv submissions in the categories members set (`/paperping sources arxiv cs.CL`), else in
  the categories of the arXiv papers the channel shares.
- ``focus``: while a channel has a focus, Semantic Scholar's paper search and arXiv's search for its words
  (only on the services among the channel's sources); the catalog search leans on the focus as well.

A source returns paper ids (recording any new paper's metadata first); the recommender excludes what the
channel already shared or was already recommended, under any of a paper's identities.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

import numpy as np
import psycopg

from socialrag import storage
from socialrag.db import Connect
from socialrag.errors import DatabaseError, SourceError
from socialrag.knowledge.embed import Embed, record_found
from socialrag.knowledge.papers.arxiv import ArxivApi, normalize_arxiv_category, papers_from_atom
from socialrag.knowledge.papers.semanticscholar import PAPER_FIELDS, SemanticScholar, s2_papers
from socialrag.models import Paper
from socialrag.recommender.retrieve.context import ChannelContext

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CandidateQuery:
    ctx: ChannelContext
    weights: Mapping[int, float]
    model: str
    window_days: float | None = None  # the learnt window is a fraction of days, used as it is (as the replay does)
    limit: int = 200
    categories: tuple[str, ...] = ()  # arXiv categories members set for the channel
    focus_words: str | None = None  # the words of a focus, links taken out
    exclude: frozenset[int] = frozenset()  # papers a focus links to: what the focus is about, not news
    # the moment is now (a slot, a command), not a replay of the past: a paper in the store exists, even one dated
    # only to this month, which a replay holds back until that month has ended
    serving: bool = False
    # how many new candidates the sources asked before this one found (``pipeline.gather_candidates``); None: not
    # asked through it. A source that stands in when the usual ones fail reads it
    found_before: int | None = None

    @property
    def published_after(self) -> datetime | None:
        return self.ctx.as_of - timedelta(days=self.window_days) if self.window_days else None


class CandidateSource(Protocol):
    name: str

    def fetch_candidates(self, conn: psycopg.Connection, query: CandidateQuery) -> list[int]: ...


def seed_papers(query: CandidateQuery, *, recent_days: int = 90, top: int = 20) -> tuple[list[int], list[int]]:
    """Positive seeds (engaged with, or replied to, recently) and negative seeds (negative engagement)."""
    since = query.ctx.as_of - timedelta(days=recent_days)
    recent = [p for p in query.ctx.papers.values() if p.last_activity >= since]
    positive = sorted(
        (p for p in recent if query.weights.get(p.info.paper_id, 0) > 0 or p.replies),
        key=lambda p: query.weights.get(p.info.paper_id, 0),
        reverse=True,
    )
    negative = [pid for pid, w in query.weights.items() if w < 0]
    return [p.info.paper_id for p in positive[:top]], negative[:top]


def member_interests(ctx: ChannelContext, most: int) -> list[np.ndarray]:
    """The unit centroid of the papers each member shared first, for the ``most`` members with the most such
    shares (two or more)."""
    own: dict[str, list[np.ndarray]] = {}
    for pid, paper in ctx.papers.items():
        first = paper.first_share.user_id
        member = ctx.members.get(first or "")
        if member is not None and not member.is_bot and pid in ctx.vectors:
            own.setdefault(member.user_id, []).append(ctx.vectors[pid])
    busiest = sorted((m for m in own if len(own[m]) >= 2), key=lambda m: (-len(own[m]), m))[:most]
    centres = [np.mean(np.stack(own[m]), axis=0) for m in busiest]
    return [c / (np.linalg.norm(c) or 1.0) for c in centres]


WHOLE_WINDOW = 5000  # a catalog window this small is ranked whole


class CatalogSource:
    """The catalog's whole window when it is small; else the nearest catalog papers (HNSW, cosine) to each of
    the channel's most engaged papers, to their mean, to the focus and to each active member's own interest (the
    centroid of their shares), so that a quiet member's topic is searched as well as the loudest one."""

    name = "catalog"

    def __init__(
        self,
        per_query: int = 60,
        seeds: int = 20,
        whole: int = WHOLE_WINDOW,
        members: int = 10,
        *,
        beside: Connect | None = None,
    ) -> None:
        self.per_query = per_query
        self.seeds = seeds
        self.whole = whole
        self.members = members  # the most active members whose own interest is one more query
        # with one more connection, half the searches run on it while the other half run on the caller's: each
        # search is the database's own work, and two of them use two cores
        self.beside = beside

    def query_vectors(self, query: CandidateQuery) -> list[np.ndarray]:
        positive, _ = seed_papers(query, recent_days=3650, top=self.seeds)
        if -1 in query.ctx.vectors:  # a focus members asked for leads the search
            positive = [-1, *positive]
        vecs = [query.ctx.vectors[pid] for pid in positive if pid in query.ctx.vectors]
        if len(vecs) > 1:
            mean = np.average(
                np.stack(vecs),
                axis=0,
                weights=[max(query.weights.get(p, 0.0), 1e-3) for p in positive if p in query.ctx.vectors],
            )
            vecs.append(mean / (np.linalg.norm(mean) or 1.0))
        return vecs + member_interests(query.ctx, self.members)

    def fetch_candidates(self, conn: psycopg.Connection, query: CandidateQuery) -> list[int]:
        vectors = self.query_vectors(query)
        if not vectors:
            return []
        window = storage.embeddings.load_catalog_window(
            conn,
            query.model,
            before=query.ctx.as_of,
            after=query.published_after,
            most=self.whole,
            serving=query.serving,
        )
        if window is not None:
            return window
        found = self.neighbours(conn, query, vectors)
        return found[: max(query.limit, self.per_query * len(vectors))]

    def neighbours(self, conn: psycopg.Connection, query: CandidateQuery, vectors: list[np.ndarray]) -> list[int]:
        """The nearest catalog papers to each vector, those of the first vector first, whichever connection
        searched for them. A second connection that cannot be had within a second (the pool busy, the database
        gone) is logged, and its half is searched on ``conn``."""

        def search(on: psycopg.Connection, part: list[np.ndarray]) -> list[int]:
            k = self.per_query + len(query.ctx.excluded_paper_ids)
            after = query.published_after
            return storage.embeddings.load_catalog_neighbours(
                on, query.model, part, before=query.ctx.as_of, after=after, k=k, serving=query.serving
            )

        def search_beside(part: list[np.ndarray]) -> list[int] | None:
            assert self.beside is not None
            try:
                with self.beside() as other:
                    return search(other, part)
            except DatabaseError as exc:
                log.warning("catalog search on a second connection: %s; searching on one", exc)
                return None

        half = len(vectors) // 2
        if self.beside is None or half == 0:
            return search(conn, vectors)
        with ThreadPoolExecutor(max_workers=1) as thread:
            later = thread.submit(search_beside, vectors[half:])
            first = search(conn, vectors[:half])
            rest = later.result()
        return list(dict.fromkeys(first + (rest if rest is not None else search(conn, vectors[half:]))))


class SemanticScholarRecommendations:
    """``POST /recommendations/v1/papers`` with positive and negative seeds, and ``forpaper`` for the
    strongest seed from the chosen pool (``recent`` by default)."""

    name = "semanticscholar"

    def __init__(
        self, client: SemanticScholar, *, pool: str = "recent", limit: int = 100, embed: Embed | None = None
    ) -> None:
        self.client = client
        self.embed = embed
        self.pool = pool
        self.limit = limit

    def fetch_candidates(self, conn: psycopg.Connection, query: CandidateQuery) -> list[int]:
        positive, negative = seed_papers(query)
        ids = storage.papers.load_identities(conn, positive + negative)
        pos = [ids[p]["s2"] for p in positive if "s2" in ids.get(p, {})]
        neg = [ids[p]["s2"] for p in negative if "s2" in ids.get(p, {})]
        if not pos:
            return []
        raw: list[Any] = []
        try:
            body = self.client.http.request_json(
                "POST",
                "recommendations/v1/papers",
                params={"fields": PAPER_FIELDS_RECS, "limit": self.limit},
                json={"positivePaperIds": pos, "negativePaperIds": neg},
            )
            raw += _recommended(body, self.limit)
            body = self.client.http.request_json(
                "GET",
                f"recommendations/v1/papers/forpaper/{pos[0]}",
                params={"fields": PAPER_FIELDS_RECS, "limit": self.limit, "from": self.pool},
            )
            raw += _recommended(body, self.limit)
        except SourceError as exc:
            log.warning("Semantic Scholar recommendations: %s", exc)
        papers = s2_papers(raw, 2 * self.limit)
        return record_found(conn, papers, self.embed)


def _recommended(body: Any, limit: int) -> list[Any]:
    """The recommended papers of an answer, no more than the ``limit`` asked for."""
    found = body.get("recommendedPapers") if isinstance(body, dict) else None
    return found[:limit] if isinstance(found, list) else []


# The recommendation endpoints take the same fields as the graph API, minus nested references.
PAPER_FIELDS_RECS = ",".join(f for f in PAPER_FIELDS.split(",") if not f.startswith(("references.", "authors.")))
PAPER_FIELDS_RECS += ",authors"


class ArxivNew:
    """The newest arXiv submissions in the categories of the arXiv papers the channel shared."""

    name = "arxiv"

    def __init__(self, client: ArxivApi, *, max_results: int = 100, embed: Embed | None = None) -> None:
        self.client = client
        self.embed = embed
        self.max_results = max_results

    def fetch_candidates(self, conn: psycopg.Connection, query: CandidateQuery) -> list[int]:
        chosen = [c for c in map(normalize_arxiv_category, query.categories) if c]  # arXiv matches no other word
        categories = chosen or storage.subjects.load_channel_categories(conn, list(query.ctx.papers))
        if not categories:
            return []
        search = " OR ".join(f"cat:{c}" for c in categories[:5])
        params = {"search_query": search, "sortBy": "submittedDate", "sortOrder": "descending"}
        papers = search_arxiv(self.client, {**params, "max_results": self.max_results}, "new submissions")
        return record_found(conn, papers, self.embed)


class SearchCache:
    """The papers each online search found, kept ``ttl`` (a few hours) and shared by every member and channel
    of the process: the same words ask Semantic Scholar and arXiv once. Public papers only (no channel's facts),
    at most ``size`` searches, the least recently used going first."""

    def __init__(self, ttl: timedelta = timedelta(hours=3), size: int = 512) -> None:
        self.ttl, self.size = ttl, size
        self._found: OrderedDict[str, tuple[float, list[int]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> list[int] | None:
        with self._lock:
            kept = self._found.get(key)
            if kept is None or time.monotonic() - kept[0] > self.ttl.total_seconds():
                self._found.pop(key, None)
                return None
            self._found.move_to_end(key)
            return list(kept[1])

    def put(self, key: str, paper_ids: list[int]) -> None:
        with self._lock:
            self._found[key] = (time.monotonic(), list(paper_ids))
            self._found.move_to_end(key)
            while len(self._found) > self.size:
                self._found.popitem(last=False)


class FocusSearch:
    """Searches for the words of a channel's focus: Semantic Scholar's relevance search and arXiv's search,
    each only when given (the channel's sources decide which), through ``cache`` when given."""

    name = "focus"

    def __init__(
        self,
        s2: SemanticScholar | None,
        arxiv: ArxivApi | None,
        *,
        limit: int = 40,
        embed: Embed | None = None,
        cache: SearchCache | None = None,
    ) -> None:
        self.s2, self.arxiv, self.limit, self.embed, self.cache = s2, arxiv, limit, embed, cache

    def fetch_candidates(self, conn: psycopg.Connection, query: CandidateQuery) -> list[int]:
        words = search_words(query.focus_words or "")
        if not words:
            return []
        key = f"{self.s2 is not None}|{self.arxiv is not None}|{self.limit}|{' '.join(words)}"
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            return cached
        found = self._search(conn, words)
        if self.cache is not None:
            self.cache.put(key, found)
        return found

    def _search(self, conn: psycopg.Connection, words: list[str]) -> list[int]:
        papers: list[Paper] = []
        if self.s2 is not None:
            try:
                body = self.s2.http.request_json(
                    "GET",
                    "graph/v1/paper/search",
                    params={"query": " ".join(words), "fields": PAPER_FIELDS_RECS, "limit": self.limit},
                )
                found = body.get("data") if isinstance(body, dict) else None
                papers += s2_papers(found, self.limit)
            except SourceError as exc:
                log.warning("Semantic Scholar search: %s", exc)
        if self.arxiv is not None:
            search = " AND ".join(f"all:{w}" for w in words[:6])
            params = {"search_query": search, "sortBy": "relevance", "max_results": self.limit}
            papers += search_arxiv(self.arxiv, params, "search")
        return record_found(conn, papers, self.embed)


def search_arxiv(client: ArxivApi, params: dict[str, Any], what: str) -> list[Paper]:
    """The entries of one arXiv API query; a failed request or an unreadable answer costs its papers only."""
    try:
        response = client.http.request("GET", "query", params=params)
        return list(papers_from_atom(response.text, int(params.get("max_results") or 100)).values())
    except SourceError as exc:
        log.warning("arXiv %s: %s", what, exc)
        return []


def search_words(text: str, most: int = 12) -> list[str]:
    """The words of a focus as search terms: letters, digits and inner hyphens only, links and markup out."""
    text = re.sub(r"<[^>]*>|https?://\S+", " ", text)
    words = re.findall(r"[^\W_](?:[\w\-]*[^\W_])?", text)
    return [w for w in words if len(w) > 1][:most]
