"""What a channel report shows, loaded from the knowledge base for one channel and period (nothing from
another channel). ``socialrag.report`` draws it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import psycopg

from socialrag.models import Sentiment
from socialrag.social import PaperInfo, load_paper_infos, load_vectors
from socialrag.store import load_emoji_overrides, load_member_names


@dataclass(frozen=True)
class ShareRow:
    at: datetime
    user_id: str | None
    paper_id: int
    message_id: int
    by_paperping: bool


@dataclass(frozen=True)
class EventRow:
    at: datetime
    user_id: str | None
    message_id: int  # the message reacted to, or the thread's first message (-1 if it is not stored)
    emoji: str | None = None  # reactions only


@dataclass(frozen=True)
class PostRow:
    """One of PaperPing's posts with what it drew."""

    posted_at: datetime
    paper_id: int | None
    title: str | None
    style: str
    reactions: dict[str, int]
    replies: int


@dataclass
class ReportData:
    team_id: str
    channel_id: str
    channel_name: str
    since: datetime | None
    until: datetime
    shares: list[ShareRow]
    replies: list[EventRow]
    reactions: list[EventRow]
    posts: list[PostRow]
    papers: dict[int, PaperInfo]
    vectors: dict[int, np.ndarray]
    names: dict[str, str]
    overrides: dict[str, Sentiment]
    frequency: str = "every-other-day"
    step_down_reason: str | None = None
    bots: set[str] = field(default_factory=set)

    @property
    def member_shares(self) -> list[ShareRow]:
        return [s for s in self.shares if not s.by_paperping]


def load_report_data(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    model: str = "all-MiniLM-L6-v2",
) -> ReportData:
    until = until or datetime.now(UTC)
    window = {"t": team_id, "c": channel_id, "since": since, "until": until}
    in_window = "(%(since)s::timestamptz IS NULL OR {col} >= %(since)s) AND {col} < %(until)s"
    name_row = conn.execute("SELECT name FROM channels WHERE team_id = %(t)s AND channel_id = %(c)s", window).fetchone()
    bots = {
        r[0] for r in conn.execute("SELECT user_id FROM members WHERE team_id = %(t)s AND is_bot", window).fetchall()
    }
    share_rows = conn.execute(
        f"""
        SELECT DISTINCT ON (m.id, mp.paper_id) m.posted_at, m.user_id, mp.paper_id, m.id
          FROM message_papers mp JOIN messages m ON m.id = mp.message_id
         WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s AND NOT m.is_reply
           AND {in_window.format(col="m.posted_at")}
        """,
        window,
    ).fetchall()
    shares = sorted(
        (ShareRow(r[0], r[1], r[2], r[3], r[1] in bots) for r in share_rows), key=lambda s: (s.at, s.message_id)
    )
    replies = [
        EventRow(r[0], r[1], r[2])
        for r in conn.execute(
            f"""
            SELECT m.posted_at, m.user_id, COALESCE(root.id, -1) FROM messages m
              LEFT JOIN messages root
                     ON (root.team_id, root.channel_id, root.ts) = (m.team_id, m.channel_id, m.thread_ts)
             WHERE m.team_id = %(t)s AND m.channel_id = %(c)s AND m.is_reply AND {in_window.format(col="m.posted_at")}
             ORDER BY m.posted_at
            """,
            window,
        ).fetchall()
    ]
    reactions = [
        EventRow(r[0], r[1], r[2], r[3])
        for r in conn.execute(
            f"""
            SELECT reacted_at, user_id, message_id, emoji FROM reactions
             WHERE team_id = %(t)s AND channel_id = %(c)s AND {in_window.format(col="reacted_at")}
             ORDER BY reacted_at
            """,
            window,
        ).fetchall()
    ]
    posts = []
    for posted_at, paper_id, title, style, emoji, replies_n in conn.execute(
        f"""
        SELECT r.posted_at, r.paper_id, p.title, r.style,
               (SELECT jsonb_object_agg(x.emoji, x.n) FROM (
                    SELECT x.emoji, count(*) AS n FROM messages m JOIN reactions x ON x.message_id = m.id
                     WHERE m.team_id = r.team_id AND m.channel_id = r.channel_id AND m.ts = r.message_ts
                     GROUP BY x.emoji) x),
               (SELECT count(*) FROM messages m WHERE m.team_id = r.team_id AND m.channel_id = r.channel_id
                   AND m.thread_ts = r.message_ts AND m.is_reply)
          FROM recommendations r LEFT JOIN papers p ON p.id = r.paper_id
         WHERE r.team_id = %(t)s AND r.channel_id = %(c)s AND r.status = 'posted'
           AND {in_window.format(col="r.posted_at")}
         ORDER BY r.posted_at
        """,
        window,
    ).fetchall():
        posts.append(PostRow(posted_at, paper_id, title, style, dict(emoji or {}), int(replies_n)))
    settings = conn.execute(
        "SELECT frequency, step_down_reason FROM channel_settings WHERE team_id = %(t)s AND channel_id = %(c)s",
        window,
    ).fetchone()
    paper_ids = sorted({s.paper_id for s in shares})
    return ReportData(
        team_id=team_id,
        channel_id=channel_id,
        channel_name=name_row[0] if name_row and name_row[0] else channel_id,
        since=since,
        until=until,
        shares=shares,
        replies=replies,
        reactions=reactions,
        posts=posts,
        papers=load_paper_infos(conn, paper_ids),
        vectors=load_vectors(conn, model, paper_ids),
        names=load_member_names(conn, team_id),
        overrides=load_emoji_overrides(conn, team_id, channel_id),
        frequency=settings[0] if settings else "every-other-day",
        step_down_reason=settings[1] if settings else None,
        bots=bots,
    )


@dataclass(frozen=True)
class Headline:
    """The month so far, for App Home: papers members shared, PaperPing's posts and how many drew an answer."""

    shared: int
    posts: int
    answered: int


def load_headline(conn: psycopg.Connection, team_id: str, channel_id: str, now: datetime) -> Headline:
    start = now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    row = conn.execute(
        """
        SELECT
          (SELECT count(DISTINCT mp.paper_id) FROM message_papers mp JOIN messages m ON m.id = mp.message_id
             LEFT JOIN members u ON u.team_id = m.team_id AND u.user_id = m.user_id
            WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s AND m.posted_at >= %(s)s AND m.posted_at < %(n)s
              AND NOT m.is_reply AND NOT COALESCE(u.is_bot, false)),
          (SELECT count(*) FROM recommendations r WHERE r.team_id = %(t)s AND r.channel_id = %(c)s
              AND r.status = 'posted' AND r.posted_at >= %(s)s AND r.posted_at < %(n)s),
          (SELECT count(*) FROM recommendations r WHERE r.team_id = %(t)s AND r.channel_id = %(c)s
              AND r.status = 'posted' AND r.posted_at >= %(s)s AND r.posted_at < %(n)s
              AND EXISTS (SELECT 1 FROM messages m WHERE m.team_id = r.team_id AND m.channel_id = r.channel_id
                             AND (m.thread_ts = r.message_ts AND m.is_reply
                                  OR m.ts = r.message_ts AND EXISTS (SELECT 1 FROM reactions x
                                                                      WHERE x.message_id = m.id))))
        """,
        {"t": team_id, "c": channel_id, "s": start, "n": now},
    ).fetchone()
    assert row is not None
    return Headline(int(row[0]), int(row[1]), int(row[2]))
