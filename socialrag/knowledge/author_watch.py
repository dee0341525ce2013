"""New papers by the authors a channel follows (`/paperping follow`) and by members who let the channel hear of
theirs (`/paperping my-papers on`): each author's papers are asked of Semantic Scholar at most once per
``PAPERPING_AUTHORS_EVERY_MINUTES``, at the sources' shared pace. The first ask records what the author has
written (nothing is new then; nor to a channel that started following since an ask long ago); a paper that
appears later, from the year before on, is stored, embedded, and noted for every channel that wants it
(``author_news``). An answer without a list of papers is no answer: nothing is recorded. A followed author's
paper then goes out at the channel's next slot (``socialrag.recommender``), a member's own is announced."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import datetime, timedelta

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import RateLimited, SourceError
from socialrag.knowledge.embed import Embed, record_found
from socialrag.knowledge.papers.resolve import source_of
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.knowledge.papers.source import MetadataSource
from socialrag.models import Paper
from socialrag.storage.followed_authors import Watcher

log = logging.getLogger(__name__)

AUTHORS_LOCK = 0x50505F41  # advisory lock: one process at a time asks for authors' papers
# an author's new papers noted at one ask, at most: the newest (a proceedings can bring several; a profile merged
# with another's, or a source that reshuffles its list, brings dozens at once, which would fill a channel's slots
# for weeks)
NEW_PER_ASK = 10


def check_authors(
    db: Database,
    sources: Sequence[MetadataSource],
    now: datetime,
    every: timedelta,
    embed: Embed | None = None,
    *,
    until: float | None = None,
) -> int:
    """Ask for the papers of the authors that are due; how many new papers were noted for a channel. The
    authors not asked by ``until`` (``time.monotonic``, the job's deadline) wait for the next run."""
    s2 = source_of(sources, SemanticScholar)
    if s2 is None:
        return 0
    with db.connection(autocommit=True) as lock:
        if not storage.locks.try_session_lock(lock, AUTHORS_LOCK):
            return 0
        try:
            with db.connection() as conn:
                due = storage.followed_authors.load_authors_due(conn, now - every)
            noted = 0
            for author, watchers in due.items():
                if until is not None and time.monotonic() > until:
                    log.warning("authors: the job's time is spent; the other authors wait for the next run")
                    break
                noted += _check_author(db, s2, author, watchers, now, every, embed)
            return noted
        finally:
            storage.locks.release_session_lock(lock, AUTHORS_LOCK)


def _check_author(
    db: Database,
    s2: SemanticScholar,
    author: str,
    watchers: list[Watcher],
    now: datetime,
    every: timedelta,
    embed: Embed | None,
) -> int:
    with db.connection() as conn:
        checked_at, seen = storage.followed_authors.load_author_seen(conn, author)
    try:
        papers = s2.fetch_author_papers(author)
    except SourceError as exc:
        log.warning("authors: Semantic Scholar: %s", exc)
        if checked_at is not None and not isinstance(exc, RateLimited):
            # an author that keeps failing (an id merged away, an answer never readable) waits its turn like the
            # others instead of coming first at every run; what was seen stays, so nothing becomes new by it
            with db.connection() as conn:
                storage.followed_authors.record_author_check(conn, author, now, sorted(seen))
        return 0
    with db.connection() as conn:
        told = [w for w in watchers if checked_at is not None and _new_to(w, checked_at, now, every)]
        fresh = [p for p in papers if p.ids.get("s2") not in seen and _recent(p, now)] if told else []
        if len(fresh) > NEW_PER_ASK:
            log.warning("authors: %d papers of %s are new at once; the %d newest are noted", len(fresh), author,
                        NEW_PER_ASK)  # fmt: skip
            fresh = sorted(fresh, key=_newest_first)[:NEW_PER_ASK]
        noted = 0
        found = record_found(conn, fresh, embed)
        if found:  # all the member watchers' lists at once, in a forget-me's order: one watcher at a time, in the
            # order they came, could hold one workspace's list while a forget-me in two holds the other's
            storage.locks.hold_forget_lists(conn, [w.team_id for w in told if w.user_id])
        for pid in found:
            noted += sum(storage.followed_authors.record_author_news(conn, w, author, pid, now) for w in told)
        listed = [p.ids["s2"] for p in papers if "s2" in p.ids]
        storage.followed_authors.record_author_check(conn, author, now, [*listed, *sorted(seen - set(listed))])
    return noted


def _new_to(watcher: Watcher, checked_at: datetime, now: datetime, every: timedelta) -> bool:
    """Whether the papers first listed now are new to the watcher's channel: it wanted them at the last ask, or
    that ask was recent. An ask long ago, for a channel that no longer follows the author, would make a channel
    that follows them now hear of everything written meanwhile: for it, this ask is the first."""
    return watcher.since <= checked_at or checked_at >= now - 2 * every


def _newest_first(paper: Paper) -> tuple[bool, int, int]:
    """Dated papers newest first, then those without a date (unknown, not the oldest of all)."""
    year = paper.publication_date.year if paper.publication_date else paper.year
    day = paper.publication_date.toordinal() if paper.publication_date else 0
    return (year is None, -(year or 0), -day)


def _recent(paper: Paper, now: datetime) -> bool:
    """A paper of this year or the one before (a paper with no date counts: it just appeared)."""
    year = paper.publication_date.year if paper.publication_date else paper.year
    return year is None or year >= now.year - 1
