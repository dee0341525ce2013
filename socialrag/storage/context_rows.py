"""What one channel's context is loaded from, scoped to (team, channel, as of a moment): its shares, their
reactions and replies, its members with their own settings, and what PaperPing recommended and mentioned there.
``socialrag.recommender.retrieve.context`` puts them together; nothing here reads another channel. Rows come in
the order of stable keys (paper ids, times, message ids), never the order they lie in on disk: a restore or a
``VACUUM FULL`` writes them in another order, and the channel's topics and ranking must not change with it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

import psycopg

from socialrag.rows import AuthorRef, MemberInfo, PaperInfo, ReactionEvent, Reply, Share

# A message ``m`` that shares a paper the way a member does: not a reply, not one of PaperPing's own posts, not a
# digest's per-paper item (whose ts holds a slash)
MEMBER_SHARE = """NOT m.is_reply AND position('/' in m.ts) = 0
     AND NOT EXISTS (SELECT 1 FROM recommendations r
                      WHERE (r.team_id, r.channel_id, r.message_ts) = (m.team_id, m.channel_id, m.ts))"""


def id_array(ids: Iterable[int]) -> str:
    """Ids as a Postgres array literal, for ``= ANY(%s::bigint[])``: thousands of them are sent and read as one
    string many times faster than psycopg adapts a list element by element (a refit sends 8,000 several times)."""
    return "{" + ",".join(map(str, map(int, ids))) + "}"


def load_paper_infos(
    conn: psycopg.Connection, paper_ids: list[int], as_of: datetime | None = None
) -> dict[int, PaperInfo]:
    """Metadata and authors of papers (public data, no channel scope needed). With ``as_of``, the popularity
    is the last reading before that moment (none if there was none then), never a later count. (A refit's
    thousands of papers are read as arrays instead: ``storage.rankers.load_paper_arrays``.)"""
    if not paper_ids:
        return {}
    rows = conn.execute(
        """
        SELECT p.id, p.title, p.venue_id, v.name, p.year,
               CASE WHEN %(as_of)s::timestamptz IS NULL THEN p.popularity
                    ELSE (SELECT pp.value FROM paper_popularity pp WHERE pp.paper_id = p.id
                             AND pp.observed_at <= %(as_of)s::timestamptz ORDER BY pp.observed_at DESC LIMIT 1) END,
               p.abstract, p.tldr, p.url, p.publication_date, p.date_precision
          FROM papers p LEFT JOIN venues v ON v.id = p.venue_id WHERE p.id = ANY(%(ids)s::bigint[])
         ORDER BY p.id
        """,
        {"ids": id_array(paper_ids), "as_of": as_of},
    ).fetchall()
    authors: dict[int, list[AuthorRef]] = defaultdict(list)
    for pid, aid, name, norm, affs, s2 in conn.execute(
        """
        SELECT pa.paper_id, a.id, a.name, a.normalized_name, pa.affiliations, a.s2_author_id
          FROM paper_authors pa JOIN authors a ON a.id = pa.author_id
         WHERE pa.paper_id = ANY(%(ids)s::bigint[]) ORDER BY pa.paper_id, pa.position
        """,
        {"ids": id_array(paper_ids)},
    ).fetchall():
        authors[pid].append(AuthorRef(aid, name, norm, tuple(affs or ()), s2))
    return {
        r[0]: PaperInfo(r[0], r[1], r[2], r[3], r[4], tuple(authors.get(r[0], ())), r[5], r[6], r[7], r[8], r[9], r[10])
        for r in rows
    }


def load_shares(conn: psycopg.Connection, team: str, channel: str, as_of: datetime) -> dict[int, list[Share]]:
    rows = conn.execute(
        """
        SELECT mp.paper_id, m.id, m.ts, m.user_id, m.posted_at, m.permalink, mp.label
          FROM message_papers mp JOIN messages m ON m.id = mp.message_id
         WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s AND m.posted_at < %(as_of)s
         ORDER BY mp.paper_id, m.posted_at, m.id
        """,
        {"t": team, "c": channel, "as_of": as_of},
    ).fetchall()
    shares: dict[int, list[Share]] = defaultdict(list)
    for pid, mid, ts, user, at, link, label in rows:
        shares[pid].append(Share(mid, ts, user, at, link, label))
    return shares


def load_reactions(conn: psycopg.Connection, message_ids: list[int], as_of: datetime) -> list[ReactionEvent]:
    rows = conn.execute(
        """
        SELECT message_id, user_id, emoji, reacted_at FROM reactions
         WHERE message_id = ANY(%(ids)s::bigint[]) AND reacted_at < %(as_of)s
         ORDER BY message_id, reacted_at, user_id, emoji
        """,
        {"ids": id_array(message_ids), "as_of": as_of},
    ).fetchall()
    return [ReactionEvent(*r) for r in rows]


def load_replies(
    conn: psycopg.Connection, team: str, channel: str, roots: dict[str, int], as_of: datetime
) -> list[Reply]:
    rows = conn.execute(
        """
        SELECT id, thread_ts, user_id, posted_at, text, permalink FROM messages
         WHERE team_id = %(t)s AND channel_id = %(c)s AND is_reply AND thread_ts = ANY(%(roots)s::text[])
           AND posted_at < %(as_of)s
         ORDER BY posted_at, id
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
         ORDER BY m.user_id
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
         ORDER BY id
        """,
        {"s2": s2, "orcid": orcid, "names": names},
    ).fetchall()
    return [r[0] for r in rows]


# each paper of a stored digest (``r.draft -> 'digest'``), none of a single post's draft: one row ``d`` a paper
DIGEST_ITEMS = """jsonb_array_elements(CASE WHEN jsonb_typeof(r.draft -> 'digest') = 'array'
                                   THEN r.draft -> 'digest' ELSE '[]'::jsonb END)"""


def load_recommended(conn: psycopg.Connection, team: str, channel: str, as_of: datetime) -> dict[int, datetime]:
    """Every paper the channel was offered before ``as_of`` (a post's, and each of a digest's), with when: none is
    offered again, even once its post was deleted in Slack and the share it made went with it."""
    rows = conn.execute(
        """
        SELECT paper_id, max(created_at) FROM (
            SELECT r.paper_id, r.created_at FROM recommendations r
             WHERE r.team_id = %(t)s AND r.channel_id = %(c)s AND r.created_at < %(as_of)s
            UNION ALL
            SELECT (d #>> '{paper,paper_id}')::bigint, r.created_at FROM recommendations r, """
        + DIGEST_ITEMS
        + """ AS d
             WHERE r.team_id = %(t)s AND r.channel_id = %(c)s AND r.created_at < %(as_of)s
               AND d #>> '{paper,paper_id}' ~ '^[0-9]{1,18}$'
        ) offered
         WHERE paper_id IS NOT NULL
         GROUP BY paper_id ORDER BY paper_id
        """,
        {"t": team, "c": channel, "as_of": as_of},
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def load_last_mentions(conn: psycopg.Connection, team: str, channel: str, as_of: datetime) -> dict[str, datetime]:
    rows = conn.execute(
        """
        SELECT u, max(coalesce(posted_at, created_at)) FROM recommendations,
               jsonb_array_elements_text(COALESCE(draft -> 'mentions', '[]'::jsonb)) AS u
         WHERE team_id = %(t)s AND channel_id = %(c)s AND status = 'posted' AND created_at < %(as_of)s
         GROUP BY u ORDER BY u
        """,
        {"t": team, "c": channel, "as_of": as_of},
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def load_recent_posts(
    conn: psycopg.Connection, team: str, channel: str, as_of: datetime, since: datetime
) -> tuple[dict[int, datetime], dict[str, datetime]]:
    threads: dict[int, datetime] = {}
    interested: dict[str, datetime] = {}
    for draft, at in conn.execute(
        """
        SELECT draft, coalesce(posted_at, created_at) FROM recommendations
         WHERE team_id = %(t)s AND channel_id = %(c)s AND status = 'posted'
           AND created_at < %(as_of)s AND created_at >= %(since)s
         ORDER BY created_at, id
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
