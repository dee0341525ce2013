"""What became of the papers a channel discussed: each paper members shared in the last twelve months, in a
channel with follow-ups on, is asked about again at most once per ``PAPERPING_FOLLOWUPS_EVERY_MINUTES`` (at the
sources' shared pace), and three things are noticed for each channel that shared it:

- **published**: a preprint (arXiv, bioRxiv and the like) now has a venue or journal (Semantic Scholar's venue,
  the journal reference its authors gave arXiv, or Crossref's ``is-preprint-of`` relation of a preprint DOI);
- **version**: arXiv, bioRxiv or medRxiv lists a newer version than the one seen last;
- **builds_on**: a new paper cites two or more papers the channel shared, or one it discussed at length (at
  least 3 replies or 5 reactions). Citing papers come from Semantic Scholar's citations and from the catalog's
  reference lists; a citer is new when no earlier check saw it (one an answer left out is not), or, at the
  first, when it came out after the channel's share. It is noted once, in the thread of the earliest of the
  channel's papers it cites, by whichever of their checks sees it cite two of them.

The first check of a paper records what it is (a baseline) and says nothing of a venue or a version it already
had; a paper whose venue nobody knew is not taken for a preprint. Sending is the part of
``socialrag.recommender.serve.thread_follow_ups``."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from datetime import date, datetime, timedelta
from typing import Any

import psycopg

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import SourceError
from socialrag.knowledge.papers.arxiv import ArxivApi, ArxivVersion
from socialrag.knowledge.papers.biorxiv import BiorxivApi
from socialrag.knowledge.papers.crossref import Crossref
from socialrag.knowledge.papers.resolve import record_citing_papers, source_of
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.knowledge.papers.source import MetadataSource
from socialrag.models import Paper
from socialrag.names import fold_text
from socialrag.storage.follow_ups import Citer, SharedThread, Watched

log = logging.getLogger(__name__)

FOLLOW_DAYS = 365  # papers shared in the last twelve months are followed
AT_LENGTH_REPLIES = 3  # a thread with this many replies, or
AT_LENGTH_REACTIONS = 5  # this many reactions, was discussed at length: one citing paper is enough
PREPRINT_SERVERS = frozenset(
    {"arxiv", "arxiv org", "corr", "biorxiv", "medrxiv", "ssrn", "research square", "preprints", "techrxiv",
     "chemrxiv", "psyarxiv", "osf preprints", "eartharxiv", "authorea"}
)  # fmt: skip
ARXIV_DOI = "10.48550/"  # the DOIs arXiv gives its own preprints
RXIV_DOI = "10.1101/"  # bioRxiv's and medRxiv's
WATCH_LOCK = 0x50505F57  # advisory lock: one process at a time asks the sources about shared papers

# (connection, team, channel) -> the channel's shared threads by paper (``storage.follow_ups.load_shared_threads``)
ThreadLoader = Callable[[psycopg.Connection, str, str], dict[int, SharedThread]]


def is_preprint(venue: str | None) -> bool:
    """A preprint server's name (arXiv, bioRxiv...). An unknown venue (None) is not a preprint: it is unknown."""
    key = fold_text(venue or "")
    return bool(key) and (key in PREPRINT_SERVERS or key.startswith("arxiv"))


def check_follow_ups(
    db: Database,
    sources: Sequence[MetadataSource],
    now: datetime,
    every: timedelta,
    limit: int = 20,
    *,
    until: float | None = None,
    load_threads: ThreadLoader = storage.follow_ups.load_shared_threads,
) -> int:
    """Ask the sources (Semantic Scholar and arXiv among ``sources``) about the shared papers that are due, and
    note the follow-ups; how many were noted. One process at a time does it. ``until`` (``time.monotonic``) is
    the job's deadline: the papers whose citations are not read by then wait for the next run. A run reads each
    channel's shared threads once (``load_threads``), however many of its papers are due."""
    s2, arxiv = source_of(sources, SemanticScholar), source_of(sources, ArxivApi)
    crossref, biorxiv = source_of(sources, Crossref), source_of(sources, BiorxivApi)
    with db.connection(autocommit=True) as lock:
        if not storage.locks.try_session_lock(lock, WATCH_LOCK):
            return 0
        try:
            return _check_due(db, (s2, arxiv, crossref, biorxiv), now, every, limit, until, _Threads(load_threads))
        finally:
            storage.locks.release_session_lock(lock, WATCH_LOCK)


def _check_due(
    db: Database,
    clients: tuple[SemanticScholar | None, ArxivApi | None, Crossref | None, BiorxivApi | None],
    now: datetime,
    every: timedelta,
    limit: int,
    until: float | None,
    threads: _Threads,
) -> int:
    s2, arxiv, crossref, biorxiv = clients
    since = now - timedelta(days=FOLLOW_DAYS)
    with db.connection() as conn:
        due = storage.follow_ups.load_papers_to_watch(conn, now - every, since, limit)
        ids = storage.papers.load_identities(conn, [w.paper_id for w in due])
    if not due:
        return 0
    versions = _versions(arxiv, [ids[w.paper_id]["arxiv"] for w in due if "arxiv" in ids.get(w.paper_id, {})])
    preprints = [d for w in due if (d := ids.get(w.paper_id, {}).get("doi", "")).startswith(RXIV_DOI)]
    versions |= _versions(biorxiv, preprints)
    found = _s2_papers(s2, [ids.get(w.paper_id, {}) for w in due])
    found = [_crossref_published(crossref, f, ids.get(w.paper_id, {})) for w, f in zip(due, found, strict=True)]
    merged = [{**(f.ids if f is not None else {}), **ids.get(w.paper_id, {})} for w, f in zip(due, found, strict=True)]
    read = 0
    for watched, paper_ids in zip(due, merged, strict=True):  # every due paper's citations first: a new paper that
        if until is not None and time.monotonic() > until:  # cites two of them is seen citing both
            log.warning("follow-ups: the job's time is spent; %d shared papers wait for the next run", len(due) - read)
            break
        _fetch_citations(db, s2, watched.paper_id, paper_ids)
        read += 1
    noted = 0
    for watched, s2_paper, paper_ids in zip(due[:read], found, merged, strict=False):
        version = versions.get(paper_ids.get("arxiv", "")) or versions.get(paper_ids.get("doi", ""))
        with db.connection() as conn:
            noted += _notice(conn, watched, paper_ids, s2_paper, version, now, since, threads)
    return noted


class _Threads:
    """One run's reading of the channels' shared threads: each channel's read once, when its first due paper is
    compared (a share deleted later in the run still counts for this run; the sender reads its thread again)."""

    def __init__(self, load: ThreadLoader) -> None:
        self._load = load
        self._read: dict[tuple[str, str], dict[int, SharedThread]] = {}

    def of(self, conn: psycopg.Connection, team: str, channel: str) -> dict[int, SharedThread]:
        if (team, channel) not in self._read:
            self._read[team, channel] = self._load(conn, team, channel)
        return self._read[team, channel]


def _crossref_published(crossref: Crossref | None, paper: Paper | None, ids: dict[str, str]) -> Paper | None:
    """A preprint with its own DOI (bioRxiv, medRxiv...) that Semantic Scholar shows as no more than a preprint:
    Crossref's ``is-preprint-of`` relation, read as the venue of its published version."""
    doi = ids.get("doi")
    if crossref is None or not doi or doi.startswith(ARXIV_DOI) or (paper is not None and not is_preprint(paper.venue)):
        return paper
    try:
        published = crossref.fetch_published_version(doi)
    except SourceError as exc:
        log.warning("follow-ups: Crossref: %s", exc)
        return paper
    if published is None:
        return paper
    venue, url = published
    return Paper(ids={"doi": url.removeprefix("https://doi.org/")}, source="crossref", venue=venue, url=url)


def _versions(server: ArxivApi | BiorxivApi | None, ids: Sequence[str]) -> dict[str, ArxivVersion]:
    """The latest versions arXiv (by arXiv id) or bioRxiv and medRxiv (by DOI) list; none when the server fails."""
    if server is None or not ids:
        return {}
    try:
        return server.fetch_versions(ids)
    except SourceError as exc:
        log.warning("follow-ups: %s: %s", server.name, exc)
        return {}


def _s2_papers(s2: SemanticScholar | None, requests: list[dict[str, str]]) -> list[Paper | None]:
    if s2 is None:
        return [None] * len(requests)
    try:
        return s2.fetch_papers(requests)
    except SourceError as exc:
        log.warning("follow-ups: Semantic Scholar: %s", exc)
        return [None] * len(requests)


def _fetch_citations(db: Database, s2: SemanticScholar | None, paper_id: int, ids: dict[str, str]) -> None:
    if s2 is None or "s2" not in ids:
        return
    try:
        citing = s2.fetch_citations(ids["s2"])
    except SourceError as exc:
        log.warning("follow-ups: citations: %s", exc)
        return
    record_citing_papers(db, paper_id, citing)


def _notice(
    conn: psycopg.Connection,
    watched: Watched,
    ids: dict[str, str],
    s2_paper: Paper | None,
    version: ArxivVersion | None,
    now: datetime,
    since: datetime,
    threads: _Threads,
) -> int:
    """Compare what the sources say now with what was seen, note what changed, and remember what was seen."""
    arxiv_says = (version.journal_ref or version.server) if version is not None else None
    s2_says = s2_paper.venue if s2_paper is not None else None
    venue = next((v for v in (s2_says, arxiv_says) if v and not is_preprint(v)), None) or s2_says or arxiv_says
    before = watched.venue if watched.seen else watched.stored_venue
    events: list[tuple[str, str, dict[str, Any]]] = []
    if venue and not is_preprint(venue) and is_preprint(before):
        events.append(("published", venue, {"venue": venue, "url": _published_url(s2_paper)}))
    if version is not None and watched.seen and watched.version and version.version > watched.version:
        when = version.updated.isoformat() if version.updated else None
        url = version.page or f"https://arxiv.org/abs/{ids.get('arxiv')}v{version.version}"
        events.append(("version", str(version.version), {"version": version.version, "date": when, "url": url}))
    citers = storage.follow_ups.load_citers(conn, watched.paper_id)
    noted = 0
    for team, channel in storage.follow_ups.load_sharing_channels(conn, watched.paper_id, since):
        for kind, key, detail in events:
            noted += storage.follow_ups.record_follow_up(conn, team, channel, watched.paper_id, kind, key, detail, now)
        noted += _builds_on(conn, watched, citers, threads.of(conn, team, channel), team, channel, now)
    seen_venue = venue or before
    seen_version = version.version if version is not None else watched.version
    # every citer seen so far, today's first: one a source leaves out of one answer (a paper cited more often
    # than it lists) is not new when it comes back
    seen = list(dict.fromkeys([c.key for c in citers] + list(watched.citing)))
    storage.follow_ups.record_watch(conn, watched.paper_id, now, seen_venue, seen_version, seen)
    return noted


def _published_url(paper: Paper | None) -> str | None:
    """Where the published version is: its DOI (not arXiv's own), else the page the source gave."""
    if paper is None:
        return None
    doi = paper.ids.get("doi")
    if doi and not doi.startswith(ARXIV_DOI):
        return f"https://doi.org/{doi}"
    if "acl" in paper.ids:  # an ACL DOI is kept as the paper's ACL Anthology identity
        return f"https://aclanthology.org/{paper.ids['acl']}"
    return paper.url


def _builds_on(
    conn: psycopg.Connection,
    watched: Watched,
    citers: list[Citer],
    threads: dict[int, SharedThread],
    team: str,
    channel: str,
    now: datetime,
) -> int:
    mine = threads.get(watched.paper_id)
    if mine is None:
        return 0
    seen = set(watched.citing)
    dates = _citer_dates(conn, [c.paper_id for c in citers if c.paper_id is not None])
    # a citer read from a stored paper's reference list is said only where that paper may be seen: one only
    # another channel shared is that channel's (Semantic Scholar's citations are public)
    stored = [c.paper_id for c in citers if c.scheme is None and c.paper_id is not None]
    visible = storage.visibility.load_visible(conn, stored, team, channel)
    citers = [c for c in citers if c.scheme is not None or c.paper_id in visible]
    fresh = [c for c in citers if c.paper_id not in threads and _is_new(c, seen, watched.seen, dates, mine)]
    cited_by = storage.follow_ups.load_cited_by(conn, [c.key for c in fresh]) if fresh else {}
    noted = 0
    for citer in fresh:
        cited = sorted((threads[p] for p in cited_by.get(citer.key, set()) | {watched.paper_id} if p in threads),
                       key=lambda t: (t.posted_at, t.paper_id))  # fmt: skip
        at_length = mine.replies >= AT_LENGTH_REPLIES or mine.reactions >= AT_LENGTH_REACTIONS
        if len(cited) < 2 and not at_length:
            continue
        # said in the earliest thread it builds on, whichever of them noticed it (once: the key is the citer's)
        detail = {"title": citer.title, "paper_id": citer.paper_id, "scheme": citer.scheme, "value": citer.value,
                  "others": [t.paper_id for t in cited[1:3]]}  # fmt: skip
        noted += storage.follow_ups.record_follow_up(
            conn, team, channel, cited[0].paper_id, "builds_on", citer.key, detail, now
        )
    return noted


def _citer_dates(conn: psycopg.Connection, paper_ids: list[int]) -> dict[int, date]:
    infos = storage.context_rows.load_paper_infos(conn, paper_ids)
    return {pid: d for pid, info in infos.items() if (d := info.publication_date or _year_start(info.year))}


def _year_start(year: int | None) -> date | None:
    """A citer dated by its year alone: the earliest day it may have come out, so that it is taken as newer than a
    share only when it surely is (its day unknown is not the year's last)."""
    return date(year, 1, 1) if year else None


def _is_new(citer: Citer, seen: set[str], checked_before: bool, dates: dict[int, date], share: SharedThread) -> bool:
    """Seen at no earlier check; at the first, known to have come out after the channel's share."""
    if checked_before:
        return citer.key not in seen
    when = dates.get(citer.paper_id) if citer.paper_id is not None else None
    return when is not None and when >= share.posted_at.date()
