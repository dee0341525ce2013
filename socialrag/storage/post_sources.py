"""What PaperPing's stored posts rest on, checked against what the channel still keeps: the messages a post's
reasons link to, the reply an earlier reception quotes, and the post itself once it is deleted in Slack.

A post's draft never holds a member's words (a reply is kept by its row, and quoted only while that row is);
``socialrag.reasons`` decides which reasons still stand, and this module loads and writes them.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from socialrag.reasons import blank_draft, draft_links, keep_standing
from socialrag.storage.llm_log import forget_llm_outputs

QUOTED_CHARS = 140  # how much of a kept reply `/paperping why` quotes


def load_kept_links(conn: psycopg.Connection, team_id: str, channel_id: str, links: Collection[str]) -> set[str]:
    """Which of these permalinks are still the channel's kept messages."""
    if not links:
        return set()
    rows = conn.execute(
        """
        SELECT permalink FROM messages
         WHERE team_id = %(t)s AND channel_id = %(c)s AND permalink = ANY(%(l)s::text[])
        """,
        {"t": team_id, "c": channel_id, "l": sorted(links)},
    ).fetchall()
    return {r[0] for r in rows}


def load_kept_replies(conn: psycopg.Connection, team_id: str, channel_id: str, ids: Collection[int]) -> dict[int, str]:
    """The words (at most ``QUOTED_CHARS``) of these stored replies of the channel that are still kept, by row."""
    if not ids:
        return {}
    rows = conn.execute(
        """
        SELECT id, left(text, %(n)s) FROM messages
         WHERE team_id = %(t)s AND channel_id = %(c)s AND id = ANY(%(ids)s::bigint[]) AND is_reply
        """,
        {"t": team_id, "c": channel_id, "ids": sorted(ids), "n": QUOTED_CHARS},
    ).fetchall()
    return {int(r[0]): str(r[1]) for r in rows}


def _load_drafts(conn: psycopg.Connection, team_id: str, channel_id: str) -> list[tuple[int, dict[str, Any]]]:
    rows = conn.execute(
        """
        SELECT id, draft FROM recommendations
         WHERE team_id = %(t)s AND channel_id = %(c)s AND draft::text LIKE '%%permalinks%%'
         ORDER BY id
        """,
        {"t": team_id, "c": channel_id},
    ).fetchall()
    return [(int(r[0]), dict(r[1])) for r in rows if isinstance(r[1], dict)]


def _update_draft(conn: psycopg.Connection, rec_id: int, was: dict[str, Any], draft: dict[str, Any]) -> None:
    """Replace a stored draft, unless a worker redrafted its slot since it was read (from what is kept now)."""
    conn.execute(
        "UPDATE recommendations SET draft = %(d)s WHERE id = %(id)s AND draft = %(was)s",
        {"d": Jsonb(draft), "id": rec_id, "was": Jsonb(was)},
    )


def prune_fallen_reasons(conn: psycopg.Connection, team_id: str, channel_id: str) -> int:
    """Take out of the channel's stored drafts every reason whose messages are all gone, and the links to gone
    messages from the rest (``socialrag.reasons.keep_standing``). Returns how many drafts changed."""
    drafts = _load_drafts(conn, team_id, channel_id)
    kept = load_kept_links(conn, team_id, channel_id, set().union(*(draft_links(d) for _, d in drafts)))
    changed = 0
    for rec_id, draft in drafts:
        standing, _ = keep_standing(draft, kept)
        if standing != draft:
            _update_draft(conn, rec_id, draft, standing)
            changed += 1
    return changed


def load_team_channels_with_posts(conn: psycopg.Connection, team_id: str) -> list[str]:
    """The channels of a workspace that have stored posts."""
    rows = conn.execute(
        "SELECT DISTINCT channel_id FROM recommendations WHERE team_id = %(t)s ORDER BY channel_id", {"t": team_id}
    ).fetchall()
    return [r[0] for r in rows]


def record_post_deleted(conn: psycopg.Connection, team_id: str, channel_id: str, ts: str) -> bool:
    """PaperPing's own post (or digest) with this ts was deleted in Slack: it is marked so (``why``, App Home and
    status leave it out) and its draft keeps only its paper (``socialrag.reasons.blank_draft``). False when no
    post of the channel has that ts."""
    row = conn.execute(
        """
        SELECT id, draft FROM recommendations
         WHERE team_id = %(t)s AND channel_id = %(c)s AND message_ts = %(ts)s AND status = 'posted'
         FOR UPDATE
        """,
        {"t": team_id, "c": channel_id, "ts": ts},
    ).fetchone()
    if row is None:
        return False
    conn.execute(
        "UPDATE recommendations SET deleted_at = COALESCE(deleted_at, now()), draft = %(d)s WHERE id = %(id)s",
        {"d": Jsonb(blank_draft(dict(row[1] or {}))), "id": row[0]},
    )
    return True


def record_message_deleted(conn: psycopg.Connection, team_id: str, channel_id: str, ts: str, *, removed: int) -> None:
    """After a message (``ts``) was deleted in Slack and ``removed`` stored messages went with it: PaperPing's own
    post with that ts is marked deleted; and when anything stored went, the channel's stored posts drop the reasons
    that rested on it, and its LLM logs their output (an answer may have quoted it)."""
    post = record_post_deleted(conn, team_id, channel_id, ts)
    if removed or post:
        drop_what_rested_on_deleted(conn, team_id, channel_id)


def drop_what_rested_on_deleted(conn: psycopg.Connection, team_id: str, channel_id: str) -> None:
    """Once messages of the channel were deleted (one, or all a history read found gone): its stored posts drop the
    reasons that rested on them, and its LLM logs their output (an answer may have quoted them)."""
    prune_fallen_reasons(conn, team_id, channel_id)
    forget_llm_outputs(conn, team_id, channel_id)
