"""Step 4 in a shared paper's own thread: the follow-ups ``socialrag.knowledge.paper_watch`` noticed (published, a
new version, a new paper that builds on the group's threads) are said as a reply where the paper was shared,
never as a new post. At most one a thread a month and ``PER_WEEK`` a channel a week; a member who turned mentions
off, or asked to be forgotten, is not named. This module decides and words what is said (``FollowUpNote``); the
group space's side renders and sends it (``SendFollowUp``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import psycopg

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import PaperPingError
from socialrag.recommender.explain.generate import paper_url
from socialrag.storage.follow_ups import FollowUp, SharedThread

log = logging.getLogger(__name__)

THREAD_GAP_DAYS = 30  # a thread hears at most one follow-up in this many days
PER_WEEK = 3  # and a channel at most this many a week


@dataclass(frozen=True)
class FollowUpNote:
    """What a follow-up says, as data: the group space's side words it in its own markup."""

    kind: str  # "published", "version" or "builds_on"
    sharer: str | None  # the member to name (None: nobody named)
    shared_at: datetime
    venue: str | None = None
    url: str | None = None
    version: int | None = None
    date: str | None = None  # ISO date of the new version
    title: str | None = None  # of the paper that builds on the thread
    others: list[tuple[str, str | None]] = field(default_factory=list)  # (title, permalink) of other threads


# (team id, channel id, the thread's ts, what to say) -> the reply's ts
SendFollowUp = Callable[[str, str, str, FollowUpNote], str]


def send_follow_ups(db: Database, send: SendFollowUp, now: datetime | None = None) -> int:
    """Send the follow-ups that are due, each in its thread; how many went."""
    now = now or datetime.now(UTC)
    with db.connection() as conn:
        due = storage.follow_ups.load_due_follow_ups(conn, now, thread_gap_days=THREAD_GAP_DAYS, per_week=PER_WEEK)
    sent = 0
    for f in due:
        with db.connection() as conn:
            caps = {"thread_gap_days": THREAD_GAP_DAYS, "per_week": PER_WEEK}
            if not storage.follow_ups.claim_follow_up(conn, f.id, now, **caps):
                continue
            # its own thread and those it names, read now (a share deleted since the batch was loaded is gone):
            # a handful of papers, never the channel's every share for each follow-up
            threads = storage.follow_ups.load_shared_threads(conn, f.team_id, f.channel_id, _named_papers(f))
            thread = threads.get(f.paper_id)
            note = build_note(conn, f, thread, threads) if thread is not None else None
        if thread is None or note is None:
            _finish(db, f.id, "dropped", reason=storage.follow_ups.GONE)
            continue
        try:
            reply = send(f.team_id, f.channel_id, thread.ts, note)
        except PaperPingError as exc:  # kept from being tried again: a follow-up is never said twice
            log.warning("follow-up in %s failed: %s", f.channel_id, exc)
            _finish(db, f.id, "dropped", reason=str(exc))
            continue
        _finish(db, f.id, "posted", thread_ts=thread.ts, reply_ts=reply)
        sent += 1
    return sent


def _named_papers(f: FollowUp) -> list[int]:
    """The papers whose threads a follow-up is said in or names: its own, and the other threads it builds on."""
    others = f.detail.get("others")
    return [f.paper_id, *(p for p in others if type(p) is int)] if isinstance(others, list) else [f.paper_id]


def _finish(db: Database, follow_up_id: int, status: str, **kw: str | None) -> None:
    with db.connection() as conn:
        storage.follow_ups.finish_follow_up(conn, follow_up_id, status, **kw)


def build_note(
    conn: psycopg.Connection, f: FollowUp, thread: SharedThread, threads: dict[int, SharedThread]
) -> FollowUpNote | None:
    """The note of one follow-up from what is stored now (None when a paper it names is gone)."""
    sharer = _nameable(conn, f.team_id, f.channel_id, thread.user_id)
    d = f.detail
    if f.kind == "published":
        return FollowUpNote("published", sharer, thread.posted_at, venue=d.get("venue"), url=d.get("url"))
    if f.kind == "version":
        return FollowUpNote("version", sharer, thread.posted_at, version=d.get("version"), date=d.get("date"),
                            url=d.get("url"))  # fmt: skip
    title, url = _citer(conn, d)
    if not title:
        return None
    others = [(threads[p].title or "a paper", threads[p].permalink) for p in d.get("others", []) if p in threads]
    return FollowUpNote("builds_on", sharer, thread.posted_at, title=title, url=url, others=others)


def _nameable(conn: psycopg.Connection, team_id: str, channel_id: str, user_id: str | None) -> str | None:
    """The member to name, unless they turned mentions off, asked to be forgotten or left the channel."""
    if not user_id or storage.privacy.is_forgotten(conn, (team_id,), user_id):
        return None
    if not storage.workspaces.in_channel(conn, team_id, channel_id, user_id):
        return None
    return user_id if storage.settings.load_member_setting(conn, team_id, user_id).mentions_enabled else None


def _citer(conn: psycopg.Connection, detail: dict[str, object]) -> tuple[str | None, str | None]:
    """The title and link of the paper that builds on the thread."""
    pid = detail.get("paper_id")
    if isinstance(pid, int):
        infos = storage.context_rows.load_paper_infos(conn, [pid])
        ids = storage.papers.load_identities(conn, [pid]).get(pid, {})
        info = infos.get(pid)
        return (info.title if info else None), (paper_url(ids, info.url if info else None) or None)
    scheme, value = str(detail.get("scheme") or ""), str(detail.get("value") or "")
    title = detail.get("title")
    return (str(title) if title else None), (paper_url({scheme: value}, None) or None) if scheme and value else None
