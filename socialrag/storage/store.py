"""Queries on the social side of the knowledge base: teams, channels, members, messages, reactions.

Plain SQL with named parameters, one function per query. Bulk writes go through ``unnest`` so that a
batch is one round trip, and upserts only touch a row whose content changed, so importing the same
history twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from socialrag.models import Channel, Member, Message, Sentiment


def upsert_team(conn: psycopg.Connection, team_id: str, name: str | None = None, domain: str | None = None) -> None:
    conn.execute(
        """
        INSERT INTO teams (team_id, name, domain) VALUES (%(team_id)s, %(name)s, %(domain)s)
        ON CONFLICT (team_id) DO UPDATE
           SET name = COALESCE(EXCLUDED.name, teams.name), domain = COALESCE(EXCLUDED.domain, teams.domain)
         WHERE (teams.name, teams.domain) IS DISTINCT FROM
               (COALESCE(EXCLUDED.name, teams.name), COALESCE(EXCLUDED.domain, teams.domain))
        """,
        {"team_id": team_id, "name": name, "domain": domain},
    )


def load_team_domain(conn: psycopg.Connection, team_id: str) -> str | None:
    row = conn.execute("SELECT domain FROM teams WHERE team_id = %(t)s", {"t": team_id}).fetchone()
    return row[0] if row else None


def upsert_channel(conn: psycopg.Connection, channel: Channel) -> None:
    conn.execute(
        """
        INSERT INTO channels (team_id, channel_id, name) VALUES (%(team_id)s, %(channel_id)s, %(name)s)
        ON CONFLICT (team_id, channel_id) DO UPDATE SET name = EXCLUDED.name
         WHERE channels.name IS DISTINCT FROM EXCLUDED.name
        """,
        {"team_id": channel.team_id, "channel_id": channel.channel_id, "name": channel.name},
    )
    if channel.member_ids:
        conn.execute(
            """
            INSERT INTO channel_members (team_id, channel_id, user_id)
            SELECT %(team_id)s, %(channel_id)s, u FROM unnest(%(users)s::text[]) AS u
             WHERE NOT EXISTS (SELECT 1 FROM forgotten_members f WHERE f.team_id = %(team_id)s AND f.user_id = u)
            ON CONFLICT DO NOTHING
            """,
            {"team_id": channel.team_id, "channel_id": channel.channel_id, "users": list(channel.member_ids)},
        )


def upsert_members(conn: psycopg.Connection, members: Sequence[Member]) -> None:
    if not members:
        return
    conn.execute(
        """
        INSERT INTO members (team_id, user_id, display_name, real_name, is_bot, deleted, timezone)
        SELECT * FROM unnest(%(team)s::text[], %(user)s::text[], %(display)s::text[], %(real)s::text[],
                             %(bot)s::boolean[], %(deleted)s::boolean[], %(tz)s::text[]) AS u(t, uid, d, r, b, x, z)
         WHERE NOT EXISTS (SELECT 1 FROM forgotten_members f WHERE f.team_id = u.t AND f.user_id = u.uid)
        ON CONFLICT (team_id, user_id) DO UPDATE
           SET display_name = EXCLUDED.display_name, real_name = EXCLUDED.real_name, is_bot = EXCLUDED.is_bot,
               deleted = EXCLUDED.deleted, timezone = EXCLUDED.timezone, updated_at = now()
         WHERE (members.display_name, members.real_name, members.is_bot, members.deleted, members.timezone)
               IS DISTINCT FROM
               (EXCLUDED.display_name, EXCLUDED.real_name, EXCLUDED.is_bot, EXCLUDED.deleted, EXCLUDED.timezone)
        """,
        {
            "team": [m.team_id for m in members],
            "user": [m.user_id for m in members],
            "display": [m.display_name for m in members],
            "real": [m.real_name for m in members],
            "bot": [m.is_bot for m in members],
            "deleted": [m.deleted for m in members],
            "tz": [m.timezone for m in members],
        },
    )


def update_team_timezone(conn: psycopg.Connection, team_id: str) -> None:
    """The workspace's timezone, taken as the one most of its known members use (Slack gives no other)."""
    conn.execute(
        """
        UPDATE teams SET timezone = (SELECT mode() WITHIN GROUP (ORDER BY timezone) FROM members
                                      WHERE team_id = %(t)s AND timezone IS NOT NULL AND NOT is_bot)
         WHERE team_id = %(t)s
        """,
        {"t": team_id},
    )


def load_member_ids(conn: psycopg.Connection, team_id: str) -> set[str]:
    rows = conn.execute("SELECT user_id FROM members WHERE team_id = %(t)s", {"t": team_id}).fetchall()
    return {r[0] for r in rows}


def upsert_messages(conn: psycopg.Connection, messages: Sequence[Message]) -> dict[tuple[str, str, str], int]:
    """Insert or update messages; returns (team, channel, ts) -> message id for all of them."""
    if not messages:
        return {}
    conn.execute(
        """
        INSERT INTO messages (team_id, channel_id, ts, thread_ts, user_id, text, subtype, permalink,
                              posted_at, edited_at, reply_count)
        SELECT * FROM unnest(%(team)s::text[], %(channel)s::text[], %(ts)s::text[], %(thread)s::text[],
                             %(user)s::text[], %(text)s::text[], %(subtype)s::text[], %(permalink)s::text[],
                             %(posted)s::timestamptz[], %(edited)s::timestamptz[], %(replies)s::int[])
        ON CONFLICT (team_id, channel_id, ts) DO UPDATE
           SET thread_ts = EXCLUDED.thread_ts, user_id = EXCLUDED.user_id, text = EXCLUDED.text,
               subtype = EXCLUDED.subtype, permalink = COALESCE(EXCLUDED.permalink, messages.permalink),
               edited_at = EXCLUDED.edited_at, reply_count = GREATEST(EXCLUDED.reply_count, messages.reply_count)
         WHERE (messages.thread_ts, messages.user_id, messages.text, messages.subtype, messages.edited_at)
               IS DISTINCT FROM
               (EXCLUDED.thread_ts, EXCLUDED.user_id, EXCLUDED.text, EXCLUDED.subtype, EXCLUDED.edited_at)
            OR EXCLUDED.reply_count > messages.reply_count
            OR (messages.permalink IS NULL AND EXCLUDED.permalink IS NOT NULL)
        """,
        {
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
        },
    )
    rows = conn.execute(
        """
        SELECT m.id, m.team_id, m.channel_id, m.ts
          FROM unnest(%(team)s::text[], %(channel)s::text[], %(ts)s::text[]) AS k(team_id, channel_id, ts)
          JOIN messages m USING (team_id, channel_id, ts)
        """,
        {
            "team": [m.team_id for m in messages],
            "channel": [m.channel_id for m in messages],
            "ts": [m.ts for m in messages],
        },
    ).fetchall()
    return {(r[1], r[2], r[3]): r[0] for r in rows}


def replace_message_papers(
    conn: psycopg.Connection, message_ids: Sequence[int], rows: Sequence[tuple[int, int, str, str, str, str | None]]
) -> None:
    """Make the papers of ``message_ids`` exactly ``rows`` (message_id, paper_id, team, channel, url, label)."""
    conn.execute(
        """
        DELETE FROM message_papers mp
         WHERE mp.message_id = ANY(%(ids)s::bigint[])
           AND NOT EXISTS (SELECT 1 FROM unnest(%(mid)s::bigint[], %(pid)s::bigint[]) AS n(mid, pid)
                            WHERE n.mid = mp.message_id AND n.pid = mp.paper_id)
        """,
        {"ids": list(message_ids), "mid": [r[0] for r in rows], "pid": [r[1] for r in rows]},
    )
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
    conn: psycopg.Connection, message_ids: Sequence[int], rows: Sequence[tuple[int, str, str, str, str, datetime]]
) -> None:
    """Make the reactions on ``message_ids`` exactly ``rows`` (message_id, team, channel, user, emoji, at)."""
    conn.execute(
        """
        DELETE FROM reactions r
         WHERE r.message_id = ANY(%(ids)s::bigint[])
           AND NOT EXISTS (SELECT 1 FROM unnest(%(mid)s::bigint[], %(user)s::text[], %(emoji)s::text[])
                                   AS n(mid, user_id, emoji)
                            WHERE (n.mid, n.user_id, n.emoji) = (r.message_id, r.user_id, r.emoji))
        """,
        {
            "ids": list(message_ids),
            "mid": [r[0] for r in rows],
            "user": [r[3] for r in rows],
            "emoji": [r[4] for r in rows],
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


def load_emoji_overrides(conn: psycopg.Connection, team_id: str, channel_id: str) -> dict[str, Sentiment]:
    rows = conn.execute(
        "SELECT emoji, sentiment FROM emoji_sentiments WHERE team_id = %(t)s AND channel_id = %(c)s",
        {"t": team_id, "c": channel_id},
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def upsert_emoji_override(
    conn: psycopg.Connection, team_id: str, channel_id: str, emoji: str, sentiment: Sentiment
) -> None:
    conn.execute(
        """
        INSERT INTO emoji_sentiments (team_id, channel_id, emoji, sentiment)
        VALUES (%(t)s, %(c)s, %(e)s, %(s)s)
        ON CONFLICT (team_id, channel_id, emoji) DO UPDATE SET sentiment = EXCLUDED.sentiment, updated_at = now()
        """,
        {"t": team_id, "c": channel_id, "e": emoji, "s": sentiment},
    )


def load_checkpoint(conn: psycopg.Connection, team_id: str, channel_id: str, source: str) -> dict[str, Any] | None:
    row = conn.execute(
        """
        SELECT cursor, state, completed_at FROM import_checkpoints
         WHERE team_id = %(t)s AND channel_id = %(c)s AND source = %(s)s
        """,
        {"t": team_id, "c": channel_id, "s": source},
    ).fetchone()
    if row is None:
        return None
    return {"cursor": row[0], "state": row[1], "completed_at": row[2]}


def record_checkpoint(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    source: str,
    cursor: str | None,
    state: dict[str, Any],
    *,
    completed: bool = False,
) -> None:
    conn.execute(
        """
        INSERT INTO import_checkpoints (team_id, channel_id, source, cursor, state, completed_at)
        VALUES (%(t)s, %(c)s, %(s)s, %(cursor)s, %(state)s, CASE WHEN %(done)s THEN now() END)
        ON CONFLICT (team_id, channel_id, source) DO UPDATE
           SET cursor = EXCLUDED.cursor, state = EXCLUDED.state, updated_at = now(),
               completed_at = EXCLUDED.completed_at
        """,
        {"t": team_id, "c": channel_id, "s": source, "cursor": cursor, "state": Jsonb(state), "done": completed},
    )


def find_channels(conn: psycopg.Connection, name_or_id: str | None = None) -> list[tuple[str, str, str]]:
    """(team_id, channel_id, name) of stored channels, all or those matching a name or id."""
    if name_or_id is None:
        rows = conn.execute("SELECT team_id, channel_id, name FROM channels ORDER BY name, team_id").fetchall()
    else:
        wanted = name_or_id.lstrip("#")
        rows = conn.execute(
            """
            SELECT team_id, channel_id, name FROM channels
             WHERE channel_id = %(w)s OR name = %(w)s ORDER BY name, team_id
            """,
            {"w": wanted},
        ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


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
    """Delete messages (their paper links and reactions go with them); returns how many."""
    cur = conn.execute(
        "DELETE FROM messages WHERE team_id = %(t)s AND channel_id = %(c)s AND ts = ANY(%(ts)s::text[])",
        {"t": team_id, "c": channel_id, "ts": list(ts_list)},
    )
    return cur.rowcount


_CHANNEL_DEFAULTS: dict[str, Any] = {
    "style": None,
    "sources": ["catalog", "semanticscholar", "arxiv"],
    "frequency": "every-other-day",
    "paused": False,
    "timezone": None,
    "post_start_hour": 9,
    "post_end_hour": 17,
    "weekdays_only": True,
    "active": False,
    "next_post_at": None,
    "last_post_at": None,
    "step_down_reason": None,
    "focus_text": None,
    "focus_expires_at": None,
    "slot_at": None,
    "failures": 0,
    "stopped_reason": None,
    "report_monthly": False,
    "report_last_at": None,
    "arxiv_categories": [],
    "focus_paper_ids": [],
    "empty_reason": None,
    "empty_at": None,
    "activated_at": None,
}


def load_channel_settings(conn: psycopg.Connection, team_id: str, channel_id: str) -> dict[str, Any]:
    """The channel's settings (defaults when it has none yet)."""
    columns = list(_CHANNEL_DEFAULTS)
    row = conn.execute(
        f"SELECT {', '.join(columns)} FROM channel_settings"  # column names are the fixed keys above
        " WHERE team_id = %(t)s AND channel_id = %(c)s",
        {"t": team_id, "c": channel_id},
    ).fetchone()
    if row is None:
        return dict(_CHANNEL_DEFAULTS)
    out = dict(zip(columns, row, strict=True))
    for key in ("sources", "arxiv_categories", "focus_paper_ids"):
        out[key] = list(out[key])
    return out


_SETTINGS = {
    "channel_settings": (
        "channel_id",
        {
            "style",
            "sources",
            "frequency",
            "paused",
            "active",
            "timezone",
            "post_start_hour",
            "post_end_hour",
            "weekdays_only",
            "next_post_at",
            "slot_at",
            "focus_text",
            "focus_expires_at",
            "step_down_reason",
            "failures",
            "stopped_reason",
            "report_monthly",
            "report_last_at",
            "arxiv_categories",
            "focus_paper_ids",
            "empty_reason",
            "activated_at",
        },
    ),
    "member_settings": ("user_id", {"mentions_enabled", "s2_author_id", "orcid", "confirmed_names"}),
}


def _upsert_settings(conn: psycopg.Connection, table: str, team_id: str, key: str, values: dict[str, Any]) -> None:
    key_column, allowed = _SETTINGS[table]
    unknown = set(values) - allowed
    if unknown:
        raise ValueError(f"unknown {table.replace('_', ' ')}: {', '.join(sorted(unknown))}")
    conn.execute(
        # the table and column names come from _SETTINGS, never from input
        f"INSERT INTO {table} (team_id, {key_column}) VALUES (%(t)s, %(k)s) ON CONFLICT DO NOTHING",
        {"t": team_id, "k": key},
    )
    for column, value in values.items():
        conn.execute(
            f"UPDATE {table} SET {column} = %(v)s, updated_at = now()"  # safe: names are allow-listed
            f" WHERE team_id = %(t)s AND {key_column} = %(k)s",
            {"v": value, "t": team_id, "k": key},
        )


def upsert_channel_setting(conn: psycopg.Connection, team_id: str, channel_id: str, **values: Any) -> None:
    """Set some of a channel's settings (style, sources, frequency, paused)."""
    _upsert_settings(conn, "channel_settings", team_id, channel_id, values)


def upsert_member_setting(conn: psycopg.Connection, team_id: str, user_id: str, **values: Any) -> None:
    """Set some of a member's own settings (mentions_enabled, s2_author_id, orcid, confirmed_names)."""
    _upsert_settings(conn, "member_settings", team_id, user_id, values)


def record_llm_call(conn: psycopg.Connection, team_id: str | None, channel_id: str | None, call: Any) -> None:
    """One LLM call: prompt name, version and hash, model, tokens, latency, outcome (and the answer)."""
    conn.execute(
        """
        INSERT INTO llm_calls (team_id, channel_id, prompt_name, prompt_version, prompt_hash, model, prompt_tokens,
                               completion_tokens, latency_ms, outcome, error, output)
        VALUES (%(t)s, %(c)s, %(name)s, %(version)s, %(hash)s, %(model)s, %(pt)s, %(ct)s, %(ms)s, %(outcome)s,
                %(error)s, %(output)s)
        """,
        {
            "t": team_id,
            "c": channel_id,
            "name": call.prompt_name,
            "version": call.prompt_version,
            "hash": call.prompt_hash,
            "model": call.model,
            "pt": call.prompt_tokens,
            "ct": call.completion_tokens,
            "ms": call.latency_ms,
            "outcome": call.outcome,
            "error": call.error,
            "output": call.output,
        },
    )


def load_message_id(conn: psycopg.Connection, team_id: str, channel_id: str, ts: str) -> int | None:
    row = conn.execute(
        "SELECT id FROM messages WHERE team_id = %(t)s AND channel_id = %(c)s AND ts = %(ts)s",
        {"t": team_id, "c": channel_id, "ts": ts},
    ).fetchone()
    return int(row[0]) if row else None


def add_reaction(
    conn: psycopg.Connection, message_id: int, team_id: str, channel_id: str, user_id: str, emoji: str, at: datetime
) -> None:
    conn.execute(
        """
        INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at)
        SELECT %(m)s, %(t)s, %(c)s, %(u)s, %(e)s, %(at)s
         WHERE NOT EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
        ON CONFLICT DO NOTHING
        """,
        {"m": message_id, "t": team_id, "c": channel_id, "u": user_id, "e": emoji, "at": at},
    )


def remove_reaction(conn: psycopg.Connection, message_id: int, user_id: str, emoji: str) -> None:
    conn.execute(
        "DELETE FROM reactions WHERE message_id = %(m)s AND user_id = %(u)s AND emoji = %(e)s",
        {"m": message_id, "u": user_id, "e": emoji},
    )


def delete_thread(conn: psycopg.Connection, team_id: str, channel_id: str, root_ts: str) -> int:
    """Delete a message and the replies in its thread (with their links and reactions)."""
    cur = conn.execute(
        """
        DELETE FROM messages WHERE team_id = %(t)s AND channel_id = %(c)s AND (ts = %(ts)s OR thread_ts = %(ts)s)
        """,
        {"t": team_id, "c": channel_id, "ts": root_ts},
    )
    return cur.rowcount


def load_forgotten(conn: psycopg.Connection, team_ids: Sequence[str]) -> set[tuple[str, str]]:
    """(team, user) of the members of these workspaces who asked PaperPing to forget them."""
    rows = conn.execute(
        "SELECT team_id, user_id FROM forgotten_members WHERE team_id = ANY(%(t)s::text[])", {"t": list(team_ids)}
    ).fetchall()
    return {(r[0], r[1]) for r in rows}


def remember_member(conn: psycopg.Connection, team_id: str, user_id: str) -> bool:
    """Lift a member's forget-me: what they post from now on is stored again. False if they were not listed."""
    return (
        conn.execute(
            "DELETE FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s", {"t": team_id, "u": user_id}
        ).rowcount
        > 0
    )


def _scrub_member(conn: psycopg.Connection, team_id: str, user_id: str, name: str | None) -> None:
    """The member's id and name out of stored drafts and LLM logs, and their id out of import checkpoints."""
    params = {"t": team_id, "u": user_id, "n": f'"{name}"' if name else f'"{user_id}"', "like": f"%{user_id}%"}
    conn.execute(
        """
        UPDATE recommendations
           SET draft = replace(replace((draft #- ARRAY['named', %(u)s])::text, %(u)s, 'a-former-member'),
                               %(n)s, '"a former member"')::jsonb
         WHERE team_id = %(t)s AND draft::text LIKE %(like)s
        """,
        params,
    )
    conn.execute(
        """
        UPDATE llm_calls SET output = replace(output, %(u)s, 'a-former-member'), error = replace(error, %(u)s, '')
         WHERE team_id = %(t)s AND (output LIKE %(like)s OR error LIKE %(like)s)
        """,
        params,
    )
    conn.execute(
        """
        UPDATE import_checkpoints SET state = jsonb_set(state, '{users}', (state -> 'users') - %(u)s)
         WHERE team_id = %(t)s AND state -> 'users' ? %(u)s
        """,
        params,
    )


def forget_member(conn: psycopg.Connection, team_id: str, user_id: str) -> dict[str, int]:
    """Everything PaperPing holds of one member in a workspace: messages, replies, reactions, profile, their
    id and name in stored drafts, LLM logs and checkpoints; and a note that keeps it so (``remember_member``
    lifts it)."""
    row = conn.execute(
        "SELECT display_name FROM members WHERE team_id = %(t)s AND user_id = %(u)s", {"t": team_id, "u": user_id}
    ).fetchone()
    conn.execute(
        "INSERT INTO forgotten_members (team_id, user_id) VALUES (%(t)s, %(u)s) ON CONFLICT DO NOTHING",
        {"t": team_id, "u": user_id},
    )
    _scrub_member(conn, team_id, user_id, row[0] if row else None)
    counts = {}
    counts["reactions"] = conn.execute(
        "DELETE FROM reactions WHERE team_id = %(t)s AND user_id = %(u)s", {"t": team_id, "u": user_id}
    ).rowcount
    counts["messages"] = conn.execute(
        "DELETE FROM messages WHERE team_id = %(t)s AND user_id = %(u)s", {"t": team_id, "u": user_id}
    ).rowcount
    for table in ("channel_members", "member_settings", "members"):
        conn.execute(
            f"DELETE FROM {table} WHERE team_id = %(t)s AND user_id = %(u)s",  # the table names are fixed above
            {"t": team_id, "u": user_id},
        )
    return counts


def load_member_names(conn: psycopg.Connection, team_id: str) -> dict[str, str]:
    """Member id -> display name, for one workspace."""
    rows = conn.execute("SELECT user_id, display_name FROM members WHERE team_id = %(t)s", {"t": team_id}).fetchall()
    return {r[0]: r[1] for r in rows}


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


def load_member_channels(conn: psycopg.Connection, team_id: str, user_id: str) -> list[tuple[str, str]]:
    """The active channels PaperPing shares with a member: (channel id, name), by name."""
    rows = conn.execute(
        """
        SELECT c.channel_id, c.name FROM channels c
          JOIN channel_settings s USING (team_id, channel_id)
          JOIN channel_members m USING (team_id, channel_id)
         WHERE c.team_id = %(t)s AND m.user_id = %(u)s AND s.active ORDER BY c.name
        """,
        {"t": team_id, "u": user_id},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def load_member_setting(conn: psycopg.Connection, team_id: str, user_id: str) -> dict[str, Any]:
    """A member's own controls: mentions on or off, and the linked author id or ORCID."""
    row = conn.execute(
        "SELECT mentions_enabled, s2_author_id, orcid FROM member_settings WHERE team_id = %(t)s AND user_id = %(u)s",
        {"t": team_id, "u": user_id},
    ).fetchone()
    if row is None:
        return {"mentions_enabled": True, "s2_author_id": None, "orcid": None}
    return {"mentions_enabled": row[0], "s2_author_id": row[1], "orcid": row[2]}


def schedule_first_post(conn: psycopg.Connection, team_id: str, channel_id: str, at: datetime) -> None:
    """A channel PaperPing just joined: its first slot, unless one is already set."""
    conn.execute(
        "UPDATE channel_settings SET next_post_at = COALESCE(next_post_at, %(at)s)"
        " WHERE team_id = %(t)s AND channel_id = %(c)s",
        {"at": at, "t": team_id, "c": channel_id},
    )


def record_event(conn: psycopg.Connection, event_id: str, team_id: str | None) -> bool:
    """Remember a Slack event id; False when it was seen before (a retry)."""
    row = conn.execute(
        "INSERT INTO processed_events (event_id, team_id) VALUES (%(e)s, %(t)s) ON CONFLICT DO NOTHING RETURNING 1",
        {"e": event_id, "t": team_id},
    ).fetchone()
    return row is not None


def deactivate_channels(conn: psycopg.Connection, team_id: str, channel_id: str | None = None) -> int:
    """Stop scheduling posts in one channel, or in every channel of a workspace; returns how many stopped."""
    return conn.execute(
        """
        UPDATE channel_settings SET active = false, next_post_at = NULL, slot_at = NULL
         WHERE team_id = %(t)s AND (%(c)s::text IS NULL OR channel_id = %(c)s) AND active
        """,
        {"t": team_id, "c": channel_id},
    ).rowcount


def purge_team(conn: psycopg.Connection, team_id: str) -> dict[str, int]:
    """Everything PaperPing holds of a workspace: its channels with their messages, reactions, settings and
    posts, its members and their settings, checkpoints, LLM logs, events seen and its installation.
    Public paper metadata, shared by every workspace, stays."""
    params = {"t": team_id}
    counts = {
        "messages": conn.execute("DELETE FROM messages WHERE team_id = %(t)s", params).rowcount,
        "members": conn.execute("DELETE FROM members WHERE team_id = %(t)s", params).rowcount,
    }
    for table in ("member_settings", "import_checkpoints", "llm_calls", "processed_events", "installations"):
        # the table names are fixed here, never from input
        conn.execute(f"DELETE FROM {table} WHERE team_id = %(t)s", params)
    counts["channels"] = conn.execute("DELETE FROM channels WHERE team_id = %(t)s", params).rowcount
    conn.execute("DELETE FROM teams WHERE team_id = %(t)s", params)
    return counts


def prune_processed_events(conn: psycopg.Connection, before: datetime) -> int:
    """Forget event ids received before ``before`` (Slack stops retrying an event within hours)."""
    return conn.execute("DELETE FROM processed_events WHERE received_at < %(b)s", {"b": before}).rowcount


def load_unfinished_imports(conn: psycopg.Connection, source: str) -> list[tuple[str, str]]:
    """(team, channel) of active channels whose import from ``source`` started and has not finished."""
    rows = conn.execute(
        """
        SELECT k.team_id, k.channel_id FROM import_checkpoints k
          JOIN channel_settings s USING (team_id, channel_id)
         WHERE k.source = %(s)s AND k.completed_at IS NULL AND s.active
         ORDER BY k.started_at
        """,
        {"s": source},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def event_seen(conn: psycopg.Connection, event_id: str) -> bool:
    """Whether a Slack event id was handled before."""
    return conn.execute("SELECT 1 FROM processed_events WHERE event_id = %(e)s", {"e": event_id}).fetchone() is not None


def add_channel_member(conn: psycopg.Connection, team_id: str, channel_id: str, user_id: str) -> None:
    conn.execute(
        """
        INSERT INTO channel_members (team_id, channel_id, user_id)
        SELECT %(t)s, %(c)s, %(u)s
         WHERE EXISTS (SELECT 1 FROM channels WHERE team_id = %(t)s AND channel_id = %(c)s)
           AND NOT EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
        ON CONFLICT DO NOTHING
        """,
        {"t": team_id, "c": channel_id, "u": user_id},
    )


def remove_channel_member(conn: psycopg.Connection, team_id: str, channel_id: str, user_id: str) -> None:
    conn.execute(
        "DELETE FROM channel_members WHERE team_id = %(t)s AND channel_id = %(c)s AND user_id = %(u)s",
        {"t": team_id, "c": channel_id, "u": user_id},
    )


def load_monthly_reports_due(conn: psycopg.Connection, month_start: datetime) -> list[tuple[str, str]]:
    """Channels that asked for a monthly report and have not had this month's."""
    rows = conn.execute(
        """
        SELECT team_id, channel_id FROM channel_settings
         WHERE report_monthly AND active AND (report_last_at IS NULL OR report_last_at < %(m)s)
        """,
        {"m": month_start},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]
