"""The authors channels follow (``followed_authors``), when each author's papers were last asked for
(``author_checks``), and the new papers noticed for a channel (``author_news``): a followed author's, posted as a
candidate at the channel's next slot; a member's own, announced when they let the channel hear of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import psycopg

from socialrag.storage.locks import hold_forget_lists, hold_lock


@dataclass(frozen=True)
class Followed:
    s2_author_id: str
    name: str
    user_id: str | None
    followed_at: datetime


FollowOutcome = Literal["new", "already", "channel full", "workspace full"]


def follow_author(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    s2_author_id: str,
    name: str,
    user_id: str,
    at: datetime,
    *,
    most: int | None = None,
    most_in_workspace: int | None = None,
) -> FollowOutcome:
    """The channel follows the author: ``new``; ``already`` when it did; ``channel full`` when it follows ``most``
    authors already; ``workspace full`` when the workspace's channels follow ``most_in_workspace`` distinct authors
    and this is not one of them (each is asked for on its own). Both are counted under the workspace's lock, so
    that members following at once never pass them. Who asked is not kept when they are on the workspace's forget
    list (as forget-me clears it)."""
    hold_lock(conn, f"follow:{team_id}")
    if conn.execute(
        "SELECT 1 FROM followed_authors WHERE team_id = %(t)s AND channel_id = %(c)s AND s2_author_id = %(a)s",
        {"t": team_id, "c": channel_id, "a": s2_author_id},
    ).fetchone():
        return "already"
    in_channel, in_workspace, known = conn.execute(
        """
        SELECT count(*) FILTER (WHERE channel_id = %(c)s), count(DISTINCT s2_author_id),
               bool_or(s2_author_id = %(a)s)
          FROM followed_authors WHERE team_id = %(t)s
        """,
        {"t": team_id, "c": channel_id, "a": s2_author_id},
    ).fetchone() or (0, 0, False)
    if most is not None and in_channel >= most:
        return "channel full"
    if most_in_workspace is not None and not known and in_workspace >= most_in_workspace:
        return "workspace full"
    conn.execute(
        """
        INSERT INTO followed_authors (team_id, channel_id, s2_author_id, name, user_id, followed_at)
        VALUES (%(t)s, %(c)s, %(a)s, %(n)s,
                CASE WHEN EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
                     THEN NULL ELSE %(u)s END,
                %(at)s)
        ON CONFLICT DO NOTHING
        """,
        {"t": team_id, "c": channel_id, "a": s2_author_id, "n": name[:200], "u": user_id, "at": at},
    )
    return "new"


def unfollow_author(conn: psycopg.Connection, team_id: str, channel_id: str, s2_author_id: str) -> str | None:
    """The channel stops following the author; the name it followed, or None when it did not. A waiting paper
    the author wrote with another author the channel still follows keeps waiting, under that one's name."""
    row = conn.execute(
        """
        DELETE FROM followed_authors WHERE team_id = %(t)s AND channel_id = %(c)s AND s2_author_id = %(a)s
        RETURNING name
        """,
        {"t": team_id, "c": channel_id, "a": s2_author_id},
    ).fetchone()
    conn.execute(  # a paper is noted once a channel, under the first followed author its ask found
        """
        UPDATE author_news n SET s2_author_id = still.s2_author_id
          FROM (SELECT DISTINCT ON (pa.paper_id) pa.paper_id, f.s2_author_id
                  FROM paper_authors pa JOIN authors a ON a.id = pa.author_id
                  JOIN followed_authors f ON f.s2_author_id = a.s2_author_id
                 WHERE f.team_id = %(t)s AND f.channel_id = %(c)s
                 ORDER BY pa.paper_id, pa.position) still
         WHERE still.paper_id = n.paper_id AND n.team_id = %(t)s AND n.channel_id = %(c)s
           AND n.s2_author_id = %(a)s AND n.kind = 'followed' AND n.status = 'waiting'
        """,
        {"t": team_id, "c": channel_id, "a": s2_author_id},
    )
    conn.execute(
        """
        UPDATE author_news SET status = 'dropped' WHERE team_id = %(t)s AND channel_id = %(c)s
           AND s2_author_id = %(a)s AND kind = 'followed' AND status = 'waiting'
        """,
        {"t": team_id, "c": channel_id, "a": s2_author_id},
    )
    return str(row[0]) if row else None


def load_followed(conn: psycopg.Connection, team_id: str, channel_id: str) -> list[Followed]:
    rows = conn.execute(
        """
        SELECT s2_author_id, name, user_id, followed_at FROM followed_authors
         WHERE team_id = %(t)s AND channel_id = %(c)s ORDER BY followed_at
        """,
        {"t": team_id, "c": channel_id},
    ).fetchall()
    return [Followed(r[0], r[1], r[2], r[3]) for r in rows]


@dataclass(frozen=True)
class Watcher:
    """A channel that wants an author's new papers: because it follows them, or because they are a member who
    let it hear of their papers (``user_id``)."""

    team_id: str
    channel_id: str
    kind: str  # "followed" or "member"
    user_id: str | None
    since: datetime  # papers from this moment on are new to the channel


def load_authors_due(conn: psycopg.Connection, checked_before: datetime, limit: int = 20) -> dict[str, list[Watcher]]:
    """The authors whose papers were not asked for since ``checked_before`` (followed by an active channel, or a
    member's linked author id with my-papers on in one), each with the channels that want their new papers."""
    rows = conn.execute(
        """
        WITH wanted AS (
            SELECT f.s2_author_id, f.team_id, f.channel_id, 'followed' AS kind, NULL::text AS user_id,
                   f.followed_at AS since
              FROM followed_authors f
            UNION ALL
            SELECT m.s2_author_id, m.team_id, ch, 'member', m.user_id, m.updated_at
              FROM member_settings m, unnest(m.my_papers_channels) AS ch
             WHERE m.s2_author_id IS NOT NULL
        ), due AS (
            SELECT w.s2_author_id FROM wanted w
              JOIN channel_settings s ON (s.team_id, s.channel_id) = (w.team_id, w.channel_id) AND s.active
              LEFT JOIN author_checks c ON c.s2_author_id = w.s2_author_id
             WHERE c.checked_at IS NULL OR c.checked_at < %(before)s
             GROUP BY w.s2_author_id ORDER BY min(c.checked_at) NULLS FIRST LIMIT %(n)s
        )
        SELECT w.s2_author_id, w.team_id, w.channel_id, w.kind, w.user_id, w.since FROM wanted w
          JOIN due USING (s2_author_id)
          JOIN channel_settings s ON (s.team_id, s.channel_id) = (w.team_id, w.channel_id) AND s.active
        """,
        {"before": checked_before, "n": limit},
    ).fetchall()
    out: dict[str, list[Watcher]] = {}
    for r in rows:
        out.setdefault(r[0], []).append(Watcher(r[1], r[2], r[3], r[4], r[5]))
    return out


def load_author_seen(conn: psycopg.Connection, s2_author_id: str) -> tuple[datetime | None, set[str]]:
    """When the author's papers were last asked for (None: never), and the papers seen (Semantic Scholar ids)."""
    row = conn.execute(
        "SELECT checked_at, seen FROM author_checks WHERE s2_author_id = %(a)s", {"a": s2_author_id}
    ).fetchone()
    return (row[0], set(row[1])) if row else (None, set())


SEEN_KEPT = 2000  # papers of one author remembered as seen


def record_author_check(conn: psycopg.Connection, s2_author_id: str, at: datetime, seen: Sequence[str]) -> None:
    """The author's papers were asked for at ``at``; ``seen`` first the papers listed now, so that those are the
    ones kept when there are more than ``SEEN_KEPT``."""
    conn.execute(
        """
        INSERT INTO author_checks (s2_author_id, checked_at, seen) VALUES (%(a)s, %(at)s, %(s)s)
        ON CONFLICT (s2_author_id) DO UPDATE SET checked_at = EXCLUDED.checked_at, seen = EXCLUDED.seen
        """,
        {"a": s2_author_id, "at": at, "s": list(dict.fromkeys(seen))[:SEEN_KEPT]},
    )


def record_author_news(
    conn: psycopg.Connection, watcher: Watcher, s2_author_id: str, paper_id: int, at: datetime
) -> bool:
    """A new paper of the author for the watcher's channel; False when known already, or when the watcher is a
    member's own papers and the member is on the workspace's forget list."""
    if watcher.user_id:  # a member's own papers
        hold_forget_lists(conn, [watcher.team_id])
    cur = conn.execute(
        """
        INSERT INTO author_news (team_id, channel_id, paper_id, s2_author_id, kind, user_id, noticed_at)
        SELECT %(t)s, %(c)s, %(p)s, %(a)s, %(k)s, %(u)s, %(at)s
         WHERE NOT EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
        ON CONFLICT DO NOTHING
        """,
        {"t": watcher.team_id, "c": watcher.channel_id, "p": paper_id, "a": s2_author_id, "k": watcher.kind,
         "u": watcher.user_id, "at": at},
    )  # fmt: skip
    return cur.rowcount > 0


def load_waiting_followed(conn: psycopg.Connection, team_id: str, channel_id: str) -> dict[int, list[str]]:
    """The followed authors' new papers waiting for the channel's next slot: paper -> the authors' ids."""
    rows = conn.execute(
        """
        SELECT paper_id, s2_author_id FROM author_news
         WHERE team_id = %(t)s AND channel_id = %(c)s AND kind = 'followed' AND status = 'waiting'
        """,
        {"t": team_id, "c": channel_id},
    ).fetchall()
    out: dict[int, list[str]] = {}
    for pid, aid in rows:
        out.setdefault(int(pid), []).append(str(aid))
    return out


def mark_news_posted(
    conn: psycopg.Connection, team_id: str, channel_id: str, paper_ids: Sequence[int], at: datetime
) -> None:
    """The papers went to the channel (a post, a digest or an announcement): no longer waiting. A member's own
    paper that went out as a pick was not announced: it does not count against the week's announcements."""
    conn.execute(
        """
        UPDATE author_news SET status = CASE kind WHEN 'member' THEN 'dropped' ELSE 'posted' END,
               posted_at = %(at)s
         WHERE team_id = %(t)s AND channel_id = %(c)s AND paper_id = ANY(%(p)s::bigint[]) AND status = 'waiting'
        """,
        {"t": team_id, "c": channel_id, "p": list(paper_ids), "at": at},
    )


@dataclass(frozen=True)
class MemberNews:
    id: int
    team_id: str
    channel_id: str
    paper_id: int
    user_id: str


MEMBER_NEWS_PER_WEEK = 3  # members' own papers announced in one channel in seven days, at most

# a channel's members' papers announced in the seven days before %(at)s
_MEMBER_NEWS_SENT = """(SELECT count(*) FROM author_news o
    WHERE (o.team_id, o.channel_id) = ({t}, {c}) AND o.kind = 'member' AND o.status = 'posted'
      AND o.posted_at > %(at)s - interval '7 days')"""


def load_member_news(conn: psycopg.Connection, at: datetime, limit: int = 20) -> list[MemberNews]:
    """Members' own new papers waiting to be announced: in active channels that are not paused and have not had
    ``MEMBER_NEWS_PER_WEEK`` such announcements this week, by members still in the channel who still let it be."""
    rows = conn.execute(
        f"""
        SELECT n.id, n.team_id, n.channel_id, n.paper_id, n.user_id FROM author_news n
          JOIN channel_settings s ON (s.team_id, s.channel_id) = (n.team_id, n.channel_id)
           AND s.active AND NOT s.paused
          JOIN member_settings m ON (m.team_id, m.user_id) = (n.team_id, n.user_id)
          JOIN channel_members cm ON (cm.team_id, cm.channel_id, cm.user_id) = (n.team_id, n.channel_id, n.user_id)
         WHERE n.kind = 'member' AND n.status = 'waiting' AND n.channel_id = ANY(m.my_papers_channels)
           AND {_MEMBER_NEWS_SENT.format(t="n.team_id", c="n.channel_id")} < %(cap)s
         ORDER BY n.noticed_at, n.id LIMIT %(n)s
        """,
        {"n": limit, "at": at, "cap": MEMBER_NEWS_PER_WEEK},
    ).fetchall()
    return [MemberNews(r[0], r[1], r[2], r[3], r[4]) for r in rows]


def claim_news(conn: psycopg.Connection, news: MemberNews, at: datetime) -> bool:
    """Take one member's paper to announce, under the channel's weekly cap: the cap is checked while holding the
    channel's lock, so two processes never announce past it. The paper waits no more as a followed author's; one
    already shared in the channel (the member said so first) is dropped, not announced."""
    hold_lock(conn, f"member-news:{news.team_id}:{news.channel_id}")
    shared = conn.execute(  # a member who shared their paper here first: the channel has heard of it
        """
        UPDATE author_news SET status = 'dropped' WHERE id = %(id)s AND status = 'waiting' AND EXISTS (
            SELECT 1 FROM message_papers mp WHERE (mp.team_id, mp.channel_id, mp.paper_id) = (%(t)s, %(c)s, %(p)s))
        """,
        {"id": news.id, "t": news.team_id, "c": news.channel_id, "p": news.paper_id},
    )
    if shared.rowcount > 0:
        return False
    cur = conn.execute(
        f"""
        UPDATE author_news SET status = 'posted', posted_at = %(at)s
         WHERE id = %(id)s AND status = 'waiting'
           AND {_MEMBER_NEWS_SENT.format(t="%(t)s", c="%(c)s")} < %(cap)s
        """,
        {"id": news.id, "at": at, "t": news.team_id, "c": news.channel_id, "cap": MEMBER_NEWS_PER_WEEK},
    )
    if cur.rowcount == 0:
        return False
    # the channel hears of the paper once: when it also follows the member, the paper no longer waits for a slot
    mark_news_posted(conn, news.team_id, news.channel_id, [news.paper_id], at)
    return True


def find_author_by_orcid(conn: psycopg.Connection, orcid: str) -> str | None:
    """The Semantic Scholar id of the author with this ORCID, when a stored paper listed both."""
    row = conn.execute(
        "SELECT s2_author_id FROM authors WHERE orcid = %(o)s AND s2_author_id IS NOT NULL LIMIT 1", {"o": orcid}
    ).fetchone()
    return str(row[0]) if row else None
