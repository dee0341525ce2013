"""Messages that share papers, their threads and their reactions.

Bulk writes go through ``unnest`` so that a batch is one round trip, and upserts only touch a row whose
content changed, so importing the same history twice changes nothing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

import psycopg

from socialrag.models import Message
from socialrag.storage.embeddings import drop_orphaned_papers, forget_text_vectors
from socialrag.storage.follow_ups import forget_gone_shares
from socialrag.storage.locks import hold_forget_lists
from socialrag.storage.queue import requeue_shared

# The stored copy ``messages`` is newer than the one arriving (``EXCLUDED``): edited later, or edited at all while
# the arriving one was not (an export or a history page taken before the edit). Its content stays as it is.
OLDER_COPY = """(messages.edited_at IS NOT NULL
                 AND (EXCLUDED.edited_at IS NULL OR EXCLUDED.edited_at < messages.edited_at))"""
_KEEP_NEWER = ",\n".join(
    f"{c} = CASE WHEN {OLDER_COPY} THEN messages.{c} ELSE EXCLUDED.{c} END"
    for c in ("thread_ts", "user_id", "text", "subtype", "edited_at")
)


def upsert_messages(
    conn: psycopg.Connection, messages: Sequence[Message]
) -> tuple[dict[tuple[str, str, str], int], set[tuple[str, str, str]]]:
    """Insert or update messages; returns (team, channel, ts) -> message id for all of them, and the keys of those
    whose stored copy is newer (edited later): an older copy never replaces its text, only adds replies' count."""
    if not messages:
        return {}, set()
    params = {
        "team": [m.team_id for m in messages],
        "channel": [m.channel_id for m in messages],
        "ts": [m.ts for m in messages],
        "thread": [m.thread_ts for m in messages],
        "user": [m.user_id for m in messages],
        "text": [m.text for m in messages],
        "subtype": [m.subtype for m in messages],
        "permalink": [m.permalink for m in messages],
        "posted": [m.posted_at for m in messages],
        "edited": [m.edited_at for m in messages],
        "replies": [m.reply_count for m in messages],
    }
    conn.execute(
        f"""
        INSERT INTO messages (team_id, channel_id, ts, thread_ts, user_id, text, subtype, permalink,
                              posted_at, edited_at, reply_count)
        SELECT * FROM unnest(%(team)s::text[], %(channel)s::text[], %(ts)s::text[], %(thread)s::text[],
                             %(user)s::text[], %(text)s::text[], %(subtype)s::text[], %(permalink)s::text[],
                             %(posted)s::timestamptz[], %(edited)s::timestamptz[], %(replies)s::int[])
        ON CONFLICT (team_id, channel_id, ts) DO UPDATE
           SET {_KEEP_NEWER},
               permalink = COALESCE(EXCLUDED.permalink, messages.permalink),
               reply_count = GREATEST(EXCLUDED.reply_count, messages.reply_count)
         WHERE (NOT {OLDER_COPY}
                AND (messages.thread_ts, messages.user_id, messages.text, messages.subtype, messages.edited_at)
                    IS DISTINCT FROM
                    (EXCLUDED.thread_ts, EXCLUDED.user_id, EXCLUDED.text, EXCLUDED.subtype, EXCLUDED.edited_at))
            OR EXCLUDED.reply_count > messages.reply_count
            OR (messages.permalink IS NULL AND EXCLUDED.permalink IS NOT NULL)
        """,
        params,
    )
    rows = conn.execute(
        """
        SELECT m.id, m.team_id, m.channel_id, m.ts,
               m.edited_at IS NOT NULL AND (k.edited_at IS NULL OR k.edited_at < m.edited_at)
          FROM unnest(%(team)s::text[], %(channel)s::text[], %(ts)s::text[], %(edited)s::timestamptz[])
               AS k(team_id, channel_id, ts, edited_at)
          JOIN messages m USING (team_id, channel_id, ts)
        """,
        params,
    ).fetchall()
    return {(r[1], r[2], r[3]): r[0] for r in rows}, {(r[1], r[2], r[3]) for r in rows if r[4]}


def newer_copy_stored(
    conn: psycopg.Connection, team_id: str, channel_id: str, ts: str, edited_at: datetime | None
) -> bool:
    """Whether the stored copy of a message was edited after ``edited_at`` (or edited at all, when it is None)."""
    row = conn.execute(
        """
        SELECT 1 FROM messages WHERE team_id = %(t)s AND channel_id = %(c)s AND ts = %(ts)s
           AND edited_at IS NOT NULL AND (%(e)s::timestamptz IS NULL OR edited_at > %(e)s::timestamptz)
        """,
        {"t": team_id, "c": channel_id, "ts": ts, "e": edited_at},
    ).fetchone()
    return row is not None


def replace_message_papers(
    conn: psycopg.Connection, message_ids: Sequence[int], rows: Sequence[tuple[int, int, str, str, str, str | None]]
) -> None:
    """Make the papers of ``message_ids`` exactly ``rows`` (message_id, paper_id, team, channel, url, label). A
    paper an edit took out of the only message that linked it goes, as with a deletion."""
    unlinked = conn.execute(
        """
        DELETE FROM message_papers mp
         WHERE mp.message_id = ANY(%(ids)s::bigint[])
           AND NOT EXISTS (SELECT 1 FROM unnest(%(mid)s::bigint[], %(pid)s::bigint[]) AS n(mid, pid)
                            WHERE n.mid = mp.message_id AND n.pid = mp.paper_id)
        RETURNING mp.paper_id
        """,
        {"ids": list(message_ids), "mid": [r[0] for r in rows], "pid": [r[1] for r in rows]},
    ).fetchall()
    _insert_message_papers(conn, rows)
    if unlinked:
        drop_orphaned_papers(conn, sorted({r[0] for r in unlinked}), [])


def _insert_message_papers(
    conn: psycopg.Connection, rows: Sequence[tuple[int, int, str, str, str, str | None]]
) -> None:
    if not rows:
        return
    conn.execute(
        """
        INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url, label)
        SELECT * FROM unnest(%(mid)s::bigint[], %(pid)s::bigint[], %(team)s::text[], %(channel)s::text[],
                             %(url)s::text[], %(label)s::text[])
        ON CONFLICT (message_id, paper_id) DO UPDATE SET url = EXCLUDED.url, label = EXCLUDED.label
         WHERE (message_papers.url, message_papers.label) IS DISTINCT FROM (EXCLUDED.url, EXCLUDED.label)
        """,
        {
            "mid": [r[0] for r in rows],
            "pid": [r[1] for r in rows],
            "team": [r[2] for r in rows],
            "channel": [r[3] for r in rows],
            "url": [r[4] for r in rows],
            "label": [r[5] for r in rows],
        },
    )


def replace_reactions(
    conn: psycopg.Connection,
    message_ids: Sequence[int],
    rows: Sequence[tuple[int, str, str, str, str, datetime]],
    taken_after: datetime | None = None,
) -> None:
    """Make the emoji reactions on ``message_ids`` exactly ``rows`` (message_id, team, channel, user, emoji, at).
    Button clicks (``button:*``) are PaperPing's own, never in what Slack gives, and stay; so do reactions stored
    with a time after ``taken_after`` (an export's newest message: they are newer than the export)."""
    conn.execute(
        """
        DELETE FROM reactions r
         WHERE r.message_id = ANY(%(ids)s::bigint[])
           AND left(r.emoji, 7) <> 'button:'
           AND (%(after)s::timestamptz IS NULL OR r.reacted_at <= %(after)s::timestamptz)
           AND NOT EXISTS (SELECT 1 FROM unnest(%(mid)s::bigint[], %(user)s::text[], %(emoji)s::text[])
                                   AS n(mid, user_id, emoji)
                            WHERE (n.mid, n.user_id, n.emoji) = (r.message_id, r.user_id, r.emoji))
        """,
        {
            "ids": list(message_ids),
            "mid": [r[0] for r in rows],
            "user": [r[3] for r in rows],
            "emoji": [r[4] for r in rows],
            "after": taken_after,
        },
    )
    if not rows:
        return
    conn.execute(
        """
        INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at)
        SELECT * FROM unnest(%(mid)s::bigint[], %(team)s::text[], %(channel)s::text[], %(user)s::text[],
                             %(emoji)s::text[], %(at)s::timestamptz[])
        ON CONFLICT DO NOTHING
        """,
        {
            "mid": [r[0] for r in rows],
            "team": [r[1] for r in rows],
            "channel": [r[2] for r in rows],
            "user": [r[3] for r in rows],
            "emoji": [r[4] for r in rows],
            "at": [r[5] for r in rows],
        },
    )


def load_thread_roots(conn: psycopg.Connection, team_id: str, channel_id: str) -> set[str]:
    """The ts of stored messages whose threads PaperPing keeps (top-level messages that share papers)."""
    rows = conn.execute(
        """
        SELECT m.ts FROM messages m
         WHERE m.team_id = %(t)s AND m.channel_id = %(c)s AND NOT m.is_reply
           AND EXISTS (SELECT 1 FROM message_papers mp WHERE mp.message_id = m.id)
        """,
        {"t": team_id, "c": channel_id},
    ).fetchall()
    return {r[0] for r in rows}


def load_channel_counts(conn: psycopg.Connection, team_id: str, channel_id: str) -> dict[str, int]:
    """The size of one channel's base: messages, distinct papers, reactions, thread replies, members."""
    row = conn.execute(
        """
        SELECT
          (SELECT count(*) FROM messages WHERE team_id = %(t)s AND channel_id = %(c)s),
          (SELECT count(DISTINCT paper_id) FROM message_papers WHERE team_id = %(t)s AND channel_id = %(c)s),
          (SELECT count(*) FROM reactions WHERE team_id = %(t)s AND channel_id = %(c)s),
          (SELECT count(*) FROM messages WHERE team_id = %(t)s AND channel_id = %(c)s AND is_reply),
          (SELECT count(*) FROM (
              SELECT user_id FROM channel_members WHERE team_id = %(t)s AND channel_id = %(c)s
              UNION SELECT user_id FROM messages WHERE team_id = %(t)s AND channel_id = %(c)s
                                                   AND user_id IS NOT NULL
              UNION SELECT user_id FROM reactions WHERE team_id = %(t)s AND channel_id = %(c)s) AS u)
        """,
        {"t": team_id, "c": channel_id},
    ).fetchone()
    assert row is not None
    keys = ("messages", "papers", "reactions", "replies", "members")
    return dict(zip(keys, (int(v) for v in row), strict=True))


def load_first_share_at(conn: psycopg.Connection, team_id: str, channel_id: str) -> datetime | None:
    """When the channel's earliest stored share was posted."""
    row = conn.execute(
        """
        SELECT min(m.posted_at) FROM messages m
         WHERE m.team_id = %(t)s AND m.channel_id = %(c)s
           AND EXISTS (SELECT 1 FROM message_papers mp WHERE mp.message_id = m.id)
        """,
        {"t": team_id, "c": channel_id},
    ).fetchone()
    return row[0] if row else None


def delete_messages(conn: psycopg.Connection, team_id: str, channel_id: str, ts_list: Iterable[str]) -> int:
    """Delete messages (their paper links and reactions go with them, and the channel's vectors made from
    their words, to be made again from what remains); returns how many."""
    return _delete_where(
        conn,
        team_id,
        channel_id,
        "m.team_id = %(t)s AND m.channel_id = %(c)s AND m.ts = ANY(%(ts)s::text[])",
        {"t": team_id, "c": channel_id, "ts": list(ts_list)},
    )


def _delete_where(
    conn: psycopg.Connection, team_id: str, channel_id: str, where: str, params: Mapping[str, object]
) -> int:
    """Delete the messages ``where`` selects in the channel (a fixed condition on ``messages m``, never input),
    with the channel vectors made from their words; a paper only they brought in (not the catalog's, saved,
    focused or posted nowhere) goes with them, as with forget-me, so no other channel comes to see it; the papers
    still shared are queued to be embedded again from what remains; the channel's follow-ups keep no ts of a
    share that went (``forget_gone_shares``). Returns how many messages went."""
    made_from = forget_text_vectors(conn, where, params)
    deleted = conn.execute(f"DELETE FROM messages m WHERE {where}", params).rowcount
    if deleted:
        forget_gone_shares(conn, team_id, [channel_id])
    drop_orphaned_papers(conn, made_from, [])
    requeue_shared(conn, made_from)
    return deleted


def load_message_id(conn: psycopg.Connection, team_id: str, channel_id: str, ts: str) -> int | None:
    row = conn.execute(
        "SELECT id FROM messages WHERE team_id = %(t)s AND channel_id = %(c)s AND ts = %(ts)s",
        {"t": team_id, "c": channel_id, "ts": ts},
    ).fetchone()
    return int(row[0]) if row else None


def add_reaction(
    conn: psycopg.Connection, message_id: int, team_id: str, channel_id: str, user_id: str, emoji: str, at: datetime
) -> None:
    hold_forget_lists(conn, [team_id])
    conn.execute(
        """
        INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at)
        SELECT %(m)s, %(t)s, %(c)s, %(u)s, %(e)s, %(at)s
         WHERE NOT EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
        ON CONFLICT (message_id, user_id, emoji) DO UPDATE
           SET reacted_at = GREATEST(reactions.reacted_at, EXCLUDED.reacted_at)
        """,
        {"m": message_id, "t": team_id, "c": channel_id, "u": user_id, "e": emoji, "at": at},
    )


def toggle_reaction(
    conn: psycopg.Connection, message_id: int, team_id: str, channel_id: str, user_id: str, emoji: str, at: datetime
) -> bool:
    """A click on a button: the member's reaction of that name removed if they had it, else added (unless they
    asked to be forgotten). True when it is on after the click."""
    if remove_reaction(conn, message_id, user_id, emoji):
        return False
    add_reaction(conn, message_id, team_id, channel_id, user_id, emoji, at)
    return True


def load_reaction_counts(conn: psycopg.Connection, message_id: int) -> dict[str, int]:
    """How many members left each reaction (or click) on a message."""
    rows = conn.execute(
        "SELECT emoji, count(*) FROM reactions WHERE message_id = %(m)s GROUP BY emoji", {"m": message_id}
    ).fetchall()
    return {r[0]: int(r[1]) for r in rows}


def remove_reaction(
    conn: psycopg.Connection, message_id: int, user_id: str, emoji: str, at: datetime | None = None
) -> bool:
    """Take a member's reaction off a message (one added again after ``at`` stays); False when none went."""
    return (
        conn.execute(
            "DELETE FROM reactions WHERE message_id = %(m)s AND user_id = %(u)s AND emoji = %(e)s"
            " AND (%(at)s::timestamptz IS NULL OR reacted_at <= %(at)s)",
            {"m": message_id, "u": user_id, "e": emoji, "at": at},
        ).rowcount
        > 0
    )


def delete_thread(conn: psycopg.Connection, team_id: str, channel_id: str, root_ts: str) -> int:
    """Delete a message and the replies in its thread (with their links and reactions, and the channel's
    vectors made from their words, to be made again from what remains), and a digest's papers' keys."""
    return _delete_where(
        conn,
        team_id,
        channel_id,
        "m.team_id = %(t)s AND m.channel_id = %(c)s"
        " AND (m.ts = %(ts)s OR m.thread_ts = %(ts)s OR starts_with(m.ts, %(item)s))",
        {"t": team_id, "c": channel_id, "ts": root_ts, "item": root_ts + "/"},
    )


def load_message_ts_by_user(conn: psycopg.Connection, team_id: str, channel_id: str, user_id: str) -> list[str]:
    rows = conn.execute(
        "SELECT ts FROM messages WHERE team_id = %(t)s AND channel_id = %(c)s AND user_id = %(u)s",
        {"t": team_id, "c": channel_id, "u": user_id},
    ).fetchall()
    return [r[0] for r in rows]


def load_message(conn: psycopg.Connection, team_id: str, channel_id: str, ts: str) -> tuple[str, datetime] | None:
    """A stored message's text and time."""
    row = conn.execute(
        "SELECT text, posted_at FROM messages WHERE team_id = %(t)s AND channel_id = %(c)s AND ts = %(ts)s",
        {"t": team_id, "c": channel_id, "ts": ts},
    ).fetchone()
    return (row[0], row[1]) if row else None


def load_message_paper_ids(conn: psycopg.Connection, team_id: str, channel_id: str, ts: str) -> list[int]:
    """The papers a kept message links to, in the order it links them."""
    rows = conn.execute(
        """
        SELECT mp.paper_id FROM messages m JOIN message_papers mp ON mp.message_id = m.id
         WHERE m.team_id = %(t)s AND m.channel_id = %(c)s AND m.ts = %(ts)s ORDER BY mp.paper_id
        """,
        {"t": team_id, "c": channel_id, "ts": ts},
    ).fetchall()
    return [r[0] for r in rows]


def load_thread_texts(
    conn: psycopg.Connection, team_id: str, channel_id: str, root_ts: str, limit: int = 30
) -> list[str]:
    """The kept replies of a thread, oldest first (the root's own text first); past ``limit``, the root and the
    latest replies, which a question in the thread follows on from."""
    rows = conn.execute(
        """
        SELECT text FROM (
            SELECT text, posted_at, ts, ts = %(r)s AS root FROM messages WHERE team_id = %(t)s AND channel_id = %(c)s
               AND (ts = %(r)s OR thread_ts = %(r)s) ORDER BY ts = %(r)s DESC, posted_at DESC, ts DESC LIMIT %(n)s
        ) kept ORDER BY root DESC, posted_at, ts
        """,
        {"t": team_id, "c": channel_id, "r": root_ts, "n": limit},
    ).fetchall()
    return [r[0] for r in rows]
