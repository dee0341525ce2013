"""One channel's social knowledge, loaded once per recommendation and scoped to (team, channel, as_of).

Everything a recommendation may say about the group comes from a ``ChannelContext``: the papers the
channel shared with who shared, reacted and replied and when, the members and their own settings, and
what PaperPing already recommended there. Nothing from another channel is loaded.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import numpy as np
import psycopg

from socialrag.knowledge.embed import as_array
from socialrag.models import Sentiment
from socialrag.storage.settings import load_emoji_overrides

RECENT_DAYS = 14  # how far back PaperPing's own posts count for spreading threads and names


@dataclass(frozen=True)
class AuthorRef:
    author_id: int
    name: str
    normalized: str
    affiliations: tuple[str, ...] = ()
    s2_author_id: str | None = None


@dataclass(frozen=True)
class PaperInfo:
    paper_id: int
    title: str | None
    venue_id: int | None
    venue: str | None
    year: int | None
    authors: tuple[AuthorRef, ...]
    popularity: float | None = None
    abstract: str | None = None
    tldr: str | None = None
    url: str | None = None
    publication_date: date | None = None


@dataclass(frozen=True)
class Share:
    message_id: int
    ts: str
    user_id: str | None
    at: datetime
    permalink: str | None
    label: str | None


@dataclass(frozen=True)
class ReactionEvent:
    message_id: int
    user_id: str
    emoji: str
    at: datetime


@dataclass(frozen=True)
class Reply:
    message_id: int
    root_message_id: int
    user_id: str | None
    at: datetime
    text: str
    permalink: str | None


@dataclass
class SharedPaper:
    info: PaperInfo
    shares: list[Share] = field(default_factory=list)
    reactions: list[ReactionEvent] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)

    @property
    def first_share(self) -> Share:
        return min(self.shares, key=lambda s: s.at)

    @property
    def last_activity(self) -> datetime:
        times = [s.at for s in self.shares] + [r.at for r in self.reactions] + [r.at for r in self.replies]
        return max(times)


@dataclass(frozen=True)
class MemberInfo:
    user_id: str
    display_name: str
    is_bot: bool = False
    mentions_enabled: bool = True
    s2_author_id: str | None = None
    orcid: str | None = None
    confirmed_names: tuple[str, ...] = ()
    author_ids: frozenset[int] = frozenset()
    in_channel: bool = True  # False for someone seen in the channel's rows who is no longer a member


@dataclass
class ChannelContext:
    team_id: str
    channel_id: str
    as_of: datetime
    papers: dict[int, SharedPaper]
    members: dict[str, MemberInfo]
    emoji_overrides: dict[str, Sentiment]
    recommended: dict[int, datetime]
    last_mentioned: dict[str, datetime]
    vectors: dict[int, np.ndarray] = field(default_factory=dict)
    # what PaperPing's recent posts leaned on, so the next one leans elsewhere: earlier papers (h5) and the
    # members it named as possibly interested (h8), with when
    recent_threads: dict[int, datetime] = field(default_factory=dict)
    recent_interested: dict[str, datetime] = field(default_factory=dict)
    model: str = "all-MiniLM-L6-v2"

    def display(self, user_id: str) -> str:
        member = self.members.get(user_id)
        return member.display_name if member else user_id

    @property
    def excluded_paper_ids(self) -> set[int]:
        return set(self.papers) | set(self.recommended)


def load_paper_infos(
    conn: psycopg.Connection, paper_ids: list[int], as_of: datetime | None = None
) -> dict[int, PaperInfo]:
    """Metadata and authors of papers (public data, no channel scope needed). With ``as_of``, the popularity
    is the last reading before that moment (none if there was none then), never a later count."""
    if not paper_ids:
        return {}
    rows = conn.execute(
        """
        SELECT p.id, p.title, p.venue_id, v.name, p.year,
               CASE WHEN %(as_of)s::timestamptz IS NULL THEN p.popularity
                    ELSE (SELECT pp.value FROM paper_popularity pp WHERE pp.paper_id = p.id
                             AND pp.observed_at <= %(as_of)s::timestamptz ORDER BY pp.observed_at DESC LIMIT 1) END,
               p.abstract, p.tldr, p.url, p.publication_date
          FROM papers p LEFT JOIN venues v ON v.id = p.venue_id WHERE p.id = ANY(%(ids)s::bigint[])
        """,
        {"ids": paper_ids, "as_of": as_of},
    ).fetchall()
    authors: dict[int, list[AuthorRef]] = defaultdict(list)
    for pid, aid, name, norm, affs, s2 in conn.execute(
        """
        SELECT pa.paper_id, a.id, a.name, a.normalized_name, pa.affiliations, a.s2_author_id
          FROM paper_authors pa JOIN authors a ON a.id = pa.author_id
         WHERE pa.paper_id = ANY(%(ids)s::bigint[]) ORDER BY pa.paper_id, pa.position
        """,
        {"ids": paper_ids},
    ).fetchall():
        authors[pid].append(AuthorRef(aid, name, norm, tuple(affs or ()), s2))
    return {
        r[0]: PaperInfo(r[0], r[1], r[2], r[3], r[4], tuple(authors.get(r[0], ())), r[5], r[6], r[7], r[8], r[9])
        for r in rows
    }


def load_vectors(conn: psycopg.Connection, model: str, paper_ids: list[int]) -> dict[int, np.ndarray]:
    if not paper_ids:
        return {}
    rows = conn.execute(
        "SELECT paper_id, embedding FROM paper_embeddings WHERE model = %(m)s AND paper_id = ANY(%(ids)s::bigint[])",
        {"m": model, "ids": paper_ids},
        binary=True,  # vectors parse much faster in binary
    ).fetchall()
    return {r[0]: as_array(r[1]) for r in rows}


def _load_shares(conn: psycopg.Connection, team: str, channel: str, as_of: datetime) -> dict[int, list[Share]]:
    rows = conn.execute(
        """
        SELECT mp.paper_id, m.id, m.ts, m.user_id, m.posted_at, m.permalink, mp.label
          FROM message_papers mp JOIN messages m ON m.id = mp.message_id
         WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s AND m.posted_at < %(as_of)s
        """,
        {"t": team, "c": channel, "as_of": as_of},
    ).fetchall()
    shares: dict[int, list[Share]] = defaultdict(list)
    for pid, mid, ts, user, at, link, label in rows:
        shares[pid].append(Share(mid, ts, user, at, link, label))
    return shares


def _load_reactions(conn: psycopg.Connection, message_ids: list[int], as_of: datetime) -> list[ReactionEvent]:
    rows = conn.execute(
        """
        SELECT message_id, user_id, emoji, reacted_at FROM reactions
         WHERE message_id = ANY(%(ids)s::bigint[]) AND reacted_at < %(as_of)s
        """,
        {"ids": message_ids, "as_of": as_of},
    ).fetchall()
    return [ReactionEvent(*r) for r in rows]


def _load_replies(
    conn: psycopg.Connection, team: str, channel: str, roots: dict[str, int], as_of: datetime
) -> list[Reply]:
    rows = conn.execute(
        """
        SELECT id, thread_ts, user_id, posted_at, text, permalink FROM messages
         WHERE team_id = %(t)s AND channel_id = %(c)s AND is_reply AND thread_ts = ANY(%(roots)s::text[])
           AND posted_at < %(as_of)s
        """,
        {"t": team, "c": channel, "roots": list(roots), "as_of": as_of},
    ).fetchall()
    return [Reply(r[0], roots[r[1]], r[2], r[3], r[4], r[5]) for r in rows]


def load_members(conn: psycopg.Connection, team: str, channel: str) -> dict[str, MemberInfo]:
    """The channel's people (its members and anyone in its stored rows) with their own settings and the
    author rows their publication links point at. Members of other channels are not loaded."""
    rows = conn.execute(
        """
        WITH people AS (
            SELECT user_id FROM channel_members WHERE team_id = %(t)s AND channel_id = %(c)s
            UNION SELECT user_id FROM messages WHERE team_id = %(t)s AND channel_id = %(c)s AND user_id IS NOT NULL
            UNION SELECT user_id FROM reactions WHERE team_id = %(t)s AND channel_id = %(c)s)
        SELECT m.user_id, m.display_name, m.is_bot, COALESCE(s.mentions_enabled, true), s.s2_author_id, s.orcid,
               COALESCE(s.confirmed_names, '{}')
          FROM people p JOIN members m ON m.team_id = %(t)s AND m.user_id = p.user_id
          LEFT JOIN member_settings s ON s.team_id = m.team_id AND s.user_id = m.user_id
         WHERE NOT m.deleted
        """,
        {"t": team, "c": channel},
    ).fetchall()
    linked = {r[0]: _member_author_ids(conn, r[4], r[5], list(r[6])) for r in rows if r[4] or r[5] or r[6]}
    current = {
        r[0]
        for r in conn.execute(
            "SELECT user_id FROM channel_members WHERE team_id = %(t)s AND channel_id = %(c)s",
            {"t": team, "c": channel},
        ).fetchall()
    }
    return {
        r[0]: MemberInfo(
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            tuple(r[6]),
            frozenset(linked.get(r[0], ())),
            in_channel=not current or r[0] in current,  # an unknown member list counts everyone in
        )
        for r in rows
    }


def _member_author_ids(conn: psycopg.Connection, s2: str | None, orcid: str | None, names: list[str]) -> list[int]:
    rows = conn.execute(
        """
        SELECT id FROM authors WHERE s2_author_id = %(s2)s
        UNION SELECT id FROM authors WHERE orcid = %(orcid)s
        UNION SELECT id FROM authors WHERE normalized_name = ANY(%(names)s::text[])
        """,
        {"s2": s2, "orcid": orcid, "names": names},
    ).fetchall()
    return [r[0] for r in rows]


def _load_recommended(conn: psycopg.Connection, team: str, channel: str, as_of: datetime) -> dict[int, datetime]:
    rows = conn.execute(
        """
        SELECT paper_id, max(created_at) FROM recommendations
         WHERE team_id = %(t)s AND channel_id = %(c)s AND paper_id IS NOT NULL AND created_at < %(as_of)s
         GROUP BY paper_id
        """,
        {"t": team, "c": channel, "as_of": as_of},
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def _load_last_mentions(conn: psycopg.Connection, team: str, channel: str, as_of: datetime) -> dict[str, datetime]:
    rows = conn.execute(
        """
        SELECT u, max(coalesce(posted_at, created_at)) FROM recommendations,
               jsonb_array_elements_text(COALESCE(draft -> 'mentions', '[]'::jsonb)) AS u
         WHERE team_id = %(t)s AND channel_id = %(c)s AND status = 'posted' AND created_at < %(as_of)s
         GROUP BY u
        """,
        {"t": team, "c": channel, "as_of": as_of},
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def _load_recent_posts(
    conn: psycopg.Connection, team: str, channel: str, as_of: datetime, since: datetime
) -> tuple[dict[int, datetime], dict[str, datetime]]:
    threads: dict[int, datetime] = {}
    interested: dict[str, datetime] = {}
    for draft, at in conn.execute(
        """
        SELECT draft, coalesce(posted_at, created_at) FROM recommendations
         WHERE team_id = %(t)s AND channel_id = %(c)s AND status = 'posted'
           AND created_at < %(as_of)s AND created_at >= %(since)s
        """,
        {"t": team, "c": channel, "as_of": as_of, "since": since},
    ).fetchall():
        for signal in (draft or {}).get("signals") or ():
            if not isinstance(signal, dict):
                continue
            related = signal.get("related_paper_id")
            if signal.get("kind") == "h5" and isinstance(related, int):
                threads[related] = max(at, threads.get(related, at))
            if signal.get("kind") == "h8":
                for uid in signal.get("members") or ():
                    if isinstance(uid, str):
                        interested[uid] = max(at, interested.get(uid, at))
    return threads, interested


def load_channel_context(
    conn: psycopg.Connection, team_id: str, channel_id: str, as_of: datetime, model: str
) -> ChannelContext:
    """Everything the recommender may use about one channel, as it was before ``as_of``."""
    shares = _load_shares(conn, team_id, channel_id, as_of)
    infos = load_paper_infos(conn, list(shares), as_of)
    roots = {s.ts: s.message_id for ss in shares.values() for s in ss}
    papers = {pid: SharedPaper(infos[pid], shares[pid]) for pid in shares if pid in infos}
    by_message: dict[int, list[SharedPaper]] = defaultdict(list)
    for paper in papers.values():
        for s in paper.shares:
            by_message[s.message_id].append(paper)
    for r in _load_reactions(conn, list(by_message), as_of):
        for paper in by_message[r.message_id]:
            paper.reactions.append(r)
    for reply in _load_replies(conn, team_id, channel_id, roots, as_of):
        for paper in by_message[reply.root_message_id]:
            paper.replies.append(reply)
    threads, interested = _load_recent_posts(conn, team_id, channel_id, as_of, as_of - timedelta(days=RECENT_DAYS))
    return ChannelContext(
        recent_threads=threads,
        recent_interested=interested,
        team_id=team_id,
        channel_id=channel_id,
        as_of=as_of,
        papers=papers,
        members=load_members(conn, team_id, channel_id),
        emoji_overrides=load_emoji_overrides(conn, team_id, channel_id),
        recommended=_load_recommended(conn, team_id, channel_id, as_of),
        last_mentioned=_load_last_mentions(conn, team_id, channel_id, as_of),
        vectors=load_vectors(conn, model, list(papers)),
        model=model,
    )
